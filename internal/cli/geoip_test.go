package cli

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/analytics/geodata"
	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// writeMMDB writes a MaxMind DB of networks to a file in dir.
func writeMMDB(t *testing.T, dir, name, dbType string, networks map[string]mmdbtype.Map) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: dbType})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, rec := range networks {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := tree.Insert(n, rec); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := tree.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGeoIPUpdate installs country databases into the data folder: bad
// files are refused and leave the installed one as it was; good ones
// replace it.
func TestGeoIPUpdate(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	dataDir := filepath.Join(dir, "data")
	if err := os.WriteFile(config, []byte("storage:\n  path: "+filepath.Join(dataDir, "linkbolt.db")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	installed := filepath.Join(dataDir, "geoip.mmdb")
	src := t.TempDir()
	embedded := filepath.Join(src, "geo-whois-asn-country.mmdb")
	if err := os.WriteFile(embedded, geodata.MMDB, 0o600); err != nil {
		t.Fatal(err)
	}
	small := writeMMDB(t, src, "small.mmdb", "GeoLite2-Country", map[string]mmdbtype.Map{
		"8.8.8.0/24": {"country": mmdbtype.Map{"iso_code": mmdbtype.String("FR")}}})
	asn := writeMMDB(t, src, "asn.mmdb", "GeoLite2-ASN", map[string]mmdbtype.Map{
		"8.8.8.0/24": {"autonomous_system_number": mmdbtype.Uint32(15169)}})
	csv := filepath.Join(src, "country.csv")
	os.WriteFile(csv, []byte("8.8.8.0,8.8.8.255,US\n"), 0o600)
	truncated := filepath.Join(src, "truncated.mmdb")
	os.WriteFile(truncated, geodata.MMDB[:len(geodata.MMDB)/2], 0o600)

	countryOf := func(addr string) string {
		t.Helper()
		g, err := analytics.OpenGeoIP(installed)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		return g.Country(netip.MustParseAddr(addr))
	}
	leftovers := func() {
		t.Helper()
		entries, _ := os.ReadDir(dataDir)
		for _, e := range entries {
			if e.Name() != "geoip.mmdb" {
				t.Errorf("the data folder holds %s", e.Name())
			}
		}
	}

	code, stdout, stderr := runCLI(t, "geoip", "update", "--config", config, "--from", embedded)
	if code != 0 || !strings.Contains(stdout, "installed "+embedded+" (country ipvAll, built ") || !strings.Contains(stdout, "within a minute") {
		t.Fatalf("installing the embedded database: exit %d\n%s%s", code, stdout, stderr)
	}
	if got := countryOf("193.0.6.139"); got != "NL" {
		t.Fatalf("installed database: 193.0.6.139 is %q, want NL", got)
	}

	for _, bad := range []struct{ file, say string }{
		{asn, "not a country database"},
		{csv, "not a MaxMind DB"},
		{truncated, "not a MaxMind DB"},
		{filepath.Join(src, "missing.mmdb"), "no such file"},
	} {
		code, stdout, stderr := runCLI(t, "geoip", "update", "--config", config, "--from", bad.file)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "is refused, nothing was replaced") || !strings.Contains(stderr, bad.say) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", bad.file, code, stdout, stderr)
		}
		if got := countryOf("193.0.6.139"); got != "NL" {
			t.Fatalf("after refusing %s: 193.0.6.139 is %q, want NL from the database installed before", bad.file, got)
		}
		leftovers()
	}

	code, stdout, stderr = runCLI(t, "geoip", "update", "--config", config, "--from", small)
	if code != 0 || !strings.Contains(stdout, "(GeoLite2-Country, built ") {
		t.Fatalf("installing a GeoLite2 database: exit %d\n%s%s", code, stdout, stderr)
	}
	if got := countryOf("8.8.8.8"); got != "FR" {
		t.Fatalf("after the update: 8.8.8.8 is %q, want FR", got)
	}
	leftovers()
	if b, _ := os.ReadFile(small); len(b) == 0 {
		t.Fatal("the source file was changed")
	}

	// analytics.geoip_path and analytics.geoip: off are named: the file
	// is installed but not used while they are set.
	t.Setenv("LINKBOLT_ANALYTICS_GEOIP_PATH", embedded)
	if code, stdout, _ := runCLI(t, "geoip", "update", "--config", config, "--from", small); code != 0 || !strings.Contains(stdout, "analytics.geoip_path is set") {
		t.Errorf("with geoip_path: exit %d\n%s", code, stdout)
	}
	t.Setenv("LINKBOLT_ANALYTICS_GEOIP", "off")
	if code, stdout, _ := runCLI(t, "geoip", "update", "--config", config, "--from", small); code != 0 || !strings.Contains(stdout, "analytics.geoip is off") {
		t.Errorf("with geoip off: exit %d\n%s", code, stdout)
	}
}
