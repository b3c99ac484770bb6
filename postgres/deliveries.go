package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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

// deliveryColumns are the columns scanDelivery reads, in its order;
// dColumns the same of a query that names the table d.
const (
	deliveryColumns = `id, webhook_id, workspace_id, event_id, event_type, payload, status, attempts, response_code,
	duration_ns, last_error, next_attempt_at, queued_at, created_at, updated_at`
	dColumns = `d.id, d.webhook_id, d.workspace_id, d.event_id, d.event_type, d.payload, d.status, d.attempts, d.response_code,
	d.duration_ns, d.last_error, d.next_attempt_at, d.queued_at, d.created_at, d.updated_at`
)

// scanDelivery reads a row of deliveryColumns.
func scanDelivery(row pgx.Row) (*link.Delivery, error) {
	var d link.Delivery
	var dur int64
	err := row.Scan(&d.ID, &d.WebhookID, &d.WorkspaceID, &d.EventID, &d.EventType, &d.Payload, &d.Status, &d.Attempts,
		&d.ResponseCode, &dur, &d.LastError, &d.NextAttemptAt, &d.QueuedAt, &d.CreatedAt, &d.UpdatedAt)
	if err != nil {
		return nil, err
	}
	d.Duration = time.Duration(dur)
	if d.NextAttemptAt != nil {
		at := d.NextAttemptAt.UTC()
		d.NextAttemptAt = &at
	}
	d.QueuedAt, d.CreatedAt, d.UpdatedAt = d.QueuedAt.UTC(), d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return &d, nil
}

func collectDeliveries(rows pgx.Rows, err error) ([]*link.Delivery, error) {
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Delivery, error) { return scanDelivery(r) })
	if out == nil {
		out = []*link.Delivery{}
	}
	return out, err
}

