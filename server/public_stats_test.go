package server

import (
	"bytes"
	"strings"
	"testing"
)

// TestPublicLinkStats: a link with public_stats shows its statistics at
// /{code}/stats and at the public JSON path, with no credential and no
// destination; off, archived and unknown answer the same 404; a
// password-protected link's page tells nothing of where it leads and lets
// no one past its password; a custom domain serves its links' pages.
func TestPublicLinkStats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pub := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://secret-destination.test/launch","alias":"launch","title":"Launch","public_stats":true}`, 201)
	if pub.path("public_stats") != true {
		t.Fatalf("created: %s", pub.raw)
	}
	off := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/off","alias":"private"}`, 201)
	if off.path("public_stats") != false {
		t.Fatalf("default: %s", off.raw)
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://hidden-behind-password.test/p","alias":"locked","password":"open-sesame","public_stats":true}`, 201)

	for range 3 {
		req := newRequest("GET", "/launch", "", "")
		req.Header.Set("User-Agent", firefoxUA)
		req.Header.Set("Referer", "https://news.example.org/post")
		if r := e.request(req); r.status != 302 {
			t.Fatalf("redirect: %d", r.status)
		}
	}
	e.flush()

	// The JSON: totals and top lists, the link's short URL, no destination.
	r := e.do("GET", "/v1/public/links/lb.test/launch/stats", "", "", 200)
	if r.path("totals", "clicks") != 3.0 || r.path("link", "short_url") != "http://lb.test/launch" || r.path("link", "title") != "Launch" {
		t.Fatalf("public stats: %s", r.raw)
	}
	if r.header.Get("Cache-Control") != "public, max-age=60" {
		t.Fatalf("Cache-Control: %q", r.header.Get("Cache-Control"))
	}
	if !bytes.Contains(r.raw, []byte("news.example.org")) || bytes.Contains(r.raw, []byte("secret-destination")) {
		t.Fatalf("referrers shown, destination hidden: %s", r.raw)
	}
	// The page.
	page := e.get("", "GET", "/launch/stats")
	if page.status != 200 || !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") ||
		!bytes.Contains(page.raw, []byte(`id="stats-clicks">3<`)) || !bytes.Contains(page.raw, []byte("news.example.org")) ||
		bytes.Contains(page.raw, []byte("secret-destination")) {
		t.Fatalf("page: %d %s", page.status, page.raw)
	}
	if e.get("", "HEAD", "/launch/stats").status != 200 {
		t.Fatal("HEAD of the page")
	}
	e.flush()
	if got := e.do("GET", "/v1/public/links/lb.test/launch/stats", "", "", 200).path("totals", "clicks"); got != 3.0 {
		t.Fatalf("reading the statistics counted a click: %v", got)
	}

	// Off, unknown and archived answer alike, on the page and the JSON.
	unknownPage := e.get("", "GET", "/nosuch/stats")
	unknownJSON := e.do("GET", "/v1/public/links/lb.test/nosuch/stats", "", "", 404)
	same := func(name, alias string) {
		t.Helper()
		p := e.get("", "GET", "/"+alias+"/stats")
		if p.status != 404 || p.header.Get("Content-Type") != unknownPage.header.Get("Content-Type") ||
			!bytes.Equal(bytes.ReplaceAll(p.raw, []byte(alias), []byte("nosuch")), unknownPage.raw) {
			t.Fatalf("%s page: %d %s\nunknown: %s", name, p.status, p.raw, unknownPage.raw)
		}
		j := e.do("GET", "/v1/public/links/lb.test/"+alias+"/stats", "", "", 404)
		if !bytes.Equal(bytes.ReplaceAll(j.raw, []byte(alias), []byte("nosuch")), unknownJSON.raw) {
			t.Fatalf("%s JSON: %s\nunknown: %s", name, j.raw, unknownJSON.raw)
		}
	}
	same("off", "private")
	e.do("PATCH", "/v1/links/"+pub.str("id"), e.writeKey, `{"archived":true}`, 200)
	same("archived", "launch")
	e.do("PATCH", "/v1/links/"+pub.str("id"), e.writeKey, `{"archived":false,"public_stats":false}`, 200)
	same("switched off", "launch")
	if got := e.do("PATCH", "/v1/links/"+off.str("id"), e.writeKey, `{"public_stats":true}`, 200).path("public_stats"); got != true {
		t.Fatalf("switched on: %v", got)
	}
	e.do("GET", "/v1/public/links/lb.test/private/stats", "", "", 200)

	// A password-protected link: statistics, but no destination, no way past.
	lp := e.get("", "GET", "/locked/stats")
	lj := e.do("GET", "/v1/public/links/lb.test/locked/stats", "", "", 200)
	for _, raw := range [][]byte{lp.raw, lj.raw} {
		if bytes.Contains(raw, []byte("hidden-behind-password")) || bytes.Contains(raw, []byte("password")) && bytes.Contains(raw, []byte("<form")) {
			t.Fatalf("a protected link's statistics leak: %s", raw)
		}
	}
	if lp.status != 200 || lp.header.Get("Location") != "" {
		t.Fatalf("protected page: %d %q", lp.status, lp.header.Get("Location"))
	}

	// A custom domain serves its links' pages; its links are not on the primary host.
	e.verifiedDomain("go.example.com", "")
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/d","alias":"dd","domain":"go.example.com","public_stats":true}`, 201)
	if p := e.get("go.example.com", "GET", "/dd/stats"); p.status != 200 || !bytes.Contains(p.raw, []byte("go.example.com/dd")) {
		t.Fatalf("custom domain page: %d %s", p.status, p.raw)
	}
	e.do("GET", "/v1/public/links/go.example.com/dd/stats", "", "", 200)
	if p := e.get("", "GET", "/dd/stats"); p.status != 404 {
		t.Fatalf("custom domain's link on the primary host: %d", p.status)
	}
	if p := e.get("go.example.com", "GET", "/launch/stats"); p.status != 404 {
		t.Fatalf("primary link on a custom domain: %d", p.status)
	}
}

