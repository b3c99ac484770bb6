package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// kutt sends a Kutt API request with the key in X-API-Key and wants
// status; every answer is checked against the OpenAPI document.
func (e *env) kutt(method, path, key, body string, want int) *response {
	e.t.Helper()
	req := newRequest(method, path, "", body)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	r := e.request(req)
	if r.status != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.raw)
	}
	return r
}

func kuttEnv(t *testing.T) *env {
	return newEnv(t, func(c *Config) { c.CompatKutt = true })
}

// TestKuttJourney: a script made for Kutt creates, lists, changes, reads
// the stats of and deletes links; they are the same links in /v1.
func TestKuttJourney(t *testing.T) {
	t.Parallel()
	e := kuttEnv(t)
	if r := e.kutt("GET", "/api/v2/health", "", "", 200); string(r.raw) != "OK" {
		t.Fatalf("health: %q", r.raw)
	}
	l := e.kutt("POST", "/api/v2/links", e.writeKey,
		`{"target":"example.com/spring","customurl":"spring","description":"Spring sale","expire_in":"2 days","password":"open-sesame"}`, 201)
	id := l.str("id")
	if l.str("address") != "spring" || l.str("target") != "http://example.com/spring" || l.str("description") != "Spring sale" ||
		l.path("password") != true || l.str("link") != "http://lb.test/spring" || l.path("banned") != false {
		t.Fatalf("created: %s", l.raw)
	}
	exp, err := time.Parse(time.RFC3339, l.str("expire_in"))
	if err != nil || !exp.Equal(e.clock.Now().Add(48*time.Hour).Truncate(time.Second)) && !exp.Equal(e.clock.Now().Add(48*time.Hour)) {
		t.Fatalf("expire_in %q, want two days from now", l.str("expire_in"))
	}
	v1 := e.do("GET", "/v1/links/"+id, e.readKey, "", 200)
	if v1.str("alias") != "spring" || v1.str("title") != "Spring sale" || v1.path("has_password") != true {
		t.Fatalf("the link in /v1: %s", v1.raw)
	}

	// reuse answers the link to the same target, 200.
	plain := e.kutt("POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/plain"}`, 201).str("id")
	if again := e.kutt("POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/plain","reuse":true}`, 200); again.str("id") != plain {
		t.Fatalf("reuse: %s", again.raw)
	}
	for i := range 12 {
		e.kutt("POST", "/api/v2/links", e.writeKey, fmt.Sprintf(`{"target":"https://example.com/%d"}`, i), 201)
	}

	// Lists: newest first, skip and limit, the limit at most 50.
	list := e.kutt("GET", "/api/v2/links", e.readKey, "", 200)
	if list.path("total") != float64(14) || list.path("limit") != float64(10) || len(list.path("data").([]any)) != 10 {
		t.Fatalf("list: total %v limit %v", list.path("total"), list.path("limit"))
	}
	all := e.kutt("GET", "/api/v2/links?limit=100", e.readKey, "", 200)
	if all.path("limit") != float64(50) || len(all.path("data").([]any)) != 14 {
		t.Fatalf("limit=100: %v, %d links", all.path("limit"), len(all.path("data").([]any)))
	}
	ids := func(r *response) []string {
		var out []string
		for _, d := range r.path("data").([]any) {
			out = append(out, d.(map[string]any)["id"].(string))
		}
		return out
	}
	every := ids(all)
	if every[13] != id || every[12] != plain {
		t.Fatalf("not newest first: %v", every)
	}
	for _, q := range []struct{ skip, limit int }{{3, 4}, {0, 5}, {10, 10}, {13, 3}, {7, 7}} {
		page := ids(e.kutt("GET", fmt.Sprintf("/api/v2/links?skip=%d&limit=%d", q.skip, q.limit), e.readKey, "", 200))
		want := every[min(q.skip, 14):min(q.skip+q.limit, 14)]
		if strings.Join(page, ",") != strings.Join(want, ",") {
			t.Fatalf("skip %d limit %d: %v, want %v", q.skip, q.limit, page, want)
		}
	}
	if s := e.kutt("GET", "/api/v2/links?search=spring", e.readKey, "", 200); s.path("total") != float64(1) {
		t.Fatalf("search: %s", s.raw)
	}

	// Edit: address and target; a password left out is removed.
	ed := e.kutt("PATCH", "/api/v2/links/"+id, e.writeKey, `{"target":"https://example.com/summer","address":"summer"}`, 200)
	if ed.str("address") != "summer" || ed.str("target") != "https://example.com/summer" || ed.path("password") != false || ed.str("description") != "Spring sale" {
		t.Fatalf("edited: %s", ed.raw)
	}

	// Stats after real redirects.
	for range 3 {
		req := newRequest("GET", "/summer", "", "")
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36")
		if r := e.request(req); r.status != 302 {
			t.Fatalf("redirect: %d", r.status)
		}
	}
	e.flush()
	for _, method := range []string{"GET", "DELETE"} {
		st := e.kutt(method, "/api/v2/links/"+id+"/stats", e.readKey, "", 200)
		if st.path("visit_count") != float64(3) || st.path("lastDay", "total") != float64(3) || st.path("lastYear", "total") != float64(3) ||
			st.path("lastWeek", "stats", "browser", 0, "value") != float64(3) {
			t.Fatalf("%s stats: %s", method, st.raw)
		}
		views := st.path("lastDay", "views").([]any)
		if len(views) != 24 || views[23] != float64(3) || len(st.path("lastWeek", "views").([]any)) != 7 ||
			len(st.path("lastMonth", "views").([]any)) != 30 || len(st.path("lastYear", "views").([]any)) != 12 {
			t.Fatalf("%s stats views: %s", method, st.raw)
		}
	}

	// The user, and deletion.
	if u := e.kutt("GET", "/api/v2/users", e.readKey, "", 200); u.str("email") != "admin@example.com" || u.str("apikey") != "" {
		t.Fatalf("user: %s", u.raw)
	}
	if d := e.kutt("DELETE", "/api/v2/links/"+id, e.writeKey, "", 200); d.str("message") != "Link has been deleted successfully." {
		t.Fatalf("delete: %s", d.raw)
	}
	e.do("GET", "/v1/links/"+id, e.readKey, "", 404)
}

