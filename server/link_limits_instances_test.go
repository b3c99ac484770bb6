package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// counters is the number of click counters the server holds where it
// would hold n on a store it counts the clicks for in memory (bbolt): none
// where the store counts them (PostgreSQL).
func (e *env) counters(n int) int {
	if e.srv.clickLimits.store != nil {
		return 0
	}
	return n
}

// clicksReserved is how many clicks the limit of the link id has taken:
// its counter's on bbolt, its count in the database on PostgreSQL (0
// before it is started).
func (e *env) clicksReserved(id string) int64 {
	e.t.Helper()
	if e.srv.clickLimits.store == nil {
		n := e.srv.clickLimits.counter(id)
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.used
	}
	used, _ := e.clickCount(id)
	return used
}

// clickCount reads the PostgreSQL count of the link id's clicks: used,
// and whether it has been started.
func (e *env) clickCount(id string) (used int64, started bool) {
	e.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.db.url)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, `SELECT used FROM click_reservations WHERE link_id = $1`, id).Scan(&used)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false
	} else if err != nil {
		e.t.Fatal(err)
	}
	return used, true
}

// spreadGETs sends n GETs of path at once, the i-th to srvs[i%len(srvs)],
// and counts the answers by status.
func spreadGETs(path string, n int, srvs ...*Server) map[int]int {
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			srvs[i%len(srvs)].ServeHTTP(rec, newRequest("GET", path, "", ""))
			mu.Lock()
			defer mu.Unlock()
			statuses[rec.Code]++
		})
	}
	wg.Wait()
	return statuses
}

