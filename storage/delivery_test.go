package storage_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

func TestDueDeliveries_OnePerWebhookInOrder(t *testing.T) {
	s, _, ws := mustSetup(t)
	hooks := storage.NewWebhookService(s.DB)
	a := mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated)
	b := mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated)
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	evs := campaignEvents(t, s, c, 3)

	// Every webhook's head, in event order, one at a time.
	for i := range evs {
		got := due(t, hooks, s.Clock.Now())
		if len(got) != 2 || got[a.ID] == nil || got[b.ID] == nil {
			t.Fatalf("round %d: due = %v", i, got)
		}
		for _, d := range got {
			if d.EventID != evs[i] {
				t.Fatalf("round %d: webhook %s's due event %s, want %s", i, d.WebhookID, d.EventID, evs[i])
			}
		}
		// Recording is what moves the queue: asking again gives the same.
		if again := due(t, hooks, s.Clock.Now()); again[a.ID].ID != got[a.ID].ID {
			t.Fatalf("due moved without an attempt: %s, then %s", got[a.ID].ID, again[a.ID].ID)
		}
		succeed(t, hooks, got[a.ID], s.Clock.Now())
		succeed(t, hooks, got[b.ID], s.Clock.Now())
	}
	if got := due(t, hooks, s.Clock.Now()); len(got) != 0 {
		t.Fatalf("due after everything succeeded = %v", got)
	}

	// A retrying head holds back its webhook only.
	evs = campaignEvents(t, s, c, 2)
	head := due(t, hooks, s.Clock.Now())[a.ID]
	next := s.Clock.Now().Add(time.Minute)
	if err := recordAttempt(context.Background(), hooks, head, link.Attempt{At: s.Clock.Now(), ResponseCode: 500, Error: "HTTP 500"}, &next, ""); err != nil {
		t.Fatal(err)
	}
	if head.Status != link.DeliveryPending || head.Attempts != 1 || !head.NextAttemptAt.Equal(next) || head.LastError != "HTTP 500" || head.ResponseCode != 500 {
		t.Fatalf("after a failure, d = %+v", head)
	}
	got := due(t, hooks, s.Clock.Now())
	if got[a.ID] != nil || got[b.ID] == nil || got[b.ID].EventID != evs[0] {
		t.Fatalf("due while a's head waits = %v", got)
	}
	if got := due(t, hooks, next); got[a.ID] == nil || got[a.ID].ID != head.ID {
		t.Fatalf("due at the retry = %v, want a's head %s", got, head.ID)
	}
	if ds, err := hooks.DueDeliveries(context.Background(), next, 1); err != nil || len(ds) != 1 {
		t.Fatalf("limit 1: %v, %v", ds, err)
	}
	if wh, _ := hooks.FindWebhookByID(context.Background(), ws.ID, a.ID); wh.ConsecutiveFailures != 1 {
		t.Fatalf("consecutive failures = %d, want 1", wh.ConsecutiveFailures)
	}
	succeed(t, hooks, due(t, hooks, next)[a.ID], next)
	if wh, _ := hooks.FindWebhookByID(context.Background(), ws.ID, a.ID); wh.ConsecutiveFailures != 0 {
		t.Fatalf("consecutive failures after a success = %d, want 0", wh.ConsecutiveFailures)
	}
	if got := due(t, hooks, next)[a.ID]; got == nil || got.EventID != evs[1] {
		t.Fatalf("a's next head = %v, want event %s", got, evs[1])
	}
}

