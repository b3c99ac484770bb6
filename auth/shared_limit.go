package auth

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// SharedLimiters rates requests against budgets kept in the store
// (link.RateBudget), which every process on the store shares: N processes
// behind a load balancer give a workspace its plan's rate, not N times it.
// It answers as Limiters does (burst = the per-minute rate, refilled at
// that rate; a plan change keeps the requests held, at most the new
// burst), with the same headers.
//
// A refused key is remembered in memory until one request is due again,
// so that a flood of refused requests does not become a flood of writes.
// When the store fails, the request is rated by the process's own
// Limiters instead: the limiter never fails a request, and while the
// store is down each process allows a workspace its plan's rate on its
// own. A slow store is waited for, as the rest of the request waits for
// it (its statement and connect timeouts bound the wait): rating in
// memory whenever the database is busy would lift the limit exactly when
// it matters.
type SharedLimiters struct {
	budget    link.RateBudget
	local     *Limiters
	now       func() time.Time
	nextSweep atomic.Int64 // Unix nanoseconds of injected time
	fallbacks atomic.Int64
	shards    [limiterShards]refusedShard
}

type refusedShard struct {
	mu      sync.Mutex
	entries map[string]refusal
}

// refusal is a refused key's bucket: at perMinute, full at full, with no
// request before until.
type refusal struct {
	perMinute   int
	full, until time.Time
}

// NewSharedLimiters returns limiters over budget that fall back to local,
// reading the clock now (nil: time.Now).
func NewSharedLimiters(budget link.RateBudget, local *Limiters, now func() time.Time) *SharedLimiters {
	if now == nil {
		now = time.Now
	}
	l := &SharedLimiters{budget: budget, local: local, now: now}
	for i := range l.shards {
		l.shards[i].entries = make(map[string]refusal)
	}
	l.nextSweep.Store(now().Add(sweepInterval).UnixNano())
	return l
}

// Allow takes one request from key's shared bucket of perMinute requests
// (<= 0: unlimited, the store is not asked). A non-nil error says that
// the store failed: the decision then comes from the local limiters.
func (l *SharedLimiters) Allow(ctx context.Context, key string, perMinute int) (Decision, error) {
	now := l.now()
	l.maybeSweep(now)
	if perMinute <= 0 {
		l.forget(key)
		return l.local.Allow(key, perMinute), nil
	}
	if d, ok := l.stillRefused(key, perMinute, now); ok {
		return d, nil
	}
	allowed, full, err := l.budget.TakeRate(ctx, key, perMinute, now)
	if err != nil {
		l.fallbacks.Add(1)
		return l.local.Allow(key, perMinute), err
	}
	d, until := budgetDecision(allowed, full, now, perMinute)
	if !allowed {
		s := &l.shards[shardOf(key)]
		s.mu.Lock()
		s.entries[key] = refusal{perMinute: perMinute, full: full, until: until}
		s.mu.Unlock()
	}
	return d, nil
}

// Fallbacks returns how many requests were rated in memory because the
// store failed.
func (l *SharedLimiters) Fallbacks() int64 { return l.fallbacks.Load() }

// Len returns the number of refused keys remembered.
func (l *SharedLimiters) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.entries)
		s.mu.Unlock()
	}
	return n
}

// stillRefused answers a key refused before, at the same rate, whose
// next request is not due yet, without the store: no other process can
// fill a bucket faster than time does.
func (l *SharedLimiters) stillRefused(key string, perMinute int, now time.Time) (Decision, bool) {
	s := &l.shards[shardOf(key)]
	s.mu.Lock()
	r, ok := s.entries[key]
	if ok && (r.perMinute != perMinute || !now.Before(r.until)) {
		delete(s.entries, key)
		ok = false
	}
	s.mu.Unlock()
	if !ok {
		return Decision{}, false
	}
	d, _ := budgetDecision(false, r.full, now, perMinute)
	return d, true
}

func (l *SharedLimiters) forget(key string) {
	s := &l.shards[shardOf(key)]
	s.mu.Lock()
	delete(s.entries, key)
	s.mu.Unlock()
}

// maybeSweep drops the refusals past their time once per sweepInterval of
// injected time, so that the memory held is bounded by the keys refused
// in the last minute or two.
func (l *SharedLimiters) maybeSweep(now time.Time) {
	next := l.nextSweep.Load()
	if now.UnixNano() < next || !l.nextSweep.CompareAndSwap(next, now.Add(sweepInterval).UnixNano()) {
		return
	}
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for key, r := range s.entries {
			if !now.Before(r.until) {
				delete(s.entries, key)
			}
		}
		s.mu.Unlock()
	}
}

// budgetDecision is the Decision for a bucket of perMinute requests, full
// at full, as of now, and when its next request is due. The bucket holds
// perMinute - (full-now)·perMinute/minute requests; the arithmetic is in
// whole nanoseconds so that a bucket that holds 99 requests says 99, not
// 98.99999 (Limiters' float tokens round the same way).
func budgetDecision(allowed bool, full, now time.Time, perMinute int) (Decision, time.Time) {
	left := max(0, full.Sub(now))
	p, minute := int64(perMinute), int64(time.Minute)
	used := (int64(left)*p + minute - 1) / minute // requests missing, rounded up
	d := Decision{
		Allowed:   allowed,
		Limit:     perMinute,
		Remaining: int(max(0, p-used)),
		Reset:     now.Add(left),
	}
	// One request is due when the bucket is at most perMinute-1
	// requests from full.
	wait := time.Duration(max(0, (int64(left)*p-(p-1)*minute+p-1)/p))
	if !allowed {
		d.RetryAfter = max(time.Second, (wait + time.Second - 1).Truncate(time.Second))
	}
	return d, now.Add(wait)
}
