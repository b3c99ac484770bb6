package analytics

import (
	"errors"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

func country(iso string) mmdbtype.Map {
	return mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(iso)}}
}

// writeTestMMDB writes a MaxMind-format database of networks to a file in
// t.TempDir and returns its path.
func writeTestMMDB(t testing.TB, opts mmdbwriter.Options, networks map[string]mmdbtype.Map) string {
	t.Helper()
	tree, err := mmdbwriter.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for cidr, rec := range networks {
		_, network, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := tree.Insert(network, rec); err != nil {
			t.Fatalf("insert %s: %v", cidr, err)
		}
	}
	path := filepath.Join(t.TempDir(), "country.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// mustOpenTestGeoIP opens a small GeoIP2-Country database written by the
// test and closes it in t.Cleanup.
func mustOpenTestGeoIP(tb testing.TB) *GeoIP {
	tb.Helper()
	path := writeTestMMDB(tb, mmdbwriter.Options{
		DatabaseType: "GeoIP2-Country",
		// Documentation and private networks are reserved; the test puts
		// countries on them to show that private addresses are never
		// looked up.
		IncludeReservedNetworks: true,
	}, map[string]mmdbtype.Map{
		"81.2.69.0/24":  country("GB"),
		"2001:db8::/32": country("DE"),
		"10.0.0.0/8":    country("US"),
		"fd00::/8":      country("US"),
		"2.125.160.0/24": {
			"registered_country": mmdbtype.Map{"iso_code": mmdbtype.String("SE")},
		},
		"89.160.20.0/24": country("fr"),
		"67.43.156.0/24": country("XYZ"),
		"216.160.83.0/24": {
			"continent": mmdbtype.Map{"code": mmdbtype.String("NA")},
		},
	})
	g, err := OpenGeoIP(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := g.Close(); err != nil {
			tb.Error(err)
		}
	})
	return g
}

func TestGeoIPCountry(t *testing.T) {
	g := mustOpenTestGeoIP(t)
	tests := []struct {
		addr netip.Addr
		want string
	}{
		{netip.MustParseAddr("81.2.69.142"), "GB"},
		{netip.MustParseAddr("81.2.69.0"), "GB"},
		{netip.MustParseAddr("81.2.69.255"), "GB"},
		{netip.MustParseAddr("81.2.70.1"), "unknown"},
		{netip.MustParseAddr("::ffff:81.2.69.142"), "GB"},
		{netip.MustParseAddr("2001:db8::1"), "DE"},
		{netip.MustParseAddr("2001:db8:ffff::1"), "DE"},
		{netip.MustParseAddr("2001:db9::1"), "unknown"},
		{netip.MustParseAddr("2.125.160.216"), "SE"},    // registered country only
		{netip.MustParseAddr("89.160.20.128"), "FR"},    // lower case in the database
		{netip.MustParseAddr("67.43.156.1"), "unknown"}, // not an alpha-2 code
		{netip.MustParseAddr("216.160.83.56"), "unknown"},
		{netip.MustParseAddr("10.1.2.3"), "unknown"}, // private, though in the database
		{netip.MustParseAddr("fd00::1"), "unknown"},
		{netip.MustParseAddr("192.168.1.1"), "unknown"},
		{netip.MustParseAddr("127.0.0.1"), "unknown"},
		{netip.MustParseAddr("::1"), "unknown"},
		{netip.MustParseAddr("fe80::1%eth0"), "unknown"},
		{netip.MustParseAddr("0.0.0.0"), "unknown"},
		{netip.MustParseAddr("224.0.0.1"), "unknown"},
		{netip.Addr{}, "unknown"},
	}
	for _, tt := range tests {
		if got := g.Country(tt.addr); got != tt.want {
			t.Errorf("Country(%v) = %q, want %q", tt.addr, got, tt.want)
		}
	}

	var nilGeo *GeoIP
	if got, want := nilGeo.Country(netip.MustParseAddr("81.2.69.142")), Unknown; got != want {
		t.Errorf("nil GeoIP: Country = %q, want %q", got, want)
	}
	if err := nilGeo.Close(); err != nil {
		t.Errorf("nil GeoIP: Close = %v", err)
	}
}

func TestGeoIPv4OnlyDatabase(t *testing.T) {
	path := writeTestMMDB(t, mmdbwriter.Options{DatabaseType: "GeoLite2-Country", IPVersion: 4, RecordSize: 24},
		map[string]mmdbtype.Map{"81.2.69.0/24": country("GB")})
	g, err := OpenGeoIP(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got, want := g.Country(netip.MustParseAddr("81.2.69.1")), "GB"; got != want {
		t.Errorf("Country = %q, want %q", got, want)
	}
	if got, want := g.Country(netip.MustParseAddr("2a00:1450::1")), Unknown; got != want {
		t.Errorf("IPv6 in an IPv4 database: Country = %q, want %q", got, want)
	}
}

func TestGeoIPClosed(t *testing.T) {
	path := writeTestMMDB(t, mmdbwriter.Options{DatabaseType: "GeoIP2-Country"},
		map[string]mmdbtype.Map{"81.2.69.0/24": country("GB")})
	g, err := OpenGeoIP(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := g.Country(netip.MustParseAddr("81.2.69.1")), Unknown; got != want {
		t.Errorf("after Close: Country = %q, want %q", got, want)
	}
}

func TestOpenGeoIPErrors(t *testing.T) {
	dir := t.TempDir()

	_, err := OpenGeoIP(filepath.Join(dir, "missing.mmdb"))
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: err = %v, want one wrapping fs.ErrNotExist", err)
	}

	text := filepath.Join(dir, "country.csv")
	if err := os.WriteFile(text, []byte("network,country\n81.2.69.0/24,GB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.mmdb")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{text, empty} {
		g, err := OpenGeoIP(path)
		if err == nil {
			g.Close()
			t.Fatalf("%s: no error", path)
		}
		if !strings.Contains(err.Error(), "not a MaxMind DB") || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %q, want it to say the file is not a MaxMind DB", path, err)
		}
	}

	if _, err := OpenGeoIP(dir); err == nil {
		t.Errorf("directory: no error")
	}
}

func BenchmarkCountry(b *testing.B) {
	g := mustOpenTestGeoIP(b)
	addrs := []netip.Addr{
		netip.MustParseAddr("81.2.69.142"),
		netip.MustParseAddr("2001:db8::1"),
		netip.MustParseAddr("81.2.70.1"),
		netip.MustParseAddr("::ffff:81.2.69.142"),
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g.Country(addrs[i%len(addrs)])
		i++
	}
}

// TestGeoIPCountryCodeShape reads ip-location-db's record shape, the code
// at the top-level country_code, beside MaxMind's country.iso_code.
func TestGeoIPCountryCodeShape(t *testing.T) {
	path := writeTestMMDB(t, mmdbwriter.Options{DatabaseType: "country ipvAll"}, map[string]mmdbtype.Map{
		"193.0.0.0/20":     {"country_code": mmdbtype.String("NL")},
		"2001:67c::/32":    {"country_code": mmdbtype.String("nl")},
		"202.12.28.0/22":   {"country_code": mmdbtype.String("AUS")},
		"81.2.69.0/24":     country("GB"),
		"200.3.12.0/22":    {"country_code": mmdbtype.String("")},
		"196.216.2.0/23":   {"country": mmdbtype.Map{"iso_code": mmdbtype.String("MU")}, "country_code": mmdbtype.String("ZA")},
		"2001:4860::/32":   {"registered_country": mmdbtype.Map{"iso_code": mmdbtype.String("US")}},
		"2001:13c7::/32":   {"country_code": mmdbtype.Uint32(858)},
		"2001:dd8::/31":    {"country_code": mmdbtype.String("AU"), "registered_country": mmdbtype.Map{"iso_code": mmdbtype.String("JP")}},
		"2001:43f8::/32":   {"country": mmdbtype.String("MU")},
		"2a00:1450::/29":   {},
		"131.107.0.0/16":   {"country_code": mmdbtype.String("US")},
		"2001:4998::/32":   {"country_code": mmdbtype.String("US")},
		"2001:df0:27::/48": {"country_code": mmdbtype.String("12")},
	})
	g, err := OpenGeoIP(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for addr, want := range map[string]string{
		"193.0.6.139":        "NL",
		"2001:67c:2e8::1":    "NL",    // lower case
		"202.12.29.205":      Unknown, // not two letters
		"81.2.69.142":        "GB",    // MaxMind's shape still
		"200.3.14.10":        Unknown, // empty
		"196.216.2.1":        "MU",    // country.iso_code first
		"2001:4860::1":       "US",    // registered country
		"2001:13c7:7001::10": Unknown, // a number
		"2001:dd8:8::1":      "AU",    // country_code before the registered country
		"2001:43f8:120::1":   Unknown, // country is not a map
		"2a00:1450::1":       Unknown, // an empty record
		"2001:4998::1":       "US",
		"2001:df0:27::1":     Unknown, // digits
		"10.0.0.1":           Unknown, // private
		"::1":                Unknown, // loopback
		"::ffff:193.0.6.139": "NL",    // mapped
		"fe80::1":            Unknown, // link-local
		"100.64.0.1":         Unknown, // not in the database
		"2001:db8::1":        Unknown, // documentation, not in the database
		"8.8.8.8":            Unknown, // not in the database
		"193.0.15.255":       "NL",
		"2001:67d::1":        Unknown,
		"2001:4999::1":       Unknown,
		"2001:dd9:1::1":      "AU",    // the /31's second half
		"202.12.31.255":      Unknown, // not two letters
		"196.216.3.255":      "MU",
		"2001:13c7::1":       Unknown,
		"2001:4860:ffff::1":  "US",
		"81.2.69.0":          "GB",
	} {
		if got := g.Country(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Country(%s) = %q, want %q", addr, got, want)
		}
	}
}

// TestGeoIPCheck accepts a country database and refuses one that gives no
// country for well-known addresses (an ASN database, or an empty one).
func TestGeoIPCheck(t *testing.T) {
	good := writeTestMMDB(t, mmdbwriter.Options{DatabaseType: "country ipvAll"},
		map[string]mmdbtype.Map{"8.8.8.0/24": {"country_code": mmdbtype.String("US")}})
	asn := writeTestMMDB(t, mmdbwriter.Options{DatabaseType: "GeoLite2-ASN"},
		map[string]mmdbtype.Map{"8.8.8.0/24": {"autonomous_system_number": mmdbtype.Uint32(15169)}})
	empty := writeTestMMDB(t, mmdbwriter.Options{DatabaseType: "GeoLite2-Country"}, nil)
	for path, ok := range map[string]bool{good: true, asn: false, empty: false} {
		g, err := OpenGeoIP(path)
		if err != nil {
			t.Fatal(err)
		}
		err = g.Check()
		g.Close()
		if (err == nil) != ok {
			t.Errorf("%s: Check = %v, want ok %v", path, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "not a country database") {
			t.Errorf("%s: Check = %q, want it to say why", path, err)
		}
	}
}

// TestGeoIPReplace swaps the database under running lookups (run with
// -race): each lookup answers from the old database or the new one, and
// the old one is closed.
func TestGeoIPReplace(t *testing.T) {
	g := mustOpenTestGeoIP(t)
	if got := g.Info(); got.Source != GeoFile || got.DatabaseType != "GeoIP2-Country" || got.Built.IsZero() {
		t.Errorf("Info = %+v", got)
	}
	path := writeTestMMDB(t, mmdbwriter.Options{DatabaseType: "country ipvAll"},
		map[string]mmdbtype.Map{"81.2.69.0/24": {"country_code": mmdbtype.String("IE")}})
	next, err := OpenGeoIP(path)
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.MustParseAddr("81.2.69.142")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if c := g.Country(addr); c != "GB" && c != "IE" {
				t.Errorf("Country during Replace = %q", c)
				return
			}
		}
	}()
	g.Replace(next)
	close(stop)
	<-done
	if got, want := g.Country(addr), "IE"; got != want {
		t.Errorf("after Replace: Country = %q, want %q", got, want)
	}
	if got := g.Info(); got.Path != path || got.DatabaseType != "country ipvAll" {
		t.Errorf("after Replace: Info = %+v", got)
	}
	if got := next.Country(addr); got != Unknown {
		t.Errorf("the replacing GeoIP still answers %q", got)
	}
	// The replaced database is closed once unreachable: lookups on g go
	// on through collections.
	for range 3 {
		runtime.GC()
		if got, want := g.Country(addr), "IE"; got != want {
			t.Fatalf("after a collection: Country = %q, want %q", got, want)
		}
	}
}

// TestReadGeoIP reads the database into memory: it answers on after the
// file is overwritten in place.
func TestReadGeoIP(t *testing.T) {
	path := writeTestMMDB(t, mmdbwriter.Options{DatabaseType: "country ipvAll"},
		map[string]mmdbtype.Map{"81.2.69.0/24": {"country_code": mmdbtype.String("GB")}})
	g, err := ReadGeoIP(path, GeoInfo{Source: GeoInstalled})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := os.WriteFile(path, []byte("overwritten"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := g.Country(netip.MustParseAddr("81.2.69.1")); got != "GB" {
		t.Errorf("Country = %q after the file was overwritten", got)
	}
	if i := g.Info(); i.Source != GeoInstalled || i.Path != path {
		t.Errorf("Info = %+v", i)
	}
	if _, err := ReadGeoIP(path, GeoInfo{}); err == nil || !strings.Contains(err.Error(), "not a MaxMind DB") {
		t.Errorf("ReadGeoIP of a text file: %v", err)
	}
	if _, err := ReadGeoIP(path+".missing", GeoInfo{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadGeoIP of a missing file: %v", err)
	}
}
