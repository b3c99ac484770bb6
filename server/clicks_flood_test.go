package server

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
)

// floodHeaders are what a hostile client sends to a short link: a 60 KB
// user agent and a 60 KB referrer, as a made-up host or a long path.
var floodHeaders = [][2]string{
	{strings.Repeat("Mozilla/5.0 ", 5<<10), "https://" + strings.Repeat("a", 60<<10) + "/"},
	{strings.Repeat("x", 60<<10), "https://news.example.org/" + strings.Repeat("p", 60<<10)},
	{"", "https://" + strings.Repeat("label.", 10<<10) + "com/"},
}

// flood sends n GET redirects of /code with floodHeaders through the real
// router, each user agent made distinct by a number in front, so that the
// queue cannot share one click's with another's.
func (e *env) flood(code string, n int) {
	e.t.Helper()
	for i := range n {
		h := floodHeaders[i%len(floodHeaders)]
		req := newRequest("GET", "/"+code, "", "")
		req.Header.Set("User-Agent", strconv.Itoa(i)+h[0])
		req.Header.Set("Referer", h[1])
		if r := e.request(req); r.status != 302 {
			e.t.Fatalf("redirect %d: status %d", i, r.status)
		}
	}
}

// TestRedirectFloodWithHugeHeaders: 16 × 60 KB headers per click used to be
// queued whole, so a flood grew memory without bound. A click now keeps at
// most 512 bytes of user agent and a validated host of at most 253 bytes,
// and the queue stops at its byte bound, counting what it drops.
func TestRedirectFloodWithHugeHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const bound = 1 << 20
	e.recorder.SetQueueBytes(bound)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"flood"}`, 201)

	const n = 3000
	e.flood("flood", n)
	pending, dropped := e.recorder.Pending(), e.recorder.Dropped()
	if got := e.recorder.PendingBytes(); got > bound {
		t.Fatalf("PendingBytes = %d after %d clicks with 120 KB of headers, over the bound %d", got, n, bound)
	}
	if got, want := int64(pending)+dropped, int64(n); got != want {
		t.Fatalf("Pending %d + Dropped %d = %d, want the %d clicks", pending, dropped, got, want)
	}
	if dropped == 0 {
		t.Fatalf("no click dropped: the bound %d proves nothing with %d clicks", bound, n)
	}
	// What a click keeps is small: were the headers kept, a click would
	// cost 60 KB or more.
	if per := e.recorder.PendingBytes() / int64(pending); per > 1200 {
		t.Fatalf("a queued click costs %d bytes; the headers were kept", per)
	}

	e.flush()
	a := e.do("GET", "/v1/analytics/workspace?range=today", e.readKey, "", 200)
	if got, want := a.path("totals", "clicks"), float64(pending); got != want {
		t.Fatalf("totals.clicks = %v, want %v", got, want)
	}
	refs := map[string]bool{}
	for _, x := range a.path("top", "referrers").([]any) {
		refs[x.(map[string]any)["value"].(string)] = true
	}
	if want := map[string]bool{link.ReferrerInvalid: true, "news.example.org": true}; len(refs) != len(want) || !refs[link.ReferrerInvalid] || !refs["news.example.org"] {
		t.Fatalf("top referrers %v, want %v", refs, want)
	}
}

// failingClicks is the click service with a switch that makes its writes
// fail as a full disk does.
type failingClicks struct {
	analytics.ClickStore
	fail atomic.Bool
}

func (f *failingClicks) RecordClicks(ctx context.Context, clicks []link.Click) (int, error) {
	if f.fail.Load() {
		return 0, &fs.PathError{Op: "write", Path: "linkbolt.db", Err: syscall.ENOSPC}
	}
	return f.ClickStore.RecordClicks(ctx, clicks)
}

// TestHealthAndMetricsWhileWritesFail: while every write fails, the queue
// stays within its byte bound (the batch held for the retry included),
// drops are counted, /healthz answers 503 with the reason, and the metrics
// tell the truth: pending is every click in memory, failed writes are
// counted. Once writes succeed, health is 200 again and nothing counted as
// pending is lost.
func TestHealthAndMetricsWhileWritesFail(t *testing.T) {
	t.Parallel()
	var store *failingClicks
	e := newEnvWithClickStore(t, func(s analytics.ClickStore) analytics.ClickStore {
		store = &failingClicks{ClickStore: s}
		return store
	})
	const bound = 1 << 20
	e.recorder.SetQueueBytes(bound)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"flood"}`, 201)
	if r := e.do("GET", "/healthz", "", "", 200); r.str("status") != "ok" {
		t.Fatalf("healthz before trouble: %s", r.raw)
	}

	store.fail.Store(true)
	sent := 0
	for try := 1; try <= 3; try++ {
		e.flood("flood", 1500)
		sent += 1500
		if err := e.recorder.Flush(context.Background()); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("Flush = %v, want ENOSPC", err)
		}
		if got := e.recorder.PendingBytes(); got > bound {
			t.Fatalf("try %d: PendingBytes = %d, over the bound %d", try, got, bound)
		}
	}
	pending, dropped := e.recorder.Pending(), e.recorder.Dropped()
	if dropped == 0 || int64(pending)+dropped != int64(sent) {
		t.Fatalf("Pending %d, Dropped %d of %d sent", pending, dropped, sent)
	}

	r := e.do("GET", "/healthz", "", "", 503)
	if r.str("status") != "unavailable" || !strings.Contains(r.str("reason"), "writes") || r.str("failing_since") != testStart.Format("2006-01-02T15:04:05Z") {
		t.Fatalf("healthz while writes fail: %s", r.raw)
	}
	if strings.Contains(string(r.raw), "linkbolt.db") || strings.Contains(string(r.raw), "space") {
		t.Fatalf("healthz shows the error itself: %s", r.raw)
	}
	m := e.metrics()
	for name, want := range map[string]int64{
		"linkbolt_clicks_pending":            int64(pending),
		"linkbolt_clicks_dropped_total":      dropped,
		"linkbolt_click_writes_failed_total": 3,
		"linkbolt_clicks_written_total":      0,
		"linkbolt_clicks_pending_bytes":      e.recorder.PendingBytes(),
		"linkbolt_clicks_queue_bytes":        bound,
	} {
		if got := m[name]; got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}

	store.fail.Store(false)
	e.flush()
	if r := e.do("GET", "/healthz", "", "", 200); r.str("status") != "ok" {
		t.Fatalf("healthz after recovery: %s", r.raw)
	}
	m = e.metrics()
	if m["linkbolt_clicks_pending"] != 0 || m["linkbolt_clicks_written_total"] != int64(pending) {
		t.Fatalf("after recovery: pending %d, written %d; want 0, %d", m["linkbolt_clicks_pending"], m["linkbolt_clicks_written_total"], pending)
	}
	a := e.do("GET", "/v1/analytics/workspace?range=today", e.readKey, "", 200)
	if got, want := a.path("totals", "clicks"), float64(pending); got != want {
		t.Fatalf("totals.clicks = %v, want the %d clicks that were pending", got, pending)
	}
}

// metrics scrapes /metrics and returns the linkbolt_ samples.
func (e *env) metrics() map[string]int64 {
	e.t.Helper()
	r := e.request(newRequest("GET", "/metrics", "", ""))
	if r.status != 200 {
		e.t.Fatalf("/metrics: %d", r.status)
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(string(r.raw)))
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "linkbolt_") {
			continue
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			e.t.Fatalf("metric %s: %v", sc.Text(), err)
		}
		out[name] = int64(f)
	}
	return out
}
