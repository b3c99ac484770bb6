package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// hiddenDests are the destinations of the protected link of
// TestLinkPasswordHidesDestinations: every one has "secret-" in its host,
// which no answer given without the password may carry.
const hiddenDests = `"destination_url":"https://secret-main.example/vault?id=7",
	"title":"secret-title",
	"rules":[{"if":{"query":{"name":"src","value":"qr"}},"then":"https://secret-rule.example/qr"}],
	"variants":[{"destination_url":"https://secret-a.example/","weight":50},{"destination_url":"https://secret-b.example/","weight":50}],
	"expired_url":"https://secret-expired.example/sorry"`

// wantHidden fails when an answer carries anything of the protected
// link's destinations: in its body or any header.
func wantHidden(t *testing.T, what string, status int, header http.Header, body string) {
	t.Helper()
	if strings.Contains(body, "secret-") {
		t.Errorf("%s (%d): the body shows a destination: %s", what, status, body)
	}
	for k, vs := range header {
		for _, v := range vs {
			if strings.Contains(v, "secret-") {
				t.Errorf("%s (%d): header %s shows a destination: %q", what, status, k, v)
			}
		}
	}
}

// TestLinkPasswordHidesDestinations: nothing a visitor without the
// password gets shows where a protected link goes (its destination, a
// rule's, a variant's, its expired_url, its title): not the preview
// /{code}+ (GET and HEAD), the password form (GET, HEAD, POST of a wrong
// password), a wrong or rate-limited X-Link-Password, the social card a
// preview bot gets, the 410 pages; an expired link with expired_url asks
// for the password before it redirects there.
func TestLinkPasswordHidesDestinations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const pw = "open-sesame-99"
	exp := e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	l := e.do("POST", "/v1/links", e.writeKey, `{`+hiddenDests+`,"alias":"vault","password":"`+pw+`",
		"og":{"title":"A card","description":"shared"},"expires_at":"`+exp+`"}`, 201)
	id := l.str("id")

	type probe struct {
		what string
		req  *http.Request
		want int
	}
	get := func(path string, headers ...string) *http.Request {
		return visit(path, "198.51.100.20", uaFirefoxLinux, headers...)
	}
	head := func(path string, headers ...string) *http.Request {
		r := get(path, headers...)
		r.Method = http.MethodHead
		return r
	}
	check := func(probes []probe) {
		t.Helper()
		for _, p := range probes {
			w := httptest.NewRecorder()
			e.srv.ServeHTTP(w, p.req)
			if w.Code != p.want {
				t.Errorf("%s: status %d, want %d: %s", p.what, w.Code, p.want, w.Body.String())
			}
			wantHidden(t, p.what, w.Code, w.Header(), w.Body.String())
		}
	}
	live := []probe{
		{"preview", get("/vault+"), 200},
		{"preview, HEAD", head("/vault+"), 200},
		{"preview asking for JSON", get("/vault+", "Accept", "application/json"), 200},
		{"form", get("/vault"), 200},
		{"form, HEAD", head("/vault"), 200},
		{"form for the rule's visitors", get("/vault?src=qr"), 200},
		{"wrong header", get("/vault", linkPasswordHeader, "wrong guess"), 401},
		{"wrong header, HEAD", head("/vault", linkPasswordHeader, "wrong guess"), 401},
		{"wrong header asking for HTML", get("/vault", linkPasswordHeader, "wrong guess", "Accept", "text/html"), 401},
		{"wrong password posted", passwordPost("/vault", "198.51.100.21", "wrong guess"), 401},
		{"social card", visit("/vault", "198.51.100.22", slackUA), 200},
	}
	check(live)
	// The preview says the link is protected and leads to the form.
	body := string(e.do("GET", "/vault+", "", "", 200).raw)
	if !strings.Contains(body, `id="protected"`) || !strings.Contains(body, `href="http://lb.test/vault"`) || strings.Contains(body, `id="destination"`) {
		t.Fatalf("protected preview: %s", body)
	}
	// The password still opens the way.
	if r := e.request(get("/vault", linkPasswordHeader, pw)); r.status != 302 || !strings.Contains(r.header.Get("Location"), "secret-") {
		t.Fatalf("the right header: %d %q", r.status, r.header.Get("Location"))
	}
	// Eleven wrong guesses from one address: the 429s show nothing either.
	for i := range 11 {
		check([]probe{{fmt.Sprintf("guess %d", i), passwordPost("/vault", "198.51.100.23", "wrong guess"), map[bool]int{true: 429, false: 401}[i >= 10]}})
	}

	// Expired, with expired_url: the password first, as on a live link.
	e.clock.Add(time.Hour)
	check([]probe{
		{"expired: preview", get("/vault+"), 200},
		{"expired: form", get("/vault"), 200},
		{"expired: form, HEAD", head("/vault"), 200},
		{"expired: form to a bot", visit("/vault", "198.51.100.22", slackUA), 200},
		{"expired: wrong header", get("/vault", linkPasswordHeader, "wrong guess"), 401},
		{"expired: wrong password posted", passwordPost("/vault", "198.51.100.24", "wrong guess"), 401},
	})
	if body := string(e.do("GET", "/vault+", "", "", 200).raw); !strings.Contains(body, "has expired") || strings.Contains(body, `id="continue"`) {
		t.Fatalf("expired protected preview: %s", body)
	}
	for what, r := range map[string]*http.Request{
		"the right header":          get("/vault", linkPasswordHeader, pw),
		"the right header, HEAD":    head("/vault", linkPasswordHeader, pw),
		"the right password posted": passwordPost("/vault", "198.51.100.25", pw),
	} {
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, r)
		if w.Code != http.StatusFound || w.Header().Get("Location") != "https://secret-expired.example/sorry" {
			t.Errorf("expired, %s: %d %q", what, w.Code, w.Header().Get("Location"))
		}
	}
	// An unlock cookie from before the expiry goes there too.
	e.clock.Add(-time.Hour)
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, passwordPost("/vault", "198.51.100.26", pw))
	var cookie *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == unlockCookie {
			cookie = c
		}
	}
	if w.Code != http.StatusSeeOther || cookie == nil {
		t.Fatalf("unlock: %d, cookie %v", w.Code, cookie)
	}
	e.clock.Add(time.Hour)
	req := get("/vault")
	req.AddCookie(cookie)
	if r := e.request(req); r.status != http.StatusFound || r.header.Get("Location") != "https://secret-expired.example/sorry" {
		t.Fatalf("expired, with the cookie: %d %q", r.status, r.header.Get("Location"))
	}

	// Without expired_url an expired link shows its 410 to everyone:
	// nothing there to hide.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"expired_url":null}`, 200)
	check([]probe{
		{"expired, no expired_url", get("/vault", "Accept", "text/html"), 410},
		{"expired, no expired_url, JSON", get("/vault", "Accept", "application/json"), 410},
		{"expired, no expired_url, POST", passwordPost("/vault", "198.51.100.27", "wrong guess"), 410},
	})
}

