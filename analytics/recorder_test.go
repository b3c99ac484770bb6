package analytics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// waitTimeout bounds every wait on another goroutine; nothing here sleeps.
const waitTimeout = 5 * time.Second

var errDisk = errors.New("disk on fire")

// memStore is a ClickStore in memory. It keeps a copy of every batch it
// writes, can be told to fail, and can hold a write until the test lets it go.
type memStore struct {
	mu      sync.Mutex
	batches [][]link.Click
	calls   int
	fail    func(call int) error // nil: every write succeeds
	written chan int             // if set, gets the size of every batch written
	entered chan struct{}        // if set, RecordClicks announces itself here…
	release chan error           // …and waits here for the error to return
}

func (s *memStore) RecordClicks(ctx context.Context, clicks []link.Click) (int, error) {
	s.mu.Lock()
	entered, release := s.entered, s.release
	s.mu.Unlock()
	var err error
	if entered != nil {
		entered <- struct{}{}
		err = <-release
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if err == nil && s.fail != nil {
		err = s.fail(s.calls)
	}
	if err != nil {
		return 0, err
	}
	s.batches = append(s.batches, slices.Clone(clicks))
	if s.written != nil {
		select {
		case s.written <- len(clicks):
		default:
		}
	}
	return 0, nil
}

func (s *memStore) setFail(fn func(call int) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = fn
}

func (s *memStore) failAlways(err error) { s.setFail(func(int) error { return err }) }

// hold makes the next writes wait for the test: each announces itself on
// the returned entered channel and returns what the test sends on release.
func (s *memStore) hold() (entered chan struct{}, release chan error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entered, s.release = make(chan struct{}), make(chan error)
	return s.entered, s.release
}

func (s *memStore) unhold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entered, s.release = nil, nil
}

// Batches returns the batches written so far.
func (s *memStore) Batches() [][]link.Click {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.batches)
}

// Clicks returns every click written so far, in the order written.
func (s *memStore) Clicks() []link.Click {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []link.Click
	for _, b := range s.batches {
		out = append(out, b...)
	}
	return out
}

func (s *memStore) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

var clickTime = time.Date(2026, 5, 14, 12, 0, 0, 0, time.UTC)

func testClick(i int) link.Click {
	return link.Click{
		LinkID:      fmt.Sprintf("l%d", i),
		WorkspaceID: "w1",
		Time:        clickTime.Add(time.Duration(i) * time.Millisecond),
		Referrer:    "example.com",
		UserAgent:   "test",
	}
}

func testClicks(from, to int) []link.Click {
	var out []link.Click
	for i := from; i < to; i++ {
		out = append(out, testClick(i))
	}
	return out
}

// linkIDs shortens clicks for failure messages.
func linkIDs(cs []link.Click) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.LinkID
	}
	return out
}

func equalClicks(a, b []link.Click) bool {
	return slices.EqualFunc(a, b, func(x, y link.Click) bool {
		return x.LinkID == y.LinkID && x.WorkspaceID == y.WorkspaceID && x.Time.Equal(y.Time) &&
			x.Referrer == y.Referrer && x.UserAgent == y.UserAgent
	})
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// syncBuffer is a bytes.Buffer for a logger that may write from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRecorderFlushWritesOneBatchInOrder(t *testing.T) {
	store := &memStore{}
	r := NewRecorder(store, time.Hour, 0, discardLogger())
	for i := range 5 {
		r.Record(testClick(i))
		if got, want := r.Pending(), i+1; got != want {
			t.Fatalf("after %d records: Pending = %d, want %d", i+1, got, want)
		}
	}
	if got, want := store.Calls(), 0; got != want {
		t.Fatalf("store called %d times before Flush, want %d", got, want)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush = %v", err)
	}
	batches := store.Batches()
	if got, want := len(batches), 1; got != want {
		t.Fatalf("%d batches, want %d", got, want)
	}
	if got, want := batches[0], testClicks(0, 5); !equalClicks(got, want) {
		t.Fatalf("batch %v, want %v", linkIDs(got), linkIDs(want))
	}
	if got, want := r.Pending(), 0; got != want {
		t.Fatalf("Pending after Flush = %d, want %d", got, want)
	}
	if got, want := r.Written(), int64(5); got != want {
		t.Fatalf("Written = %d, want %d", got, want)
	}

	// Nothing queued: no transaction at all.
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("empty Flush = %v", err)
	}
	if got, want := store.Calls(), 1; got != want {
		t.Fatalf("store called %d times after an empty Flush, want %d", got, want)
	}

	// The next batch holds only what came after.
	r.Record(testClick(5))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush = %v", err)
	}
	if got, want := store.Clicks(), testClicks(0, 6); !equalClicks(got, want) {
		t.Fatalf("written %v, want %v", linkIDs(got), linkIDs(want))
	}
	if got, want := r.Dropped(), int64(0); got != want {
		t.Fatalf("Dropped = %d, want %d", got, want)
	}
}

