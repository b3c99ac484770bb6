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
	_, ok, tok := c.get("k")
	if ok {
		t.Fatal("empty cache answered")
	}
	c.invalidate() // a change ends while the read runs
	c.put("k", "old", tok)
	if _, ok, _ := c.get("k"); ok {
		t.Fatal("a read overlapping a change was kept")
	}
	_, _, tok = c.get("k")
	c.put("k", "new", tok)
	if v, ok, _ := c.get("k"); !ok || v != "new" {
		t.Fatalf("get = %q, %v", v, ok)
	}
	now = now.Add(redirectCacheTTL)
	if _, ok, _ := c.get("k"); ok {
		t.Fatal("kept past its second")
	}
	// A full shard starts again: the cache holds at most its size.
	for i := range 4 * redirectCacheSize {
		_, _, tok := c.get(string(rune(i)))
		c.put(string(rune(i)), "v", tok)
	}
	n := 0
	for i := range c.shards {
		n += len(c.shards[i].m)
	}
	if n > redirectCacheSize {
		t.Fatalf("%d entries, bound %d", n, redirectCacheSize)
	}
}

// A change of one key drops its value and keeps the others; a read of a
// key whose shard changed meanwhile is not kept. While the process hears
// the notifications of changes a value is answered for a minute, else for
// a second.
func TestRedirectCacheKeysAndListening(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newRedirectCache[string](func() time.Time { return now })
	for _, k := range []string{"a", "b"} {
		_, _, tok := c.get(k)
		c.put(k, k+"1", tok)
	}
	_, _, tok := c.get("a")
	c.invalidateKey("a")
	if _, ok, _ := c.get("a"); ok {
		t.Fatal("a changed key answered")
	}
	if v, ok, _ := c.get("b"); !ok || v != "b1" {
		t.Fatalf("another key: %q, %v", v, ok)
	}
	c.put("a", "a-old", tok) // read before the change, put after it
	if _, ok, _ := c.get("a"); ok {
		t.Fatal("a read overlapping the key's change was kept")
	}
	if _, ok := c.stale("a"); ok {
		t.Fatal("a changed key answered as stale")
	}

	c.setListening(true)
	now = now.Add(30 * time.Second)
	if _, ok, _ := c.get("b"); !ok {
		t.Fatal("not kept for a minute while listening")
	}
	c.setListening(false)
	if _, ok, _ := c.get("b"); ok {
		t.Fatal("kept past a second while not listening")
	}
	if v, ok := c.stale("b"); !ok || v != "b1" {
		t.Fatalf("stale b = %q, %v", v, ok)
	}
	c.setListening(true)
	now = now.Add(redirectCacheTTLListening)
	if _, ok, _ := c.get("b"); ok {
		t.Fatal("kept past a minute")
	}
}
