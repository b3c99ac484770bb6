package storage_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
)

// TestRecorder_InvalidClickDoesNotStallQueue: a malformed click in the
// queue (here a link ID that is no ID, and a time before 1970) is dropped,
// counted and logged, and the valid clicks of the same batch and of every
// later flush are written. Before, the store failed the whole batch, the
// recorder kept it to retry first on every flush, and nothing was ever
// written again.
func TestRecorder_InvalidClickDoesNotStallQueue(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	var log bytes.Buffer
	r := analytics.NewRecorder(s.Clicks, time.Hour, 100, slog.New(slog.NewTextHandler(&log, nil)))
	r.SetClock(s.Clock.Now)
	valid := func(i int) link.Click {
		return link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0.Add(time.Duration(i) * time.Second), Referrer: "t.co"}
	}

	r.Record(valid(0))
	r.Record(link.Click{LinkID: "lnk_nope!", WorkspaceID: ws.ID, Time: t0})
	r.Record(link.Click{LinkID: l.ID, WorkspaceID: ws.ID}) // year 1
	r.Record(valid(1))
	if err := r.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if got, want := r.Written(), int64(2); got != want {
		t.Fatalf("written = %d, want %d", got, want)
	}
	if got, want := r.Dropped(), int64(2); got != want {
		t.Fatalf("dropped = %d, want %d", got, want)
	}
	if got := r.Pending(); got != 0 {
		t.Fatalf("pending = %d, want 0: the bad clicks are held for a retry", got)
	}
	if _, failing := r.WriteFailing(); failing {
		t.Fatal("writes are reported failing")
	}
	if !strings.Contains(log.String(), "cannot be stored") {
		t.Fatalf("no log line for the dropped clicks: %q", log.String())
	}

	// Later clicks are written; another bad one within the minute is
	// counted but not logged again.
	log.Reset()
	r.Record(valid(2))
	r.Record(link.Click{LinkID: l.ID, WorkspaceID: ws.ID, CampaignID: "a/b", Time: t0})
	r.Record(valid(3))
	if err := r.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if got, want := r.Written(), int64(4); got != want {
		t.Fatalf("written = %d, want %d", got, want)
	}
	if got, want := r.Dropped(), int64(3); got != want {
		t.Fatalf("dropped = %d, want %d", got, want)
	}
	if log.Len() != 0 {
		t.Fatalf("drop logged again within a minute: %q", log.String())
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}

	got, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Clicks != 4 {
		t.Fatalf("link clicks = %d, want 4", got.Clicks)
	}
	var times []time.Time
	err = s.Clicks.ExportClicks(ctx, ws.ID, t0, t0.Add(time.Hour), func(c *link.Click) error {
		if c.Referrer != "t.co" {
			t.Errorf("referrer = %q, want t.co", c.Referrer)
		}
		times = append(times, c.Time)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 4 {
		t.Fatalf("exported %d raw clicks, want 4", len(times))
	}
	for i, tm := range times {
		if want := valid(i).Time; !tm.Equal(want) {
			t.Fatalf("raw click %d at %v, want %v", i, tm, want)
		}
	}
}
