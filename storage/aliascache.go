package storage

import (
	"sync"

	"github.com/linkbolt/linkbolt/link"
)

// aliasCacheSize bounds the redirect cache; beyond it, an arbitrary entry
// makes room, so memory stays bounded however many links there are.
const aliasCacheSize = 100_000

// aliasCache holds the links that redirects looked up, by domain and alias,
// so that a redirect for a hot link reads no page of the file. Every write
// that changes or removes a link's alias, destination or redirect calls
// forget after its commit. A lookup that read the file before such a write
// but stores its result after it is refused by the generation check, so
// the cache never keeps a link older than the file.
type aliasCache struct {
	mu  sync.RWMutex
	m   map[string]*link.Link
	gen uint64
}

func (c *aliasCache) get(key string) (*link.Link, bool) {
	c.mu.RLock()
	l, ok := c.m[key]
	c.mu.RUnlock()
	return l, ok
}

// generation returns the generation to pass to put after reading the file.
func (c *aliasCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put stores l unless a write forgot anything since gen was read.
func (c *aliasCache) put(key string, l *link.Link, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil {
		c.m = make(map[string]*link.Link)
	}
	if len(c.m) >= aliasCacheSize {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = l
}

// clear drops every entry, for a change that may touch many links (a
// campaign's UTM values).
func (c *aliasCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.m = nil
}

// forget drops the entries of the given keys and starts a new generation.
func (c *aliasCache) forget(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, k := range keys {
		delete(c.m, k)
	}
}