// TestPublicLinkStatsLimited: one address reads at most
// publicStatsPerMinute statistics a minute; a minute later it reads again.
func TestPublicLinkStatsLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/a","alias":"a","public_stats":true}`, 201)
	for range publicStatsPerMinute {
		e.do("GET", "/v1/public/links/lb.test/a/stats", "", "", 200)
	}
	r := e.do("GET", "/v1/public/links/lb.test/a/stats", "", "", 429)
	if r.header.Get("Retry-After") == "" {
		t.Fatalf("no Retry-After: %s", r.raw)
	}
	if p := e.get("", "GET", "/a/stats"); p.status != 429 {
		t.Fatalf("the page past the limit: %d", p.status)
	}
}

// TestPublicLinkStatsBlockedElsewhere: a link the blocklist turns off
// through a destination other than its destination_url (a variant's, a
// rule's, an app's), which its redirect answers 410, has no public
// statistics either: they answer as an unknown code does.
func TestPublicLinkStatsBlockedElsewhere(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, l := range []string{
		`{"destination_url":"https://ok.test/","alias":"split","public_stats":true,"variants":[{"destination_url":"https://bad.test/v","weight":50},{"destination_url":"https://ok.test/b","weight":50}]}`,
		`{"destination_url":"https://ok.test/","alias":"ruled","public_stats":true,"rules":[{"if":{"device":"mobile"},"then":"https://bad.test/r"}]}`,
		`{"destination_url":"https://ok.test/","alias":"apps1","public_stats":true,"android_url":"https://bad.test/a"}`,
	} {
		e.do("POST", "/v1/links", e.writeKey, l, 201)
	}
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"bad.test"}`, 201)
	for _, alias := range []string{"split", "ruled", "apps1"} {
		if r := e.request(visit("/"+alias, "192.0.2.7", uaFirefoxLinux)); r.status != 410 {
			t.Fatalf("%s: redirect %d, want 410", alias, r.status)
		}
		if p := e.get("", "GET", "/"+alias+"/stats"); p.status != 404 {
			t.Errorf("%s: page %d, want 404", alias, p.status)
		}
		e.do("GET", "/v1/public/links/lb.test/"+alias+"/stats", "", "", 404)
	}
}
