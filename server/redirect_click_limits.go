package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// clickLimits reserves the clicks of links with max_clicks, so that a
// link is never followed more than max_clicks times, however many
// visitors click at once.
//
// Each limited link has a counter in memory, seeded when it is first
// needed: the recorder is flushed first (so that clicks handed to it,
// perhaps before the link had a limit, are in the stored totals), then the
// link's stored total is read. From then on the counter is the authority:
// a GET takes the counter's lock, compares and increments it before it
// answers, so the (max_clicks+1)-th of any number of concurrent clicks
// finds the link used up. The click itself still goes to the recorder as
// every click does. A click the recorder drops (queue full) is still
// counted here, so the counter errs on the side of fewer redirects; after
// a restart the stored total, which lacks such a click, is the seed. Links
// without max_clicks never reach this code.
//
// On a store that counts the clicks itself (link.ClickReservations, the
// PostgreSQL store) the counters are not used: every instance on the
// database reserves each click there, in one statement, so that together
// they let exactly max_clicks through (see reserveInStore). A store that
// cannot be reached answers 503 store_unavailable: a limited link is not
// followed without its click reserved.
//
// Counters of links not clicked for clickCounterIdle are evicted, so that
// memory follows the links clicked lately, not every limited link ever
// clicked: at most once every clickSweepEvery (and not while the click
// backlog holds clicks), the click that finds a sweep due persists the
// recorder and, under each idle counter's lock, reads the link's stored
// total; a counter whose clicks are all stored
// (the stored total is at least its count) goes, and the next click seeds
// a new one from the same total, so no click is allowed twice. A counter
// ahead of the stored total (a click reserved and not yet handed to the
// recorder, or one the queue dropped) stays, until clickCounterStale,
// after which only a dropped click can explain it, and the stored total
// is the seed again, as after a restart.
type clickLimits struct {
	// store counts the clicks when the click service does (nil: the
	// counters below do); starting lets one request of this process at a
	// time start a link's count in it.
	store    link.ClickReservations
	starting sync.Mutex
	// usedUp remembers, for usedUpFor, the links the store found used up
	// (see reserveInStore).
	usedUpMu sync.Mutex
	usedUp   map[string]usedUpLink

	mu        sync.Mutex
	counters  map[string]*clickCounter // link ID → counter
	lastSweep time.Time
	sweeping  bool
}

type clickCounter struct {
	mu      sync.Mutex
	seeded  bool
	evicted bool // taken out of the map: look the link's counter up again
	used    int64
	ws      string    // the link's workspace, to read its stored total
	last    time.Time // the last click reserved or looked at
}

const (
	// clickCounterIdle is how long a link's counter stays after its last
	// click.
	clickCounterIdle = 10 * time.Minute
	// clickCounterStale is when a counter ahead of its stored total goes
	// anyway.
	clickCounterStale = time.Hour
	// clickSweepEvery is how often idle counters are looked for.
	clickSweepEvery = time.Minute
)

// counter returns the counter of the link id, created unseeded.
func (c *clickLimits) counter(id string) *clickCounter {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counters == nil {
		c.counters = map[string]*clickCounter{}
	}
	n := c.counters[id]
	if n == nil {
		n = &clickCounter{}
		c.counters[id] = n
	}
	return n
}

// size is the number of counters held.
func (c *clickLimits) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.counters)
}

// seed sets the counter of l from what it has been clicked on disk (its
// stored total and its clicks in the click backlog), with the clicks the
// recorder holds persisted first. The caller holds n.mu.
func (s *Server) seedClicks(ctx context.Context, n *clickCounter, l *link.Link) error {
	if n.seeded {
		return nil
	}
	if s.recorder != nil {
		if err := s.recorder.Persist(ctx); err != nil {
			return err
		}
	}
	used, err := s.clicks.LinkClicks(ctx, l.WorkspaceID, l.ID)
	if err != nil {
		return err
	}
	n.used, n.seeded, n.ws = used, true, l.WorkspaceID
	return nil
}

