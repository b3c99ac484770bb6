package storage_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// backlogFixture is two instances with the same links: one writes clicks
// straight into the aggregates, the other through the backlog.
type backlogFixture struct {
	direct, spilled *Services
	links           [2][]*link.Link // by instance
	ws              [2]string
}

func newBacklogFixture(t *testing.T) *backlogFixture {
	f := &backlogFixture{}
	for i, s := range []**Services{&f.direct, &f.spilled} {
		var ws *link.Workspace
		*s, _, ws = mustSetup(t)
		f.ws[i] = ws.ID
		camp := mustCampaign(t, *s, ws.ID, &link.Campaign{Name: "Spring"})
		for j := range 6 {
			l := &link.Link{Alias: fmt.Sprintf("b%d", j)}
			if j%2 == 1 {
				l.CampaignID = camp.ID
			}
			f.links[i] = append(f.links[i], mustLink(t, *s, ws.ID, l))
		}
	}
	return f
}

// clicks returns the same n random clicks for both instances.
func (f *backlogFixture) clicks(seed uint64, n int) (direct, spilled []link.Click) {
	start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	direct = randomClicks(rand.New(rand.NewPCG(seed, 1)), n, f.links[0], start, 48*time.Hour)
	spilled = randomClicks(rand.New(rand.NewPCG(seed, 1)), n, f.links[1], start, 48*time.Hour)
	for i := range direct {
		direct[i].Variant = uint8(i % 3)
		spilled[i].Variant = uint8(i % 3)
	}
	return direct, spilled
}

func mustBacklog(t *testing.T, s *Services) storage.BacklogSize {
	t.Helper()
	clicks, bytes, err := s.Clicks.Backlog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return storage.BacklogSize{Clicks: clicks, Bytes: bytes}
}

