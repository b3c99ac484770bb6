package storage_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin without the system's zone files

	"github.com/linkbolt/linkbolt/link"
)

// statsOf returns the analytics of a scope over [start, end) with every
// top entry (no limit).
func statsOf(tb testing.TB, s *Services, f link.StatsFilter) *link.Stats {
	tb.Helper()
	if f.TopLimit == 0 {
		f.TopLimit = -1
	}
	st, err := s.Clicks.Stats(context.Background(), f)
	if err != nil {
		tb.Fatalf("stats %+v: %v", f, err)
	}
	return st
}

func te(value string, clicks int64) link.TopEntry { return link.TopEntry{Value: value, Clicks: clicks} }

func mustRecord(tb testing.TB, s *Services, clicks ...link.Click) {
	tb.Helper()
	skipped, err := s.Clicks.RecordClicks(context.Background(), clicks)
	if err != nil {
		tb.Fatalf("record clicks: %v", err)
	}
	if skipped != 0 {
		tb.Fatalf("record clicks: %d of %d skipped", skipped, len(clicks))
	}
}

func TestRecordClicks_Boundaries(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	a := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	b := mustLink(t, s, ws.ID, &link.Link{Alias: "b"})
	c := mustLink(t, s, other.ID, &link.Link{Alias: "c"})

	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	lastMoment := day.Add(24*time.Hour - time.Millisecond) // 23:59:59.999
	nextDay := day.Add(24 * time.Hour)                     // 00:00:00 the day after
	click := func(l *link.Link, at time.Time) link.Click {
		return link.Click{LinkID: l.ID, WorkspaceID: l.WorkspaceID, Time: at, Visitor: uint64(at.UnixNano())}
	}
	h := func(hour int) time.Time { return day.Add(time.Duration(hour) * time.Hour) }
	mustRecord(t, s,
		click(a, h(10).Add(-time.Millisecond)),               // 09:59:59.999
		click(a, h(11).Add(-time.Millisecond)),               // 10:59:59.999
		click(a, h(11)),                                      // 11:00:00
		click(b, h(11).Add(30*time.Minute)),                  // 11:30
		click(a, lastMoment),                                 // 23:59:59.999
		click(b, nextDay),                                    // 00:00 the day after
		click(c, h(11)),                                      // another workspace
		click(a, h(11).In(time.FixedZone("X", 5*3600+1800))), // a zone does not matter
	)
	// A second batch adds to the same keys.
	mustRecord(t, s, click(a, nextDay.Add(time.Minute)))
	mustRecord(t, s)

	for _, tt := range []struct {
		l    *link.Link
		want int64
	}{{a, 6}, {b, 2}, {c, 1}} {
		got, err := s.Links.FindLinkByID(ctx, tt.l.WorkspaceID, tt.l.ID)
		if err != nil || got.Clicks != tt.want {
			t.Fatalf("%s clicks = %d, %v; want %d", tt.l.Alias, got.Clicks, err, tt.want)
		}
	}

	hourly := func(f link.StatsFilter) string {
		t.Helper()
		return fmt.Sprint(statsOf(t, s, f).Hourly)
	}
	bucket := func(hour int, n int64) link.Bucket { return link.Bucket{Start: h(hour), Clicks: n} }
	wsf := func(start, end time.Time) link.StatsFilter {
		return link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: start, End: end}
	}
	for _, tt := range []struct {
		name string
		f    link.StatsFilter
		want []link.Bucket
	}{
		{"whole range", wsf(day, h(48)), []link.Bucket{bucket(9, 1), bucket(10, 1), bucket(11, 3), bucket(23, 1), bucket(24, 2)}},
		{"end excluded", wsf(h(10), h(11)), []link.Bucket{bucket(10, 1)}},
		{"start rounded down to its hour", wsf(h(10).Add(time.Minute), h(11)), []link.Bucket{bucket(10, 1)}},
		{"end rounded up to its hour", wsf(h(11), h(11).Add(time.Nanosecond)), []link.Bucket{bucket(11, 3)}},
		{"empty range", wsf(h(12), h(23)), nil},
		{"no time at all", wsf(h(11), h(11)), nil},
		{"from the zero time", wsf(time.Time{}, h(10)), []link.Bucket{bucket(9, 1)}},
		{"other workspace", link.StatsFilter{WorkspaceID: other.ID, Scope: link.ScopeWorkspace, Start: day, End: h(48)}, []link.Bucket{bucket(11, 1)}},
		{"link", link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: a.ID, Start: day, End: h(48)},
			[]link.Bucket{bucket(9, 1), bucket(10, 1), bucket(11, 2), bucket(23, 1), bucket(24, 1)}},
	} {
		if got, want := hourly(tt.f), fmt.Sprint(tt.want); got != want && !(len(tt.want) == 0 && got == "[]") {
			t.Errorf("%s: hourly %s, want %s", tt.name, got, want)
		}
	}

	// 23:59:59.999 and 00:00 are different days: the daily counts (read
	// for whole days) and the unique visitors say so.
	first := statsOf(t, s, wsf(day, nextDay))
	second := statsOf(t, s, wsf(nextDay, nextDay.Add(24*time.Hour)))
	// (Two clicks of a are the same instant, so the same visitor.)
	if first.Clicks != 6 || second.Clicks != 2 || first.UniqueVisitors != 5 || second.UniqueVisitors != 2 {
		t.Fatalf("days: %d clicks, %d visitors; %d clicks, %d visitors", first.Clicks, first.UniqueVisitors, second.Clicks, second.UniqueVisitors)
	}
	if got := first.Top[link.DimLinks]; fmt.Sprint(got) != fmt.Sprint([]link.TopEntry{te(a.ID, 5), te(b.ID, 1)}) {
		t.Fatalf("first day top links: %v", got)
	}
	tied := []link.TopEntry{te(a.ID, 1), te(b.ID, 1)} // ties by value
	slices.SortFunc(tied, func(x, y link.TopEntry) int { return strings.Compare(x.Value, y.Value) })
	if got := second.Top[link.DimLinks]; fmt.Sprint(got) != fmt.Sprint(tied) {
		t.Fatalf("second day top links: %v", got)
	}
	// The last hour of the day alone, and the first of the next.
	if got := statsOf(t, s, wsf(h(23), h(24))).Top[link.DimLinks]; fmt.Sprint(got) != fmt.Sprint([]link.TopEntry{te(a.ID, 1)}) {
		t.Fatalf("23:00 top links: %v", got)
	}
	if got := statsOf(t, s, wsf(h(24), h(25))).Top[link.DimLinks]; fmt.Sprint(got) != fmt.Sprint(tied) {
		t.Fatalf("00:00 top links: %v", got)
	}
	wantLinkTotals(t, s, a, b, c)
}

