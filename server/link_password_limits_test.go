package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestLinkMaxClicksPassword: a protected link with max_clicks. The form
// is no click; of 64 concurrent right passwords exactly max_clicks
// redirect and the rest answer 410; an unlock cookie and X-Link-Password
// take a click each like a plain click, a wrong header none, HEAD none;
// a used-up link shows the 410 page, not the form, or goes to expired_url.
func TestLinkMaxClicksPassword(t *testing.T) {
	// The 64 password checks queue at the costly-work gate: on a busy
	// machine they may wait longer than the usual 2 s, and a check turned
	// away (503) is not what this test counts.
	e := newEnv(t, func(c *Config) { c.CostlyWait = time.Minute })
	const pw = "open-sesame-42"
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/vault","alias":"vault","password":"`+pw+`","max_clicks":10}`, 201)
	id := l.str("id")
	if l.path("max_clicks") != float64(10) || l.path("has_password") != true {
		t.Fatalf("created: %s", l.raw)
	}
	// The form, however often it is shown, takes no click.
	for i := 0; i < 5; i++ {
		if r := e.request(visit("/vault", "198.51.100.9", uaFirefoxLinux)); r.status != 200 {
			t.Fatalf("form: %d", r.status)
		}
	}
	// 64 right passwords at once, from as many addresses (the guesses are
	// limited per address).
	var mu sync.Mutex
	statuses := map[int]int{}
	var cookie *http.Cookie
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := httptest.NewRecorder()
			e.srv.ServeHTTP(w, passwordPost("/vault", fmt.Sprintf("10.0.1.%d", i), pw))
			mu.Lock()
			defer mu.Unlock()
			statuses[w.Code]++
			if w.Code == http.StatusSeeOther {
				if got := w.Header().Get("Location"); got != "https://example.com/vault" {
					t.Errorf("Location %q", got)
				}
				for _, c := range w.Result().Cookies() {
					if c.Name == unlockCookie {
						cookie = c
					}
				}
			}
		}()
	}
	wg.Wait()
	if statuses[http.StatusSeeOther] != 10 || statuses[http.StatusGone] != 54 {
		t.Fatalf("statuses %v, want 10 × 303 and 54 × 410", statuses)
	}
	if cookie == nil {
		t.Fatal("no unlock cookie")
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != float64(10) {
		t.Fatalf("clicks %v, want 10", got)
	}
	// Used up: the 410 page, not the form.
	if r := e.request(visit("/vault", "198.51.100.9", uaFirefoxLinux)); r.status != http.StatusGone {
		t.Fatalf("a used-up protected link: %d", r.status)
	}

	// Three more clicks: by cookie, by header; HEAD and a wrong header take none.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"max_clicks":13}`, 200)
	withCookie := func(method string) int {
		req := visit("/vault", "198.51.100.10", uaFirefoxLinux)
		req.Method = method
		req.AddCookie(cookie)
		return e.request(req).status
	}
	if got := withCookie("HEAD"); got != 302 {
		t.Fatalf("HEAD with the cookie: %d", got)
	}
	if got := withCookie("GET"); got != 302 {
		t.Fatalf("GET with the cookie: %d", got)
	}
	if r := e.request(visit("/vault", "198.51.100.11", uaFirefoxLinux, linkPasswordHeader, "wrong guess")); r.status != 401 {
		t.Fatalf("a wrong header: %d", r.status)
	}
	if r := e.request(visit("/vault", "198.51.100.11", uaFirefoxLinux, linkPasswordHeader, pw)); r.status != 302 {
		t.Fatalf("the right header: %d", r.status)
	}
	if got := withCookie("GET"); got != 302 {
		t.Fatalf("GET with the cookie, the last click: %d", got)
	}
	if got := withCookie("GET"); got != http.StatusGone {
		t.Fatalf("GET with the cookie past the limit: %d", got)
	}
	if r := e.request(visit("/vault", "198.51.100.11", uaFirefoxLinux, linkPasswordHeader, pw)); r.status != http.StatusGone {
		t.Fatalf("the right header past the limit: %d", r.status)
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != float64(13) {
		t.Fatalf("clicks %v, want 13", got)
	}

	// With expired_url, a used-up link's right password goes there.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"expired_url":"https://example.com/sold-out"}`, 200)
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, passwordPost("/vault", "10.0.2.1", pw))
	if w.Code != http.StatusFound || w.Header().Get("Location") != "https://example.com/sold-out" {
		t.Fatalf("used up with expired_url: %d %q", w.Code, w.Header().Get("Location"))
	}
}

