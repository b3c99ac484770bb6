package auth

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func TestLimitersAllow(t *testing.T) {
	c := clocktest.New(t0)
	l := NewLimiters(c.Now)

	d := l.Allow("k1", 100)
	if got, want := d, (Decision{Allowed: true, Limit: 100, Remaining: 99, Reset: t0.Add(600 * time.Millisecond)}); got != want {
		t.Fatalf("first Allow = %+v, want %+v", got, want)
	}
	for i := 2; i <= 100; i++ {
		d := l.Allow("k1", 100)
		if !d.Allowed {
			t.Fatalf("request %d refused: %+v", i, d)
		}
		if got, want := d.Remaining, 100-i; got != want {
			t.Fatalf("request %d: Remaining = %d, want %d", i, got, want)
		}
	}
	d = l.Allow("k1", 100)
	if got, want := d, (Decision{Allowed: false, Limit: 100, Remaining: 0, Reset: t0.Add(time.Minute), RetryAfter: time.Second}); got != want {
		t.Fatalf("request 101 = %+v, want %+v", got, want)
	}
	if got, want := l.Allow("k2", 100).Allowed, true; got != want {
		t.Fatalf("another key: Allowed = %v, want %v", got, want)
	}

	// 0.6 s later one token is back, give or take float rounding; after
	// RetryAfter it surely is.
	c.Add(d.RetryAfter)
	d = l.Allow("k1", 100)
	if got, want := d.Allowed, true; got != want {
		t.Fatalf("after RetryAfter: Allowed = %v, want %v (%+v)", got, want, d)
	}
	if got, want := d.Remaining, 0; got != want {
		t.Fatalf("after RetryAfter: Remaining = %d, want %d", got, want)
	}
	if got, want := l.Allow("k1", 100).Allowed, false; got != want {
		t.Fatalf("second request after RetryAfter: Allowed = %v, want %v", got, want)
	}

	// A minute refills the whole bucket.
	c.Add(time.Minute)
	for i := 1; i <= 100; i++ {
		if d := l.Allow("k1", 100); !d.Allowed {
			t.Fatalf("after a minute, request %d refused: %+v", i, d)
		}
	}
	if got, want := l.Allow("k1", 100).Allowed, false; got != want {
		t.Fatalf("request 101 after refill: Allowed = %v, want %v", got, want)
	}
}

func TestLimitersRetryAfter(t *testing.T) {
	tests := []struct {
		perMinute int
		want      time.Duration
	}{
		{1, 60 * time.Second},
		{7, 9 * time.Second}, // 8.57 s rounded up
		{60, time.Second},
		{100, time.Second},  // 0.6 s rounded up
		{6000, time.Second}, // 10 ms, at least a second
	}
	for _, tt := range tests {
		c := clocktest.New(t0)
		l := NewLimiters(c.Now)
		for range tt.perMinute {
			l.Allow("k", tt.perMinute)
		}
		d := l.Allow("k", tt.perMinute)
		if d.Allowed {
			t.Fatalf("%d/min: request %d allowed", tt.perMinute, tt.perMinute+1)
		}
		if got, want := d.RetryAfter, tt.want; got != want {
			t.Errorf("%d/min: RetryAfter = %v, want %v", tt.perMinute, got, want)
		}
		c.Add(d.RetryAfter)
		if got, want := l.Allow("k", tt.perMinute).Allowed, true; got != want {
			t.Errorf("%d/min: after RetryAfter, Allowed = %v, want %v", tt.perMinute, got, want)
		}
	}
}

func TestLimitersUnlimited(t *testing.T) {
	c := clocktest.New(t0)
	l := NewLimiters(c.Now)
	for _, perMinute := range []int{0, -1} {
		for range 1000 {
			d := l.Allow("ent", perMinute)
			if got, want := d, (Decision{Allowed: true, Unlimited: true}); got != want {
				t.Fatalf("Allow(%d) = %+v, want %+v", perMinute, got, want)
			}
		}
	}
	if got, want := l.Len(), 0; got != want {
		t.Fatalf("Len = %d, want %d", got, want)
	}

	// A key that becomes unlimited loses its limiter; limited again, it
	// starts with a full bucket.
	for range 100 {
		l.Allow("k", 100)
	}
	l.Allow("k", 0)
	if got, want := l.Len(), 0; got != want {
		t.Fatalf("after going unlimited: Len = %d, want %d", got, want)
	}
	if got, want := l.Allow("k", 100).Remaining, 99; got != want {
		t.Fatalf("limited again: Remaining = %d, want %d", got, want)
	}
}

