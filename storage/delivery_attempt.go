package storage

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// RecordAttempts writes the outcome of tries of pending deliveries and
// their next steps, in their order, in one transaction (shared with the
// attempts other workers record at the same time, see attemptWriter), and
// sets each record's Delivery to what was stored. A dispatcher records a
// run of one webhook's deliveries with it: one commit for the run.
//
// A success (Attempt.Error == "") marks the delivery succeeded and takes
// it out of the queue. A failure counts against the webhook's consecutive
// failures and: with Disable != "", marks the delivery failed and disables
// the webhook with Disable as its reason (the rest of its queue stays
// pending, for when it is enabled again); else with Next, keeps it at the
// head of the queue, due at Next; else marks it failed and dequeues it.
//
// A record that cannot be written (ENOTFOUND when the webhook or the
// delivery was deleted meanwhile or the id is malformed, ECONFLICT when
// the delivery is not pending) is skipped, leaving its Delivery as it
// was, and the first such error is returned; the others are written. Any
// other error writes nothing.
func (s *WebhookService) RecordAttempts(ctx context.Context, rs []link.AttemptRecord) error {
	if len(rs) == 0 {
		return nil
	}
	var first error
	reqs := make([]*attemptRequest, 0, len(rs))
	idx := make([]int, 0, len(rs)) // the record each request came from
	for i, r := range rs {
		d := r.Delivery
		whid, ok1 := s.db.ids.parseID(prefixWebhook, d.WebhookID)
		did, ok2 := s.db.ids.parseID(prefixDelivery, d.ID)
		if !ok1 || !ok2 {
			if first == nil {
				first = link.Errorf(link.ENOTFOUND, "delivery %q not found", d.ID)
			}
			continue
		}
		a := r.Attempt
		if a.At.IsZero() {
			a.At = s.db.now()
		}
		a.At = a.At.UTC()
		reqs = append(reqs, &attemptRequest{whid: whid, did: did, a: a, next: r.Next, disable: r.Disable})
		idx = append(idx, i)
	}
	if len(reqs) == 0 {
		return first
	}
	g := &attemptGroup{reqs: reqs, wake: make(chan struct{})}
	s.attempts.submit(s.db, g)
	if g.err != nil {
		return g.err
	}
	for j, q := range reqs {
		if q.err != nil {
			if first == nil {
				first = q.err
			}
			continue
		}
		*rs[idx[j]].Delivery = *q.out
	}
	return first
}

// attemptWriter commits the attempts recorded at the same time together:
// a caller that finds no commit running writes every waiting group of
// attempts in one transaction (one fsync for many workers) and hands the
// next batch to one of the callers that arrived meanwhile. A lone caller
// commits at once, with no delay (unlike bolt's Batch). A group's attempts
// always share one transaction.
type attemptWriter struct {
	mu      sync.Mutex
	writing bool
	pending []*attemptGroup
	// txs counts the write transactions begun, for tests.
	txs atomic.Uint64
}

// attemptGroup is the attempts of one RecordAttempts call.
type attemptGroup struct {
	reqs   []*attemptRequest
	err    error         // of the transaction: nothing of the group was written
	wake   chan struct{} // closed when done, or when the group must lead
	leader bool
}

type attemptRequest struct {
	whid, did uint64
	a         link.Attempt
	next      *time.Time
	disable   string

	out *link.Delivery
	err error // a domain error: this attempt was skipped
}

func (w *attemptWriter) submit(db *DB, g *attemptGroup) {
	w.mu.Lock()
	w.pending = append(w.pending, g)
	if w.writing {
		w.mu.Unlock()
		<-g.wake
		if !g.leader {
			return
		}
		w.mu.Lock() // leading: g is at the front of pending
	}
	w.writing = true
	batch := w.pending
	w.pending = nil
	w.mu.Unlock()

	w.txs.Add(1)
	err := db.update(func(tx *bolt.Tx) error {
		for _, b := range batch {
			for _, q := range b.reqs {
				q.out, q.err = nil, nil
				out, err := recordAttempt(tx, q)
				var lerr *link.Error
				if errors.As(err, &lerr) {
					q.err = err // checked before anything was written
					continue
				}
				if err != nil {
					return err
				}
				q.out = out
			}
		}
		return nil
	})
	for _, b := range batch {
		b.err = err
		if b != g {
			close(b.wake)
		}
	}

	w.mu.Lock()
	if len(w.pending) > 0 {
		next := w.pending[0]
		next.leader = true
		close(next.wake)
	} else {
		w.writing = false
	}
	w.mu.Unlock()
}

// recordAttempt writes one attempt of RecordAttempts in tx. Its domain errors come before any
// write.
func recordAttempt(tx *bolt.Tx, q *attemptRequest) (*link.Delivery, error) {
	wh, err := findWebhook(tx, 0, q.whid)
	if err != nil {
		return nil, err
	}
	rec, err := findDelivery(tx, q.whid, q.did)
	if err != nil {
		return nil, err
	}
	if !rec.pending() {
		return nil, link.Errorf(link.ECONFLICT, "delivery %q is %s, not pending", idsOf(tx).formatID(prefixDelivery, q.did), rec.Status)
	}
	a := q.a
	rec.Attempts++
	rec.ResponseCode, rec.Duration, rec.UpdatedAt = a.ResponseCode, a.Duration, a.At
	rec.LastError = truncateUTF8(a.Error, maxLastError)
	old := *wh
	switch {
	case a.Error == "":
		rec.Status, rec.NextAttemptAt = string(link.DeliverySucceeded), nil
		wh.Failures = 0
	case q.disable != "":
		// The delivery stays at the head of the queue: enabling the
		// webhook again sends it first, then what queued meanwhile.
		at := a.At.UTC()
		rec.NextAttemptAt = &at
		wh.Failures++
		wh.Enabled, wh.DisabledReason, wh.UpdatedAt = false, q.disable, a.At
	case q.next != nil:
		n := q.next.UTC()
		rec.NextAttemptAt = &n
		wh.Failures++
	default:
		rec.Status, rec.NextAttemptAt = string(link.DeliveryFailed), nil
		wh.Failures++
	}
	if !rec.pending() {
		if err := dequeue(tx, rec); err != nil {
			return nil, err
		}
	}
	if err := putDelivery(tx, q.did, rec); err != nil {
		return nil, err
	}
	if wh.Enabled != old.Enabled {
		if err := setSubscriptions(tx, q.whid, &old, wh); err != nil {
			return nil, err
		}
	}
	if wh.Enabled != old.Enabled {
		// linkbolt disabled the webhook: the system's entry, at the attempt.
		e := newAuditRecord(context.Background(), []uint64{wh.Workspace}, a.At, link.AuditWebhookDisabled,
			webhookTarget(idsOf(tx), q.whid), webhookChanges(&old, wh))
		if err := putAudit(tx, e); err != nil {
			return nil, err
		}
	}
	if wh.Failures != old.Failures || wh.Enabled != old.Enabled {
		if err := putJSON(tx.Bucket(bucketWebhooks), itob(q.whid), wh); err != nil {
			return nil, err
		}
	}
	return rec.delivery(idsOf(tx), q.did), nil
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