// TestClickCountersEvicted: the counter of a limited link not clicked for
// clickCounterIdle goes at the next sweep, and the new counter, seeded
// from the stored total, keeps the limit exact; a counter ahead of its
// stored total (a click reserved, not yet recorded) stays until it is
// stale; concurrent clicks across sweeps stay exact.
func TestClickCountersEvicted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"lim-a","max_clicks":5}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","alias":"lim-b","max_clicks":1000}`, 201)
	for range 3 {
		e.do("GET", "/lim-a", "", "", 302)
	}
	e.do("GET", "/lim-b", "", "", 302)
	if n := e.srv.clickLimits.size(); n != e.counters(2) {
		t.Fatalf("%d counters, want 2", n)
	}
	// Idle long enough: the next click (of another link) sweeps a's away.
	e.clock.Add(clickCounterIdle)
	e.do("GET", "/lim-b", "", "", 302)
	if n := e.srv.clickLimits.size(); n != e.counters(1) {
		t.Fatalf("%d counters after the sweep, want 1", n)
	}
	// a's new counter starts from the stored 3: two more, then 410.
	e.do("GET", "/lim-a", "", "", 302)
	e.do("GET", "/lim-a", "", "", 302)
	if r := e.request(newRequest("GET", "/lim-a", "", "")); r.status != 410 {
		t.Fatalf("sixth click after eviction: %d", r.status)
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+a.str("id"), e.readKey, "", 200).path("clicks"); got != float64(5) {
		t.Fatalf("clicks %v, want 5", got)
	}

	// A click reserved and not yet recorded keeps its counter through a sweep.
	c := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/c","alias":"lim-c","max_clicks":2}`, 201)
	lc, err := e.srv.links.FindLinkByID(t.Context(), e.ws, c.str("id"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := e.srv.reserveClick(t.Context(), lc, e.srv.now(), true); !ok || err != nil {
		t.Fatalf("reserve: %v %v", ok, err)
	}
	e.clock.Add(clickCounterIdle)
	e.do("GET", "/lim-b", "", "", 302) // sweeps
	e.do("GET", "/lim-c", "", "", 302) // the second of two
	if r := e.request(newRequest("GET", "/lim-c", "", "")); r.status != 410 {
		t.Fatalf("a counter ahead of its stored total was evicted: %d", r.status)
	}

	// 64 concurrent clicks while the clock moves past the idle time and
	// sweeps run: exactly the limit is redirected.
	d := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/d","alias":"lim-d","max_clicks":20}`, 201)
	statuses := e.concurrentGETs("/lim-d", 64, func(i int) {
		if i%8 == 0 {
			e.clock.Add(clickCounterIdle)
		}
	}, nil)
	if statuses[302] != 20 || statuses[410] != 44 {
		t.Fatalf("statuses %v, want 20 × 302 and 44 × 410", statuses)
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+d.str("id"), e.readKey, "", 200).path("clicks"); got != float64(20) {
		t.Fatalf("clicks %v, want 20", got)
	}
}

// TestLinkPasswordExpired: the password form's POST of an expired
// protected link answers as its GET does (410), the right password too.
func TestLinkPasswordExpired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/x","alias":"gone-pw","password":"open-sesame-1",
		"expires_at":"`+e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`"}`, 201)
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, passwordPost("/gone-pw", "10.0.3.1", "open-sesame-1"))
	if w.Code != http.StatusSeeOther {
		t.Fatalf("before expiry: %d", w.Code)
	}
	e.clock.Add(time.Hour)
	w = httptest.NewRecorder()
	e.srv.ServeHTTP(w, passwordPost("/gone-pw", "10.0.3.1", "open-sesame-1"))
	if w.Code != http.StatusGone {
		t.Fatalf("after expiry, the right password: %d", w.Code)
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+l.str("id"), e.readKey, "", 200).path("clicks"); got != float64(1) {
		t.Fatalf("clicks %v, want 1", got)
	}
}
