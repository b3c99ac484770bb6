// Package faultlog logs a persisting fault once per episode: a line when
// it begins, at most one more every interval while it lasts (with how
// many failures it stood for), and a line when it ends, so that a lost
// database or a full disk does not write a line for every request or
// every retry of a background job. A fault that comes and goes (a full
// disk still takes the small writes that fit in pages it has) writes at
// most a beginning and an end per interval.
package faultlog

import (
	"log/slog"
	"sync"
	"time"
)

// DefaultEvery is how often a fault that lasts or returns is logged again.
const DefaultEvery = time.Minute

// Log is the log of one kind of fault. Set Logger; it is safe for
// concurrent use.
type Log struct {
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Every is how often a lasting fault is logged again (0:
	// DefaultEvery).
	Every time.Duration

	mu        sync.Mutex
	since     time.Time // zero: no fault
	announced bool      // the episode's beginning was logged
	lastLine  time.Time
	unlogged  int64 // failures since the last line
	failures  int64 // failures since the last end of an episode logged
}

func (l *Log) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Log) every() time.Duration {
	if l.Every <= 0 {
		return DefaultEvery
	}
	return l.Every
}

// Fail notes a failure. The first of an episode is logged at once as an
// error, msg with args and err, unless a line was written less than
// Every ago (a fault that returns): then, as for the later failures of an
// episode, a line is written at most once every Every, with the failures
// since the last line and since when the fault lasts. It reports whether
// it wrote a line.
func (l *Log) Fail(msg string, err error, args ...any) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures++
	l.unlogged++
	if l.since.IsZero() {
		l.since, l.announced = now, false
	}
	if !l.lastLine.IsZero() && now.Sub(l.lastLine) < l.every() {
		return false
	}
	if l.announced {
		msg += " (still failing)"
	}
	if l.announced || l.unlogged > 1 {
		args = append(args, "failing_since", l.since.UTC().Format(time.RFC3339), "failures_since_last_line", l.unlogged)
	}
	args = append(args, "err", err)
	l.Logger.Error(msg, args...)
	l.lastLine, l.unlogged, l.announced = now, 0, true
	return true
}

// OK notes a success: when it ends an episode whose beginning was
// logged, it logs msg with args at info level, with since when the fault
// lasted and how many failures it counted, and reports true.
func (l *Log) OK(msg string, args ...any) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.since.IsZero() {
		return false
	}
	since, announced := l.since, l.announced
	l.since, l.announced = time.Time{}, false
	if !announced {
		return false // its failures are counted in the next line
	}
	args = append(args, "failing_since", since.UTC().Format(time.RFC3339), "failures", l.failures)
	l.Logger.Info(msg, args...)
	l.lastLine, l.failures = l.now(), 0
	return true
}

// Failing reports whether an episode is under way, and since when.
func (l *Log) Failing() (since time.Time, failing bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.since, !l.since.IsZero()
}
