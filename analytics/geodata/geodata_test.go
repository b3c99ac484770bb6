package geodata_test

import (
	"net/netip"
	"regexp"
	"testing"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/analytics/geodata"
)

func openEmbedded(tb testing.TB) *analytics.GeoIP {
	tb.Helper()
	g, err := analytics.OpenGeoIPBytes(geodata.MMDB, analytics.GeoInfo{Source: analytics.GeoEmbedded})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.Close() })
	return g
}

// TestEmbeddedCountries looks up addresses of the five regional internet
// registries' own networks and of public resolvers, IPv4 and IPv6, in the
// embedded database: their allocations have not moved for decades.
func TestEmbeddedCountries(t *testing.T) {
	g := openEmbedded(t)
	for addr, want := range map[string]string{
		"8.8.8.8":              "US", // Google, ARIN
		"2001:4860:4860::8888": "US",
		"193.0.6.139":          "NL", // RIPE NCC
		"2001:67c:2e8::1":      "NL",
		"202.12.29.205":        "AU", // APNIC
		"2001:dd8:8:701::2":    "AU",
		"200.3.14.10":          "UY", // LACNIC
		"2001:13c7:7001::10":   "UY",
		"196.216.2.1":          "ZA", // AFRINIC's network in Johannesburg
		"2001:43f8:120::1":     "MU", // AFRINIC, Mauritius
		"::ffff:193.0.6.139":   "NL", // IPv4-mapped
		// Private, loopback, link-local, shared, documentation and
		// multicast addresses have no country.
		"10.1.2.3":      analytics.Unknown,
		"172.16.0.1":    analytics.Unknown,
		"192.168.1.1":   analytics.Unknown,
		"127.0.0.1":     analytics.Unknown,
		"::1":           analytics.Unknown,
		"fd00::1":       analytics.Unknown,
		"fe80::1":       analytics.Unknown,
		"169.254.1.1":   analytics.Unknown,
		"100.64.0.1":    analytics.Unknown,
		"192.0.2.1":     analytics.Unknown,
		"224.0.0.1":     analytics.Unknown,
		"0.0.0.0":       analytics.Unknown,
		"255.255.255.0": analytics.Unknown,
	} {
		if got := g.Country(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Country(%s) = %q, want %q", addr, got, want)
		}
	}
	if err := g.Check(); err != nil {
		t.Error(err)
	}
}

// TestEmbeddedInfo checks the record update.sh writes beside the database
// agrees with the database.
func TestEmbeddedInfo(t *testing.T) {
	i := geodata.Read()
	if i.Source != "@ip-location-db/geo-whois-asn-country-mmdb" || i.License != "CC0-1.0" || i.Attribution == "" {
		t.Errorf("Read = %+v", i)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d{10}$`).MatchString(i.Version) || !regexp.MustCompile(`^sha512-`).MatchString(i.Integrity) {
		t.Errorf("version %q, integrity %q", i.Version, i.Integrity)
	}
	g := openEmbedded(t)
	info := g.Info()
	if got := info.Built.Format("2006-01-02"); got != i.Date {
		t.Errorf("the database was built on %s, country.json says %s", got, i.Date)
	}
	if info.Source != analytics.GeoEmbedded || info.DatabaseType == "" {
		t.Errorf("Info = %+v", info)
	}
}

// BenchmarkEmbeddedCountry is the country lookup of a click in the
// embedded database, over addresses of every registry, IPv4 and IPv6.
func BenchmarkEmbeddedCountry(b *testing.B) {
	g := openEmbedded(b)
	addrs := []netip.Addr{
		netip.MustParseAddr("8.8.8.8"),
		netip.MustParseAddr("193.0.6.139"),
		netip.MustParseAddr("202.12.29.205"),
		netip.MustParseAddr("200.3.14.10"),
		netip.MustParseAddr("196.216.2.1"),
		netip.MustParseAddr("2001:67c:2e8::1"),
		netip.MustParseAddr("2001:4860:4860::8888"),
		netip.MustParseAddr("2a02:8070::1"),
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g.Country(addrs[i%len(addrs)])
		i++
	}
}

// BenchmarkEmbeddedCountryParallel is the same lookup from every core at
// once, as the recorder's batches and the redirects' country rules do.
func BenchmarkEmbeddedCountryParallel(b *testing.B) {
	g := openEmbedded(b)
	addr := netip.MustParseAddr("2001:67c:2e8::1")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			g.Country(addr)
		}
	})
}

// BenchmarkOpenEmbedded is what start-up pays to open the embedded
// database.
func BenchmarkOpenEmbedded(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		g, err := analytics.OpenGeoIPBytes(geodata.MMDB, analytics.GeoInfo{})
		if err != nil {
			b.Fatal(err)
		}
		g.Close()
	}
}
