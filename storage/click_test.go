package storage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

func TestRecordClicks(t *testing.T) {
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
		return link.Click{LinkID: l.ID, WorkspaceID: l.WorkspaceID, Time: at}
	}
	if err := s.Clicks.RecordClicks(ctx, []link.Click{
		click(a, day.Add(10*time.Hour+59*time.Minute+59*time.Second+999*time.Millisecond)), // 10:59:59.999
		click(a, day.Add(11*time.Hour)),                                      // 11:00:00
		click(b, day.Add(11*time.Hour+30*time.Minute)),                       // 11:30
		click(a, lastMoment),                                                 // 23:59:59.999
		click(b, nextDay),                                                    // 00:00 next day
		click(c, day.Add(11*time.Hour)),                                      // another workspace
		click(a, day.Add(11*time.Hour).In(time.FixedZone("X", 5*3600+1800))), // a zone does not matter
	}); err != nil {
		t.Fatal(err)
	}
	// A second batch adds to the same counters.
	if err := s.Clicks.RecordClicks(ctx, []link.Click{click(a, nextDay.Add(time.Minute))}); err != nil {
		t.Fatal(err)
	}
	if err := s.Clicks.RecordClicks(ctx, nil); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		l    *link.Link
		want int64
	}{{a, 5}, {b, 2}, {c, 1}} {
		got, err := s.Links.FindLinkByID(ctx, tt.l.WorkspaceID, tt.l.ID)
		if err != nil || got.Clicks != tt.want {
			t.Fatalf("%s clicks = %d, %v; want %d", tt.l.Alias, got.Clicks, err, tt.want)
		}
	}
	links, _, err := s.Links.FindLinks(ctx, link.LinkFilter{WorkspaceID: ws.ID})
	if err != nil || len(links) != 2 || links[0].Clicks != 2 || links[1].Clicks != 5 {
		t.Fatalf("list clicks: %+v, %v", links, err)
	}

	h := func(hour int) time.Time { return day.Add(time.Duration(hour) * time.Hour) }
	wantBuckets(t, "workspace hourly, whole range", s.Clicks.WorkspaceHourly)(ws.ID, day, nextDay.Add(24*time.Hour),
		link.Bucket{Start: h(10), Clicks: 1}, link.Bucket{Start: h(11), Clicks: 3},
		link.Bucket{Start: h(23), Clicks: 1}, link.Bucket{Start: h(24), Clicks: 2})
	wantBuckets(t, "workspace hourly, end excluded", s.Clicks.WorkspaceHourly)(ws.ID, h(10), h(11),
		link.Bucket{Start: h(10), Clicks: 1})
	wantBuckets(t, "workspace hourly, start inside an hour", s.Clicks.WorkspaceHourly)(ws.ID, h(10).Add(time.Minute), h(12),
		link.Bucket{Start: h(11), Clicks: 3})
	wantBuckets(t, "workspace hourly, start a nanosecond late", s.Clicks.WorkspaceHourly)(ws.ID, h(11).Add(1), h(12))
	wantBuckets(t, "workspace hourly, empty range", s.Clicks.WorkspaceHourly)(ws.ID, h(12), h(23))
	wantBuckets(t, "workspace hourly, from the zero time", s.Clicks.WorkspaceHourly)(ws.ID, time.Time{}, h(11),
		link.Bucket{Start: h(10), Clicks: 1})
	wantBuckets(t, "other workspace hourly", s.Clicks.WorkspaceHourly)(other.ID, day, nextDay,
		link.Bucket{Start: h(11), Clicks: 1})
	wantBuckets(t, "workspace daily", s.Clicks.WorkspaceDaily)(ws.ID, day, nextDay.Add(24*time.Hour),
		link.Bucket{Start: day, Clicks: 5}, link.Bucket{Start: nextDay, Clicks: 2})

	linkHourly := func(ws, id string, start, end time.Time) ([]link.Bucket, error) {
		return s.Clicks.LinkHourly(ctx, ws, id, start, end)
	}
	linkDaily := func(ws, id string, start, end time.Time) ([]link.Bucket, error) {
		return s.Clicks.LinkDaily(ctx, ws, id, start, end)
	}
	wantLinkBuckets := func(name string, f func(ws, id string, start, end time.Time) ([]link.Bucket, error), l *link.Link, want ...link.Bucket) {
		t.Helper()
		got, err := f(l.WorkspaceID, l.ID, day, nextDay.Add(24*time.Hour))
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: %v, %v; want %v", name, got, err, want)
		}
	}
	wantLinkBuckets("link a hourly", linkHourly, a,
		link.Bucket{Start: h(10), Clicks: 1}, link.Bucket{Start: h(11), Clicks: 2},
		link.Bucket{Start: h(23), Clicks: 1}, link.Bucket{Start: h(24), Clicks: 1})
	wantLinkBuckets("link a daily", linkDaily, a, link.Bucket{Start: day, Clicks: 4}, link.Bucket{Start: nextDay, Clicks: 1})
	wantLinkBuckets("link b daily", linkDaily, b, link.Bucket{Start: day, Clicks: 1}, link.Bucket{Start: nextDay, Clicks: 1})
	_, err = s.Clicks.LinkHourly(ctx, other.ID, a.ID, day, nextDay)
	wantCode(t, err, link.ENOTFOUND)
	_, err = s.Clicks.WorkspaceHourly(ctx, "ws_zzz", day, nextDay)
	wantCode(t, err, link.ENOTFOUND)

	// Clicks of a link deleted meanwhile count for the workspace only.
	if err := s.Links.DeleteLink(ctx, ws.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Clicks.RecordClicks(ctx, []link.Click{click(b, h(11)), click(a, h(11))}); err != nil {
		t.Fatal(err)
	}
	wantBuckets(t, "workspace hourly after delete", s.Clicks.WorkspaceHourly)(ws.ID, h(11), h(12), link.Bucket{Start: h(11), Clicks: 5})
	if got, _ := s.Links.FindLinkByID(ctx, ws.ID, a.ID); got.Clicks != 6 {
		t.Fatalf("a clicks = %d, want 6", got.Clicks)
	}
	_, err = s.Clicks.LinkDaily(ctx, ws.ID, b.ID, day, nextDay)
	wantCode(t, err, link.ENOTFOUND)
	// (The cleanup's index check fails on any click data left for b.)
}

