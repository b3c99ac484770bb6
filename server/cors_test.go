package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// corsEnv is a whole server allowing the browser origins of
// server.cors_origins as written in a configuration file.
func corsEnv(t *testing.T, configured ...string) *env {
	t.Helper()
	origins, err := ParseCORSOrigins(configured)
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, func(c *Config) { c.CORSOrigins = origins })
}

// preflight sends the OPTIONS request a browser sends before a
// cross-origin request, straight to the server's handler (OPTIONS is no
// operation of the OpenAPI document).
func preflight(e *env, path, origin, method, headers string) *http.Response {
	e.t.Helper()
	req := httptest.NewRequest("OPTIONS", "http://lb.test"+path, nil)
	req.RemoteAddr = "192.0.2.1:1234"
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", method)
	if headers != "" {
		req.Header.Set("Access-Control-Request-Headers", headers)
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	return rec.Result()
}

// fromOrigin is newRequest from a page of origin, with an API key in
// X-API-Key as a browser application sends it.
func fromOrigin(method, path, origin, key, body string) *http.Request {
	req := newRequest(method, path, "", body)
	req.Header.Set("Origin", origin)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	return req
}

// headerList splits a comma-separated header into its lower-cased values.
func headerList(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for _, part := range strings.Split(v, ",") {
			out = append(out, strings.ToLower(strings.TrimSpace(part)))
		}
	}
	return out
}

// noCORS fails when h carries any CORS header.
func noCORS(t *testing.T, h http.Header) {
	t.Helper()
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "access-control-") {
			t.Fatalf("CORS header %s: %q", name, h.Get(name))
		}
	}
}

func TestCORSAllowedOrigin(t *testing.T) {
	t.Parallel()
	// As written in the configuration: case, a default port and a
	// trailing slash are how browsers do not send it.
	e := corsEnv(t, "HTTPS://App.Example.com:443/", "http://localhost:5173")
	const origin = "https://app.example.com"

	r := e.request(fromOrigin("POST", "/v1/links", origin, e.writeKey, `{"destination_url":"https://example.com/cors"}`))
	if r.status != 201 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	if got := r.header.Get("Access-Control-Allow-Origin"); got != origin {
		t.Fatalf("Access-Control-Allow-Origin = %q, want %q", got, origin)
	}
	if !slices.Contains(headerList(r.header, "Vary"), "origin") {
		t.Fatalf("Vary = %q, want Origin", r.header.Values("Vary"))
	}
	if r.header.Get("Access-Control-Allow-Credentials") != "" {
		t.Fatal("credentials allowed: linkbolt never uses cookies")
	}
	exposed := headerList(r.header, "Access-Control-Expose-Headers")
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After", "Location", "ETag", "WWW-Authenticate", "Content-Disposition"} {
		if !slices.Contains(exposed, strings.ToLower(h)) {
			t.Errorf("%s is not exposed: %q", h, exposed)
		}
	}
	// Every header the answer carries that a client reads is exposed.
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		if r.header.Get(h) == "" {
			t.Errorf("the answer has no %s", h)
		}
	}

	// The other allowed origin, the simple API, and errors (a browser
	// application reads the problem too).
	r = e.request(fromOrigin("POST", "/api/urls", "http://localhost:5173", e.writeKey, `{"originalUrl":"https://example.com/simple"}`))
	if r.status != 201 || r.header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" {
		t.Fatalf("/api/urls: %d, Allow-Origin %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
	r = e.request(fromOrigin("GET", "/v1/links", origin, "", ""))
	wantProblem(t, r, 401, "unauthorized")
	if r.header.Get("Access-Control-Allow-Origin") != origin {
		t.Fatalf("a 401 has no Access-Control-Allow-Origin")
	}
	// A login token in Authorization works the same.
	req := newRequest("GET", "/v1/me", e.adminToken, "")
	req.Header.Set("Origin", origin)
	if r = e.request(req); r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != origin {
		t.Fatalf("/v1/me with a token: %d, Allow-Origin %q", r.status, r.header.Get("Access-Control-Allow-Origin"))
	}
	// A request without Origin (a script, a same-origin page) gets none.
	r = e.do("GET", "/v1/links", e.readKey, "", 200)
	noCORS(t, r.header)
}

