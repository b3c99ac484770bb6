package storage

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// Limits of the delivery log.
const (
	// defaultDeliveries and maxDeliveries bound a FindDeliveries page.
	defaultDeliveries = 50
	maxDeliveries     = 1000
	// maxLastError bounds the error kept with a delivery, in bytes.
	maxLastError = 1024
)

// deliveryRecord is a delivery as stored, in the binary encoding of
// delivery_codec.go.
type deliveryRecord struct {
	Webhook   uint64
	Workspace uint64
	// Event is the sequence of the event (0 for a ping queued by a
	// linkbolt before pings had event IDs).
	Event         uint64
	Type          string
	Payload       []byte // JSON
	Status        string
	Attempts      int
	ResponseCode  int
	Duration      time.Duration
	LastError     string
	NextAttemptAt *time.Time
	// Queue is the delivery's sequence in its webhook's queue while it is
	// pending, 0 otherwise.
	Queue     uint64
	QueuedAt  time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (r *deliveryRecord) delivery(ids *idCodec, id uint64) *link.Delivery {
	d := &link.Delivery{
		ID: ids.formatID(prefixDelivery, id), WebhookID: ids.formatID(prefixWebhook, r.Webhook),
		WorkspaceID: ids.formatID(prefixWorkspace, r.Workspace), EventType: r.Type,
		Payload: r.Payload, Status: link.DeliveryStatus(r.Status), Attempts: r.Attempts,
		ResponseCode: r.ResponseCode, Duration: r.Duration, LastError: r.LastError,
		QueuedAt: r.QueuedAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	if r.Event != 0 {
		d.EventID = ids.formatID(prefixEvent, r.Event)
	}
	if r.NextAttemptAt != nil {
		at := *r.NextAttemptAt
		d.NextAttemptAt = &at
	}
	return d
}

func (r *deliveryRecord) pending() bool { return r.Status == string(link.DeliveryPending) }

func queueKey(whid, seq uint64) []byte { return concat(itob(whid), itob(seq)) }

// findDelivery returns a delivery record of webhook whid. ENOTFOUND.
func findDelivery(tx *bolt.Tx, whid, did uint64) (*deliveryRecord, error) {
	var rec deliveryRecord
	v := tx.Bucket(bucketDeliveries).Get(itob(did))
	if v != nil {
		if err := rec.decode(v); err != nil {
			return nil, fmt.Errorf("delivery %d: %w", did, err)
		}
	}
	if v == nil || rec.Webhook != whid {
		return nil, link.Errorf(link.ENOTFOUND, "delivery %q not found", idsOf(tx).formatID(prefixDelivery, did))
	}
	return &rec, nil
}

// putNewDelivery stores a new pending delivery under id (from the
// deliveries bucket's sequence) at the end of its webhook's queue.
func putNewDelivery(tx *bolt.Tx, id uint64, rec *deliveryRecord) error {
	if err := tx.Bucket(bucketDeliveriesWebhook).Put(concat(itob(rec.Webhook), itob(id)), []byte{}); err != nil {
		return fmt.Errorf("index delivery: %w", err)
	}
	return enqueue(tx, id, rec)
}

// enqueue puts a pending delivery at the end of its webhook's queue and
// stores it.
func enqueue(tx *bolt.Tx, id uint64, rec *deliveryRecord) error {
	q := tx.Bucket(bucketDeliveriesQueue)
	seq, err := nextID(q)
	if err != nil {
		return err
	}
	rec.Queue = seq
	if err := q.Put(queueKey(rec.Webhook, seq), itob(id)); err != nil {
		return fmt.Errorf("queue delivery: %w", err)
	}
	queuedDeliveries(tx, 1)
	return putDelivery(tx, id, rec)
}

// putDelivery stores a delivery record.
func putDelivery(tx *bolt.Tx, id uint64, rec *deliveryRecord) error {
	if err := tx.Bucket(bucketDeliveries).Put(itob(id), rec.appendTo(nil)); err != nil {
		return fmt.Errorf("put delivery: %w", err)
	}
	return nil
}

// dequeue takes a delivery out of its webhook's queue.
func dequeue(tx *bolt.Tx, rec *deliveryRecord) error {
	if rec.Queue == 0 {
		return nil
	}
	if err := tx.Bucket(bucketDeliveriesQueue).Delete(queueKey(rec.Webhook, rec.Queue)); err != nil {
		return fmt.Errorf("dequeue delivery: %w", err)
	}
	queuedDeliveries(tx, -1)
	rec.Queue = 0
	return nil
}

// FindDeliveries returns a webhook's deliveries, newest (by creation)
// first, at most limit (0 means 50, at most 1000). ENOTFOUND.
func (s *WebhookService) FindDeliveries(ctx context.Context, workspaceID, webhookID string, limit int) ([]*link.Delivery, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	whid, ok2 := s.db.ids.parseID(prefixWebhook, webhookID)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", webhookID)
	}
	if limit <= 0 {
		limit = defaultDeliveries
	}
	limit = min(limit, maxDeliveries)
	out := []*link.Delivery{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if _, err := findWebhook(tx, wid, whid); err != nil {
			return err
		}
		prefix := itob(whid)
		c := tx.Bucket(bucketDeliveriesWebhook).Cursor()
		for k := lastWithPrefix(c, prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = c.Prev() {
			did := btoi(k[8:])
			rec, err := findDelivery(tx, whid, did)
			if err != nil {
				return fmt.Errorf("delivery index: %w", err)
			}
			out = append(out, rec.delivery(s.db.ids, did))
		}
		return nil
	})
	return out, err
}

// Ping queues a ping delivery at the end of the webhook's queue, whatever
// its events, with a body encoded by s.Events whose id is the delivery's
// EventID. ECONFLICT when the webhook is disabled, ENOTFOUND.
func (s *WebhookService) Ping(ctx context.Context, workspaceID, id string) (*link.Delivery, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	whid, ok2 := s.db.ids.parseID(prefixWebhook, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	}
	now := s.db.now()
	var out *link.Delivery
	err := s.db.update(func(tx *bolt.Tx) error {
		wh, err := findWebhook(tx, wid, whid)
		if err != nil {
			return err
		}
		if !wh.Enabled {
			return link.Errorf(link.ECONFLICT, "webhook %q is disabled: enable the webhook first", id)
		}
		did, err := nextID(tx.Bucket(bucketDeliveries))
		if err != nil {
			return err
		}
		seq, body, err := pingEvent(tx, s.Events, wid, now)
		if err != nil {
			return err
		}
		rec := &deliveryRecord{Webhook: whid, Workspace: wid, Event: seq, Type: link.EventPing, Payload: body,
			Status: string(link.DeliveryPending), NextAttemptAt: &now, QueuedAt: now, CreatedAt: now, UpdatedAt: now}
		if err := putNewDelivery(tx, did, rec); err != nil {
			return err
		}
		out = rec.delivery(s.db.ids, did)
		return nil
	})
	return out, err
}

// RetryDelivery queues a succeeded or failed delivery again: at the end of
// its webhook's queue, due now, with the same id (so receivers that saw it
// de-duplicate it) and the same body. Its attempts count from zero again,
// and its 24 hours of retries from now (QueuedAt); the log of its last
// attempt stays until the next. A disabled webhook keeps it queued until
// it is enabled. ECONFLICT when it is pending already, ENOTFOUND.
func (s *WebhookService) RetryDelivery(ctx context.Context, workspaceID, webhookID, deliveryID string) (*link.Delivery, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	whid, ok2 := s.db.ids.parseID(prefixWebhook, webhookID)
	did, ok3 := s.db.ids.parseID(prefixDelivery, deliveryID)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", webhookID)
	}
	if !ok3 {
		return nil, link.Errorf(link.ENOTFOUND, "delivery %q not found", deliveryID)
	}
	now := s.db.now()
	var out *link.Delivery
	err := s.db.update(func(tx *bolt.Tx) error {
		if _, err := findWebhook(tx, wid, whid); err != nil {
			return err
		}
		rec, err := findDelivery(tx, whid, did)
		if err != nil {
			return err
		}
		if rec.pending() {
			return link.Errorf(link.ECONFLICT, "delivery %q is pending already", deliveryID)
		}
		rec.Status, rec.Attempts = string(link.DeliveryPending), 0
		rec.NextAttemptAt, rec.QueuedAt, rec.UpdatedAt = &now, now, now
		if err := enqueue(tx, did, rec); err != nil {
			return err
		}
		out = rec.delivery(s.db.ids, did)
		return nil
	})
	return out, err
}

