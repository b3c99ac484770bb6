package analytics

import (
	"context"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// Backlog is a store that keeps clicks on disk, classified, until they
// are written into the aggregates (storage.ClickService): appending a
// click there costs a small part of writing it into the aggregates.
type Backlog interface {
	// SpillClicks appends clicks while the backlog holds at most limit
	// bytes; spilled is how many it took, in order.
	SpillClicks(ctx context.Context, clicks []link.Click, limit int64) (spilled, skipped int, err error)
	// DrainClicks writes the oldest at most max clicks into the
	// aggregates and takes them out of the backlog, in one transaction.
	DrainClicks(ctx context.Context, max int) (taken, skipped int, err error)
	// Backlog returns the clicks it holds and their bytes.
	Backlog(ctx context.Context) (clicks, bytes int64, err error)
}

// The pace of the drain. While clicks come faster than floodRate a second
// and the backlog holds less than half its bound, the writer drains at
// most one part in drainShare of the time (it waits drainShare-1 times
// what a drain took before the next), so that redirects keep the CPU
// during a flood; the rest of the time it only spills. Otherwise it
// drains as fast as it can.
//
// A drain writes drainWrite clicks, not maxWrite: a transaction's
// memory (bolt's changed pages, some 150 MB for 20,000 clicks spread over
// a million links) comes on top of everything else, and the backlog
// exists because the writer is behind. At a million links under uniform
// load, drains of 20,000 took the process to 331 MB of anonymous memory
// while it caught up, drains of 5,000 to 252 MB, catching up as fast
// (bench/scale; see "The click backlog" in docs/analytics.md).
const (
	floodRate  = 5000
	drainShare = 4
	drainWrite = maxWrite / 4
)

// SetBacklog makes the recorder keep clicks in b, on disk and at most
// limit bytes of it, rather than drop them, when they come faster than it
// writes them into the aggregates; it drains them as traffic allows, and
// at start what an earlier run left. With limit 0 it keeps no click there
// but still drains what an earlier run left, so that turning the backlog
// off never strands clicks on disk. Call it before Start.
func (r *Recorder) SetBacklog(ctx context.Context, b Backlog, limit int64) error {
	r.backlog, r.backlogLimit = b, limit
	return r.readBacklog(ctx)
}

// Backlogged returns the clicks waiting in the backlog and their bytes on
// disk.
func (r *Recorder) Backlogged() (clicks, bytes int64) {
	return r.backlogClicks.Load(), r.backlogBytes.Load()
}

// BacklogLimit returns the bound of the backlog's bytes (0: no backlog).
func (r *Recorder) BacklogLimit() int64 {
	if r.backlog == nil {
		return 0
	}
	return r.backlogLimit
}

func (r *Recorder) readBacklog(ctx context.Context) error {
	n, size, err := r.backlog.Backlog(ctx)
	if err != nil {
		return err
	}
	r.backlogClicks.Store(n)
	r.backlogBytes.Store(size)
	return nil
}

// spillBatch appends a classified batch to the backlog; what does not fit
// is dropped, or with keep left to the caller. It returns the clicks
// taken from the front of batch and the clicks skipped as invalid.
func (r *Recorder) spillBatch(ctx context.Context, batch []link.Click, keep bool) (taken, skipped int, err error) {
	spilled, skipped, err := r.backlog.SpillClicks(ctx, batch, r.backlogLimit)
	if err != nil {
		return 0, 0, err
	}
	// The clicks are on disk: nothing may fail this write now, or the
	// batch would be spilled, and counted, twice. The size is read past
	// the caller's context (a request may end here); if it cannot be
	// read, the count is kept by hand until the next read.
	if err := r.readBacklog(context.WithoutCancel(ctx)); err != nil {
		r.backlogClicks.Add(int64(spilled - skipped))
	}
	if keep {
		return spilled, skipped, nil
	}
	if spilled < len(batch) && r.closing.Load() {
		// A graceful stop loses no click: what the full backlog cannot
		// take goes into the aggregates. The spill is committed, so a
		// failure here drops the rest rather than keep the batch for a
		// retry that would spill it twice.
		rest := batch[spilled:]
		sk, err := r.store.RecordClicks(ctx, rest)
		if err == nil {
			r.written.Add(int64(len(rest) - sk))
			skipped += sk
			spilled = len(batch)
		} else {
			r.logger.Error("writing the clicks the full click backlog cannot take failed", "err", err)
		}
	}
	if lost := len(batch) - spilled; lost > 0 {
		r.drop(int64(lost), "click backlog is full (clicks.backlog_bytes): clicks are being DROPPED; the disk cannot keep up",
			"backlog_clicks", r.backlogClicks.Load(), "backlog_bytes", r.backlogBytes.Load())
	}
	return len(batch), skipped, nil
}

// drain writes the oldest n clicks of the backlog into the aggregates.
// r.flushMu is held.
func (r *Recorder) drain(ctx context.Context, n int) error {
	taken, skipped, err := r.backlog.DrainClicks(ctx, n)
	r.noteWrite(err)
	if err != nil {
		return err
	}
	// The drain committed: as after a spill, its size is read past the
	// caller's context, or kept by hand. It leaves the backlog's count
	// before it joins the written one, so that a reader of both counts it
	// at most once (the kill -9 test sums them as what is on disk).
	if err := r.readBacklog(context.WithoutCancel(ctx)); err != nil {
		r.backlogClicks.Add(-int64(taken))
	}
	r.written.Add(int64(taken - skipped))
	if skipped > 0 {
		r.drop(int64(skipped), "click backlog records that cannot be read were DROPPED", "skipped", skipped)
	}
	return nil
}

// Persist stores every queued click: into the aggregates while the
// backlog is empty and the queue small (or the backlog is off, limit 0),
// into the backlog otherwise (a click there is on disk, and counted once
// drained).
func (r *Recorder) Persist(ctx context.Context) error {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	mode := spillMode(r.behind() && r.spills())
	err := r.writeQueue(ctx, mode)
	if err != nil && mode == writeDirect && r.spillsApart() {
		// The store fails: the queue goes to the backlog, as far as it
		// takes it (on bbolt, in the same file, that fails as well).
		err = r.writeQueue(ctx, writeSpillRest)
	}
	return err
}

// behind reports whether the writer is behind: the backlog holds clicks,
// or (when the backlog takes them) more are queued than one transaction
// writes or than half what the queue holds at most, by count or by
// memory: a queue bounded below one write's worth (clicks.queue_size,
// clicks.queue_bytes) would otherwise drop clicks before it ever spilled.
// r.flushMu is held.
func (r *Recorder) behind() bool {
	if r.backlog == nil {
		return false
	}
	if r.backlogClicks.Load() > 0 {
		return true
	}
	if !r.spills() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.held) + len(r.buf)
	return n > maxWrite || n > r.max/2 || int64(n)*clickSize+r.outside() > r.maxBytes/2
}

