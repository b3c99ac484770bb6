package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// Wire ID prefixes of webhooks and their deliveries.
const (
	prefixWebhook  = "wh_"
	prefixDelivery = "dlv_"
)

// Limits of the delivery log.
const (
	// defaultDeliveries and maxDeliveries bound a FindDeliveries page.
	defaultDeliveries = 50
	maxDeliveries     = 1000
	// maxLastError bounds the error kept with a delivery, in bytes.
	maxLastError = 1024
)

// WebhookService keeps webhooks and the outbox of their deliveries.
//
// A delivery is one event on its way to one webhook: a record holding the
// JSON body fixed when the event was written, and, while it is pending, an
// entry in its webhook's queue (deliveries.queue: webhook id + queue
// sequence → delivery id). The queue is ordered by the sequence, so the
// head of each webhook's queue is one Seek away and DueDeliveries reads
// O(webhooks with pending deliveries) keys, however long the queues.
// Deliveries are created by appendEvent in the transaction of the change
// that caused the event, so the outbox lives on disk: a burst of events
// grows the file, not memory.
//
// Secrets are stored as given: they sign every delivery, so they must be
// readable, and a hash could not sign.
type WebhookService struct {
	db       *DB
	attempts attemptWriter
	// Events encodes pings; without it Ping fails.
	Events link.EventEncoder
}

var _ link.WebhookService = (*WebhookService)(nil)

// NewWebhookService returns the webhook service of db.
func NewWebhookService(db *DB) *WebhookService { return &WebhookService{db: db} }

