package postgres

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// redirectCacheTTLListening is how long a link read for a redirect (or
// the table of verified domains read to route requests) is answered from
// memory while the process hears the database's notifications of changes
// (cacheListener): a link being clicked is read from the database at most
// once in that time, so hot links never wait for it. A change made
// through this process is seen at once (it makes the cache stale when its
// transaction ends); one made through another linkbolt process on the
// same database when its notification arrives, a few milliseconds after
// its commit. The TTL bounds what a lost notification could keep stale.
// redirectCacheTTL is the time while the process does not hear them
// (before its listener connects, or while it connects again): changes
// through other processes are seen within it. While the database cannot
// be read, a link kept longer is still answered (stale), so that links
// clicked before an outage keep redirecting through it.
const (
	redirectCacheTTLListening = time.Minute
	redirectCacheTTL          = time.Second
)

// redirectCacheSize bounds the entries the cache holds: a shard that is
// full starts again empty.
const redirectCacheSize = 1 << 15

const redirectCacheShards = 32

// redirectCache holds what redirects read, by key, for redirectCacheTTL.
// Of links, only those found are kept: an unknown code is asked for again, so
// creating a link needs no invalidation, and a flood of unknown codes
// cannot push the hot links out. Every change that could alter a kept
// answer (a link's update or deletion, its campaign's UTM values, a
// domain's state) calls invalidateKey for what it changed, or invalidate
// for everything, after its transaction: invalidate moves the generation
// on, and answers read under an older generation are not served;
// invalidateKey drops the key's answer and moves its shard's generation
// on. Neither keeps an answer of a read that began before the change and
// ended after it.
type redirectCache[V any] struct {
	now  func() time.Time
	seed maphash.Seed
	gen  atomic.Uint64
	// epoch moves on when changes may have gone unheard (see
	// forgetFreshness): answers of an older epoch are not served fresh,
	// but still stale.
	epoch atomic.Uint64
	// announced moves on (with epoch) when another process announced a
	// change that may touch any answer (changedElsewhere): an answer of
	// an older one is not given for a database that is only slow (see
	// readStall).
	announced atomic.Uint64
	listening atomic.Bool
	shards    [redirectCacheShards]redirectShard[V]
}

type redirectShard[V any] struct {
	mu  sync.RWMutex
	m   map[string]redirectEntry[V]
	gen uint64 // moved on by invalidateKey, under mu
}

// readToken is what a read to fill the cache must be put back with.
type readToken struct{ gen, epoch, announced, shardGen uint64 }

type redirectEntry[V any] struct {
	v                     V
	gen, epoch, announced uint64
	at                    time.Time
}

func newRedirectCache[V any](now func() time.Time) *redirectCache[V] {
	return &redirectCache[V]{now: now, seed: maphash.MakeSeed()}
}

func (c *redirectCache[V]) shard(key string) *redirectShard[V] {
	return &c.shards[maphash.String(c.seed, key)%redirectCacheShards]
}

// ttl is how long a kept value is answered.
func (c *redirectCache[V]) ttl() time.Duration {
	if c.listening.Load() {
		return redirectCacheTTLListening
	}
	return redirectCacheTTL
}

// setListening says whether the process hears the notifications of
// changes (see cacheListener).
func (c *redirectCache[V]) setListening(on bool) { c.listening.Store(on) }

// get returns the value kept for key, if it is of the current generation
// and younger than the TTL, and the token a read to fill it must be put
// back with; otherwise old is what stale would answer, from the same
// look-up.
func (c *redirectCache[V]) get(key string) (v V, ok bool, tok readToken, old heldValue[V]) {
	tok.gen, tok.epoch, tok.announced = c.gen.Load(), c.epoch.Load(), c.announced.Load()
	s := c.shard(key)
	s.mu.RLock()
	e, found := s.m[key]
	tok.shardGen = s.gen
	s.mu.RUnlock()
	if found && e.gen == tok.gen && e.epoch == tok.epoch && c.now().Sub(e.at) < c.ttl() {
		return e.v, true, tok, old
	}
	return v, false, tok, c.held(e, found, tok.gen)
}

// heldValue is a value kept past its TTL (see stale).
type heldValue[V any] struct {
	v           V
	ok, current bool
}

// held is the entry e (found) as stale answers it under generation gen.
func (c *redirectCache[V]) held(e redirectEntry[V], found bool, gen uint64) heldValue[V] {
	if found && e.gen == gen {
		return heldValue[V]{v: e.v, ok: true, current: e.announced == c.announced.Load()}
	}
	return heldValue[V]{}
}

// put keeps v for key, read with tok; a value read before a change that
// ended meanwhile is dropped.
func (c *redirectCache[V]) put(key string, v V, tok readToken) {
	if c.gen.Load() != tok.gen || c.epoch.Load() != tok.epoch {
		return
	}
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != tok.shardGen {
		return
	}
	if s.m == nil || len(s.m) >= redirectCacheSize/redirectCacheShards {
		s.m = make(map[string]redirectEntry[V])
	}
	s.m[key] = redirectEntry[V]{v: v, gen: tok.gen, epoch: tok.epoch, announced: tok.announced, at: c.now()}
}

// stale returns the value kept for key past its TTL, if no change made
// through this process came since it was read: what a redirect answers
// while the database cannot be read. current says whether no other
// process announced a change that may touch it since (changedElsewhere):
// only such a value is answered for a database that is slow rather than
// refusing.
func (c *redirectCache[V]) stale(key string) (v V, ok, current bool) {
	s := c.shard(key)
	s.mu.RLock()
	e, found := s.m[key]
	s.mu.RUnlock()
	h := c.held(e, found, c.gen.Load())
	return h.v, h.ok, h.current
}

// forgetFreshness makes every kept value one to read again, though
// still one to answer while the database cannot be read: changes may
// have gone unheard (the listener was not connected), but none made
// through this process.
func (c *redirectCache[V]) forgetFreshness() { c.epoch.Add(1) }

// changedElsewhere is forgetFreshness for a change another process
// announced that may touch any kept value (a campaign's UTM values, a
// domain's state): kept values are still answered while the database
// refuses, but no longer while it is only slow.
func (c *redirectCache[V]) changedElsewhere() {
	c.announced.Add(1)
	c.epoch.Add(1)
}

// invalidate makes every kept value stale.
func (c *redirectCache[V]) invalidate() { c.gen.Add(1) }

// invalidateKey makes the value kept for key stale.
func (c *redirectCache[V]) invalidateKey(key string) {
	s := c.shard(key)
	s.mu.Lock()
	delete(s.m, key)
	s.gen++
	s.mu.Unlock()
}