// reserveClick takes one of the clicks left to l at now (consume, for a
// GET) or only looks whether one is left (a HEAD). ok is false once the
// link is used up.
func (s *Server) reserveClick(ctx context.Context, l *link.Link, now time.Time, consume bool) (ok bool, err error) {
	if s.clickLimits.store != nil {
		return s.reserveInStore(ctx, l, consume)
	}
	for {
		n := s.clickLimits.counter(l.ID)
		n.mu.Lock()
		if n.evicted { // evicted meanwhile: the map has (or will have) its successor
			n.mu.Unlock()
			continue
		}
		ok, err = s.reserveLocked(ctx, n, l, consume, now)
		n.mu.Unlock()
		break
	}
	if err == nil {
		s.sweepClickCounters(ctx, now)
	}
	return ok, err
}

// usedUpFor is how long a link the store found used up is answered used
// up without asking the store again, while the link read for the
// redirect is the same (its limit and its last change): a flood of clicks
// on a used-up link costs the database one statement a link and an
// instance a second, not one a click. A limit raised through another
// instance counts within it (and within the redirect cache's hearing of
// the change, milliseconds, when the link read changes).
const usedUpFor = time.Second

// usedUpMax bounds the links remembered used up; past it they are
// forgotten all at once.
const usedUpMax = 10_000

type usedUpLink struct {
	maxClicks int64
	updatedAt time.Time
	until     time.Time
}

// knownUsedUp reports whether l was found used up by the store less than
// usedUpFor ago, as it is now.
func (c *clickLimits) knownUsedUp(l *link.Link, now time.Time) bool {
	c.usedUpMu.Lock()
	defer c.usedUpMu.Unlock()
	u, ok := c.usedUp[l.ID]
	return ok && u.maxClicks == l.MaxClicks && u.updatedAt.Equal(l.UpdatedAt) && now.Before(u.until)
}

// noteUsedUp remembers that the store found l used up at now.
func (c *clickLimits) noteUsedUp(l *link.Link, now time.Time) {
	c.usedUpMu.Lock()
	defer c.usedUpMu.Unlock()
	if c.usedUp == nil || len(c.usedUp) >= usedUpMax {
		c.usedUp = make(map[string]usedUpLink)
	}
	c.usedUp[l.ID] = usedUpLink{maxClicks: l.MaxClicks, updatedAt: l.UpdatedAt, until: now.Add(usedUpFor)}
}

// reserveInStore reserves the click of l in the store's count (or looks
// whether one is left), starting the count first when the link has none:
// the clicks the recorder holds are persisted, so that those taken before
// the link had a limit are in the stored total it starts from. A link
// deleted meanwhile answers as an unknown code. A link found used up is
// answered so for usedUpFor without asking the store again.
func (s *Server) reserveInStore(ctx context.Context, l *link.Link, consume bool) (bool, error) {
	c := &s.clickLimits
	now := s.now()
	if c.knownUsedUp(l, now) {
		return false, nil
	}
	for range 3 {
		ok, started, err := c.store.ReserveClick(ctx, l.ID, consume)
		if isNotFound(err) {
			return false, link.Errorf(link.ENOTFOUND, "no short link %q", l.Alias)
		}
		if err == nil && started && !ok {
			c.noteUsedUp(l, now)
		}
		if err != nil || started {
			return ok, err
		}
		if err := s.startReservations(ctx, l); err != nil {
			if isNotFound(err) {
				return false, link.Errorf(link.ENOTFOUND, "no short link %q", l.Alias)
			}
			return false, err
		}
	}
	// Its count ended each time as it started: the limit removed and set
	// again, over and over, while this click waited.
	return false, fmt.Errorf("the click count of link %s could not be started", l.ID)
}

