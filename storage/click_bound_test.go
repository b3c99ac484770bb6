package storage_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// TestRecordClicks_BoundedTopLists floods one hour with 6,000 distinct
// long referrer hosts and 1,100 links among 100 heavy referrers and 21
// heavy links, in 20 batches: every blob keeps a bounded list, totals stay
// exact, entries plus other sum to them, the heavy values are listed with
// their exact counts and ranked right (limit 100), no listed count is more
// than its value's clicks, and the raw clicks keep a bounded number of
// hosts (the heavy ones exactly), which a prune deletes with the clicks.
func TestRecordClicks_BoundedTopLists(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	if err := storage.BulkCreateLinks(s.DB, ws.ID, 1100, func(i int) *link.Link {
		return &link.Link{Alias: fmt.Sprintf("b%04d", i), DestinationURL: "https://example.com/"}
	}); err != nil {
		t.Fatal(err)
	}
	links, err := allLinks(s, ws.ID)
	if err != nil || len(links) != 1100 {
		t.Fatalf("%d links, %v", len(links), err)
	}
	slices.SortFunc(links, func(a, b *link.Link) int { return strings.Compare(a.Alias, b.Alias) })
	hour := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

	const batches = 20
	var clicks [batches][]link.Click
	refCount, linkCount := map[string]int64{}, map[string]int64{}
	add := func(b int, l *link.Link, ref string, bot bool) {
		clicks[b] = append(clicks[b], link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Referrer: ref, Bot: bot,
			Time: hour.Add(time.Duration(b)*time.Minute + time.Duration(len(clicks[b]))*time.Millisecond), Visitor: uint64(len(clicks[b]) + 1)})
		refCount[ref]++
		linkCount[l.ID]++
	}
	// Heavy referrer i has 300+i clicks, spread over every batch, on the
	// first 20 links.
	var heavy []string
	for i := range 100 {
		h := fmt.Sprintf("heavy%03d.example", i)
		heavy = append(heavy, h)
		for j := range 300 + i {
			add(j%batches, links[(i+j)%20], h, j%9 == 0)
		}
	}
	// 6,000 hosts of one click each: half on link 20, half spread over the
	// other 1,079 links.
	for j := range 6000 {
		l := links[20]
		if j%2 == 1 {
			l = links[21+j%1079]
		}
		add(j%batches, l, fmt.Sprintf("%s.flood-%05d.example", strings.Repeat("x", 60), j), false)
	}
	var total int64
	for b := range batches {
		mustRecord(t, s, clicks[b]...)
		total += int64(len(clicks[b]))
	}

	heavyLinks := []string{links[20].ID}
	for _, l := range links[:20] {
		heavyLinks = append(heavyLinks, l.ID)
	}

	mustRun(t, "each period blob is bounded, its totals and heavy values exact", func(t *testing.T) {
		// Each blob: bounded, exact totals, other = total - listed, the heavy
		// values exact.
		checkBlob := func(name, linkID string, daily bool, dim string, want map[string]int64, heavyVals []string) {
			t.Helper()
			list, other, blobTotal, err := s.DB.PeriodTop(ws.ID, linkID, daily, hour, dim)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var wantTotal int64
			for _, n := range want {
				wantTotal += n
			}
			if int64(blobTotal) != wantTotal {
				t.Fatalf("%s: total %d, want %d", name, blobTotal, wantTotal)
			}
			if len(list) > storage.TopCap(dim) {
				t.Fatalf("%s: %d %s listed, cap %d", name, len(list), dim, storage.TopCap(dim))
			}
			var listed uint64
			for v, n := range list {
				listed += n
				if int64(n) > want[v] {
					t.Fatalf("%s: %s listed with %d, has %d", name, v, n, want[v])
				}
			}
			if other != blobTotal-listed || other == 0 {
				t.Fatalf("%s: other %d, total %d, listed %d", name, other, blobTotal, listed)
			}
			for _, v := range heavyVals {
				if int64(list[v]) != want[v] {
					t.Fatalf("%s: heavy %s listed with %d, has %d", name, v, list[v], want[v])
				}
			}
		}
		for _, daily := range []bool{false, true} {
			checkBlob(fmt.Sprintf("workspace referrers daily=%v", daily), "", daily, link.DimReferrers, refCount, heavy)
			checkBlob(fmt.Sprintf("workspace links daily=%v", daily), "", daily, link.DimLinks, linkCount, heavyLinks)
			floodLink := map[string]int64{}
			for _, c := range slices.Concat(clicks[:]...) {
				if c.LinkID == links[20].ID {
					floodLink[c.Referrer]++
				}
			}
			checkBlob(fmt.Sprintf("link referrers daily=%v", daily), links[20].ID, daily, link.DimReferrers, floodLink, nil)
		}
	})

	mustRun(t, "stats answer exact totals, the heavy values first and exact", func(t *testing.T) {
		// The answers for limit 100: exact totals; the heavy referrers are the
		// whole list, exact and in order; the heavy links lead the links.
		wantTop := func(counts map[string]int64, vals []string) []link.TopEntry {
			var out []link.TopEntry
			for _, v := range vals {
				out = append(out, link.TopEntry{Value: v, Clicks: counts[v]})
			}
			slices.SortFunc(out, func(a, b link.TopEntry) int {
				return cmp.Or(cmp.Compare(b.Clicks, a.Clicks), strings.Compare(a.Value, b.Value))
			})
			return out
		}
		for _, rg := range [][2]time.Time{{hour, hour.Add(time.Hour)}, {hour.Truncate(24 * time.Hour), hour.Truncate(24 * time.Hour).Add(24 * time.Hour)}} {
			st, err := s.Clicks.Stats(ctx, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: rg[0], End: rg[1], TopLimit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if st.Clicks != total {
				t.Fatalf("%v: %d clicks, want %d", rg, st.Clicks, total)
			}
			if got, want := fmt.Sprint(st.Top[link.DimReferrers]), fmt.Sprint(wantTop(refCount, heavy)); got != want {
				t.Fatalf("%v: top referrers\n%s\nwant\n%s", rg, got, want)
			}
			top := st.Top[link.DimLinks]
			if got, want := fmt.Sprint(top[:len(heavyLinks)]), fmt.Sprint(wantTop(linkCount, heavyLinks)); len(top) != 100 || got != want {
				t.Fatalf("%v: %d top links, led by\n%s\nwant\n%s", rg, len(top), got, want)
			}
			for _, e := range top {
				if e.Clicks > linkCount[e.Value] {
					t.Fatalf("%v: link %s listed with %d, has %d", rg, e.Value, e.Clicks, linkCount[e.Value])
				}
			}
		}
	})

	mustRun(t, "the export holds every click, a bounded number of hosts", func(t *testing.T) {
		// Raw clicks: every click; a bounded number of distinct hosts, the
		// heavy ones exact; the hosts go with the clicks.
		exported := map[string]int64{}
		var n int64
		if err := s.Clicks.ExportClicks(ctx, ws.ID, hour, hour.Add(time.Hour), func(c *link.Click) error {
			exported[c.Referrer]++
			n++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		hosts, err := s.DB.HostCount()
		if err != nil || n != total || hosts != 1024 || len(exported) != 1025 || exported["(other)"] == 0 {
			t.Fatalf("export: %d clicks of %d, %d hosts stored, %d exported (%d as other), %v", n, total, hosts, len(exported), exported["(other)"], err)
		}
		for _, h := range heavy {
			if exported[h] != refCount[h] {
				t.Fatalf("export: %s %d times, clicked %d", h, exported[h], refCount[h])
			}
		}
		if _, err := s.Clicks.PruneClicks(ctx, hour.Add(24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if hosts, err := s.DB.HostCount(); hosts != 0 || err != nil {
			t.Fatalf("after the prune: %d hosts, %v", hosts, err)
		}
	})
}
