package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

var clickT0 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

func clickOf(l *link.Link, at time.Time, visitor uint64) link.Click {
	return link.Click{LinkID: l.ID, WorkspaceID: l.WorkspaceID, Time: at, Visitor: visitor, Referrer: "t.co",
		Country: "DE", Device: "desktop", Browser: "Firefox", OS: "Linux"}
}

func count(t *testing.T, conn *pgx.Conn, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestDailySaltAcrossInstances: instances asking for a new day's salt at
// once all get the one salt stored.
func TestDailySaltAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, conn, _, _, _ := linkInstances(t, 2)
	ctx := context.Background()
	const n = 8
	salts := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			salts[i], errs[i] = stores[i%2].Clicks.DailySalt(ctx, clickT0.Add(time.Duration(i)*time.Hour))
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !bytes.Equal(salts[i], salts[0]) {
			t.Fatalf("salt %d: %x, %v; want the salt %x", i, salts[i], errs[i], salts[0])
		}
	}
	if got := count(t, conn, `SELECT count(*) FROM click_salts`); got != 1 {
		t.Fatalf("%d salts stored, want 1", got)
	}
}

// TestClickBatchesAcrossInstances: batches of the same links written at
// once by two instances, the links in opposite orders, all commit (none
// waits on the other in a circle) and count exactly.
func TestClickBatchesAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, _, _, ws, _ := linkInstances(t, 2)
	ctx := context.Background()
	var ls []*link.Link
	for _, alias := range []string{"a", "b", "c"} {
		l := newLink(ws.ID, alias)
		if err := stores[0].Links.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	const batches, size = 6, 30 // size a multiple of the links
	write := func(s *link.Store, reverse bool) error {
		for n := range batches {
			clicks := make([]link.Click, size)
			for i := range clicks {
				l := ls[i%len(ls)]
				if reverse {
					l = ls[len(ls)-1-i%len(ls)]
				}
				clicks[i] = clickOf(l, clickT0.Add(time.Duration(n)*time.Minute), uint64(i))
			}
			if _, err := s.Clicks.RecordClicks(ctx, clicks); err != nil {
				return err
			}
		}
		return nil
	}
	if errA, errB := both(func() error { return write(stores[0], false) }, func() error { return write(stores[1], true) }); errA != nil || errB != nil {
		t.Fatalf("batches: %v, %v", errA, errB)
	}
	for _, l := range ls {
		if got, err := stores[1].Clicks.LinkClicks(ctx, ws.ID, l.ID); err != nil || got != int64(2*batches*size/len(ls)) {
			t.Fatalf("link %s: %d clicks, %v; want %d", l.Alias, got, err, 2*batches*size/len(ls))
		}
	}
	st, err := stores[0].Clicks.Stats(ctx, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: clickT0, End: clickT0.Add(time.Hour)})
	if err != nil || st.Clicks != 2*batches*size || st.UniqueVisitors != size {
		t.Fatalf("workspace stats: %+v, %v; want %d clicks of %d visitors", st, err, 2*batches*size, size)
	}
}

// TestDeletedLinkTakesItsClicks: deleting a link deletes its raw clicks
// and its own aggregates; its workspace's stay, and a late click of it
// counts for its workspace only.
func TestDeletedLinkTakesItsClicks(t *testing.T) {
	t.Parallel()
	stores, conn, _, ws, _ := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	l := newLink(ws.ID, "gone")
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Clicks.RecordClicks(ctx, []link.Click{clickOf(l, clickT0, 1), clickOf(l, clickT0, 2)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"clicks", "click_hour_sums", "click_day_sums", "click_visitors"} {
		if got := count(t, conn, `SELECT count(*) FROM `+table+` WHERE link_id = $1`, l.ID); got != 0 {
			t.Errorf("%s keeps %d rows of the deleted link", table, got)
		}
	}
	if skipped, err := s.Clicks.RecordClicks(ctx, []link.Click{clickOf(l, clickT0, 3)}); err != nil || skipped != 0 {
		t.Fatalf("a late click of the deleted link: %d skipped, %v", skipped, err)
	}
	st, err := s.Clicks.Stats(ctx, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: clickT0, End: clickT0.Add(time.Hour)})
	if err != nil || st.Clicks != 3 || st.UniqueVisitors != 3 {
		t.Fatalf("workspace stats: %+v, %v; want 3 clicks of 3 visitors", st, err)
	}
	if got := count(t, conn, `SELECT count(*) FROM clicks`); got != 0 {
		t.Fatalf("%d raw clicks stored for a deleted link", got)
	}
}

