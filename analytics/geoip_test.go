package analytics

import (
	"errors"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
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
