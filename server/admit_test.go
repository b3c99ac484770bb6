package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// costlyRequests are one request of each class of costly work, the
// admin's (backup needs the instance admin; on PostgreSQL, whose backups
// are pg_dump's, there is none).
func costlyRequests(e *env, linkID string) map[string]string {
	reqs := map[string]string{
		"/v1/links?search=example":                             costlySearch,
		"/v1/links?campaign_id=cmp_x":                          costlySearch,
		"/v1/links/" + linkID + "/qr?size=512":                 costlyQR,
		"/v1/analytics/workspace?range=7d":                     costlyAnalytics,
		"/v1/analytics/links/" + linkID + "?range=7d":          costlyAnalytics,
		"/v1/analytics/export?range=7d":                        costlyExport,
		"/v1/analytics/export?range=7d&data=top&format=csv":    costlyExport,
		"/v1/admin/backup":                                     costlyBackup,
		"/v1/links?search=nothing&limit=5&page=2":              costlySearch,
		"/v1/links/" + linkID + "/qr?format=svg&size=256":      costlyQR,
		"/v1/analytics/export?range=7d&format=json":            costlyExport,
		"/v1/analytics/workspace?range=30d&exclude_bots=true":  costlyAnalytics,
		"/v1/links?domain=lb.test":                             costlySearch,
		"/v1/links/" + linkID + "/qr?size=1024&level=H":        costlyQR,
		"/v1/analytics/export?range=today&data=timeseries":     costlyExport,
		"/v1/analytics/links/" + linkID + "?range=24h&limit=5": costlyAnalytics,
		"/v1/audit-log?format=csv":                             costlyExport,
		"/v1/admin/audit-log?format=jsonl":                     costlyExport,
	}
	if onPostgres() {
		delete(reqs, "/v1/admin/backup")
	}
	return reqs
}

// waitFor yields until cond holds: no timing, the test's own deadline
// bounds it.
func waitFor(cond func() bool) {
	for !cond() {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// The gate lets at most costly_concurrency requests work at once, whatever
// mix of search, QR, analytics, export and backup arrives; the others wait
// their turn and are all answered.
func TestCostlyGateBoundsConcurrency(t *testing.T) {
	const limit = 2
	e := newEnv(t, func(c *Config) { c.CostlyConcurrency = limit; c.CostlyWait = time.Hour })
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"gate"}`, 201).str("id")
	e.do("GET", "/gate", "", "", http.StatusFound)
	e.flush()

	var running, peak atomic.Int64
	var mu sync.Mutex
	entered := map[string]int{}
	hold := make(chan struct{})
	e.srv.costly.entered = func(class string, resumed bool) func() {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if !resumed {
			mu.Lock()
			entered[class]++
			mu.Unlock()
		}
		<-hold // every request holds its slot until the test lets go
		return func() { running.Add(-1) }
	}

	reqs := costlyRequests(e, id)
	want := map[string]int{}
	type answer struct {
		path   string
		status int
		body   string
	}
	answers := make(chan answer, len(reqs))
	var finished atomic.Int64
	for path, class := range reqs {
		want[class]++
		go func() {
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, newRequest("GET", path, e.adminToken, ""))
			finished.Add(1)
			answers <- answer{path, rec.Code, rec.Body.String()}
		}()
	}
	// Two requests hold the slots; every other one waits at the gate.
	waitFor(func() bool {
		return running.Load()+e.srv.costly.waiting.Load()+finished.Load() == int64(len(reqs))
	})
	if got, done := running.Load(), finished.Load(); got != limit || done != 0 {
		t.Fatalf("%d requests at work and %d done while the slots are held, want %d and 0", got, done, limit)
	}
	close(hold)
	for range reqs {
		a := <-answers
		if a.status != http.StatusOK {
			t.Errorf("GET %s: %d: %s", a.path, a.status, a.body)
		}
	}
	if got := peak.Load(); got != limit {
		t.Fatalf("peak of %d requests at work at once, want %d", got, limit)
	}
	for class, n := range want {
		if entered[class] != n {
			t.Errorf("%s: %d requests passed the gate, want %d", class, entered[class], n)
		}
	}
}

// holdGate takes every slot of the gate through real costly requests that
// block in the test hook, and returns the function that lets them finish.
func holdGate(t *testing.T, e *env, linkID string) (letGo func()) {
	t.Helper()
	hold := make(chan struct{})
	var inside atomic.Int64
	e.srv.costly.entered = func(string, bool) func() {
		inside.Add(1)
		<-hold
		return func() {}
	}
	done := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, newRequest("GET", "/v1/links/"+linkID+"/qr?size=2048", e.readKey, ""))
		done <- rec.Code
	}()
	waitFor(func() bool { return inside.Load() == 1 || len(done) == 1 })
	if inside.Load() != 1 {
		t.Fatal("a QR rendering did not pass the gate")
	}
	return func() {
		close(hold)
		if got := <-done; got != http.StatusOK {
			t.Errorf("the request that held the gate: %d", got)
		}
	}
}

// When every slot stays taken past server.costly_wait, costly requests are
// answered 503 server_busy with Retry-After; redirects and cheap API calls
// never touch the gate and go through.
func TestCostlyGateFull(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyConcurrency = 1; c.CostlyWait = 0 })
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"busy"}`, 201).str("id")
	etag := e.do("GET", "/v1/links/"+id+"/qr", e.readKey, "", http.StatusOK).header.Get("ETag")
	letGo := holdGate(t, e, id)

	for path, class := range costlyRequests(e, id) {
		r := e.request(newRequest("GET", path, e.adminToken, ""))
		wantProblem(t, r, http.StatusServiceUnavailable, "server_busy")
		if got, want := r.header.Get("Retry-After"), "1"; got != want {
			t.Fatalf("GET %s (%s): Retry-After %q, want %q", path, class, got, want)
		}
	}
	// A redirect, a HEAD, a plain list and a link read are served meanwhile.
	if r := e.do("GET", "/busy", "", "", http.StatusFound); r.header.Get("Location") != "https://example.com/a" {
		t.Fatalf("Location %q", r.header.Get("Location"))
	}
	e.do("HEAD", "/busy", "", "", http.StatusFound)
	e.do("GET", "/v1/links", e.readKey, "", http.StatusOK)
	e.do("GET", "/v1/links/"+id, e.readKey, "", http.StatusOK)
	// An image the client holds revalidates without rendering.
	req := newRequest("GET", "/v1/links/"+id+"/qr", e.readKey, "")
	req.Header.Set("If-None-Match", etag)
	if r := e.request(req); r.status != http.StatusNotModified {
		t.Fatalf("revalidation while the gate is full: %d %s", r.status, r.raw)
	}
	letGo()
	e.do("GET", "/v1/links?search=example", e.readKey, "", http.StatusOK)
}

