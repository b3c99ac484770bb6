package server

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Bounds of the request bodies held in memory at once. A body is held
// whole (as bytes, then as what it decodes into) while its request is
// served: 24 import dry runs of 31 MiB read side by side took 1.7 GB, 200
// bulk creations of 4 MiB 1.3 GB. A body larger than freeBody reserves
// what its request holds at its peak, a multiple of its size (heldImport,
// heldBulk), from bodyBudget before a byte of it is read; only then is it
// read.
const (
	// bodyBudget is the bytes the requests of large bodies hold at once.
	// The collector lets the heap grow to three times what is live (GOGC
	// 200, see main), so 64 MiB held keeps the process, with the pages of
	// its binary and data file, well under its soft memory limit of 256
	// MiB, with room for redirects. One import of the largest body
	// (maxImportBody) fits.
	bodyBudget = 64 << 20
	// heldImport is what an import holds per byte of its body at its
	// peak: the body, in whose buffer the file is unescaped and read, and
	// a dry run's keys and aliases met so far (a 31 MiB CSV of 130,000
	// rows held 48 MB).
	heldImport = 2
	// heldBulk is what a bulk creation holds per byte of its body: the
	// body and its links decoded side by side, then the links, their
	// records and pages in the write transaction, and the answer, which
	// quotes them (a 4 MiB body held 16 MB). The writes of bulk creations
	// take turns anyway, so room for four at once serves them as fast.
	heldBulk = 4
	// freeBody is the size under which a body reserves nothing: the
	// small bodies of everyday calls never wait.
	freeBody = 64 << 10
	// maxBodyWaiting bounds the requests waiting for room; more are
	// answered 503 at once.
	maxBodyWaiting = 64
)

// bodyGate admits large request bodies by their size before they are read.
// It is apart from the costly-work gate: it bounds memory, not CPU, and a
// client sending its body slowly (as long as server's read timeout lets
// it) holds room here, not one of the slots searches and exports need.
type bodyGate struct {
	bytes   *semaphore.Weighted
	wait    time.Duration
	waiting atomic.Int64

	// reserved, when set (tests), is called with the bytes of each
	// reservation made.
	reserved func(n int64)
}

func newBodyGate(wait time.Duration) *bodyGate {
	return &bodyGate{bytes: semaphore.NewWeighted(bodyBudget), wait: max(wait, 0)}
}

// reserve makes room for the request r, which holds held bytes per byte
// of its body at its peak, and whose body may be up to limit bytes: its
// declared length, or limit when it declares none. It waits at most
// g.wait, and answers server_busy (503, Retry-After set on w) when no room
// came. The release it returns gives the room back (call it once the body
// and what it decoded into are dropped).
func (g *bodyGate) reserve(w http.ResponseWriter, r *http.Request, limit, held int64) (release func(), err error) {
	n := limit
	if r.ContentLength >= 0 && r.ContentLength < limit {
		n = r.ContentLength
	}
	if n <= freeBody {
		return func() {}, nil
	}
	n = min(n*max(held, 1), bodyBudget)
	if !g.bytes.TryAcquire(n) {
		if err := g.queue(r.Context(), w, n); err != nil {
			return nil, err
		}
	}
	if g.reserved != nil {
		g.reserved(n)
	}
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			g.bytes.Release(n)
		}
	}, nil
}

func (g *bodyGate) queue(ctx context.Context, w http.ResponseWriter, n int64) error {
	if g.waiting.Add(1) > maxBodyWaiting || g.wait <= 0 {
		g.waiting.Add(-1)
		return g.busy(w)
	}
	defer g.waiting.Add(-1)
	ctx, cancel := context.WithTimeout(ctx, g.wait)
	defer cancel()
	if err := g.bytes.Acquire(ctx, n); err != nil {
		return g.busy(w)
	}
	return nil
}

func (g *bodyGate) busy(w http.ResponseWriter) error {
	secs := retryAfter(w, time.Second)
	return errHTTP(codeBusy, fmt.Sprintf("the server is busy reading other large request bodies (imports, bulk creations); retry in %d s", secs))
}
