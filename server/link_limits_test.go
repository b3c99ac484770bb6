package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// TestLinkExpiry: a link expires at the instant expires_at, then redirects
// to expired_url or answers 410; a PATCH with null clears the expiry.
func TestLinkExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	at := testStart.Add(time.Hour).Format(time.RFC3339)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"soon","expires_at":"`+at+`","title":"Soon gone"}`, 201)
	if got, want := l.path("expires_at"), at; got != want {
		t.Fatalf("expires_at %v, want %v", got, want)
	}
	if got, want := l.path("title"), "Soon gone"; got != want {
		t.Fatalf("title %v, want %v", got, want)
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","alias":"soon2","expires_at":"`+at+`","expired_url":"https://example.com/over"}`, 201)

	e.clock.Set(testStart.Add(time.Hour - time.Nanosecond))
	if r := e.request(newRequest("GET", "/soon", "", "")); r.status != 302 || r.header.Get("Location") != "https://example.com/a" {
		t.Fatalf("just before expiry: %d %q", r.status, r.header.Get("Location"))
	}
	e.clock.Set(testStart.Add(time.Hour))
	req := newRequest("GET", "/soon", "", "")
	req.Header.Set("Accept", "text/html")
	r := e.request(req)
	if r.status != 410 || r.header.Get("Location") != "" || !strings.Contains(string(r.raw), "has expired") {
		t.Fatalf("at the instant: %d %q %s", r.status, r.header.Get("Location"), r.raw)
	}
	if !strings.Contains(r.header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("410 page CSP %q", r.header.Get("Content-Security-Policy"))
	}
	req = newRequest("GET", "/soon", "", "")
	req.Header.Set("Accept", "application/json")
	wantProblem(t, e.request(req), 410, "gone")
	if r := e.request(newRequest("HEAD", "/soon", "", "")); r.status != 410 {
		t.Fatalf("HEAD expired: %d", r.status)
	}
	if r := e.request(newRequest("GET", "/soon2", "", "")); r.status != 302 || r.header.Get("Location") != "https://example.com/over" {
		t.Fatalf("expired_url: %d %q", r.status, r.header.Get("Location"))
	}
	// The clicks before the expiry only.
	e.flush()
	id := l.str("id")
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != float64(1) {
		t.Fatalf("clicks %v, want 1", got)
	}
	// null clears the expiry; the link redirects again.
	p := e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"expires_at":null}`, 200)
	if p.path("expires_at") != nil || p.path("title") != "Soon gone" {
		t.Fatalf("after clearing: %s", p.raw)
	}
	if r := e.request(newRequest("GET", "/soon", "", "")); r.status != 302 {
		t.Fatalf("after clearing: %d", r.status)
	}
	// A past expiry on PATCH ends the link at once.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"expires_at":"2020-01-01T00:00:00Z"}`, 200)
	if r := e.request(newRequest("GET", "/soon", "", "")); r.status != 410 {
		t.Fatalf("past expiry by PATCH: %d", r.status)
	}
}

