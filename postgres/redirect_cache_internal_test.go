package postgres

import (
	"testing"
	"time"
)

// A value read before a change that ended meanwhile is not kept: a read
// that began before an update and ended after it would otherwise serve
// the old link for a second.
func TestRedirectCacheDropsReadsOverlappingAChange(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newRedirectCache[string](func() time.Time { return now })
	_, ok, gen := c.get("k")
	if ok {
		t.Fatal("empty cache answered")
	}
	c.invalidate() // a change ends while the read runs
	c.put("k", "old", gen)
	if _, ok, _ := c.get("k"); ok {
		t.Fatal("a read overlapping a change was kept")
	}
	_, _, gen = c.get("k")
	c.put("k", "new", gen)
	if v, ok, _ := c.get("k"); !ok || v != "new" {
		t.Fatalf("get = %q, %v", v, ok)
	}
	now = now.Add(redirectCacheTTL)
	if _, ok, _ := c.get("k"); ok {
		t.Fatal("kept past its second")
	}
	// A full shard starts again: the cache holds at most its size.
	for i := range 4 * redirectCacheSize {
		_, _, gen := c.get(string(rune(i)))
		c.put(string(rune(i)), "v", gen)
	}
	n := 0
	for i := range c.shards {
		n += len(c.shards[i].m)
	}
	if n > redirectCacheSize {
		t.Fatalf("%d entries, bound %d", n, redirectCacheSize)
	}
}
