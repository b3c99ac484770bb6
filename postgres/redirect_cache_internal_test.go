package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
)

// A value read before a change that ended meanwhile is not kept: a read
// that began before an update and ended after it would otherwise serve
// the old link for a second.
func TestRedirectCacheDropsReadsOverlappingAChange(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newRedirectCache[string](func() time.Time { return now })
	_, ok, tok, _ := c.get("k")
	if ok {
		t.Fatal("empty cache answered")
	}
	c.invalidate() // a change ends while the read runs
	c.put("k", "old", tok)
	if _, ok, _, _ := c.get("k"); ok {
		t.Fatal("a read overlapping a change was kept")
	}
	_, _, tok, _ = c.get("k")
	c.put("k", "new", tok)
	if v, ok, _, _ := c.get("k"); !ok || v != "new" {
		t.Fatalf("get = %q, %v", v, ok)
	}
	now = now.Add(redirectCacheTTL)
	if _, ok, _, _ := c.get("k"); ok {
		t.Fatal("kept past its second")
	}
	// A full shard starts again: the cache holds at most its size.
	for i := range 4 * redirectCacheSize {
		_, _, tok, _ := c.get(string(rune(i)))
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
		_, _, tok, _ := c.get(k)
		c.put(k, k+"1", tok)
	}
	_, _, tok, _ := c.get("a")
	c.invalidateKey("a")
	if _, ok, _, _ := c.get("a"); ok {
		t.Fatal("a changed key answered")
	}
	if v, ok, _, _ := c.get("b"); !ok || v != "b1" {
		t.Fatalf("another key: %q, %v", v, ok)
	}
	c.put("a", "a-old", tok) // read before the change, put after it
	if _, ok, _, _ := c.get("a"); ok {
		t.Fatal("a read overlapping the key's change was kept")
	}
	if _, ok, _ := c.stale("a"); ok {
		t.Fatal("a changed key answered as stale")
	}

	c.setListening(true)
	now = now.Add(30 * time.Second)
	if _, ok, _, _ := c.get("b"); !ok {
		t.Fatal("not kept for a minute while listening")
	}
	c.setListening(false)
	if _, ok, _, _ := c.get("b"); ok {
		t.Fatal("kept past a second while not listening")
	}
	if v, ok, current := c.stale("b"); !ok || !current || v != "b1" {
		t.Fatalf("stale b = %q, %v, current %v", v, ok, current)
	}
	// Another process announced a change that may touch it: still held
	// for a refusing database, no longer current.
	c.changedElsewhere()
	if v, ok, current := c.stale("b"); !ok || current || v != "b1" {
		t.Fatalf("stale b after a change elsewhere = %q, %v, current %v", v, ok, current)
	}
	_, _, tok, _ = c.get("b")
	c.put("b", "b2", tok)
	if v, ok, current := c.stale("b"); !ok || !current || v != "b2" {
		t.Fatalf("b read again = %q, %v, current %v", v, ok, current)
	}
	c.setListening(true)
	now = now.Add(redirectCacheTTLListening)
	if _, ok, _, _ := c.get("b"); ok {
		t.Fatal("kept past a minute")
	}
}

// A link another process may have changed (it announced a change of a
// campaign's UTM values) is not answered as it was for a database that
// is only slow or frozen: the redirect waits for it. One read after the
// announcement is.
func TestHeldAnswerAfterAnnouncedChange(t *testing.T) {
	t.Parallel()
	cluster := pgtest.NewCluster(t)
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	o := Options{URL: cluster.URL(t), Now: clock.Now}
	db, s, ws := openBootstrapped(t, o)
	for _, a := range []string{"before", "after"} {
		if err := s.Links.CreateLink(ctx, &link.Link{WorkspaceID: ws.ID, Alias: a, DestinationURL: "https://example.com/" + a, RedirectCode: 302}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Links.FindLinkByAlias(ctx, "", "before"); err != nil {
		t.Fatal(err)
	}
	db.heard("another-process L")
	if _, err := s.Links.FindLinkByAlias(ctx, "", "after"); err != nil {
		t.Fatal(err)
	}
	cluster.Freeze(t)
	clock.Add(2 * time.Minute)
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if got, err := s.Links.FindLinkByAlias(rctx, "", "after"); err != nil || got.Alias != "after" {
		t.Fatalf("a link read after the announcement, the database frozen: %v, %v", got, err)
	}
	wctx, cancel2 := context.WithTimeout(ctx, 600*time.Millisecond)
	defer cancel2()
	if got, err := s.Links.FindLinkByAlias(wctx, "", "before"); err == nil {
		t.Fatalf("a link read before another process announced a change answered as it was: %+v", got)
	}
}
