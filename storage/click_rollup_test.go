package storage_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// TestRollUpLinkHours: after a link's hours before a day are rolled up,
// its analytics of whole days are what they were (totals, bots, unique
// visitors, every top list), its time series holds one point a rolled
// day at 12:00 UTC with the day's clicks, a range with an edge inside a
// rolled day counts that whole day, the workspace's analytics are
// untouched, and the checker (run at cleanup) is satisfied. Late clicks
// for a rolled day count, and the next roll-up deletes their hours.
func TestRollUpLinkHours(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	var links []*link.Link
	for i := range 3 {
		links = append(links, mustLink(t, s, ws.ID, &link.Link{Alias: fmt.Sprintf("r%d", i)}))
	}
	day0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	days := func(n int) time.Time { return day0.Add(time.Duration(n) * 24 * time.Hour) }
	r := rand.New(rand.NewPCG(3, 4))
	mustRecord(t, s, randomClicks(r, 4000, links, day0, 10*24*time.Hour)...)

	whole := func(l *link.Link, from, to int) link.StatsFilter {
		return link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: l.ID, Start: days(from), End: days(to)}
	}
	wsAll := link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: days(-1), End: days(11)}
	before := map[string]*link.Stats{}
	for _, l := range links {
		for _, f := range []link.StatsFilter{whole(l, 0, 10), whole(l, 2, 7), whole(l, 6, 10)} {
			before[fmt.Sprint(l.ID, f.Start, f.End)] = statsOf(t, s, f)
		}
	}
	wsBefore := statsOf(t, s, wsAll)
	if n, _ := s.DB.LinkHourKeys(days(6)); n == 0 {
		t.Fatal("no link hours to roll up")
	}

	// Roll up everything before day 6 (a time inside day 6 rounds down).
	deleted, err := s.Clicks.RollUpLinkHours(ctx, days(6).Add(7*time.Hour))
	if err != nil || deleted == 0 {
		t.Fatalf("roll up: %d, %v", deleted, err)
	}
	if n, _ := s.DB.LinkHourKeys(days(6)); n != 0 {
		t.Fatalf("%d link hours left before day 6", n)
	}
	if n, _ := s.DB.LinkHourKeys(days(11)); n == 0 {
		t.Fatal("the hours of day 6 and after are gone too")
	}
	for _, l := range links {
		for _, f := range []link.StatsFilter{whole(l, 0, 10), whole(l, 2, 7), whole(l, 6, 10)} {
			want, got := before[fmt.Sprint(l.ID, f.Start, f.End)], statsOf(t, s, f)
			if got.Clicks != want.Clicks || got.BotClicks != want.BotClicks || got.UniqueVisitors != want.UniqueVisitors ||
				fmt.Sprint(got.Top) != fmt.Sprint(want.Top) {
				t.Errorf("link %s %s..%s after the roll-up:\n got %d %d %d %v\nwant %d %d %d %v", l.Alias, f.Start, f.End,
					got.Clicks, got.BotClicks, got.UniqueVisitors, got.Top, want.Clicks, want.BotClicks, want.UniqueVisitors, want.Top)
			}
			// The series: one point at noon for a rolled day, the
			// hours as before for the others.
			perDay := map[time.Time][2]int64{}
			for _, b := range want.Hourly {
				d := b.Start.Truncate(24 * time.Hour)
				if d.Before(days(6)) {
					p := perDay[d]
					perDay[d] = [2]int64{p[0] + b.Clicks, p[1] + b.BotClicks}
				}
			}
			var wantSeries []link.Bucket
			for _, b := range want.Hourly {
				d := b.Start.Truncate(24 * time.Hour)
				if !d.Before(days(6)) {
					wantSeries = append(wantSeries, b)
				} else if p, ok := perDay[d]; ok {
					wantSeries = append(wantSeries, link.Bucket{Start: d.Add(12 * time.Hour), Clicks: p[0], BotClicks: p[1]})
					delete(perDay, d)
				}
			}
			if fmt.Sprint(got.Hourly) != fmt.Sprint(wantSeries) {
				t.Errorf("link %s %s..%s series:\n got %v\nwant %v", l.Alias, f.Start, f.End, got.Hourly, wantSeries)
			}
		}
	}
	if got := statsOf(t, s, wsAll); fmt.Sprint(got) != fmt.Sprint(wsBefore) {
		t.Errorf("workspace analytics changed:\n got %+v\nwant %+v", got, wsBefore)
	}

	// An edge inside a rolled day counts the whole day.
	l := links[0]
	edge := statsOf(t, s, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: l.ID, Start: days(2).Add(15 * time.Hour), End: days(3).Add(3 * time.Hour)})
	if want := before[fmt.Sprint(l.ID, days(2), days(7))]; edge.Clicks == 0 || edge.Clicks != statsOf(t, s, whole(l, 2, 4)).Clicks || edge.Clicks > want.Clicks {
		t.Errorf("a range of 12 hours over two rolled days: %d clicks, the two whole days %d", edge.Clicks, statsOf(t, s, whole(l, 2, 4)).Clicks)
	}

	// A late click for a rolled day (an import) counts; the next roll-up
	// deletes its hour, and a roll-up never moves the mark back.
	late := link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: days(4).Add(5 * time.Hour), Referrer: "late.example", Visitor: 99}
	mustRecord(t, s, late)
	if got, want := statsOf(t, s, whole(l, 0, 10)).Clicks, before[fmt.Sprint(l.ID, days(0), days(10))].Clicks+1; got != want {
		t.Errorf("after a late click: %d clicks, want %d", got, want)
	}
	if n, _ := s.DB.LinkHourKeys(days(6)); n != 1 {
		t.Fatalf("the late click left %d link hours before day 6, want 1", n)
	}
	if _, err := s.Clicks.RollUpLinkHours(ctx, days(3)); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.DB.LinkHourKeys(days(6)); n != 0 {
		t.Fatalf("%d link hours before day 6 after another roll-up", n)
	}
	if got, want := statsOf(t, s, whole(l, 0, 10)).Clicks, before[fmt.Sprint(l.ID, days(0), days(10))].Clicks+1; got != want {
		t.Errorf("after a roll-up with an earlier time: %d clicks, want %d (the mark moved back?)", got, want)
	}
}