func TestRecorderFailedFlushKeepsClicks(t *testing.T) {
	store := &memStore{}
	r := NewRecorder(store, time.Hour, 0, discardLogger())
	store.failAlways(errDisk)

	for i := range 3 {
		r.Record(testClick(i))
	}
	if err := r.Flush(context.Background()); !errors.Is(err, errDisk) {
		t.Fatalf("Flush = %v, want %v", err, errDisk)
	}
	if got, want := r.Pending(), 3; got != want {
		t.Fatalf("Pending after a failed Flush = %d, want %d", got, want)
	}
	r.Record(testClick(3))
	if err := r.Flush(context.Background()); !errors.Is(err, errDisk) {
		t.Fatalf("second Flush = %v, want %v", err, errDisk)
	}
	r.Record(testClick(4))
	if got, want := r.Pending(), 5; got != want {
		t.Fatalf("Pending after two failed Flushes = %d, want %d", got, want)
	}
	if got, want := r.Written(), int64(0); got != want {
		t.Fatalf("Written = %d, want %d", got, want)
	}

	store.setFail(nil)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush after recovery = %v", err)
	}
	batches := store.Batches()
	if got, want := len(batches), 2; got != want {
		t.Fatalf("%d batches written, want %d", got, want)
	}
	// The failed batch comes first, as it was, then the newer clicks, each once.
	if got, want := batches[0], testClicks(0, 3); !equalClicks(got, want) {
		t.Fatalf("first batch %v, want %v", linkIDs(got), linkIDs(want))
	}
	if got, want := store.Clicks(), testClicks(0, 5); !equalClicks(got, want) {
		t.Fatalf("written %v, want %v", linkIDs(got), linkIDs(want))
	}
	if got, want := r.Pending(), 0; got != want {
		t.Fatalf("Pending = %d, want %d", got, want)
	}
	if got, want := r.Written(), int64(5); got != want {
		t.Fatalf("Written = %d, want %d", got, want)
	}
	if got, want := r.Dropped(), int64(0); got != want {
		t.Fatalf("Dropped = %d, want %d", got, want)
	}
}

// TestRecorderFailedFlushKeepsOrderOfRecordsDuringWrite: clicks recorded
// while a failing write is under way go after the failed batch.
func TestRecorderFailedFlushKeepsOrderOfRecordsDuringWrite(t *testing.T) {
	store := &memStore{}
	r := NewRecorder(store, time.Hour, 0, discardLogger())
	for i := range 3 {
		r.Record(testClick(i))
	}
	entered, release := store.hold()
	flushed := make(chan error, 1)
	go func() { flushed <- r.Flush(context.Background()) }()
	waitFor(t, entered, "the store to be called")
	r.Record(testClick(3))
	r.Record(testClick(4))
	release <- errDisk
	if err := waitFor(t, flushed, "Flush to return"); !errors.Is(err, errDisk) {
		t.Fatalf("Flush = %v, want %v", err, errDisk)
	}
	store.unhold()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush = %v", err)
	}
	if got, want := store.Clicks(), testClicks(0, 5); !equalClicks(got, want) {
		t.Fatalf("written %v, want %v", linkIDs(got), linkIDs(want))
	}
}

