package app

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/analytics/geodata"
	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// geoClient is a signed-in admin of a server started by startGeoApp,
// behind a proxy that sets X-Forwarded-For.
type geoClient struct {
	t     *testing.T
	a     *App
	web   *http.Client
	token string
}

func startGeoApp(t *testing.T, rest string, logs *syncWriter) *geoClient {
	t.Helper()
	cfg := tlsConfig(t, "  behind_proxy: true\n", tlsAdmin, "clicks:\n  flush_interval: 0s\n", rest)
	a, _ := startTLSApp(t, cfg, logs)
	c := &geoClient{t: t, a: a, web: webClient(a.Addr(), nil)}
	_, out := mustFetch(t, c.web, "POST", "http://lb.test/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)
	c.token = out["token"].(string)
	return c
}

// click opens the short link alias from addr and returns where it sent
// the visitor.
func (c *geoClient) click(alias, addr string) string {
	c.t.Helper()
	req, _ := http.NewRequest("GET", "http://lb.test/"+alias, nil)
	req.Header.Set("X-Forwarded-For", addr)
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0")
	resp, err := c.web.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 3 {
		c.t.Fatalf("GET /%s from %s: %d", alias, addr, resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// countries returns today's clicks by country.
func (c *geoClient) countries() map[string]float64 {
	c.t.Helper()
	_, a := mustFetch(c.t, c.web, "GET", "http://lb.test/v1/analytics/workspace?range=today", c.token, "", 200)
	got := map[string]float64{}
	for _, e := range a["top"].(map[string]any)["countries"].([]any) {
		m := e.(map[string]any)
		got[m["value"].(string)] = m["clicks"].(float64)
	}
	return got
}

// newRuleLink makes a link that sends visitors from the Netherlands and
// from Uruguay elsewhere.
func (c *geoClient) newRuleLink() string {
	c.t.Helper()
	_, l := mustFetch(c.t, c.web, "POST", "http://lb.test/v1/links", c.token, `{"destination_url":"https://example.com/","rules":[
		{"if":{"country":"NL"},"then":"https://example.com/nl"},{"if":{"country":"uy"},"then":"https://example.com/uy"}]}`, 201)
	return l["alias"].(string)
}

// TestCountriesOutOfTheBox: a fresh server with no geoip setting counts
// clicks from public addresses of every registry with their country,
// IPv4 and IPv6, and its country rules match; private and loopback
// addresses are unknown.
func TestCountriesOutOfTheBox(t *testing.T) {
	logs := &syncWriter{}
	c := startGeoApp(t, "", logs)
	alias := c.newRuleLink()
	for addr, to := range map[string]string{
		"193.0.6.139":          "https://example.com/nl", // RIPE NCC
		"2001:67c:2e8::1":      "https://example.com/nl",
		"200.3.14.10":          "https://example.com/uy", // LACNIC
		"2001:13c7:7001::10":   "https://example.com/uy",
		"8.8.8.8":              "https://example.com/", // US
		"2001:4860:4860::8888": "https://example.com/",
		"202.12.29.205":        "https://example.com/", // AU
		"196.216.2.1":          "https://example.com/", // ZA
		"10.0.0.1":             "https://example.com/",
		"127.0.0.1":            "https://example.com/",
		"::1":                  "https://example.com/",
	} {
		if got := c.click(alias, addr); got != to {
			t.Errorf("a click from %s went to %s, want %s", addr, got, to)
		}
	}
	want := map[string]float64{"NL": 2, "UY": 2, "US": 2, "AU": 1, "ZA": 1, "unknown": 3}
	if got := c.countries(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("countries = %v, want %v", got, want)
	}
	if !strings.Contains(logs.String(), "countries from the database inside linkbolt (@ip-location-db/geo-whois-asn-country-mmdb "+geodata.Read().Version+")") {
		t.Errorf("the log does not say which country database is used:\n%s", logs.String())
	}
}

// TestCountriesOff: analytics.geoip: off counts every click as unknown,
// and no country rule matches.
func TestCountriesOff(t *testing.T) {
	c := startGeoApp(t, "analytics:\n  geoip: off\n", &syncWriter{})
	alias := c.newRuleLink()
	for _, addr := range []string{"193.0.6.139", "2001:13c7:7001::10"} {
		if got := c.click(alias, addr); got != "https://example.com/" {
			t.Errorf("with geoip off, a click from %s went to %s", addr, got)
		}
	}
	if got := c.countries(); fmt.Sprint(got) != "map[unknown:2]" {
		t.Errorf("countries with geoip off = %v", got)
	}
	if c.a.ReloadGeoIP() {
		t.Error("with geoip off, a reload changed the database")
	}
}

// writeCountryDB writes a small country database in ip-location-db's
// shape that puts RIPE NCC's network in Uruguay.
func writeCountryDB(t *testing.T, path string) {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "country ipvAll"})
	if err != nil {
		t.Fatal(err)
	}
	_, n, _ := net.ParseCIDR("193.0.0.0/20")
	if err := tree.Insert(n, mmdbtype.Map{"country_code": mmdbtype.String("UY")}); err != nil {
		t.Fatal(err)
	}
	_, n, _ = net.ParseCIDR("8.8.8.0/24")
	if err := tree.Insert(n, mmdbtype.Map{"country_code": mmdbtype.String("US")}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := tree.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestGeoIPInstalledWithoutRestart: a database linkbolt geoip update
// installs into the data folder is put in use by the running server at
// its next look (ReloadGeoIP, which the server runs every minute); a
// broken file there is logged and the database in use kept; removing it
// goes back to the embedded one.
func TestGeoIPInstalledWithoutRestart(t *testing.T) {
	logs := &syncWriter{}
	c := startGeoApp(t, "", logs)
	alias := c.newRuleLink()
	if got := c.click(alias, "193.0.6.139"); got != "https://example.com/nl" {
		t.Fatalf("before the update: %s", got)
	}
	if c.a.ReloadGeoIP() {
		t.Fatal("a reload with nothing installed changed the database")
	}

	installed := GeoIPInstallPath(c.a.cfg)
	tmp := installed + ".new"
	writeCountryDB(t, tmp)
	if err := os.Rename(tmp, installed); err != nil {
		t.Fatal(err)
	}
	if !c.a.ReloadGeoIP() {
		t.Fatal("the installed database was not put in use")
	}
	if got := c.click(alias, "193.0.6.139"); got != "https://example.com/uy" {
		t.Errorf("after the update, the rule sent 193.0.6.139 to %s, want the Uruguay page", got)
	}
	if c.a.ReloadGeoIP() {
		t.Error("a second reload of the same file changed the database")
	}
	if !strings.Contains(logs.String(), "country database: now "+installed+" (country ipvAll)") {
		t.Errorf("the log does not say the new database is in use:\n%s", logs.String())
	}

	// A broken file written over it in place: the server keeps the
	// database it read into memory.
	if err := os.WriteFile(installed, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c.a.ReloadGeoIP() {
		t.Error("a broken file was put in use")
	}
	if got := c.click(alias, "193.0.6.139"); got != "https://example.com/uy" {
		t.Errorf("after a broken file, the rule sent 193.0.6.139 to %s", got)
	}
	if !strings.Contains(logs.String(), "the installed one does not work; keeping "+installed) {
		t.Errorf("the log does not say the broken file is ignored:\n%s", logs.String())
	}

	// Removed: back to the embedded database.
	if err := os.Remove(installed); err != nil {
		t.Fatal(err)
	}
	if !c.a.ReloadGeoIP() {
		t.Fatal("removing the installed database changed nothing")
	}
	if got := c.click(alias, "193.0.6.139"); got != "https://example.com/nl" {
		t.Errorf("after removing the installed database: %s", got)
	}
	if got := c.countries(); got["UY"] != 2 || got["NL"] != 2 {
		t.Errorf("countries = %v, want NL 2 and UY 2", got)
	}
}

// TestGeoIPInstalledAtStart: a server starts on the installed database,
// and analytics.geoip_path wins over it.
func TestGeoIPInstalledAtStart(t *testing.T) {
	cfg := tlsConfig(t, "", tlsAdmin)
	installed := GeoIPInstallPath(cfg)
	if err := os.MkdirAll(filepath.Dir(installed), 0o750); err != nil {
		t.Fatal(err)
	}
	writeCountryDB(t, installed)
	g, err := openGeo(cfg, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	if i := g.db.Info(); i.Source != "installed" || i.Path != installed {
		t.Errorf("with geoip.mmdb in the data folder: %+v", i)
	}
	g.db.Close()

	other := filepath.Join(t.TempDir(), "other.mmdb")
	writeCountryDB(t, other)
	cfg.Analytics.GeoIPPath = other
	if g, err = openGeo(cfg, discardLogger()); err != nil {
		t.Fatal(err)
	}
	if i := g.db.Info(); i.Source != "file" || i.Path != other {
		t.Errorf("with analytics.geoip_path: %+v", i)
	}
	if g.Reload() {
		t.Error("with analytics.geoip_path, a reload changed the database")
	}
	g.db.Close()

	// A broken installed file: the embedded database, and an error in
	// the log.
	cfg.Analytics.GeoIPPath = ""
	os.WriteFile(installed, []byte("broken"), 0o600)
	logs := &syncWriter{}
	if g, err = openGeo(cfg, slogTo(logs)); err != nil {
		t.Fatal(err)
	}
	if i := g.db.Info(); i.Source != "embedded" {
		t.Errorf("with a broken geoip.mmdb: %+v", i)
	}
	if !strings.Contains(logs.String(), "the installed country database does not work") {
		t.Errorf("no error logged:\n%s", logs.String())
	}
	g.db.Close()
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