type webhookRecord struct {
	Workspace               uint64     `json:"ws"`
	URL                     string     `json:"url"`
	Events                  []string   `json:"events"`
	Enabled                 bool       `json:"enabled"`
	Description             string     `json:"description,omitempty"`
	Secret                  string     `json:"secret"`
	PreviousSecret          string     `json:"previous_secret,omitempty"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at,omitempty"`
	DisabledReason          string     `json:"disabled_reason,omitempty"`
	Failures                int        `json:"failures,omitempty"`
	// Deleting marks a webhook whose deletion has begun: it is out of
	// every index and invisible, and its deliveries are being deleted in
	// chunks; the record goes last. PruneDeliveries finishes a deletion
	// a crash interrupted.
	Deleting  bool      `json:"deleting,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (r *webhookRecord) webhook(ids *idCodec, id uint64) *link.Webhook {
	w := &link.Webhook{
		ID: ids.formatID(prefixWebhook, id), WorkspaceID: ids.formatID(prefixWorkspace, r.Workspace),
		URL: r.URL, Events: slices.Clone(r.Events), Enabled: r.Enabled, Description: r.Description,
		Secret: r.Secret, PreviousSecret: r.PreviousSecret, DisabledReason: r.DisabledReason,
		ConsecutiveFailures: r.Failures, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	if w.Events == nil {
		w.Events = []string{}
	}
	if r.PreviousSecretExpiresAt != nil {
		at := *r.PreviousSecretExpiresAt
		w.PreviousSecretExpiresAt = &at
	}
	return w
}

// set copies the fields an update may change.
func (r *webhookRecord) set(w *link.Webhook) {
	r.URL, r.Events, r.Enabled = w.URL, slices.Clone(w.Events), w.Enabled
	r.Description, r.DisabledReason = w.Description, w.DisabledReason
}

// active reports whether the webhook takes new deliveries and sends its
// queue.
func (r *webhookRecord) active() bool { return r.Enabled && !r.Deleting }

// subscribed reports whether new events are queued for the webhook: when
// it is enabled, and also when linkbolt disabled it after failed
// deliveries, so that nothing is lost while its receiver is down; only a
// person's choice (enabled: false) stops the queue from growing.
func (r *webhookRecord) subscribed() bool {
	return !r.Deleting && (r.Enabled || r.DisabledReason != "")
}

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

// subscriptionPrefix is the start of the webhooks.event keys of a
// workspace's webhooks subscribed to typ.
func subscriptionPrefix(wid uint64, typ string) []byte {
	return concat(itob(wid), []byte(typ), []byte{0})
}

func queueKey(whid, seq uint64) []byte { return concat(itob(whid), itob(seq)) }

// setSubscriptions moves the webhooks.event entries of a webhook from what
// old (nil for none) indexed to what rec (nil for none) indexes: the
// events of an active webhook.
func setSubscriptions(tx *bolt.Tx, whid uint64, old, rec *webhookRecord) error {
	b := tx.Bucket(bucketWebhooksEvent)
	if old != nil && old.subscribed() {
		for _, e := range old.Events {
			if err := b.Delete(concat(subscriptionPrefix(old.Workspace, e), itob(whid))); err != nil {
				return fmt.Errorf("unindex webhook events: %w", err)
			}
		}
	}
	if rec != nil && rec.subscribed() {
		for _, e := range rec.Events {
			if err := b.Put(concat(subscriptionPrefix(rec.Workspace, e), itob(whid)), []byte{}); err != nil {
				return fmt.Errorf("index webhook events: %w", err)
			}
		}
	}
	return nil
}

// findWebhook returns a webhook record of workspace wid (any workspace
// when wid is 0). ENOTFOUND, also for a webhook being deleted.
func findWebhook(tx *bolt.Tx, wid, whid uint64) (*webhookRecord, error) {
	var rec webhookRecord
	ok, err := getJSON(tx.Bucket(bucketWebhooks), itob(whid), &rec)
	if err != nil {
		return nil, err
	}
	if !ok || rec.Deleting || wid != 0 && rec.Workspace != wid {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", idsOf(tx).formatID(prefixWebhook, whid))
	}
	return &rec, nil
}

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

// CreateWebhook stores a validated webhook with its secret and sets its ID
// (and CreatedAt, UpdatedAt when zero). EINVALID without a secret,
// ENOTFOUND for an unknown workspace.
func (s *WebhookService) CreateWebhook(ctx context.Context, w *link.Webhook) error {
	wid, ok := s.db.ids.parseID(prefixWorkspace, w.WorkspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", w.WorkspaceID)
	}
	if w.Secret == "" {
		return link.Errorf(link.EINVALID, "a webhook needs a signing secret")
	}
	if w.CreatedAt.IsZero() {
		w.CreatedAt = s.db.now()
	}
	if w.UpdatedAt.IsZero() {
		w.UpdatedAt = w.CreatedAt
	}
	rec := &webhookRecord{Workspace: wid, Secret: w.Secret, CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC()}
	rec.set(w)
	var id uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		b := tx.Bucket(bucketWebhooks)
		var err error
		if id, err = nextID(b); err != nil {
			return err
		}
		if err := putJSON(b, itob(id), rec); err != nil {
			return err
		}
		if err := tx.Bucket(bucketWebhooksWorkspace).Put(concat(itob(wid), itob(id)), []byte{}); err != nil {
			return fmt.Errorf("index webhook: %w", err)
		}
		return setSubscriptions(tx, id, nil, rec)
	})
	if err != nil {
		return err
	}
	w.ID = s.db.ids.formatID(prefixWebhook, id)
	w.ConsecutiveFailures = 0
	return nil
}

// FindWebhookByID returns a webhook of the workspace, with its secrets.
// ENOTFOUND.
func (s *WebhookService) FindWebhookByID(ctx context.Context, workspaceID, id string) (*link.Webhook, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	whid, ok2 := s.db.ids.parseID(prefixWebhook, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	}
	var out *link.Webhook
	err := s.db.db.View(func(tx *bolt.Tx) error {
		rec, err := findWebhook(tx, wid, whid)
		if err != nil {
			return err
		}
		out = rec.webhook(s.db.ids, whid)
		return nil
	})
	return out, err
}

// FindWebhooks returns the workspace's webhooks, newest first. ENOTFOUND
// for a malformed workspace ID.
func (s *WebhookService) FindWebhooks(ctx context.Context, workspaceID string) ([]*link.Webhook, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.Webhook{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		prefix := itob(wid)
		c := tx.Bucket(bucketWebhooksWorkspace).Cursor()
		for k := lastWithPrefix(c, prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			whid := btoi(k[8:])
			rec, err := findWebhook(tx, wid, whid)
			if err != nil {
				return fmt.Errorf("webhook index: %w", err)
			}
			out = append(out, rec.webhook(s.db.ids, whid))
		}
		return nil
	})
	return out, err
}

// UpdateWebhook applies an update, checks the result with its Validate
// method and with validate (whose error is returned unchanged), and stores
// it. validate runs outside the write transaction, so it may take time
// (resolve the URL's host); when the webhook changed meanwhile (the
// dispatcher disabled it, say), the update is applied again to the new
// version and validated again. Enabling a disabled webhook clears its
// reason and its count of consecutive failures, and its queue resumes;
// the pending deliveries of a webhook that is disabled stay queued.
// ENOTFOUND, EINVALID, ECONFLICT when the webhook keeps changing.
func (s *WebhookService) UpdateWebhook(ctx context.Context, workspaceID, id string, upd link.WebhookUpdate, validate func(*link.Webhook) error) (*link.Webhook, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	whid, ok2 := s.db.ids.parseID(prefixWebhook, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	}
	apply := func(rec *webhookRecord) (*link.Webhook, error) {
		w := rec.webhook(s.db.ids, whid)
		upd.Apply(w)
		return w, w.Validate()
	}
	for range 5 {
		var checked *link.Webhook
		err := s.db.db.View(func(tx *bolt.Tx) error {
			rec, err := findWebhook(tx, wid, whid)
			if err != nil {
				return err
			}
			checked, err = apply(rec)
			return err
		})
		if err != nil {
			return nil, err
		}
		if validate != nil {
			if err := validate(checked); err != nil {
				return nil, err
			}
		}
		var out *link.Webhook
		now := s.db.now()
		err = s.db.update(func(tx *bolt.Tx) error {
			rec, err := findWebhook(tx, wid, whid)
			if err != nil {
				return err
			}
			w, err := apply(rec)
			if err != nil {
				return err
			}
			if !sameWebhookSettings(w, checked) {
				return nil // changed since validate: again
			}
			old := *rec
			rec.set(w)
			if rec.Enabled && !old.Enabled {
				rec.Failures = 0
			}
			rec.UpdatedAt = now
			if err := setSubscriptions(tx, whid, &old, rec); err != nil {
				return err
			}
			if err := putJSON(tx.Bucket(bucketWebhooks), itob(whid), rec); err != nil {
				return err
			}
			out = rec.webhook(s.db.ids, whid)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
	return nil, link.Errorf(link.ECONFLICT, "webhook %q kept changing during the update: try again", id)
}

// sameWebhookSettings reports whether a and b agree on what an update
// sets.
func sameWebhookSettings(a, b *link.Webhook) bool {
	return a.URL == b.URL && slices.Equal(a.Events, b.Events) && a.Enabled == b.Enabled &&
		a.Description == b.Description && a.DisabledReason == b.DisabledReason
}

// RollSecret makes newSecret the signing secret; the current one becomes
// the previous secret and keeps signing until graceEnds. A roll within the
// grace period of the last one drops the oldest secret. EINVALID for an
// empty secret, ENOTFOUND.
func (s *WebhookService) RollSecret(ctx context.Context, workspaceID, id, newSecret string, graceEnds time.Time) (*link.Webhook, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	whid, ok2 := s.db.ids.parseID(prefixWebhook, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	}
	if newSecret == "" {
		return nil, link.Errorf(link.EINVALID, "a webhook needs a signing secret")
	}
	now := s.db.now()
	var out *link.Webhook
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findWebhook(tx, wid, whid)
		if err != nil {
			return err
		}
		ends := graceEnds.UTC()
		rec.PreviousSecret, rec.PreviousSecretExpiresAt, rec.Secret = rec.Secret, &ends, newSecret
		rec.UpdatedAt = now
		if err := putJSON(tx.Bucket(bucketWebhooks), itob(whid), rec); err != nil {
			return err
		}
		out = rec.webhook(s.db.ids, whid)
		return nil
	})
	return out, err
}

// DeleteWebhook deletes a webhook, its queue and its delivery log. The
// webhook disappears at once, in one transaction; its deliveries follow in
// transactions of at most 10,000 deletions, so a long log does not make
// one huge transaction (a deletion cut short by a crash is finished by
// PruneDeliveries). A delivery in flight meanwhile fails to record its
// attempt with ENOTFOUND. ENOTFOUND.
func (s *WebhookService) DeleteWebhook(ctx context.Context, workspaceID, id string) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	whid, ok2 := s.db.ids.parseID(prefixWebhook, id)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	}
	if err := s.markDeleting(wid, whid); err != nil {
		return err
	}
	return s.purgeWebhook(whid)
}

// markDeleting takes a webhook out of every index and marks it Deleting,
// the first step of its deletion.
func (s *WebhookService) markDeleting(wid, whid uint64) error {
	return s.db.update(func(tx *bolt.Tx) error {
		rec, err := findWebhook(tx, wid, whid)
		if err != nil {
			return err
		}
		if err := setSubscriptions(tx, whid, rec, nil); err != nil {
			return err
		}
		if err := tx.Bucket(bucketWebhooksWorkspace).Delete(concat(itob(wid), itob(whid))); err != nil {
			return fmt.Errorf("unindex webhook: %w", err)
		}
		rec.Deleting = true
		return putJSON(tx.Bucket(bucketWebhooks), itob(whid), rec)
	})
}

// purgeWebhook deletes the queue and deliveries of a webhook marked
// Deleting, in chunks, then its record.
func (s *WebhookService) purgeWebhook(whid uint64) error {
	prefix := itob(whid)
	for {
		done := false
		err := s.db.update(func(tx *bolt.Tx) error {
			n := 0
			for _, name := range [][]byte{bucketDeliveriesQueue, bucketDeliveriesWebhook} {
				b := tx.Bucket(name)
				var keys [][]byte
				c := b.Cursor()
				for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && n+len(keys) < pruneChunk; k, _ = c.Next() {
					keys = append(keys, cloneBytes(k))
				}
				if bytes.Equal(name, bucketDeliveriesQueue) {
					queuedDeliveries(tx, -int64(len(keys)))
				}
				for _, k := range keys {
					if err := b.Delete(k); err != nil {
						return fmt.Errorf("delete %s: %w", name, err)
					}
					if bytes.Equal(name, bucketDeliveriesWebhook) {
						if err := tx.Bucket(bucketDeliveries).Delete(k[8:]); err != nil {
							return fmt.Errorf("delete delivery: %w", err)
						}
					}
				}
				n += len(keys)
			}
			if n == pruneChunk {
				return nil
			}
			done = true
			return tx.Bucket(bucketWebhooks).Delete(prefix)
		})
		if err != nil {
			return fmt.Errorf("delete webhook deliveries: %w", err)
		}
		if done {
			return nil
		}
	}
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

// RecordAttempt writes the outcome of a try of the pending delivery d and
// sets d's fields to what was stored. A success (a.Error == "") marks the
// delivery succeeded and takes it out of the queue. A failure counts
// against the webhook's consecutive failures and: with disable != "",
// marks the delivery failed and disables the webhook with disable as its
// reason (the rest of its queue stays pending, for when it is enabled
// again); else with next, keeps it at the head of the queue, due at next;
// else marks it failed and dequeues it. Attempts recorded at the same time
// by several workers share one commit (see attemptWriter). ENOTFOUND when
// the webhook or the delivery was deleted meanwhile, ECONFLICT when the
// delivery is not pending.
func (s *WebhookService) RecordAttempt(ctx context.Context, d *link.Delivery, a link.Attempt, next *time.Time, disable string) error {
	return s.RecordAttempts(ctx, []link.AttemptRecord{{Delivery: d, Attempt: a, Next: next, Disable: disable}})
}

// RecordAttempts writes several attempts, in their order, in one
// transaction (shared with the attempts other workers record at the same
// time), each as RecordAttempt does, and sets each record's Delivery to
// what was stored. A dispatcher records a run of one webhook's deliveries
// with it: one commit for the run. A record that cannot be written
// (ENOTFOUND, ECONFLICT, or a malformed id) is skipped, leaving its
// Delivery as it was, and the first such error is returned; the others
// are written. Any other error writes nothing.
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

// recordAttempt is RecordAttempt in tx. Its domain errors come before any
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

// PruneDeliveries deletes the finished (succeeded or failed) deliveries
// last updated before before, and the events created before it (a pending
// delivery holds its own copy of its event's body, so it outlives its
// event). Both buckets are read oldest first and the scan stops at the
// first record created at or after before, so each run reads what it
// deletes and the pending deliveries older than before. It works in
// transactions of at most 10,000 records, and first finishes any webhook
// deletion a crash cut short. It returns the number of deliveries deleted.
func (s *WebhookService) PruneDeliveries(ctx context.Context, before time.Time) (int, error) {
	var deleting []uint64
	err := s.db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWebhooks).ForEach(func(k, v []byte) error {
			var rec webhookRecord
			if err := decodeJSON(v, &rec); err != nil {
				return fmt.Errorf("webhook %x: %w", k, err)
			}
			if rec.Deleting {
				deleting = append(deleting, btoi(k))
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	for _, whid := range deleting {
		if err := s.purgeWebhook(whid); err != nil {
			return 0, err
		}
	}

	deleted := 0
	var rec deliveryRecord
	err = s.pruneOldest(ctx, bucketDeliveries, func(tx *bolt.Tx, k, v []byte) (bool, bool, error) {
		if err := rec.decode(v); err != nil {
			return false, false, fmt.Errorf("delivery %x: %w", k, err)
		}
		if !rec.CreatedAt.Before(before) {
			return false, true, nil
		}
		if rec.Status == string(link.DeliveryPending) || !rec.UpdatedAt.Before(before) {
			return false, false, nil
		}
		if err := tx.Bucket(bucketDeliveriesWebhook).Delete(concat(itob(rec.Webhook), k)); err != nil {
			return false, false, fmt.Errorf("unindex delivery: %w", err)
		}
		deleted++
		return true, false, nil
	})
	if err != nil {
		return deleted, fmt.Errorf("prune deliveries: %w", err)
	}
	err = s.pruneOldest(ctx, bucketEvents, func(tx *bolt.Tx, k, v []byte) (bool, bool, error) {
		var rec struct {
			CreatedAt time.Time `json:"created_at"`
		}
		if err := decodeJSON(v, &rec); err != nil {
			return false, false, fmt.Errorf("event %x: %w", k, err)
		}
		if !rec.CreatedAt.Before(before) {
			return false, true, nil
		}
		return true, false, nil
	})
	if err != nil {
		return deleted, fmt.Errorf("prune events: %w", err)
	}
	return deleted, nil
}

// pruneOldest walks a bucket from its first key in transactions of at most
// pruneChunk records, deleting the records for which fn says del, until fn
// says stop or the bucket ends.
func (s *WebhookService) pruneOldest(ctx context.Context, name []byte, fn func(tx *bolt.Tx, k, v []byte) (del, stop bool, err error)) error {
	var pos []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		done := false
		err := s.db.update(func(tx *bolt.Tx) error {
			b := tx.Bucket(name)
			c := b.Cursor()
			var dels [][]byte
			var k, v []byte
			if pos == nil {
				k, v = c.First()
			} else {
				k, v = c.Seek(pos)
			}
			for n := 0; ; n++ {
				if k == nil {
					done = true
					break
				}
				if n == pruneChunk {
					break
				}
				del, stop, err := fn(tx, k, v)
				if err != nil {
					return err
				}
				if stop {
					done = true
					break
				}
				if del {
					dels = append(dels, cloneBytes(k))
				}
				k, v = c.Next()
			}
			pos = cloneBytes(k)
			for _, k := range dels {
				if err := b.Delete(k); err != nil {
					return fmt.Errorf("delete %s %x: %w", name, k, err)
				}
			}
			return nil
		})
		if err != nil || done {
			return err
		}
	}
}
