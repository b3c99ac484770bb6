package analytics

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/oschwald/maxminddb-golang/v2"
)

// GeoIP finds the country of an address in a MaxMind-format database:
// GeoLite2 or GeoIP2 Country or City, DB-IP's lite databases in the same
// format, or ip-location-db's country databases (linkbolt embeds one, see
// analytics/geodata). A nil *GeoIP knows no country. Country is safe for
// concurrent use, also with Replace, and takes no lock; Close must wait
// until no Country call is running.
type GeoIP struct {
	cur atomic.Pointer[geoDB]
}

// geoDB is one open database. A database Replace took out of use is
// closed (a file unmapped) once no Country call holds its geoDB.
type geoDB struct {
	r       *maxminddb.Reader
	info    GeoInfo
	cleanup runtime.Cleanup
}

// Where a GeoIP's database comes from (GeoInfo.Source).
const (
	GeoEmbedded  = "embedded"  // the database inside the binary
	GeoInstalled = "installed" // geoip.mmdb in the data folder (linkbolt geoip update)
	GeoFile      = "file"      // the file analytics.geoip_path names
)

// GeoInfo says which country database a GeoIP reads.
type GeoInfo struct {
	Source string // GeoEmbedded, GeoInstalled or GeoFile
	Path   string // the file; "" for the embedded database
	// Package, Version, License and Attribution name the published
	// package the database comes from, when known (the embedded one's).
	Package, Version, License, Attribution string
	// DatabaseType and Built are the database's own metadata.
	DatabaseType string
	Built        time.Time
}

// OpenGeoIP opens the database at path, memory-mapped. It fails with a
// clear message when the file is missing or not a MaxMind DB file. Its
// GeoInfo has Source GeoFile.
func OpenGeoIP(path string) (*GeoIP, error) {
	return OpenGeoIPWith(path, GeoInfo{Source: GeoFile})
}

// OpenGeoIPWith is OpenGeoIP with info saying where the file comes from;
// its Path, DatabaseType and Built are set from the file.
func OpenGeoIPWith(path string, info GeoInfo) (*GeoIP, error) {
	db, err := maxminddb.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	info.Path = path
	return newGeoIP(db, info), nil
}

// ReadGeoIP is OpenGeoIPWith reading the file into memory instead of
// mapping it: the database keeps working when the file is overwritten in
// place (a mapped file cut short faults the process), at the cost of
// the file's size in memory.
func ReadGeoIP(path string, info GeoInfo) (*GeoIP, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("geoip database: %w", err)
	}
	db, err := maxminddb.OpenBytes(b)
	if err != nil {
		return nil, openError(path, err)
	}
	info.Path = path
	return newGeoIP(db, info), nil
}

// openError says why the file at path does not open as a database.
func openError(path string, err error) error {
	var pathErr *fs.PathError
	var sysErr *os.SyscallError
	if errors.As(err, &pathErr) || errors.As(err, &sysErr) {
		return fmt.Errorf("geoip database: %w", err)
	}
	// Anything else (an empty file, no metadata, a corrupt tree) means
	// the file is not a MaxMind DB.
	return fmt.Errorf("geoip database %s is not a MaxMind DB (.mmdb) file: %w", path, err)
}

// OpenGeoIPBytes opens the database held in b, which must not change
// while the GeoIP is open. info says where it comes from; its
// DatabaseType and Built are read from the database.
func OpenGeoIPBytes(b []byte, info GeoInfo) (*GeoIP, error) {
	db, err := maxminddb.OpenBytes(b)
	if err != nil {
		return nil, fmt.Errorf("geoip database is not a MaxMind DB (.mmdb): %w", err)
	}
	return newGeoIP(db, info), nil
}

func newGeoIP(r *maxminddb.Reader, info GeoInfo) *GeoIP {
	info.DatabaseType = r.Metadata.DatabaseType
	if r.Metadata.BuildEpoch != 0 {
		info.Built = r.Metadata.BuildTime().UTC()
	}
	h := &geoDB{r: r, info: info}
	h.cleanup = runtime.AddCleanup(h, func(r *maxminddb.Reader) { r.Close() }, r)
	g := &GeoIP{}
	g.cur.Store(h)
	return g
}

