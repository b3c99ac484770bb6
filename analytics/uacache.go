package analytics

import (
	"strings"
	"sync"
)

// DefaultUACacheSize is the bound of a UACache made without one.
const DefaultUACacheSize = 10_000

// UACache memoizes ClassifyUA: a few user agents make most clicks. It
// holds at most its size of entries and, when full, forgets an arbitrary
// one for each new user agent. The zero value is ready to use with
// DefaultUACacheSize, and a UACache is safe for concurrent use.
type UACache struct {
	mu   sync.RWMutex
	m    map[string]UAClass
	size int
}

// NewUACache returns a cache of at most size entries; size <= 0 means
// DefaultUACacheSize.
func NewUACache(size int) *UACache {
	if size <= 0 {
		size = DefaultUACacheSize
	}
	return &UACache{size: size}
}

// Classify returns ClassifyUA(ua), from the cache when it can.
func (c *UACache) Classify(ua string) UAClass {
	ua = truncateUA(ua)
	c.mu.RLock()
	cl, ok := c.m[ua]
	c.mu.RUnlock()
	if ok {
		return cl
	}
	cl = ClassifyUA(ua)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		if c.size <= 0 {
			c.size = DefaultUACacheSize
		}
		c.m = make(map[string]UAClass)
	}
	if _, ok := c.m[ua]; !ok {
		for len(c.m) >= c.size {
			for k := range c.m {
				delete(c.m, k)
				break
			}
		}
		// A copy, so the cache pins no request's larger header buffer.
		c.m[strings.Clone(ua)] = cl
	}
	return cl
}