// TestLinkMaxClicksConcurrent: of 64 concurrent clicks on a link with
// max_clicks 10, exactly 10 reach the destination; HEAD never counts.
func TestLinkMaxClicksConcurrent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"ten","max_clicks":10}`, 201)
	if got := l.path("max_clicks"); got != float64(10) {
		t.Fatalf("max_clicks %v", got)
	}
	// HEADs look at the limit (and seed its counter) but take no click:
	// all ten are left. (A click queued before the seed: SeededFromQueue.)
	for range 3 {
		if r := e.request(newRequest("HEAD", "/ten", "", "")); r.status != 302 {
			t.Fatalf("HEAD: %d", r.status)
		}
	}
	statuses := e.concurrentGETs("/ten", 64, nil, func(rec *httptest.ResponseRecorder) {
		if rec.Code == 302 && rec.Header().Get("Location") != "https://example.com/a" {
			t.Errorf("Location %q", rec.Header().Get("Location"))
		}
	})
	if statuses[302] != 10 || statuses[410] != 54 {
		t.Fatalf("statuses %v, want 10 redirects and 54 × 410", statuses)
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+l.str("id"), e.readKey, "", 200).path("clicks"); got != float64(10) {
		t.Fatalf("clicks %v, want 10", got)
	}
	// Raising the limit lets exactly the difference through.
	e.do("PATCH", "/v1/links/"+l.str("id"), e.writeKey, `{"max_clicks":11}`, 200)
	if r := e.request(newRequest("GET", "/ten", "", "")); r.status != 302 {
		t.Fatalf("after raising: %d", r.status)
	}
	if r := e.request(newRequest("GET", "/ten", "", "")); r.status != 410 {
		t.Fatalf("after raising, one more: %d", r.status)
	}
	// null clears the limit.
	e.do("PATCH", "/v1/links/"+l.str("id"), e.writeKey, `{"max_clicks":null}`, 200)
	if r := e.request(newRequest("GET", "/ten", "", "")); r.status != 302 {
		t.Fatalf("after clearing: %d", r.status)
	}
}

// concurrentGETs sends n GETs of path at once and counts the answers by
// status. before, when not nil, runs in each request's goroutine before
// it is sent (i counts from 0); each, when not nil, sees every answer, one
// at a time.
func (e *env) concurrentGETs(path string, n int, before func(i int), each func(*httptest.ResponseRecorder)) map[int]int {
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if before != nil {
				before(i)
			}
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, newRequest("GET", path, "", ""))
			mu.Lock()
			defer mu.Unlock()
			statuses[rec.Code]++
			if each != nil {
				each(rec)
			}
		}()
	}
	wg.Wait()
	return statuses
}

// TestLinkMaxClicksSeededFromQueue: clicks taken before a limit was set,
// still in the recorder's queue, count towards it.
func TestLinkMaxClicksSeededFromQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"seed"}`, 201)
	for range 3 {
		e.do("GET", "/seed", "", "", 302)
	}
	e.do("PATCH", "/v1/links/"+l.str("id"), e.writeKey, `{"max_clicks":4}`, 200)
	e.do("GET", "/seed", "", "", 302)
	if r := e.request(newRequest("GET", "/seed", "", "")); r.status != 410 {
		t.Fatalf("fifth click: %d", r.status)
	}
}

// TestLinkMaxClicksCountsBacklog: clicks waiting in the click backlog (a
// flood the writer has not caught up with) count against max_clicks.
func TestLinkMaxClicksCountsBacklog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"flood"}`, 201)
	clicks := make([]link.Click, 3)
	for i := range clicks {
		clicks[i] = link.Click{LinkID: l.str("id"), WorkspaceID: e.ws, Time: e.clock.Now(), Country: "DE"}
	}
	store := e.db.Clicks
	if n, _, err := store.SpillClicks(context.Background(), clicks, 0); n != 3 || err != nil {
		t.Fatalf("spill: %d, %v", n, err)
	}
	if got := e.do("GET", "/v1/links/"+l.str("id"), e.readKey, "", 200).path("clicks"); got != float64(0) {
		t.Fatalf("clicks before the drain: %v", got)
	}
	e.do("PATCH", "/v1/links/"+l.str("id"), e.writeKey, `{"max_clicks":4}`, 200)
	e.do("GET", "/flood", "", "", 302)
	if r := e.request(newRequest("GET", "/flood", "", "")); r.status != 410 {
		t.Fatalf("fifth click, three of them in the backlog: %d", r.status)
	}
	if err := e.recorder.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.do("GET", "/v1/links/"+l.str("id"), e.readKey, "", 200).path("clicks"); got != float64(4) {
		t.Fatalf("clicks after the drain: %v, want 4", got)
	}
}

// TestLinkArchived: archived links leave the default list and keep
// redirecting.
func TestLinkArchived(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"live1"}`, 201)
	a := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","alias":"old1","archived":true}`, 201)
	b := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/c","alias":"old2"}`, 201)
	e.do("PATCH", "/v1/links/"+b.str("id"), e.writeKey, `{"archived":true}`, 200)
	aliases := func(q string) string {
		r := e.do("GET", "/v1/links"+q, e.readKey, "", 200)
		var out []string
		for _, l := range r.path("data").([]any) {
			out = append(out, l.(map[string]any)["alias"].(string))
		}
		return fmt.Sprintf("%v total %v", out, r.path("meta", "total"))
	}
	for q, want := range map[string]string{
		"":                "[live1] total 1",
		"?archived=false": "[live1] total 1",
		"?archived=true":  "[old2 old1] total 2",
		"?archived=all":   "[old2 old1 live1] total 3",
	} {
		if got := aliases(q); got != want {
			t.Errorf("GET /v1/links%s: %s, want %s", q, got, want)
		}
	}
	wantProblem(t, e.do("GET", "/v1/links?archived=maybe", e.readKey, "", 400), 400, "invalid_request")
	e.do("GET", "/old1", "", "", 302)
	e.do("PATCH", "/v1/links/"+b.str("id"), e.writeKey, `{"archived":false}`, 200)
	e.do("DELETE", "/v1/links/"+a.str("id"), e.writeKey, "", 204)
	if got, want := aliases(""), "[old2 live1] total 2"; got != want {
		t.Errorf("after unarchiving and deleting: %s, want %s", got, want)
	}
	if got, want := aliases("?archived=true"), "[] total 0"; got != want {
		t.Errorf("archived after unarchiving and deleting: %s, want %s", got, want)
	}
}

