package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Classes of costly API work, as named in 503 details and in the test hook.
const (
	costlySearch    = "search"
	costlyQR        = "qr"
	costlyExport    = "export"
	costlyAnalytics = "analytics"
	costlyBackup    = "backup"
	costlyHash      = "password hashing"
)

// admission bounds the costly API work (search, QR rendering, export,
// analytics, backup) that runs at once, so that redirects, which never pass
// it, always find a core: the Go scheduler shares the CPU among runnable
// goroutines, and sixteen searches would otherwise take sixteen shares to
// the redirects' one. One gate serves every class, as they compete for the
// same cores.
//
// A request that finds every slot taken waits up to wait for one (a waiting
// goroutine costs no CPU, and a client that retries at once would), then
// gets 503 with Retry-After. At most maxWaiting requests wait; more are
// answered 503 at once.
type admission struct {
	slots      chan struct{}
	wait       time.Duration
	waiting    atomic.Int64
	maxWaiting int64

	// entered, when set (tests), is called with the class of the work each
	// time a request takes a slot, before the work goes on (resumed: a
	// streaming answer takes one again after a write); the function it
	// returns is called when the slot is given back.
	entered func(class string, resumed bool) (left func())
	// working, when set (tests), is called with the class of the work on
	// the goroutine that does it (see Server.work), before the work.
	working func(class string)
}

// defaultCostlySlots leaves at least half the cores to redirects: on two
// cores one slot, on eight four (counting the processors there were before
// ReserveCostlyProcs added some).
func defaultCostlySlots() int {
	procs := int(baseProcs.Load())
	if procs == 0 {
		procs = runtime.GOMAXPROCS(0)
	}
	return max(1, procs/2)
}

// ReserveCostlyProcs resolves the number of slots of the costly-work gate
// (slots, or when 0 half the Go processors, at least one) and returns it,
// to pass as Config.CostlyConcurrency. Where costly work runs on niced
// threads (see lowPriority), it first adds that many processors to
// GOMAXPROCS. A Go processor is held by the thread running a goroutine,
// and a niced thread that the kernel makes wait for a core still holds
// its processor: without the extra ones, costly work would keep
// redirects off a processor as surely as the gate lets it, however little
// CPU the kernel gives it. With them, redirects have a processor for every
// core and costly work only the CPU they leave.
//
// GOMAXPROCS set in the environment is the operator's choice and is left
// alone, and only the first call in a process changes it.
func ReserveCostlyProcs(slots int) int {
	reserveOnce.Do(func() {
		procs := runtime.GOMAXPROCS(0)
		baseProcs.Store(int64(procs))
		n := slots
		if n <= 0 {
			n = defaultCostlySlots()
		}
		if os.Getenv("GOMAXPROCS") == "" && lowersPriority() {
			runtime.GOMAXPROCS(procs + n)
		}
	})
	if slots <= 0 {
		slots = defaultCostlySlots()
	}
	return slots
}

var (
	reserveOnce sync.Once
	baseProcs   atomic.Int64 // GOMAXPROCS before ReserveCostlyProcs
)

func newAdmission(slots int, wait time.Duration) *admission {
	if slots <= 0 {
		slots = defaultCostlySlots()
	}
	if wait < 0 {
		wait = 0
	}
	return &admission{slots: make(chan struct{}, slots), wait: wait, maxWaiting: int64(64 * slots)}
}

// enter takes a slot for costly work of class, waiting at most a.wait and
// no longer than ctx lives. It returns the function that gives the slot
// back (call it at least once), or an error: server_busy (503, with
// Retry-After set on w) when no slot came free in time, or ctx's error.
func (a *admission) enter(ctx context.Context, w http.ResponseWriter, class string) (release func(), err error) {
	select {
	case a.slots <- struct{}{}:
	default:
		if err := a.queue(ctx, w, class); err != nil {
			return nil, err
		}
	}
	return a.held(class, false), nil
}

// held returns the release of a slot just taken.
func (a *admission) held(class string, resumed bool) (release func()) {
	left := func() {}
	if a.entered != nil {
		left = a.entered(class, resumed)
	}
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			left()
			<-a.slots
		}
	}
}

// queue waits for a slot when none was free.
func (a *admission) queue(ctx context.Context, w http.ResponseWriter, class string) error {
	if a.waiting.Add(1) > a.maxWaiting {
		a.waiting.Add(-1)
		return a.busy(w, class)
	}
	defer a.waiting.Add(-1)
	if a.wait <= 0 {
		return a.busy(w, class)
	}
	t := time.NewTimer(a.wait)
	defer t.Stop()
	select {
	case a.slots <- struct{}{}:
		return nil
	case <-t.C:
		return a.busy(w, class)
	case <-ctx.Done():
		// The client left; whatever is answered goes nowhere, and a
		// client leaving is no internal error to log.
		return a.busy(w, class)
	}
}

func (a *admission) busy(w http.ResponseWriter, class string) error {
	secs := retryAfter(w, time.Second)
	return errHTTP(codeBusy, fmt.Sprintf("the server is busy with other %s, search, export and analytics requests; retry in %d s", classNoun(class), secs))
}

func classNoun(class string) string {
	switch class {
	case costlyQR:
		return "QR rendering"
	case costlyBackup:
		return "backup"
	case costlyHash:
		return "link password hashing"
	}
	return class
}

// admit takes a slot of the costly-work gate for the request; see
// admission.enter.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, class string) (release func(), err error) {
	return s.costly.enter(r.Context(), w, class)
}

// work runs the costly work of class, for which the caller holds a slot,
// on a thread of low CPU priority (see lowPriority), and returns its error.
func (s *Server) work(class string, work func() error) error {
	return lowPriority(func() error {
		if s.costly.working != nil {
			s.costly.working(class)
		}
		return work()
	})
}

// slowWrite is how long a write to the client may block before a
// streaming answer gives its slot back for the rest of the wait.
const slowWrite = 100 * time.Millisecond

// gatedWriter writes a streaming answer that holds a slot of the gate. A
// write holds the slot too (sending is work: system calls, copies), but one
// that blocks past slowWrite gives it back, and the writer takes one again
// (waiting as long as the request lives) once the client has taken the
// bytes: a slow client's download never holds a slot.
type gatedWriter struct {
	w       io.Writer
	ctx     context.Context
	a       *admission
	class   string
	release func() // of the slot held; safe from any goroutine
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	t := time.AfterFunc(slowWrite, g.release)
	n, err := g.w.Write(p)
	if t.Stop() {
		return n, err // the slot was held throughout
	}
	g.release = func() {}
	select {
	case g.a.slots <- struct{}{}:
		g.release = g.a.held(g.class, true)
	case <-g.ctx.Done():
		if err == nil {
			err = g.ctx.Err()
		}
	}
	return n, err
}

// done gives back the slot held, if any.
func (g *gatedWriter) done() { g.release() }
