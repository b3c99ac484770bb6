package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var clickTests = []test{
	{"RecordAndStats", testClicksStats},
	{"StatsScopes", testClicksScopes},
	{"TopLimitAndTies", testClicksTop},
	{"UniqueVisitors", testClicksVisitors},
	{"SkippedClicks", testClicksSkipped},
	{"ConcurrentBatches", testClicksConcurrent},
	{"Export", testClicksExport},
	{"PruneKeepsAggregates", testClicksPrune},
	{"RollUpLinkHours", testClicksRollUp},
	{"DailySalt", testClicksSalt},
	{"Backlog", testClicksBacklog},
	{"BacklogBound", testClicksBacklogBound},
}

// click is a classified click of l at at.
func click(l *link.Link, at time.Time, visitor uint64) link.Click {
	return link.Click{LinkID: l.ID, WorkspaceID: l.WorkspaceID, CampaignID: l.CampaignID, Time: at, Visitor: visitor,
		Referrer: "news.example.org", Country: "DE", Device: "desktop", Browser: "Firefox", OS: "Linux"}
}

func top(entries ...any) []link.TopEntry {
	var out []link.TopEntry
	for i := 0; i < len(entries); i += 2 {
		out = append(out, link.TopEntry{Value: entries[i].(string), Clicks: int64(entries[i+1].(int))})
	}
	return out
}

func testClicksStats(t *testing.T, e *env) {
	_, ws := e.setup()
	a := e.link(ws.ID, &link.Link{Alias: "a"})
	b := e.link(ws.ID, &link.Link{Alias: "b"})
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	mobile := click(a, h(0).Add(10*time.Minute), 2)
	mobile.Referrer, mobile.Country, mobile.Device, mobile.Browser, mobile.OS = "t.co", "FR", "mobile", "Safari", "iOS"
	bot := click(a, h(1), 3)
	bot.Bot, bot.Device, bot.Browser, bot.Referrer = true, "bot", "curl", ""
	e.record(click(a, h(0), 1), mobile, click(b, h(0).Add(59*time.Minute), 1), bot)
	e.record(click(b, h(2), 4)) // a second batch adds to the same aggregates

	if a, b := e.clicksOf(a), e.clicksOf(b); a != 3 || b != 2 {
		t.Fatalf("links' clicks = %d and %d, want 3 and 2", a, b)
	}
	for _, tt := range []struct {
		l    *link.Link
		want int64
	}{{a, 3}, {b, 2}} {
		if n, err := e.Clicks.LinkClicks(e.ctx, ws.ID, tt.l.ID); err != nil || n != tt.want {
			t.Fatalf("LinkClicks(%s) = %d, %v; want %d", tt.l.Alias, n, err, tt.want)
		}
	}
	f := link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: h(-1), End: h(24)}
	st := e.stats(f)
	if st.Clicks != 5 || st.BotClicks != 1 {
		t.Fatalf("workspace: %d clicks, %d bots; want 5, 1", st.Clicks, st.BotClicks)
	}
	if got, want := fmt.Sprint(st.Hourly), fmt.Sprint([]link.Bucket{{Start: h(0), Clicks: 3}, {Start: h(1), Clicks: 1, BotClicks: 1}, {Start: h(2), Clicks: 1}}); got != want {
		t.Fatalf("hourly = %s, want %s", got, want)
	}
	for dim, want := range map[string][]link.TopEntry{
		link.DimLinks:     top(a.ID, 3, b.ID, 2),
		link.DimReferrers: top("news.example.org", 3, "direct", 1, "t.co", 1),
		link.DimCountries: top("DE", 4, "FR", 1),
		link.DimDevices:   top("desktop", 3, "bot", 1, "mobile", 1),
		link.DimBrowsers:  top("Firefox", 3, "Safari", 1, "curl", 1),
		link.DimOS:        top("Linux", 4, "iOS", 1),
	} {
		if got := st.Top[dim]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("top %s = %v, want %v", dim, got, want)
		}
	}
	// Without bots.
	f.ExcludeBots = true
	st = e.stats(f)
	tied := top(a.ID, 2, b.ID, 2) // ties go by value
	slices.SortFunc(tied, func(x, y link.TopEntry) int { return strings.Compare(x.Value, y.Value) })
	if st.Clicks != 4 || fmt.Sprint(st.Top[link.DimLinks]) != fmt.Sprint(tied) {
		t.Fatalf("without bots: %d clicks, top links %v; want 4, a 2 and b 2", st.Clicks, st.Top[link.DimLinks])
	}
	if slices.ContainsFunc(st.Top[link.DimDevices], func(te link.TopEntry) bool { return te.Value == "bot" }) {
		t.Fatalf("without bots, devices list bot: %v", st.Top[link.DimDevices])
	}
	// [Start, End) in whole hours.
	for _, tt := range []struct {
		start, end time.Time
		want       int64
	}{{h(0), h(1), 3}, {h(1), h(2), 1}, {h(1), h(3), 2}, {h(3), h(24), 0}, {h(0), h(0), 0}} {
		if got := e.stats(link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: tt.start, End: tt.end}).Clicks; got != tt.want {
			t.Errorf("[%s, %s): %d clicks, want %d", tt.start.Format("15:04"), tt.end.Format("15:04"), got, tt.want)
		}
	}

	e.restart()
	if got := e.stats(link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: h(-1), End: h(24)}); got.Clicks != 5 || got.BotClicks != 1 {
		t.Fatalf("after a restart: %d clicks, %d bots", got.Clicks, got.BotClicks)
	}
}

