package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/analytics/geodata"
)

// embeddedGeoIP opens the country database inside linkbolt.
func embeddedGeoIP(t testing.TB) *analytics.GeoIP {
	t.Helper()
	i := geodata.Read()
	geo, err := analytics.OpenGeoIPBytes(geodata.MMDB, analytics.GeoInfo{Source: analytics.GeoEmbedded,
		Package: i.Source, Version: i.Version, License: i.License, Attribution: i.Attribution})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { geo.Close() })
	return geo
}

// TestAdminGeoIP: the instance admin sees which country database is in
// use, /metrics has its build time labelled with its source and version,
// and country rules match through it.
func TestAdminGeoIP(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(d *Deps) { d.Geo = embeddedGeoIP(t) })
	i := geodata.Read()
	r := e.do("GET", "/v1/admin/geoip", e.adminToken, "", 200)
	for k, want := range map[string]any{"enabled": true, "source": "embedded", "path": "", "package": i.Source,
		"version": i.Version, "license": "CC0-1.0", "attribution": i.Attribution, "database_type": "country ipvAll"} {
		if got := r.path(k); got != want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if got, _ := r.path("built_at").(string); !strings.HasPrefix(got, i.Date+"T") {
		t.Errorf("built_at = %q, want the day %s", got, i.Date)
	}
	wantProblem(t, e.request(newRequest("GET", "/v1/admin/geoip", e.writeKey, "")), 403, "forbidden")
	wantProblem(t, e.request(newRequest("GET", "/v1/admin/geoip", "", "")), 401, "unauthorized")

	m := e.request(newRequest("GET", "/metrics", "", ""))
	series := fmt.Sprintf(`linkbolt_geoip_build_timestamp_seconds{source="embedded",version=%q} `, i.Version)
	if !strings.Contains(string(m.raw), series) {
		t.Errorf("/metrics has no %s:\n%s", series, grepLines(string(m.raw), "geoip"))
	}

	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"by-country","rules":[
		{"if":{"country":"NL"},"then":"https://example.com/nl"},{"if":{"country":"AU"},"then":"https://example.com/au"}]}`, 201)
	for addr, want := range map[string]string{"193.0.6.139": "https://example.com/nl", "[2001:dd8:8:701::2]": "https://example.com/au",
		"8.8.8.8": "https://example.com/", "127.0.0.1": "https://example.com/"} {
		if got := e.request(visit("/by-country", addr, uaChromeWin)); got.status != 302 || got.header.Get("Location") != want {
			t.Errorf("from %s: %d %q, want %q", addr, got.status, got.header.Get("Location"), want)
		}
	}
}

// TestAdminGeoIPOff: without a country database (analytics.geoip: off)
// the answer says so and /metrics has no series of it.
func TestAdminGeoIPOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("GET", "/v1/admin/geoip", e.adminToken, "", 200)
	if r.path("enabled") != false || r.path("source") != "off" || r.path("built_at") != nil || r.path("version") != "" {
		t.Errorf("with no database: %s", r.raw)
	}
	if m := e.request(newRequest("GET", "/metrics", "", "")); strings.Contains(string(m.raw), "linkbolt_geoip_build_timestamp_seconds{") {
		t.Errorf("/metrics has a geoip series with no database:\n%s", grepLines(string(m.raw), "geoip"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