// Info says which database g reads; the zero GeoInfo for a nil or closed
// *GeoIP.
func (g *GeoIP) Info() GeoInfo {
	if g == nil {
		return GeoInfo{}
	}
	h := g.cur.Load()
	if h == nil {
		return GeoInfo{}
	}
	return h.info
}

// Replace makes g read next's database from now on; next knows no
// country afterwards. The database g read before is closed once the
// Country calls running on it are done.
func (g *GeoIP) Replace(next *GeoIP) {
	g.cur.Store(next.cur.Swap(nil))
}

// knownAddresses are public addresses whose networks have been allocated
// for decades, in the five registries' regions: Check wants a country
// for at least one of them.
var knownAddresses = []netip.Addr{
	netip.MustParseAddr("8.8.8.8"),              // ARIN
	netip.MustParseAddr("193.0.6.139"),          // RIPE NCC
	netip.MustParseAddr("202.12.29.205"),        // APNIC
	netip.MustParseAddr("200.3.14.10"),          // LACNIC
	netip.MustParseAddr("196.216.2.1"),          // AFRINIC
	netip.MustParseAddr("2001:4860:4860::8888"), // ARIN, IPv6
	netip.MustParseAddr("2001:67c:2e8::1"),      // RIPE NCC, IPv6
}

// Check reports whether g is a country database that answers: at least
// one of several public addresses of long standing must have a country.
// An ASN database, a database of anything else, or an empty one fails.
func (g *GeoIP) Check() error {
	for _, a := range knownAddresses {
		if g.Country(a) != Unknown {
			return nil
		}
	}
	info := g.Info()
	return fmt.Errorf("geoip database %s (type %q) gives no country for well-known public addresses such as 8.8.8.8: it is not a country database", info.Path, info.DatabaseType)
}

// Country returns the ISO 3166-1 alpha-2 code of the country of addr in
// upper case, or Unknown: for an address the database does not hold, a
// private, loopback, link-local or otherwise non-global address, an
// invalid one, or a nil *GeoIP. IPv4-mapped IPv6 addresses are looked up
// as IPv4. The country is where the network is; a network whose location
// the database does not know gives the country it is registered in.
//
// It reads MaxMind's record shape (country.iso_code, else
// registered_country.iso_code) and ip-location-db's (country_code).
func (g *GeoIP) Country(addr netip.Addr) string {
	if g == nil {
		return Unknown
	}
	addr = addr.Unmap().WithZone("")
	if !addr.IsValid() || !addr.IsGlobalUnicast() || addr.IsPrivate() {
		return Unknown
	}
	h := g.cur.Load()
	if h == nil {
		return Unknown
	}
	// h stays reachable, and so its database open, until the lookup is
	// done.
	defer runtime.KeepAlive(h)
	res := h.r.Lookup(addr)
	if !res.Found() {
		return Unknown
	}
	var code string
	if err := res.DecodePath(&code, "country", "iso_code"); err == nil && code != "" {
		return countryCode(code)
	}
	code = ""
	if err := res.DecodePath(&code, "country_code"); err == nil && code != "" {
		return countryCode(code)
	}
	code = ""
	if err := res.DecodePath(&code, "registered_country", "iso_code"); err != nil {
		return Unknown
	}
	return countryCode(code)
}

// countryCode returns code in upper case if it is two ASCII letters, else
// Unknown.
func countryCode(code string) string {
	if len(code) != 2 {
		return Unknown
	}
	upper := true
	for i := 0; i < 2; i++ {
		c := code[i]
		switch {
		case 'A' <= c && c <= 'Z':
		case 'a' <= c && c <= 'z':
			upper = false
		default:
			return Unknown
		}
	}
	if !upper {
		return strings.ToUpper(code)
	}
	return code
}

// Close closes (unmaps) the database. A nil *GeoIP closes without error.
func (g *GeoIP) Close() error {
	if g == nil {
		return nil
	}
	h := g.cur.Swap(nil)
	if h == nil {
		return nil
	}
	h.cleanup.Stop()
	return h.r.Close()
}