func TestRecorderQueueBound(t *testing.T) {
	store := &memStore{}
	var logs syncBuffer
	r := NewRecorder(store, time.Hour, 1000, slog.New(slog.NewTextHandler(&logs, nil)))

	for i := range 1000 {
		r.Record(testClick(i))
	}
	if got, want := r.Dropped(), int64(0); got != want {
		t.Fatalf("Dropped after 1000 records = %d, want %d", got, want)
	}
	if got := logs.String(); got != "" {
		t.Fatalf("logged before the queue was full: %q", got)
	}

	r.Record(testClick(1000))
	if got, want := r.Pending(), 1000; got != want {
		t.Fatalf("Pending = %d, want %d", got, want)
	}
	if got, want := r.Dropped(), int64(1); got != want {
		t.Fatalf("Dropped = %d, want %d", got, want)
	}
	out := logs.String()
	if got, want := strings.Count(out, "DROPPED"), 1; got != want {
		t.Fatalf("log has %d lines with DROPPED, want %d:\n%s", got, want, out)
	}
	if !strings.Contains(out, "level=ERROR") {
		t.Fatalf("drop not logged as an error:\n%s", out)
	}

	// Further drops are counted but not each logged: a full queue under a
	// flood must not flood the log as well.
	for i := 1001; i < 1010; i++ {
		r.Record(testClick(i))
	}
	if got, want := r.Dropped(), int64(10); got != want {
		t.Fatalf("Dropped = %d, want %d", got, want)
	}
	if got, want := strings.Count(logs.String(), "DROPPED"), 1; got != want {
		t.Fatalf("log has %d lines with DROPPED after 10 drops, want %d", got, want)
	}

	// The queue keeps the oldest clicks; after a Flush there is room again.
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush = %v", err)
	}
	if got, want := store.Clicks(), testClicks(0, 1000); !equalClicks(got, want) {
		t.Fatalf("written %d clicks (%v…), want the first 1000", len(got), linkIDs(got[:min(len(got), 3)]))
	}
	r.Record(testClick(2000))
	if got, want := r.Pending(), 1; got != want {
		t.Fatalf("Pending after Flush and Record = %d, want %d", got, want)
	}
	if got, want := r.Dropped(), int64(10); got != want {
		t.Fatalf("Dropped = %d, want %d", got, want)
	}
}

// TestRecorderQueueBoundWhileWritesFail: the bound holds while the disk
// fails. Clicks recorded during a failing write must not push the queue
// past its bound when the failed batch is put back, or a slow, failing
// disk grows memory by up to a queue's worth on every try.
func TestRecorderQueueBoundWhileWritesFail(t *testing.T) {
	const max = 10
	store := &memStore{}
	r := NewRecorder(store, time.Hour, max, discardLogger())
	recorded := 0
	for ; recorded < max; recorded++ {
		r.Record(testClick(recorded))
	}

	for try := 1; try <= 3; try++ {
		entered, release := store.hold()
		flushed := make(chan error, 1)
		go func() { flushed <- r.Flush(context.Background()) }()
		waitFor(t, entered, "the store to be called")
		// Redirects go on while the disk struggles.
		for range max {
			r.Record(testClick(recorded))
			recorded++
		}
		release <- errDisk
		if err := waitFor(t, flushed, "Flush to return"); !errors.Is(err, errDisk) {
			t.Fatalf("try %d: Flush = %v, want %v", try, err, errDisk)
		}
		if got := r.Pending(); got > max {
			t.Errorf("try %d: Pending = %d after a failed write, want at most %d (the queue bound)", try, got, max)
		}
		if got, want := int64(r.Pending())+r.Dropped(), int64(recorded); got != want {
			t.Fatalf("try %d: Pending + Dropped = %d, want %d recorded", try, got, want)
		}
	}
	store.unhold()

	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush after recovery = %v", err)
	}
	if got, want := r.Written()+r.Dropped(), int64(recorded); got != want {
		t.Fatalf("Written + Dropped = %d, want %d recorded", got, want)
	}
	// What is kept is the oldest, in order.
	if got, want := store.Clicks(), testClicks(0, int(r.Written())); !equalClicks(got, want) {
		t.Fatalf("written %v, want %v", linkIDs(got), linkIDs(want))
	}
}

