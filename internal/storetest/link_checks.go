package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var linkCheckTests = []test{
	{"EnrollAndClaim", testLinkChecksEnrollAndClaim},
	{"Transitions", testLinkChecksTransitions},
	{"BrokenFilter", testLinkChecksBrokenFilter},
	{"TurnOff", testLinkChecksTurnOff},
	{"DeletedAndChangedLinks", testLinkChecksDeletedAndChanged},
}

// checksOn turns the destination checks of ws on (or off).
func (e *env) checksOn(ws *link.Workspace, on bool) {
	e.t.Helper()
	got, err := e.Workspaces.UpdateWorkspace(e.ctx, ws.ID, link.WorkspaceUpdate{DestinationChecks: &on})
	if err != nil {
		e.t.Fatalf("update workspace: %v", err)
	}
	if got.DestinationChecks != on {
		e.t.Fatalf("DestinationChecks = %v, want %v", got.DestinationChecks, on)
	}
}

// claim claims due checks at the clock's time, with a lease of an hour,
// and returns their link IDs, sorted.
func (e *env) claim(limit int) ([]string, []*link.LinkCheckTarget) {
	e.t.Helper()
	ts, err := e.LinkChecks.ClaimDueLinkChecks(e.ctx, e.now(), limit, time.Hour)
	if err != nil {
		e.t.Fatalf("claim: %v", err)
	}
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.LinkID)
	}
	slices.Sort(ids)
	return ids, ts
}

// saveCheck records a check of l at the clock's time.
func (e *env) saveCheck(l *link.Link, status link.CheckStatus, httpStatus, failures int, msg string, next time.Time) {
	e.t.Helper()
	c := &link.LinkCheck{LinkID: l.ID, WorkspaceID: l.WorkspaceID, Status: status, HTTPStatus: httpStatus,
		Error: msg, CheckedAt: e.now(), Failures: failures, DestinationURL: l.DestinationURL}
	if err := e.LinkChecks.SaveLinkCheck(e.ctx, c, next); err != nil {
		e.t.Fatalf("save check: %v", err)
	}
}

func (e *env) checkOf(l *link.Link) *link.LinkCheck {
	e.t.Helper()
	m, err := e.LinkChecks.FindLinkChecks(e.ctx, l.WorkspaceID, []string{l.ID})
	if err != nil {
		e.t.Fatalf("find checks: %v", err)
	}
	return m[l.ID]
}

func sortedIDs(ls ...*link.Link) []string {
	var ids []string
	for _, l := range ls {
		ids = append(ids, l.ID)
	}
	slices.Sort(ids)
	return ids
}

func testLinkChecksEnrollAndClaim(t *testing.T, e *env) {
	_, ws := e.setup()
	a, b := e.link(ws.ID, &link.Link{}), e.link(ws.ID, &link.Link{})
	if ids, _ := e.claim(10); len(ids) != 0 {
		t.Fatalf("claimed %v with checks off, want none", ids)
	}
	if got := e.checkOf(a); got != nil {
		t.Fatalf("check with checks off = %+v, want none", got)
	}
	e.checksOn(ws, true)
	// A limit of 1 enrolls and claims one link at a time.
	ids1, ts := e.claim(1)
	ids2, _ := e.claim(1)
	got := append(ids1, ids2...)
	slices.Sort(got)
	if want := sortedIDs(a, b); !slices.Equal(got, want) {
		t.Fatalf("claimed %v, want %v", got, want)
	}
	if tg := ts[0]; tg.WorkspaceID != ws.ID || tg.Previous.Status != link.CheckUnchecked || (tg.DestinationURL != a.DestinationURL && tg.DestinationURL != b.DestinationURL) {
		t.Fatalf("target = %+v", tg)
	}
	// Claimed links are leased: not claimed again until the lease ends.
	if ids, _ := e.claim(10); len(ids) != 0 {
		t.Fatalf("claimed %v again within the lease", ids)
	}
	e.saveCheck(a, link.CheckOK, 200, 0, "", e.now().Add(24*time.Hour))
	// A new link is enrolled by the next claim, due at once.
	c := e.link(ws.ID, &link.Link{})
	if ids, _ := e.claim(10); !slices.Equal(ids, []string{c.ID}) {
		t.Fatalf("claimed %v, want the new link %s", ids, c.ID)
	}
	e.clock.Add(61 * time.Minute)
	if ids, _ := e.claim(10); !slices.Equal(ids, sortedIDs(b, c)) {
		t.Fatalf("after the lease claimed %v, want %v", ids, sortedIDs(b, c))
	}
	e.clock.Add(24 * time.Hour)
	ids, ts := e.claim(10)
	if !slices.Equal(ids, sortedIDs(a, b, c)) {
		t.Fatalf("a day later claimed %v, want all three", ids)
	}
	for _, tg := range ts {
		if tg.LinkID == a.ID && (tg.Previous.Status != link.CheckOK || tg.Previous.HTTPStatus != 200) {
			t.Fatalf("previous check of a = %+v", tg.Previous)
		}
	}
	if c := e.checkOf(a); c == nil || c.Status != link.CheckOK || c.HTTPStatus != 200 || !c.CheckedAt.Equal(t0) {
		t.Fatalf("check of a = %+v, want ok 200 at %v", c, t0)
	}
}

