package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	// evt, dlv and queue hold the values drawn from the sequences of
	// events, deliveries and queue places; events and deliveries the rows
	// written before the commit (flush).
	evt, dlv, queue    seqBlock
	events, deliveries [][]any
	// last is the transaction's last write, held back (execAtCommit) to
	// go out with the commit.
	last *lastWrite
}

// lastWrite is a statement held back to go out with the commit, and what
// makes its error the caller's (nil: as it is).
type lastWrite struct {
	sql    string
	args   []any
	mapErr func(error) error
}

func (l *lastWrite) err(err error) error {
	if err == nil || l.mapErr == nil {
		return err
	}
	return l.mapErr(err)
}

// execAtCommit holds the statement sql with args back, to send it with
// the commit in one round trip: for a transaction's last write, whose
// only outcome that matters is its error (a statement whose failure must
// undo the transaction, such as an INSERT that a unique violation
// refuses). mapErr makes its error the caller's: the caller of db.tx
// gets it. Any later statement of the transaction sends it first.
func (w *writeTx) execAtCommit(ctx context.Context, mapErr func(error) error, sql string, args ...any) error {
	if err := w.sendLast(ctx); err != nil {
		return err
	}
	w.last = &lastWrite{sql: sql, args: args, mapErr: mapErr}
	return nil
}

// sendLast sends the statement held back, if any.
func (w *writeTx) sendLast(ctx context.Context) error {
	l := w.last
	if l == nil {
		return nil
	}
	w.last = nil
	_, err := w.Tx.Exec(ctx, l.sql, l.args...)
	return l.err(err)
}

// commit sends the statement held back with the commit, if any (the
// commit itself is runTx's).
func (w *writeTx) commit(ctx context.Context) error {
	l := w.last
	if l == nil {
		return nil
	}
	lt, ok := w.Tx.(*lazyTx)
	if !ok {
		return w.sendLast(ctx)
	}
	w.last = nil
	return l.err(lt.commitWith(ctx, l.sql, l.args...))
}