func TestRecorderSynchronous(t *testing.T) {
	store := &memStore{}
	var logs syncBuffer
	r := NewRecorder(store, 0, 0, slog.New(slog.NewTextHandler(&logs, nil)))
	r.Start() // a no-op without an interval

	r.Record(testClick(0))
	// Written before Record returned, in a batch of its own.
	if got, want := store.Clicks(), testClicks(0, 1); !equalClicks(got, want) {
		t.Fatalf("written %v, want %v", linkIDs(got), linkIDs(want))
	}
	r.Record(testClick(1))
	if got, want := len(store.Batches()), 2; got != want {
		t.Fatalf("%d batches, want %d", got, want)
	}
	if got, want := r.Pending(), 0; got != want {
		t.Fatalf("Pending = %d, want %d", got, want)
	}
	if got, want := r.Written(), int64(2); got != want {
		t.Fatalf("Written = %d, want %d", got, want)
	}

	store.failAlways(errDisk)
	r.Record(testClick(2))
	if got, want := r.Dropped(), int64(1); got != want {
		t.Fatalf("Dropped after a failed write = %d, want %d", got, want)
	}
	if got, want := r.Pending(), 0; got != want {
		t.Fatalf("Pending after a failed write = %d, want %d", got, want)
	}
	if got, want := r.Written(), int64(2); got != want {
		t.Fatalf("Written = %d, want %d", got, want)
	}
	if out := logs.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "l2") {
		t.Fatalf("lost click not logged as an error naming its link:\n%s", out)
	}

	if err := r.Close(context.Background()); err != nil {
		t.Fatalf("Close = %v", err)
	}
}

func TestRecorderClose(t *testing.T) {
	for _, started := range []bool{true, false} {
		t.Run(fmt.Sprintf("started=%v", started), func(t *testing.T) {
			store := &memStore{}
			r := NewRecorder(store, time.Hour, 0, discardLogger())
			if started {
				r.Start()
				r.Start() // a second Start does not start a second loop
			}
			for i := range 3 {
				r.Record(testClick(i))
			}
			if err := r.Close(context.Background()); err != nil {
				t.Fatalf("Close = %v", err)
			}
			if got, want := store.Batches(), [][]link.Click{testClicks(0, 3)}; len(got) != 1 || !equalClicks(got[0], want[0]) {
				t.Fatalf("batches after Close: %d, want one of 3 clicks", len(got))
			}
			if got, want := r.Pending(), 0; got != want {
				t.Fatalf("Pending after Close = %d, want %d", got, want)
			}

			calls := store.Calls()
			if err := r.Close(context.Background()); err != nil {
				t.Fatalf("second Close = %v", err)
			}
			if got, want := store.Calls(), calls; got != want {
				t.Fatalf("second Close called the store: %d calls, want %d", got, want)
			}

			// A record after Close is kept for a later Flush, not lost.
			r.Record(testClick(3))
			if got, want := r.Pending(), 1; got != want {
				t.Fatalf("Pending after a Record after Close = %d, want %d", got, want)
			}
			if err := r.Flush(context.Background()); err != nil {
				t.Fatalf("Flush = %v", err)
			}
			if got, want := store.Clicks(), testClicks(0, 4); !equalClicks(got, want) {
				t.Fatalf("written %v, want %v", linkIDs(got), linkIDs(want))
			}
		})
	}
}

func TestRecorderCloseReportsFailedFlush(t *testing.T) {
	store := &memStore{}
	r := NewRecorder(store, time.Hour, 0, discardLogger())
	r.Start()
	r.Record(testClick(0))
	store.failAlways(errDisk)
	if err := r.Close(context.Background()); !errors.Is(err, errDisk) {
		t.Fatalf("Close = %v, want %v", err, errDisk)
	}
	if got, want := r.Pending(), 1; got != want {
		t.Fatalf("Pending after a failed Close = %d, want %d", got, want)
	}
	store.setFail(nil)
	if err := r.Close(context.Background()); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if got, want := store.Clicks(), testClicks(0, 1); !equalClicks(got, want) {
		t.Fatalf("written %v, want %v", linkIDs(got), linkIDs(want))
	}
}

