package postgres_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// reservations is the click service of s as the server uses it for links
// with max_clicks.
func reservations(t testing.TB, s *link.Store) link.ClickReservations {
	t.Helper()
	r, ok := s.Clicks.(link.ClickReservations)
	if !ok {
		t.Fatal("the PostgreSQL click service counts no clicks of limited links")
	}
	return r
}

// reserve takes a click of the link id as the server does: the count
// started first when it is not.
func reserve(t testing.TB, r link.ClickReservations, id string, consume bool) bool {
	t.Helper()
	ctx := context.Background()
	ok, started, err := r.ReserveClick(ctx, id, consume)
	if err == nil && !started {
		if err = r.StartClickReservations(ctx, id); err == nil {
			ok, started, err = r.ReserveClick(ctx, id, consume)
		}
	}
	if err != nil || !started {
		t.Fatalf("reserve a click of %s: %v (started %v)", id, err, started)
	}
	return ok
}

// TestClickReservations: a limited link's count starts at its stored
// total (its click backlog's clicks included) and lets exactly max_clicks
// through however many instances reserve at once; raising, lowering and
// removing the limit count at once; a limit set again starts from the
// stored total; a deleted link's count goes with it.
func TestClickReservations(t *testing.T) {
	stores, conn, clock := instances(t, 3)
	ctx := context.Background()
	_, ws := bootstrap(t, stores[0])
	l := newLink(ws.ID, "limited")
	if err := stores[0].Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	r := reservations(t, stores[0])
	// Clicked before it had a limit: two written, one in the backlog.
	if _, err := stores[0].Clicks.RecordClicks(ctx, []link.Click{clickOf(l, clock.Now(), 1), clickOf(l, clock.Now(), 2)}); err != nil {
		t.Fatal(err)
	}
	if n, _, err := stores[0].Clicks.SpillClicks(ctx, []link.Click{clickOf(l, clock.Now(), 3)}, 0); n != 1 || err != nil {
		t.Fatalf("spill: %d %v", n, err)
	}
	// Without a limit nothing is counted.
	if ok, started, err := r.ReserveClick(ctx, l.ID, true); !ok || !started || err != nil {
		t.Fatalf("a link without a limit: %v %v %v", ok, started, err)
	}
	if err := r.StartClickReservations(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, conn, `SELECT count(*) FROM click_reservations`); n != 0 {
		t.Fatalf("%d counts of links without a limit", n)
	}

	limit := func(n *int64) {
		t.Helper()
		if _, err := stores[0].Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{Limits: link.LinkLimitsUpdate{MaxClicks: n}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	n := func(v int64) *int64 { return &v }
	limit(n(20))
	if ok, started, err := r.ReserveClick(ctx, l.ID, true); ok || started || err != nil {
		t.Fatalf("a count not started: %v %v %v", ok, started, err)
	}
	// 40 reservations at once through three instances: 17 left of 20.
	var took atomic.Int64
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			if reserve(t, reservations(t, stores[i%3]), l.ID, true) {
				took.Add(1)
			}
		})
	}
	wg.Wait()
	if got := took.Load(); got != 17 {
		t.Fatalf("%d clicks taken, want 17 (3 stored before the limit)", got)
	}
	if reserve(t, r, l.ID, false) {
		t.Fatal("a look at a used-up link finds a click left")
	}
	limit(n(22))
	if !reserve(t, r, l.ID, false) || !reserve(t, r, l.ID, true) || !reserve(t, r, l.ID, true) || reserve(t, r, l.ID, true) {
		t.Fatal("raised by 2: want two more clicks, then none")
	}
	limit(n(5))
	if reserve(t, r, l.ID, true) {
		t.Fatal("lowered below what was used: a click taken")
	}
	if got := count(t, conn, `SELECT used FROM click_reservations WHERE link_id = $1`, l.ID); got != 22 {
		t.Fatalf("used %d, want 22", got)
	}
	// Removed: every click goes, none counted, and the count is gone.
	limit(n(0))
	if n := count(t, conn, `SELECT count(*) FROM click_reservations`); n != 0 {
		t.Fatalf("%d counts after the limit was removed", n)
	}
	if ok, started, err := r.ReserveClick(ctx, l.ID, true); !ok || !started || err != nil {
		t.Fatalf("a click after the limit was removed: %v %v %v", ok, started, err)
	}
	// Set again: from the stored total (3 before the limit; the reserved
	// clicks were never recorded here).
	limit(n(4))
	if !reserve(t, r, l.ID, true) || reserve(t, r, l.ID, true) {
		t.Fatal("a limit of 4 set again over 3 stored clicks: want one click, then none")
	}

	if err := stores[0].Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, conn, `SELECT count(*) FROM click_reservations`); n != 0 {
		t.Fatalf("%d counts after the link was deleted", n)
	}
	if _, _, err := r.ReserveClick(ctx, l.ID, true); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a click of a deleted link: %v, want ENOTFOUND", err)
	}
	if err := r.StartClickReservations(ctx, l.ID); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("starting the count of a deleted link: %v, want ENOTFOUND", err)
	}
}
