package server

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// TestEveryPageHasSecurityHeaders walks every HTML page the server
// writes, each template of the package and the dashboard, and checks that
// each carries the dashboard's protections: a CSP that forbids framing
// and any inline script but the page's own (by hash), X-Frame-Options,
// nosniff and no referrer. A template no case reaches fails the test, so
// a page added later is walked too.
func TestEveryPageHasSecurityHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	html := []string{"Accept", "text/html"}
	at := e.clock.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/p","alias":"prev","title":"Spring"}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/s","alias":"vault","password":"open-sesame-7731"}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/c","alias":"card","og":{"title":"Card"}}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/o","alias":"open","public_stats":true}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/i","alias":"inapp","escape_in_app_browser":true}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/g","alias":"soon","expires_at":"`+at+`"}`, 201)
	e.verifiedDomain("go.example.com", "")
	e.clock.Add(2 * time.Minute)
	tok := "setup-token-for-the-page-test"
	e.srv.setupToken.Store(&tok)
	if shared, ok := e.db.Data.(link.SetupTokens); ok { // as PrepareSetup stores it
		if _, err := shared.SetupToken(func() string { return tok }); err != nil {
			t.Fatal(err)
		}
	}

	onHost := func(req *http.Request, host string) *http.Request { req.Host = host; return req }
	cases := []struct {
		template string // the page's template, "dashboard" for /app/
		req      *http.Request
		status   int
		marker   string // a piece of the page that tells it
	}{
		{"home", visit("/", "192.0.2.1", uaFirefoxLinux, html...), 200, "This linkbolt server is running"},
		{"setup", visit("/setup?token="+tok, "192.0.2.1", uaFirefoxLinux, html...), 200, `fetch('/v1/setup'`},
		{"setup", visit("/setup", "192.0.2.1", uaFirefoxLinux, html...), 200, "setup link is not valid"},
		{"reset", visit("/auth/reset-password?token=abc", "192.0.2.1", uaFirefoxLinux, html...), 200, `fetch('/v1/auth/password-reset'`},
		{"reset", visit("/auth/reset-password", "192.0.2.1", uaFirefoxLinux, html...), 200, "This link has no token"},
		{"dashboard", visit("/app/", "192.0.2.1", uaFirefoxLinux, html...), 200, "<script"},
		{"404", visit("/nope", "192.0.2.1", uaFirefoxLinux, html...), 404, "nope"},
		{"404", visit("/nope+", "192.0.2.1", uaFirefoxLinux, html...), 404, "nope"},
		{"404", onHost(visit("/a/b", "192.0.2.1", uaFirefoxLinux, html...), "go.example.com"), 404, "a/b"},
		{"preview", visit("/prev+", "192.0.2.1", uaFirefoxLinux, html...), 200, "Spring"},
		{"410", visit("/soon", "192.0.2.1", uaFirefoxLinux, html...), 410, "<h1>"},
		{"password", visit("/vault", "192.0.2.1", uaFirefoxLinux, html...), 200, `action="/vault"`},
		{"password", passwordPost("/vault", "192.0.2.1", "wrong guess"), 401, `action="/vault"`},
		{"reported", reportPost("/prev+", "192.0.2.1", "spam"), 200, `id="report-sent"`},
		{"reported", reportPost("/prev+", "192.0.2.1", "bogus"), 422, `id="report-error"`},
		{"og", visit("/card", "192.0.2.1", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"), 200, "og:title"},
		{"stats", visit("/open/stats", "192.0.2.1", uaFirefoxLinux, html...), 200, `id="stats-clicks"`},
		{"404", visit("/prev/stats", "192.0.2.1", uaFirefoxLinux, html...), 404, "prev"},
		{"interstitial", visit("/inapp", "192.0.2.1", uaInstagramIPhone), 200, "x-safari-https://example.com/i"},
		{"root", onHost(visit("/", "192.0.2.1", uaFirefoxLinux, html...), "go.example.com"), 200, "go.example.com"},
	}
	walked := map[string]bool{}
	for _, tc := range cases {
		for _, method := range []string{"GET", "HEAD"} {
			req := tc.req.Clone(tc.req.Context())
			if method == "HEAD" {
				if req.Method != "GET" {
					continue
				}
				req.Method = "HEAD"
			}
			// Straight to the handler: the pages are no operations of the
			// OpenAPI document, which e.request checks answers against.
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, req)
			r := &response{t: t, status: rec.Code, header: rec.Header(), raw: rec.Body.Bytes()}
			name := tc.template + " " + method + " " + req.URL.String()
			if r.status != tc.status {
				t.Errorf("%s: status %d, want %d: %s", name, r.status, tc.status, r.raw)
				continue
			}
			if method == "GET" && !strings.Contains(string(r.raw), tc.marker) {
				t.Errorf("%s: not the page (no %q): %s", name, tc.marker, r.raw)
				continue
			}
			walked[tc.template] = true
			checkPageHeaders(t, name, r.header, r.raw)
		}
	}

	// Every template of the package is a page some case above walked.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	newTemplate := regexp.MustCompile(`template\.New\("([^"]+)"\)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range newTemplate.FindAllStringSubmatch(string(src), -1) {
			if !walked[m[1]] {
				t.Errorf("the page template %q (%s) is walked by no case of this test", m[1], f)
			}
		}
	}
}

// checkPageHeaders checks the protections of one HTML page, and that each
// of its inline scripts is one its CSP allows by hash.
// hosts are script hosts the page may load from (a retargeting page's
// pixels); no other page names any.
func checkPageHeaders(t *testing.T, name string, h http.Header, body []byte, hosts ...string) {
	t.Helper()
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("%s: Content-Type %q", name, ct)
	}
	for k, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %s %q, want %q", name, k, got, want)
		}
	}
	csp := map[string][]string{}
	for _, d := range strings.Split(h.Get("Content-Security-Policy"), ";") {
		if f := strings.Fields(d); len(f) > 0 {
			csp[f[0]] = f[1:]
		}
	}
	if !slices.Equal(csp["frame-ancestors"], []string{"'none'"}) || !slices.Equal(csp["base-uri"], []string{"'none'"}) {
		t.Errorf("%s: CSP %q allows framing or a base", name, h.Get("Content-Security-Policy"))
	}
	scripts, ok := csp["script-src"]
	if !ok {
		scripts = csp["default-src"]
	}
	if len(scripts) == 0 {
		t.Errorf("%s: CSP %q sets no script-src nor default-src", name, h.Get("Content-Security-Policy"))
	}
	for _, src := range scripts {
		if src != "'none'" && src != "'self'" && !strings.HasPrefix(src, "'sha256-") && !slices.Contains(hosts, src) {
			t.Errorf("%s: CSP allows the scripts %q", name, src)
		}
	}
	inline := regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	for _, m := range inline.FindAllSubmatch(body, -1) {
		sum := sha256.Sum256(m[1])
		if want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !slices.Contains(scripts, want) {
			t.Errorf("%s: an inline script the CSP does not allow (%s not in %q)", name, want, scripts)
		}
	}
	if regexp.MustCompile(`(?i)\son[a-z]+=`).Match(body) {
		t.Errorf("%s: an inline event handler", name)
	}
}

// reportPost is the report form of a link's preview, posted from addr.
func reportPost(path, addr, reason string) *http.Request {
	req := httptest.NewRequest("POST", "http://lb.test"+path, strings.NewReader(url.Values{"reason": {reason}}.Encode()))
	req.RemoteAddr = addr + ":4444"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", uaFirefoxLinux)
	return req
}