// TestRecorderConcurrent records from many goroutines while the flush loop
// runs every millisecond and every other write fails: after Close every
// click is written exactly once, and each goroutine's clicks in order.
func TestRecorderConcurrent(t *testing.T) {
	t.Parallel()
	const goroutines, perGoroutine = 32, 2000
	store := &memStore{written: make(chan int, 1)}
	var failing atomic.Bool
	failing.Store(true)
	store.setFail(func(call int) error {
		if failing.Load() && call%2 == 0 {
			return errDisk
		}
		return nil
	})
	r := NewRecorder(store, time.Millisecond, 0, discardLogger())
	// Every other write fails while 64,000 clicks arrive: the byte bound
	// (tested on its own) must not drop any here, where order is tested.
	r.SetQueueBytes(1 << 30)
	r.Start()

	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perGoroutine {
				r.Record(link.Click{LinkID: fmt.Sprintf("g%d", g), WorkspaceID: fmt.Sprint(i), Time: clickTime})
			}
		}()
	}
	wg.Wait()
	// The loop, not only Close, writes: wait for its first good write.
	waitFor(t, store.written, "a write by the flush loop")
	failing.Store(false)
	if err := r.Close(context.Background()); err != nil {
		t.Fatalf("Close = %v", err)
	}

	total := goroutines * perGoroutine
	if got, want := r.Written(), int64(total); got != want {
		t.Fatalf("Written = %d, want %d", got, want)
	}
	if got, want := r.Dropped(), int64(0); got != want {
		t.Fatalf("Dropped = %d, want %d", got, want)
	}
	if got, want := r.Pending(), 0; got != want {
		t.Fatalf("Pending = %d, want %d", got, want)
	}
	written := store.Clicks()
	if got, want := len(written), total; got != want {
		t.Fatalf("store holds %d clicks, want %d", got, want)
	}
	next := make(map[string]int, goroutines)
	for _, c := range written {
		if got, want := c.WorkspaceID, fmt.Sprint(next[c.LinkID]); got != want {
			t.Fatalf("goroutine %s: click %s written where %s was due (lost, doubled or reordered)", c.LinkID, got, want)
		}
		next[c.LinkID]++
	}
}

// TestRecorderBatchHintFlushesEarly: a batch that reaches batchHint is
// written at once, long before the interval.
func TestRecorderBatchHintFlushesEarly(t *testing.T) {
	store := &memStore{written: make(chan int, 1)}
	r := NewRecorder(store, time.Hour, 0, discardLogger())
	r.Start()
	defer r.Close(context.Background())

	c := testClick(0)
	for range batchHint - 1 {
		r.Record(c)
	}
	if got, want := store.Calls(), 0; got != want {
		t.Fatalf("store called %d times below batchHint, want %d", got, want)
	}
	r.Record(c)
	if got, want := waitFor(t, store.written, "the early flush"), batchHint; got != want {
		t.Fatalf("early batch of %d clicks, want %d", got, want)
	}
	// The store has the batch; the recorder counts it written when the
	// store returns, a moment later.
	deadline := time.Now().Add(waitTimeout)
	for r.Pending() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Pending after the early flush = %d, want 0", r.Pending())
		}
		time.Sleep(time.Millisecond)
	}
}

// waitFor receives from ch or fails the test after waitTimeout.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out after %v waiting for %s", waitTimeout, what)
		panic("unreachable")
	}
}

// countStore counts the clicks written and keeps nothing.
type countStore struct{ n atomic.Int64 }

func (s *countStore) RecordClicks(ctx context.Context, clicks []link.Click) (int, error) {
	s.n.Add(int64(len(clicks)))
	return 0, nil
}

func BenchmarkRecord(b *testing.B) {
	store := &countStore{}
	r := NewRecorder(store, 10*time.Millisecond, 0, discardLogger())
	r.Start()
	c := testClick(1)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Record(c)
		}
	})
	b.StopTimer()
	if err := r.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	if got, want := store.n.Load()+r.Dropped(), int64(b.N); got != want {
		b.Fatalf("written + dropped = %d, want %d", got, want)
	}
	b.ReportMetric(float64(r.Dropped())/float64(b.N), "dropped/op")
}
