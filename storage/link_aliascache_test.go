package storage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// TestAliasCacheBytes: the redirect cache keeps its estimated memory
// within its byte bound whatever the destinations' length, counts each key
// once when it is stored again, gives the bytes of forgotten entries
// back, and never stores an entry larger than the bound.
func TestAliasCacheBytes(t *testing.T) {
	c := aliasCache{max: 20_000}
	sum := func() int {
		n := 0
		for k, l := range c.m {
			n += entryBytes(k, l)
		}
		return n
	}
	for i := range 500 {
		l := &link.Link{ID: fmt.Sprintf("lnk_%d", i), Alias: fmt.Sprintf("a%d", i),
			DestinationURL: "https://example.com/" + strings.Repeat("x", i%7*100), Tags: []string{"t"}}
		c.put(string(aliasKey("", l.Alias)), l, c.generation())
		if c.bytes > c.max || c.bytes != sum() {
			t.Fatalf("after %d puts: %d bytes counted, %d held, bound %d", i+1, c.bytes, sum(), c.max)
		}
	}
	if len(c.m) < 10 {
		t.Fatalf("only %d entries kept", len(c.m))
	}
	var key string
	for k := range c.m {
		key = k
		break
	}
	l, _ := c.get(key)
	before := c.bytes
	c.put(key, l, c.generation())
	if c.bytes != before || c.bytes != sum() {
		t.Fatalf("storing %q again: %d bytes, was %d", key, c.bytes, before)
	}
	c.forget(key)
	if _, ok := c.get(key); ok || c.bytes != before-entryBytes(key, l) || c.bytes != sum() {
		t.Fatalf("forget: %d bytes, want %d", c.bytes, before-entryBytes(key, l))
	}
	plain := &link.Link{ID: "lnk_c", DestinationURL: "https://example.com/"}
	controlled := *plain
	controlled.Variants = []link.Variant{{DestinationURL: "https://example.com/" + strings.Repeat("v", 1000), Weight: 1}}
	controlled.OG = &link.OG{Description: strings.Repeat("d", 1000)}
	if got, least := entryBytes("c", &controlled), entryBytes("c", plain)+2000; got < least {
		t.Fatalf("a link of a long variant and social card: %d bytes, want at least %d", got, least)
	}
	huge := &link.Link{ID: "lnk_huge", DestinationURL: "https://example.com/" + strings.Repeat("y", 30_000)}
	c.put("huge", huge, c.generation())
	if _, ok := c.get("huge"); ok || c.bytes != sum() {
		t.Fatal("an entry larger than the bound was stored")
	}
	c.clear()
	if c.bytes != 0 || len(c.m) != 0 {
		t.Fatalf("clear left %d bytes, %d entries", c.bytes, len(c.m))
	}
}
