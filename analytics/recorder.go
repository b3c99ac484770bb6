// Package analytics owns linkbolt's click pipeline between a redirect and
// the database: the in-memory recorder that batches clicks, the
// classification of each click (user agent, bot, country, daily-salted
// visitor hash) done on the recorder's goroutine, and the time ranges and
// buckets analytics answer in.
package analytics

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbolt/linkbolt/internal/faultlog"
	"github.com/linkbolt/linkbolt/link"
)

// ClickStore writes a batch of clicks in one transaction. It skips, and
// counts in skipped, the clicks it cannot store (malformed IDs, a time out
// of range), and writes the others.
type ClickStore interface {
	RecordClicks(ctx context.Context, clicks []link.Click) (skipped int, err error)
}

// DefaultQueueBytes is the memory the click queue may hold when
// SetQueueBytes is not called: 16 MiB, some 150,000 clicks (a queued
// click costs clickSize plus its link ID, its user agent, referrer host,
// workspace and campaign shared through intern tables; see queuedClick):
// several seconds of the most clicks a server takes, so that the writer,
// whose cost per click falls as its batches grow, can catch up after a
// burst. The process holds about three times what the queue holds
// (linkbolt runs the collector at GOGC 200).
const DefaultQueueBytes = 16 << 20

// clickSize is what a queued click costs besides its link ID (and what
// is not shared with other clicks, see queuedClick.cost).
const clickSize = queuedSize

// logEvery is how often a persisting trouble (dropped clicks, failing
// writes) is logged again: a flood must not flood the log as well.
const logEvery = time.Minute

// Recorder takes clicks from redirects without waiting for the disk and
// writes them in batches, one transaction every Interval (or sooner when a
// batch grows large). With Interval 0 every click is written before Record
// returns.
//
// The queue is bounded both by count (max) and by the memory it holds
// (SetQueueBytes), counting the batch being written or, after a failed
// write, waiting to be tried again; that batch is written before the
// clicks recorded since, so the order is kept. Past either bound, clicks
// are dropped, counted and logged (at most once a minute), rather than
// growing memory without end.
type Recorder struct {
	store    ClickStore
	enrich   func(ctx context.Context, batch []link.Click) error
	tap      atomic.Pointer[func([]link.Click)]
	interval time.Duration
	max      int
	maxBytes int64
	logger   *slog.Logger
	now      func() time.Time

	mu sync.Mutex
	// buf holds the clicks recorded since the last flush began, in holds
	// the intern tables of their strings.
	buf []queuedClick
	in  *interner
	// held is the batch taken by a flush: being written, or failed and
	// waiting to be written first by the next flush.
	held []queuedClick
	// strBytes is what the strings of buf and held cost; the arrays cost
	// (cap(buf)+cap(held))*clickSize.
	strBytes  int64
	heldBytes int64 // the part of strBytes that is held's
	// heldTables is what the intern tables of held cost once the queue
	// has new ones (see interner), until held is written.
	heldTables int64
	flushMu    sync.Mutex // one flush at a time
	// partLinks is linksPart's set of links, kept for the next part.
	partLinks map[string]struct{}

	// The health of writes, under mu.
	failing   bool
	failSince time.Time
	// writeLog logs failing writes once per episode (see faultlog).
	writeLog *faultlog.Log

	kick         chan struct{}
	stop         chan struct{}
	done         chan struct{}
	dropped      atomic.Int64
	written      atomic.Int64
	failedWrites atomic.Int64
	dropLogMu    sync.Mutex
	dropLogAt    time.Time // when a drop was last logged
	dropLogN     int64     // dropped when it was
	once         sync.Once
	started      atomic.Bool

	// The backlog on disk (see SetBacklog); nil drops clicks the queue
	// cannot hold.
	backlog      Backlog
	backlogLimit int64
	backlogApart bool // see SetBacklogApart
	// What the backlog holds, as last read from the store.
	backlogClicks, backlogBytes atomic.Int64
	// closing is set by Close: a full backlog no longer drops clicks.
	closing atomic.Bool
	// arrived counts the clicks queued, for the rate the writer sees.
	arrived atomic.Int64
	// The drain's pace, under flushMu (see cycle).
	lastCycle   time.Time
	lastArrived int64
	nextDrain   time.Time
	// After a failed drain the next waits until retryDrain (drainBackoff).
	retryDrain time.Time
	drainFails int
}