// spills reports whether the backlog takes new clicks: it has a bound.
func (r *Recorder) spills() bool { return r.backlog != nil && r.backlogLimit > 0 }

// spillsApart reports whether the backlog takes new clicks and is apart
// from the store (SetBacklogApart): then it takes them while writes fail.
func (r *Recorder) spillsApart() bool { return r.backlogApart && r.spills() }

// SetBacklogApart says that the backlog is on a disk of its own, not in
// the store that fails (internal/clickspool on PostgreSQL): while writes
// of clicks fail, the queue then goes to the backlog at the second failed
// write in a row, rather than wait in memory until it is full, and what
// the backlog cannot take stays queued. A backlog in the store's own file
// (bbolt) keeps its clicks in memory then, as the file fails, or may
// hold a damaged page. Call it before Start.
func (r *Recorder) SetBacklogApart(apart bool) { r.backlogApart = apart }

// cycle is one turn of the flush loop. With nothing behind it writes the
// queue into the aggregates, as Flush does, but for one part only when
// the clicks are of more links than a part takes (maxWriteLinks): the
// rest is spilled, and drained as below. Behind, it spills the queue
// into the backlog and drains one part of the backlog, at the pace of
// floodRate and drainShare, and comes back at once while there is more
// to drain and no flood.
func (r *Recorder) cycle(ctx context.Context) error {
	if r.backlog == nil {
		return r.Flush(ctx)
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	now := r.now()
	arrived := r.arrived.Load()
	flood := false
	if el := now.Sub(r.lastCycle); !r.lastCycle.IsZero() && el > 0 {
		flood = float64(arrived-r.lastArrived)/el.Seconds() >= floodRate
	}
	r.lastCycle, r.lastArrived = now, arrived
	if !r.behind() {
		mode := writeDirect
		if r.spills() {
			mode = writeFirstPart
		}
		failing := r.failingNow()
		err := r.writeQueue(ctx, mode)
		if err != nil && failing && r.spillsApart() {
			// Writes fail again: rather than wait in memory until the
			// queue is full, the clicks go to the backlog, to be drained
			// once the store is back (on bbolt the backlog is in the
			// same file and the spill fails as well: the queue is kept).
			// What the backlog cannot take stays queued.
			_ = r.writeQueue(ctx, writeSpillRest)
		}
		return err
	}
	mode := spillMode(r.spills())
	if mode == writeSpill && r.backlogApart && r.failingNow() {
		// What the backlog cannot take stays queued (and is tried in the
		// aggregates) rather than dropped: the store, not the disk, is
		// what fails.
		mode = writeSpillRest
	}
	if err := r.writeQueue(ctx, mode); err != nil {
		return err
	}
	if r.backlogClicks.Load() == 0 {
		return nil
	}
	if !r.retryDrain.IsZero() && now.Before(r.retryDrain) {
		return nil // a drain failed: wait before the next try
	}
	pace := flood && r.backlogBytes.Load() < r.backlogLimit/2
	if pace && now.Before(r.nextDrain) {
		return nil
	}
	start := r.now()
	if err := r.drain(ctx, drainWrite); err != nil {
		r.drainFails++
		r.retryDrain = r.now().Add(drainBackoff(r.interval, r.drainFails))
		return err
	}
	r.drainFails, r.retryDrain = 0, time.Time{}
	r.nextDrain = time.Time{}
	if pace {
		end := r.now()
		r.nextDrain = end.Add(end.Sub(start) * (drainShare - 1))
	} else if r.backlogClicks.Load() > 0 {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// maxDrainBackoff is the longest wait between two tries of a failing
// drain: the backlog is written within it once the store is back.
const maxDrainBackoff = 5 * time.Second

// drainBackoff is the wait after the fails-th failed drain in a row: the
// flush interval, doubling, at most maxDrainBackoff.
func drainBackoff(interval time.Duration, fails int) time.Duration {
	d := max(interval, 10*time.Millisecond)
	for i := 1; i < fails && d < maxDrainBackoff; i++ {
		d *= 2
	}
	return min(d, maxDrainBackoff)
}

// failingNow reports whether writes are failing.
func (r *Recorder) failingNow() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failing
}
