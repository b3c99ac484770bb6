package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBlocklistEveryDestination: every destination a link can send a
// visitor to (destination_url, rules[].then, variants[].destination_url,
// expired_url) is refused on the blocklist when saved (create, bulk,
// PATCH; each field named) and, when an entry comes later, no longer
// served: a link with a blocked rule or variant answers 410 as one with a
// blocked destination_url does (its preview says so too), and a blocked
// expired_url is not followed (410 with the blocklist's notice).
func TestBlocklistEveryDestination(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "blocklist.txt")
	if err := os.WriteFile(path, []byte("evil.example\nexample.org/promo/*\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.BlocklistPath = path })
	fields := func(r *response) []string {
		var out []string
		for _, f := range r.path("errors").([]any) {
			out = append(out, f.(map[string]any)["field"].(string))
		}
		return out
	}
	ok := `"destination_url":"https://example.com/"`
	for _, tc := range []struct{ body, want string }{
		{`"rules":[{"if":{"country":"DE"},"then":"https://www.evil.example/de"}]`, "rules[0].then"},
		{`"variants":[{"destination_url":"https://example.com/a","weight":50},{"destination_url":"https://example.org/promo/b","weight":50}]`, "variants[1].destination_url"},
		{`"expired_url":"https://evil.example/"`, "expired_url"},
		{`"ios_url":"https://evil.example/ios"`, "ios_url"},
		{`"android_url":"https://example.org/promo/app"`, "android_url"},
	} {
		r := e.do("POST", "/v1/links", e.writeKey, `{`+ok+`,`+tc.body+`}`, 422)
		if got := fields(r); len(got) != 1 || got[0] != tc.want || !strings.Contains(r.str("detail"), "blocklist") {
			t.Errorf("%s: fields %v, want [%s]: %s", tc.body, got, tc.want, r.raw)
		}
		bulk := e.do("POST", "/v1/links/bulk", e.writeKey, `{"links":[{`+ok+`,`+tc.body+`},{`+ok+`}]}`, 200)
		if bulk.path("data", 0, "error", "errors", 0, "field") != tc.want || bulk.path("data", 1, "link") == nil {
			t.Errorf("bulk %s: %s", tc.body, bulk.raw)
		}
	}
	// Every blocked field is named.
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://evil.example/",
		"rules":[{"if":{"country":"DE"},"then":"https://example.com/de"},{"if":{"country":"FR"},"then":"https://evil.example/fr"}],
		"variants":[{"destination_url":"https://evil.example/a","weight":50},{"destination_url":"https://example.com/b","weight":50}],
		"expired_url":"https://example.org/promo/gone"}`, 422)
	if got := strings.Join(fields(r), " "); got != "destination_url rules[1].then variants[0].destination_url expired_url" {
		t.Fatalf("fields %s", got)
	}

	// PATCH checks the destinations it sets, and only those.
	l := e.do("POST", "/v1/links", e.writeKey, `{`+ok+`,"alias":"split",
		"rules":[{"if":{"query":{"name":"src","value":"qr"}},"then":"https://example.com/qr"}],
		"variants":[{"destination_url":"https://later.example/a","weight":50},{"destination_url":"https://example.com/b","weight":50}],
		"expired_url":"https://sorry.example/"}`, 201)
	id := l.str("id")
	for body, field := range map[string]string{
		`{"rules":[{"if":{"country":"DE"},"then":"https://evil.example/"}]}`:                                                            "rules[0].then",
		`{"variants":[{"destination_url":"https://evil.example/","weight":50},{"destination_url":"https://example.com/","weight":50}]}`: "variants[0].destination_url",
		`{"expired_url":"https://evil.example/"}`:                                                                                       "expired_url",
	} {
		if got := fields(e.do("PATCH", "/v1/links/"+id, e.writeKey, body, 422)); len(got) != 1 || got[0] != field {
			t.Errorf("PATCH %s: fields %v", body, got)
		}
	}

	// Served: a later entry for a variant's host turns the whole link off.
	e.do("GET", "/split", "", "", 302)
	e.do("GET", "/split?src=qr", "", "", 302)
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"later.example"}`, 201)
	html := func(method, path string) *response {
		req := newRequest(method, path, "", "")
		req.Header.Set("Accept", "text/html")
		return e.request(req)
	}
	for _, p := range []string{"/split", "/split?src=qr"} {
		if r := html("GET", p); r.status != 410 || !strings.Contains(string(r.raw), "blocklist") || r.header.Get("Location") != "" {
			t.Fatalf("GET %s with a blocked variant: %d %s", p, r.status, r.raw)
		}
	}
	if r := html("HEAD", "/split"); r.status != 410 {
		t.Fatalf("HEAD with a blocked variant: %d", r.status)
	}
	if body := string(e.do("GET", "/split+", "", "", 200).raw); !strings.Contains(body, "blocklist") || strings.Contains(body, `id="continue"`) {
		t.Fatalf("preview with a blocked variant: %s", body)
	}
	// A link turned off that way may still be renamed or archived…
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"title":"Off","archived":true}`, 200)
	// …and turns back on with its variants replaced.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"variants":[]}`, 200)
	e.do("GET", "/split", "", "", 302)

	// A rule's destination, the same.
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"example.com/qr"}`, 201)
	if r := html("GET", "/split"); r.status != 410 || !strings.Contains(string(r.raw), "blocklist") {
		t.Fatalf("GET with a blocked rule: %d %s", r.status, r.raw)
	}
	e.do("DELETE", "/v1/admin/blocklist?entry=example.com/qr", e.adminToken, "", 204)
	e.do("GET", "/split", "", "", 302)

	// expired_url: followed until its host is blocked, then the 410 with
	// the blocklist's notice; a password changes nothing there.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"expires_at":"`+e.clock.Now().Add(-time.Minute).UTC().Format(time.RFC3339)+`"}`, 200)
	if r := html("GET", "/split"); r.status != 302 || r.header.Get("Location") != "https://sorry.example/" {
		t.Fatalf("expired: %d %q", r.status, r.header.Get("Location"))
	}
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"sorry.example"}`, 201)
	if r := html("GET", "/split"); r.status != 410 || !strings.Contains(string(r.raw), "blocklist") {
		t.Fatalf("expired, expired_url blocked: %d %s", r.status, r.raw)
	}
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"password":"open-sesame-96"}`, 200)
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, passwordPost("/split", "198.51.100.50", "open-sesame-96"))
	if w.Code != http.StatusGone || w.Header().Get("Location") != "" {
		t.Fatalf("expired, expired_url blocked, the right password: %d %q", w.Code, w.Header().Get("Location"))
	}
	if r := html("GET", "/split"); r.status != 410 {
		t.Fatalf("expired, expired_url blocked, protected: %d", r.status)
	}
}