// batchHint is the size at which a batch is written before its interval.
const batchHint = 20_000

// NewRecorder returns a recorder writing to store. max <= 0 means 1,000,000
// clicks; the queue's memory is bounded by DefaultQueueBytes unless
// SetQueueBytes says otherwise.
func NewRecorder(store ClickStore, interval time.Duration, max int, logger *slog.Logger) *Recorder {
	if max <= 0 {
		max = 1_000_000
	}
	if logger == nil {
		logger = slog.Default()
	}
	r := &Recorder{store: store, interval: interval, max: max, maxBytes: DefaultQueueBytes, logger: logger, now: time.Now, in: newInterner(),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	r.writeLog = &faultlog.Log{Logger: logger, Now: func() time.Time { return r.now() }, Every: logEvery}
	return r
}

// SetQueueBytes bounds the memory the queue holds, in bytes (n <= 0 means
// DefaultQueueBytes). Call it before Start.
func (r *Recorder) SetQueueBytes(n int64) {
	if n <= 0 {
		n = DefaultQueueBytes
	}
	r.maxBytes = n
}

// SetClock sets the clock of the write health and of rate-limited logs.
// Call it before Start.
func (r *Recorder) SetClock(now func() time.Time) { r.now = now }

// SetEnrich sets the function that classifies a batch in place before it
// is written (user agent, country, visitor). It runs on the flush
// goroutine, never on a redirect, and must leave classified clicks alone
// when a failed batch is tried again. Call it before Start.
func (r *Recorder) SetEnrich(fn func(ctx context.Context, batch []link.Click) error) {
	r.enrich = fn
}

// SetTap sets the function that is shown each batch of clicks once it is
// stored (in the aggregates or the backlog), classified: the live click
// streams. It runs on the flush goroutine and must not wait. Call it at
// any time; nil stops it.
func (r *Recorder) SetTap(fn func(batch []link.Click)) {
	if fn == nil {
		r.tap.Store(nil)
		return
	}
	r.tap.Store(&fn)
}

// write classifies a batch and stores it as mode says (writeDirect or a
// spill), and keeps the health of writes. It returns the number of
// clicks taken from the front of batch (all but what writeSpillRest
// leaves) and, of those, stored. Clicks the store skipped as invalid are
// counted as dropped: tried again they would fail again.
func (r *Recorder) write(ctx context.Context, batch []link.Click, mode writeMode) (taken, stored int, err error) {
	taken, skipped, err := r.writeBatch(ctx, batch, mode)
	if err == nil && skipped > 0 {
		r.drop(int64(skipped), "clicks that cannot be stored (malformed ID or time out of range) were DROPPED",
			"skipped", skipped)
	}
	// A spill that succeeds says nothing of the store's aggregates (on
	// PostgreSQL the backlog is a file of the instance's own): writes
	// still fail until a write or a drain succeeds.
	if err != nil || (mode != writeSpill && mode != writeSpillRest) {
		r.noteWrite(err)
	}
	if err != nil {
		return 0, 0, err
	}
	if tap := r.tap.Load(); tap != nil && taken > 0 {
		(*tap)(batch[:taken])
	}
	return taken, taken - skipped, nil
}

// noteWrite keeps the health of writes after a write that returned err.
func (r *Recorder) noteWrite(err error) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err != nil:
		r.failedWrites.Add(1)
		if !r.failing {
			r.failing, r.failSince = true, now
		}
		r.writeLog.Fail("writing clicks failed; they stay queued and are retried", err,
			"failed_writes", r.failedWrites.Load())
	case r.failing:
		r.failing = false
		r.writeLog.OK("writing clicks works again")
	}
}

func (r *Recorder) writeBatch(ctx context.Context, batch []link.Click, mode writeMode) (taken, skipped int, err error) {
	if r.enrich != nil {
		if err := r.enrich(ctx, batch); err != nil {
			return 0, 0, err
		}
	}
	if mode == writeSpill || mode == writeSpillRest {
		return r.spillBatch(ctx, batch, mode == writeSpillRest)
	}
	skipped, err = r.store.RecordClicks(ctx, batch)
	return len(batch), skipped, err
}

