package analytics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// backlogSetup is a real data file with one workspace and a hundred links,
// and a recorder writing to it with a backlog of limit bytes. Each test
// has a file, clock and recorder of its own, so the tests run in parallel.
type backlogSetup struct {
	db     *storage.DB
	clicks *storage.ClickService
	links  *storage.LinkService
	ws     string
	ids    []string
	clock  *clocktest.Clock
	rec    *Recorder
	n      int // clicks recorded
}

var backlogT0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func newBacklogSetup(t *testing.T, limit int64) *backlogSetup {
	t.Helper()
	b := &backlogSetup{clock: clocktest.New(backlogT0)}
	b.db = storage.NewDB(filepath.Join(t.TempDir(), "linkbolt.db"))
	b.db.Now = b.clock.Now
	if err := b.db.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.db.Close() })
	ctx := context.Background()
	u := &link.User{Email: "admin@example.com", PasswordHash: []byte("hash")}
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := storage.NewUserService(b.db).Bootstrap(ctx, u, ws); err != nil {
		t.Fatal(err)
	}
	b.ws = ws.ID
	b.links, b.clicks = storage.NewLinkService(b.db), storage.NewClickService(b.db)
	// One transaction for the hundred, not one (and one fsync) each.
	ls := make([]*link.Link, 100)
	for i := range ls {
		ls[i] = &link.Link{WorkspaceID: ws.ID, Alias: fmt.Sprintf("l%d", i), DestinationURL: "https://example.com/"}
	}
	errs, err := b.links.CreateLinks(ctx, ws.ID, ls)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range ls {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		b.ids = append(b.ids, l.ID)
	}
	b.rec = b.newRecorder(t, limit)
	return b
}