func testClicksScopes(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	camp := e.campaign(ws.ID, &link.Campaign{Name: "Spring"})
	theirCamp := e.campaign(other.ID, &link.Campaign{Name: "Theirs"})
	a := e.link(ws.ID, &link.Link{Alias: "a", CampaignID: camp.ID})
	b := e.link(ws.ID, &link.Link{Alias: "b"})
	o := e.link(other.ID, &link.Link{Alias: "o", CampaignID: theirCamp.ID})
	va, vb := click(a, t0, 1), click(a, t0, 2)
	va.Variant, vb.Variant = 1, 2
	e.record(va, vb, click(a, t0, 3), click(b, t0, 4), click(o, t0, 5))

	f := func(scope link.StatsScope, wsID, id string) link.StatsFilter {
		return link.StatsFilter{WorkspaceID: wsID, Scope: scope, ID: id, Start: t0, End: t0.Add(time.Hour)}
	}
	for _, tt := range []struct {
		name string
		f    link.StatsFilter
		want int64
	}{
		{"workspace", f(link.ScopeWorkspace, ws.ID, ""), 4},
		{"other workspace", f(link.ScopeWorkspace, other.ID, ""), 1},
		{"link", f(link.ScopeLink, ws.ID, a.ID), 3},
		{"campaign", f(link.ScopeCampaign, ws.ID, camp.ID), 3},
	} {
		if got := e.stats(tt.f).Clicks; got != tt.want {
			t.Errorf("%s: %d clicks, want %d", tt.name, got, tt.want)
		}
	}
	if got := e.stats(f(link.ScopeLink, ws.ID, a.ID)).Top[link.DimVariants]; fmt.Sprint(got) != fmt.Sprint(top("1", 1, "2", 1)) {
		t.Errorf("a link's variants = %v, want 1 and 2 once each", got)
	}
	for _, tt := range []struct {
		name string
		f    link.StatsFilter
	}{
		{"a link of another workspace", f(link.ScopeLink, ws.ID, o.ID)},
		{"an unknown link", f(link.ScopeLink, ws.ID, "lnk_unknown")},
	} {
		_, err := e.Clicks.Stats(e.ctx, tt.f)
		if link.ErrorCode(err) != link.ENOTFOUND {
			t.Errorf("%s: %v, want not_found", tt.name, err)
		}
	}
	// A campaign of another workspace shows nothing of its clicks: the
	// store answers ENOTFOUND or zeros (the server checks the campaign
	// first).
	if st, err := e.Clicks.Stats(e.ctx, f(link.ScopeCampaign, ws.ID, theirCamp.ID)); err == nil && st.Clicks != 0 || err != nil && link.ErrorCode(err) != link.ENOTFOUND {
		t.Errorf("a campaign of another workspace: %+v, %v; want not_found or no clicks", st, err)
	}
	_, err := e.Clicks.LinkClicks(e.ctx, ws.ID, o.ID)
	wantCode(t, err, link.ENOTFOUND)
}

