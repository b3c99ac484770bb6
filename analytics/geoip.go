package analytics

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"strings"

	"github.com/oschwald/maxminddb-golang/v2"
)

// GeoIP finds the country of an address in a MaxMind-format database:
// GeoLite2 or GeoIP2 Country or City, or DB-IP's lite databases in the same
// format. A nil *GeoIP knows no country. Country is safe for concurrent
// use; Close must wait until no Country call is running.
type GeoIP struct {
	db *maxminddb.Reader
}

// OpenGeoIP opens the database at path, memory-mapped. It fails with a
// clear message when the file is missing or not a MaxMind DB file.
func OpenGeoIP(path string) (*GeoIP, error) {
	db, err := maxminddb.Open(path)
	if err != nil {
		var pathErr *fs.PathError
		var sysErr *os.SyscallError
		if errors.As(err, &pathErr) || errors.As(err, &sysErr) {
			return nil, fmt.Errorf("geoip database: %w", err)
		}
		// Anything else (an empty file, no metadata, a corrupt tree) means
		// the file is not a MaxMind DB.
		return nil, fmt.Errorf("geoip database %s is not a MaxMind DB (.mmdb) file: %w", path, err)
	}
	return &GeoIP{db: db}, nil
}

// Country returns the ISO 3166-1 alpha-2 code of the country of addr in
// upper case, or Unknown: for an address the database does not hold, a
// private, loopback, link-local or otherwise non-global address, an
// invalid one, or a nil *GeoIP. IPv4-mapped IPv6 addresses are looked up
// as IPv4. The country is where the network is; a network whose location
// the database does not know gives the country it is registered in.
func (g *GeoIP) Country(addr netip.Addr) string {
	if g == nil || g.db == nil {
		return Unknown
	}
	addr = addr.Unmap().WithZone("")
	if !addr.IsValid() || !addr.IsGlobalUnicast() || addr.IsPrivate() {
		return Unknown
	}
	res := g.db.Lookup(addr)
	if !res.Found() {
		return Unknown
	}
	var code string
	if err := res.DecodePath(&code, "country", "iso_code"); err != nil || code == "" {
		code = ""
		if err := res.DecodePath(&code, "registered_country", "iso_code"); err != nil {
			return Unknown
		}
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

// Close unmaps the database. A nil *GeoIP closes without error.
func (g *GeoIP) Close() error {
	if g == nil || g.db == nil {
		return nil
	}
	return g.db.Close()
}
