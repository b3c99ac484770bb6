package analytics

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// cachedUAs returns the number of user agents c holds.
func cachedUAs(c *UACache) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

func TestUACacheMatchesClassifyUA(t *testing.T) {
	var c UACache // the zero value works
	for round := 0; round < 2; round++ {
		for _, tt := range uaCases {
			if got, want := c.Classify(tt.ua), ClassifyUA(tt.ua); got != want {
				t.Fatalf("round %d: Classify(%q) = %+v, want %+v", round, tt.ua, got, want)
			}
		}
	}
	if got, want := cachedUAs(&c), len(uaCases); got != want {
		t.Fatalf("cache holds %d, want %d", got, want)
	}
}

func TestUACacheBound(t *testing.T) {
	c := NewUACache(8)
	for i := 0; i < 100; i++ {
		ua := fmt.Sprintf("Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/%d.0.0.0 Safari/537.36", i)
		if got, want := c.Classify(ua), ClassifyUA(ua); got != want {
			t.Fatalf("Classify(%q) = %+v, want %+v", ua, got, want)
		}
		if n := cachedUAs(c); n > 8 {
			t.Fatalf("after %d user agents the cache holds %d, more than its bound 8", i+1, n)
		}
	}
	if got, want := cachedUAs(c), 8; got != want {
		t.Fatalf("cache holds %d, want %d", got, want)
	}
	// Long user agents are cached by their cut.
	long := uaCases[0].ua + strings.Repeat("x", 10_000)
	c.Classify(long)
	c.mu.RLock()
	for k := range c.m {
		if len(k) > MaxUALength {
			t.Errorf("cache key of %d bytes, more than MaxUALength", len(k))
		}
	}
	c.mu.RUnlock()
}

func TestUACacheConcurrent(t *testing.T) {
	c := NewUACache(16)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				tt := uaCases[(g*7+i)%len(uaCases)]
				if got, want := c.Classify(tt.ua), ClassifyUA(tt.ua); got != want {
					t.Errorf("Classify(%q) = %+v, want %+v", tt.ua, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkUACacheHit(b *testing.B) {
	c := NewUACache(0)
	for _, tt := range uaCases {
		c.Classify(tt.ua)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Classify(uaCases[i%len(uaCases)].ua)
			i++
		}
	})
}