// wantLinkTotals checks that each link's Clicks equals its analytics total
// over all time, bots included.
func wantLinkTotals(tb testing.TB, s *Services, links ...*link.Link) {
	tb.Helper()
	for _, l := range links {
		got, err := s.Links.FindLinkByID(context.Background(), l.WorkspaceID, l.ID)
		if err != nil {
			tb.Fatal(err)
		}
		st := statsOf(tb, s, link.StatsFilter{WorkspaceID: l.WorkspaceID, Scope: link.ScopeLink, ID: l.ID, End: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)})
		if got.Clicks != st.Clicks {
			tb.Fatalf("%s: Clicks %d, analytics %d", l.ID, got.Clicks, st.Clicks)
		}
	}
}

func TestRecordClicks_Bots(t *testing.T) {
	s, _, ws := mustSetup(t)
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	human := link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0, Referrer: "news.example.com", Country: "DE",
		Device: "desktop", Browser: "Firefox", OS: "Linux", Visitor: 1}
	bot := link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0.Add(time.Minute), Country: "US",
		Device: "bot", Browser: "curl", OS: "unknown", Bot: true, Visitor: 2}
	mustRecord(t, s, human, human, bot)
	mustRecord(t, s, bot)

	for _, scope := range []link.StatsFilter{
		{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace},
		{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: l.ID},
	} {
		scope.Start, scope.End = t0.Add(-24*time.Hour), t0.Add(24*time.Hour)
		all := statsOf(t, s, scope)
		if all.Clicks != 4 || all.BotClicks != 2 || all.UniqueVisitors != 2 {
			t.Fatalf("%s with bots: %+v", scope.Scope, all)
		}
		if got, want := fmt.Sprint(all.Hourly), fmt.Sprint([]link.Bucket{{Start: t0, Clicks: 4, BotClicks: 2}}); got != want {
			t.Fatalf("hourly %s, want %s", got, want)
		}
		if got, want := fmt.Sprint(all.Top[link.DimReferrers]), "[{direct 2} {news.example.com 2}]"; got != want {
			t.Fatalf("referrers %s, want %s", got, want)
		}
		if got, want := fmt.Sprint(all.Top[link.DimDevices]), "[{bot 2} {desktop 2}]"; got != want {
			t.Fatalf("devices %s, want %s", got, want)
		}
		scope.ExcludeBots = true
		humans := statsOf(t, s, scope)
		if humans.Clicks != 2 || humans.BotClicks != 2 || humans.UniqueVisitors != 1 {
			t.Fatalf("%s without bots: %+v", scope.Scope, humans)
		}
		// The hourly buckets always hold both counts.
		if got, want := fmt.Sprint(humans.Hourly), fmt.Sprint(all.Hourly); got != want {
			t.Fatalf("hourly without bots %s, want %s", got, want)
		}
		for dim, want := range map[string]string{
			link.DimReferrers: "[{news.example.com 2}]", link.DimCountries: "[{DE 2}]", link.DimDevices: "[{desktop 2}]",
			link.DimBrowsers: "[{Firefox 2}]", link.DimOS: "[{Linux 2}]",
		} {
			if got := fmt.Sprint(humans.Top[dim]); got != want {
				t.Fatalf("%s without bots: %s, want %s", dim, got, want)
			}
		}
	}
	wantLinkTotals(t, s, l)
}

// TestRecordClicks_Invalid: a click that cannot be stored is skipped and
// counted, and the valid clicks of its batch are written: the recorder
// retries a failed batch first, so one bad click failing the batch would
// stall every click after it.
func TestRecordClicks_Invalid(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	good := link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0}
	cases := []struct {
		name string
		c    link.Click
	}{
		{"bad link id", link.Click{LinkID: "x", WorkspaceID: ws.ID, Time: t0}},
		{"bad workspace id", link.Click{LinkID: l.ID, WorkspaceID: "", Time: t0}},
		{"bad campaign id", link.Click{LinkID: l.ID, WorkspaceID: ws.ID, CampaignID: "a/b", Time: t0}},
		{"long campaign id", link.Click{LinkID: l.ID, WorkspaceID: ws.ID, CampaignID: fmt.Sprintf("%065d", 1), Time: t0}},
		{"before 1970", link.Click{LinkID: l.ID, WorkspaceID: ws.ID}},
		{"after 2199", link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			skipped, err := s.Clicks.RecordClicks(ctx, []link.Click{tt.c, good})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := skipped, 1; got != want {
				t.Fatalf("skipped = %d, want %d", got, want)
			}
		})
	}
	// A batch of nothing but invalid clicks writes nothing and fails nothing.
	bad := make([]link.Click, len(cases))
	for i, tt := range cases {
		bad[i] = tt.c
	}
	if skipped, err := s.Clicks.RecordClicks(ctx, bad); err != nil || skipped != len(bad) {
		t.Fatalf("all invalid: skipped %d, %v; want %d, nil", skipped, err, len(bad))
	}
	// Each batch's valid click was written, and nothing else.
	if got, _ := s.Links.FindLinkByID(ctx, ws.ID, l.ID); got.Clicks != int64(len(cases)) {
		t.Fatalf("clicks = %d, want %d", got.Clicks, len(cases))
	}
	n := 0
	if err := s.Clicks.ExportClicks(ctx, ws.ID, time.Time{}, time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), func(c *link.Click) error {
		if c.LinkID != l.ID || !c.Time.Equal(t0) || c.CampaignID != "" {
			t.Errorf("raw click %+v is not the valid one", c)
		}
		n++
		return nil
	}); err != nil || n != len(cases) {
		t.Fatalf("raw clicks = %d, %v; want %d", n, err, len(cases))
	}
	st := statsOf(t, s, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t0, End: t0.Add(time.Hour)})
	if got, want := st.Clicks, int64(len(cases)); got != want {
		t.Fatalf("stats clicks = %d, want %d", got, want)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Clicks.RecordClicks(cancelled, []link.Click{good}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}

	// Odd values are stored in a bounded form rather than failing the batch:
	// a referrer that is not a host is (invalid), a host is lower-cased.
	long := string(make([]byte, 300))
	t1 := t0.Add(2 * time.Hour)
	mustRecord(t, s, link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t1, Referrer: long, Country: ""},
		link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t1, Referrer: "News.Example.ORG."})
	st = statsOf(t, s, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t1, End: t1.Add(time.Hour)})
	if got := fmt.Sprint(st.Top[link.DimReferrers]); got != "[{(invalid) 1} {news.example.org 1}]" {
		t.Fatalf("odd referrers: %s", got)
	}
	if got := fmt.Sprint(st.Top[link.DimCountries]); got != "[{unknown 2}]" {
		t.Fatalf("no country: %s", got)
	}
}

