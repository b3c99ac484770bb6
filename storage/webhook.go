package storage

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// Wire ID prefixes of webhooks and their deliveries.
const (
	prefixWebhook  = link.PrefixWebhook
	prefixDelivery = link.PrefixDelivery
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
	// CreatorType and CreatorID name the user or key that made the
	// webhook, as keyRecord's do. Records written before they existed
	// have neither and read as made by nobody known.
	CreatorType string `json:"creator_type,omitempty"`
	CreatorID   string `json:"creator_id,omitempty"`
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
		CreatedBy: link.KeyCreator{Type: r.CreatorType, ID: r.CreatorID},
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
// person's choice (enabled: false) stops the queue from growing, and the
// removal of the member who made it (link.WebhookCreatorRemoved), whose
// receiver must get nothing more.
func (r *webhookRecord) subscribed() bool {
	return !r.Deleting && (r.Enabled || r.DisabledReason != "" && r.DisabledReason != link.WebhookCreatorRemoved)
}

// subscriptionPrefix is the start of the webhooks.event keys of a
// workspace's webhooks subscribed to typ.
func subscriptionPrefix(wid uint64, typ string) []byte {
	return concat(itob(wid), []byte(typ), []byte{0})
}

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
	rec := &webhookRecord{Workspace: wid, Secret: w.Secret, CreatedAt: w.CreatedAt.UTC(), UpdatedAt: w.UpdatedAt.UTC(),
		CreatorType: w.CreatedBy.Type, CreatorID: w.CreatedBy.ID}
	rec.set(w)
	var id uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		if err := checkActor(ctx, tx, s.db.ids, wid, s.db.now()); err != nil {
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
		if err := setSubscriptions(tx, id, nil, rec); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditWebhookCreated, webhookTarget(s.db.ids, id),
			webhookChanges(&webhookRecord{}, rec))
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
			if err := checkActor(ctx, tx, s.db.ids, wid, now); err != nil {
				return err
			}
			w, err := apply(rec)
			if err != nil {
				return err
			}
			if !link.SameWebhookSettings(w, checked) {
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
			if ch := webhookChanges(&old, rec); ch != nil {
				action := link.AuditWebhookUpdated
				if old.Enabled && !rec.Enabled {
					action = link.AuditWebhookDisabled
				} else if !old.Enabled && rec.Enabled {
					action = link.AuditWebhookEnabled
				}
				if err := s.db.recordAudit(ctx, tx, wid, action, webhookTarget(s.db.ids, whid), ch); err != nil {
					return err
				}
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
		if err := checkActor(ctx, tx, s.db.ids, wid, now); err != nil {
			return err
		}
		ends := graceEnds.UTC()
		oldEnds := rec.PreviousSecretExpiresAt
		rec.PreviousSecret, rec.PreviousSecretExpiresAt, rec.Secret = rec.Secret, &ends, newSecret
		rec.UpdatedAt = now
		if err := putJSON(tx.Bucket(bucketWebhooks), itob(whid), rec); err != nil {
			return err
		}
		// The secrets themselves never enter the log: only when the one
		// replaced stops signing.
		if err := s.db.recordAudit(ctx, tx, wid, link.AuditWebhookSecretRoll, webhookTarget(s.db.ids, whid),
			link.AuditChanges("previous_secret_expires_at", link.AuditTime(oldEnds), link.AuditTime(&ends))); err != nil {
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
	if err := s.markDeleting(ctx, wid, whid); err != nil {
		return err
	}
	return s.purgeWebhook(whid)
}

// markDeleting takes a webhook out of every index and marks it Deleting,
// the first step of its deletion, which the audit log records.
func (s *WebhookService) markDeleting(ctx context.Context, wid, whid uint64) error {
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
		if err := putJSON(tx.Bucket(bucketWebhooks), itob(whid), rec); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditWebhookDeleted, webhookTarget(s.db.ids, whid),
			webhookChanges(rec, &webhookRecord{}))
	})
}

// webhookTarget is a webhook as the target of an audit entry.
func webhookTarget(ids *idCodec, whid uint64) link.AuditTarget {
	return link.AuditTarget{Type: "webhook", ID: ids.formatID(prefixWebhook, whid)}
}

// webhookChanges returns the audited fields that differ between a and b
// (a zero record for none). The URL is named by its scheme and host only:
// a receiver's URL often carries its own secret (Slack's, Discord's), and
// secrets never enter the log.
func webhookChanges(a, b *webhookRecord) map[string][2]*string {
	val := func(r *webhookRecord, v any) any {
		if r.URL == "" {
			return nil
		}
		return v
	}
	return link.AuditChanges(
		"url_host", val(a, link.AuditURLHost(a.URL)), val(b, link.AuditURLHost(b.URL)),
		"events", val(a, a.Events), val(b, b.Events),
		"enabled", val(a, a.Enabled), val(b, b.Enabled),
		"description", val(a, a.Description), val(b, b.Description),
		"disabled_reason", val(a, a.DisabledReason), val(b, b.DisabledReason))
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
