package postgres

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// staleWait is how long a redirect waits for the database to read again
// a link (or the table of verified domains) that it holds past its TTL,
// before it answers what it holds. A database that refuses connections
// fails at once and the held answer is given at once; one that stopped
// answering (a host frozen or cut off by a firewall that drops packets,
// a disk that hangs, a lock held) would otherwise hold every redirect of
// a link clicked before until the connect or statement timeout, seconds
// each. Past the first such wait, reads are stalled (readStall) and held
// answers are given without waiting until a read succeeds again.
const staleWait = 250 * time.Millisecond

// refreshTimeout bounds the reads that refresh a held answer in the
// background while reads are stalled.
const refreshTimeout = 10 * time.Second

// readStall keeps whether the reads of redirects stopped answering, and
// lets one read at a time find out in the background whether they answer
// again.
type readStall struct {
	stalled atomic.Bool
	probing atomic.Bool
}

// on reports whether reads are stalled: a held answer is given without
// waiting.
func (s *readStall) on() bool { return s.stalled.Load() }

// saw notes how a read for a redirect that had a held answer ended: a
// read cut off by staleWait (its request still waiting) stalls reads; a
// read that succeeded ends the stall.
func (s *readStall) saw(err error) {
	switch {
	case err == nil:
		s.stalled.Store(false)
	case errors.Is(err, context.DeadlineExceeded):
		s.stalled.Store(true)
	}
}

// held says whether a redirect answers what it holds rather than the
// outcome err of reading again: the database cannot serve, or did not
// answer within staleWait, while the request itself goes on (ctx).
func heldAnswer(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	_, down := unavailable(err)
	return down || errors.Is(err, context.DeadlineExceeded)
}

// refresh runs read in the background, unless a refresh already runs:
// while reads are stalled, requests answer what is held and this finds
// out when the database answers again, and keeps what it read.
func (s *readStall) refresh(read func(ctx context.Context) error) {
	if !s.probing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.probing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		defer cancel()
		if err := read(ctx); err == nil {
			s.stalled.Store(false)
		}
	}()
}
