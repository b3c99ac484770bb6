// Package clocktest holds the clock linkbolt's tests move by hand, to test
// grace periods, expiry, backoff and analytics ranges without sleeping.
package clocktest

import (
	"sync"
	"time"
)

// Clock is a time source that stands still until a test moves it. Its
// Now method is handed to the code under test in place of time.Now. A
// Clock is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock standing at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on by d (back when d is negative).
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
