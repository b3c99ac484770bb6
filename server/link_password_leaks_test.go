package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// v6 returns a request from IPv6 address addr (RemoteAddr needs brackets).
func v6(req *http.Request, addr string) *http.Request {
	req.RemoteAddr = "[" + addr + "]:4444"
	return req
}

// Guesses at a link's password are limited per IPv6 /64, as logins are:
// walking through the addresses of one /64 gets no fresh guesses, while
// another /64 has its own.
func TestLinkPasswordGuessesPerIPv6Block(t *testing.T) {
	e := newEnv(t)
	const pw = "open-sesame-42"
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/vault","alias":"vault","password":"`+pw+`"}`, 201)
	for i := range linkPasswordPerMinute {
		r := e.request(v6(passwordPost("/vault", "", fmt.Sprintf("guess-%d", i)), fmt.Sprintf("2001:db8:1:2::%x", i+1)))
		if r.status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, r.status)
		}
	}
	for i, req := range []*http.Request{
		v6(passwordPost("/vault", "", pw), "2001:db8:1:2:ffff::1"),
		v6(visit("/vault", "", "curl/8.4.0", "X-Link-Password", pw), "2001:db8:1:2:dead:beef:0:1"),
	} {
		if r := e.request(req); r.status != http.StatusTooManyRequests {
			t.Fatalf("guess %d from another address of the same /64: %d, want 429", linkPasswordPerMinute+i, r.status)
		}
	}
	if r := e.request(v6(passwordPost("/vault", "", pw), "2001:db8:1:3::1")); r.status != http.StatusSeeOther {
		t.Fatalf("from another /64: %d, want 303", r.status)
	}
}

// The preview page of a protected link shows neither its destination,
// its host nor its title (GET and HEAD alike, on the primary host); nor
// does any other answer a visitor without the password gets: the form,
// a wrong X-Link-Password, too many guesses, the 410 pages of an expired
// or used-up link. Its social card shows only what the owner wrote for it.
func TestProtectedLinkLeaksNoDestination(t *testing.T) {
	e := newEnv(t)
	const pw = "open-sesame-42"
	const secret = "hidden-host.example"
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://`+secret+`/private/plans","alias":"vault","title":"Private plans","password":"`+pw+`","max_clicks":1,
		"variants":[{"destination_url":"https://`+secret+`/a","weight":50},{"destination_url":"https://`+secret+`/b","weight":50}],
		"og":{"title":"A shared card","description":"What the owner wrote"}}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://`+secret+`/open","alias":"open","title":"Open plans"}`, 201)

	leaks := func(name string, r *response) {
		t.Helper()
		body := string(r.raw) + fmt.Sprint(r.header)
		for _, s := range []string{secret, "Private plans", "private/plans"} {
			if strings.Contains(body, s) {
				t.Errorf("%s (%d) shows %q: %s %v", name, r.status, s, r.raw, r.header)
			}
		}
	}
	preview := e.request(visit("/vault+", "198.51.100.7", uaFirefoxLinux))
	if preview.status != http.StatusOK || !strings.Contains(string(preview.raw), "password") || !strings.Contains(string(preview.raw), `href="http://lb.test/vault"`) {
		t.Fatalf("preview of a protected link: %d %s", preview.status, preview.raw)
	}
	leaks("preview", preview)
	head := visit("/vault+", "198.51.100.7", uaFirefoxLinux)
	head.Method = http.MethodHead
	leaks("preview HEAD", e.request(head))
	leaks("form", e.request(visit("/vault", "198.51.100.7", uaFirefoxLinux)))
	leaks("form HEAD", e.request(head))
	leaks("social card", e.request(visit("/vault", "198.51.100.7", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)")))
	leaks("wrong header", e.request(visit("/vault", "198.51.100.8", "curl/8.4.0", "X-Link-Password", "nope", "Accept", "application/json")))
	leaks("wrong form", e.request(passwordPost("/vault", "198.51.100.8", "nope")))
	for i := range linkPasswordPerMinute {
		e.request(passwordPost("/vault", "203.0.113.9", fmt.Sprint("guess-", i)))
	}
	leaks("too many guesses", e.request(passwordPost("/vault", "203.0.113.9", "guess")))
	leaks("too many guesses, header", e.request(visit("/vault", "203.0.113.9", "curl/8.4.0", "X-Link-Password", "guess")))
	// The plain link's preview still shows where it goes.
	if r := e.request(visit("/open+", "198.51.100.7", uaFirefoxLinux)); !strings.Contains(string(r.raw), secret) || !strings.Contains(string(r.raw), "Open plans") {
		t.Fatalf("the preview of a link without a password lost its destination: %s", r.raw)
	}

	// Used up by the one visitor with the password: the 410 page, the
	// preview and the problem answer say so without the destination.
	if r := e.request(passwordPost("/vault", "198.51.100.20", pw)); r.status != http.StatusSeeOther {
		t.Fatalf("the right password: %d", r.status)
	}
	leaks("used up", e.request(visit("/vault", "198.51.100.21", uaFirefoxLinux)))
	leaks("used up, JSON", e.request(visit("/vault", "198.51.100.21", "curl/8.4.0", "Accept", "application/json")))
	usedUp := e.request(visit("/vault+", "198.51.100.21", uaFirefoxLinux))
	if !strings.Contains(string(usedUp.raw), "click limit") {
		t.Fatalf("the preview of a used-up protected link: %s", usedUp.raw)
	}
	leaks("used-up preview", usedUp)
	e.do("PATCH", "/v1/links/"+l.str("id"), e.writeKey, `{"max_clicks":null,"expires_at":"2020-01-01T00:00:00Z"}`, 200)
	leaks("expired", e.request(visit("/vault", "198.51.100.21", uaFirefoxLinux)))
	leaks("expired preview", e.request(visit("/vault+", "198.51.100.21", uaFirefoxLinux)))
}