func (w *writeTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := w.sendLast(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return w.Tx.Exec(ctx, sql, args...)
}

func (w *writeTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := w.sendLast(ctx); err != nil {
		return nil, err
	}
	return w.Tx.Query(ctx, sql, args...)
}

func (w *writeTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := w.sendLast(ctx); err != nil {
		return &firstRow{err: err}
	}
	return w.Tx.QueryRow(ctx, sql, args...)
}

func (w *writeTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := w.sendLast(ctx); err != nil {
		return failedBatch{err}
	}
	return w.Tx.SendBatch(ctx, b)
}

func (w *writeTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if err := w.sendLast(ctx); err != nil {
		return 0, err
	}
	return w.Tx.CopyFrom(ctx, table, columns, src)
}

type subscription struct{ wsID, eventType string }

// beforeCommit writes the events and deliveries the transaction holds,
// then moves the outbox's depth by what it queued, in one slot, as its
// last statement: the transaction holds the slot's
// row lock only for its commit, and takes no lock after it, so waiting
// for the slot cannot close a circle of waits.
func (w *writeTx) beforeCommit(ctx context.Context) error {
	if len(w.events) > 0 || len(w.deliveries) > 0 || w.queued != 0 {
		if err := w.sendLast(ctx); err != nil {
			return err
		}
	}
	if err := w.flush(ctx); err != nil {
		return err
	}
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
	rows, err := tx.Query(ctx, subscribersQuery, wsID, eventType, link.WebhookCreatorRemoved)
	if err != nil {
		return nil, fmt.Errorf("webhooks subscribed to %s: %w", eventType, err)
	}
	return collectSubscribers(tx, wsID, eventType, rows)
}

// subscribersQuery reads the webhooks of workspace $1 subscribed to event
// type $2 ($3: link.WebhookCreatorRemoved); see subscribedWebhooks.
const subscribersQuery = `SELECT id FROM webhooks
	WHERE workspace_id = $1 AND $2 = ANY (events) AND NOT deleting
		AND (enabled OR disabled_reason <> '' AND disabled_reason <> $3)
	ORDER BY seq FOR KEY SHARE`

// collectSubscribers reads the answer of subscribersQuery and keeps it in
// tx's cache (a writeTx) for the rest of the transaction.
func collectSubscribers(tx pgx.Tx, wsID, eventType string, rows pgx.Rows) ([]string, error) {
	hooks, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("webhooks subscribed to %s: %w", eventType, err)
	}
	if w, cache := tx.(*writeTx); cache {
		if w.subs == nil {
			w.subs = map[subscription][]string{}
		}
		w.subs[subscription{wsID, eventType}] = hooks
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
//
// tx should be a transaction of db.tx: the rows then go in with one COPY
// just before its commit, and the outbox's depth moves as its last
// statement. In any other transaction they are written at once, and the
// depth's slot stays locked from then to the commit.
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
// deliveries' IDs, in the order of hooks. In a transaction of db.tx the
// rows wait in it and go in with one COPY before the commit, and the
// sequences are drawn in growing blocks, so that a batch of a thousand
// clicks costs a dozen round trips rather than thousands.
func (db *DB) writeEvent(ctx context.Context, tx pgx.Tx, ev *link.Event, keep bool, hooks []string) ([]string, error) {
	w, buffered := tx.(*writeTx)
	if !buffered {
		w = &writeTx{Tx: tx}
	}
	evSeq, dlvSeqs, queues, err := w.draw(ctx, len(hooks))
	if err != nil {
		return nil, err
	}
	ev.ID = db.ids.FormatID(link.PrefixEvent, uint64(evSeq))
	if keep {
		data := ev.Data
		if len(data) == 0 {
			data = []byte("null")
		}
		w.events = append(w.events, []any{evSeq, ev.ID, ev.WorkspaceID, ev.Type, ev.CreatedAt, data})
	}
	body := db.events.AppendEvent(nil, ev)
	ids := make([]string, len(hooks))
	for i, hook := range hooks {
		ids[i] = db.ids.FormatID(link.PrefixDelivery, uint64(dlvSeqs[i]))
		w.deliveries = append(w.deliveries, []any{dlvSeqs[i], ids[i], hook, ev.WorkspaceID, ev.ID, ev.Type, body,
			string(link.DeliveryPending), ev.CreatedAt, queues[i], ev.CreatedAt, ev.CreatedAt, ev.CreatedAt})
	}
	if !buffered {
		if err := w.flush(ctx); err != nil {
			return nil, err
		}
	}
	return ids, queued(ctx, tx, int64(len(hooks)))
}

// seqBlock holds values drawn from a sequence and not used yet.
type seqBlock struct {
	vals []int64
	last int // the size of the last draw
}

// need returns how many values to draw for n: none when b holds n,
// else what is missing, or twice the last draw when more (up to
// maxSeqDraw), so that many small takes make few draws. What a
// transaction leaves unused is a gap in the IDs, which nothing minds.
func (b *seqBlock) need(n int) int {
	want := n - len(b.vals)
	if want <= 0 {
		return 0
	}
	return max(want, min(2*b.last, maxSeqDraw))
}

// maxSeqDraw bounds the growth of the draws of a sequence.
const maxSeqDraw = 1024

// take returns the next n values of b, which holds them.
func (b *seqBlock) take(n int) []int64 {
	out := b.vals[:n:n]
	b.vals = b.vals[n:]
	return out
}

// draw returns an event's sequence and n deliveries' sequences and queue
// places, drawing the sequences that w holds too few of in one query.
func (w *writeTx) draw(ctx context.Context, n int) (int64, []int64, []int64, error) {
	ne, nd, nq := w.evt.need(1), w.dlv.need(n), w.queue.need(n)
	if ne+nd+nq > 0 {
		var e, d, q []int64
		err := w.Tx.QueryRow(ctx, `SELECT ARRAY(SELECT nextval('ids_evt') FROM generate_series(1, $1::int)),
			ARRAY(SELECT nextval('ids_dlv') FROM generate_series(1, $2::int)),
			ARRAY(SELECT nextval('deliveries_queue_seq') FROM generate_series(1, $3::int))`, ne, nd, nq).Scan(&e, &d, &q)
		if err != nil {
			return 0, nil, nil, fmt.Errorf("event IDs: %w", err)
		}
		for _, x := range []struct {
			b    *seqBlock
			vals []int64
		}{{&w.evt, e}, {&w.dlv, d}, {&w.queue, q}} {
			if len(x.vals) > 0 {
				slices.Sort(x.vals) // nextval in a set returns them in no promised order
				x.b.vals, x.b.last = append(x.b.vals, x.vals...), len(x.vals)
			}
		}
	}
	return w.evt.take(1)[0], w.dlv.take(n), w.queue.take(n), nil
}

// flush writes the events and deliveries w holds.
func (w *writeTx) flush(ctx context.Context) error {
	if len(w.events) > 0 {
		if _, err := w.Tx.CopyFrom(ctx, pgx.Identifier{"events"}, []string{"seq", "id", "workspace_id", "type", "created_at", "data"},
			pgx.CopyFromRows(w.events)); err != nil {
			return fmt.Errorf("put events: %w", err)
		}
		w.events = nil
	}
	if len(w.deliveries) > 0 {
		if _, err := w.Tx.CopyFrom(ctx, pgx.Identifier{"deliveries"}, []string{"seq", "id", "webhook_id", "workspace_id", "event_id",
			"event_type", "payload", "status", "next_attempt_at", "queue", "queued_at", "created_at", "updated_at"},
			pgx.CopyFromRows(w.deliveries)); err != nil {
			return fmt.Errorf("queue deliveries: %w", err)
		}
		w.deliveries = nil
	}
	return nil
}

// flushOutbox writes what a transaction of db.tx holds of the outbox,
// for a read of it in the same transaction.
func flushOutbox(ctx context.Context, tx pgx.Tx) error {
	if w, ok := tx.(*writeTx); ok {
		return w.flush(ctx)
	}
	return nil
}
