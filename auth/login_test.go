package auth

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
)

func newTestGuard(c *clocktest.Clock) *LoginGuard {
	return NewLoginGuard(5, 15*time.Minute, 10, 15*time.Minute, c.Now)
}

// fail makes one failed attempt and wants it let through.
func fail(t *testing.T, g *LoginGuard, account, addr string) {
	t.Helper()
	a, wait := g.Begin(account, addr)
	if a == nil {
		t.Fatalf("%s from %s refused, wait %s", account, addr, wait)
	}
	a.Failed()
}

func TestLoginGuardPerAddress(t *testing.T) {
	c := clocktest.New(t0)
	g := newTestGuard(c)
	for i := 0; i < 5; i++ {
		fail(t, g, "a@x", "1.1.1.1")
		c.Add(time.Minute)
	}
	a, wait := g.Begin("a@x", "1.1.1.1")
	if a != nil || wait != 10*time.Minute {
		t.Fatalf("sixth attempt: %v, wait %s; want refused for 10m (until the first failure is 15m old)", a, wait)
	}
	// Another address and another account are not held.
	if a, _ := g.Begin("a@x", "2.2.2.2"); a == nil {
		t.Fatal("another address refused")
	} else {
		a.Succeeded()
	}
	if a, _ := g.Begin("b@x", "1.1.1.1"); a == nil {
		t.Fatal("another account refused")
	} else {
		a.Release()
	}
	c.Add(10 * time.Minute)
	fail(t, g, "a@x", "1.1.1.1") // one failure left the window
}

// TestLoginGuardInFlight: attempts under way hold their places, so
// concurrent attempts from one address cannot pass the limit, and Release
// frees a place without counting a failure.
func TestLoginGuardInFlight(t *testing.T) {
	c := clocktest.New(t0)
	g := newTestGuard(c)
	var wg sync.WaitGroup
	var mu sync.Mutex
	let := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a, _ := g.Begin("a@x", "1.1.1.1"); a != nil {
				mu.Lock()
				let++
				mu.Unlock()
				a.Failed()
			}
		}()
	}
	wg.Wait()
	if let != 5 {
		t.Fatalf("%d concurrent attempts let through, want 5", let)
	}

	g = newTestGuard(c)
	var held []*LoginAttempt
	for i := 0; i < 5; i++ {
		a, _ := g.Begin("b@x", "1.1.1.1")
		held = append(held, a)
	}
	if a, wait := g.Begin("b@x", "1.1.1.1"); a != nil || wait != time.Second {
		t.Fatalf("sixth while five in flight: %v, wait %s", a, wait)
	}
	for _, a := range held {
		a.Release()
		a.Failed() // after Release: ignored
	}
	for i := 0; i < 5; i++ {
		fail(t, g, "b@x", "1.1.1.1")
	}
}

func TestLoginGuardAccountDelay(t *testing.T) {
	c := clocktest.New(t0)
	g := NewLoginGuard(5, 15*time.Minute, 10, time.Minute, c.Now)
	for i := 0; i < 10; i++ {
		fail(t, g, "a@x", fmt.Sprint("10.0.0.", i))
	}
	var waits []time.Duration
	for i := 0; i < 9; i++ {
		addr := fmt.Sprint("10.0.0.", i%3)
		a, wait := g.Begin("a@x", addr)
		if a != nil {
			t.Fatalf("step %d: let through during the delay", i)
		}
		waits = append(waits, wait)
		c.Add(wait)
		fail(t, g, "a@x", addr)
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60}
	for i := range want {
		if waits[i] != want[i]*time.Second {
			t.Fatalf("waits = %v, want %v seconds", waits, want)
		}
	}
	// A fresh address is not held; its success ends the run.
	a, _ := g.Begin("a@x", "192.0.2.1")
	if a == nil {
		t.Fatal("an address with no failure is held by the account's delay")
	}
	a.Succeeded()
	fail(t, g, "a@x", "10.0.0.1")

	// A run forgotten after an hour without failures.
	for i := 0; i < 11; i++ {
		fail(t, g, "c@x", fmt.Sprint("10.1.0.", i))
	}
	if a, _ := g.Begin("c@x", "10.1.0.0"); a != nil {
		t.Fatal("no delay after 11 failures")
	}
	c.Add(time.Hour)
	if a, _ := g.Begin("c@x", "10.1.0.0"); a == nil {
		t.Fatal("the run outlived an hour without failures")
	}
}

// TestLoginGuardForgets: idle entries are dropped, so memory is bounded by
// the failures of the last hour.
func TestLoginGuardForgets(t *testing.T) {
	c := clocktest.New(t0)
	g := newTestGuard(c)
	for i := 0; i < 1000; i++ {
		fail(t, g, fmt.Sprint("user", i, "@x"), "1.1.1.1")
	}
	if a, _ := g.Begin("ok@x", "1.1.1.1"); a != nil {
		a.Succeeded()
	}
	if got := g.Len(); got < 1000 {
		t.Fatalf("Len = %d, want the 1000 failing accounts", got)
	}
	c.Add(time.Hour + sweepInterval)
	g.Begin("late@x", "1.1.1.1")
	if got := g.Len(); got != 1 {
		t.Fatalf("Len after an idle hour = %d, want 1", got)
	}
}

// BenchmarkLoginGuard measures a failed attempt (Begin and Failed) spread
// over many accounts and addresses, as in a password spray.
func BenchmarkLoginGuard(b *testing.B) {
	c := clocktest.New(t0)
	g := newTestGuard(c)
	accounts := make([]string, 10000)
	for i := range accounts {
		accounts[i] = fmt.Sprintf("user%d@example.com", i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if a, _ := g.Begin(accounts[i%len(accounts)], fmt.Sprint("10.0.", i%251, ".", i%241)); a != nil {
				a.Failed()
			}
			i++
		}
	})
}
