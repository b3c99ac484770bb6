package clickspool

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

var t0 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

// fixture is a PostgreSQL store with one link.
type fixture struct {
	url   string
	store *link.Store
	l     *link.Link
}

func newFixture(t testing.TB, url string) *fixture {
	t.Helper()
	ctx := context.Background()
	s, err := postgres.Open(ctx, postgres.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Data.Close() })
	u := &link.User{Email: "admin@example.com", PasswordHash: []byte("hash")}
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := s.Users.Bootstrap(ctx, u, ws); err != nil {
		t.Fatal(err)
	}
	l := &link.Link{WorkspaceID: ws.ID, Alias: "spooled", DestinationURL: "https://example.com/", RedirectCode: 302}
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	return &fixture{url: url, store: s, l: l}
}

func (f *fixture) click(i int) link.Click {
	return link.Click{LinkID: f.l.ID, WorkspaceID: f.l.WorkspaceID, Time: t0.Add(time.Duration(i) * time.Millisecond),
		Referrer: "t.co", Country: "DE", Device: "desktop", Browser: "Firefox", OS: "Linux", Visitor: uint64(i)}
}

func (f *fixture) clicks(from, n int) []link.Click {
	cs := make([]link.Click, n)
	for i := range cs {
		cs[i] = f.click(from + i)
	}
	return cs
}

// counted returns the link's clicks as analytics count them.
func (f *fixture) counted(t *testing.T) int64 {
	t.Helper()
	l, err := f.store.Links.FindLinkByID(context.Background(), f.l.WorkspaceID, f.l.ID)
	if err != nil {
		t.Fatal(err)
	}
	return l.Clicks
}

func (f *fixture) open(t testing.TB, path string) *Spool {
	t.Helper()
	s, err := Open(context.Background(), path, f.store.Clicks.(Sink), f.store.Clicks)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func spill(t *testing.T, s *Spool, clicks []link.Click, limit int64) int {
	t.Helper()
	n, skipped, err := s.SpillClicks(context.Background(), clicks, limit)
	if err != nil || skipped != 0 {
		t.Fatalf("SpillClicks = %d, %d, %v", n, skipped, err)
	}
	return n
}

func backlog(t *testing.T, s *Spool) int64 {
	t.Helper()
	n, _, err := s.Backlog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReplayExactlyOnce: a stop between the database's commit of a
// replay and the delete from the file leaves the clicks in the file with
// the mark raised: the next start replays them and counts none twice.
// What the database's shared backlog table holds is drained first.
func TestReplayExactlyOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, pgtest.URL(t))
	ctx := context.Background()
	if n, _, err := f.store.Clicks.SpillClicks(ctx, f.clicks(1000, 20), 0); err != nil || n != 20 {
		t.Fatalf("shared SpillClicks = %d, %v", n, err)
	}
	path := filepath.Join(t.TempDir(), FileName)
	s := f.open(t, path)
	spill(t, s, f.clicks(0, 100), 0)
	if n := backlog(t, s); n != 120 {
		t.Fatalf("backlog %d, want 100 in the file and 20 in the table", n)
	}
	if taken, _, err := s.DrainClicks(ctx, 1000); err != nil || taken != 20 {
		t.Fatalf("first drain = %d, %v; want the table's 20", taken, err)
	}
	if n := backlog(t, s); n != 100 {
		t.Fatalf("backlog %d after the table's drain, want 100", n)
	}
	stopped := errors.New("stopped")
	s.afterApply = func() error { return stopped }
	if _, _, err := s.DrainClicks(ctx, 60); !errors.Is(err, stopped) {
		t.Fatalf("drain = %v, want the stop", err)
	}
	if got := f.counted(t); got != 80 {
		t.Fatalf("%d counted after the commit, want 80", got)
	}
	if n := backlog(t, s); n != 100 {
		t.Fatalf("backlog %d after the stop, want the 100 still in the file", n)
	}
	s.Close()

	s = f.open(t, path) // the next start
	if n := backlog(t, s); n != 100 {
		t.Fatalf("backlog %d after reopening, want 100", n)
	}
	for backlog(t, s) > 0 {
		if _, _, err := s.DrainClicks(ctx, 30); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.counted(t); got != 120 {
		t.Fatalf("%d counted after the replay, want 120 (each once)", got)
	}
	conn, err := pgx.Connect(ctx, f.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var applied int64
	if err := conn.QueryRow(ctx, `SELECT applied FROM click_spools WHERE id = $1`, s.ID()).Scan(&applied); err != nil || applied != 100 {
		t.Fatalf("mark %d, %v; want 100", applied, err)
	}
	// A new spill goes on after the mark: counted.
	spill(t, s, f.clicks(200, 5), 0)
	if taken, _, err := s.DrainClicks(ctx, 100); err != nil || taken != 5 || f.counted(t) != 125 {
		t.Fatalf("drain after the replay = %d, %v; %d counted", taken, err, f.counted(t))
	}
}

// TestSpillBoundedByBytes: a spill takes clicks while the file's clicks
// hold at most the limit, and the counts survive a reopen.
func TestSpillBoundedByBytes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, pgtest.URL(t))
	path := filepath.Join(t.TempDir(), FileName)
	s := f.open(t, path)
	const limit = 4096
	n := spill(t, s, f.clicks(0, 1000), limit)
	if n == 0 || n == 1000 {
		t.Fatalf("spilled %d of 1000 under %d bytes", n, limit)
	}
	if again := spill(t, s, f.clicks(1000, 10), limit); again != 0 {
		t.Fatalf("a full spool took %d more", again)
	}
	clicks, bytes, err := s.Backlog(context.Background())
	if err != nil || clicks != int64(n) || bytes > limit || bytes < limit-200 {
		t.Fatalf("Backlog = %d clicks, %d bytes, %v; want %d within %d bytes", clicks, bytes, err, n, limit)
	}
	s.Close()
	s = f.open(t, path)
	if c, b, _ := s.Backlog(context.Background()); c != clicks || b != bytes {
		t.Fatalf("reopened: %d clicks %d bytes, want %d and %d", c, b, clicks, bytes)
	}
	if _, err := Open(context.Background(), path, f.store.Clicks.(Sink), nil); !errors.Is(err, ErrInUse) {
		t.Fatalf("second Open of one file = %v, want ErrInUse", err)
	}
}