func TestLimitersPlanChange(t *testing.T) {
	c := clocktest.New(t0)
	l := NewLimiters(c.Now)
	for range 100 {
		l.Allow("k", 100)
	}
	// Upgrade: the empty bucket now refills at 1000/min, so in 6 s it holds
	// 100 tokens where 100/min would have given 10.
	if got, want := l.Allow("k", 1000).Allowed, false; got != want {
		t.Fatalf("right after the upgrade: Allowed = %v, want %v", got, want)
	}
	c.Add(6 * time.Second)
	d := l.Allow("k", 1000)
	if got, want := d.Limit, 1000; got != want {
		t.Fatalf("Limit = %d, want %d", got, want)
	}
	if got, want := d.Remaining, 99; got != want {
		t.Fatalf("6 s after the upgrade: Remaining = %d, want %d", got, want)
	}
	// The burst grew too: a minute fills 1000.
	c.Add(time.Minute)
	if got, want := l.Allow("k", 1000).Remaining, 999; got != want {
		t.Fatalf("a minute after the upgrade: Remaining = %d, want %d", got, want)
	}
	// Downgrade: a full bucket of 1000 is cut to the new burst of 100.
	d = l.Allow("k", 100)
	if got, want := d.Remaining, 99; got != want {
		t.Fatalf("after the downgrade: Remaining = %d, want %d", got, want)
	}
	for range 99 {
		l.Allow("k", 100)
	}
	if got, want := l.Allow("k", 100).Allowed, false; got != want {
		t.Fatalf("request 101 after the downgrade: Allowed = %v, want %v", got, want)
	}
	if got, want := l.Len(), 1; got != want {
		t.Fatalf("Len = %d, want %d", got, want)
	}
}

func TestLimitersSweep(t *testing.T) {
	c := clocktest.New(t0)
	l := NewLimiters(c.Now)
	for i := range 10 {
		l.Allow(fmt.Sprintf("idle%d", i), 100)
	}
	c.Add(10 * time.Second)
	for range 100 {
		l.Allow("busy", 100) // empties its bucket at t0+10s
	}
	c.Add(20 * time.Second)
	l.Allow("recent", 100) // at t0+30s
	if got, want := l.Len(), 12; got != want {
		t.Fatalf("before the sweep: Len = %d, want %d", got, want)
	}

	// No sweep before a minute has passed since NewLimiters.
	c.Set(t0.Add(59 * time.Second))
	l.Allow("trigger", 100)
	if got, want := l.Len(), 13; got != want {
		t.Fatalf("at 59 s: Len = %d, want %d", got, want)
	}

	// At 61 s the idle keys (last used 61 s ago, so full again) go; busy
	// (51 s ago, still refilling), recent and trigger stay.
	c.Set(t0.Add(61 * time.Second))
	l.Allow("trigger", 100)
	if got, want := l.Len(), 3; got != want {
		t.Fatalf("after the sweep: Len = %d, want %d", got, want)
	}
	// busy kept its state: 51 s at 100/min is 85 tokens, 84 after this one.
	if got, want := l.Allow("busy", 100).Remaining, 84; got != want {
		t.Fatalf("busy after the sweep: Remaining = %d, want %d", got, want)
	}
	// A dropped key starts afresh, which is what it would have had anyway.
	if got, want := l.Allow("idle0", 100).Remaining, 99; got != want {
		t.Fatalf("idle0 after the sweep: Remaining = %d, want %d", got, want)
	}

	// The next sweep is a minute after the last one, at 121 s; it drops
	// everything last used 60 s ago or earlier.
	c.Set(t0.Add(121*time.Second - time.Nanosecond))
	l.Allow("late", 100)
	if got, want := l.Len(), 5; got != want {
		t.Fatalf("before the second sweep: Len = %d, want %d", got, want)
	}
	c.Set(t0.Add(121 * time.Second))
	l.Allow("late", 100)
	if got, want := l.Len(), 1; got != want {
		t.Fatalf("after the second sweep: Len = %d, want %d", got, want)
	}
}

// TestLimitersConcurrent checks that concurrent requests of one key together
// get exactly the burst, and runs the sweep beside Allow for the race
// detector.
func TestLimitersConcurrent(t *testing.T) {
	c := clocktest.New(t0)
	l := NewLimiters(c.Now)
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				if l.Allow("shared", 100).Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got, want := allowed.Load(), int64(100); got != want {
		t.Fatalf("allowed %d of 4000 concurrent requests, want %d", got, want)
	}

	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				if g == 0 && i%100 == 0 {
					c.Add(30 * time.Second) // so that sweeps happen
				}
				l.Allow(fmt.Sprintf("k%d-%d", g, i%50), 100+i%3)
				if i%500 == 0 {
					l.Len()
				}
			}
		})
	}
	wg.Wait()
	if got, max := l.Len(), 8*50+1; got > max {
		t.Fatalf("Len = %d, want at most %d", got, max)
	}
}

func BenchmarkLimitersAllow(b *testing.B) {
	c := clocktest.New(t0)
	l := NewLimiters(c.Now)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("user:%d", i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			l.Allow(keys[i%len(keys)], 1000)
			i++
		}
	})
}

func BenchmarkLimitersAllowOneKey(b *testing.B) {
	c := clocktest.New(t0)
	l := NewLimiters(c.Now)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Allow("shared", 1000)
		}
	})
}
