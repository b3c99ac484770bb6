package analytics

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// OrphanHit is an orphan visit as a request hands it over: its user agent
// and address are classified on the recorder's goroutine, then forgotten.
type OrphanHit struct {
	Time      time.Time
	Domain    string
	Type      string
	Path      string
	Referrer  string
	UserAgent string
	Addr      netip.Addr
}

// OrphanQueueSize is how many orphan visits wait for a write at most;
// past it they are dropped and counted.
const OrphanQueueSize = 10000

// OrphanRecorder queues orphan visits in memory and writes them in
// batches in the background, so that a request never waits for the store.
// A full queue drops visits (counted by Dropped) rather than grow.
type OrphanRecorder struct {
	store    link.OrphanVisitStore
	classify *Classifier
	perHour  int
	interval time.Duration
	logger   *slog.Logger
	queue    chan OrphanHit

	dropped, written atomic.Int64
	mu               sync.Mutex // one write at a time
	stop             chan struct{}
	done             chan struct{}
}

// NewOrphanRecorder returns a recorder writing to store every interval
// (at least a second), keeping at most perHour visits per domain and hour.
func NewOrphanRecorder(store link.OrphanVisitStore, c *Classifier, perHour int, interval time.Duration, logger *slog.Logger) *OrphanRecorder {
	if interval < time.Second {
		interval = time.Second
	}
	if c == nil {
		c = NewClassifier(nil)
	}
	return &OrphanRecorder{store: store, classify: c, perHour: perHour, interval: interval, logger: logger,
		queue: make(chan OrphanHit, OrphanQueueSize)}
}

// Record queues h, or drops it when the queue is full. It never blocks.
func (r *OrphanRecorder) Record(h OrphanHit) {
	select {
	case r.queue <- h:
	default:
		r.dropped.Add(1)
	}
}

// Dropped returns how many visits were dropped: the queue full, or a
// failed write.
func (r *OrphanRecorder) Dropped() int64 { return r.dropped.Load() }

// Written returns how many visits were written (counted).
func (r *OrphanRecorder) Written() int64 { return r.written.Load() }

// Start writes the queue every interval until Close.
func (r *OrphanRecorder) Start() {
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTicker(r.interval)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				if err := r.Flush(context.Background()); err != nil {
					r.logger.Error("writing orphan visits", "err", err)
				}
			}
		}
	}()
}

// Flush writes what is queued now, classified, in one batch. A batch the
// store refuses is dropped and counted: orphan visits are not worth a
// retry queue.
func (r *OrphanRecorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var batch []link.OrphanVisit
	for len(batch) < OrphanQueueSize {
		select {
		case h := <-r.queue:
			batch = append(batch, r.classified(h))
			continue
		default:
		}
		break
	}
	if len(batch) == 0 {
		return nil
	}
	if err := r.store.AddOrphanVisits(ctx, batch, r.perHour); err != nil {
		r.dropped.Add(int64(len(batch)))
		return err
	}
	r.written.Add(int64(len(batch)))
	return nil
}

// classified returns h as the store keeps it.
func (r *OrphanRecorder) classified(h OrphanHit) link.OrphanVisit {
	cl := r.classify.uas.Classify(h.UserAgent)
	return link.OrphanVisit{Time: h.Time, Domain: h.Domain, Type: h.Type, Path: h.Path, Referrer: h.Referrer,
		Country: r.classify.geo.Country(h.Addr), Device: cl.Device, Browser: cl.Browser, OS: cl.OS, Bot: cl.Bot}
}

// Close stops the background writes and writes what is queued.
func (r *OrphanRecorder) Close(ctx context.Context) error {
	if r.stop != nil {
		close(r.stop)
		<-r.done
		r.stop = nil
	}
	return r.Flush(ctx)
}
