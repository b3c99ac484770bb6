package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// TestKeyResourceRoutes: every route an API key can reach belongs to a
// resource, so that a limited key is never let through, nor refused, by
// a gap in the table.
func TestKeyResourceRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.CompatKutt = true })
	routes := e.srv.keyRoutes
	if len(routes) < 30 {
		t.Fatalf("%d routes for keys recorded, too few to mean anything", len(routes))
	}
	// The compatible APIs authorize inside public routes: theirs count.
	for _, path := range []string{"/api/v2/links", "/api/v2/links/:id/stats", "/api/v2/users", "/api/v2/domains/:id", "/yourls-api.php", "/api/urls", "/v1/events/stream", "/v1/qr-codes/:id/logo"} {
		if !slices.Contains(routes, path) {
			t.Errorf("route %s an API key reaches is not recorded", path)
		}
	}
	for _, path := range routes {
		if resourceOf(path) == "" {
			t.Errorf("route %s has no resource", path)
		}
	}
	for path, want := range map[string]string{
		"/v1/links": "links", "/v1/links/abc/qr": "links", "/v1/linksx": "", "/v1/analytics/export": "analytics",
		"/v1/events/stream": "analytics", "/api/v2/domains/x": "domains", "/api/v2/links/x/stats": "analytics", "/api/v2/links/x": "links", "/v1/invitations/x": "members", "/v1/me": "",
	} {
		if got := resourceOf(path); got != want {
			t.Errorf("resourceOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestKeyResources: a key limited to some resources reaches their routes
// (with its scope) and is refused every other one (403), through every
// API; it makes, rotates and revokes only keys that reach no more than it
// does, and a key it makes without resources gets its own; rotation keeps
// the limit; the two scopes alone keep working as before.
func TestKeyResources(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.CompatKutt = true })
	mk := func(cred, body string) *response { return e.do("POST", "/v1/keys", cred, body, 201) }
	links := mk(e.adminToken, `{"name":"links only","scope":"read_write","resources":["links","analytics","links"]}`)
	if got := fmt.Sprint(links.path("resources")); got != "[analytics links]" {
		t.Fatalf("resources %s, want sorted and once each", got)
	}
	lk := links.str("key")
	l := e.do("POST", "/v1/links", lk, `{"destination_url":"https://example.com/r"}`, 201)
	e.do("GET", "/v1/analytics/links/"+l.str("id"), lk, "", 200)
	e.do("GET", "/v1/links", lk, "", 200)
	for _, path := range []string{"/v1/webhooks", "/v1/campaigns", "/v1/domains", "/v1/keys", "/v1/members", "/v1/audit-log", "/v1/utm-templates", "/v1/qr-codes"} {
		r := e.request(newRequest("GET", path, lk, ""))
		wantProblem(t, r, 403, link.EFORBIDDEN)
		if d := r.str("detail"); !strings.Contains(d, "limited to analytics, links") {
			t.Fatalf("GET %s: %s", path, d)
		}
	}
	wantProblem(t, e.request(newRequest("POST", "/v1/webhooks", lk, `{"url":"https://93.184.215.14/h","events":["link.created"]}`)), 403, link.EFORBIDDEN)
	// The simple and compatible APIs are links.
	req := newRequest("POST", "/api/urls", lk, `{"originalUrl":"https://example.com/simple"}`)
	if r := e.request(req); r.status != 201 {
		t.Fatalf("POST /api/urls: %d %s", r.status, r.raw)
	}
	analytics := mk(e.adminToken, `{"name":"analytics","scope":"read","resources":["analytics"]}`).str("key")
	wantProblem(t, e.request(newRequest("POST", "/api/urls", analytics, `{"originalUrl":"https://example.com/no"}`)), 403, link.EFORBIDDEN)
	r := e.request(newRequest("GET", "/yourls-api.php?action=expand&format=json&shorturl=x&signature="+analytics, "", ""))
	if r.status != http.StatusForbidden || !strings.Contains(string(r.raw), "limited to analytics") {
		t.Fatalf("YOURLS with an analytics key: %d %s", r.status, r.raw)
	}
	kr := newRequest("GET", "/api/v2/links", "", "")
	kr.Header.Set("X-API-Key", analytics)
	if r := e.request(kr); r.status != 403 {
		t.Fatalf("Kutt with an analytics key: %d %s", r.status, r.raw)
	}
	// Kutt's stats of a link are analytics, not links.
	linksOnly := mk(e.adminToken, `{"name":"links alone","scope":"read","resources":["links"]}`).str("key")
	for _, c := range []struct {
		key    string
		status int
	}{{linksOnly, 403}, {analytics, 200}} {
		kr := newRequest("GET", "/api/v2/links/"+l.str("id")+"/stats", "", "")
		kr.Header.Set("X-API-Key", c.key)
		if r := e.request(kr); r.status != c.status {
			t.Fatalf("Kutt's stats of a link: %d %s, want %d", r.status, r.raw, c.status)
		}
	}
	// Scope still applies within the resources.
	wantProblem(t, e.request(newRequest("DELETE", "/v1/links/"+l.str("id"), analytics, "")), 403, link.EFORBIDDEN)

	// Keys made by a limited key: within its resources, or its own.
	keys := mk(e.adminToken, `{"name":"key maker","resources":["keys","links"]}`)
	kk := keys.str("key")
	if got := fmt.Sprint(mk(kk, `{"name":"child"}`).path("resources")); got != "[keys links]" {
		t.Fatalf("a child without resources: %s", got)
	}
	if got := fmt.Sprint(mk(kk, `{"name":"narrower","resources":["links"]}`).path("resources")); got != "[links]" {
		t.Fatalf("a narrower child: %s", got)
	}
	wantProblem(t, e.request(newRequest("POST", "/v1/keys", kk, `{"name":"wider","resources":["links","webhooks"]}`)), 403, link.EFORBIDDEN)
	wantProblem(t, e.request(newRequest("POST", "/v1/keys/"+links.str("id")+"/rotate", kk, "")), 403, link.EFORBIDDEN)
	wantProblem(t, e.request(newRequest("DELETE", "/v1/keys/"+links.str("id"), kk, "")), 403, link.EFORBIDDEN)
	wantProblem(t, e.request(newRequest("POST", "/v1/keys/"+"x/rotate", kk, "")), 404, link.ENOTFOUND)
	wantProblem(t, e.request(newRequest("POST", "/v1/keys", e.adminToken, `{"name":"bad","resources":["everything"]}`)), 422, link.EINVALID)
	// Rotation keeps the limit, for the new key too.
	rot := e.do("POST", "/v1/keys/"+links.str("id")+"/rotate", e.adminToken, "", 201)
	if got := fmt.Sprint(rot.path("resources")); got != "[analytics links]" {
		t.Fatalf("rotated key: %s", got)
	}
	wantProblem(t, e.request(newRequest("GET", "/v1/webhooks", rot.str("key"), "")), 403, link.EFORBIDDEN)
	if got := e.do("GET", "/v1/keys/"+rot.str("id"), e.adminToken, "", 200); fmt.Sprint(got.path("resources")) != "[analytics links]" {
		t.Fatalf("stored rotated key: %s", got.raw)
	}
	// Keys without resources reach everything, as before.
	if got := e.do("GET", "/v1/keys/"+keys.str("id"), e.writeKey, "", 200); got.path("resources") != nil && fmt.Sprint(got.path("resources")) != "[keys links]" {
		t.Fatalf("key %s", got.raw)
	}
	e.do("GET", "/v1/webhooks", e.writeKey, "", 200)
	if got := e.do("GET", "/v1/keys/"+e.do("GET", "/v1/keys", e.adminToken, "", 200).path("data", 0, "id").(string), e.adminToken, "", 200); got.path("resources") != nil && len(got.path("resources").([]any)) == 0 {
		t.Fatalf("an empty list instead of null: %s", got.raw)
	}
}
