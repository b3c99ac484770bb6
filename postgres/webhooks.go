package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// WebhookService keeps webhooks and the outbox of their deliveries in
// PostgreSQL.
//
// A delivery is a row of deliveries holding the body fixed when its event
// was written; while it is pending it has a place (queue) in its webhook's
// queue. Deliveries are queued by appendEvent in the transaction of the
// change that caused the event. The outbox's depth is kept in
// outbox_depth, moved by every transaction that queues or dequeues.
//
// Lock order: a change a person makes (create, update, roll, delete)
// locks the workspace's row first, then the webhook's (FOR NO KEY
// UPDATE), as a member's removal does; the dispatcher's RecordAttempts
// locks the webhook's row, then its deliveries'. appendEvent locks the
// subscribed webhooks FOR KEY SHARE, which only a deletion waits for.
type WebhookService struct{ db *DB }

var (
	_ link.WebhookService = (*WebhookService)(nil)
	_ link.OutboxCounter  = (*WebhookService)(nil)
	_ link.WebhookStore   = (*WebhookService)(nil)
)

// webhookColumns are the columns scanWebhook reads, in its order.
const webhookColumns = `id, workspace_id, url, events, enabled, description, secret, previous_secret, previous_secret_expires_at,
	disabled_reason, creator_type, creator_id, failures, created_at, updated_at`

// scanWebhook reads a row of webhookColumns.
func scanWebhook(row pgx.Row) (*link.Webhook, error) {
	var w link.Webhook
	err := row.Scan(&w.ID, &w.WorkspaceID, &w.URL, &w.Events, &w.Enabled, &w.Description, &w.Secret, &w.PreviousSecret,
		&w.PreviousSecretExpiresAt, &w.DisabledReason, &w.CreatedBy.Type, &w.CreatedBy.ID, &w.ConsecutiveFailures,
		&w.CreatedAt, &w.UpdatedAt)
	if err != nil {
		return nil, err
	}
	if w.Events == nil {
		w.Events = []string{}
	}
	if w.PreviousSecretExpiresAt != nil {
		at := w.PreviousSecretExpiresAt.UTC()
		w.PreviousSecretExpiresAt = &at
	}
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	return &w, nil
}

// findWebhook returns a webhook of workspace wsID (any workspace when
// wsID is ""), read in q, with lock appended to the query ("" for none).
// ENOTFOUND, also for a webhook being deleted.
func findWebhook(ctx context.Context, q pgx.Tx, wsID, id, lock string) (*link.Webhook, error) {
	sql := `SELECT ` + webhookColumns + ` FROM webhooks WHERE id = $1 AND ($2 = '' OR workspace_id = $2) AND NOT deleting ` + lock
	w, err := scanWebhook(q.QueryRow(ctx, sql, id, wsID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("webhook %s: %w", id, err)
	}
	return w, nil
}

// webhookIDs reports whether the workspace and webhook IDs are wire IDs
// the store could have given out.
func (db *DB) webhookIDs(wsID, id string) bool {
	return db.validID(link.PrefixWorkspace, wsID) && db.validID(link.PrefixWebhook, id)
}

// CreateWebhook stores a validated webhook with its secret and sets its ID
// (and CreatedAt, UpdatedAt when zero). EINVALID without a secret,
// ENOTFOUND for an unknown workspace, EFORBIDDEN when the actor of ctx
// can no longer act in the workspace.
func (s *WebhookService) CreateWebhook(ctx context.Context, w *link.Webhook) error {
	if !s.db.validID(link.PrefixWorkspace, w.WorkspaceID) {
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
	events := slices.Clone(w.Events)
	if events == nil {
		events = []string{}
	}
	var id string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findWorkspace(ctx, tx, w.WorkspaceID, true); err != nil {
			return err
		}
		if err := s.db.checkActor(ctx, tx, w.WorkspaceID, s.db.now()); err != nil {
			return err
		}
		var seq int64
		var err error
		if id, seq, err = s.db.newID(ctx, tx, link.PrefixWebhook); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO webhooks (id, seq, workspace_id, url, events, enabled, description, secret,
				disabled_reason, creator_type, creator_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			id, seq, w.WorkspaceID, w.URL, events, w.Enabled, w.Description, w.Secret, w.DisabledReason,
			w.CreatedBy.Type, w.CreatedBy.ID, w.CreatedAt.UTC(), w.UpdatedAt.UTC()); err != nil {
			return fmt.Errorf("insert webhook: %w", err)
		}
		return s.db.recordAudit(ctx, tx, w.WorkspaceID, link.AuditWebhookCreated, webhookTarget(id), webhookChanges(nil, w))
	})
	if err != nil {
		return err
	}
	w.ID = id
	w.ConsecutiveFailures = 0
	return nil
}