// TestTwoSpools: two instances' spools on one database, with the same
// sequence numbers, drain at once and never skip each other's clicks.
func TestTwoSpools(t *testing.T) {
	t.Parallel()
	f := newFixture(t, pgtest.URL(t))
	a := f.open(t, filepath.Join(t.TempDir(), FileName))
	b := f.open(t, filepath.Join(t.TempDir(), FileName))
	if a.ID() == b.ID() {
		t.Fatal("two spools share an ID")
	}
	spill(t, a, f.clicks(0, 300), 0)
	spill(t, b, f.clicks(300, 200), 0)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range []*Spool{a, b} {
		wg.Go(func() {
			for {
				taken, _, err := s.DrainClicks(context.Background(), 25)
				if err != nil || taken == 0 {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if got := f.counted(t); got != 500 {
		t.Fatalf("%d counted, want 500", got)
	}
}

// TestDatabaseDown: while the database is stopped, the recorder spills
// the clicks that keep coming to the spool instead of dropping them; once
// it is back, every click is counted exactly once.
func TestDatabaseDown(t *testing.T) {
	c := pgtest.NewCluster(t)
	f := newFixture(t, c.URL(t))
	ctx := context.Background()
	clock := clocktest.New(t0)
	s := f.open(t, filepath.Join(t.TempDir(), FileName))
	r := analytics.NewRecorder(f.store.Clicks, 10*time.Millisecond, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.SetClock(clock.Now)
	// 1 MiB, some 10,000 clicks: what comes during the first failed
	// write waits there; the outage outgrows it.
	r.SetQueueBytes(1 << 20)
	r.SetEnrich(analytics.Enricher(analytics.NewClassifier(nil), f.store.Clicks))
	if err := r.SetBacklog(ctx, s, 16<<20); err != nil {
		t.Fatal(err)
	}
	r.SetBacklogApart(true)
	r.Start()
	defer r.Close(ctx)
	sent := 0
	record := func(n int) {
		for range n {
			r.Record(link.Click{LinkID: f.l.ID, WorkspaceID: f.l.WorkspaceID, Time: t0, UserAgent: "curl/8"})
			sent++
		}
	}
	record(10)
	if err := r.Flush(ctx); err != nil { // the day's salt is read
		t.Fatal(err)
	}

	c.Stop(t)
	deadline := time.Now().Add(30 * time.Second)
	for spooled, _ := r.Backlogged(); spooled < 20_000; spooled, _ = r.Backlogged() {
		if time.Now().After(deadline) {
			t.Fatalf("%d clicks spooled, %d pending, %d dropped of %d", spooled, r.Pending(), r.Dropped(), sent)
		}
		// Clicks come as fast as the spool's disk takes them: a click
		// the queue holds is not sent past half of it, so that a slow
		// fsync of a loaded machine does not fill the queue (the queue
		// outgrown by a disk that cannot keep up is dropped, and
		// counted, by design). What is spooled still passes twice
		// what the queue holds: the clicks went to disk.
		for r.Pending() > 5000 {
			if time.Now().After(deadline) {
				t.Fatalf("%d clicks pending, none spooled for long", r.Pending())
			}
			time.Sleep(time.Millisecond)
		}
		record(100)
		time.Sleep(5 * time.Millisecond)
	}
	if r.Dropped() != 0 {
		t.Fatalf("%d of %d clicks dropped while the database was down", r.Dropped(), sent)
	}
	if _, failing := r.WriteFailing(); !failing {
		t.Fatal("the recorder does not see writes failing")
	}

	c.Start(t)
	clock.Add(time.Minute) // past any backoff of the drain
	for n, _ := r.Backlogged(); n > 0 || r.Pending() > 0; n, _ = r.Backlogged() {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("%d clicks still spooled, %d pending after the database came back", n, r.Pending())
		}
		clock.Add(time.Second)
		time.Sleep(5 * time.Millisecond)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.counted(t); got != int64(sent) || r.Dropped() != 0 {
		t.Fatalf("%d counted of %d sent, %d dropped", got, sent, r.Dropped())
	}
}
