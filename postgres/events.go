package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// outboxSlots is the number of rows of outbox_depth (0005_webhooks.sql).
const outboxSlots = 16

// writeTx is a transaction of db.tx: pgx's, with what the transaction
// writes just before it commits.
type writeTx struct {
	pgx.Tx
	// queued is the number of deliveries the transaction queued, less
	// those it took out of their queue: the outbox's depth moves by it.
	queued int64
	// subs holds the subscribers read for each workspace and event type,
	// locked (FOR KEY SHARE) until the transaction ends: a batch of
	// clicks reads them once.
	subs map[subscription][]string
}

type subscription struct{ wsID, eventType string }

// beforeCommit moves the outbox's depth by what the transaction queued,
// in one slot, as its last statement: the transaction holds the slot's
// row lock only for its commit, and takes no lock after it, so waiting
// for the slot cannot close a circle of waits.
func (w *writeTx) beforeCommit(ctx context.Context) error {
	if w.queued == 0 {
		return nil
	}
	if err := moveOutbox(ctx, w.Tx, w.queued); err != nil {
		return err
	}
	w.queued = 0
	return nil
}

// moveOutbox adds n to the outbox's depth in tx.
func moveOutbox(ctx context.Context, tx pgx.Tx, n int64) error {
	if _, err := tx.Exec(ctx, `UPDATE outbox_depth SET pending = pending + $1 WHERE slot = $2`, n, rand.IntN(outboxSlots)); err != nil {
		return fmt.Errorf("outbox depth: %w", err)
	}
	return nil
}

// queued notes that tx queued n deliveries (dequeued, when negative): a
// transaction of db.tx moves the depth before it commits, any other at
// once.
func queued(ctx context.Context, tx pgx.Tx, n int64) error {
	if n == 0 {
		return nil
	}
	if w, ok := tx.(*writeTx); ok {
		w.queued += n
		return nil
	}
	return moveOutbox(ctx, tx, n)
}

// subscribedWebhooks returns the webhooks of workspace wsID to which
// events of eventType are queued, in the order of their creation, and
// locks them against deletion (FOR KEY SHARE, which a webhook's update
// does not wait for) until tx ends: a webhook is subscribed while it is
// enabled, and also while linkbolt disabled it after failed deliveries,
// so that nothing is lost while its receiver is down; a person's choice
// (enabled: false), the removal of the member who made it and its
// deletion end its subscription.
func subscribedWebhooks(ctx context.Context, tx pgx.Tx, wsID, eventType string) ([]string, error) {
	w, cache := tx.(*writeTx)
	key := subscription{wsID, eventType}
	if cache {
		if hooks, ok := w.subs[key]; ok {
			return hooks, nil
		}
	}
	rows, err := tx.Query(ctx, `SELECT id FROM webhooks
		WHERE workspace_id = $1 AND $2 = ANY (events) AND NOT deleting
			AND (enabled OR disabled_reason <> '' AND disabled_reason <> $3)
		ORDER BY seq FOR KEY SHARE`, wsID, eventType, link.WebhookCreatorRemoved)
	if err != nil {
		return nil, fmt.Errorf("webhooks subscribed to %s: %w", eventType, err)
	}
	hooks, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("webhooks subscribed to %s: %w", eventType, err)
	}
	if cache {
		if w.subs == nil {
			w.subs = map[subscription][]string{}
		}
		w.subs[key] = hooks
	}
	return hooks, nil
}

// appendEvent records the webhook event eventType of workspace wsID at
// at, in tx, the transaction of the change that causes it: the event
// (FindEvents lists it) and a delivery for each webhook of the workspace
// subscribed to its type, in the outbox, so that they exist if and only
// if the change is committed. data makes the event's data (the JSON the
// API shows; empty is null) and is called at most once, only when
// something keeps the event. Links, campaigns and clicks call it; the
// webhook service owns the tables behind it.
//
// Without an event encoder (Options.Events), or without a subscribed
// webhook, it writes nothing: nothing would ever read the event. The
// event takes an ID of the bbolt store's form (evt_…); a link.clicked
// event lives in its deliveries only, as in the bbolt store. Each
// delivery's body is fixed now, encoded by the store's EventEncoder; the
// deliveries are created at at (the current time when zero), due at once,
// at the end of their webhooks' queues.
func (db *DB) appendEvent(ctx context.Context, tx pgx.Tx, wsID, eventType string, at time.Time, data func() ([]byte, error)) error {
	if db.events == nil {
		return nil
	}
	hooks, err := subscribedWebhooks(ctx, tx, wsID, eventType)
	if err != nil || len(hooks) == 0 {
		return err
	}
	d, err := data()
	if err != nil {
		return err
	}
	if len(d) > 0 && !json.Valid(d) {
		return errors.New("postgres: event data is not JSON")
	}
	if at.IsZero() {
		at = db.now()
	}
	ev := &link.Event{Type: eventType, WorkspaceID: wsID, CreatedAt: at.UTC(), Data: d}
	_, err = db.writeEvent(ctx, tx, ev, eventType != link.EventLinkClicked, hooks)
	return err
}

// writeEvent gives ev an ID and queues a delivery of it to each of hooks,
// in tx; keep stores the event itself too, for FindEvents. It returns the
// deliveries' IDs, in the order of hooks.
func (db *DB) writeEvent(ctx context.Context, tx pgx.Tx, ev *link.Event, keep bool, hooks []string) ([]string, error) {
	var evSeq int64
	var dlvSeqs []int64
	err := tx.QueryRow(ctx, `SELECT nextval('ids_evt'), ARRAY(SELECT nextval('ids_dlv') FROM generate_series(1, $1::int))`,
		len(hooks)).Scan(&evSeq, &dlvSeqs)
	if err != nil {
		return nil, fmt.Errorf("event IDs: %w", err)
	}
	ev.ID = db.ids.FormatID(link.PrefixEvent, uint64(evSeq))
	if keep {
		data := ev.Data
		if len(data) == 0 {
			data = []byte("null")
		}
		if _, err := tx.Exec(ctx, `INSERT INTO events (seq, id, workspace_id, type, created_at, data) VALUES ($1, $2, $3, $4, $5, $6)`,
			evSeq, ev.ID, ev.WorkspaceID, ev.Type, ev.CreatedAt, data); err != nil {
			return nil, fmt.Errorf("put event: %w", err)
		}
	}
	body := db.events.AppendEvent(nil, ev)
	ids := make([]string, len(dlvSeqs))
	for i, s := range dlvSeqs {
		ids[i] = db.ids.FormatID(link.PrefixDelivery, uint64(s))
	}
	// The deliveries join their queues in the order of hooks.
	if _, err := tx.Exec(ctx, `INSERT INTO deliveries (seq, id, webhook_id, workspace_id, event_id, event_type, payload, status,
			next_attempt_at, queue, queued_at, created_at, updated_at)
		SELECT d.seq, d.id, d.webhook_id, $4, $5, $6, $7, 'pending', $8, nextval('deliveries_queue_seq'), $8, $8, $8
		FROM unnest($1::bigint[], $2::text[], $3::text[]) WITH ORDINALITY AS d (seq, id, webhook_id, n) ORDER BY d.n`,
		dlvSeqs, ids, hooks, ev.WorkspaceID, ev.ID, ev.Type, body, ev.CreatedAt); err != nil {
		return nil, fmt.Errorf("queue deliveries: %w", err)
	}
	return ids, queued(ctx, tx, int64(len(hooks)))
}