// newRecorder returns a recorder on the data file, as a server start makes
// one: it reads what the backlog holds.
func (b *backlogSetup) newRecorder(t *testing.T, limit int64) *Recorder {
	t.Helper()
	r := NewRecorder(timedDrains{b.clicks, b.clock}, time.Hour, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.SetClock(b.clock.Now)
	if limit > 0 {
		if err := r.SetBacklog(context.Background(), timedDrains{b.clicks, b.clock}, limit); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// timedDrains is the real click store on a clock that a drain moves on by
// 300 ms: what a drain takes at a million links under a flood.
type timedDrains struct {
	*storage.ClickService
	clock *clocktest.Clock
}

func (s timedDrains) DrainClicks(ctx context.Context, max int) (int, int, error) {
	s.clock.Add(300 * time.Millisecond)
	return s.ClickService.DrainClicks(ctx, max)
}

// record queues n clicks spread over the links.
func (b *backlogSetup) record(n int) {
	for range n {
		b.rec.Record(link.Click{LinkID: b.ids[b.n%len(b.ids)], WorkspaceID: b.ws, Time: b.clock.Now(), Referrer: "t.co"})
		b.n++
	}
}

func (b *backlogSetup) backlog(t *testing.T) int64 {
	t.Helper()
	n, _, err := b.clicks.Backlog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := b.rec.Backlogged(); got != n {
		t.Fatalf("the recorder says %d clicks wait in the backlog, the file %d", got, n)
	}
	return n
}

// cycleUntilDrained runs the writer's cycle, a minute apart, at least once
// and until the backlog is empty, failing after most cycles.
func (b *backlogSetup) cycleUntilDrained(t *testing.T, most int) {
	t.Helper()
	for i := 0; i == 0 || b.backlog(t) > 0; i++ {
		if i >= most {
			t.Fatalf("backlog %d after %d cycles", b.backlog(t), i)
		}
		b.clock.Add(time.Minute)
		if err := b.rec.cycle(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// addLinks creates n more links.
func (b *backlogSetup) addLinks(t *testing.T, n int) {
	t.Helper()
	for len(b.ids) < 100+n {
		var ls []*link.Link
		for i := range min(1000, 100+n-len(b.ids)) {
			ls = append(ls, &link.Link{WorkspaceID: b.ws, Alias: fmt.Sprintf("m%d", len(b.ids)+i), DestinationURL: "https://example.com/"})
		}
		errs, err := b.links.CreateLinks(context.Background(), b.ws, ls)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range ls {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			b.ids = append(b.ids, l.ID)
		}
	}
}

// wantAllCounted checks that n clicks are counted on the links and as
// written, and none dropped.
func (b *backlogSetup) wantAllCounted(t *testing.T, n int64) {
	t.Helper()
	if got := b.counted(t); got != n {
		t.Fatalf("%d clicks counted, want %d", got, n)
	}
	if got := b.rec.Written(); got != n {
		t.Fatalf("written %d, want %d", got, n)
	}
	if d := b.rec.Dropped(); d != 0 {
		t.Fatalf("%d clicks dropped", d)
	}
}

// counted is the sum of every link's stored total.
func (b *backlogSetup) counted(t *testing.T) int64 {
	t.Helper()
	var sum int64
	for _, id := range b.ids {
		l, err := b.links.FindLinkByID(context.Background(), b.ws, id)
		if err != nil {
			t.Fatal(err)
		}
		sum += l.Clicks
	}
	return sum
}

// TestRecorderBacklog_ManyLinks: clicks too few for the writer to be
// behind, but of more links than one write takes, are written one part
// (maxWriteLinks links) into the aggregates and the rest spilled, to be
// drained in parts: the writer does not spend cycle after cycle writing
// parts while the queue fills up. Clicks of fewer links are written at
// once.
func TestRecorderBacklog_ManyLinks(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	b.addLinks(t, 12_000)
	b.n = 100 // record one click of each new link
	b.record(12_000)
	if err := b.rec.cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := b.rec.Written(), int64(maxWriteLinks); got != want {
		t.Fatalf("written %d clicks into the aggregates, want one part: %d", got, want)
	}
	if got, want := b.backlog(t), int64(12_000-maxWriteLinks); got != want {
		t.Fatalf("backlog %d, want %d", got, want)
	}
	if p := b.rec.Pending(); p != 0 {
		t.Fatalf("%d clicks still queued", p)
	}
	b.cycleUntilDrained(t, 3)
	// 12,000 clicks of 100 links: not behind, and one part.
	for i := range 12_000 {
		b.rec.Record(link.Click{LinkID: b.ids[i%100], WorkspaceID: b.ws, Time: b.clock.Now(), Referrer: "t.co"})
	}
	if err := b.rec.cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.backlog(t); got != 0 {
		t.Fatalf("backlog %d after clicks of 100 links, want 0", got)
	}
	b.wantAllCounted(t, 24_000)
}

// TestRecorderBacklog_ManyLinksFull: clicks of more links than one part
// takes, while the writer is not behind, are not dropped when the backlog
// cannot take the rest: what it cannot take is written into the
// aggregates, as all of them were before the bound by links.
func TestRecorderBacklog_ManyLinksFull(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 128<<10) // some 2,500 clicks of 7,000
	b.addLinks(t, 12_000)
	b.n = 100 // record one click of each new link
	b.record(12_000)
	if err := b.rec.cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := b.rec.Dropped(); d != 0 {
		t.Fatalf("%d clicks dropped", d)
	}
	kept := b.backlog(t)
	if kept == 0 || kept >= 12_000-maxWriteLinks {
		t.Fatalf("backlog %d, want some of the %d past the first part", kept, 12_000-maxWriteLinks)
	}
	if got, want := b.rec.Written()+kept, int64(12_000); got != want {
		t.Fatalf("written %d and %d in the backlog, want %d", b.rec.Written(), kept, want)
	}
	if p := b.rec.Pending(); p != 0 {
		t.Fatalf("%d clicks still queued", p)
	}
	b.cycleUntilDrained(t, 3)
	b.wantAllCounted(t, 12_000)
}

// failingWrites is the real click store whose next fail writes into the
// aggregates fail.
type failingWrites struct {
	timedDrains
	fail int
}

func (s *failingWrites) RecordClicks(ctx context.Context, clicks []link.Click) (int, error) {
	if s.fail > 0 {
		s.fail--
		return 0, errors.New("disk full")
	}
	return s.timedDrains.RecordClicks(ctx, clicks)
}

// TestRecorderBacklog_ManyLinksAfterFailure: a cycle that is not behind
// writes one part into the aggregates also when a failed batch waits
// before the clicks queued since: the probe of the failed batch, and the
// rest of both is spilled.
func TestRecorderBacklog_ManyLinksAfterFailure(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	b.addLinks(t, 16_000)
	ctx := context.Background()
	drains := timedDrains{b.clicks, b.clock}
	b.rec = NewRecorder(&failingWrites{timedDrains: drains, fail: 1}, time.Hour, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.rec.SetClock(b.clock.Now)
	if err := b.rec.SetBacklog(ctx, drains, 64<<20); err != nil {
		t.Fatal(err)
	}
	b.n = 100 // record one click of each new link
	b.record(8_000)
	if err := b.rec.cycle(ctx); err == nil {
		t.Fatal("the first write did not fail")
	}
	b.record(8_000)
	if err := b.rec.cycle(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := b.rec.Written(), int64(probeWrite); got != want {
		t.Fatalf("written %d clicks into the aggregates, want one part: %d", got, want)
	}
	if got, want := b.backlog(t), int64(16_000-probeWrite); got != want {
		t.Fatalf("backlog %d, want %d", got, want)
	}
	b.cycleUntilDrained(t, 4)
	b.wantAllCounted(t, 16_000)
}

// TestRecorderBacklog_Flood walks the writer through a flood: a queue
// larger than one write spills to the backlog; while clicks come faster
// than floodRate, a drain is followed by a pause of three times its
// length in which the writer only spills; once the flood is over it
// drains at once; nothing is dropped and every click is counted once.
func TestRecorderBacklog_Flood(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	ctx := context.Background()
	step := func(what string, wantBacklog int64) {
		t.Helper()
		if err := b.rec.cycle(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := b.backlog(t); got != wantBacklog {
			t.Fatalf("%s: backlog %d, want %d", what, got, wantBacklog)
		}
		if p := b.rec.Pending(); p != 0 {
			t.Fatalf("%s: %d clicks still queued", what, p)
		}
	}

	// A small queue is written straight into the aggregates.
	b.record(500)
	step("a small queue", 0)
	if got := b.counted(t); got != 500 {
		t.Fatalf("%d clicks counted, want 500", got)
	}
	// More than a write's worth, and fast (30,000 in a second): spilled,
	// and a small part drained (it takes 300 ms); then a pause three times
	// as long.
	b.clock.Add(time.Second)
	b.record(maxWrite + 10_000)
	backlog := int64(maxWrite + 10_000 - drainWrite)
	step("a flood", backlog)
	b.clock.Add(100 * time.Millisecond)
	b.record(5_000)
	backlog += 5_000
	step("flooding, within the pause", backlog)
	b.clock.Add(time.Second)
	b.record(30_000)
	backlog += 30_000 - drainWrite
	step("flooding, after the pause", backlog)
	if d := b.rec.Dropped(); d != 0 {
		t.Fatalf("%d clicks dropped", d)
	}
	// The flood is over: the backlog drains part after part, each cycle
	// queueing the next itself.
	for backlog > 0 {
		b.clock.Add(time.Second)
		backlog = max(backlog-drainWrite, 0)
		step("the flood is over", backlog)
		select {
		case <-b.rec.kick:
			if backlog == 0 {
				t.Fatal("an empty backlog queued another cycle")
			}
		default:
			if backlog > 0 {
				t.Fatal("a drain that left clicks behind did not queue the next cycle")
			}
		}
	}
	if got, want := b.counted(t), int64(b.n); got != want {
		t.Fatalf("%d clicks counted, want %d", got, want)
	}
	if got := b.rec.Written(); got != int64(b.n) {
		t.Fatalf("written = %d, want %d", got, b.n)
	}
}

// TestRecorderBacklog_DrainsAfterFlood: the cycle after a drain that left
// clicks behind, with no flood, is queued at once (a kick), so the writer
// empties the backlog without waiting for its interval.
func TestRecorderBacklog_DrainsAfterFlood(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	b.record(3*maxWrite + 5)
	if err := b.rec.cycle(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.rec.kick:
	default:
		t.Fatal("a drain that left clicks behind did not queue the next cycle")
	}
	b.cycleUntilDrained(t, (3*maxWrite+5)/drainWrite)
	if got := b.counted(t); got != int64(b.n) {
		t.Fatalf("%d counted, want %d", got, b.n)
	}
}

// TestRecorderBacklog_Full: past clicks.backlog_bytes clicks are dropped,
// counted and never half-written; what was kept is counted exactly.
func TestRecorderBacklog_Full(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 1<<20)
	b.record(maxWrite + 30_000) // about 2.5 MB of backlog records
	if err := b.rec.Persist(context.Background()); err != nil {
		t.Fatal(err)
	}
	kept := b.backlog(t)
	_, bytes := b.rec.Backlogged()
	if kept == 0 || bytes > 1<<20 || b.rec.Dropped() == 0 || kept+b.rec.Dropped() != int64(b.n) {
		t.Fatalf("backlog %d clicks (%d bytes), %d dropped, of %d", kept, bytes, b.rec.Dropped(), b.n)
	}
	if err := b.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.counted(t); got != kept || b.backlog(t) != 0 {
		t.Fatalf("%d counted, want %d; backlog %d", got, kept, b.backlog(t))
	}
}

// TestRecorderBacklog_CloseKeepsBacklog: a stop while behind spills the
// queue and leaves the backlog on disk instead of writing it all; the next
// recorder on the file drains it.
func TestRecorderBacklog_CloseKeepsBacklog(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	b.record(maxWrite + 1)
	if err := b.rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.backlog(t); got != maxWrite+1 {
		t.Fatalf("backlog after close: %d, want %d", got, maxWrite+1)
	}
	if got := b.counted(t); got != 0 {
		t.Fatalf("%d counted before a drain", got)
	}
	b.rec = b.newRecorder(t, 64<<20)
	if got, _ := b.rec.Backlogged(); got != maxWrite+1 {
		t.Fatalf("a new recorder sees %d clicks in the backlog", got)
	}
	if err := b.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.counted(t); got != int64(b.n) {
		t.Fatalf("%d counted, want %d", got, b.n)
	}
}

// cancelAfterSpill is the real click store whose spill cancels the
// context once it has committed: a redirect's client that goes away while
// the redirect persists the recorder (a limited link's counter is seeded).
type cancelAfterSpill struct {
	*storage.ClickService
	cancel context.CancelFunc
}

func (s cancelAfterSpill) SpillClicks(ctx context.Context, clicks []link.Click, limit int64) (int, int, error) {
	spilled, skipped, err := s.ClickService.SpillClicks(ctx, clicks, limit)
	s.cancel()
	return spilled, skipped, err
}

// TestRecorderBacklog_SpillThenCancel: a spill that committed is never
// spilled again, even when the context ends right after it; every click
// is counted once.
func TestRecorderBacklog_SpillThenCancel(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.rec.SetBacklog(context.Background(), cancelAfterSpill{b.clicks, cancel}, 64<<20); err != nil {
		t.Fatal(err)
	}
	b.record(maxWrite + 1)
	_ = b.rec.Persist(ctx) // the context may end the rest
	if err := b.rec.Persist(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.backlog(t); got != maxWrite+1 {
		t.Fatalf("backlog %d, want %d: a committed spill was spilled again", got, maxWrite+1)
	}
	if err := b.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.counted(t); got != int64(b.n) {
		t.Fatalf("%d counted, want %d", got, b.n)
	}
}

// leaveBacklog leaves n clicks in the backlog of the file, as a run
// stopped during a flood does.
func (b *backlogSetup) leaveBacklog(t *testing.T, n int) {
	t.Helper()
	b.record(n)
	if err := b.rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.backlog(t); got != int64(n) {
		t.Fatalf("backlog %d, want %d", got, n)
	}
}

// TestRecorderBacklog_Off: a recorder whose backlog is off (limit 0) on a
// file an earlier run left a backlog in drains it, and spills nothing new,
// however far behind it is.
func TestRecorderBacklog_Off(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	b.leaveBacklog(t, maxWrite+1)
	b.rec = NewRecorder(timedDrains{b.clicks, b.clock}, time.Hour, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.rec.SetClock(b.clock.Now)
	if err := b.rec.SetBacklog(context.Background(), b.clicks, 0); err != nil {
		t.Fatal(err)
	}
	if got := b.rec.BacklogLimit(); got != 0 {
		t.Fatalf("BacklogLimit = %d, want 0", got)
	}
	b.record(2*maxWrite + 1)
	if err := b.rec.Persist(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.backlog(t); got > maxWrite+1 {
		t.Fatalf("backlog %d: a recorder with the backlog off spilled", got)
	}
	b.cycleUntilDrained(t, (maxWrite+1)/drainWrite+2)
	if got := b.counted(t); got != int64(b.n) {
		t.Fatalf("%d counted, want %d", got, b.n)
	}
}

// TestRecorderBacklog_DrainsWithoutInterval: with clicks written before
// each redirect answers (Interval 0), the backlog an earlier run left is
// drained all the same.
func TestRecorderBacklog_DrainsWithoutInterval(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	b.leaveBacklog(t, maxWrite+1)
	b.rec = NewRecorder(b.clicks, 0, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := b.rec.SetBacklog(context.Background(), b.clicks, 64<<20); err != nil {
		t.Fatal(err)
	}
	b.rec.Start()
	b.record(10) // written at once
	for i := 0; ; i++ {
		if n, _ := b.rec.Backlogged(); n == 0 {
			break
		}
		if i > 1000 {
			t.Fatal("the backlog was never drained")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := b.rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.counted(t); got != int64(b.n) {
		t.Fatalf("%d counted, want %d", got, b.n)
	}
}

// drainWatch is the real click store that notes, at each drain, what the
// recorder still holds in memory.
type drainWatch struct {
	*storage.ClickService
	rec     **Recorder
	pending *[]int
}

func (s drainWatch) DrainClicks(ctx context.Context, max int) (int, int, error) {
	*s.pending = append(*s.pending, (*s.rec).Pending())
	return s.ClickService.DrainClicks(ctx, max)
}

// TestRecorderBacklog_SmallQueue: with a queue bounded below one write's
// worth of clicks (clicks.queue_bytes at its least, or a small
// clicks.queue_size), a queue more than half full is behind all the same:
// it is spilled, and written into the aggregates from the backlog, so that
// the queue is empty, free for the next clicks, while that slow write
// runs.
func TestRecorderBacklog_SmallQueue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		bytes int64
		size  int
	}{
		{"queue_bytes 1 MiB", 1 << 20, 0},
		{"queue_size 1000", 0, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBacklogSetup(t, 64<<20)
			b.rec = NewRecorder(b.clicks, time.Hour, tc.size, slog.New(slog.NewTextHandler(io.Discard, nil)))
			b.rec.SetClock(b.clock.Now)
			b.rec.SetQueueBytes(tc.bytes)
			var pending []int
			if err := b.rec.SetBacklog(context.Background(), drainWatch{b.clicks, &b.rec, &pending}, 64<<20); err != nil {
				t.Fatal(err)
			}
			// Fill the queue to its bound.
			for b.rec.Dropped() == 0 {
				b.record(1)
			}
			b.n-- // the one dropped
			select {
			case <-b.rec.kick:
			default:
				t.Fatal("a queue past half its bound did not queue a write")
			}
			// A cycle spills the queue and drains one part, the next
			// ones the rest.
			b.cycleUntilDrained(t, b.n/drainWrite+2)
			if len(pending) == 0 {
				t.Fatalf("a full queue of %d clicks was written while it held them, not spilled", b.n)
			}
			for _, p := range pending {
				if p != 0 {
					t.Fatalf("%d clicks held in memory during a drain", p)
				}
			}
			if got := b.counted(t); got != int64(b.n) {
				t.Fatalf("%d counted, want %d", got, b.n)
			}
		})
	}
}

// TestRecorderBacklog_CloseWhenFull: a graceful stop loses no click: what
// a full backlog cannot take goes into the aggregates.
func TestRecorderBacklog_CloseWhenFull(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 1<<20)
	b.record(maxWrite + 30_000) // more than the backlog holds
	if err := b.rec.Persist(context.Background()); err != nil {
		t.Fatal(err)
	}
	kept, dropped := b.backlog(t), b.rec.Dropped()
	if dropped == 0 {
		t.Fatal("the backlog was not filled")
	}
	b.record(1000)
	if err := b.rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := b.rec.Dropped(); got != dropped {
		t.Fatalf("a graceful stop dropped %d clicks", got-dropped)
	}
	b.rec = b.newRecorder(t, 1<<20)
	if err := b.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := b.counted(t), kept+1000; got != want {
		t.Fatalf("%d counted, want %d", got, want)
	}
}

// TestRecorderBacklog_StartAfterEarlyWrite: a start with a backlog left
// behind does not wait on a write already queued by clicks recorded
// before it.
func TestRecorderBacklog_StartAfterEarlyWrite(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	b.leaveBacklog(t, maxWrite+1)
	b.rec = NewRecorder(b.clicks, time.Hour, 10, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := b.rec.SetBacklog(context.Background(), b.clicks, 64<<20); err != nil {
		t.Fatal(err)
	}
	b.record(5) // half the queue: a write is queued
	started := make(chan struct{})
	go func() { b.rec.Start(); close(started) }()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("Start blocked")
	}
	if err := b.rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// cancelAfterCommit is the real click store whose context ends right after
// a spill commits: a redirect seeding a limited link (Persist with the
// request's context) whose client goes away.
type cancelAfterCommit struct {
	*storage.ClickService
	cancel context.CancelFunc
}

func (s cancelAfterCommit) SpillClicks(ctx context.Context, clicks []link.Click, limit int64) (int, int, error) {
	n, skipped, err := s.ClickService.SpillClicks(ctx, clicks, limit)
	s.cancel()
	return n, skipped, err
}

func (s cancelAfterCommit) DrainClicks(ctx context.Context, max int) (int, int, error) {
	n, skipped, err := s.ClickService.DrainClicks(ctx, max)
	s.cancel()
	return n, skipped, err
}

// TestRecorderBacklog_SpillCommittedOnce: once a spill has committed, the
// batch is out of the queue even if the context ends before the recorder
// reads the backlog's size again; spilled again, its clicks would be
// counted twice. A drain that committed is no failed write either.
func TestRecorderBacklog_SpillCommittedOnce(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := b.rec.SetBacklog(ctx, cancelAfterCommit{b.clicks, cancel}, 64<<20); err != nil {
		t.Fatal(err)
	}
	b.record(maxWrite + 1)
	_ = b.rec.Persist(ctx)
	if got, want := b.backlog(t)+int64(b.rec.Pending()), int64(b.n); got != want {
		t.Fatalf("%d clicks in the backlog and %d queued, of %d", b.backlog(t), b.rec.Pending(), b.n)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	b.rec.backlog = cancelAfterCommit{b.clicks, cancel}
	failed := b.rec.FailedWrites() // the spill after the context ended
	if err := b.rec.drain(ctx, 100); err != nil || b.rec.FailedWrites() != failed {
		t.Fatalf("a drain that committed: %v, %d failed writes, %d before", err, b.rec.FailedWrites(), failed)
	}
	if got, want := b.backlog(t), int64(maxWrite-100); got != want {
		t.Fatalf("backlog after the drain: %d, want %d", got, want)
	}
	if err := b.rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := b.counted(t), int64(b.n); got != want {
		t.Fatalf("%d clicks counted, want %d", got, want)
	}
	if got := b.rec.Written(); got != int64(b.n) {
		t.Fatalf("written = %d, want %d", got, b.n)
	}
}

// TestRecorderBacklog_OffDrainsLeftover: a backlog turned off
// (clicks.backlog_bytes 0) after a run that left clicks there takes no new
// clicks, but still drains what it holds into the aggregates.
func TestRecorderBacklog_OffDrainsLeftover(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	b.record(maxWrite + 1)
	if err := b.rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.rec = b.newRecorder(t, 0)
	if err := b.rec.SetBacklog(context.Background(), b.clicks, 0); err != nil {
		t.Fatal(err)
	}
	if got := b.rec.BacklogLimit(); got != 0 {
		t.Fatalf("limit of a backlog turned off: %d", got)
	}
	b.record(maxWrite + 1)
	prev := b.backlog(t)
	for i := 0; b.backlog(t) > 0 || b.rec.Pending() > 0; i++ {
		if i > (maxWrite+1)/drainWrite+1 {
			t.Fatalf("backlog %d, %d queued after %d cycles", b.backlog(t), b.rec.Pending(), i)
		}
		if err := b.rec.cycle(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := b.backlog(t); got >= prev && got > 0 {
			t.Fatalf("backlog %d after cycle %d, %d before: a backlog turned off took clicks", got, i, prev)
		}
		prev = b.backlog(t)
	}
	if got := b.counted(t); got != int64(b.n) {
		t.Fatalf("%d counted, want %d", got, b.n)
	}
	if d := b.rec.Dropped(); d != 0 {
		t.Fatalf("%d dropped", d)
	}
}

// downStore is the real click store as a store whose aggregates are on a
// database that is down while down is set, and whose backlog is on a
// disk of its own (as internal/clickspool on PostgreSQL): writes and
// drains fail, spills do not.
type downStore struct {
	timedDrains
	down *atomic.Bool
}

var errDown = errors.New("database down")

func (s downStore) RecordClicks(ctx context.Context, clicks []link.Click) (int, error) {
	if s.down.Load() {
		return 0, errDown
	}
	return s.timedDrains.RecordClicks(ctx, clicks)
}

func (s downStore) DrainClicks(ctx context.Context, max int) (int, int, error) {
	if s.down.Load() {
		return 0, 0, errDown
	}
	return s.timedDrains.DrainClicks(ctx, max)
}

// TestRecorderBacklog_StoreDown: while writes fail, the queue goes to
// the backlog at the second failure in a row instead of waiting in memory
// until it is full; drains are tried again after a backoff, and once the
// store is back every click is counted once.
func TestRecorderBacklog_StoreDown(t *testing.T) {
	t.Parallel()
	b := newBacklogSetup(t, 64<<20)
	ctx := context.Background()
	down := new(atomic.Bool)
	down.Store(true)
	s := downStore{timedDrains{b.clicks, b.clock}, down}
	b.rec = NewRecorder(s, time.Hour, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	b.rec.SetClock(b.clock.Now)
	if err := b.rec.SetBacklog(ctx, s, 64<<20); err != nil {
		t.Fatal(err)
	}
	b.rec.SetBacklogApart(true)
	b.record(3000)
	if err := b.rec.cycle(ctx); err == nil {
		t.Fatal("the first write did not fail")
	}
	if p := b.rec.Pending(); p != 3000 {
		t.Fatalf("%d queued after one failure, want 3000 (kept for one more try)", p)
	}
	b.record(3000)
	if err := b.rec.cycle(ctx); err == nil {
		t.Fatal("the second write did not fail")
	}
	if p, n := b.rec.Pending(), b.backlog(t); p != 0 || n != 6000 {
		t.Fatalf("%d queued and %d in the backlog, want 0 and 6000", p, n)
	}
	b.record(1000)
	if err := b.rec.cycle(ctx); !errors.Is(err, errDown) {
		t.Fatalf("drain while down: %v", err)
	}
	b.record(1000)
	if err := b.rec.cycle(ctx); err != nil { // spills; the drain waits
		t.Fatalf("cycle within the backoff: %v", err)
	}
	if p, n := b.rec.Pending(), b.backlog(t); p != 0 || n != 8000 {
		t.Fatalf("%d queued and %d in the backlog, want 0 and 8000", p, n)
	}
	if _, failing := b.rec.WriteFailing(); !failing {
		t.Fatal("spilling cleared the failure of writes")
	}
	down.Store(false)
	b.clock.Add(maxDrainBackoff)
	b.cycleUntilDrained(t, 3)
	b.wantAllCounted(t, 8000)
	if w, d := b.rec.Written(), b.rec.Dropped(); w != 8000 || d != 0 {
		t.Fatalf("written %d, dropped %d; want 8000 and 0", w, d)
	}
	if _, failing := b.rec.WriteFailing(); failing {
		t.Fatal("writes still failing after the drain")
	}
}
