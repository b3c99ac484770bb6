package storage_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// wantTotals checks list totals (read from counters) against a brute-force
// count over the unfiltered list. The key "" is the whole workspace.
func wantTotals(tb testing.TB, s *Services, wsID string, want map[string]int) {
	tb.Helper()
	ctx := context.Background()
	var all []*link.Link
	for page := 1; ; page++ {
		links, _, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: wsID, Page: page, Limit: 100})
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, links...)
		if len(links) < 100 {
			break
		}
	}
	for tag, n := range want {
		var tags []string
		if tag != "" {
			tags = []string{tag}
		}
		_, total, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: wsID, Tags: tags, Limit: 1})
		if err != nil {
			tb.Fatal(err)
		}
		brute := 0
		for _, l := range all {
			if tag == "" || slices.Contains(l.Tags, tag) {
				brute++
			}
		}
		if total != n || brute != n {
			tb.Fatalf("tag %q: total %d, brute force %d, want %d", tag, total, brute, n)
		}
	}
}

// TestLinks_CountersRandom runs random creates, updates and deletes and
// compares every counter with a brute-force count (the cleanup checks all
// indexes too).
func TestLinks_CountersRandom(t *testing.T) {
	s, admin, ws := mustSetup(t, soloCreations)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	tags := []string{"a", "b", "c", "d"}
	randTags := func() []string {
		var out []string
		for _, t := range tags {
			if rng.IntN(3) == 0 {
				out = append(out, t)
			}
		}
		return out
	}
	var live []*link.Link
	for range 300 {
		switch op := rng.IntN(10); {
		case op < 5 || len(live) == 0:
			w := ws.ID
			if rng.IntN(4) == 0 {
				w = other.ID
			}
			live = append(live, mustLink(t, s, w, &link.Link{Tags: randTags()}))
		case op < 8:
			i := rng.IntN(len(live))
			got, err := s.Links.UpdateLink(ctx, live[i].WorkspaceID, live[i].ID, link.LinkUpdate{Tags: ptr(randTags())}, nil)
			if err != nil {
				t.Fatal(err)
			}
			live[i] = got
		default:
			i := rng.IntN(len(live))
			if err := s.Links.DeleteLink(ctx, live[i].WorkspaceID, live[i].ID); err != nil {
				t.Fatal(err)
			}
			live = slices.Delete(live, i, i+1)
		}
	}
	for _, w := range []string{ws.ID, other.ID} {
		want := map[string]int{"": 0}
		for _, l := range live {
			if l.WorkspaceID != w {
				continue
			}
			want[""]++
			for _, t := range l.Tags {
				want[t]++
			}
		}
		wantTotals(t, s, w, want)
	}
	if err := s.DB.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
}