func TestRecordClicks_DeletedLink(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	a := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	b := mustLink(t, s, ws.ID, &link.Link{Alias: "b"})
	click := func(l *link.Link, at time.Time) link.Click {
		return link.Click{LinkID: l.ID, WorkspaceID: ws.ID, CampaignID: "cmp_1", Time: at, Visitor: 7}
	}
	mustRecord(t, s, click(a, t0), click(b, t0), click(b, t0.Add(25*time.Hour)))
	if err := s.Links.DeleteLink(ctx, ws.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	// A click of b still in the recorder's queue when b was deleted.
	mustRecord(t, s, click(b, t0.Add(time.Minute)), click(a, t0.Add(time.Minute)))

	all := link.StatsFilter{WorkspaceID: ws.ID, Start: t0.Add(-time.Hour), End: t0.Add(48 * time.Hour)}
	for _, scope := range []link.StatsFilter{
		{Scope: link.ScopeWorkspace}, {Scope: link.ScopeCampaign, ID: "cmp_1"},
	} {
		f := all
		f.Scope, f.ID = scope.Scope, scope.ID
		st := statsOf(t, s, f)
		if st.Clicks != 5 || fmt.Sprint(st.Top[link.DimLinks]) != fmt.Sprint([]link.TopEntry{te(b.ID, 3), te(a.ID, 2)}) {
			t.Fatalf("%s keeps the deleted link's clicks: %d, %v", f.Scope, st.Clicks, st.Top[link.DimLinks])
		}
	}
	f := all
	f.Scope, f.ID = link.ScopeLink, b.ID
	_, err := s.Clicks.Stats(ctx, f)
	wantCode(t, err, link.ENOTFOUND)
	wantLinkTotals(t, s, a)
	// The cleanup's check fails on any link-scope data left for b.
}

func TestStats_Scopes(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	a := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	o := mustLink(t, s, other.ID, &link.Link{Alias: "o"})
	mustRecord(t, s,
		link.Click{LinkID: a.ID, WorkspaceID: ws.ID, CampaignID: "cmp_1", Time: t0},
		link.Click{LinkID: o.ID, WorkspaceID: other.ID, CampaignID: "cmp_1", Time: t0},
		link.Click{LinkID: o.ID, WorkspaceID: other.ID, CampaignID: "cmp_1", Time: t0},
	)
	f := func(wsID string, scope link.StatsFilter) link.StatsFilter {
		scope.WorkspaceID, scope.Start, scope.End = wsID, t0, t0.Add(time.Hour)
		return scope
	}
	// The same campaign ID in two workspaces is two campaigns.
	if got := statsOf(t, s, f(ws.ID, link.StatsFilter{Scope: link.ScopeCampaign, ID: "cmp_1"})); got.Clicks != 1 ||
		fmt.Sprint(got.Top[link.DimLinks]) != fmt.Sprint([]link.TopEntry{te(a.ID, 1)}) {
		t.Fatalf("campaign of ws: %+v", got)
	}
	if got := statsOf(t, s, f(other.ID, link.StatsFilter{Scope: link.ScopeCampaign, ID: "cmp_1"})); got.Clicks != 2 {
		t.Fatalf("campaign of other: %+v", got)
	}
	if got := statsOf(t, s, f(ws.ID, link.StatsFilter{Scope: link.ScopeCampaign, ID: "cmp_2"})); got.Clicks != 0 || len(got.Hourly) != 0 {
		t.Fatalf("campaign without clicks: %+v", got)
	}
	if got := statsOf(t, s, f(ws.ID, link.StatsFilter{Scope: link.ScopeLink, ID: a.ID})); got.Clicks != 1 || len(got.Top[link.DimLinks]) != 0 {
		t.Fatalf("link: %+v", got)
	}
	// Deleting a campaign's aggregates leaves the same ID in another workspace.
	if err := s.Clicks.DeleteCampaignStats(other.ID, "cmp_1"); err != nil {
		t.Fatal(err)
	}
	if got := statsOf(t, s, f(other.ID, link.StatsFilter{Scope: link.ScopeCampaign, ID: "cmp_1"})); got.Clicks != 0 {
		t.Fatalf("deleted campaign of other: %+v", got)
	}
	if got := statsOf(t, s, f(ws.ID, link.StatsFilter{Scope: link.ScopeCampaign, ID: "cmp_1"})); got.Clicks != 1 {
		t.Fatalf("campaign of ws after the other's deletion: %+v", got)
	}
	if got := statsOf(t, s, f(other.ID, link.StatsFilter{Scope: link.ScopeWorkspace})); got.Clicks != 2 {
		t.Fatalf("workspace of the deleted campaign: %+v", got)
	}
	for _, tt := range []struct {
		name string
		f    link.StatsFilter
		code string
	}{
		{"another workspace's link", f(ws.ID, link.StatsFilter{Scope: link.ScopeLink, ID: o.ID}), link.ENOTFOUND},
		{"no such link", f(ws.ID, link.StatsFilter{Scope: link.ScopeLink, ID: "lnk_zzz"}), link.ENOTFOUND},
		{"malformed link", f(ws.ID, link.StatsFilter{Scope: link.ScopeLink, ID: "nope"}), link.ENOTFOUND},
		{"malformed campaign", f(ws.ID, link.StatsFilter{Scope: link.ScopeCampaign, ID: "a/b"}), link.ENOTFOUND},
		{"no such workspace", f("ws_zzz", link.StatsFilter{Scope: link.ScopeWorkspace}), link.ENOTFOUND},
		{"malformed workspace", f("x", link.StatsFilter{Scope: link.ScopeWorkspace}), link.ENOTFOUND},
		{"unknown scope", f(ws.ID, link.StatsFilter{Scope: "tag"}), link.EINVALID},
		{"end before start", link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t0, End: t0.Add(-time.Hour)}, link.EINVALID},
	} {
		_, err := s.Clicks.Stats(ctx, tt.f)
		if got := link.ErrorCode(err); got != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}
}