// WriteFailing reports whether the last write of clicks failed, and since
// when writes have been failing without one succeeding.
func (r *Recorder) WriteFailing() (since time.Time, failing bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failSince, r.failing
}

// Start runs the flush loop until Close. With Interval 0 there is no
// loop, unless the backlog holds clicks an earlier run left: then the loop
// drains them.
func (r *Recorder) Start() {
	if r.interval <= 0 && (r.backlog == nil || r.backlogClicks.Load() == 0) {
		return
	}
	if !r.started.CompareAndSwap(false, true) {
		return
	}
	if r.backlogClicks.Load() > 0 {
		select { // drain what an earlier run left at once
		case r.kick <- struct{}{}:
		default:
		}
	}
	go r.loop()
}

func (r *Recorder) loop() {
	defer close(r.done)
	every := r.interval
	if every <= 0 {
		every = time.Second // only drains (see Start)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		case <-r.kick:
		}
		_ = r.cycle(context.Background()) // write logs failures
	}
}

// Record queues a click. It never waits for the disk unless the recorder
// writes every click at once (Interval 0).
func (r *Recorder) Record(c link.Click) {
	if r.interval <= 0 {
		_, n, err := r.write(context.Background(), []link.Click{c}, writeDirect)
		if err != nil {
			r.drop(1, "writing a click failed; it is lost", "link", c.LinkID, "err", err)
			return
		}
		r.written.Add(int64(n))
		return
	}
	r.mu.Lock()
	// A slot, then what the click needs besides (its slot is counted in
	// the array's capacity).
	var q queuedClick
	ok := len(r.held)+len(r.buf) < r.max && r.roomFor(clickSize+int64(len(c.LinkID)))
	if ok {
		q, _, ok = r.in.put(&c, r.maxBytes-r.queueBytes()+clickSize)
	}
	if !ok {
		r.mu.Unlock()
		r.drop(1, "click queue is full: clicks are being DROPPED; the disk cannot keep up")
		return
	}
	r.buf = append(r.buf, q)
	r.strBytes += q.cost() - clickSize
	r.arrived.Add(1)
	// Write early when the batch grows large, unless writes are failing:
	// then the next try waits for the interval.
	early := (len(r.buf) == min(batchHint, max(r.max/2, 1)) || r.queueBytes() > r.maxBytes/2) && !r.failing
	r.mu.Unlock()
	if early {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// queueBytes returns the memory the queue holds. r.mu is held.
func (r *Recorder) queueBytes() int64 {
	return int64(cap(r.buf)+cap(r.held))*clickSize + r.outside()
}

// outside returns the memory the queue holds outside its arrays: what the
// clicks own and the intern tables they use. r.mu is held.
func (r *Recorder) outside() int64 {
	return r.strBytes + r.in.bytes + r.heldTables
}

// roomFor reports whether a click of cost bytes fits in the queue, growing
// buf by hand when it is full so that the bound counts its capacity.
// r.mu is held.
func (r *Recorder) roomFor(cost int64) bool {
	if r.queueBytes()+cost-clickSize > r.maxBytes {
		return false
	}
	if len(r.buf) < cap(r.buf) {
		return true
	}
	fit := (r.maxBytes - r.outside() - (cost - clickSize)) / clickSize
	fit -= int64(cap(r.held))
	c := min(int64(cap(r.buf)+max(cap(r.buf)/4, 64)), fit)
	if c <= int64(len(r.buf)) {
		return false
	}
	buf := make([]queuedClick, len(r.buf), c)
	copy(buf, r.buf)
	r.buf = buf
	return true
}

// drop counts n dropped clicks and logs it, at most once every logEvery.
func (r *Recorder) drop(n int64, msg string, args ...any) {
	total := r.dropped.Add(n)
	now := r.now()
	r.dropLogMu.Lock()
	defer r.dropLogMu.Unlock()
	if !r.dropLogAt.IsZero() && now.Sub(r.dropLogAt) < logEvery {
		return
	}
	args = append(args, "dropped", total-r.dropLogN, "dropped_total", total,
		"queue_clicks", r.max, "queue_bytes", r.maxBytes)
	r.logger.Error(msg, args...)
	r.dropLogAt, r.dropLogN = now, total
}

// Pending returns the number of clicks not yet written: queued, being
// written, or waiting for a failed write to be tried again.
func (r *Recorder) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.held) + len(r.buf)
}

