// Package faultlog logs a persisting fault once per episode: a line when
// it begins, at most one more every interval while it lasts (with how
// many failures it stood for), and a line when it ends, so that a lost
// database or a full disk does not write a line for every request or
// every retry of a background job.
package faultlog

import (
	"log/slog"
	"sync"
	"time"
)

// DefaultEvery is how often a fault that lasts is logged again.
const DefaultEvery = time.Minute

// Log is the log of one kind of fault. Its zero value is not usable: set
// Logger at least. It is safe for concurrent use.
type Log struct {
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Every is how often a lasting fault is logged again (0:
	// DefaultEvery).
	Every time.Duration

	mu       sync.Mutex
	since    time.Time // zero: no fault
	lastLine time.Time
	unlogged int64 // failures since the last line
	failures int64 // failures in the episode
}

func (l *Log) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Fail notes a failure. The first of an episode is logged at once as an
// error, msg with args and err; later ones at most once every Every, with
// the failures since the last line and since when the fault lasts. It
// reports whether it wrote a line.
func (l *Log) Fail(msg string, err error, args ...any) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures++
	l.unlogged++
	every := l.Every
	if every <= 0 {
		every = DefaultEvery
	}
	first := l.since.IsZero()
	if first {
		l.since = now
	} else if now.Sub(l.lastLine) < every {
		return false
	}
	if !first {
		msg += " (still failing)"
		args = append(args, "failing_since", l.since.UTC().Format(time.RFC3339), "failures_since_last_line", l.unlogged)
	}
	args = append(args, "err", err)
	l.Logger.Error(msg, args...)
	l.lastLine, l.unlogged = now, 0
	return true
}

// OK notes a success: when it ends an episode it logs msg with args at
// info level, with since when the fault lasted and how many failures it
// counted, and reports true.
func (l *Log) OK(msg string, args ...any) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.since.IsZero() {
		return false
	}
	args = append(args, "failing_since", l.since.UTC().Format(time.RFC3339), "failures", l.failures)
	l.Logger.Info(msg, args...)
	l.since, l.lastLine, l.unlogged, l.failures = time.Time{}, time.Time{}, 0, 0
	return true
}

// Failing reports whether an episode is under way, and since when.
func (l *Log) Failing() (since time.Time, failing bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.since, !l.since.IsZero()
}
