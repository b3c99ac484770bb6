package auth

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Decision is the answer of Limiters.Allow, with what the server puts in the
// X-RateLimit-* and Retry-After headers.
type Decision struct {
	// Allowed reports whether the request may go ahead.
	Allowed bool
	// Limit is the rate in requests per minute (X-RateLimit-Limit).
	Limit int
	// Remaining is the number of whole requests left right now, after this
	// one (X-RateLimit-Remaining); never negative.
	Remaining int
	// Reset is when the bucket will be full again if no request comes
	// (X-RateLimit-Reset); it is not rounded.
	Reset time.Time
	// RetryAfter is, for a refused request, the wait until one request is
	// allowed, rounded up to whole seconds and at least one (Retry-After).
	RetryAfter time.Duration
	// Unlimited reports a plan without a limit; all other fields but
	// Allowed are then zero and no header is due.
	Unlimited bool
}

// fullRefill is how long an empty bucket takes to fill completely. With
// burst = perMinute and a rate of perMinute per minute it is one minute for
// every plan, so a limiter idle for this long is full: the same as a new one,
// and safe to drop.
const fullRefill = time.Minute

// sweepInterval is how often, in injected time, Allow drops idle limiters.
// An idle limiter therefore lives at most fullRefill+sweepInterval, and the
// memory held is bounded by the keys seen in the last two minutes. Sweeping
// by time rather than by call count keeps the cost at one pass over the map
// per minute however busy the server is.
const sweepInterval = time.Minute

// limiterShards spreads keys over several locks so that concurrent requests
// of different credentials do not queue on one mutex.
const limiterShards = 32

// Limiters holds one token-bucket limiter per key: a workspace
// ("ws:<id>", the budget all its keys and users share), a user outside any
// workspace ("user:<id>") or a login address ("login-ip:<addr>"). A key's
// bucket holds its per-minute rate and refills at that rate, so a
// workspace may spend a whole minute's allowance at once and then one
// request every 60/rate seconds. Limiters is safe for concurrent use and reads only its injected
// clock.
type Limiters struct {
	now       func() time.Time
	nextSweep atomic.Int64 // Unix nanoseconds of injected time
	shards    [limiterShards]limiterShard
}

type limiterShard struct {
	mu      sync.Mutex
	entries map[string]*limiterEntry
}

type limiterEntry struct {
	lim       *rate.Limiter
	perMinute int
	lastUsed  time.Time
}

// NewLimiters returns an empty set of limiters reading the clock now; nil
// means time.Now.
func NewLimiters(now func() time.Time) *Limiters {
	if now == nil {
		now = time.Now
	}
	l := &Limiters{now: now}
	for i := range l.shards {
		l.shards[i].entries = make(map[string]*limiterEntry)
	}
	l.nextSweep.Store(now().Add(sweepInterval).UnixNano())
	return l
}

// Allow takes one request from key's bucket, which holds perMinute requests
// and refills at perMinute per minute. perMinute <= 0 means unlimited: the
// request is allowed and any limiter kept for key is dropped. When the rate
// of a key changes (its workspace changed plan), its limiter takes the new
// rate and burst from now on, keeping the tokens it has (at most the new
// burst).
func (l *Limiters) Allow(key string, perMinute int) Decision {
	now := l.now()
	l.maybeSweep(now)

	s := &l.shards[shardOf(key)]
	s.mu.Lock()
	defer s.mu.Unlock()

	if perMinute <= 0 {
		delete(s.entries, key)
		return Decision{Allowed: true, Unlimited: true}
	}
	limit := rate.Limit(float64(perMinute) / 60)
	e := s.entries[key]
	switch {
	case e == nil:
		e = &limiterEntry{lim: rate.NewLimiter(limit, perMinute), perMinute: perMinute}
		s.entries[key] = e
	case e.perMinute != perMinute:
		e.lim.SetLimitAt(now, limit)
		e.lim.SetBurstAt(now, perMinute)
		e.perMinute = perMinute
	}
	e.lastUsed = now

	// Both calls run under the shard lock, so tokens is what this request
	// left behind and no other request of the key came in between.
	allowed := e.lim.AllowN(now, 1)
	tokens := e.lim.TokensAt(now)
	d := Decision{
		Allowed:   allowed,
		Limit:     perMinute,
		Remaining: max(0, int(math.Floor(tokens))),
		Reset:     now.Add(timeFor(float64(perMinute)-tokens, limit)),
	}
	if !allowed {
		wait := timeFor(1-tokens, limit)
		d.RetryAfter = max(time.Second, (wait + time.Second - 1).Truncate(time.Second))
	}
	return d
}

// timeFor returns how long limit takes to add tokens, to the nanosecond.
// Rounding to the nearest nanosecond rather than up keeps float noise
// (1.0000000000000002 s) from turning into a whole extra second later.
func timeFor(tokens float64, limit rate.Limit) time.Duration {
	if tokens <= 0 {
		return 0
	}
	return time.Duration(math.Round(tokens / float64(limit) * float64(time.Second)))
}

// Len returns the number of limiters held.
func (l *Limiters) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.entries)
		s.mu.Unlock()
	}
	return n
}

// maybeSweep drops idle limiters once per sweepInterval of injected time.
// Of the calls that find a sweep due, exactly one does it; the others go on.
func (l *Limiters) maybeSweep(now time.Time) {
	next := l.nextSweep.Load()
	if now.UnixNano() < next || !l.nextSweep.CompareAndSwap(next, now.Add(sweepInterval).UnixNano()) {
		return
	}
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for key, e := range s.entries {
			if now.Sub(e.lastUsed) >= fullRefill {
				delete(s.entries, key)
			}
		}
		s.mu.Unlock()
	}
}

// shardOf hashes key with FNV-1a.
func shardOf(key string) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % limiterShards)
}