func TestStats_TopLimit(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	var clicks []link.Click
	links := make([]*link.Link, 12)
	for i := range links {
		links[i] = mustLink(t, s, ws.ID, &link.Link{Alias: fmt.Sprintf("l%02d", i)})
		for range i + 1 {
			clicks = append(clicks, link.Click{LinkID: links[i].ID, WorkspaceID: ws.ID, Time: t0, Referrer: fmt.Sprintf("r%02d.example", i%3)})
		}
	}
	mustRecord(t, s, clicks...)
	f := link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t0, End: t0.Add(time.Hour)}
	st, err := s.Clicks.Stats(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Top[link.DimLinks]; len(got) != 10 || got[0].Value != links[11].ID || got[9].Value != links[2].ID {
		t.Fatalf("default limit: %v", got)
	}
	f.TopLimit = 2
	st, _ = s.Clicks.Stats(ctx, f)
	// r02: 3+6+9+12 = 30, r01: 2+5+8+11 = 26, r00: 22
	if got := fmt.Sprint(st.Top[link.DimReferrers]); got != "[{r02.example 30} {r01.example 26}]" {
		t.Fatalf("limit 2: %s", got)
	}
	// Ties are ordered by value.
	mustRecord(t, s, link.Click{LinkID: links[0].ID, WorkspaceID: ws.ID, Time: t0, Referrer: "r01.example"},
		link.Click{LinkID: links[0].ID, WorkspaceID: ws.ID, Time: t0, Referrer: "r01.example"},
		link.Click{LinkID: links[0].ID, WorkspaceID: ws.ID, Time: t0, Referrer: "r00.example"},
		link.Click{LinkID: links[0].ID, WorkspaceID: ws.ID, Time: t0, Referrer: "r00.example"},
		link.Click{LinkID: links[0].ID, WorkspaceID: ws.ID, Time: t0, Referrer: "r00.example"},
		link.Click{LinkID: links[0].ID, WorkspaceID: ws.ID, Time: t0, Referrer: "r00.example"},
		link.Click{LinkID: links[0].ID, WorkspaceID: ws.ID, Time: t0, Referrer: "r00.example"},
		link.Click{LinkID: links[0].ID, WorkspaceID: ws.ID, Time: t0, Referrer: "r00.example"},
	)
	f.TopLimit = -1
	st, _ = s.Clicks.Stats(ctx, f)
	if got := fmt.Sprint(st.Top[link.DimReferrers]); got != "[{r02.example 30} {r00.example 28} {r01.example 28}]" {
		t.Fatalf("ties: %s", got)
	}
	// A tie across the limit keeps the lower value, as the full order does.
	f.TopLimit = 2
	st, _ = s.Clicks.Stats(ctx, f)
	if got := fmt.Sprint(st.Top[link.DimReferrers]); got != "[{r02.example 30} {r00.example 28}]" {
		t.Fatalf("tie at the limit: %s", got)
	}
	// links[0] now has 9 clicks, as links[8]: the cut at 4 falls in the tie
	// (12, 11, 10, then 9 twice), which the wire IDs order.
	f.TopLimit = 4
	st, _ = s.Clicks.Stats(ctx, f)
	want := []string{links[11].ID, links[10].ID, links[9].ID, min(links[0].ID, links[8].ID)}
	for i, e := range st.Top[link.DimLinks] {
		if e.Value != want[i] {
			t.Fatalf("links tie at the limit: %v, want %v", st.Top[link.DimLinks], want)
		}
	}
	if len(st.Top[link.DimLinks]) != 4 {
		t.Fatalf("links: %v", st.Top[link.DimLinks])
	}
}

// randomClick values, with spreads like real traffic.
var (
	testReferrers = []string{"", "news.ycombinator.com", "www.google.com", "t.co", "www.reddit.com", "duckduckgo.com", "mail.example.org"}
	testCountries = []string{"DE", "US", "FR", "BR", "IN", "unknown"}
	testDevices   = []string{"desktop", "mobile", "tablet", "unknown"}
	testBrowsers  = []string{"Chrome", "Firefox", "Safari", "Edge", "unknown"}
	testOS        = []string{"Windows", "macOS", "Linux", "iOS", "Android"}
)