// TestLinkLimitsBadInput: the refusals of the controls.
func TestLinkLimitsBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct{ body, field string }{
		{`{"destination_url":"https://example.com/","max_clicks":0}`, "max_clicks"},
		{`{"destination_url":"https://example.com/","max_clicks":-3}`, "max_clicks"},
		{`{"destination_url":"https://example.com/","expired_url":"http://lb.test/other"}`, "expired_url"},
		{`{"destination_url":"https://example.com/","expired_url":"http://s.test/x"}`, "expired_url"},
		{`{"destination_url":"https://example.com/","expired_url":"ftp://example.com/"}`, "expired_url"},
		{`{"destination_url":"https://example.com/","expires_at":"2026-03-10T11:59:59Z"}`, "expires_at"},
		{`{"destination_url":"https://example.com/","expires_at":"2026-03-10T12:00:00Z"}`, "expires_at"},
		{`{"destination_url":"https://example.com/","title":"` + strings.Repeat("x", 201) + `"}`, "title"},
	} {
		r := e.do("POST", "/v1/links", e.writeKey, tc.body, 422)
		wantProblem(t, r, 422, "validation_failed")
		if got := r.path("errors", 0, "field"); got != tc.field {
			t.Errorf("%s: field %v, want %s", tc.body, got, tc.field)
		}
		bulk := e.do("POST", "/v1/links/bulk", e.writeKey, `{"links":[`+tc.body+`]}`, 200)
		if got := bulk.path("data", 0, "error", "errors", 0, "field"); got != tc.field {
			t.Errorf("bulk %s: field %v, want %s", tc.body, got, tc.field)
		}
	}
	// A click limit and a password go together (TestLinkMaxClicksPassword).
	protected := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","password":"open sesame"}`, 201)
	if r := e.do("PATCH", "/v1/links/"+protected.str("id"), e.writeKey, `{"max_clicks":3}`, 200); r.path("max_clicks") != float64(3) || r.path("has_password") != true {
		t.Errorf("a click limit on a protected link: %s", r.raw)
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","max_clicks":5,"password":"open sesame"}`, 201)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/"}`, 201)
	for _, tc := range []struct{ body, field string }{
		{`{"max_clicks":0}`, "max_clicks"},
		{`{"expired_url":"http://lb.test/x"}`, "expired_url"},
	} {
		r := e.do("PATCH", "/v1/links/"+l.str("id"), e.writeKey, tc.body, 422)
		if got := r.path("errors", 0, "field"); got != tc.field {
			t.Errorf("PATCH %s: field %v, want %s", tc.body, got, tc.field)
		}
	}
	// Bulk items take the controls.
	bulk := e.do("POST", "/v1/links/bulk", e.writeKey, `{"links":[{"destination_url":"https://example.com/","max_clicks":5,"title":"Bulk","archived":true}]}`, 200)
	if bulk.path("data", 0, "link", "max_clicks") != float64(5) || bulk.path("data", 0, "link", "archived") != true {
		t.Fatalf("bulk item: %s", bulk.raw)
	}
}

// TestLinkPreview: /{code}+ shows the destination, the punycode host and
// the title, and is never a click.
func TestLinkPreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://bücher.example/shop","alias":"books","title":"Book <shop>"}`, 201)
	r := e.do("GET", "/books+", "", "", 200)
	body := string(r.raw)
	for _, want := range []string{"xn--bcher-kva.example", "bücher.example", "Book &lt;shop&gt;", `href="http://lb.test/books"`, "Continue"} {
		if !strings.Contains(body, want) {
			t.Errorf("preview lacks %q: %s", want, body)
		}
	}
	if strings.Contains(body, "<script") || !strings.Contains(r.header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("preview must be script-free with a strict CSP: %q", r.header.Get("Content-Security-Policy"))
	}
	e.do("HEAD", "/books+", "", "", 200)
	e.flush()
	if got := e.do("GET", "/v1/links/"+l.str("id"), e.readKey, "", 200).path("clicks"); got != float64(0) {
		t.Fatalf("the preview counted %v clicks", got)
	}
	req := newRequest("GET", "/nothing+", "", "")
	req.Header.Set("Accept", "text/html")
	if r := e.request(req); r.status != 404 {
		t.Fatalf("unknown preview: %d", r.status)
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"brief","expires_at":"2026-03-10T13:00:00Z"}`, 201)
	e.clock.Set(testStart.Add(2 * time.Hour))
	if body := string(e.do("GET", "/brief+", "", "", 200).raw); !strings.Contains(body, "has expired") || strings.Contains(body, `id="continue"`) {
		t.Fatalf("expired preview: %s", body)
	}
}

// TestBlocklist: the file refuses new links and turns existing ones off
// once polled, on the injected clock; the admin API adds and removes
// entries kept in bbolt.
func TestBlocklist(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "blocklist.txt")
	if err := os.WriteFile(path, []byte("# bad hosts\nevil.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.BlocklistPath = path })
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://www.evil.example/x"}`, 422)
	if got := r.path("errors", 0, "field"); got != "destination_url" {
		t.Fatalf("field %v", got)
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://notevil.example/x"}`, 201)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/promo/spring","alias":"promo"}`, 201)
	e.do("GET", "/promo", "", "", 302)

	// The file changes: within the poll interval the old list holds, after it the new one.
	if err := os.WriteFile(path, []byte("evil.example\nexample.com/promo/*\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(DefaultBlocklistPoll)
	req := newRequest("GET", "/promo", "", "")
	req.Header.Set("Accept", "text/html")
	if r := e.request(req); r.status != 410 || !strings.Contains(string(r.raw), "blocklist") {
		t.Fatalf("blocked link: %d %s", r.status, r.raw)
	}
	e.do("PATCH", "/v1/links/"+l.str("id"), e.writeKey, `{"destination_url":"https://example.com/promo/other"}`, 422)
	// A blocked link may still be archived: only a new destination is checked.
	e.do("PATCH", "/v1/links/"+l.str("id"), e.writeKey, `{"archived":true,"title":"Off"}`, 200)
	bulk := e.do("POST", "/v1/links/bulk", e.writeKey, `{"links":[{"destination_url":"https://example.com/promo/a"},{"destination_url":"https://example.com/ok"}]}`, 200)
	if bulk.path("data", 0, "error", "errors", 0, "field") != "destination_url" || bulk.path("data", 1, "link") == nil {
		t.Fatalf("bulk: %s", bulk.raw)
	}

	// The admin API.
	e.do("POST", "/v1/admin/blocklist", e.writeKey, `{"entry":"bad.example"}`, 403)
	added := e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"https://Bad.Example/"}`, 201)
	if got := added.path("entry"); got != "bad.example" {
		t.Fatalf("entry %v", got)
	}
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"*.phish.test"}`, 201)
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"*.phish.test"}`, 409)
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":""}`, 422)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://login.phish.test/"}`, 422)
	list := e.do("GET", "/v1/admin/blocklist", e.adminToken, "", 200)
	if n := len(list.path("data").([]any)); n != 4 {
		t.Fatalf("%d entries: %s", n, list.raw)
	}
	e.do("DELETE", "/v1/admin/blocklist?entry=evil.example", e.adminToken, "", 409)
	e.do("DELETE", "/v1/admin/blocklist?entry=nope.example", e.adminToken, "", 404)
	e.do("DELETE", "/v1/admin/blocklist?entry=*.phish.test", e.adminToken, "", 204)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://login.phish.test/"}`, 201)

	// Entries added through the API are kept in the data file.
	srv2, err := New(e.cfg, e.deps)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req = newRequest("GET", "/v1/admin/blocklist", e.adminToken, "")
	srv2.ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), `"bad.example"`) || strings.Contains(rec.Body.String(), "phish") {
		t.Fatalf("after a restart: %s", rec.Body.String())
	}
}

func TestGlobMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"example.com/promo/*", "example.com/promo/a/b", true},
		{"example.com/promo/*", "example.com/other", false},
		{"*.example.net/login*", "a.example.net/login?x=1", true},
		{"*.example.net/login*", "example.net/login", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
	} {
		if got := globMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}

// TestLinkMaxClicksPreviewBot: a link-preview bot fetching the social
// card of a limited link uses none of its clicks.
func TestLinkMaxClicksPreviewBot(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"card","max_clicks":1,"og":{"title":"A card"}}`, 201)
	get := func(ua string) int {
		req := newRequest("GET", "/card", "", "")
		req.Header.Set("User-Agent", ua)
		return e.request(req).status
	}
	for range 3 {
		if got := get(slackUA); got != 200 {
			t.Fatalf("the bot: %d, want the card (200)", got)
		}
	}
	// The counter is swept away (as after a restart) and seeded again from
	// the stored total: the bot's fetches are not in it.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","alias":"other","max_clicks":1000}`, 201)
	e.do("GET", "/other", "", "", 302)
	e.flush()
	e.clock.Add(clickCounterIdle)
	e.do("GET", "/other", "", "", 302) // sweeps
	if n := e.srv.clickLimits.size(); n != e.counters(1) {
		t.Fatalf("%d counters after the sweep, want 1 (the card's link's evicted)", n)
	}
	if got := get(chromeUA); got != 302 {
		t.Fatalf("the one click after the bot's fetches: %d, want 302", got)
	}
	if got := get(chromeUA); got != 410 {
		t.Fatalf("the click past the limit: %d, want 410", got)
	}
}