// TestBlocklistPathSpellings: a pattern's path is matched against the
// path a browser requests (dot segments removed, unreserved escapes
// decoded, "\" as "/", repeated slashes folded) without regard to case,
// both when a link is saved and when it is served.
func TestBlocklistPathSpellings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spellings := []string{
		"https://example.org/promo/x",
		"https://example.org/./promo/x",
		"https://example.org/a/../promo/x",
		"https://example.org/%70romo/x",
		"https://example.org/%2e/promo/x",
		"https://example.org/a/%2E%2e/promo/x",
		"https://example.org//promo/x",
		"https://example.org/a//..//promo/x",
		"https://example.org/PROMO/x",
		"https://example.org/%50ROMO/x",
		`https://example.org/a\..\promo\x`,
		"https://EXAMPLE.org:443/promo/x?utm=1#top",
	}
	// Saved before the entry: served until it comes, then 410.
	for i, s := range spellings {
		e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"`+strings.ReplaceAll(s, `\`, `\\`)+`","alias":"sp`+string(rune('a'+i))+`"}`, 201)
	}
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"example.org/promo/*"}`, 201)
	for i, s := range spellings {
		if r := e.request(newRequest("GET", "/sp"+string(rune('a'+i)), "", "")); r.status != 410 {
			t.Errorf("served %s: %d", s, r.status)
		}
		r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"`+strings.ReplaceAll(s, `\`, `\\`)+`"}`, 422)
		if r.path("errors", 0, "field") != "destination_url" {
			t.Errorf("saved %s: %s", s, r.raw)
		}
	}
	// Paths that are not the pattern's stay allowed.
	for _, s := range []string{"https://example.org/promotion", "https://example.org/other/promo/x", "https://example.org/%2Fpromo/x", "https://example.org/promo"} {
		e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"`+s+`"}`, 201)
	}
	// An entry is kept in its canonical form, so a spelling of it is the
	// same entry.
	if got := e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"https://Example.com/./A//%62/*"}`, 201).str("entry"); got != "example.com/a/b/*" {
		t.Fatalf("entry %q", got)
	}
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"example.com/A/B/*"}`, 409)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a/b/c"}`, 422)
	e.do("DELETE", "/v1/admin/blocklist?entry=example.com/a/./b/*", e.adminToken, "", 204)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a/b/c"}`, 201)
}

