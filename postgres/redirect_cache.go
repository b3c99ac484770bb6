package postgres

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// redirectCacheTTL is how long a link read for a redirect (or the table
// of verified domains read to route requests) is answered from memory: a link being
// clicked is read from the database at most once in that time, so hot
// links never wait for it. A change made through this process is seen at
// once (it invalidates the cache when its transaction ends); a change
// made through another linkbolt process on the same database is seen
// within this time. While the database cannot be read, a link kept
// longer is still answered (stale), so that links clicked before an
// outage keep redirecting through it.
const redirectCacheTTL = time.Second

// redirectCacheSize bounds the entries the cache holds: a shard that is
// full starts again empty.
const redirectCacheSize = 1 << 15

const redirectCacheShards = 32

// redirectCache holds what redirects read, by key, for redirectCacheTTL.
// Of links, only those found are kept: an unknown code is asked for again, so
// creating a link needs no invalidation, and a flood of unknown codes
// cannot push the hot links out. Every change that could alter a kept
// answer (a link's update or deletion, its campaign's UTM values, a
// domain's state) calls invalidate after its transaction, which moves the
// generation on: answers read under an older generation are not served,
// nor kept when a read that began before the change ends after it.
type redirectCache[V any] struct {
	now    func() time.Time
	seed   maphash.Seed
	gen    atomic.Uint64
	shards [redirectCacheShards]redirectShard[V]
}

type redirectShard[V any] struct {
	mu sync.RWMutex
	m  map[string]redirectEntry[V]
}

type redirectEntry[V any] struct {
	v   V
	gen uint64
	at  time.Time
}

func newRedirectCache[V any](now func() time.Time) *redirectCache[V] {
	return &redirectCache[V]{now: now, seed: maphash.MakeSeed()}
}

func (c *redirectCache[V]) shard(key string) *redirectShard[V] {
	return &c.shards[maphash.String(c.seed, key)%redirectCacheShards]
}

// get returns the value kept for key, if it is of the current generation
// and younger than the TTL, and the generation a read to fill it must be
// put back with.
func (c *redirectCache[V]) get(key string) (v V, ok bool, gen uint64) {
	gen = c.gen.Load()
	s := c.shard(key)
	s.mu.RLock()
	e, found := s.m[key]
	s.mu.RUnlock()
	if found && e.gen == gen && c.now().Sub(e.at) < redirectCacheTTL {
		return e.v, true, gen
	}
	return v, false, gen
}

// put keeps v for key, read under generation gen; a value read before a
// change that ended meanwhile is dropped.
func (c *redirectCache[V]) put(key string, v V, gen uint64) {
	if c.gen.Load() != gen {
		return
	}
	s := c.shard(key)
	s.mu.Lock()
	if s.m == nil || len(s.m) >= redirectCacheSize/redirectCacheShards {
		s.m = make(map[string]redirectEntry[V])
	}
	s.m[key] = redirectEntry[V]{v: v, gen: gen, at: c.now()}
	s.mu.Unlock()
}

// stale returns the value kept for key past its TTL, if no change made
// through this process came since it was read: what a redirect answers
// while the database cannot be read.
func (c *redirectCache[V]) stale(key string) (v V, ok bool) {
	s := c.shard(key)
	s.mu.RLock()
	e, found := s.m[key]
	s.mu.RUnlock()
	if found && e.gen == c.gen.Load() {
		return e.v, true
	}
	return v, false
}

// invalidate makes every kept value stale.
func (c *redirectCache[V]) invalidate() { c.gen.Add(1) }