// A request waits for a slot while it may (server.costly_wait) and is
// served as soon as one comes free; a client that gives up leaves the
// queue.
func TestCostlyGateWaits(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyConcurrency = 1; c.CostlyWait = time.Hour })
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"wait"}`, 201).str("id")
	letGo := holdGate(t, e, id)

	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, newRequest("GET", "/v1/analytics/workspace", e.readKey, "").WithContext(ctx))
		gaveUp <- rec.Code
	}()
	waitFor(func() bool { return e.srv.costly.waiting.Load() == 1 })
	cancel()
	<-gaveUp
	waitFor(func() bool { return e.srv.costly.waiting.Load() == 0 })

	served := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, newRequest("GET", "/v1/links?search=wait", e.readKey, ""))
		served <- rec
	}()
	waitFor(func() bool { return e.srv.costly.waiting.Load() == 1 })
	e.srv.costly.entered = nil // the next holder does not block
	letGo()
	rec := <-served
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"total":1`) {
		t.Fatalf("the waiting search: %d %s", rec.Code, rec.Body)
	}
	if got := len(e.srv.costly.slots); got != 0 {
		t.Fatalf("%d slots still taken after every request ended", got)
	}
}

// blockingWriter is a client that does not read: each Write blocks until
// the test lets it through.
type blockingWriter struct {
	http.ResponseWriter
	writing chan struct{}
	proceed chan struct{}
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.writing <- struct{}{}
	<-b.proceed
	return b.ResponseWriter.Write(p)
}

// A raw click export holds its slot while it reads, encodes and sends
// clicks, not while a slow client keeps its write waiting: others get the
// slot then.
func TestExportFreesSlotWhileClientIsSlow(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyConcurrency = 1; c.CostlyWait = 0 })
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"slow"}`, 201)
	for i := 0; i < 2000; i++ { // more than one 32 KiB buffer of CSV
		req := newRequest("GET", "/slow", "", "")
		req.Header.Set("Referer", fmt.Sprintf("https://site%d.example/", i))
		e.srv.ServeHTTP(httptest.NewRecorder(), req)
	}
	e.flush()

	bw := &blockingWriter{ResponseWriter: httptest.NewRecorder(), writing: make(chan struct{}), proceed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.srv.ServeHTTP(bw, newRequest("GET", "/v1/analytics/export?range=today", e.readKey, ""))
	}()
	<-bw.writing // the export's first write is stuck with the client
	waitFor(func() bool { return len(e.srv.costly.slots) == 0 })
	e.do("GET", "/v1/analytics/workspace?range=today", e.readKey, "", http.StatusOK)
	go func() {
		for range bw.writing {
		}
	}()
	close(bw.proceed)
	<-done
	close(bw.writing)
	if got := strings.Count(bw.ResponseWriter.(*httptest.ResponseRecorder).Body.String(), "\n"); got != 2001 {
		t.Fatalf("export has %d lines, want 2001", got)
	}
	if got := len(e.srv.costly.slots); got != 0 {
		t.Fatalf("%d slots still taken after the export", got)
	}
}

// A backup holds its slot while it copies and sends the data file, not
// while a slow client keeps a write waiting.
func TestBackupFreesSlotForDownload(t *testing.T) {
	e := newBoltEnv(t, func(c *Config) { c.CostlyConcurrency = 1; c.CostlyWait = 0 })
	bw := &blockingWriter{ResponseWriter: httptest.NewRecorder(), writing: make(chan struct{}), proceed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.srv.ServeHTTP(bw, newRequest("GET", "/v1/admin/backup", e.adminToken, ""))
	}()
	<-bw.writing // the download is stuck with the client
	waitFor(func() bool { return len(e.srv.costly.slots) == 0 })
	e.do("GET", "/v1/links?search=x", e.readKey, "", http.StatusOK)
	// The slot is free, but a second backup would spool a second full copy
	// beside the data file while the first waits for its client: refused.
	second := e.request(newRequest("GET", "/v1/admin/backup", e.adminToken, ""))
	wantProblem(t, second, http.StatusServiceUnavailable, "server_busy")
	if second.header.Get("Retry-After") == "" {
		t.Fatal("a refused backup without Retry-After")
	}
	go func() {
		for range bw.writing {
		}
	}()
	close(bw.proceed)
	<-done
	close(bw.writing)
	rec := bw.ResponseWriter.(*httptest.ResponseRecorder)
	if rec.Code != http.StatusOK || rec.Body.Len() == 0 || rec.Header().Get("Content-Length") != fmt.Sprint(rec.Body.Len()) {
		t.Fatalf("backup: %d, %d bytes, Content-Length %s", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
}