func TestPingAndRetry(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	// Subscribed to nothing that happens here: a ping still goes.
	w := mustWebhook(t, hooks, ws.ID, true, link.EventLinkDeleted)
	mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated)
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	campaignEvents(t, s, c, 1)

	s.Clock.Add(time.Minute)
	hooks.Events = testEncoder(t)
	ping, err := hooks.Ping(ctx, ws.ID, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The ping's event ID is the id in its body.
	var body struct {
		ID          string            `json:"id"`
		Type        string            `json:"type"`
		CreatedAt   string            `json:"created_at"`
		WorkspaceID string            `json:"workspace_id"`
		Data        map[string]string `json:"data"`
	}
	if err := json.Unmarshal(ping.Payload, &body); err != nil {
		t.Fatalf("ping body %s: %v", ping.Payload, err)
	}
	if !strings.HasPrefix(ping.EventID, "evt_") || ping.EventType != link.EventPing || ping.Status != link.DeliveryPending ||
		!ping.NextAttemptAt.Equal(s.Clock.Now()) || body.ID != ping.EventID || body.Type != "ping" || body.WorkspaceID != ws.ID ||
		body.CreatedAt != s.Clock.Now().UTC().Format(time.RFC3339) || body.Data["message"] != "ping from linkbolt" {
		t.Fatalf("ping = %+v (%s)", ping, ping.Payload)
	}
	_, err = hooks.Ping(ctx, other.ID, w.ID)
	wantCode(t, err, link.ENOTFOUND)
	hooks.Events = failingPing{testEncoder(t)}
	if _, err := hooks.Ping(ctx, ws.ID, w.ID); err == nil {
		t.Fatal("payload error not returned")
	}
	hooks.Events = testEncoder(t)
	second, err := hooks.Ping(ctx, ws.ID, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if second.EventID == ping.EventID || !strings.Contains(string(second.Payload), `"id":"`+second.EventID+`"`) {
		t.Fatalf("second ping = %+v (%s)", second, second.Payload)
	}

	// Pending: no retry.
	_, err = hooks.RetryDelivery(ctx, ws.ID, w.ID, ping.ID)
	wantCode(t, err, link.ECONFLICT)

	d := due(t, hooks, s.Clock.Now())[w.ID]
	if d.ID != ping.ID {
		t.Fatalf("due = %s, want the ping %s", d.ID, ping.ID)
	}
	succeed(t, hooks, d, s.Clock.Now())

	// A retried delivery goes to the end of the queue, behind the second
	// ping, with its id and body.
	s.Clock.Add(time.Minute)
	r, err := hooks.RetryDelivery(ctx, ws.ID, w.ID, ping.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != ping.ID || r.Status != link.DeliveryPending || r.Attempts != 0 || !r.QueuedAt.Equal(s.Clock.Now()) ||
		!r.CreatedAt.Equal(ping.CreatedAt) || string(r.Payload) != string(ping.Payload) || r.ResponseCode != 200 {
		t.Fatalf("retried = %+v", r)
	}
	if d := due(t, hooks, s.Clock.Now())[w.ID]; d.ID != second.ID {
		t.Fatalf("due = %s, want the second ping %s before the retried one", d.ID, second.ID)
	}
	succeed(t, hooks, due(t, hooks, s.Clock.Now())[w.ID], s.Clock.Now())
	if d := due(t, hooks, s.Clock.Now())[w.ID]; d == nil || d.ID != ping.ID {
		t.Fatalf("due = %v, want the retried %s", d, ping.ID)
	}
	for _, tt := range [][3]string{{other.ID, w.ID, ping.ID}, {ws.ID, w.ID, "dlv_zzz"}, {ws.ID, w.ID, "nope"}, {ws.ID, "wh_zzz", ping.ID}} {
		_, err := hooks.RetryDelivery(ctx, tt[0], tt[1], tt[2])
		wantCode(t, err, link.ENOTFOUND)
	}
	// Another webhook's delivery is not found under this one.
	w2 := mustWebhook(t, hooks, ws.ID, true, link.EventLinkDeleted)
	_, err = hooks.RetryDelivery(ctx, ws.ID, w2.ID, ping.ID)
	wantCode(t, err, link.ENOTFOUND)
}

// next returns what NextDeliveries gives for w at now, at most n.
func next(tb testing.TB, hooks *storage.WebhookService, w *link.Webhook, now time.Time, n int) []*link.Delivery {
	tb.Helper()
	ds, err := hooks.NextDeliveries(context.Background(), w.ID, now, n)
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}

func eventIDs(ds []*link.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.EventID)
	}
	return out
}