func TestCORSOtherOrigin(t *testing.T) {
	t.Parallel()
	e := corsEnv(t, "https://app.example.com")
	for _, origin := range []string{"https://evil.example", "https://app.example.com.evil.example", "http://app.example.com", "https://app.example.com:8443", "null"} {
		t.Run(origin, func(t *testing.T) {
			r := e.request(fromOrigin("GET", "/v1/links", origin, e.readKey, ""))
			if r.status != 200 {
				t.Fatalf("status %d", r.status)
			}
			noCORS(t, r.header)
			res := preflight(e, "/v1/links", origin, "POST", "X-API-Key, Content-Type")
			noCORS(t, res.Header)
			if res.StatusCode == http.StatusNoContent {
				t.Fatal("a preflight from another origin was answered 204")
			}
		})
	}
}

func TestCORSPreflight(t *testing.T) {
	t.Parallel()
	e := corsEnv(t, "https://app.example.com")
	const origin = "https://app.example.com"
	remaining := func() int {
		t.Helper()
		n, err := strconv.Atoi(e.do("GET", "/v1/links", e.readKey, "", 200).header.Get("X-RateLimit-Remaining"))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := remaining()
	for _, tc := range []struct{ path, method, headers string }{
		{"/v1/links", "POST", "X-API-Key"},
		{"/v1/links", "POST", "Authorization"},
		{"/v1/links", "POST", "Content-Type"},
		{"/v1/links", "GET", "X-Workspace-Id"},
		{"/v1/links/lnk_whatever", "PATCH", "content-type, x-api-key"},
		{"/v1/links/lnk_whatever", "DELETE", "authorization"},
		{"/v1/links/lnk_whatever/qr", "GET", "if-none-match,x-api-key"},
		{"/v1/keys", "POST", "Authorization, Content-Type"},
		{"/api/urls", "POST", "X-API-Key, Content-Type"},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.headers, func(t *testing.T) {
			res := preflight(e, tc.path, origin, tc.method, tc.headers)
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusNoContent || len(body) != 0 {
				t.Fatalf("status %d, body %q", res.StatusCode, body)
			}
			h := res.Header
			if got := h.Get("Access-Control-Allow-Origin"); got != origin {
				t.Fatalf("Access-Control-Allow-Origin = %q", got)
			}
			if !slices.Contains(headerList(h, "Vary"), "origin") {
				t.Fatalf("Vary = %q", h.Values("Vary"))
			}
			if !slices.Contains(headerList(h, "Access-Control-Allow-Methods"), strings.ToLower(tc.method)) {
				t.Fatalf("Access-Control-Allow-Methods %q lacks %s", h.Get("Access-Control-Allow-Methods"), tc.method)
			}
			allowed := headerList(h, "Access-Control-Allow-Headers")
			for _, want := range strings.Split(tc.headers, ",") {
				if !slices.Contains(allowed, strings.ToLower(strings.TrimSpace(want))) {
					t.Fatalf("Access-Control-Allow-Headers %q lacks %s", allowed, want)
				}
			}
			if n, err := strconv.Atoi(h.Get("Access-Control-Max-Age")); err != nil || n <= 0 {
				t.Fatalf("Access-Control-Max-Age = %q", h.Get("Access-Control-Max-Age"))
			}
			if h.Get("Access-Control-Allow-Credentials") != "" || h.Get("X-RateLimit-Limit") != "" {
				t.Fatalf("preflight headers: %v", h)
			}
		})
	}
	// Preflights need no credential and are not counted: the workspace's
	// budget went down by the one GET of remaining() alone (the clock
	// stands still, so nothing refilled).
	if got, want := remaining(), before-1; got != want {
		t.Fatalf("X-RateLimit-Remaining = %d after the preflights, want %d", got, want)
	}
}

