package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/webhook"
)

// TestAppendEventsInOneTransaction: a transaction appending many events,
// as a batch of clicks does, queues each subscribed webhook's deliveries
// in the order of the events, keeps the events of changes only (not the
// clicks'), and moves the outbox's depth by them at its commit; a
// transaction rolled back leaves nothing of them.
func TestAppendEventsInOneTransaction(t *testing.T) {
	t.Parallel()
	enc, err := webhook.NewEncoder(&url.URL{Scheme: "https", Host: "sho.rt"}, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := Options{URL: pgtest.URL(t), Events: enc}
	db, s, ws := openBootstrapped(t, o)
	var hooks []*link.Webhook
	for i, events := range [][]string{{link.EventLinkClicked}, {link.EventLinkClicked, link.EventLinkCreated}} {
		w := &link.Webhook{WorkspaceID: ws.ID, URL: fmt.Sprintf("https://hooks.example.com/%d", i), Events: events, Enabled: true, Secret: "s"}
		if err := s.Webhooks.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, w)
	}
	const clicks = 700
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	appendAll := func(tx pgx.Tx) error {
		for i := range clicks {
			typ := link.EventLinkClicked
			if i%100 == 0 {
				typ = link.EventLinkCreated
			}
			if err := db.appendEvent(ctx, tx, ws.ID, typ, at, func() ([]byte, error) { return json.Marshal(map[string]int{"i": i}) }); err != nil {
				return err
			}
		}
		return nil
	}
	refused := errors.New("refused")
	if err := db.tx(ctx, func(tx pgx.Tx) error {
		if err := appendAll(tx); err != nil {
			return err
		}
		return refused
	}); err != refused {
		t.Fatalf("rolled back: %v", err)
	}
	if n := s.Webhooks.PendingDeliveries(); n != 0 {
		t.Fatalf("PendingDeliveries after a rollback = %d", n)
	}
	if err := db.tx(ctx, appendAll); err != nil {
		t.Fatal(err)
	}
	for k, w := range hooks {
		ds, err := s.Webhooks.NextDeliveries(ctx, w.ID, at, 2*clicks)
		if err != nil {
			t.Fatal(err)
		}
		var want []int
		for i := range clicks {
			if i%100 != 0 || k == 1 {
				want = append(want, i)
			}
		}
		if len(ds) != len(want) {
			t.Fatalf("webhook %d: %d deliveries queued, want %d", k, len(ds), len(want))
		}
		for j, d := range ds {
			var body struct {
				ID   string
				Data struct{ I int }
			}
			if err := json.Unmarshal(d.Payload, &body); err != nil || body.Data.I != want[j] || body.ID != d.EventID {
				t.Fatalf("webhook %d: delivery %d is %s (%v); want the event of click %d", k, j, d.Payload, err, want[j])
			}
		}
	}
	evs, err := s.Campaigns.FindEvents(ctx, ws.ID, "", 1000)
	if err != nil || len(evs) != clicks/100 {
		t.Fatalf("%d events kept, %v; want the %d link.created", len(evs), err, clicks/100)
	}
	if n := s.Webhooks.PendingDeliveries(); n != clicks+(clicks-clicks/100) {
		t.Fatalf("PendingDeliveries = %d, want %d", n, clicks+(clicks-clicks/100))
	}
}

// TestDueDeliveriesPlan: with long queues and a longer log, DueDeliveries
// reads the queue index (probes per webhook), never the log.
func TestDueDeliveriesPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	db, err := OpenDB(ctx, Options{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, err = db.pool.Exec(ctx, `
		INSERT INTO workspaces (id, seq, name, plan, created_at, updated_at) VALUES ('ws_a', 1, 'A', 'free', now(), now());
		INSERT INTO webhooks (id, seq, workspace_id, url, created_at, updated_at)
			SELECT 'wh_' || i, i, 'ws_a', 'https://hooks.example.com/', now(), now() FROM generate_series(1, 20) i;
		INSERT INTO deliveries (seq, id, webhook_id, workspace_id, event_type, payload, status, queue, queued_at, created_at, updated_at)
			SELECT i, 'dlv_' || i, 'wh_' || (i % 20 + 1), 'ws_a', 'link.clicked', '\x7b7d',
				CASE WHEN i > 45000 THEN 'pending' ELSE 'succeeded' END, CASE WHEN i > 45000 THEN i END, now(), now(), now()
			FROM generate_series(1, 50000) i;
		ANALYZE webhooks; ANALYZE deliveries`)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for i := 1; i <= 20; i++ {
		ids = append(ids, fmt.Sprint("wh_", i))
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{claimDueSQL, []any{time.Now(), nil, "a/b", time.Now()}},
		{claimedHeadsSQL, []any{time.Now(), ids}},
	} {
		var plan []map[string]any
		if err := db.pool.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+q.sql, q.args...).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		var walk func(n map[string]any)
		walk = func(n map[string]any) {
			if n["Relation Name"] == "deliveries" && n["Index Name"] != "deliveries_queue" {
				t.Errorf("DueDeliveries reads deliveries by %v %v, not the queue index: %v", n["Node Type"], n["Index Name"], plan)
			}
			subs, _ := n["Plans"].([]any)
			for _, sub := range subs {
				walk(sub.(map[string]any))
			}
		}
		walk(plan[0]["Plan"].(map[string]any))
	}
	ds, err := db.Store(Options{}).Webhooks.DueDeliveries(ctx, time.Now().Add(time.Hour), 0)
	if err != nil || len(ds) != 20 || ds[0].ID != "dlv_45020" || ds[19].ID != "dlv_45019" {
		t.Fatalf("due = %d deliveries, %v; want the heads of the 20 webhooks", len(ds), err)
	}
}