// heard waits until every instance's redirects see the link alias as
// want says: a change made through one instance reaches the others'
// redirect caches by the database's notification, a few milliseconds
// later.
func heard(t *testing.T, alias string, want func(*link.Link) bool, srvs ...*Server) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, s := range srvs {
		for {
			l, err := s.links.FindLinkByAlias(context.Background(), "", alias)
			if err == nil && want(l) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("an instance still sees %s as %+v (%v)", alias, l, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// maxClicks is heard's test of a link's max_clicks.
func maxClicks(n int64) func(*link.Link) bool {
	return func(l *link.Link) bool { return l.MaxClicks == n }
}

// flushAll writes the clicks every instance's recorder holds.
func (e *env) flushAll(others ...*env) {
	e.t.Helper()
	e.flush()
	for _, o := range others {
		o.flush()
	}
}

// impatientSibling sets the database's lock_timeout to 200 ms and returns
// a connection of the test's (closed at its end) and a second instance,
// whose connections give up on a lock after those 200 ms.
func (e *env) impatientSibling() (*pgx.Conn, *env) {
	e.t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.db.url)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET lock_timeout = 200', current_database()); END $$`); err != nil {
		e.t.Fatal(err)
	}
	return conn, e.sibling()
}

// TestLinkMaxClicksAcrossInstances: three linkbolt instances on one
// PostgreSQL database let exactly max_clicks through between them, of 60
// clients clicking at once spread over them; the others are answered as
// a used-up link is (410). Raising the limit lets exactly the difference
// through, on every instance at once, lowering it ends the link on every
// one, and a limit removed and set again starts from the stored total.
func TestLinkMaxClicksAcrossInstances(t *testing.T) {
	t.Parallel()
	if !onPostgres() {
		t.Skip("instances share a PostgreSQL database")
	}
	e := newEnv(t)
	b, c := e.sibling(), e.sibling()
	srvs := []*Server{e.srv, b.srv, c.srv}
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"shared","max_clicks":25}`, 201)
	id := l.str("id")

	statuses := spreadGETs("/shared", 60, srvs...)
	if statuses[302] != 25 || statuses[410] != 35 {
		t.Fatalf("statuses %v, want 25 redirects and 35 × 410", statuses)
	}
	if used, _ := e.clickCount(id); used != 25 {
		t.Fatalf("%d clicks reserved, want 25", used)
	}
	e.flushAll(b, c)
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != float64(25) {
		t.Fatalf("clicks %v, want 25", got)
	}
	// HEAD takes no click, on any instance.
	for _, s := range srvs {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, newRequest("HEAD", "/shared", "", ""))
		if rec.Code != 410 {
			t.Fatalf("HEAD of a used-up link: %d", rec.Code)
		}
	}

	// Raised through one instance: the others let the difference through
	// at once, whatever their redirect caches hold.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"max_clicks":32}`, 200)
	statuses = spreadGETs("/shared", 60, srvs...)
	if statuses[302] != 7 || statuses[410] != 53 {
		t.Fatalf("after raising to 32: statuses %v, want 7 redirects and 53 × 410", statuses)
	}
	// Lowered below what was used: used up everywhere.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"max_clicks":40}`, 200)
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"max_clicks":20}`, 200)
	if statuses := spreadGETs("/shared", 9, srvs...); statuses[410] != 9 {
		t.Fatalf("after lowering to 20: statuses %v, want 9 × 410", statuses)
	}

	// Removed: every click goes through, and the count is gone.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"max_clicks":null}`, 200)
	heard(t, "shared", maxClicks(0), srvs...)
	if statuses := spreadGETs("/shared", 6, srvs...); statuses[302] != 6 {
		t.Fatalf("without a limit: statuses %v, want 6 redirects", statuses)
	}
	if _, started := e.clickCount(id); started {
		t.Fatal("the count outlived the limit")
	}
	// Set again: it starts from the stored total (32 + 6), the clicks made
	// without a limit counted. (An instance that has not heard of the
	// new limit yet lets clicks through uncounted: docs/postgres.md.)
	e.flushAll(b, c)
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"max_clicks":40}`, 200)
	heard(t, "shared", maxClicks(40), srvs...)
	statuses = spreadGETs("/shared", 30, srvs...)
	if statuses[302] != 2 || statuses[410] != 28 {
		t.Fatalf("limit set again at 40 after 38 clicks: statuses %v, want 2 redirects and 28 × 410", statuses)
	}
	e.flushAll(b, c)
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != float64(40) {
		t.Fatalf("clicks %v, want 40", got)
	}
}

// TestLinkMaxClicksPasswordAcrossInstances: the right password sent to a
// protected link with max_clicks through three instances at once takes
// exactly the clicks left.
func TestLinkMaxClicksPasswordAcrossInstances(t *testing.T) {
	t.Parallel()
	if !onPostgres() {
		t.Skip("instances share a PostgreSQL database")
	}
	e := newEnv(t)
	b, c := e.sibling(), e.sibling()
	srvs := []*Server{e.srv, b.srv, c.srv}
	const pw = "open-sesame-77"
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/p","alias":"guarded","password":"`+pw+`","max_clicks":4}`, 201)
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			req := newRequest("GET", "/guarded", "", "")
			req.RemoteAddr = fmt.Sprintf("198.51.100.%d:1234", i+1)
			req.Header.Set(linkPasswordHeader, pw)
			rec := httptest.NewRecorder()
			srvs[i%3].ServeHTTP(rec, req)
			mu.Lock()
			defer mu.Unlock()
			statuses[rec.Code]++
		})
	}
	wg.Wait()
	if statuses[302] != 4 || statuses[410] != 8 {
		t.Fatalf("statuses %v, want 4 redirects and 8 × 410", statuses)
	}
}

// TestLinkMaxClicksRecreatedAlias: a limited link deleted takes its count
// with it; a new link on the same alias has a count of its own, from 0.
func TestLinkMaxClicksRecreatedAlias(t *testing.T) {
	t.Parallel()
	if !onPostgres() {
		t.Skip("the count is PostgreSQL's")
	}
	e := newEnv(t)
	b := e.sibling()
	old := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/1","alias":"again","max_clicks":2}`, 201).str("id")
	if statuses := spreadGETs("/again", 4, e.srv, b.srv); statuses[302] != 2 || statuses[410] != 2 {
		t.Fatalf("statuses %v, want 2 redirects and 2 × 410", statuses)
	}
	e.do("DELETE", "/v1/links/"+old, e.writeKey, "", 204)
	if _, started := e.clickCount(old); started {
		t.Fatal("the count outlived its link")
	}
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/2","alias":"again","max_clicks":2}`, 201).str("id")
	heard(t, "again", func(l *link.Link) bool { return l.ID == id }, e.srv, b.srv)
	if statuses := spreadGETs("/again", 4, e.srv, b.srv); statuses[302] != 2 || statuses[410] != 2 {
		t.Fatalf("the new link: statuses %v, want 2 redirects and 2 × 410", statuses)
	}
}