// DueDeliveries returns, for each enabled webhook with pending deliveries,
// the head of its queue when it is due at now (NextAttemptAt ≤ now), at
// most limit in all (0 means no limit), in the order of the webhooks' ids.
// A head waiting for a retry holds back the deliveries behind it, so each
// webhook's deliveries go out in order. It reads one queue entry, one
// webhook and at most one delivery per webhook with a queue.
func (s *WebhookService) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]*link.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := []*link.Delivery{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		webhooks := tx.Bucket(bucketWebhooks)
		c := tx.Bucket(bucketDeliveriesQueue).Cursor()
		for k, v := c.First(); k != nil && (limit <= 0 || len(out) < limit); {
			if len(k) != 16 || len(v) != 8 {
				return fmt.Errorf("deliveries.queue %x: malformed entry", k)
			}
			whid := btoi(k[:8])
			var wh webhookRecord
			ok, err := getJSON(webhooks, k[:8], &wh)
			if err != nil {
				return err
			}
			if ok && wh.active() {
				did := btoi(v)
				rec, err := findDelivery(tx, whid, did)
				if err != nil {
					return fmt.Errorf("delivery queue: %w", err)
				}
				if rec.NextAttemptAt == nil || !rec.NextAttemptAt.After(now) {
					out = append(out, rec.delivery(s.db.ids, did))
				}
			}
			end := prefixEnd(k[:8]) // the next webhook's queue
			if end == nil {
				break
			}
			k, v = c.Seek(end)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// NextDeliveries returns the first pending deliveries of a webhook's
// queue, in order, at most n (at least 1), up to the first that is not due
// at now (NextAttemptAt > now). It returns none when the webhook is
// disabled or its head waits for a retry. A dispatcher sends them one
// after another and records them together with RecordAttempts. It reads
// the webhook and the queue's first n entries. ENOTFOUND.
func (s *WebhookService) NextDeliveries(ctx context.Context, webhookID string, now time.Time, n int) ([]*link.Delivery, error) {
	whid, ok := s.db.ids.parseID(prefixWebhook, webhookID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", webhookID)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n = max(n, 1)
	out := []*link.Delivery{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		wh, err := findWebhook(tx, 0, whid)
		if err != nil {
			return err
		}
		if !wh.active() {
			return nil
		}
		prefix := itob(whid)
		c := tx.Bucket(bucketDeliveriesQueue).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out) < n; k, v = c.Next() {
			if len(k) != 16 || len(v) != 8 {
				return fmt.Errorf("deliveries.queue %x: malformed entry", k)
			}
			did := btoi(v)
			rec, err := findDelivery(tx, whid, did)
			if err != nil {
				return fmt.Errorf("delivery queue: %w", err)
			}
			if rec.NextAttemptAt != nil && rec.NextAttemptAt.After(now) {
				break
			}
			out = append(out, rec.delivery(s.db.ids, did))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
