package e2e

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// TestGeoIPBehindProxy runs the whole click path with a country database
// the test writes itself and a reverse proxy's X-Forwarded-For: the
// countries of the analytics come from the database, and analytics are the
// same after a restart.
func TestGeoIPBehindProxy(t *testing.T) {
	t.Parallel()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoIP2-Country"})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, iso := range map[string]string{"81.2.69.0/24": "GB", "2.16.0.0/16": "FR"} {
		_, network, _ := net.ParseCIDR(cidr)
		if err := tree.Insert(network, mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(iso)}}); err != nil {
			t.Fatal(err)
		}
	}
	dbPath := filepath.Join(t.TempDir(), "country.mmdb")
	f, _ := os.Create(dbPath)
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\nanalytics:\n  geoip_path: "+dbPath+
		"\nclicks:\n  flush_interval: 1h\n")
	cfg.Server.BehindProxy = true
	base, stop := startApp(t, cfg, nil)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	alias := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/"}`, 201)["alias"].(string)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, xff := range []string{"81.2.69.160", "10.0.0.1, 81.2.69.161", "2.16.3.4", "192.0.2.9"} {
		req, _ := http.NewRequest("GET", base+"/"+alias, nil)
		req.Header.Set("X-Forwarded-For", xff)
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	base, _ = startApp(t, cfg, nil)
	c = client{t, base}
	a := c.must("GET", "/v1/analytics/workspace?range=today", tok, "", 200)
	countries := map[string]float64{}
	for _, e := range a["top"].(map[string]any)["countries"].([]any) {
		m := e.(map[string]any)
		countries[m["value"].(string)] = m["clicks"].(float64)
	}
	if countries["GB"] != 2 || countries["FR"] != 1 || countries["unknown"] != 1 {
		t.Fatalf("countries after a restart = %v", countries)
	}
	if tot := a["totals"].(map[string]any); tot["clicks"] != float64(4) || tot["unique_visitors"] != float64(4) || tot["bot_clicks"] != float64(0) {
		t.Fatalf("totals after a restart = %v", tot)
	}
}

// TestProcessCountriesOutOfTheBox starts the built binary with no geoip
// setting on a fresh data folder: clicks from public addresses behind a
// proxy are counted with their countries from the database inside
// linkbolt, a country rule matches, and the log names the database.
func TestProcessCountriesOutOfTheBox(t *testing.T) {
	t.Parallel()
	p := startChild(t, t.TempDir(), "0s", "LINKBOLT_SERVER_BEHIND_PROXY=true")
	c := p.client()
	key, _, _ := setupLink(c)
	alias := c.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/","rules":[
		{"if":{"country":"NL"},"then":"https://example.com/nl"}]}`, 201)["alias"].(string)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for xff, want := range map[string]string{
		"193.0.6.139":        "https://example.com/nl",
		"2001:67c:2e8::1":    "https://example.com/nl",
		"200.3.14.10":        "https://example.com/",
		"2001:13c7:7001::10": "https://example.com/",
		"127.0.0.1":          "https://example.com/",
	} {
		req, _ := http.NewRequest("GET", "http://"+p.addr+"/"+alias, nil)
		req.Header.Set("X-Forwarded-For", xff)
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Location"); got != want {
			t.Errorf("a click from %s went to %s, want %s", xff, got, want)
		}
	}
	a := c.must("GET", "/v1/analytics/workspace?range=today", key, "", 200)
	countries := map[string]float64{}
	for _, e := range a["top"].(map[string]any)["countries"].([]any) {
		m := e.(map[string]any)
		countries[m["value"].(string)] = m["clicks"].(float64)
	}
	if countries["NL"] != 2 || countries["UY"] != 2 || countries["unknown"] != 1 {
		t.Errorf("countries = %v, want NL 2, UY 2, unknown 1", countries)
	}
	if logs := p.logs.String(); !strings.Contains(logs, "countries from the database inside linkbolt (@ip-location-db/geo-whois-asn-country-mmdb ") {
		t.Errorf("the log does not name the country database:\n%s", logs)
	}
}
