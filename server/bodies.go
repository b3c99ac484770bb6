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
// bulk creations of 4 MiB 1.3 GB. A body larger than freeBody reserves its
// size from bodyBudget before a byte of it is read; only then is it read.
const (
	// bodyBudget is the bytes of large bodies held at once. An import's
	// body (maxImportBody) fits, and what it decodes into beside it (the
	// file's text, the rows the dry run reads) keeps the process under
	// its soft memory limit of 256 MiB with room for redirects.
	bodyBudget = maxImportBody
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

// reserve makes room for the body of r, which may be up to limit bytes:
// its declared length, or limit when it declares none. It waits at most
// g.wait, and answers server_busy (503, Retry-After set on w) when no room
// came. The release it returns gives the room back (call it once the body
// and what it decoded into are dropped).
func (g *bodyGate) reserve(w http.ResponseWriter, r *http.Request, limit int64) (release func(), err error) {
	n := limit
	if r.ContentLength >= 0 && r.ContentLength < limit {
		n = r.ContentLength
	}
	if n <= freeBody {
		return func() {}, nil
	}
	n = min(n, bodyBudget)
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