func testClicksTop(t *testing.T, e *env) {
	_, ws := e.setup()
	l := e.link(ws.ID, &link.Link{Alias: "a"})
	var clicks []link.Click
	for i, ref := range []string{"c.example", "a.example", "b.example", "a.example", "d.example", "a.example", "c.example"} {
		c := click(l, t0, uint64(i))
		c.Referrer = ref
		clicks = append(clicks, c)
	}
	e.record(clicks...)
	st := e.stats(link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t0, End: t0.Add(time.Hour), TopLimit: 3})
	// Most clicks first, ties by value, at most TopLimit.
	if got, want := st.Top[link.DimReferrers], top("a.example", 3, "c.example", 2, "b.example", 1); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("top referrers (limit 3) = %v, want %v", got, want)
	}
	for _, dim := range link.Dimensions {
		if _, ok := st.Top[dim]; !ok {
			t.Errorf("no top list of %s", dim)
		}
	}
}

func testClicksVisitors(t *testing.T, e *env) {
	_, ws := e.setup()
	a := e.link(ws.ID, &link.Link{Alias: "a"})
	b := e.link(ws.ID, &link.Link{Alias: "b"})
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
	botClick := click(a, at(4), 9)
	botClick.Bot = true
	// Day 1: visitor 1 (on both links), 2 and the bot 9. Day 2: 1 again, and 3.
	e.record(click(a, at(1), 1), click(b, at(2), 1), click(a, at(3), 2), botClick, click(a, at(5), 1))
	e.record(click(a, at(25), 1), click(a, at(26), 3))
	for _, tt := range []struct {
		name       string
		f          link.StatsFilter
		start, end time.Time
		excl       bool
		want       int64
	}{
		{"day 1", link.StatsFilter{Scope: link.ScopeWorkspace}, day, at(24), false, 3},
		{"day 1 without bots", link.StatsFilter{Scope: link.ScopeWorkspace}, day, at(24), true, 2},
		{"two days count a visitor on each", link.StatsFilter{Scope: link.ScopeWorkspace}, day, at(48), false, 5},
		{"link a, day 1", link.StatsFilter{Scope: link.ScopeLink, ID: a.ID}, day, at(24), false, 3},
		{"link b", link.StatsFilter{Scope: link.ScopeLink, ID: b.ID}, day, at(48), false, 1},
	} {
		f := tt.f
		f.WorkspaceID, f.Start, f.End, f.ExcludeBots = ws.ID, tt.start, tt.end, tt.excl
		if got := e.stats(f).UniqueVisitors; got != tt.want {
			t.Errorf("%s: %d unique visitors, want %d", tt.name, got, tt.want)
		}
	}
}

