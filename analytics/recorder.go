// Package analytics owns linkbolt's click pipeline between a redirect and
// the database: the in-memory recorder that batches clicks, the
// classification of each click (user agent, bot, country, daily-salted
// visitor hash) done on the recorder's goroutine, and the time ranges and
// buckets analytics answer in.
package analytics

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// ClickStore writes a batch of clicks in one transaction.
type ClickStore interface {
	RecordClicks(ctx context.Context, clicks []link.Click) error
}

// Recorder takes clicks from redirects without waiting for the disk and
// writes them in batches, one transaction every Interval (or sooner when a
// batch grows large). With Interval 0 every click is written before Record
// returns. The queue is bounded by MaxPending: when it is full, clicks are
// dropped, counted and logged loudly rather than growing memory without end.
type Recorder struct {
	store    ClickStore
	enrich   func(ctx context.Context, batch []link.Click) error
	interval time.Duration
	max      int
	logger   *slog.Logger

	mu      sync.Mutex
	buf     []link.Click
	flushMu sync.Mutex // one flush at a time

	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	dropped atomic.Int64
	written atomic.Int64
	once    sync.Once
	started atomic.Bool
}

// batchHint is the size at which a batch is written before its interval.
const batchHint = 20_000

// NewRecorder returns a recorder writing to store. max <= 0 means 1,000,000.
func NewRecorder(store ClickStore, interval time.Duration, max int, logger *slog.Logger) *Recorder {
	if max <= 0 {
		max = 1_000_000
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Recorder{store: store, interval: interval, max: max, logger: logger,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// SetEnrich sets the function that classifies a batch in place before it
// is written (user agent, country, visitor). It runs on the flush
// goroutine, never on a redirect, and must leave classified clicks alone
// when a failed batch is tried again. Call it before Start.
func (r *Recorder) SetEnrich(fn func(ctx context.Context, batch []link.Click) error) {
	r.enrich = fn
}

// write classifies a batch and writes it.
func (r *Recorder) write(ctx context.Context, batch []link.Click) error {
	if r.enrich != nil {
		if err := r.enrich(ctx, batch); err != nil {
			return err
		}
	}
	return r.store.RecordClicks(ctx, batch)
}

// Start runs the flush loop until Close.
func (r *Recorder) Start() {
	if r.interval <= 0 || !r.started.CompareAndSwap(false, true) {
		return
	}
	go r.loop()
}

func (r *Recorder) loop() {
	defer close(r.done)
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		case <-r.kick:
		}
		if err := r.Flush(context.Background()); err != nil {
			r.logger.Error("writing clicks failed; they stay queued and are retried", "err", err)
		}
	}
}

// Record queues a click. It never waits for the disk unless the recorder
// writes every click at once (Interval 0).
func (r *Recorder) Record(c link.Click) {
	if r.interval <= 0 {
		if err := r.write(context.Background(), []link.Click{c}); err != nil {
			r.dropped.Add(1)
			r.logger.Error("writing a click failed; it is lost", "link", c.LinkID, "err", err)
			return
		}
		r.written.Add(1)
		return
	}
	r.mu.Lock()
	if len(r.buf) >= r.max {
		r.mu.Unlock()
		if n := r.dropped.Add(1); n == 1 || n%10_000 == 0 {
			r.logger.Error("click queue is full: clicks are being DROPPED; the disk cannot keep up",
				"queue", r.max, "dropped_total", n)
		}
		return
	}
	r.buf = append(r.buf, c)
	n := len(r.buf)
	r.mu.Unlock()
	if n == batchHint {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// Pending returns the number of clicks not yet written.
func (r *Recorder) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.buf)
}

// Dropped returns the number of clicks dropped because the queue was full
// or, with Interval 0, because writing failed.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// Written returns the number of clicks written to the store.
func (r *Recorder) Written() int64 { return r.written.Load() }

// Flush writes every queued click in one transaction. On failure the
// clicks go back to the front of the queue for the next try.
func (r *Recorder) Flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	batch := r.buf
	if len(batch) == 0 {
		r.mu.Unlock()
		return nil
	}
	// The next batch will likely be as large as this one: size it so that
	// redirects do not pay for growing it.
	r.buf = make([]link.Click, 0, min(max(len(batch), 64), r.max))
	r.mu.Unlock()
	if err := r.write(ctx, batch); err != nil {
		r.mu.Lock()
		r.buf = append(batch, r.buf...)
		// Clicks recorded during the write went into a fresh queue: keep the
		// bound by dropping the newest of them.
		over := len(r.buf) - r.max
		if over > 0 {
			clear(r.buf[r.max:])
			r.buf = r.buf[:r.max]
		}
		r.mu.Unlock()
		if over > 0 {
			n := r.dropped.Add(int64(over))
			r.logger.Error("click queue is full: clicks are being DROPPED; the disk cannot keep up",
				"queue", r.max, "dropped", over, "dropped_total", n)
		}
		return err
	}
	r.written.Add(int64(len(batch)))
	return nil
}

// Close stops the flush loop and writes what is left. Records that arrive
// after Close are still queued and written by a later Flush; the server
// stops taking requests before it closes the recorder.
func (r *Recorder) Close(ctx context.Context) error {
	r.once.Do(func() { close(r.stop) })
	if r.started.Load() {
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return r.Flush(ctx)
}