// PendingBytes returns the memory the queued clicks hold, as bounded by
// SetQueueBytes.
func (r *Recorder) PendingBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.queueBytes()
}

// QueueBytes returns the bound of PendingBytes.
func (r *Recorder) QueueBytes() int64 { return r.maxBytes }

// Dropped returns the number of clicks dropped because the queue or the
// backlog was full, because the store could not take them
// (malformed, see ClickStore, or an unreadable backlog record) or,
// with Interval 0, because writing failed.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// Written returns the number of clicks written into the store's
// aggregates: a click spilled to the backlog counts once drained.
func (r *Recorder) Written() int64 { return r.written.Load() }

// FailedWrites returns the number of writes of clicks (batches) that failed.
func (r *Recorder) FailedWrites() int64 { return r.failedWrites.Load() }

// Flush writes every queued click into the store's aggregates: first a
// batch whose write failed before, then the clicks recorded since, in
// transactions of at most maxWrite clicks, and with a backlog (see
// SetBacklog) every click it holds. On failure the clicks not written
// are kept, and tried again first by the next Flush.
func (r *Recorder) Flush(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	if r.backlog != nil {
		if err := r.readBacklog(ctx); err != nil {
			return err
		}
	}
	if r.backlogClicks.Load() == 0 {
		return r.writeQueue(ctx, writeDirect)
	}
	if err := r.writeQueue(ctx, spillMode(r.spills())); err != nil {
		return err
	}
	for r.backlogClicks.Load() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.drain(ctx, drainWrite); err != nil {
			return err
		}
	}
	return nil
}

// writeMode is where writeQueue stores the clicks.
type writeMode uint8

const (
	// writeDirect writes every click into the aggregates, in parts.
	writeDirect writeMode = iota
	// writeSpill appends every click to the backlog.
	writeSpill
	// writeFirstPart writes one part into the aggregates and appends the
	// rest to the backlog (see writeSpillRest): the clicks are too few
	// for the writer to be behind, but spread over more links than one
	// part takes (see maxWriteLinks), and writing every part while
	// redirects go on would let the queue fill up.
	writeFirstPart
	// writeSpillRest is writeFirstPart past its part: it appends to the
	// backlog what the backlog takes, and writes the rest into the
	// aggregates, in parts, rather than drop it: the writer is not behind.
	writeSpillRest
)

// spillMode is writeSpill with spill, else writeDirect.
func spillMode(spill bool) writeMode {
	if spill {
		return writeSpill
	}
	return writeDirect
}

// writeQueue writes the clicks queued, a batch whose write failed before
// then the clicks recorded since, as mode says: the clicks since go on
// where the failed batch ended (writeFirstPart writes one part of both).
// r.flushMu is held.
func (r *Recorder) writeQueue(ctx context.Context, mode writeMode) error {
	mode, err := r.writeHeld(ctx, mode)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if len(r.buf) == 0 {
		r.mu.Unlock()
		return nil
	}
	r.held, r.heldBytes = r.buf, r.strBytes
	if r.in.full {
		// The old tables live on in the clicks taken until they are
		// written (held is empty here: writeHeld succeeded).
		r.heldTables, r.in = r.in.bytes, newInterner()
	}
	// The next batch will likely be as large as this one: size it so that
	// redirects do not pay for growing it, as far as the bound allows.
	room := (r.maxBytes-r.outside())/clickSize - int64(cap(r.held))
	r.buf = make([]queuedClick, 0, max(min(int64(max(len(r.held), 64)), int64(r.max), room), 0))
	r.mu.Unlock()
	_, err = r.writeHeld(ctx, mode)
	return err
}