// randomClicks returns n clicks of links (with their campaigns) at random
// times in [start, start+span), by visitors from a pool of 60 of whom
// every fifth is a bot.
func randomClicks(r *rand.Rand, n int, links []*link.Link, start time.Time, span time.Duration) []link.Click {
	clicks := make([]link.Click, n)
	for i := range clicks {
		l := links[r.IntN(len(links))]
		v := uint64(r.IntN(60) + 1)
		c := link.Click{
			LinkID: l.ID, WorkspaceID: l.WorkspaceID, CampaignID: l.CampaignID,
			Time:     start.Add(time.Duration(r.Int64N(int64(span)))),
			Referrer: testReferrers[r.IntN(len(testReferrers))], Country: testCountries[r.IntN(len(testCountries))],
			Device: testDevices[r.IntN(len(testDevices))], Browser: testBrowsers[r.IntN(len(testBrowsers))],
			OS: testOS[r.IntN(len(testOS))], Visitor: v, Bot: v%5 == 0,
		}
		if c.Bot {
			c.Device, c.Browser = "bot", "Googlebot"
		}
		clicks[i] = c
	}
	return clicks
}

// bruteStats computes what Stats answers by a scan of the clicks.
func bruteStats(clicks []link.Click, f link.StatsFilter) *link.Stats {
	st := &link.Stats{Top: map[string][]link.TopEntry{}}
	hours := map[time.Time]*link.Bucket{}
	top := map[string]map[string]int64{}
	for _, d := range link.Dimensions {
		top[d] = map[string]int64{}
	}
	type dayVisitor struct {
		day     time.Time
		visitor uint64
	}
	visitors := map[dayVisitor]bool{}
	firstDay := f.Start.UTC().Truncate(24 * time.Hour)
	for _, c := range clicks {
		switch {
		case c.WorkspaceID != f.WorkspaceID,
			f.Scope == link.ScopeLink && c.LinkID != f.ID,
			f.Scope == link.ScopeCampaign && c.CampaignID != f.ID:
			continue
		}
		if day := c.Time.UTC().Truncate(24 * time.Hour); f.Start.Before(f.End) && !day.Before(firstDay) && day.Before(f.End) && !(f.ExcludeBots && c.Bot) {
			visitors[dayVisitor{day, c.Visitor}] = true
		}
		if c.Time.Before(f.Start) || !c.Time.Before(f.End) {
			continue
		}
		h := c.Time.UTC().Truncate(time.Hour)
		if hours[h] == nil {
			hours[h] = &link.Bucket{Start: h}
		}
		hours[h].Clicks++
		if c.Bot {
			hours[h].BotClicks++
			st.BotClicks++
			if f.ExcludeBots {
				continue
			}
		}
		st.Clicks++
		ref := c.Referrer
		if ref == "" {
			ref = "direct"
		}
		if f.Scope != link.ScopeLink {
			top[link.DimLinks][c.LinkID]++
		}
		top[link.DimReferrers][ref]++
		top[link.DimCountries][c.Country]++
		top[link.DimDevices][c.Device]++
		top[link.DimBrowsers][c.Browser]++
		top[link.DimOS][c.OS]++
	}
	st.UniqueVisitors = int64(len(visitors))
	for _, b := range hours {
		st.Hourly = append(st.Hourly, *b)
	}
	slices.SortFunc(st.Hourly, func(a, b link.Bucket) int { return a.Start.Compare(b.Start) })
	for d, m := range top {
		list := []link.TopEntry{}
		for v, n := range m {
			list = append(list, link.TopEntry{Value: v, Clicks: n})
		}
		slices.SortFunc(list, func(a, b link.TopEntry) int {
			if a.Clicks != b.Clicks {
				return int(b.Clicks - a.Clicks)
			}
			if a.Value < b.Value {
				return -1
			}
			return 1
		})
		st.Top[d] = list
	}
	return st
}