// TestLinkMaxClicksSweepWaitsForBacklog: while clicks wait in the click
// backlog, the sweep keeps the idle counters: whether a counter's clicks
// are stored would take a read of the whole backlog for each of them, on
// the redirect that sweeps. Once the backlog is drained they go.
func TestLinkMaxClicksSweepWaitsForBacklog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if e.counters(1) == 0 {
		// The clicks are counted in the database, from the first one on:
		// no counter to sweep, and a click spilled behind the count's
		// back (below) is not in it.
		t.Skip("the store counts the clicks of limited links")
	}
	a := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"idle","max_clicks":10}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","alias":"busy","max_clicks":1000}`, 201)
	e.do("GET", "/idle", "", "", 302)
	e.flush()
	clicks := []link.Click{{LinkID: a.str("id"), WorkspaceID: e.ws, Time: e.clock.Now(), Country: "DE"}}
	store := e.db.Clicks
	if _, _, err := store.SpillClicks(context.Background(), clicks, 0); err != nil {
		t.Fatal(err)
	}
	// The recorder reads the backlog's size as at a start.
	if err := e.recorder.SetBacklog(context.Background(), store, 64<<20); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(clickCounterIdle)
	e.do("GET", "/busy", "", "", 302) // sweeps
	if n := e.srv.clickLimits.size(); n != 2 {
		t.Fatalf("%d counters after a sweep with a backlog, want 2", n)
	}
	e.flush()
	e.clock.Add(clickCounterIdle)
	e.do("GET", "/busy", "", "", 302) // sweeps
	if n := e.srv.clickLimits.size(); n != 1 {
		t.Fatalf("%d counters after a sweep with the backlog drained, want 1", n)
	}
	for i := range 8 {
		if got := e.request(newRequest("GET", "/idle", "", "")).status; got != 302 {
			t.Fatalf("click %d of 10: %d", i+3, got)
		}
	}
	if got := e.request(newRequest("GET", "/idle", "", "")).status; got != 410 {
		t.Fatalf("the eleventh click: %d, want 410", got)
	}
}