// A custom domain sends visitors to its root_redirect_url and its
// not_found_url as a link sends them to its destination: either on the
// blocklist is refused when saved (422, each named), and one that comes
// onto the blocklist later is no longer followed (the domain's own page
// and the 404 answer instead).
func TestBlocklistDomainRedirects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"evil.example"}`, 201)
	r := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"go.example.com","root_redirect_url":"https://evil.example/","not_found_url":"https://www.evil.example/404"}`, 422)
	if got := r.path("errors", 0, "field"); got != "root_redirect_url" || r.path("errors", 1, "field") != "not_found_url" {
		t.Fatalf("create with blocked redirects: %s", r.raw)
	}
	id := e.verifiedDomain("go.example.com", `,"root_redirect_url":"https://later.example/","not_found_url":"https://later.example/404"`)
	if r := e.do("PATCH", "/v1/domains/"+id, e.writeKey, `{"not_found_url":"https://evil.example/x"}`, 422); r.path("errors", 0, "field") != "not_found_url" {
		t.Fatalf("PATCH with a blocked not_found_url: %s", r.raw)
	}
	if r := e.onHost("go.example.com", "GET", "/", "", ""); r.status != http.StatusFound || r.header.Get("Location") != "https://later.example/" {
		t.Fatalf("root before the entry: %d %v", r.status, r.header)
	}
	if r := e.onHost("go.example.com", "GET", "/nope", "", ""); r.status != http.StatusFound || r.header.Get("Location") != "https://later.example/404" {
		t.Fatalf("unknown code before the entry: %d %v", r.status, r.header)
	}
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"later.example"}`, 201)
	if r := e.onHost("go.example.com", "GET", "/", "", "", "Accept", "text/html"); r.status != http.StatusOK || r.header.Get("Location") != "" {
		t.Fatalf("root after the entry: %d %v", r.status, r.header)
	}
	if r := e.onHost("go.example.com", "GET", "/nope", "", "", "Accept", "text/html"); r.status != http.StatusNotFound || r.header.Get("Location") != "" {
		t.Fatalf("unknown code after the entry: %d %v", r.status, r.header)
	}
}

// TestBlocklistHostSpellings: a host on the blocklist is blocked however
// the destination spells it, as a browser connects to it: its name
// percent-escaped (b%C3%BCcher.example, which browsers decode, in NFC or
// not, and convert to A-labels; it was saved as written and served) and an
// IPv4 address in IPv6 form. Refused when saved, in every field, and a
// link saved before the entry answers 410 after it.
func TestBlocklistHostSpellings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spellings := []string{
		"https://b%C3%BCcher.example/x",
		"https://B%C3%9Ccher.example/x",
		"https://bu%CC%88cher.example/x",
		"https://www.b%c3%bccher.example:8443/x",
		"http://[::ffff:192.0.2.7]/x",
		"http://[::FFFF:c000:207]:8080/x",
	}
	for i, s := range spellings {
		l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"`+s+`","alias":"hs`+string(rune('a'+i))+`"}`, 201)
		if d := l.str("destination_url"); strings.Contains(d, "%") {
			t.Errorf("%s saved as %s, with its host escaped", s, d)
		}
	}
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"bücher.example"}`, 201)
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"192.0.2.7"}`, 201)
	for i, s := range spellings {
		if r := e.request(newRequest("GET", "/hs"+string(rune('a'+i)), "", "")); r.status != 410 {
			t.Errorf("served %s: %d %v", s, r.status, r.header)
		}
		ok := `"destination_url":"https://example.com/"`
		for body, field := range map[string]string{
			`"destination_url":"` + s + `"`:                              "destination_url",
			ok + `,"rules":[{"if":{"country":"DE"},"then":"` + s + `"}]`: "rules[0].then",
			ok + `,"variants":[{"destination_url":"https://example.com/a","weight":50},{"destination_url":"` + s + `","weight":50}]`: "variants[1].destination_url",
			ok + `,"expired_url":"` + s + `"`: "expired_url",
		} {
			if r := e.do("POST", "/v1/links", e.writeKey, `{`+body+`}`, 422); r.path("errors", 0, "field") != field {
				t.Errorf("saved %s as %s: %s", s, field, r.raw)
			}
		}
	}
	// Other hosts stay allowed.
	for _, s := range []string{"https://b%C3%A4cher.example/", "http://[::ffff:192.0.2.8]/", "http://[2001:db8::c000:207]/"} {
		e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"`+s+`"}`, 201)
	}
}