func TestStats_BruteForce(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	campA := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "A"})
	campB := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "B"})
	otherA := mustCampaign(t, s, other.ID, &link.Campaign{Name: "A"})
	var links []*link.Link
	for i := range 8 {
		l := &link.Link{Alias: fmt.Sprintf("l%d", i)}
		wsID, a, b := ws.ID, campA.ID, campB.ID
		if i >= 6 {
			wsID, a, b = other.ID, otherA.ID, ""
		}
		switch i % 3 {
		case 1:
			l.CampaignID = a
		case 2:
			l.CampaignID = b
		}
		links = append(links, mustLink(t, s, wsID, l))
		if links[i].CampaignID != l.CampaignID {
			t.Fatalf("link %d: campaign %q, want %q", i, links[i].CampaignID, l.CampaignID)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	// A week around the change to summer time in Berlin (2025-03-30).
	start := time.Date(2025, 3, 27, 0, 0, 0, 0, time.UTC)
	span := 7 * 24 * time.Hour
	var clicks []link.Click
	for range 6 {
		batch := randomClicks(r, 700, links, start, span)
		mustRecord(t, s, batch...)
		clicks = append(clicks, batch...)
	}

	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	bday := func(d int) time.Time { return time.Date(2025, 3, 27+d, 0, 0, 0, 0, berlin) }
	type rng struct{ start, end time.Time }
	ranges := []rng{
		{start, start.Add(span)},
		{start.Add(-48 * time.Hour), start.Add(span + 48*time.Hour)},
		{bday(3), bday(4)}, // 2025-03-30 in Berlin: 23 hours
		{bday(1), bday(4)},
		{bday(0), bday(7)},
		{bday(2).Add(9 * time.Hour), bday(2).Add(17 * time.Hour)},
		{start.Add(24 * time.Hour), start.Add(48 * time.Hour)},
		{start.Add(5 * time.Hour), start.Add(6 * time.Hour)},
	}
	for range 12 {
		a, b := r.IntN(7*24+1), r.IntN(7*24+1)
		if a > b {
			a, b = b, a
		}
		ranges = append(ranges, rng{start.Add(time.Duration(a) * time.Hour), start.Add(time.Duration(b) * time.Hour)})
	}
	scopes := []link.StatsFilter{
		{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace},
		{WorkspaceID: other.ID, Scope: link.ScopeWorkspace},
		{WorkspaceID: ws.ID, Scope: link.ScopeCampaign, ID: campA.ID},
		{WorkspaceID: ws.ID, Scope: link.ScopeCampaign, ID: campB.ID},
		{WorkspaceID: other.ID, Scope: link.ScopeCampaign, ID: otherA.ID},
		{WorkspaceID: other.ID, Scope: link.ScopeCampaign, ID: campA.ID}, // a campaign of another workspace: nothing
		{WorkspaceID: ws.ID, Scope: link.ScopeCampaign, ID: otherA.ID},
		{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: links[0].ID},
		{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: links[4].ID},
		{WorkspaceID: other.ID, Scope: link.ScopeLink, ID: links[7].ID},
	}
	for _, rg := range ranges {
		for _, sc := range scopes {
			for _, excl := range []bool{false, true} {
				f := sc
				f.Start, f.End, f.ExcludeBots = rg.start, rg.end, excl
				name := fmt.Sprintf("%s %s [%s, %s) exclude bots %v", f.Scope, f.ID, f.Start.UTC().Format(time.RFC3339), f.End.UTC().Format(time.RFC3339), excl)
				got, want := statsOf(t, s, f), bruteStats(clicks, f)
				if got.Clicks != want.Clicks || got.BotClicks != want.BotClicks || got.UniqueVisitors != want.UniqueVisitors {
					t.Fatalf("%s: clicks %d/%d bots %d/%d visitors %d/%d", name, got.Clicks, want.Clicks, got.BotClicks, want.BotClicks, got.UniqueVisitors, want.UniqueVisitors)
				}
				if g, w := fmt.Sprint(got.Hourly), fmt.Sprint(want.Hourly); g != w && !(len(want.Hourly) == 0 && len(got.Hourly) == 0) {
					t.Fatalf("%s: hourly\n%s\nwant\n%s", name, g, w)
				}
				for _, d := range link.Dimensions {
					if g, w := fmt.Sprint(got.Top[d]), fmt.Sprint(want.Top[d]); g != w {
						t.Fatalf("%s: top %s\n%s\nwant\n%s", name, d, g, w)
					}
					var sum int64
					for _, e := range got.Top[d] {
						sum += e.Clicks
					}
					if sum != got.Clicks && !(d == link.DimLinks && f.Scope == link.ScopeLink) {
						t.Fatalf("%s: top %s sums to %d, clicks %d", name, d, sum, got.Clicks)
					}
				}
			}
		}
	}
	wantLinkTotals(t, s, links...)
}

func TestStats_UniqueVisitors(t *testing.T) {
	s, _, ws := mustSetup(t)
	a := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	b := mustLink(t, s, ws.ID, &link.Link{Alias: "b"})
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	click := func(l *link.Link, at time.Time, visitor uint64, bot bool) link.Click {
		return link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: at, Visitor: visitor, Bot: bot}
	}
	// Day 1: visitors 1 (twice, on both links), 2, and bot 9.
	mustRecord(t, s, click(a, day.Add(time.Hour), 1, false), click(b, day.Add(2*time.Hour), 1, false), click(a, day.Add(3*time.Hour), 2, false))
	mustRecord(t, s, click(a, day.Add(4*time.Hour), 9, true), click(a, day.Add(5*time.Hour), 1, false))
	// Day 2: visitor 1 again (a new day counts again), and 3.
	mustRecord(t, s, click(a, day.Add(25*time.Hour), 1, false), click(a, day.Add(26*time.Hour), 3, false))

	for _, tt := range []struct {
		scope       link.StatsFilter
		start, end  time.Time
		excl        bool
		wantVisitor int64
	}{
		{link.StatsFilter{Scope: link.ScopeWorkspace}, day, day.Add(24 * time.Hour), false, 3},
		{link.StatsFilter{Scope: link.ScopeWorkspace}, day, day.Add(24 * time.Hour), true, 2},
		{link.StatsFilter{Scope: link.ScopeWorkspace}, day, day.Add(48 * time.Hour), false, 5},
		// A range touching a day counts the day's visitors.
		{link.StatsFilter{Scope: link.ScopeWorkspace}, day.Add(23 * time.Hour), day.Add(25 * time.Hour), true, 4},
		{link.StatsFilter{Scope: link.ScopeLink, ID: a.ID}, day, day.Add(24 * time.Hour), false, 3},
		{link.StatsFilter{Scope: link.ScopeLink, ID: b.ID}, day, day.Add(48 * time.Hour), false, 1},
	} {
		f := tt.scope
		f.WorkspaceID, f.Start, f.End, f.ExcludeBots = ws.ID, tt.start, tt.end, tt.excl
		if got := statsOf(t, s, f).UniqueVisitors; got != tt.wantVisitor {
			t.Errorf("%s %s [%s, %s) exclude bots %v: %d visitors, want %d", f.Scope, f.ID, tt.start, tt.end, tt.excl, got, tt.wantVisitor)
		}
	}
}