// TestNextDeliveries_RunInOneTransaction: a webhook's run comes in queue
// order, up to a head waiting for a retry; RecordAttempts writes a run in
// one transaction; a failure recorded mid-run leaves the rest pending and
// in order.
func TestNextDeliveries_RunInOneTransaction(t *testing.T) {
	s, _, ws := mustSetup(t)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	a := mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated)
	b := mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated)
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	evs := campaignEvents(t, s, c, 8)
	now := s.Clock.Now()

	if got := eventIDs(next(t, hooks, a, now, 3)); !slices.Equal(got, evs[:3]) {
		t.Fatalf("run of 3 = %v, want %v", got, evs[:3])
	}
	if got := eventIDs(next(t, hooks, a, now, 100)); !slices.Equal(got, evs) {
		t.Fatalf("run of 100 = %v, want %v", got, evs)
	}
	if got := next(t, hooks, a, now, 0); len(got) != 1 || got[0].EventID != evs[0] {
		t.Fatalf("run of 0 = %v, want the head", eventIDs(got))
	}

	// A run of 5 successes: one write transaction.
	run := next(t, hooks, a, now, 5)
	var recs []link.AttemptRecord
	for _, d := range run {
		recs = append(recs, link.AttemptRecord{Delivery: d, Attempt: link.Attempt{At: now, ResponseCode: 200, Duration: time.Millisecond}})
	}
	before := hooks.AttemptTxs()
	if err := hooks.RecordAttempts(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if txs := hooks.AttemptTxs() - before; txs != 1 {
		t.Fatalf("a run of 5 took %d write transactions, want 1", txs)
	}
	for _, d := range run {
		if d.Status != link.DeliverySucceeded || d.Attempts != 1 || d.ResponseCode != 200 {
			t.Fatalf("recorded %+v", d)
		}
	}
	if got := eventIDs(next(t, hooks, a, now, 100)); !slices.Equal(got, evs[5:]) {
		t.Fatalf("after the run = %v, want %v", got, evs[5:])
	}
	// The other webhook's queue did not move.
	if got := eventIDs(next(t, hooks, b, now, 100)); !slices.Equal(got, evs) {
		t.Fatalf("b = %v, want %v", got, evs)
	}

	// A success, then a failure: the rest stays pending, untried, behind
	// the failed head, and nothing is due until its retry.
	run = next(t, hooks, a, now, 3)
	retry := now.Add(time.Minute)
	recs = []link.AttemptRecord{
		{Delivery: run[0], Attempt: link.Attempt{At: now, ResponseCode: 200}},
		{Delivery: run[1], Attempt: link.Attempt{At: now, ResponseCode: 500, Error: "HTTP 500"}, Next: &retry},
	}
	if err := hooks.RecordAttempts(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if run[1].Status != link.DeliveryPending || run[1].Attempts != 1 || !run[1].NextAttemptAt.Equal(retry) {
		t.Fatalf("failed head = %+v", run[1])
	}
	ds := deliveries(t, hooks, a)
	if ds[5].Status != link.DeliverySucceeded || ds[7].Status != link.DeliveryPending || ds[7].Attempts != 0 || ds[7].LastError != "" {
		t.Fatalf("after a failure mid-run: %+v, %+v", ds[5], ds[7])
	}
	if wh, _ := hooks.FindWebhookByID(ctx, ws.ID, a.ID); wh.ConsecutiveFailures != 1 {
		t.Fatalf("consecutive failures = %d, want 1", wh.ConsecutiveFailures)
	}
	if got := next(t, hooks, a, now, 100); len(got) != 0 {
		t.Fatalf("run while the head waits = %v", eventIDs(got))
	}
	if got := eventIDs(next(t, hooks, a, retry, 100)); !slices.Equal(got, evs[6:]) {
		t.Fatalf("run at the retry = %v, want %v", got, evs[6:])
	}

	// A record that cannot be written is skipped; the rest is written.
	run = next(t, hooks, b, now, 2)
	ghost := *run[0]
	ghost.ID = s.DB.FormatID("dlv_", 1<<40)
	recs = []link.AttemptRecord{
		{Delivery: &ghost, Attempt: link.Attempt{At: now, ResponseCode: 200}},
		{Delivery: run[0], Attempt: link.Attempt{At: now, ResponseCode: 200}},
		{Delivery: run[1], Attempt: link.Attempt{At: now, ResponseCode: 200}},
	}
	wantCode(t, hooks.RecordAttempts(ctx, recs), link.ENOTFOUND)
	if run[0].Status != link.DeliverySucceeded || run[1].Status != link.DeliverySucceeded {
		t.Fatalf("the writable records: %+v, %+v", run[0], run[1])
	}
	if err := hooks.RecordAttempts(ctx, nil); err != nil {
		t.Fatal(err)
	}

	// Disabled: no run. Deleted or unknown: ENOTFOUND.
	if _, err := hooks.UpdateWebhook(ctx, ws.ID, b.ID, link.WebhookUpdate{Enabled: ptr(false)}, nil); err != nil {
		t.Fatal(err)
	}
	if got := next(t, hooks, b, now, 100); len(got) != 0 {
		t.Fatalf("run of a disabled webhook = %v", eventIDs(got))
	}
	if err := hooks.DeleteWebhook(ctx, ws.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	_, err := hooks.NextDeliveries(ctx, b.ID, now, 10)
	wantCode(t, err, link.ENOTFOUND)
	_, err = hooks.NextDeliveries(ctx, "wh_nope", now, 10)
	wantCode(t, err, link.ENOTFOUND)
}