func TestRecordClicks_Invalid(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	good := link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0}
	for _, tt := range []struct {
		name string
		c    link.Click
	}{
		{"bad link id", link.Click{LinkID: "x", WorkspaceID: ws.ID, Time: t0}},
		{"bad workspace id", link.Click{LinkID: l.ID, WorkspaceID: "", Time: t0}},
		{"before 1970", link.Click{LinkID: l.ID, WorkspaceID: ws.ID}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantCode(t, s.Clicks.RecordClicks(ctx, []link.Click{good, tt.c}), link.EINVALID)
		})
	}
	// Nothing of the refused batches was written.
	if got, _ := s.Links.FindLinkByID(ctx, ws.ID, l.ID); got.Clicks != 0 {
		t.Fatalf("clicks = %d, want 0", got.Clicks)
	}
}

type bucketsFunc func(ctx context.Context, ws string, start, end time.Time) ([]link.Bucket, error)

func wantBuckets(t *testing.T, name string, f bucketsFunc) func(ws string, start, end time.Time, want ...link.Bucket) {
	return func(ws string, start, end time.Time, want ...link.Bucket) {
		t.Helper()
		got, err := f(context.Background(), ws, start, end)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
		for i := range got {
			if !got[i].Start.Equal(want[i].Start) || got[i].Clicks != want[i].Clicks {
				t.Fatalf("%s: %v, want %v", name, got, want)
			}
		}
	}
}