// sameAnalytics compares every link's total and the analytics of every
// scope of the two instances.
func (f *backlogFixture) sameAnalytics(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	start, end := time.Date(2025, 2, 28, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 4, 0, 0, 0, 0, time.UTC)
	stats := func(i int, scope link.StatsScope, id string) string {
		s := []*Services{f.direct, f.spilled}[i]
		st := statsOf(t, s, link.StatsFilter{WorkspaceID: f.ws[i], Scope: scope, ID: id, Start: start, End: end})
		// The IDs differ between the instances, the aliases do not; ties
		// in a top list go by ID, so each list is sorted again by alias.
		alias := map[string]string{}
		for j, l := range f.links[i] {
			alias[l.ID] = f.links[0][j].Alias
		}
		for _, entries := range st.Top {
			for k := range entries {
				if a, ok := alias[entries[k].Value]; ok {
					entries[k].Value = a
				}
			}
			slices.SortFunc(entries, func(x, y link.TopEntry) int {
				return cmp.Or(cmp.Compare(y.Clicks, x.Clicks), cmp.Compare(x.Value, y.Value))
			})
		}
		return fmt.Sprintf("%d %d %d %v %v", st.Clicks, st.UniqueVisitors, len(st.Hourly), st.Hourly, st.Top)
	}
	for j := range f.links[0] {
		for i, s := range []*Services{f.direct, f.spilled} {
			l := f.links[i][j]
			got, err := s.Links.FindLinkByID(ctx, l.WorkspaceID, l.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want, _ := f.direct.Links.FindLinkByID(ctx, f.links[0][j].WorkspaceID, f.links[0][j].ID); got.Clicks != want.Clicks {
				t.Errorf("link %s: %d clicks through the backlog, %d written straight", l.Alias, got.Clicks, want.Clicks)
			}
		}
		if a, b := stats(0, link.ScopeLink, f.links[0][j].ID), stats(1, link.ScopeLink, f.links[1][j].ID); a != b {
			t.Errorf("link %s analytics:\nstraight %s\nbacklog  %s", f.links[0][j].Alias, a, b)
		}
	}
	if a, b := stats(0, link.ScopeWorkspace, ""), stats(1, link.ScopeWorkspace, ""); a != b {
		t.Errorf("workspace analytics:\nstraight %s\nbacklog  %s", a, b)
	}
	if a, b := stats(0, link.ScopeCampaign, f.links[0][1].CampaignID), stats(1, link.ScopeCampaign, f.links[1][1].CampaignID); a != b {
		t.Errorf("campaign analytics:\nstraight %s\nbacklog  %s", a, b)
	}
}

// TestClickBacklog_SameAsStraight: clicks spilled to the backlog and
// drained in parts of any size end up exactly as if they had been written
// straight: totals, every dimension, unique visitors, raw clicks.
func TestClickBacklog_SameAsStraight(t *testing.T) {
	f := newBacklogFixture(t)
	ctx := context.Background()
	direct, spilled := f.clicks(7, 3000)
	for i := 0; i < len(direct); i += 700 {
		mustRecord(t, f.direct, direct[i:min(i+700, len(direct))]...)
	}
	for i := 0; i < len(spilled); i += 1100 {
		n, skipped, err := f.spilled.Clicks.SpillClicks(ctx, spilled[i:min(i+1100, len(spilled))], 0)
		if err != nil || skipped != 0 || n != min(1100, len(spilled)-i) {
			t.Fatalf("spill: %d, %d skipped, %v", n, skipped, err)
		}
	}
	size := mustBacklog(t, f.spilled)
	if size.Clicks != 3000 || size.Bytes < 3000*30 {
		t.Fatalf("backlog after spilling 3000: %+v", size)
	}
	// Not counted yet.
	if l, _ := f.spilled.Links.FindLinkByID(ctx, f.links[1][0].WorkspaceID, f.links[1][0].ID); l.Clicks != 0 {
		t.Fatalf("a spilled click counts before the drain: %d", l.Clicks)
	}
	// What waits for each link, and what it then has.
	for j, l := range f.links[1] {
		got, err := f.spilled.Clicks.LinkClicks(ctx, l.WorkspaceID, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, c := range spilled {
			if c.LinkID == l.ID {
				want++
			}
		}
		if got != want || want == 0 {
			t.Errorf("link %d: %d clicks in the backlog, want %d", j, got, want)
		}
	}
	drained := 0
	for _, part := range []int{1, 999, 1500, 5000} {
		n, skipped, err := f.spilled.Clicks.DrainClicks(ctx, part)
		if err != nil || skipped != 0 {
			t.Fatalf("drain %d: %d, %d skipped, %v", part, n, skipped, err)
		}
		drained += n
		if want := int64(3000 - drained); mustBacklog(t, f.spilled).Clicks != want {
			t.Fatalf("after draining %d: backlog %+v, want %d", drained, mustBacklog(t, f.spilled), want)
		}
	}
	if drained != 3000 || mustBacklog(t, f.spilled) != (storage.BacklogSize{}) {
		t.Fatalf("drained %d, backlog %+v", drained, mustBacklog(t, f.spilled))
	}
	if n, _, err := f.spilled.Clicks.DrainClicks(ctx, 100); n != 0 || err != nil {
		t.Fatalf("drain of an empty backlog: %d, %v", n, err)
	}
	f.sameAnalytics(t)
	for i, s := range []*Services{f.direct, f.spilled} {
		var n int
		err := s.Clicks.ExportClicks(ctx, f.ws[i], time.Time{}, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), func(*link.Click) error { n++; return nil })
		if err != nil || n != 3000 {
			t.Errorf("instance %d: %d raw clicks, %v", i, n, err)
		}
	}
}

// TestClickBacklog_Bound: a spill stops at the bound, and says how many
// it took; clicks that cannot be stored are skipped and counted.
func TestClickBacklog_Bound(t *testing.T) {
	f := newBacklogFixture(t)
	ctx := context.Background()
	_, clicks := f.clicks(3, 100)
	clicks[5].LinkID = "lnk_nope"
	clicks[6].Time = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)
	n, skipped, err := f.spilled.Clicks.SpillClicks(ctx, clicks[:10], 0)
	if err != nil || n != 10 || skipped != 2 {
		t.Fatalf("spill with two bad clicks: %d, %d skipped, %v; want 10, 2", n, skipped, err)
	}
	size := mustBacklog(t, f.spilled)
	if size.Clicks != 8 {
		t.Fatalf("backlog %+v, want 8 clicks", size)
	}
	limit := size.Bytes + 5*(size.Bytes/8)
	n, skipped, err = f.spilled.Clicks.SpillClicks(ctx, clicks[10:], limit)
	if err != nil || skipped != 0 || n < 3 || n > 7 {
		t.Fatalf("spill up to %d bytes: %d taken, %d skipped, %v", limit, n, skipped, err)
	}
	after := mustBacklog(t, f.spilled)
	if after.Bytes > limit || after.Clicks != int64(8+n) {
		t.Fatalf("backlog %+v after taking %d, bound %d", after, n, limit)
	}
	if n2, _, err := f.spilled.Clicks.SpillClicks(ctx, clicks[10+n:], limit); err != nil || n2 != 0 {
		t.Fatalf("spill into a full backlog: %d, %v", n2, err)
	}
	if taken, _, err := f.spilled.Clicks.DrainClicks(ctx, 1000); err != nil || taken != 8+n {
		t.Fatalf("drain: %d, %v; want %d", taken, err, 8+n)
	}
}