// FindWebhookByID returns a webhook of the workspace, with its secrets.
// ENOTFOUND.
func (s *WebhookService) FindWebhookByID(ctx context.Context, workspaceID, id string) (*link.Webhook, error) {
	if !s.db.webhookIDs(workspaceID, id) {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	}
	var out *link.Webhook
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = findWebhook(ctx, tx, workspaceID, id, "")
		return err
	})
	return out, err
}

// FindWebhooks returns the workspace's webhooks, newest first. ENOTFOUND
// for a malformed workspace ID.
func (s *WebhookService) FindWebhooks(ctx context.Context, workspaceID string) ([]*link.Webhook, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	rows, err := s.db.pool.Query(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE workspace_id = $1 AND NOT deleting ORDER BY seq DESC`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Webhook, error) { return scanWebhook(r) })
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	if out == nil {
		out = []*link.Webhook{}
	}
	return out, nil
}

// UpdateWebhook applies an update, checks the result with its Validate
// method and with validate (whose error is returned unchanged), and stores
// it. validate runs outside the write transaction, so it may take time
// (resolve the URL's host); when the webhook changed meanwhile (the
// dispatcher disabled it, say), the update is applied again to the new
// version and validated again. Enabling a disabled webhook clears its
// reason and its count of consecutive failures, and its queue resumes;
// the pending deliveries of a webhook that is disabled stay queued.
// ENOTFOUND, EINVALID, EFORBIDDEN (see CreateWebhook), ECONFLICT when the
// webhook keeps changing.
func (s *WebhookService) UpdateWebhook(ctx context.Context, workspaceID, id string, upd link.WebhookUpdate, validate func(*link.Webhook) error) (*link.Webhook, error) {
	if !s.db.webhookIDs(workspaceID, id) {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	}
	apply := func(w *link.Webhook) (*link.Webhook, error) {
		c := *w
		c.Events = slices.Clone(w.Events)
		upd.Apply(&c)
		return &c, c.Validate()
	}
	for range 5 {
		var checked *link.Webhook
		err := s.db.view(ctx, func(tx pgx.Tx) error {
			w, err := findWebhook(ctx, tx, workspaceID, id, "")
			if err != nil {
				return err
			}
			checked, err = apply(w)
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
		now := s.db.now().UTC()
		err = s.db.tx(ctx, func(tx pgx.Tx) error {
			if _, err := findWorkspace(ctx, tx, workspaceID, true); err != nil {
				if link.ErrorCode(err) == link.ENOTFOUND {
					return link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
				}
				return err
			}
			old, err := findWebhook(ctx, tx, workspaceID, id, "FOR NO KEY UPDATE")
			if err != nil {
				return err
			}
			if err := s.db.checkActor(ctx, tx, workspaceID, now); err != nil {
				return err
			}
			w, err := apply(old)
			if err != nil {
				return err
			}
			if !link.SameWebhookSettings(w, checked) {
				return nil // changed since validate: again
			}
			if w.Enabled && !old.Enabled {
				w.ConsecutiveFailures = 0
			}
			w.UpdatedAt = now
			if _, err := tx.Exec(ctx, `UPDATE webhooks SET url = $2, events = $3, enabled = $4, description = $5, disabled_reason = $6,
					failures = $7, updated_at = $8 WHERE id = $1`,
				id, w.URL, w.Events, w.Enabled, w.Description, w.DisabledReason, w.ConsecutiveFailures, now); err != nil {
				return fmt.Errorf("update webhook: %w", err)
			}
			if ch := webhookChanges(old, w); ch != nil {
				action := link.AuditWebhookUpdated
				if old.Enabled && !w.Enabled {
					action = link.AuditWebhookDisabled
				} else if !old.Enabled && w.Enabled {
					action = link.AuditWebhookEnabled
				}
				if err := s.db.recordAudit(ctx, tx, workspaceID, action, webhookTarget(id), ch); err != nil {
					return err
				}
			}
			out = w
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
// empty secret, ENOTFOUND, EFORBIDDEN (see CreateWebhook).
func (s *WebhookService) RollSecret(ctx context.Context, workspaceID, id, newSecret string, graceEnds time.Time) (*link.Webhook, error) {
	if !s.db.webhookIDs(workspaceID, id) {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	}
	if newSecret == "" {
		return nil, link.Errorf(link.EINVALID, "a webhook needs a signing secret")
	}
	now := s.db.now().UTC()
	ends := graceEnds.UTC()
	var out *link.Webhook
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findWorkspace(ctx, tx, workspaceID, true); err != nil {
			if link.ErrorCode(err) == link.ENOTFOUND {
				return link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
			}
			return err
		}
		w, err := findWebhook(ctx, tx, workspaceID, id, "FOR NO KEY UPDATE")
		if err != nil {
			return err
		}
		if err := s.db.checkActor(ctx, tx, workspaceID, now); err != nil {
			return err
		}
		oldEnds := w.PreviousSecretExpiresAt
		w.PreviousSecret, w.PreviousSecretExpiresAt, w.Secret, w.UpdatedAt = w.Secret, &ends, newSecret, now
		if _, err := tx.Exec(ctx, `UPDATE webhooks SET secret = $2, previous_secret = $3, previous_secret_expires_at = $4, updated_at = $5
			WHERE id = $1`, id, w.Secret, w.PreviousSecret, ends, now); err != nil {
			return fmt.Errorf("roll webhook secret: %w", err)
		}
		// The secrets themselves never enter the log: only when the one
		// replaced stops signing.
		if err := s.db.recordAudit(ctx, tx, workspaceID, link.AuditWebhookSecretRoll, webhookTarget(id),
			link.AuditChanges("previous_secret_expires_at", link.AuditTime(oldEnds), link.AuditTime(&ends))); err != nil {
			return err
		}
		out = w
		return nil
	})
	return out, err
}

// deleteChunk is how many deliveries one transaction of a webhook's
// deletion or of PruneDeliveries deletes.
const deleteChunk = 10000

// DeleteWebhook deletes a webhook, its queue and its delivery log. The
// webhook disappears at once, in one transaction (marked deleting, with
// its audit entry); its deliveries follow in transactions of at most
// 10,000, so a long log does not make one huge transaction (a deletion
// cut short is finished by PruneDeliveries). A delivery in flight
// meanwhile fails to record its attempt with ENOTFOUND. ENOTFOUND.
func (s *WebhookService) DeleteWebhook(ctx context.Context, workspaceID, id string) error {
	if !s.db.webhookIDs(workspaceID, id) {
		return link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	}
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		w, err := findWebhook(ctx, tx, workspaceID, id, "FOR NO KEY UPDATE")
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE webhooks SET deleting = true WHERE id = $1`, id); err != nil {
			return fmt.Errorf("delete webhook: %w", err)
		}
		return s.db.recordAudit(ctx, tx, workspaceID, link.AuditWebhookDeleted, webhookTarget(id), webhookChanges(w, nil))
	})
	if err != nil {
		return err
	}
	return s.purgeWebhook(ctx, id)
}