// TestLinkPasswordHidesLoops: a protected link whose destination came to
// point back into this service (its host verified as a custom domain
// since) shows the password form, not the loop (which names the host);
// the right password gets the loop answer, and takes no click.
func TestLinkPasswordHidesLoops(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const pw = "open-sesame-98"
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"http://secret-loop.example/b","alias":"loopy","password":"`+pw+`","max_clicks":5}`, 201)
	dom := e.do("POST", "/v1/domains", e.adminToken, `{"hostname":"secret-loop.example"}`, 201).str("id")
	e.do("PATCH", "/v1/domains/"+dom, e.adminToken, `{"verified":true}`, 200)
	r := e.request(visit("/loopy", "198.51.100.30", uaFirefoxLinux))
	if r.status != 200 {
		t.Fatalf("form: %d %s", r.status, r.raw)
	}
	wantHidden(t, "form of a looping link", r.status, r.header, string(r.raw))
	r = e.request(visit("/loopy", "198.51.100.30", uaFirefoxLinux, linkPasswordHeader, "wrong guess"))
	if r.status != 401 {
		t.Fatalf("wrong header: %d %s", r.status, r.raw)
	}
	wantHidden(t, "wrong header of a looping link", r.status, r.header, string(r.raw))
	if r := e.request(visit("/loopy", "198.51.100.30", uaFirefoxLinux, linkPasswordHeader, pw)); r.status != http.StatusLoopDetected {
		t.Fatalf("right header: %d %s", r.status, r.raw)
	}
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, passwordPost("/loopy", "198.51.100.31", pw))
	if w.Code != http.StatusLoopDetected {
		t.Fatalf("right password posted: %d %s", w.Code, w.Body.String())
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+l.str("id"), e.readKey, "", 200).path("clicks"); got != float64(0) {
		t.Fatalf("clicks %v, want 0", got)
	}
	// Its max_clicks kept every click: the counter took none.
	if used := e.clicksReserved(l.str("id")); used != 0 {
		t.Fatalf("%d clicks reserved by loop answers", used)
	}
}

// TestLinkPasswordGuessesPerIPv6Block: the password guesses at a link are
// limited per client as logins count them: the addresses of one IPv6 /64
// share one limit, so 30 guesses from 30 addresses of a /64 get 10 checks;
// another /64 and an IPv4 address have their own.
func TestLinkPasswordGuessesPerIPv6Block(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/v6","alias":"v6","password":"open-sesame-97"}`, 201)
	statuses := map[int]int{}
	for i := 1; i <= 30; i++ {
		addr := fmt.Sprintf("[2001:db8:1:2::%x]", i)
		if i%2 == 0 {
			statuses[e.request(visit("/v6", addr, uaFirefoxLinux, linkPasswordHeader, "wrong guess")).status]++
		} else {
			w := httptest.NewRecorder()
			e.srv.ServeHTTP(w, passwordPost("/v6", addr, "wrong guess"))
			statuses[w.Code]++
		}
	}
	if statuses[401] != linkPasswordPerMinute || statuses[429] != 30-linkPasswordPerMinute {
		t.Fatalf("statuses %v, want %d × 401 and %d × 429", statuses, linkPasswordPerMinute, 30-linkPasswordPerMinute)
	}
	for _, addr := range []string{"[2001:db8:1:3::1]", "198.51.100.40", "[::ffff:198.51.100.41]"} {
		if r := e.request(visit("/v6", addr, uaFirefoxLinux, linkPasswordHeader, "wrong guess")); r.status != 401 {
			t.Fatalf("%s: %d, want its own limit (401)", addr, r.status)
		}
	}
	// The block is the one login counts.
	req := visit("/v6", "[2001:db8:1:2:ffff:ffff:ffff:ffff]", uaFirefoxLinux)
	if got := e.srv.clientIP(req); got != "2001:db8:1:2::/64" {
		t.Fatalf("clientIP %q", got)
	}
}