// startReservations starts the store's count of l's clicks, one request
// of this process at a time: those that waited find it started.
func (s *Server) startReservations(ctx context.Context, l *link.Link) error {
	c := &s.clickLimits
	c.starting.Lock()
	defer c.starting.Unlock()
	if _, started, err := c.store.ReserveClick(ctx, l.ID, false); err != nil || started {
		return err
	}
	if s.recorder != nil {
		if err := s.recorder.Persist(ctx); err != nil {
			return err
		}
	}
	return c.store.StartClickReservations(ctx, l.ID)
}

func (s *Server) reserveLocked(ctx context.Context, n *clickCounter, l *link.Link, consume bool, now time.Time) (bool, error) {
	if err := s.seedClicks(ctx, n, l); err != nil {
		return false, err
	}
	n.last = now
	if n.used >= l.MaxClicks {
		return false, nil
	}
	if consume {
		n.used++
	}
	return true, nil
}

// sweepClickCounters evicts the idle counters (see clickLimits) when a
// sweep is due at now; one request sweeps at a time, the others go on.
func (s *Server) sweepClickCounters(ctx context.Context, now time.Time) {
	c := &s.clickLimits
	c.mu.Lock()
	if c.sweeping || now.Sub(c.lastSweep) < clickSweepEvery {
		c.mu.Unlock()
		return
	}
	c.sweeping, c.lastSweep = true, now
	ids := make([]string, 0, len(c.counters))
	counters := make([]*clickCounter, 0, len(c.counters))
	for id, n := range c.counters {
		ids, counters = append(ids, id), append(counters, n)
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.sweeping = false
		c.mu.Unlock()
	}()
	idle := func(n *clickCounter) bool { return n.seeded && !n.evicted && now.Sub(n.last) >= clickCounterIdle }
	// While the click backlog holds clicks (a flood), reading a link's
	// clicks reads the whole backlog: the sweep waits until it is drained
	// rather than read it once for every idle counter on a visitor's
	// redirect. The counters stay the authority meanwhile.
	backlogged := func() bool {
		if s.recorder == nil {
			return false
		}
		n, _ := s.recorder.Backlogged()
		return n > 0
	}
	if backlogged() {
		return
	}
	flushed := false
	for i, n := range counters {
		n.mu.Lock()
		if idle(n) {
			if !flushed {
				if s.recorder != nil && s.recorder.Persist(ctx) != nil || backlogged() {
					n.mu.Unlock()
					return // try again at the next sweep
				}
				flushed = true
			}
			s.evictIfStored(ctx, ids[i], n, now)
		}
		n.mu.Unlock()
	}
}

// evictIfStored takes the idle counter n of the link id out of the map
// when the stored total holds its clicks (or the link is gone, or the
// counter is stale). The caller holds n.mu and has persisted the recorder.
func (s *Server) evictIfStored(ctx context.Context, id string, n *clickCounter, now time.Time) {
	stored, err := s.clicks.LinkClicks(ctx, n.ws, id)
	switch {
	case isNotFound(err):
	case err != nil:
		return
	case stored < n.used && now.Sub(n.last) < clickCounterStale:
		return // a click not stored yet
	}
	n.evicted = true
	c := &s.clickLimits
	c.mu.Lock()
	if c.counters[id] == n {
		delete(c.counters, id)
	}
	c.mu.Unlock()
}

// takeClick reserves the click of a visitor let through a protected link
// with max_clicks (the right password posted, an unlock cookie, the
// X-Link-Password header), under the same lock and counter as every click
// of the link. Once the link is used up, or after an error, it has
// answered and returns false.
func (s *Server) takeClick(w http.ResponseWriter, r *http.Request, l *link.Link) bool {
	if l.MaxClicks <= 0 || r.Method == http.MethodHead {
		return true
	}
	ok, err := s.reserveClick(r.Context(), l, s.now(), !s.untracked(r))
	if err != nil {
		s.writeError(w, r, err)
		return false
	}
	if !ok {
		s.goneRedirect(w, r, l, linkUsedUp, true)
	}
	return ok
}