// TestCORSOnlyAPI: redirects, pages and health are not for other origins.
func TestCORSOnlyAPI(t *testing.T) {
	t.Parallel()
	e := corsEnv(t, "https://app.example.com")
	const origin = "https://app.example.com"
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"spring"}`, 201)
	for _, path := range []string{"/spring", "/", "/setup", "/healthz", "/metrics", "/v1", "/api"} {
		t.Run(path, func(t *testing.T) {
			req := newRequest("GET", path, "", "")
			req.Header.Set("Origin", origin)
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, req)
			noCORS(t, rec.Result().Header)
			res := preflight(e, path, origin, "GET", "X-API-Key")
			noCORS(t, res.Header)
		})
	}
}

func TestCORSWildcard(t *testing.T) {
	t.Parallel()
	e := corsEnv(t, "*")
	for _, origin := range []string{"https://app.example.com", "http://localhost:3000", "null"} {
		r := e.request(fromOrigin("GET", "/v1/links", origin, e.readKey, ""))
		if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "*" || r.header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("%s: %d, Allow-Origin %q, Allow-Credentials %q", origin, r.status,
				r.header.Get("Access-Control-Allow-Origin"), r.header.Get("Access-Control-Allow-Credentials"))
		}
		res := preflight(e, "/v1/links", origin, "POST", "Authorization, Content-Type")
		if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != "*" || res.Header.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("%s preflight: %d %v", origin, res.StatusCode, res.Header)
		}
	}
}

// TestCORSOff: without server.cors_origins nothing changes: no CORS
// header, and an OPTIONS request is the router's as before.
func TestCORSOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.request(fromOrigin("GET", "/v1/links", "https://app.example.com", e.readKey, ""))
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	noCORS(t, r.header)
	if r.header.Get("Vary") != "" {
		t.Fatalf("Vary = %q", r.header.Get("Vary"))
	}
	res := preflight(e, "/v1/links", "https://app.example.com", "POST", "X-API-Key")
	noCORS(t, res.Header)
	if res.StatusCode == http.StatusNoContent {
		t.Fatal("a preflight was answered 204 with CORS off")
	}
}

func TestParseCORSOrigins(t *testing.T) {
	t.Parallel()
	got, err := ParseCORSOrigins([]string{
		"https://app.example.com", "HTTPS://App.Example.COM:443/", "http://localhost:80", "http://localhost:5173",
		" https://[::1]:8443 ", "capacitor://localhost", "*",
	})
	want := []string{"https://app.example.com", "http://localhost", "http://localhost:5173", "https://[::1]:8443", "capacitor://localhost", "*"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
	if got, err := ParseCORSOrigins(nil); err != nil || len(got) != 0 {
		t.Fatalf("none: %q %v", got, err)
	}
	for _, bad := range []string{
		"", "app.example.com", "//app.example.com", "https://", "https://app.example.com/app", "https://app.example.com?x=1",
		"https://app.example.com#top", "https://user@app.example.com", "https://app.example.com:99999", "https://app.example.com:x",
		"https://bücher.example", "null", "**", "1http://x.example",
	} {
		if _, err := ParseCORSOrigins([]string{"https://ok.example", bad}); err == nil || !strings.Contains(err.Error(), "scheme://host[:port]") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestParseCORSOriginsNoPatterns: an origin with a wildcard or other
// characters no browser sends in a host is refused, naming what is wrong,
// rather than kept as an origin that never matches (a person writing
// https://*.example.com expects every subdomain, and would get none).
func TestParseCORSOriginsNoPatterns(t *testing.T) {
	t.Parallel()
	for bad, say := range map[string]string{
		"https://*.example.com":    "wildcard",
		"https://app.*.example":    "wildcard",
		"https://*":                "wildcard",
		"https://app.example.com*": "wildcard",
		"https://a~b.example":      "no browser sends",
		"https://a!b.example":      "no browser sends",
	} {
		_, err := ParseCORSOrigins([]string{"https://ok.example", bad})
		if err == nil || !strings.Contains(err.Error(), say) || !strings.Contains(err.Error(), "scheme://host[:port]") {
			t.Errorf("%q: %v, want an error saying %q", bad, err, say)
		}
	}
	// What browsers do send still passes.
	for _, ok := range []string{"https://my_app.example", "https://xn--bcher-kva.example:8443", "http://127.0.0.1:5173"} {
		if _, err := ParseCORSOrigins([]string{ok}); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	// A subdomain of a listed origin gets no CORS answer.
	e := corsEnv(t, "https://example.com")
	res := preflight(e, "/v1/links", "https://app.example.com", "GET", "")
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Fatalf("a subdomain's preflight: Access-Control-Allow-Origin %q", got)
	}
}
