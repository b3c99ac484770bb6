package server

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// scanCount is the real click service that counts LinkClicks, each of
// which reads the whole click backlog.
type scanCount struct {
	link.ClickService
	n *atomic.Int64
}

func (s scanCount) LinkClicks(ctx context.Context, wsID, id string) (int64, error) {
	s.n.Add(1)
	return s.ClickService.LinkClicks(ctx, wsID, id)
}

// TestLinkMaxClicksSweepDuringBacklog: while the click backlog holds
// clicks (a flood), the sweep of idle counters waits instead of reading
// the whole backlog once for each of them on a visitor's redirect; the
// counters stay the authority, and go once the backlog is drained.
func TestLinkMaxClicksSweepDuringBacklog(t *testing.T) {
	t.Parallel()
	var scans atomic.Int64
	e := newEnvWith(t, func(d *Deps) { d.Clicks = scanCount{d.Clicks, &scans} })
	var ids []string
	for i := range 10 {
		l := e.do("POST", "/v1/links", e.writeKey, fmt.Sprintf(`{"destination_url":"https://example.com/","alias":"lim%d","max_clicks":100000}`, i), 201)
		ids = append(ids, l.str("id"))
		e.do("GET", fmt.Sprintf("/lim%d", i), "", "", 302)
	}
	// A flood: more clicks queued than one write takes go to the backlog.
	for range 20_001 {
		e.recorder.Record(link.Click{LinkID: ids[0], WorkspaceID: e.ws, Time: e.clock.Now()})
	}
	if err := e.recorder.Persist(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, _ := e.recorder.Backlogged(); n == 0 {
		t.Fatal("the flood did not reach the backlog")
	}
	scans.Store(0)
	e.clock.Add(clickCounterIdle)
	e.do("GET", "/lim0", "", "", 302) // finds a sweep due
	if got := scans.Load(); got != 0 {
		t.Fatalf("a sweep during a backlog read it %d times", got)
	}
	if n := e.srv.clickLimits.size(); n != 10 {
		t.Fatalf("%d counters, want the 10 kept", n)
	}
	if err := e.recorder.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(clickSweepEvery)
	e.do("GET", "/lim0", "", "", 302)
	if n := e.srv.clickLimits.size(); n != 1 {
		t.Fatalf("%d counters after the backlog drained, want 1 (the idle ones evicted)", n)
	}
}

// TestLinkMaxClicksFlood: a link given a limit while a flood of its clicks
// waits in the click backlog, and more still queued, lets exactly the
// rest of its limit through, however many visitors click at once, before
// and after the backlog is drained and its counter seeded again.
func TestLinkMaxClicksFlood(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"hot"}`, 201)
	id := l.str("id")
	for range 20_001 {
		e.recorder.Record(link.Click{LinkID: id, WorkspaceID: e.ws, Time: e.clock.Now()})
	}
	if err := e.recorder.Persist(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 100 { // queued, not yet written
		e.recorder.Record(link.Click{LinkID: id, WorkspaceID: e.ws, Time: e.clock.Now()})
	}
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"max_clicks":20131}`, 200)
	statuses := e.concurrentGETs("/hot", 64, nil, nil)
	if statuses[302] != 30 || statuses[410] != 34 {
		t.Fatalf("statuses %v, want 30 redirects and 34 × 410", statuses)
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != float64(20131) {
		t.Fatalf("clicks %v, want 20131", got)
	}
	e.clock.Add(clickCounterIdle)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","alias":"other","max_clicks":5}`, 201)
	e.do("GET", "/other", "", "", 302) // sweeps the idle counter away
	if r := e.request(newRequest("GET", "/hot", "", "")); r.status != 410 {
		t.Fatalf("seeded again after the drain: %d, want 410", r.status)
	}
}