func testLinkChecksTransitions(t *testing.T, e *env) {
	_, ws := e.setup()
	hook := e.webhook(ws.ID, link.EventLinkBroken, link.EventLinkFixed)
	l := e.link(ws.ID, &link.Link{})
	e.checksOn(ws, true)
	e.claim(10)
	next := e.now().Add(time.Hour)
	// A first failure keeps the status; the second makes it broken, once.
	e.saveCheck(l, link.CheckOK, 500, 1, "answered 500", next)
	e.saveCheck(l, link.CheckBroken, 500, 2, "answered 500", next)
	e.saveCheck(l, link.CheckBroken, 404, 3, "answered 404", next)
	got := e.checkOf(l)
	if got == nil || got.Status != link.CheckBroken || got.HTTPStatus != 404 || got.Failures != 3 || got.Error != "answered 404" {
		t.Fatalf("check = %+v", got)
	}
	e.saveCheck(l, link.CheckOK, 200, 0, "", next)
	e.saveCheck(l, link.CheckOK, 200, 0, "", next)
	var types []string
	for _, d := range e.deliveries(hook) {
		types = append(types, d.EventType)
	}
	slices.Reverse(types)
	if want := []string{link.EventLinkBroken, link.EventLinkFixed}; !slices.Equal(types, want) {
		t.Fatalf("deliveries %v, want %v", types, want)
	}
	evs := e.eventsOf(ws.ID)
	if len(evs) != 2 || evs[0].Type != link.EventLinkBroken {
		t.Fatalf("events = %d, first %v", len(evs), evs)
	}
	data := string(evs[0].Data)
	for _, want := range []string{`"id":"` + l.ID + `"`, `"check_status":"broken"`, `"check_error":"answered 500"`} {
		if !strings.Contains(data, want) {
			t.Fatalf("link.broken data %s lacks %s", data, want)
		}
	}
}

func testLinkChecksBrokenFilter(t *testing.T, e *env) {
	_, ws := e.setup()
	ok := e.link(ws.ID, &link.Link{Tags: []string{"x"}})
	bad := e.link(ws.ID, &link.Link{Tags: []string{"x"}})
	bad2 := e.link(ws.ID, &link.Link{Tags: []string{"y"}})
	e.checksOn(ws, true)
	e.claim(10)
	next := e.now().Add(time.Hour)
	e.saveCheck(ok, link.CheckOK, 200, 0, "", next)
	e.saveCheck(bad, link.CheckBroken, 404, 2, "answered 404", next)
	e.saveCheck(bad2, link.CheckBroken, 0, 2, "no answer", next)
	list := func(f link.LinkFilter) []string {
		t.Helper()
		f.WorkspaceID, f.Broken = ws.ID, true
		p, err := e.Links.FindLinkPage(e.ctx, f)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		var ids []string
		for _, l := range p.Links {
			ids = append(ids, l.ID)
		}
		if p.Total != len(ids) && f.Limit == 0 {
			t.Fatalf("total %d, %d links", p.Total, len(ids))
		}
		slices.Sort(ids)
		return ids
	}
	if got := list(link.LinkFilter{}); !slices.Equal(got, sortedIDs(bad, bad2)) {
		t.Fatalf("broken = %v, want %v", got, sortedIDs(bad, bad2))
	}
	if got := list(link.LinkFilter{Tags: []string{"x"}}); !slices.Equal(got, []string{bad.ID}) {
		t.Fatalf("broken tagged x = %v, want %v", got, bad.ID)
	}
	p, err := e.Links.FindLinkPage(e.ctx, link.LinkFilter{WorkspaceID: ws.ID, Broken: true, Limit: 1})
	if err != nil || p.Total != 2 || len(p.Links) != 1 {
		t.Fatalf("page of 1: %v, total %d, %d links", err, p.Total, len(p.Links))
	}
	e.saveCheck(bad, link.CheckOK, 200, 0, "", next)
	if got := list(link.LinkFilter{}); !slices.Equal(got, []string{bad2.ID}) {
		t.Fatalf("broken after a fix = %v, want %v", got, bad2.ID)
	}
	if err := e.Links.DeleteLink(e.ctx, ws.ID, bad2.ID); err != nil {
		t.Fatal(err)
	}
	if got := list(link.LinkFilter{}); len(got) != 0 {
		t.Fatalf("broken after the deletion = %v, want none", got)
	}
}

