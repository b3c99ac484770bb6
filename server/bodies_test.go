package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// stuckBody is a request body that sends prefix, then blocks until
// unblocked is closed and fails; reads counts the calls to Read.
type stuckBody struct {
	prefix    *strings.Reader
	unblocked chan struct{}
	reads     atomic.Int64
}

func newStuckBody(prefix string) *stuckBody {
	return &stuckBody{prefix: strings.NewReader(prefix), unblocked: make(chan struct{})}
}

func (b *stuckBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	if b.prefix.Len() > 0 {
		return b.prefix.Read(p)
	}
	<-b.unblocked
	return 0, errors.New("the client went away")
}

// bigRequest is a POST declaring a body of size bytes, read from body.
func bigRequest(e *env, path string, size int64, body io.Reader) *http.Request {
	req := httptest.NewRequest("POST", "http://lb.test"+path, body)
	req.ContentLength = size
	req.RemoteAddr = "192.0.2.1:1234"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.writeKey)
	return req
}

// A flood of large bodies (imports, bulk creations) is admitted by size
// before a byte is read: while an import's 31 MiB body is on its way,
// another import or a 4 MiB bulk creation is answered 503 server_busy
// without its body being read at all (24 dry runs read side by side took
// 1.7 GB). Small bodies never wait, and once the import ends its room is
// free again.
func TestBodyGate_AdmitsBeforeReading(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyWait = 0 })
	var reserved atomic.Int64
	e.srv.bodies.reserved = func(n int64) { reserved.Add(1) }

	first := newStuckBody(`{"from":"csv","dry_run":true,"data":"url\n`)
	done := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, bigRequest(e, "/v1/imports", 31<<20, first))
		done <- rec.Code
	}()
	waitFor(func() bool { return first.reads.Load() > 1 }) // its body is being read

	for _, c := range []struct {
		path string
		size int64
	}{{"/v1/imports", 31 << 20}, {"/v1/links/bulk", 4 << 20}, {"/v1/imports", 2 << 20}} {
		body := newStuckBody("")
		close(body.unblocked) // a read would fail at once, not hang
		r := e.request(bigRequest(e, c.path, c.size, body))
		wantProblem(t, r, http.StatusServiceUnavailable, "server_busy")
		if got, want := r.header.Get("Retry-After"), "1"; got != want {
			t.Fatalf("POST %s: Retry-After %q, want %q", c.path, got, want)
		}
		if n := body.reads.Load(); n != 0 {
			t.Fatalf("POST %s of %d bytes while the gate is full: its body was read (%d reads) before it was admitted", c.path, c.size, n)
		}
	}
	// A small body reserves nothing and goes through.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/small"}`, http.StatusCreated)

	close(first.unblocked)
	if got := <-done; got != http.StatusBadRequest {
		t.Fatalf("the import whose client went away: %d, want 400", got)
	}
	// Its room is free again: a large bulk creation is read and served.
	var b strings.Builder
	b.WriteString(`{"links":[`)
	for i := 0; b.Len() < 2*freeBody; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"destination_url":"https://example.com/%s/%d"}`, strings.Repeat("x", 200), i)
	}
	b.WriteString("]}")
	before := reserved.Load()
	r := e.do("POST", "/v1/links/bulk", e.writeKey, b.String(), http.StatusOK)
	if r.path("meta", "failed") != float64(0) {
		t.Fatalf("bulk creation after the import: %s", r.raw)
	}
	if reserved.Load() != before+1 {
		t.Fatalf("a bulk body of %d bytes made %d reservations, want 1", b.Len(), reserved.Load()-before)
	}
}

// A large body reserves what its request holds at its peak, a multiple
// of its size: four bulk creations of 4 MiB are read at once (their
// writes take turns anyway), a fifth, or an import beside them, is
// answered 503 with its body unread; once they end, an import of the
// largest body is admitted alone.
func TestBodyGate_ChargesWhatRequestsHold(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyWait = 0 })
	var reserved atomic.Int64
	e.srv.bodies.reserved = func(n int64) { reserved.Add(n) }

	var stuck []*stuckBody
	done := make(chan int, 4)
	for range 4 {
		b := newStuckBody(`{"links":[`)
		stuck = append(stuck, b)
		go func() {
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, bigRequest(e, "/v1/links/bulk", maxBulkBody, b))
			done <- rec.Code
		}()
		waitFor(func() bool { return b.reads.Load() > 1 }) // admitted: its body is being read
	}
	if got, want := reserved.Load(), int64(4*heldBulk*maxBulkBody); got != want {
		t.Fatalf("four bulk creations of 4 MiB reserved %d bytes, want %d", got, want)
	}
	for _, c := range []struct {
		path string
		size int64
	}{{"/v1/links/bulk", maxBulkBody}, {"/v1/links/bulk", 1 << 20}, {"/v1/imports", 1 << 20}} {
		body := newStuckBody("")
		close(body.unblocked)
		r := e.request(bigRequest(e, c.path, c.size, body))
		wantProblem(t, r, http.StatusServiceUnavailable, "server_busy")
		if n := body.reads.Load(); n != 0 {
			t.Fatalf("POST %s of %d bytes beside four bulk creations: its body was read (%d reads)", c.path, c.size, n)
		}
	}
	for _, b := range stuck {
		close(b.unblocked)
		if got := <-done; got != http.StatusBadRequest {
			t.Fatalf("a bulk creation whose client went away: %d, want 400", got)
		}
	}
	// An import of the largest body fits alone, in the whole budget.
	before := reserved.Load()
	imp := newStuckBody(`{"from":"csv","dry_run":true,"data":"url\n`)
	go func() {
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, bigRequest(e, "/v1/imports", maxImportBody, imp))
		done <- rec.Code
	}()
	waitFor(func() bool { return imp.reads.Load() > 1 })
	if got := reserved.Load() - before; got != bodyBudget {
		t.Fatalf("an import of %d bytes reserved %d bytes, want all %d", maxImportBody, got, bodyBudget)
	}
	close(imp.unblocked)
	<-done
}