// TestClickQueriesUseTheirIndexes: the click service's hot queries and
// the deletes of a link's or a workspace's rows are answered from indexes.
func TestClickQueriesUseTheirIndexes(t *testing.T) {
	t.Parallel()
	_, conn, _, _, _ := linkInstances(t, 1)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ query, index string }{
		{`SELECT * FROM clicks WHERE workspace_id = 'ws' AND (at_ns, id) > (0, 0) AND at_ns < 10 ORDER BY at_ns, id LIMIT 10`, "clicks_workspace_at"},
		{`SELECT id FROM clicks WHERE at_ns < 10 ORDER BY at_ns LIMIT 10`, "clicks_at"},
		{`DELETE FROM clicks WHERE link_id = 'lnk'`, "clicks_link"},
		{`SELECT hour, clicks, bots FROM click_hour_sums WHERE scope = 'w:ws' AND hour >= 1 AND hour < 9 ORDER BY hour`, "click_hour_sums_pkey"},
		{`SELECT day, clicks, bots FROM click_day_sums WHERE scope = 'w:ws' AND day >= 1 AND day <= 9 ORDER BY day`, "click_day_sums_pkey"},
		{`SELECT tops FROM click_day_sums WHERE scope = 'w:ws' AND day >= 1 AND day < 9 AND tops <> ''`, "click_day_sums_pkey"},
		{`SELECT ctid FROM click_hour_sums WHERE link_id IS NOT NULL AND hour < 10 LIMIT 10`, "click_hour_sums_link_hour"},
		{`DELETE FROM click_hour_sums WHERE link_id = 'lnk'`, "click_hour_sums_link"},
		{`DELETE FROM click_day_sums WHERE link_id = 'lnk'`, "click_day_sums_link"},
		{`DELETE FROM click_visitors WHERE link_id = 'lnk'`, "click_visitors_link"},
		{`DELETE FROM click_hour_sums WHERE workspace_id = 'ws'`, "click_hour_sums_workspace"},
		{`DELETE FROM click_day_sums WHERE workspace_id = 'ws'`, "click_day_sums_workspace"},
		{`DELETE FROM click_hour_sums WHERE campaign_id = 'cmp'`, "click_hour_sums_campaign"},
		{`DELETE FROM click_day_sums WHERE campaign_id = 'cmp'`, "click_day_sums_campaign"},
		{`DELETE FROM click_visitors WHERE campaign_id = 'cmp'`, "click_visitors_campaign"},
		{`SELECT ctid FROM click_visitors WHERE day < 10 LIMIT 10`, "click_visitors_pkey"},
		{`SELECT count(*) FROM click_backlog WHERE link_id = 'lnk'`, "click_backlog_link"},
	} {
		rows, err := conn.Query(ctx, "EXPLAIN "+tt.query)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if plan := strings.Join(lines, "\n"); !strings.Contains(plan, tt.index) {
			t.Errorf("%s: plan does not use %s:\n%s", tt.query, tt.index, plan)
		}
	}
}