// TestClickBacklog_Reopen: the backlog is on disk; a restart drains it.
func TestClickBacklog_Reopen(t *testing.T) {
	f := newBacklogFixture(t)
	ctx := context.Background()
	direct, spilled := f.clicks(11, 500)
	mustRecord(t, f.direct, direct...)
	if _, _, err := f.spilled.Clicks.SpillClicks(ctx, spilled, 0); err != nil {
		t.Fatal(err)
	}
	db := MustReopen(t, f.spilled.DB, f.spilled.Clock)
	f.spilled = newServices(db, f.spilled.Clock)
	if got := mustBacklog(t, f.spilled).Clicks; got != 500 {
		t.Fatalf("backlog after reopening: %d clicks, want 500", got)
	}
	if n, _, err := f.spilled.Clicks.DrainClicks(ctx, 10_000); n != 500 || err != nil {
		t.Fatalf("drain after reopening: %d, %v", n, err)
	}
	f.sameAnalytics(t)
}

// TestClickBacklog_DamagedRecord: a record that cannot be read is taken out
// and counted as skipped, the others drained; the checker names it while
// it is there.
func TestClickBacklog_DamagedRecord(t *testing.T) {
	f := newBacklogFixture(t)
	ctx := context.Background()
	_, clicks := f.clicks(5, 20)
	if _, _, err := f.spilled.Clicks.SpillClicks(ctx, clicks, 0); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{nil, {1}, []byte(strings.Repeat("\xff", 40))} {
		if err := f.spilled.DB.PutBacklogRecord(3, bad); err != nil {
			t.Fatal(err)
		}
		if err := f.spilled.DB.CheckIndexes(); err == nil || !strings.Contains(err.Error(), "click backlog: record 3") {
			t.Fatalf("check of record %q: %v", bad, err)
		}
	}
	// The meta counts the bytes it was told of: put the size back in line
	// by taking the record out through a drain.
	taken, skipped, err := f.spilled.Clicks.DrainClicks(ctx, 100)
	if err != nil || taken != 20 || skipped != 1 {
		t.Fatalf("drain with a damaged record: %d taken, %d skipped, %v; want 20, 1", taken, skipped, err)
	}
	var total int64
	for _, l := range f.links[1] {
		got, _ := f.spilled.Links.FindLinkByID(ctx, l.WorkspaceID, l.ID)
		total += got.Clicks
	}
	if total != 19 {
		t.Fatalf("%d clicks counted, want 19", total)
	}
	if mustBacklog(t, f.spilled) != (storage.BacklogSize{}) {
		t.Fatalf("backlog after the drain: %+v", mustBacklog(t, f.spilled))
	}
}

// TestClickBacklog_DamagedSize: a size in the meta larger than what the
// backlog holds (a damaged file) is put right by the drain that empties
// the backlog, and by one that finds it empty; otherwise the recorder,
// which drains while the size says clicks wait, would drain for ever.
func TestClickBacklog_DamagedSize(t *testing.T) {
	f := newBacklogFixture(t)
	ctx := context.Background()
	_, clicks := f.clicks(7, 5)
	if _, _, err := f.spilled.Clicks.SpillClicks(ctx, clicks, 0); err != nil {
		t.Fatal(err)
	}
	for _, drains := range []int{1, 2} {
		size := mustBacklog(t, f.spilled)
		size.Clicks += 10
		if err := f.spilled.DB.SetBacklogSize(size); err != nil {
			t.Fatal(err)
		}
		for range drains {
			if _, _, err := f.spilled.Clicks.DrainClicks(ctx, 100); err != nil {
				t.Fatal(err)
			}
		}
		if got := mustBacklog(t, f.spilled); got != (storage.BacklogSize{}) {
			t.Fatalf("backlog after %d drains: %+v, want empty", drains, got)
		}
	}
}