func TestExportClicks(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	a := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	o := mustLink(t, s, other.ID, &link.Link{Alias: "o"})
	full := link.Click{LinkID: a.ID, WorkspaceID: ws.ID, CampaignID: "cmp_x", Time: t0.Add(time.Nanosecond),
		Referrer: "t.co", Country: "DE", Device: "mobile", Browser: "Safari", OS: "iOS", Visitor: 1 << 63,
		UserAgent: "Mozilla/5.0 (secret)"}
	// Out of order within and across batches, and two clicks in the same nanosecond.
	mustRecord(t, s,
		link.Click{LinkID: a.ID, WorkspaceID: ws.ID, Time: t0.Add(2 * time.Hour), Bot: true, Device: "bot", Visitor: 5},
		full,
		link.Click{LinkID: o.ID, WorkspaceID: other.ID, Time: t0.Add(time.Hour)},
		link.Click{LinkID: a.ID, WorkspaceID: ws.ID, Time: t0, Visitor: 3},
	)
	mustRecord(t, s, link.Click{LinkID: a.ID, WorkspaceID: ws.ID, Time: t0, Visitor: 4},
		link.Click{LinkID: a.ID, WorkspaceID: ws.ID, Time: t0.Add(time.Hour), Visitor: 6})

	export := func(wsID string, start, end time.Time) []link.Click {
		t.Helper()
		var got []link.Click
		if err := s.Clicks.ExportClicks(ctx, wsID, start, end, func(c *link.Click) error {
			got = append(got, *c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	visitors := func(cs []link.Click) []uint64 {
		var out []uint64
		for _, c := range cs {
			out = append(out, c.Visitor)
		}
		return out
	}
	all := export(ws.ID, time.Time{}, t0.Add(24*time.Hour))
	if got, want := fmt.Sprint(visitors(all)), fmt.Sprint([]uint64{3, 4, 1 << 63, 6, 5}); got != want {
		t.Fatalf("order: %s, want %s", got, want)
	}
	want := full
	want.Time, want.UserAgent = full.Time.UTC(), ""
	if got := all[2]; got != want {
		t.Fatalf("full click:\n%+v\nwant\n%+v", got, want)
	}
	if got := all[0]; got.Referrer != "direct" || got.Country != "unknown" || got.CampaignID != "" || got.Bot || got.LinkID != a.ID {
		t.Fatalf("bare click: %+v", got)
	}
	if got := all[4]; !got.Bot || got.Device != "bot" {
		t.Fatalf("bot click: %+v", got)
	}
	// [start, end): the start included to the nanosecond, the end excluded.
	if got := visitors(export(ws.ID, t0.Add(time.Nanosecond), t0.Add(2*time.Hour))); fmt.Sprint(got) != fmt.Sprint([]uint64{1 << 63, 6}) {
		t.Fatalf("range: %v", got)
	}
	if got := visitors(export(other.ID, time.Time{}, t0.Add(24*time.Hour))); fmt.Sprint(got) != "[0]" {
		t.Fatalf("other workspace: %v", got)
	}
	if got := export(ws.ID, t0.Add(3*time.Hour), t0.Add(24*time.Hour)); len(got) != 0 {
		t.Fatalf("empty range: %v", got)
	}

	stop := errors.New("stop")
	n := 0
	err := s.Clicks.ExportClicks(ctx, ws.ID, time.Time{}, t0.Add(24*time.Hour), func(*link.Click) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Fatalf("stop: %v after %d", err, n)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Clicks.ExportClicks(cancelled, ws.ID, time.Time{}, t0.Add(24*time.Hour), func(*link.Click) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	wantCode(t, s.Clicks.ExportClicks(ctx, "ws_zzz", time.Time{}, t0, func(*link.Click) error { return nil }), link.ENOTFOUND)
}

func TestExportClicks_CancelMidway(t *testing.T) {
	s, _, ws := mustSetup(t)
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	clicks := make([]link.Click, 10_000)
	for i := range clicks {
		clicks[i] = link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0.Add(time.Duration(i) * time.Millisecond)}
	}
	mustRecord(t, s, clicks...)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := s.Clicks.ExportClicks(ctx, ws.ID, time.Time{}, t0.Add(time.Hour), func(*link.Click) error {
		if n++; n == 100 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n >= len(clicks) {
		t.Fatalf("cancel midway: %v after %d", err, n)
	}
}

func TestPruneClicks(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	a := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	o := mustLink(t, s, other.ID, &link.Link{Alias: "o"})
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	// 12,000 clicks a day for 5 days in ws, a few in other: more than one
	// prune transaction.
	for d := range 5 {
		clicks := make([]link.Click, 12_000)
		for i := range clicks {
			clicks[i] = link.Click{LinkID: a.ID, WorkspaceID: ws.ID, Time: day.Add(time.Duration(d)*24*time.Hour + time.Duration(i)*7*time.Second), Visitor: uint64(i % 100)}
		}
		clicks = append(clicks, link.Click{LinkID: o.ID, WorkspaceID: other.ID, Time: day.Add(time.Duration(d) * 24 * time.Hour), Visitor: 1})
		mustRecord(t, s, clicks...)
	}
	salts := map[int][]byte{}
	for d := range 5 {
		salt, err := s.Clicks.DailySalt(ctx, day.Add(time.Duration(d)*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		salts[d] = salt
	}
	allTime := func(wsID string) *link.Stats {
		return statsOf(t, s, link.StatsFilter{WorkspaceID: wsID, Scope: link.ScopeWorkspace, End: day.Add(30 * 24 * time.Hour)})
	}
	before := allTime(ws.ID)
	count := func(wsID string) int {
		n := 0
		if err := s.Clicks.ExportClicks(ctx, wsID, time.Time{}, day.Add(30*24*time.Hour), func(*link.Click) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Now is day 4 at noon: visitor sets of days 0 and 1 go, salts of days 0 to 2.
	s.Clock.Add(day.Add(4*24*time.Hour + 12*time.Hour).Sub(s.Clock.Now()))
	cut := day.Add(2*24*time.Hour + 12*time.Hour) // in the middle of day 2
	n, err := s.Clicks.PruneClicks(ctx, cut)
	if err != nil {
		t.Fatal(err)
	}
	// Day 2's clicks are 7 s apart from midnight: those before noon go.
	perDayBefore := (12*3600 + 6) / 7
	if want := 2*12_000 + perDayBefore + 3; n != want {
		t.Fatalf("pruned %d, want %d", n, want)
	}
	if got, want := count(ws.ID), 5*12_000-(2*12_000+perDayBefore); got != want {
		t.Fatalf("%d raw clicks left in ws, want %d", got, want)
	}
	if got := count(other.ID); got != 2 {
		t.Fatalf("%d raw clicks left in other, want 2", got)
	}
	var first link.Click
	_ = s.Clicks.ExportClicks(ctx, ws.ID, time.Time{}, day.Add(30*24*time.Hour), func(c *link.Click) error { first = *c; return errors.New("first only") })
	if first.Time.Before(cut) {
		t.Fatalf("first raw click left at %s, before the cut %s", first.Time, cut)
	}
	// Aggregates stay.
	if after := allTime(ws.ID); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("aggregates changed:\n%+v\n%+v", after, before)
	}
	// A second prune finds nothing.
	if n, err := s.Clicks.PruneClicks(ctx, cut); err != nil || n != 0 {
		t.Fatalf("second prune: %d, %v", n, err)
	}

	// Salts before yesterday (day 3) are new when asked for again.
	for d, old := range salts {
		salt, err := s.Clicks.DailySalt(ctx, day.Add(time.Duration(d)*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if kept := string(salt) == string(old); kept != (d >= 3) {
			t.Errorf("salt of day %d kept = %v", d, kept)
		}
	}

	// Visitor sets of days 0 and 1 are gone: a late click of a known
	// visitor counts again there, not on day 2.
	visitors := func(d int) int64 {
		return statsOf(t, s, link.StatsFilter{WorkspaceID: other.ID, Scope: link.ScopeWorkspace,
			Start: day.Add(time.Duration(d) * 24 * time.Hour), End: day.Add(time.Duration(d+1) * 24 * time.Hour)}).UniqueVisitors
	}
	mustRecord(t, s, link.Click{LinkID: o.ID, WorkspaceID: other.ID, Time: day.Add(time.Hour), Visitor: 1},
		link.Click{LinkID: o.ID, WorkspaceID: other.ID, Time: day.Add(2*24*time.Hour + time.Hour), Visitor: 1})
	if v0, v2 := visitors(0), visitors(2); v0 != 2 || v2 != 1 {
		t.Fatalf("visitors after prune: day 0 %d (want 2), day 2 %d (want 1)", v0, v2)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Clicks.PruneClicks(cancelled, cut); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestDailySalt(t *testing.T) {
	s, _, _ := mustSetup(t)
	ctx := context.Background()
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	first, err := s.Clicks.DailySalt(ctx, day.Add(23*time.Hour))
	if err != nil || len(first) != 32 {
		t.Fatalf("salt %x, %v", first, err)
	}
	// The same UTC day, however written, has the same salt; the next day another.
	same, _ := s.Clicks.DailySalt(ctx, day.In(time.FixedZone("X", -5*3600)))
	next, _ := s.Clicks.DailySalt(ctx, day.Add(24*time.Hour))
	if string(same) != string(first) || len(next) != 32 || string(next) == string(first) {
		t.Fatalf("salts %x, %x, %x", first, same, next)
	}
	// Survives a reopen.
	s.DB = MustReopen(t, s.DB, s.Clock)
	s = newServices(s.DB, s.Clock)
	if again, _ := s.Clicks.DailySalt(ctx, day); string(again) != string(first) {
		t.Fatal("salt changed across a reopen")
	}
	// Racing callers of a new day get one salt.
	var wg sync.WaitGroup
	got := make([][]byte, 16)
	for i := range got {
		wg.Go(func() {
			salt, err := s.Clicks.DailySalt(ctx, day.Add(72*time.Hour))
			if err != nil {
				t.Error(err)
			}
			got[i] = salt
		})
	}
	wg.Wait()
	for _, g := range got {
		if string(g) != string(got[0]) || len(g) != 32 {
			t.Fatalf("racing salts differ: %x, %x", g, got[0])
		}
	}
	_, err = s.Clicks.DailySalt(ctx, time.Time{})
	wantCode(t, err, link.EINVALID)
}

// TestExportClicks_Chunks exports more clicks than one read transaction
// takes: every click comes out once, in order, across the chunk borders.
func TestExportClicks_Chunks(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	a := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	const n = 3*4096 + 17
	clicks := make([]link.Click, n)
	for i := range clicks {
		// Pairs of clicks share a nanosecond, so borders fall inside equal times too.
		clicks[i] = link.Click{LinkID: a.ID, WorkspaceID: ws.ID, Time: t0.Add(time.Duration(i/2) * time.Millisecond), Visitor: uint64(i)}
	}
	mustRecord(t, s, clicks...)
	var got []uint64
	err := s.Clicks.ExportClicks(ctx, ws.ID, t0, t0.Add(time.Hour), func(c *link.Click) error {
		got = append(got, c.Visitor)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("exported %d clicks, want %d", len(got), n)
	}
	for i, v := range got {
		if v != uint64(i) {
			t.Fatalf("click %d is visitor %d", i, v)
		}
	}
}

// TestStats_CrawlerVisitor: a visitor who walks many links (a crawler)
// counts once per link and day however its clicks fall into batches:
// new links of a batch in any order, links clicked again in a later
// batch or twice in one, and the record shared with another visitor's
// links.
func TestStats_CrawlerVisitor(t *testing.T) {
	s, _, ws := mustSetup(t, soloCreations)
	rnd := rand.New(rand.NewPCG(7, 8))
	var links []*link.Link
	for i := range 120 {
		links = append(links, mustLink(t, s, ws.ID, &link.Link{Alias: fmt.Sprintf("c%d", i)}))
	}
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	want := make([]map[uint64]bool, len(links)) // visitors of each link on day
	for i := range want {
		want[i] = map[uint64]bool{}
	}
	for batch := range 6 {
		var clicks []link.Click
		for range 60 {
			i, v := rnd.IntN(len(links)), uint64(1) // the crawler
			if rnd.IntN(4) == 0 {
				v = 2 + uint64(rnd.IntN(3))
			}
			want[i][v] = true
			clicks = append(clicks, link.Click{LinkID: links[i].ID, WorkspaceID: ws.ID,
				Time: day.Add(time.Duration(batch) * time.Hour), Visitor: v})
		}
		mustRecord(t, s, clicks...)
	}
	for i, l := range links {
		f := link.StatsFilter{Scope: link.ScopeLink, ID: l.ID, WorkspaceID: ws.ID, Start: day, End: day.Add(24 * time.Hour)}
		if got := statsOf(t, s, f).UniqueVisitors; got != int64(len(want[i])) {
			t.Errorf("link %d: %d visitors, want %d", i, got, len(want[i]))
		}
	}
	if err := s.DB.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
}
