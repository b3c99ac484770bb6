package server

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDashboardIsServedUnderApp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/app", "/app/", "/app/links", "/app/keys/x", "/app/invite"} {
		r := e.serve(path, 200)
		if got := r.header.Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'self'; script-src 'self';") {
			t.Errorf("%s: CSP %q", path, got)
		}
		if got, want := r.header.Get("X-Frame-Options"), "DENY"; got != want {
			t.Errorf("%s: X-Frame-Options %q", path, got)
		}
		if got, want := r.header.Get("Cache-Control"), "no-cache"; got != want {
			t.Errorf("%s: Cache-Control %q, want %q", path, got, want)
		}
	}
	js := e.serve("/app/assets/"+e.srv.dashboard.AssetName("app.js"), 200)
	if got, want := js.header.Get("Cache-Control"), "public, max-age=31536000, immutable"; got != want {
		t.Errorf("app.js: Cache-Control %q, want %q", got, want)
	}
	e.serve("/app/assets/app.000000000000.js", 404)
	// A route of the API is not the dashboard's, nor is /app on a short
	// code's path: "app" stays a reserved alias.
	e.do("GET", "/v1/links", "", "", 401)
}

func TestHomeOpensTheDashboardForABrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // set up: an admin exists
	req := newRequest("GET", "/", "", "")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	r := e.request(req)
	if got, want := r.status, 302; got != want {
		t.Fatalf("a browser on /: %d, want %d", got, want)
	}
	if got, want := r.header.Get("Location"), "/app/"; got != want {
		t.Fatalf("Location %q, want %q", got, want)
	}
	// curl and probes keep the status page.
	if r := e.do("GET", "/", "", "", 200); !strings.Contains(string(r.raw), "running") {
		t.Fatalf("status page: %s", r.raw)
	}
}

// serve answers a GET of the dashboard through the real server. The
// OpenAPI check is left out: the dashboard's paths are pages whose {path}
// holds slashes or is empty, which a document's path template cannot
// match; /app/links-like paths are checked through e.do elsewhere.
func (e *env) serve(path string, want int) *response {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, newRequest("GET", path, "", ""))
	res := rec.Result()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		e.t.Fatalf("GET %s: %d, want %d: %s", path, res.StatusCode, want, raw)
	}
	return &response{status: res.StatusCode, header: res.Header, raw: raw}
}