// TestLinkMaxClicksStoreUnavailable: when the database cannot reserve a
// limited link's click (here its count's row is locked past the
// instance's lock_timeout), the redirect is answered 503
// store_unavailable with Retry-After, never redirected past the limit;
// once the database answers again exactly the clicks left go through. A
// link without a limit keeps redirecting meanwhile.
func TestLinkMaxClicksStoreUnavailable(t *testing.T) {
	t.Parallel()
	if !onPostgres() {
		t.Skip("the count is PostgreSQL's")
	}
	e := newEnv(t)
	ctx := context.Background()
	conn, b := e.impatientSibling()
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/l","alias":"held","max_clicks":3}`, 201).str("id")
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/u","alias":"free"}`, 201)
	e.do("GET", "/held", "", "", 302)
	get := func(path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, newRequest("GET", path, "", ""))
		return rec
	}
	if rec := get("/held"); rec.Code != 302 {
		t.Fatalf("the second click: %d", rec.Code)
	}

	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT FROM click_reservations WHERE link_id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		rec := get("/held")
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
			rec.Header().Get("Location") != "" || rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("a limited link's click while its count cannot be reserved: %d %v %s", rec.Code, rec.Header(), rec.Body)
		}
		if body := rec.Body.String(); !strings.Contains(body, `"code":"store_unavailable"`) {
			t.Fatalf("the answer: %s", body)
		}
	}
	if rec := get("/free"); rec.Code != 302 {
		t.Fatalf("a link without a limit meanwhile: %d", rec.Code)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if rec := get("/held"); rec.Code != 302 {
		t.Fatalf("the third click, the database back: %d %s", rec.Code, rec.Body)
	}
	if rec := get("/held"); rec.Code != 410 {
		t.Fatalf("the fourth click: %d", rec.Code)
	}
	if used, _ := e.clickCount(id); used != 3 {
		t.Fatalf("%d clicks reserved, want 3", used)
	}
}

// TestLinkMaxClicksUsedUpRemembered: a link the database found used up
// is answered 410 for a second without asking it again (a flood on a
// used-up link costs no statement a click): the database unable to
// answer (a table locked), the next click is still 410, not 503; a second
// later it is asked again.
// Raising the limit counts at once where the link read changes.
func TestLinkMaxClicksUsedUpRemembered(t *testing.T) {
	t.Parallel()
	if !onPostgres() {
		t.Skip("the count is PostgreSQL's")
	}
	e := newEnv(t)
	ctx := context.Background()
	conn, b := e.impatientSibling()
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/l","alias":"once","max_clicks":1}`, 201).str("id")
	get := func() int {
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, newRequest("GET", "/once", "", ""))
		return rec.Code
	}
	if c := get(); c != 302 {
		t.Fatalf("the click: %d", c)
	}
	if c := get(); c != 410 {
		t.Fatalf("the click past the limit: %d", c)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// The reservation's statement reads the link: with its table locked
	// it gives up after the lock_timeout.
	if _, err := tx.Exec(ctx, `LOCK TABLE links IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if c := get(); c != 410 {
			t.Fatalf("a used-up link within the second, the database unable to answer: %d, want 410 without asking", c)
		}
	}
	e.clock.Add(usedUpFor)
	if c := get(); c != http.StatusServiceUnavailable {
		t.Fatalf("a used-up link a second later, the database unable to answer: %d, want 503 (asked again)", c)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if c := get(); c != 410 {
		t.Fatalf("asked again, the database back: %d", c)
	}
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"max_clicks":2}`, 200)
	heard(t, "once", maxClicks(2), b.srv)
	if c := get(); c != 302 {
		t.Fatalf("the limit raised: %d", c)
	}
}

// BenchmarkRedirectMaxClicks compares the redirect of a plain link with
// that of a link with max_clicks, on the store the tests run on: on
// bbolt the click is reserved in memory, on PostgreSQL (with
// LINKBOLT_TEST_STORE=postgres) by one statement in the database.
//
//	LINKBOLT_TEST_STORE=postgres go test ./server/ -run '^$' -bench RedirectMaxClicks
func BenchmarkRedirectMaxClicks(b *testing.B) {
	e := newEnv(b)
	e.recorder.SetQueueBytes(1 << 30) // the redirect, not the drops, is measured
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/p","alias":"plain"}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/l","alias":"limited","max_clicks":1000000000}`, 201)
	for _, path := range []string{"/plain", "/limited"} {
		b.Run(path[1:], func(b *testing.B) {
			for b.Loop() {
				w := httptest.NewRecorder()
				e.srv.ServeHTTP(w, newRequest("GET", path, "", ""))
				if w.Code != http.StatusFound {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}