// FindDeliveries returns a webhook's deliveries, newest (by creation)
// first, at most limit (0 means 50, at most 1000). ENOTFOUND.
func (s *WebhookService) FindDeliveries(ctx context.Context, workspaceID, webhookID string, limit int) ([]*link.Delivery, error) {
	if !s.db.webhookIDs(workspaceID, webhookID) {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", webhookID)
	}
	if limit <= 0 {
		limit = defaultDeliveries
	}
	limit = min(limit, maxDeliveries)
	var out []*link.Delivery
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		if _, err := findWebhook(ctx, tx, workspaceID, webhookID, ""); err != nil {
			return err
		}
		var err error
		out, err = collectDeliveries(tx.Query(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE webhook_id = $1
			ORDER BY seq DESC LIMIT $2`, webhookID, limit))
		if err != nil {
			return fmt.Errorf("deliveries: %w", err)
		}
		return nil
	})
	return out, err
}

// Ping queues a ping delivery at the end of the webhook's queue, whatever
// its events, with a body encoded by the store's event encoder whose id
// is the delivery's EventID. A ping takes an event ID but is not kept
// with the events: it goes to one webhook and is no change of the
// workspace. ECONFLICT when the webhook is disabled, ENOTFOUND.
func (s *WebhookService) Ping(ctx context.Context, workspaceID, id string) (*link.Delivery, error) {
	if !s.db.webhookIDs(workspaceID, id) {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", id)
	}
	now := s.db.now().UTC()
	var out *link.Delivery
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		w, err := findWebhook(ctx, tx, workspaceID, id, "FOR KEY SHARE")
		if err != nil {
			return err
		}
		if !w.Enabled {
			return link.Errorf(link.ECONFLICT, "webhook %q is disabled: enable the webhook first", id)
		}
		if s.db.events == nil {
			return errors.New("postgres: no event encoder for pings")
		}
		data, err := s.db.events.PingData()
		if err != nil {
			return err
		}
		if !json.Valid(data) {
			return errors.New("postgres: ping data is not JSON")
		}
		ev := &link.Event{Type: link.EventPing, WorkspaceID: workspaceID, CreatedAt: now, Data: data}
		ids, err := s.db.writeEvent(ctx, tx, ev, false, []string{id})
		if err != nil {
			return err
		}
		if err := flushOutbox(ctx, tx); err != nil {
			return err
		}
		out, err = scanDelivery(tx.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = $1`, ids[0]))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RetryDelivery queues a succeeded or failed delivery again: at the end of
// its webhook's queue, due now, with the same id (so receivers that saw it
// de-duplicate it) and the same body. Its attempts count from zero again,
// and its 24 hours of retries from now (QueuedAt); the log of its last
// attempt stays until the next. A disabled webhook keeps it queued until
// it is enabled. ECONFLICT when it is pending already, ENOTFOUND.
func (s *WebhookService) RetryDelivery(ctx context.Context, workspaceID, webhookID, deliveryID string) (*link.Delivery, error) {
	if !s.db.webhookIDs(workspaceID, webhookID) {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", webhookID)
	}
	if !s.db.validID(link.PrefixDelivery, deliveryID) {
		return nil, link.Errorf(link.ENOTFOUND, "delivery %q not found", deliveryID)
	}
	now := s.db.now().UTC()
	var out *link.Delivery
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findWebhook(ctx, tx, workspaceID, webhookID, "FOR KEY SHARE"); err != nil {
			return err
		}
		d, err := findDelivery(ctx, tx, webhookID, deliveryID)
		if err != nil {
			return err
		}
		if d.Status == link.DeliveryPending {
			return link.Errorf(link.ECONFLICT, "delivery %q is pending already", deliveryID)
		}
		out, err = scanDelivery(tx.QueryRow(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = $2,
				queued_at = $2, updated_at = $2, queue = nextval('deliveries_queue_seq')
			WHERE id = $1 RETURNING `+deliveryColumns, deliveryID, now))
		if err != nil {
			return fmt.Errorf("retry delivery: %w", err)
		}
		return queued(ctx, tx, 1)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// findDelivery returns a delivery of the webhook, locked for the
// transaction's update. ENOTFOUND.
func findDelivery(ctx context.Context, tx pgx.Tx, webhookID, id string) (*link.Delivery, error) {
	d, err := scanDelivery(tx.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = $1 AND webhook_id = $2 FOR UPDATE`, id, webhookID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "delivery %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("delivery %s: %w", id, err)
	}
	return d, nil
}

// claimDueSQL claims the webhooks whose queue has a due head, walking
// the index deliveries_queue from webhook to webhook (a recursive skip
// scan) and probing each webhook's head ($1 now, $2
// the limit or NULL, $3 this process's holder, $4 the claim's end): those
// no instance claims, or whose claim ended by now, or this process's own.
// The insert decides between two instances claiming at once: the second
// waits for the first's commit and finds the claim taken.
const claimDueSQL = `WITH RECURSIVE q (webhook_id) AS (
			(SELECT webhook_id FROM deliveries WHERE queue IS NOT NULL ORDER BY webhook_id LIMIT 1)
			UNION ALL
			SELECT (SELECT n.webhook_id FROM deliveries n WHERE n.queue IS NOT NULL AND n.webhook_id > q.webhook_id
				ORDER BY n.webhook_id LIMIT 1)
			FROM q WHERE q.webhook_id IS NOT NULL),
		due AS (SELECT q.webhook_id, w.seq FROM q
			JOIN webhooks w ON w.id = q.webhook_id AND w.enabled AND NOT w.deleting
			LEFT JOIN webhook_claims c ON c.webhook_id = q.webhook_id
			CROSS JOIN LATERAL (SELECT h.next_attempt_at FROM deliveries h WHERE h.webhook_id = q.webhook_id AND h.queue IS NOT NULL
				ORDER BY h.queue LIMIT 1) d
			WHERE (d.next_attempt_at IS NULL OR d.next_attempt_at <= $1)
				AND (c.webhook_id IS NULL OR c.until <= $1 OR c.holder = $3)
			ORDER BY w.seq LIMIT $2)
		INSERT INTO webhook_claims AS c (webhook_id, holder, until) SELECT webhook_id, $3, $4 FROM due ORDER BY seq
		ON CONFLICT (webhook_id) DO UPDATE SET holder = excluded.holder, until = excluded.until
			WHERE c.until <= $1 OR c.holder = excluded.holder
		RETURNING webhook_id`

// claimedHeadsSQL reads the due heads of the claimed webhooks $2 ($1 now),
// in the order of the webhooks' creation.
const claimedHeadsSQL = `SELECT ` + dColumns + ` FROM webhooks w
		CROSS JOIN LATERAL (SELECT * FROM deliveries h WHERE h.webhook_id = w.id AND h.queue IS NOT NULL
			ORDER BY h.queue LIMIT 1) d
		WHERE w.id = ANY($2) AND w.enabled AND NOT w.deleting AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= $1)
		ORDER BY w.seq`

// DueDeliveries returns, for each enabled webhook with pending deliveries,
// the head of its queue when it is due at now (NextAttemptAt ≤ now), at
// most limit in all (0 means no limit), in the order of the webhooks'
// creation. A head waiting for a retry holds back the deliveries behind
// it, so each webhook's deliveries go out in order. It walks the queue
// index from webhook to webhook (a skip scan): one probe for each webhook
// with a queue, however long the queues.
//
// It claims the webhooks it returns for this process until now plus
// DefaultClaimFor (see webhook_claims): two instances reading at once get
// different webhooks, and a webhook another live instance is sending is
// left out. The dispatcher gives a claim up with ReleaseDelivery once the
// run's attempts are recorded; the claim of an instance that died ends
// by itself, and the next instance sends the head again (at least once,
// with its delivery id and event id). The heads are read after the claim
// is committed, so they are never those another instance has just
// recorded.
func (s *WebhookService) DueDeliveries(ctx context.Context, now time.Time, limit int) ([]*link.Delivery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var lim any // NULL: LIMIT ALL
	if limit > 0 {
		lim = limit
	}
	if err := s.takeOverClaims(ctx); err != nil {
		return nil, err
	}
	me := s.db.Holder()
	rows, err := s.db.pool.Query(ctx, claimDueSQL, now, lim, me, now.Add(DefaultClaimFor).UTC())
	if err != nil {
		return nil, fmt.Errorf("claim due deliveries: %w", err)
	}
	claimed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("claim due deliveries: %w", err)
	}
	if len(claimed) == 0 {
		return []*link.Delivery{}, nil
	}
	out, err := collectDeliveries(s.db.pool.Query(ctx, claimedHeadsSQL, now, claimed))
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	if len(out) < len(claimed) {
		// Sent and recorded by another instance between the claims, or
		// disabled: nothing to send, the claim goes.
		heads := map[string]bool{}
		for _, d := range out {
			heads[d.WebhookID] = true
		}
		for _, id := range claimed {
			if !heads[id] {
				if err := s.ReleaseDelivery(ctx, id); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// NextDeliveries returns the first pending deliveries of a webhook's
// queue, in order, at most n (at least 1), up to the first that is not due
// at now (NextAttemptAt > now). It returns none when the webhook is
// disabled or its head waits for a retry. A dispatcher sends them one
// after another and records them together with RecordAttempts.
// ENOTFOUND.
func (s *WebhookService) NextDeliveries(ctx context.Context, webhookID string, now time.Time, n int) ([]*link.Delivery, error) {
	if !s.db.validID(link.PrefixWebhook, webhookID) {
		return nil, link.Errorf(link.ENOTFOUND, "webhook %q not found", webhookID)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n = max(n, 1)
	out := []*link.Delivery{}
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		w, err := findWebhook(ctx, tx, "", webhookID, "")
		if err != nil {
			return err
		}
		if !w.Enabled {
			return nil
		}
		ds, err := collectDeliveries(tx.Query(ctx, `SELECT `+deliveryColumns+` FROM deliveries
			WHERE webhook_id = $1 AND queue IS NOT NULL ORDER BY queue LIMIT $2`, webhookID, n))
		if err != nil {
			return fmt.Errorf("next deliveries: %w", err)
		}
		for _, d := range ds {
			if d.NextAttemptAt != nil && d.NextAttemptAt.After(now) {
				break
			}
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RecordAttempts writes the outcome of tries of pending deliveries and
// their next steps, in their order, in one transaction, and sets each
// record's Delivery to what was stored. A dispatcher records a run of one
// webhook's deliveries with it: one commit for the run.
//
// A success (Attempt.Error == "") marks the delivery succeeded and takes
// it out of the queue. A failure counts against the webhook's consecutive
// failures and: with Disable != "", disables the webhook with Disable as
// its reason and keeps the delivery pending at the head of its queue (it
// goes first when the webhook is enabled again); else with Next, keeps it
// at the head of the queue, due at Next; else marks it failed and
// dequeues it.
//
// A record that cannot be written (ENOTFOUND when the webhook or the
// delivery was deleted meanwhile or the id is malformed, ECONFLICT when
// the delivery is not pending: another instance recorded it first) is
// skipped, leaving its Delivery as it was, and the first such error is
// returned; the others are written. Any other error writes nothing.
func (s *WebhookService) RecordAttempts(ctx context.Context, rs []link.AttemptRecord) error {
	if len(rs) == 0 {
		return nil
	}
	var first error
	outs := make([]*link.Delivery, len(rs))
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		first = nil
		clear(outs)
		for i, r := range rs {
			out, err := s.recordAttempt(ctx, tx, r)
			var lerr *link.Error
			if errors.As(err, &lerr) {
				if first == nil {
					first = err // checked before anything was written
				}
				continue
			}
			if err != nil {
				return err
			}
			outs[i] = out
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, out := range outs {
		if out != nil {
			*rs[i].Delivery = *out
		}
	}
	return first
}

// recordAttempt writes one attempt of RecordAttempts in tx. Its domain
// errors come before any write.
func (s *WebhookService) recordAttempt(ctx context.Context, tx pgx.Tx, r link.AttemptRecord) (*link.Delivery, error) {
	d := r.Delivery
	if !s.db.validID(link.PrefixWebhook, d.WebhookID) || !s.db.validID(link.PrefixDelivery, d.ID) {
		return nil, link.Errorf(link.ENOTFOUND, "delivery %q not found", d.ID)
	}
	wh, err := findWebhook(ctx, tx, "", d.WebhookID, "FOR NO KEY UPDATE")
	if err != nil {
		return nil, err
	}
	rec, err := findDelivery(ctx, tx, d.WebhookID, d.ID)
	if err != nil {
		return nil, err
	}
	if rec.Status != link.DeliveryPending {
		return nil, link.Errorf(link.ECONFLICT, "delivery %q is %s, not pending", d.ID, rec.Status)
	}
	a := r.Attempt
	if a.At.IsZero() {
		a.At = s.db.now()
	}
	a.At = a.At.UTC()
	rec.Attempts++
	rec.ResponseCode, rec.Duration, rec.UpdatedAt = a.ResponseCode, a.Duration, a.At
	rec.LastError = truncateUTF8(a.Error, maxLastError)
	old := *wh
	switch {
	case a.Error == "":
		rec.Status, rec.NextAttemptAt = link.DeliverySucceeded, nil
		wh.ConsecutiveFailures = 0
	case r.Disable != "":
		// The delivery stays at the head of the queue: enabling the
		// webhook again sends it first, then what queued meanwhile.
		at := a.At
		rec.NextAttemptAt = &at
		wh.ConsecutiveFailures++
		wh.Enabled, wh.DisabledReason, wh.UpdatedAt = false, r.Disable, a.At
	case r.Next != nil:
		n := r.Next.UTC()
		rec.NextAttemptAt = &n
		wh.ConsecutiveFailures++
	default:
		rec.Status, rec.NextAttemptAt = link.DeliveryFailed, nil
		wh.ConsecutiveFailures++
	}
	finished := rec.Status != link.DeliveryPending
	if _, err := tx.Exec(ctx, `UPDATE deliveries SET status = $2, attempts = $3, response_code = $4, duration_ns = $5,
			last_error = $6, next_attempt_at = $7, updated_at = $8, queue = CASE WHEN $9 THEN NULL ELSE queue END
		WHERE id = $1`, rec.ID, rec.Status, rec.Attempts, rec.ResponseCode, int64(rec.Duration), rec.LastError,
		rec.NextAttemptAt, rec.UpdatedAt, finished); err != nil {
		return nil, fmt.Errorf("record attempt: %w", err)
	}
	if finished {
		if err := queued(ctx, tx, -1); err != nil {
			return nil, err
		}
	}
	if wh.ConsecutiveFailures != old.ConsecutiveFailures || wh.Enabled != old.Enabled {
		if _, err := tx.Exec(ctx, `UPDATE webhooks SET failures = $2, enabled = $3, disabled_reason = $4, updated_at = $5 WHERE id = $1`,
			wh.ID, wh.ConsecutiveFailures, wh.Enabled, wh.DisabledReason, wh.UpdatedAt); err != nil {
			return nil, fmt.Errorf("webhook failures: %w", err)
		}
	}
	if wh.Enabled != old.Enabled {
		// linkbolt disabled the webhook: the system's entry.
		if err := s.db.recordAudit(context.Background(), tx, wh.WorkspaceID, link.AuditWebhookDisabled,
			webhookTarget(wh.ID), webhookChanges(&old, wh)); err != nil {
			return nil, err
		}
	}
	return rec, nil
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
// event), in transactions of at most 10,000 rows; it first finishes any
// webhook deletion cut short. It returns the number of deliveries
// deleted.
func (s *WebhookService) PruneDeliveries(ctx context.Context, before time.Time) (int, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT id FROM webhooks WHERE deleting ORDER BY seq`)
	if err != nil {
		return 0, fmt.Errorf("webhooks being deleted: %w", err)
	}
	deleting, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, fmt.Errorf("webhooks being deleted: %w", err)
	}
	for _, id := range deleting {
		if err := s.purgeWebhook(ctx, id); err != nil {
			return 0, err
		}
	}
	deleted, err := s.pruneChunks(ctx, `DELETE FROM deliveries WHERE seq IN (SELECT seq FROM deliveries
		WHERE queue IS NULL AND updated_at < $1 AND created_at < $1 LIMIT $2)`, before)
	if err != nil {
		return deleted, fmt.Errorf("prune deliveries: %w", err)
	}
	if _, err := s.pruneChunks(ctx, `DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE created_at < $1 LIMIT $2)`, before); err != nil {
		return deleted, fmt.Errorf("prune events: %w", err)
	}
	return deleted, nil
}

// pruneChunks runs the deletion sql ($1 before, $2 the chunk) until it
// deletes less than a chunk, and returns the rows deleted.
func (s *WebhookService) pruneChunks(ctx context.Context, sql string, before time.Time) (int, error) {
	deleted := 0
	for {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		var n int64
		err := s.db.tx(ctx, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, sql, before, deleteChunk)
			n = tag.RowsAffected()
			return err
		})
		if err != nil {
			return deleted, err
		}
		deleted += int(n)
		if n < deleteChunk {
			return deleted, nil
		}
	}
}

// PendingDeliveries returns the depth of the webhook outbox: the
// deliveries waiting to be sent or retried, by every instance. It sums
// the slots of outbox_depth, which every change of a queue moves in its
// transaction, so a metrics scrape reads sixteen rows, never the
// deliveries. 0 when the store is closed or the database does not answer
// within a few seconds.
func (s *WebhookService) PendingDeliveries() int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int64
	if err := s.db.pool.QueryRow(ctx, `SELECT coalesce(sum(pending), 0)::bigint FROM outbox_depth`).Scan(&n); err != nil {
		return 0
	}
	return n
}
