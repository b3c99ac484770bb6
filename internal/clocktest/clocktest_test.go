package clocktest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	c := clocktest.New(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	c.Add(90 * time.Second)
	if got, want := c.Now(), t0.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("after Add: Now = %v, want %v", got, want)
	}
	c.Add(-time.Hour)
	if got, want := c.Now(), t0.Add(90*time.Second-time.Hour); !got.Equal(want) {
		t.Fatalf("after Add back: Now = %v, want %v", got, want)
	}
	c.Set(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("after Set: Now = %v, want %v", got, t0)
	}
}

func TestClockConcurrent(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	c := clocktest.New(t0)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				c.Add(time.Second)
				c.Now()
			}
		}()
	}
	wg.Wait()
	if got, want := c.Now(), t0.Add(400*time.Second); !got.Equal(want) {
		t.Fatalf("Now = %v, want %v", got, want)
	}
}
