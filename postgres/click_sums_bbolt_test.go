package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// TestTopListsAsTheBboltStore: the same batches of clicks, their
// referrers more than a top list keeps and new ones arriving in every
// batch, leave the same bounded top list, values and clicks, in both
// stores.
func TestTopListsAsTheBboltStore(t *testing.T) {
	t.Parallel()
	stores, _, _, ws, _ := linkInstances(t, 1)
	pg := stores[0]
	bb, err := storage.Open(storage.Options{Path: filepath.Join(t.TempDir(), "linkbolt.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Data.Close()
	_, bws := bootstrap(t, bb)
	ctx := context.Background()
	lp, lb := newLink(ws.ID, "a"), newLink(bws.ID, "a")
	if err := pg.Links.CreateLink(ctx, lp); err != nil {
		t.Fatal(err)
	}
	if err := bb.Links.CreateLink(ctx, lb); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	for b := range 30 {
		n := 1 + rng.IntN(60)
		var cp, cb []link.Click
		for range n {
			r := fmt.Sprintf("r%d.example", rng.IntN(20+b*15))
			if rng.IntN(4) == 0 {
				r = fmt.Sprintf("z%d.example", rng.IntN(3))
			}
			c := clickOf(lp, t0.Add(time.Duration(rng.IntN(50))*time.Minute), 1)
			c.Referrer = r
			cp = append(cp, c)
			c.LinkID, c.WorkspaceID = lb.ID, bws.ID
			cb = append(cb, c)
		}
		if _, err := pg.Clicks.RecordClicks(ctx, cp); err != nil {
			t.Fatal(err)
		}
		if _, err := bb.Clicks.RecordClicks(ctx, cb); err != nil {
			t.Fatal(err)
		}
	}
	get := func(s *link.Store, wsID, id string) []string {
		st, err := s.Clicks.Stats(ctx, link.StatsFilter{WorkspaceID: wsID, Scope: link.ScopeLink, ID: id, Start: t0, End: t0.Add(time.Hour), TopLimit: -1})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range st.Top[link.DimReferrers] {
			out = append(out, fmt.Sprintf("%s=%d", e.Value, e.Clicks))
		}
		slices.Sort(out)
		return out
	}
	a, b := get(pg, ws.ID, lp.ID), get(bb, bws.ID, lb.ID)
	if len(b) != 256 || !slices.Equal(a, b) {
		t.Fatalf("the referrers of the period\non PostgreSQL %v\non bbolt %v", a, b)
	}
}