func testLinkChecksTurnOff(t *testing.T, e *env) {
	_, ws := e.setup()
	l := e.link(ws.ID, &link.Link{})
	e.checksOn(ws, true)
	e.claim(10)
	e.saveCheck(l, link.CheckBroken, 404, 2, "answered 404", e.now().Add(time.Hour))
	e.checksOn(ws, false)
	if got := e.checkOf(l); got != nil {
		t.Fatalf("check after turning off = %+v, want none", got)
	}
	p, err := e.Links.FindLinkPage(e.ctx, link.LinkFilter{WorkspaceID: ws.ID, Broken: true})
	if err != nil || p.Total != 0 {
		t.Fatalf("broken after turning off: %v, total %d", err, p.Total)
	}
	e.clock.Add(48 * time.Hour)
	if ids, _ := e.claim(10); len(ids) != 0 {
		t.Fatalf("claimed %v after turning off", ids)
	}
	// A result saved after turning off is dropped.
	e.saveCheck(l, link.CheckBroken, 404, 2, "answered 404", e.now().Add(time.Hour))
	if got := e.checkOf(l); got != nil {
		t.Fatalf("check saved after turning off = %+v, want none", got)
	}
	// On again: every link is enrolled anew.
	e.checksOn(ws, true)
	if ids, _ := e.claim(10); !slices.Equal(ids, []string{l.ID}) {
		t.Fatalf("claimed %v after turning on again, want %s", ids, l.ID)
	}
	ws2, err := e.Workspaces.FindWorkspaceByID(e.ctx, ws.ID)
	if err != nil || !ws2.DestinationChecks {
		t.Fatalf("workspace read back: %v, %+v", err, ws2)
	}
}

func testLinkChecksDeletedAndChanged(t *testing.T, e *env) {
	_, ws := e.setup()
	gone, moved := e.link(ws.ID, &link.Link{}), e.link(ws.ID, &link.Link{})
	e.checksOn(ws, true)
	e.claim(10)
	if err := e.Links.DeleteLink(e.ctx, ws.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	c := &link.LinkCheck{LinkID: gone.ID, WorkspaceID: ws.ID, Status: link.CheckOK, CheckedAt: e.now(), DestinationURL: gone.DestinationURL}
	wantCode(t, e.LinkChecks.SaveLinkCheck(e.ctx, c, e.now()), link.ENOTFOUND)
	// A result for the old destination is dropped.
	dest := "https://example.org/moved"
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, moved.ID, link.LinkUpdate{DestinationURL: &dest}, nil); err != nil {
		t.Fatal(err)
	}
	e.saveCheck(moved, link.CheckBroken, 404, 2, "answered 404", e.now().Add(time.Hour))
	if got := e.checkOf(moved); got == nil || got.Status != link.CheckUnchecked {
		t.Fatalf("check after a result for the old destination = %+v, want unchecked", got)
	}
	// A reset makes it due at once, with the new destination.
	if err := e.LinkChecks.ResetLinkCheck(e.ctx, ws.ID, moved.ID, e.now()); err != nil {
		t.Fatal(err)
	}
	_, ts := e.claim(10)
	if len(ts) != 1 || ts[0].LinkID != moved.ID || ts[0].DestinationURL != dest || ts[0].Previous.Status != link.CheckUnchecked {
		t.Fatalf("claimed %+v, want the moved link at its new destination", ts)
	}
	if got := e.checkOf(moved); got == nil || got.DestinationURL != dest {
		t.Fatalf("check after reset = %+v", got)
	}
}