func testClicksSkipped(t *testing.T, e *env) {
	_, ws := e.setup()
	l := e.link(ws.ID, &link.Link{Alias: "a"})
	good := click(l, t0, 1)
	bad := []link.Click{
		{LinkID: "x", WorkspaceID: ws.ID, Time: t0},
		{LinkID: l.ID, WorkspaceID: "", Time: t0},
		{LinkID: l.ID, WorkspaceID: ws.ID, CampaignID: "a/b", Time: t0},
		{LinkID: l.ID, WorkspaceID: ws.ID}, // the zero time
		{LinkID: l.ID, WorkspaceID: ws.ID, Time: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for i, c := range bad {
		skipped, err := e.Clicks.RecordClicks(e.ctx, []link.Click{c, good})
		if err != nil || skipped != 1 {
			t.Errorf("bad click %d beside a good one: %d skipped, %v; want 1", i, skipped, err)
		}
	}
	if skipped, err := e.Clicks.RecordClicks(e.ctx, bad); err != nil || skipped != len(bad) {
		t.Fatalf("a batch of bad clicks only: %d skipped, %v; want %d", skipped, err, len(bad))
	}
	if got, want := e.clicksOf(l), int64(len(bad)); got != want {
		t.Fatalf("the link counts %d clicks, want %d (each batch's good one)", got, want)
	}
	if skipped, err := e.Clicks.RecordClicks(e.ctx, nil); err != nil || skipped != 0 {
		t.Fatalf("an empty batch: %d, %v", skipped, err)
	}
}

func testClicksExport(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	a := e.link(ws.ID, &link.Link{Alias: "a"})
	o := e.link(other.ID, &link.Link{Alias: "o"})
	full := link.Click{LinkID: a.ID, WorkspaceID: ws.ID, Time: t0.Add(time.Nanosecond), Referrer: "t.co", Country: "DE",
		Device: "mobile", Browser: "Safari", OS: "iOS", Visitor: 1 << 63, UserAgent: "Mozilla/5.0 (never stored)"}
	// Out of order, within and across batches.
	e.record(click(a, t0.Add(2*time.Hour), 5), full, click(o, t0.Add(time.Hour), 7), click(a, t0, 3))
	e.record(click(a, t0.Add(time.Hour), 6))

	export := func(wsID string, start, end time.Time) []link.Click {
		t.Helper()
		var got []link.Click
		if err := e.Clicks.ExportClicks(e.ctx, wsID, start, end, func(c *link.Click) error { got = append(got, *c); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	visitors := func(cs []link.Click) string {
		var out []uint64
		for _, c := range cs {
			out = append(out, c.Visitor)
		}
		return fmt.Sprint(out)
	}
	all := export(ws.ID, time.Time{}, t0.Add(24*time.Hour))
	if got, want := visitors(all), fmt.Sprint([]uint64{3, 1 << 63, 6, 5}); got != want {
		t.Fatalf("exported visitors %s, want %s (oldest first)", got, want)
	}
	want := full
	want.UserAgent = ""
	if got := all[1]; !got.Time.Equal(want.Time) || got.LinkID != a.ID || got.WorkspaceID != ws.ID || got.Referrer != "t.co" ||
		got.Country != "DE" || got.Device != "mobile" || got.Browser != "Safari" || got.OS != "iOS" || got.Visitor != 1<<63 || got.UserAgent != "" || got.Addr.IsValid() {
		t.Fatalf("exported click:\n%+v\nwant\n%+v", got, want)
	}
	// [start, end) to the nanosecond.
	if got := visitors(export(ws.ID, t0.Add(time.Nanosecond), t0.Add(2*time.Hour))); got != fmt.Sprint([]uint64{1 << 63, 6}) {
		t.Fatalf("range export: %s", got)
	}
	if got := visitors(export(other.ID, time.Time{}, t0.Add(24*time.Hour))); got != "[7]" {
		t.Fatalf("the other workspace exports %s", got)
	}
	if got := export(ws.ID, t0.Add(3*time.Hour), t0.Add(24*time.Hour)); len(got) != 0 {
		t.Fatalf("an empty range exports %v", got)
	}
	// fn's error stops the export and is returned.
	stop := errors.New("stop")
	n := 0
	err := e.Clicks.ExportClicks(e.ctx, ws.ID, time.Time{}, t0.Add(24*time.Hour), func(*link.Click) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 {
		t.Fatalf("stopped export: %v after %d clicks", err, n)
	}
	wantCode(t, e.Clicks.ExportClicks(e.ctx, "ws_unknown", time.Time{}, t0, func(*link.Click) error { return nil }), link.ENOTFOUND)
}

func testClicksPrune(t *testing.T, e *env) {
	_, ws := e.setup()
	l := e.link(ws.ID, &link.Link{Alias: "a"})
	old := t0.Add(-10 * 24 * time.Hour)
	e.record(click(l, old, 1), click(l, old.Add(time.Hour), 2), click(l, t0, 3))
	f := link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: l.ID, Start: old.Add(-time.Hour), End: t0.Add(time.Hour)}
	before := e.stats(f)
	if before.Clicks != 3 {
		t.Fatalf("%d clicks before pruning, want 3", before.Clicks)
	}
	n, err := e.Clicks.PruneClicks(e.ctx, t0.Add(-24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("PruneClicks = %d, %v; want 2", n, err)
	}
	var left []uint64
	if err := e.Clicks.ExportClicks(e.ctx, ws.ID, time.Time{}, t0.Add(time.Hour), func(c *link.Click) error {
		left = append(left, c.Visitor)
		return nil
	}); err != nil || fmt.Sprint(left) != "[3]" {
		t.Fatalf("raw clicks left: %v, %v; want [3]", left, err)
	}
	// The aggregates stay.
	after := e.stats(f)
	if after.Clicks != 3 || fmt.Sprint(after.Hourly) != fmt.Sprint(before.Hourly) || fmt.Sprint(after.Top) != fmt.Sprint(before.Top) {
		t.Fatalf("analytics changed by pruning:\nbefore %+v\nafter  %+v", before, after)
	}
	if got := e.clicksOf(l); got != 3 {
		t.Fatalf("the link counts %d clicks after pruning, want 3", got)
	}
	if n, err := e.Clicks.PruneClicks(e.ctx, t0.Add(-24*time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneClicks again = %d, %v; want 0", n, err)
	}
}

func testClicksRollUp(t *testing.T, e *env) {
	_, ws := e.setup()
	l := e.link(ws.ID, &link.Link{Alias: "a"})
	day := time.Date(2025, 2, 20, 0, 0, 0, 0, time.UTC)
	var clicks []link.Click
	for i := range 30 {
		clicks = append(clicks, click(l, day.Add(time.Duration(i)*5*time.Hour), uint64(i%4)))
	}
	e.record(clicks...)
	f := link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: l.ID, Start: day, End: day.Add(8 * 24 * time.Hour)}
	before := e.stats(f)
	wsBefore := e.stats(link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: day, End: day.Add(8 * 24 * time.Hour)})
	// Roll up the days before day 3 (a time inside day 3 counts as day 3).
	n, err := e.Clicks.RollUpLinkHours(e.ctx, day.Add(3*24*time.Hour+7*time.Hour))
	if err != nil || n == 0 {
		t.Fatalf("RollUpLinkHours = %d, %v; want some", n, err)
	}
	after := e.stats(f)
	if after.Clicks != before.Clicks || after.UniqueVisitors != before.UniqueVisitors || fmt.Sprint(after.Top) != fmt.Sprint(before.Top) {
		t.Fatalf("whole days changed by the roll-up:\nbefore %+v\nafter  %+v", before, after)
	}
	// The rolled-up days answer one point a day, of the day's clicks; the
	// others hour by hour as before.
	rolled := day.Add(3 * 24 * time.Hour)
	series := func(st *link.Stats) (perDay map[time.Time][]int64, hours []link.Bucket) {
		perDay = map[time.Time][]int64{}
		for _, b := range st.Hourly {
			if d := b.Start.Truncate(24 * time.Hour); d.Before(rolled) {
				perDay[d] = append(perDay[d], b.Clicks)
			} else {
				hours = append(hours, b)
			}
		}
		return perDay, hours
	}
	daysBefore, hoursBefore := series(before)
	daysAfter, hoursAfter := series(after)
	for d, counts := range daysBefore {
		var sum int64
		for _, c := range counts {
			sum += c
		}
		if got := daysAfter[d]; len(got) != 1 || got[0] != sum {
			t.Errorf("rolled-up day %s answers %v, want one point of %d", d.Format(time.DateOnly), got, sum)
		}
	}
	if len(daysAfter) != len(daysBefore) {
		t.Errorf("%d rolled-up days answer, want %d", len(daysAfter), len(daysBefore))
	}
	if fmt.Sprint(hoursAfter) != fmt.Sprint(hoursBefore) {
		t.Errorf("the hours after the roll-up's mark changed:\nbefore %v\nafter  %v", hoursBefore, hoursAfter)
	}
	if ws := e.stats(link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: day, End: day.Add(8 * 24 * time.Hour)}); fmt.Sprint(ws.Hourly) != fmt.Sprint(wsBefore.Hourly) {
		t.Fatalf("the workspace's hours changed by a roll-up of link hours")
	}
	if got := e.clicksOf(l); got != 30 {
		t.Fatalf("the link counts %d clicks after the roll-up, want 30", got)
	}
}

func testClicksSalt(t *testing.T, e *env) {
	e.setup()
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	salt := func(at time.Time) []byte {
		t.Helper()
		s, err := e.Clicks.DailySalt(e.ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		if len(s) < 16 {
			t.Fatalf("salt of %v is %d bytes, want a secret of at least 16", at, len(s))
		}
		return s
	}
	first := salt(day.Add(time.Hour))
	if got := salt(day.Add(23*time.Hour + 59*time.Minute)); !bytes.Equal(got, first) {
		t.Fatal("two times of one UTC day have different salts")
	}
	if got := salt(day.Add(time.Hour).In(time.FixedZone("X", -5*3600))); !bytes.Equal(got, first) {
		t.Fatal("a time's zone changed its salt")
	}
	next := salt(day.Add(24 * time.Hour))
	if bytes.Equal(next, first) {
		t.Fatal("two days share a salt")
	}
	e.restart()
	if got := salt(day); !bytes.Equal(got, first) {
		t.Fatal("the salt changed across a restart")
	}
	if got := salt(day.Add(24 * time.Hour)); !bytes.Equal(got, next) {
		t.Fatal("the next day's salt changed across a restart")
	}
}

func testClicksBacklog(t *testing.T, e *env) {
	_, ws := e.setup()
	camp := e.campaign(ws.ID, &link.Campaign{Name: "Spring"})
	a := e.link(ws.ID, &link.Link{Alias: "a", CampaignID: camp.ID})
	b := e.link(ws.ID, &link.Link{Alias: "b"})
	if n, size, err := e.Clicks.Backlog(e.ctx); err != nil || n != 0 || size != 0 {
		t.Fatalf("empty backlog = %d clicks, %d bytes, %v", n, size, err)
	}
	var clicks []link.Click
	for i := range 10 {
		l := a
		if i%3 == 0 {
			l = b
		}
		clicks = append(clicks, click(l, t0.Add(time.Duration(i)*time.Minute), uint64(i)))
	}
	spilled, skipped, err := e.Clicks.SpillClicks(e.ctx, clicks, 0)
	if err != nil || spilled != 10 || skipped != 0 {
		t.Fatalf("SpillClicks = %d, %d skipped, %v; want 10, 0", spilled, skipped, err)
	}
	n, size, err := e.Clicks.Backlog(e.ctx)
	if err != nil || n != 10 || size <= 0 {
		t.Fatalf("Backlog = %d clicks, %d bytes, %v; want 10 and some bytes", n, size, err)
	}
	// Waiting clicks are not in the aggregates yet, but a link's clicks
	// count them.
	if got := e.clicksOf(a); got != 0 {
		t.Fatalf("a spilled click is in the link's total before the drain: %d", got)
	}
	if got, err := e.Clicks.LinkClicks(e.ctx, ws.ID, a.ID); err != nil || got != 6 {
		t.Fatalf("LinkClicks(a) = %d, %v; want 6", got, err)
	}
	// The backlog is on disk.
	e.restart()
	if n, _, _ := e.Clicks.Backlog(e.ctx); n != 10 {
		t.Fatalf("backlog after a restart: %d clicks, want 10", n)
	}
	taken, skipped, err := e.Clicks.DrainClicks(e.ctx, 4)
	if err != nil || taken != 4 || skipped != 0 {
		t.Fatalf("DrainClicks(4) = %d, %d skipped, %v", taken, skipped, err)
	}
	if n, _, _ := e.Clicks.Backlog(e.ctx); n != 6 {
		t.Fatalf("backlog after draining 4: %d, want 6", n)
	}
	if got, _ := e.Clicks.LinkClicks(e.ctx, ws.ID, a.ID); got != 6 {
		t.Fatalf("LinkClicks(a) midway through the drain = %d, want 6", got)
	}
	if taken, _, err := e.Clicks.DrainClicks(e.ctx, 100); err != nil || taken != 6 {
		t.Fatalf("DrainClicks(100) = %d, %v; want 6", taken, err)
	}
	if n, size, _ := e.Clicks.Backlog(e.ctx); n != 0 || size != 0 {
		t.Fatalf("drained backlog = %d clicks, %d bytes", n, size)
	}
	if taken, _, err := e.Clicks.DrainClicks(e.ctx, 100); err != nil || taken != 0 {
		t.Fatalf("draining an empty backlog = %d, %v", taken, err)
	}
	// Drained, the clicks are in every aggregate and raw.
	if a, b := e.clicksOf(a), e.clicksOf(b); a != 6 || b != 4 {
		t.Fatalf("links' clicks after the drain: %d and %d, want 6 and 4", a, b)
	}
	st := e.stats(link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeCampaign, ID: camp.ID, Start: t0, End: t0.Add(time.Hour)})
	if st.Clicks != 6 || st.UniqueVisitors != 6 {
		t.Fatalf("campaign after the drain: %d clicks, %d visitors; want 6, 6", st.Clicks, st.UniqueVisitors)
	}
	var raw int
	if err := e.Clicks.ExportClicks(e.ctx, ws.ID, time.Time{}, t0.Add(time.Hour), func(*link.Click) error { raw++; return nil }); err != nil || raw != 10 {
		t.Fatalf("%d raw clicks after the drain, %v; want 10", raw, err)
	}
}

func testClicksBacklogBound(t *testing.T, e *env) {
	_, ws := e.setup()
	l := e.link(ws.ID, &link.Link{Alias: "a"})
	var clicks []link.Click
	for i := range 40 {
		clicks = append(clicks, click(l, t0.Add(time.Duration(i)*time.Second), uint64(i)))
	}
	clicks[2].LinkID = "lnk_unknown!"
	clicks[3].Time = time.Time{}
	spilled, skipped, err := e.Clicks.SpillClicks(e.ctx, clicks[:10], 0)
	if err != nil || spilled != 10 || skipped != 2 {
		t.Fatalf("spill with two bad clicks = %d, %d skipped, %v; want 10, 2", spilled, skipped, err)
	}
	n, size, err := e.Clicks.Backlog(e.ctx)
	if err != nil || n != 8 {
		t.Fatalf("backlog = %d clicks, %v; want 8", n, err)
	}
	// Room for about five more clicks.
	limit := size + 5*(size/8)
	spilled, _, err = e.Clicks.SpillClicks(e.ctx, clicks[10:], limit)
	if err != nil || spilled < 3 || spilled > 7 {
		t.Fatalf("spill up to %d bytes took %d, %v; want about 5", limit, spilled, err)
	}
	n, size, _ = e.Clicks.Backlog(e.ctx)
	if size > limit || n != int64(8+spilled) {
		t.Fatalf("backlog = %d clicks, %d bytes, after taking %d under a bound of %d", n, size, spilled, limit)
	}
	if more, _, err := e.Clicks.SpillClicks(e.ctx, clicks[10+spilled:], limit); err != nil || more != 0 {
		t.Fatalf("a spill into a full backlog took %d, %v", more, err)
	}
	if taken, _, err := e.Clicks.DrainClicks(e.ctx, 1000); err != nil || taken != 8+spilled {
		t.Fatalf("DrainClicks = %d, %v; want %d", taken, err, 8+spilled)
	}
	if got := e.clicksOf(l); got != int64(8+spilled) {
		t.Fatalf("the link counts %d clicks, want %d", got, 8+spilled)
	}
}

func testClicksConcurrent(t *testing.T, e *env) {
	_, ws := e.setup()
	a := e.link(ws.ID, &link.Link{Alias: "a"})
	b := e.link(ws.ID, &link.Link{Alias: "b"})
	const writers, batches, size = 4, 5, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for n := range batches {
				clicks := make([]link.Click, size)
				for i := range clicks {
					l := a
					if i%4 == 0 {
						l = b
					}
					clicks[i] = click(l, t0.Add(time.Duration(w*batches+n)*time.Minute), uint64(i))
				}
				if skipped, err := e.Clicks.RecordClicks(e.ctx, clicks); err != nil || skipped != 0 {
					t.Errorf("writer %d batch %d: %d skipped, %v", w, n, skipped, err)
				}
			}
		})
	}
	wg.Wait()
	const total = writers * batches * size
	if a, b := e.clicksOf(a), e.clicksOf(b); a != total*3/4 || b != total/4 {
		t.Fatalf("links' clicks = %d and %d, want %d and %d", a, b, total*3/4, total/4)
	}
	st := e.stats(link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t0, End: t0.Add(time.Hour)})
	if st.Clicks != total || st.UniqueVisitors != size {
		t.Fatalf("workspace: %d clicks, %d visitors; want %d, %d", st.Clicks, st.UniqueVisitors, total, size)
	}
}