// TestKuttRefuses: bad input, a bad or read-only key, another workspace's
// link, each answered in Kutt's shape with the status a Kutt client reads.
func TestKuttRefuses(t *testing.T) {
	t.Parallel()
	e := kuttEnv(t)
	id := e.kutt("POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/a","customurl":"taken"}`, 201).str("id")
	for _, c := range []struct {
		method, path, key, body string
		status                  int
		msg                     string
	}{
		{"GET", "/api/v2/links", "", "", 401, ""},
		{"GET", "/api/v2/links", "lb_live_nosuchkey", "", 401, ""},
		{"POST", "/api/v2/links", e.readKey, `{"target":"https://example.com/b"}`, 403, "read scope"},
		{"POST", "/api/v2/links", e.writeKey, `{}`, 400, "Target is missing."},
		{"POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/b","customurl":"taken"}`, 400, "Custom URL is already in use."},
		{"POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/b","customurl":"no spaces"}`, 400, "Custom URL is not valid"},
		{"POST", "/api/v2/links", e.writeKey, `{"target":"ftp://"}`, 400, "URL is not valid"},
		{"POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/b","expire_in":"soon"}`, 400, "Expire format is invalid."},
		{"POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/b","expire_in":"30s"}`, 400, "Expire time should be more than 1 minute."},
		{"POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/b","password":"ab"}`, 400, "Password length must be between 3 and 64."},
		{"POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/b","password":"abc"}`, 400, "Password is not valid: must be at least 4 characters."},
		{"POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/b","domain":"elsewhere.example"}`, 400, "You can't use this domain."},
		{"POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/b","unknown":1}`, 400, "unknown field"},
		{"POST", "/api/v2/links", e.writeKey, `{"target":`, 400, ""},
		{"POST", "/api/v2/links", e.writeKey, `{"target":"https://example.com/b","description":"` + strings.Repeat("x", 201) + `"}`, 400, "Description is not valid"},
		{"PATCH", "/api/v2/links/lnk_nosuchlink", e.writeKey, `{"target":"https://example.com/c"}`, 404, "Link was not found."},
		{"PATCH", "/api/v2/links/" + id, e.writeKey, `{"target":"javascript:alert(1)"}`, 400, "URL is not valid"},
		{"DELETE", "/api/v2/links/lnk_nosuchlink", e.writeKey, "", 404, "Could not delete the link."},
		{"GET", "/api/v2/links/lnk_nosuchlink/stats", e.readKey, "", 404, "Link could not be found."},
		{"GET", "/api/v2/links?limit=x", e.readKey, "", 400, "limit query is not valid."},
		{"GET", "/api/v2/links?skip=-1", e.readKey, "", 400, "skip query is not valid."},
		{"POST", "/api/v2/domains", e.writeKey, `{"address":"not a host"}`, 400, "Domain is not valid"},
		{"DELETE", "/api/v2/domains/dom_nosuchdomain", e.writeKey, "", 404, "Could not delete the domain."},
	} {
		r := e.kutt(c.method, c.path, c.key, c.body, c.status)
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("%s %s: Content-Type %q", c.method, c.path, ct)
		}
		if msg := r.str("error"); msg == "" || !strings.Contains(msg, c.msg) {
			t.Fatalf("%s %s %s: error %q, want it to hold %q", c.method, c.path, c.body, msg, c.msg)
		}
	}
	// Another workspace's key sees nothing of this one.
	ws := e.do("POST", "/v1/workspaces", e.adminToken, `{"name":"Other"}`, 201).str("id")
	req := newRequest("POST", "/v1/keys", e.adminToken, `{"name":"other","scope":"read_write"}`)
	req.Header.Set("X-Workspace-Id", ws)
	other := e.request(req).str("key")
	e.kutt("GET", "/api/v2/links/"+id+"/stats", other, "", 404)
	e.kutt("DELETE", "/api/v2/links/"+id, other, "", 404)
	if l := e.kutt("GET", "/api/v2/links", other, "", 200); l.path("total") != float64(0) {
		t.Fatalf("another workspace lists %v links", l.path("total"))
	}
}

// TestKuttDomains: a domain added through Kutt's route is the
// workspace's, listed by the user route, and removed.
func TestKuttDomains(t *testing.T) {
	t.Parallel()
	e := kuttEnv(t)
	d := e.kutt("POST", "/api/v2/domains", e.writeKey, `{"address":"Go.Example.com","homepage":"example.com"}`, 200)
	if d.str("address") != "go.example.com" || d.str("homepage") != "http://example.com" {
		t.Fatalf("domain: %s", d.raw)
	}
	if v1 := e.do("GET", "/v1/domains", e.readKey, "", 200); v1.path("data", 0, "hostname") != "go.example.com" {
		t.Fatalf("/v1/domains: %s", v1.raw)
	}
	if u := e.kutt("GET", "/api/v2/users", e.readKey, "", 200); u.path("domains", 0, "id") != d.str("id") {
		t.Fatalf("user's domains: %s", u.raw)
	}
	e.kutt("DELETE", "/api/v2/domains/"+d.str("id"), e.writeKey, "", 200)
}

// TestKuttOff: with compat.kutt off, /api/v2 is not served.
func TestKuttOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, newRequest("GET", "/api/v2/health", "", ""))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("/api/v2/health with compat.kutt off: %d", rec.Code)
	}
}

func TestKuttDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1m", time.Minute, true}, {"8h", 8 * time.Hour, true}, {"42 days", 42 * 24 * time.Hour, true},
		{"2 weeks", 14 * 24 * time.Hour, true}, {"90 minutes", 90 * time.Minute, true}, {"1.5h", 90 * time.Minute, true},
		{"3600000", time.Hour, true}, {" 2 Hours ", 2 * time.Hour, true},
		{"59s", 0, false}, {"-5m", 0, false}, {"soon", 0, false}, {"", 0, false}, {"5 fortnights", 0, false}, {"1e9y", 0, false},
	} {
		got, err := kuttDuration(c.in)
		if (err == nil) != c.ok || c.ok && got != c.want {
			t.Errorf("kuttDuration(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