// longestTopList is the most entries a top list of dimension dim holds
// in table.
func longestTopList(t *testing.T, conn *pgx.Conn, table string, dim int) int {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT tops FROM `+table)
	if err != nil {
		t.Fatal(err)
	}
	longest := 0
	var tops []byte
	if _, err := pgx.ForEachRow(rows, []any{&tops}, func() error {
		n := 0
		err := postgres.EachTop(tops, func(d int, _ string, _, _, _ int64) {
			if d == dim {
				n++
			}
		})
		longest = max(longest, n)
		return err
	}); err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	return longest
}

// TestTopListsBounded: an hour's referrers are held to 256 entries: a
// value new to a full list takes the place of the smallest and keeps its
// exact clicks, and the workspace's totals count every click.
func TestTopListsBounded(t *testing.T) {
	t.Parallel()
	stores, conn, _, ws, _ := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	l := newLink(ws.ID, "busy")
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	var clicks []link.Click
	for i := range 300 {
		c := clickOf(l, clickT0, uint64(i))
		c.Referrer = fmt.Sprintf("r%03d.example", i)
		clicks = append(clicks, c)
	}
	for i := range 5 {
		c := clickOf(l, clickT0, uint64(1000+i))
		c.Referrer = "early.example"
		clicks = append(clicks, c)
	}
	if _, err := s.Clicks.RecordClicks(ctx, clicks); err != nil {
		t.Fatal(err)
	}
	var late []link.Click
	for i := range 4 {
		c := clickOf(l, clickT0.Add(time.Minute), uint64(2000+i))
		c.Referrer = "late.example"
		late = append(late, c)
	}
	if _, err := s.Clicks.RecordClicks(ctx, late); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"click_hour_sums", "click_day_sums"} {
		if got := longestTopList(t, conn, table, 2); got != 256 {
			t.Errorf("%s: the longest referrer list has %d entries, want 256", table, got)
		}
	}
	st, err := s.Clicks.Stats(ctx, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: clickT0, End: clickT0.Add(time.Hour), TopLimit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(st.Top[link.DimReferrers]), "[{early.example 5} {late.example 4}]"; st.Clicks != 309 || got != want {
		t.Fatalf("%d clicks, top referrers %s; want 309 and %s", st.Clicks, got, want)
	}
}

// TestVisitorCountsAsItsFirstClick: a visitor counts once a day in each
// scope, as a bot or not by its first click of the day in the workspace,
// also when its next click, on another link, comes in a later batch.
func TestVisitorCountsAsItsFirstClick(t *testing.T) {
	t.Parallel()
	stores, _, _, ws, _ := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	a, b := newLink(ws.ID, "a"), newLink(ws.ID, "b")
	for _, l := range []*link.Link{a, b} {
		if err := s.Links.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	bot := clickOf(a, clickT0, 7)
	bot.Bot = true
	if _, err := s.Clicks.RecordClicks(ctx, []link.Click{bot}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Clicks.RecordClicks(ctx, []link.Click{clickOf(b, clickT0.Add(time.Minute), 7)}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []link.StatsFilter{
		{Scope: link.ScopeWorkspace}, {Scope: link.ScopeLink, ID: a.ID}, {Scope: link.ScopeLink, ID: b.ID},
	} {
		f.WorkspaceID, f.Start, f.End = ws.ID, clickT0, clickT0.Add(time.Hour)
		all, err := s.Clicks.Stats(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		f.ExcludeBots = true
		humans, err := s.Clicks.Stats(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if all.UniqueVisitors != 1 || humans.UniqueVisitors != 0 {
			t.Errorf("%s %s: %d visitors, %d without bots; want 1 and 0", f.Scope, f.ID, all.UniqueVisitors, humans.UniqueVisitors)
		}
	}
}

// TestExportAndPruneInChunks: more clicks than one chunk export oldest
// first, whole, and prune whole, in several statements.
func TestExportAndPruneInChunks(t *testing.T) {
	t.Parallel()
	stores, conn, _, ws, _ := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	l := newLink(ws.ID, "many")
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	const n = 9000 // more than two chunks
	clicks := make([]link.Click, n)
	for i := range clicks {
		// Newest first, and pairs at one instant.
		clicks[i] = clickOf(l, clickT0.Add(-time.Duration(i/2)*time.Millisecond), uint64(i))
	}
	if _, err := s.Clicks.RecordClicks(ctx, clicks); err != nil {
		t.Fatal(err)
	}
	var got int
	var last time.Time
	if err := s.Clicks.ExportClicks(ctx, ws.ID, time.Time{}, clickT0.Add(time.Hour), func(c *link.Click) error {
		if c.Time.Before(last) {
			return fmt.Errorf("click %d at %v after one at %v", got, c.Time, last)
		}
		last = c.Time
		got++
		return nil
	}); err != nil || got != n {
		t.Fatalf("exported %d clicks, %v; want %d", got, err, n)
	}
	pruned, err := s.Clicks.PruneClicks(ctx, clickT0.Add(time.Hour))
	if err != nil || pruned != n {
		t.Fatalf("PruneClicks = %d, %v; want %d", pruned, err, n)
	}
	if left := count(t, conn, `SELECT count(*) FROM clicks`); left != 0 {
		t.Fatalf("%d raw clicks left", left)
	}
	if got, err := s.Clicks.LinkClicks(ctx, ws.ID, l.ID); err != nil || got != n {
		t.Fatalf("LinkClicks after the prune = %d, %v; want %d", got, err, n)
	}
}

// TestDrainAcrossInstances: two instances draining one backlog at once
// take each click once.
func TestDrainAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, _, _, ws, _ := linkInstances(t, 2)
	ctx := context.Background()
	l := newLink(ws.ID, "spilled")
	if err := stores[0].Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	const n = 200
	clicks := make([]link.Click, n)
	for i := range clicks {
		clicks[i] = clickOf(l, clickT0, uint64(i))
	}
	if spilled, _, err := stores[0].Clicks.SpillClicks(ctx, clicks, 0); err != nil || spilled != n {
		t.Fatalf("SpillClicks = %d, %v", spilled, err)
	}
	var takenA, takenB int
	drain := func(s *link.Store, taken *int) func() error {
		return func() error {
			for {
				got, _, err := s.Clicks.DrainClicks(ctx, 15)
				if err != nil || got == 0 {
					return err
				}
				*taken += got
			}
		}
	}
	if errA, errB := both(drain(stores[0], &takenA), drain(stores[1], &takenB)); errA != nil || errB != nil {
		t.Fatalf("drains: %v, %v", errA, errB)
	}
	if takenA+takenB != n {
		t.Fatalf("the drains took %d and %d clicks, want %d in all", takenA, takenB, n)
	}
	if clicks, bytes, err := stores[1].Clicks.Backlog(ctx); err != nil || clicks != 0 || bytes != 0 {
		t.Fatalf("the drained backlog holds %d clicks of %d bytes, %v", clicks, bytes, err)
	}
	l2, err := stores[1].Links.FindLinkByID(ctx, ws.ID, l.ID)
	if err != nil || l2.Clicks != n {
		t.Fatalf("the link counts %v clicks, %v; want %d", l2, err, n)
	}
}

// TestDeletedCampaignTakesItsStats: deleting a campaign deletes its
// aggregates, as the bbolt store does; its links' and its workspace's
// stay, and a late click naming it counts for them only.
func TestDeletedCampaignTakesItsStats(t *testing.T) {
	t.Parallel()
	stores, conn, _, ws, _ := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	camp := &link.Campaign{WorkspaceID: ws.ID, Name: "Spring"}
	if err := s.Campaigns.CreateCampaign(ctx, camp); err != nil {
		t.Fatal(err)
	}
	l := newLink(ws.ID, "spring")
	l.CampaignID = camp.ID
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	c := clickOf(l, clickT0, 1)
	c.CampaignID = camp.ID
	if _, err := s.Clicks.RecordClicks(ctx, []link.Click{c}); err != nil {
		t.Fatal(err)
	}
	if got := count(t, conn, `SELECT count(*) FROM click_day_sums WHERE campaign_id = $1`, camp.ID); got == 0 {
		t.Fatal("no campaign aggregates recorded")
	}
	if err := s.Campaigns.DeleteCampaign(ctx, ws.ID, camp.ID, true); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"click_hour_sums", "click_day_sums", "click_visitors"} {
		if got := count(t, conn, `SELECT count(*) FROM `+table+` WHERE campaign_id = $1 OR scope LIKE 'c:%'`, camp.ID); got != 0 {
			t.Errorf("%s keeps %d rows of the deleted campaign", table, got)
		}
	}
	c.Visitor = 2
	if skipped, err := s.Clicks.RecordClicks(ctx, []link.Click{c}); err != nil || skipped != 0 {
		t.Fatalf("a late click naming the deleted campaign: %d skipped, %v", skipped, err)
	}
	for _, f := range []link.StatsFilter{{Scope: link.ScopeWorkspace}, {Scope: link.ScopeLink, ID: l.ID}} {
		f.WorkspaceID, f.Start, f.End = ws.ID, clickT0, clickT0.Add(time.Hour)
		if st, err := s.Clicks.Stats(ctx, f); err != nil || st.Clicks != 2 {
			t.Errorf("%s stats: %+v, %v; want 2 clicks", f.Scope, st, err)
		}
	}
}

// TestClicksWhileLinksAreDeleted: batches of links being deleted on
// another instance all commit, and no click row outlives its link.
func TestClicksWhileLinksAreDeleted(t *testing.T) {
	t.Parallel()
	stores, conn, _, ws, _ := linkInstances(t, 2)
	ctx := context.Background()
	var ls []*link.Link
	for i := range 6 {
		l := newLink(ws.ID, fmt.Sprintf("d%d", i))
		if err := stores[0].Links.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	record := func() error {
		for n := range 12 {
			clicks := make([]link.Click, 24)
			for i := range clicks {
				clicks[i] = clickOf(ls[(i+n)%len(ls)], clickT0.Add(time.Duration(n)*time.Minute), uint64(i))
			}
			if _, err := stores[0].Clicks.RecordClicks(ctx, clicks); err != nil {
				return err
			}
		}
		return nil
	}
	remove := func() error {
		for _, l := range ls {
			if err := stores[1].Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
				return err
			}
		}
		return nil
	}
	if errA, errB := both(record, remove); errA != nil || errB != nil {
		t.Fatalf("record: %v; delete: %v", errA, errB)
	}
	for _, table := range []string{"clicks", "click_hour_sums", "click_day_sums", "click_visitors"} {
		if got := count(t, conn, `SELECT count(*) FROM `+table+` WHERE link_id IS NOT NULL`); got != 0 {
			t.Errorf("%s keeps %d rows of deleted links", table, got)
		}
	}
	st, err := stores[1].Clicks.Stats(ctx, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: clickT0, End: clickT0.Add(time.Hour)})
	if err != nil || st.Clicks != 12*24 {
		t.Fatalf("workspace stats: %+v, %v; want %d clicks", st, err, 12*24)
	}
}
