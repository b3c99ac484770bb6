package storage

import (
	"net/netip"
	"sync"
	"unsafe"

	"github.com/linkbolt/linkbolt/link"
)

// aliasCacheBytes bounds the memory of the redirect cache (see entryBytes);
// beyond it, arbitrary entries make room, so memory stays bounded however
// many links there are and however long their destinations: 32 MiB hold
// about 80,000 links of short destinations, fewer of long ones.
const aliasCacheBytes = 32 << 20

// aliasEntryOverhead is what a cached link costs beside its strings: the
// link.Link, the pointer and the key's header in the map, the map's own
// bookkeeping.
const aliasEntryOverhead = int(unsafe.Sizeof(link.Link{})) + 64

// entryBytes estimates the memory of a cache entry.
func entryBytes(key string, l *link.Link) int {
	n := aliasEntryOverhead + len(key) + len(l.ID) + len(l.WorkspaceID) + len(l.Alias) + len(l.Domain) +
		len(l.DestinationURL) + len(l.UTMSource) + len(l.UTMMedium) + len(l.UTMCampaign) + len(l.CampaignID)
	for _, t := range l.Tags {
		n += 16 + len(t)
	}
	// The link controls: a link of many variants or a long social card
	// costs more than its destination says.
	n += len(l.PasswordHash) + len(l.ExpiredURL) + len(l.Title) + len(l.Note)
	if l.ExpiresAt != nil {
		n += int(unsafe.Sizeof(*l.ExpiresAt))
	}
	for _, r := range l.Rules {
		n += int(unsafe.Sizeof(r)) + len(r.Then) + len(r.If.Device) + len(r.If.OS) + len(r.If.Browser) +
			len(r.If.Country) + len(r.If.Language)
		if q := r.If.Query; q != nil {
			n += int(unsafe.Sizeof(*q)) + len(q.Name) + len(q.Value)
		}
		n += len(r.If.IP) * int(unsafe.Sizeof(netip.Prefix{}))
		if r.If.After != nil {
			n += int(unsafe.Sizeof(*r.If.After))
		}
		if r.If.Before != nil {
			n += int(unsafe.Sizeof(*r.If.Before))
		}
	}
	for _, v := range l.Variants {
		n += int(unsafe.Sizeof(v)) + len(v.DestinationURL)
	}
	if og := l.OG; og != nil {
		n += int(unsafe.Sizeof(*og)) + len(og.Title) + len(og.Description) + len(og.ImageURL)
	}
	return n
}

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
	// bytes is the estimated memory of the entries (see entryBytes).
	bytes int
	// max is the bound of bytes; 0 means aliasCacheBytes.
	max int
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
	limit := c.max
	if limit == 0 {
		limit = aliasCacheBytes
	}
	c.remove(key)
	n := entryBytes(key, l)
	if n > limit {
		return
	}
	for k := range c.m {
		if c.bytes+n <= limit {
			break
		}
		c.remove(k)
	}
	c.m[key] = l
	c.bytes += n
}

// remove drops the entry of key, if any. c.mu is held.
func (c *aliasCache) remove(key string) {
	if old, ok := c.m[key]; ok {
		c.bytes -= entryBytes(key, old)
		delete(c.m, key)
	}
}

// clear drops every entry, for a change that may touch many links (a
// campaign's UTM values).
func (c *aliasCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.m, c.bytes = nil, 0
}

// forget drops the entries of the given keys and starts a new generation.
func (c *aliasCache) forget(keys ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, k := range keys {
		c.remove(k)
	}
}