// maxWrite is the most clicks written in one transaction, and
// maxWriteLinks the most links whose clicks one transaction writes. A flush takes
// every click queued, so when the writer falls behind its batches grow
// and its cost per click falls (a batch's aggregates are rewritten once
// for all its clicks of a link or hour, and bolt's pages once for all the
// changes they hold). Writing a batch costs memory besides the clicks
// (the clicks as link.Click, the aggregates it updates, bolt's dirty
// pages: about 150 MB at 20,000 clicks and 320 MB at 100,000 with a
// million links), so a larger backlog is written in parts and that cost
// stays bounded too: at 100,000 a part, a million links under uniform
// load took the process to 339 MB of anonymous memory, and 50,000 to 461
// MB, where 20,000 kept it at 252 MB. What a write's memory follows is
// the links it touches rather than its clicks: each link clicked brings
// its blobs and their pages, whatever its number of clicks. So a part
// also ends at maxWriteLinks links, the size of a drain (drainWrite):
// 20,000 clicks over a few hundred hot links are still one write, while
// 20,000 spread over as many links are four. Without that bound, a
// million links under uniform load reached 326 MB whenever redirects
// slowed (a slow spell of the machine) and each flush found just under
// maxWrite clicks, to write directly rather than spill. Spills append
// to the backlog whatever the links, and are not bound by links. While
// writes fail, each try writes only probeWrite clicks: a failed try
// wastes little, and once one succeeds the rest follows in parts of
// maxWrite.
const (
	maxWrite      = 20_000
	maxWriteLinks = drainWrite
	probeWrite    = 1000
)

// writeHeld writes the held batch in parts of at most maxWrite clicks
// (and maxWriteLinks links, into the aggregates), as mode says, and
// returns the mode its last part left (see writeSpillRest).
// r.flushMu is held: only a flush changes held, so it is read here
// without r.mu.
func (r *Recorder) writeHeld(ctx context.Context, mode writeMode) (writeMode, error) {
	whole := true // held is still the array it was taken with
	for len(r.held) > 0 {
		spill := mode == writeSpill || mode == writeSpillRest
		r.mu.Lock()
		size := maxWrite
		if r.failing {
			size = probeWrite
		}
		r.mu.Unlock()
		part := r.held[:min(len(r.held), size)]
		if !spill {
			part = part[:r.linksPart(part)]
		}
		clicks := make([]link.Click, len(part))
		for i := range part {
			clicks[i] = part[i].click()
		}
		taken, wrote, err := r.write(ctx, clicks, mode)
		rest := r.held
		if err == nil {
			rest = r.held[taken:]
			if !spill {
				r.written.Add(int64(wrote))
			}
		}
		if len(rest) == 0 {
			rest = nil
		} else if err != nil && !whole {
			// Kept for a retry: let the written part's array go.
			rest = slices.Clone(rest)
		}
		var n int64
		for i := range rest {
			n += rest[i].cost() - clickSize
		}
		r.mu.Lock()
		r.held = rest
		r.strBytes += n - r.heldBytes
		r.heldBytes = n
		if rest == nil {
			r.heldTables = 0
		}
		r.mu.Unlock()
		if err != nil {
			return mode, err
		}
		switch {
		case mode == writeFirstPart:
			mode = writeSpillRest
		case mode == writeSpillRest && taken < len(part):
			mode = writeDirect // the backlog is full
		}
		whole = false
	}
	return mode, nil
}

// linksPart returns how many of the clicks of part, from the first, are
// of at most maxWriteLinks links. r.flushMu is held.
func (r *Recorder) linksPart(part []queuedClick) int {
	if len(part) <= maxWriteLinks {
		return len(part)
	}
	if r.partLinks == nil {
		r.partLinks = make(map[string]struct{}, maxWriteLinks)
	}
	defer clear(r.partLinks)
	for i := range part {
		if _, ok := r.partLinks[part[i].linkID]; !ok {
			if len(r.partLinks) == maxWriteLinks {
				return i
			}
			r.partLinks[part[i].linkID] = struct{}{}
		}
	}
	return len(part)
}

// Close stops the flush loop and stores what is queued (see Persist): a
// backlog stays on disk for the next start to drain; what a full backlog
// cannot take is written into the aggregates. Records that arrive
// after Close are still queued and written by a later Flush; the server
// stops taking requests before it closes the recorder.
func (r *Recorder) Close(ctx context.Context) error {
	r.once.Do(func() { close(r.stop) })
	r.closing.Store(true)
	if r.started.Load() {
		select {
		case <-r.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return r.Persist(ctx)
}