// purgeWebhook deletes the deliveries of a webhook marked deleting, in
// chunks, then the webhook. Each chunk's transaction first locks the
// webhook's row against appendEvent (which takes it FOR KEY SHARE): a
// change that read the webhook as subscribed before the mark has
// committed its deliveries by then, and any later one sees the mark, so
// the last chunk leaves no delivery behind.
func (s *WebhookService) purgeWebhook(ctx context.Context, id string) error {
	ctx = context.WithoutCancel(ctx) // a deletion begun is finished
	for {
		done := false
		err := s.db.tx(ctx, func(tx pgx.Tx) error {
			err := tx.QueryRow(ctx, `SELECT 1 FROM webhooks WHERE id = $1 AND deleting FOR UPDATE`, id).Scan(new(int))
			if errors.Is(err, pgx.ErrNoRows) {
				done = true
				return nil
			} else if err != nil {
				return err
			}
			var n, pending int64
			if err := tx.QueryRow(ctx, `WITH d AS (
					DELETE FROM deliveries WHERE seq IN (SELECT seq FROM deliveries WHERE webhook_id = $1 ORDER BY seq LIMIT $2)
					RETURNING queue)
				SELECT count(*), count(queue) FROM d`, id, deleteChunk).Scan(&n, &pending); err != nil {
				return err
			}
			if err := queued(ctx, tx, -pending); err != nil {
				return err
			}
			if n == deleteChunk {
				return nil
			}
			done = true
			_, err = tx.Exec(ctx, `DELETE FROM webhooks WHERE id = $1`, id)
			return err
		})
		if err != nil {
			return fmt.Errorf("delete webhook deliveries: %w", err)
		}
		if done {
			return nil
		}
	}
}

// webhookTarget is a webhook as the target of an audit entry.
func webhookTarget(id string) link.AuditTarget {
	return link.AuditTarget{Type: "webhook", ID: id}
}

// webhookChanges returns the audited fields that differ between a and b
// (nil for none). The URL is named by its scheme and host only: a
// receiver's URL often carries its own secret (Slack's, Discord's), and
// secrets never enter the log.
func webhookChanges(a, b *link.Webhook) map[string][2]*string {
	val := func(w *link.Webhook, v func(w *link.Webhook) any) any {
		if w == nil || w.URL == "" {
			return nil
		}
		return v(w)
	}
	field := func(name string, v func(w *link.Webhook) any) []any {
		return []any{name, val(a, v), val(b, v)}
	}
	var args []any
	args = append(args, field("url_host", func(w *link.Webhook) any { return link.AuditURLHost(w.URL) })...)
	args = append(args, field("events", func(w *link.Webhook) any { return w.Events })...)
	args = append(args, field("enabled", func(w *link.Webhook) any { return w.Enabled })...)
	args = append(args, field("description", func(w *link.Webhook) any { return w.Description })...)
	args = append(args, field("disabled_reason", func(w *link.Webhook) any { return w.DisabledReason })...)
	return link.AuditChanges(args...)
}
