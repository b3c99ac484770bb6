package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// mustWebhook creates a webhook of the workspace to url for events.
func mustWebhook(tb testing.TB, hooks *storage.WebhookService, wsID string, enabled bool, events ...string) *link.Webhook {
	tb.Helper()
	w := &link.Webhook{WorkspaceID: wsID, URL: "https://hooks.example.com/" + fmt.Sprint(time.Now().UnixNano()),
		Events: events, Enabled: enabled, Secret: "whsec_" + fmt.Sprint(time.Now().UnixNano())}
	w.Normalize()
	if err := w.Validate(); err != nil {
		tb.Fatalf("webhook: %v", err)
	}
	if err := hooks.CreateWebhook(context.Background(), w); err != nil {
		tb.Fatalf("create webhook: %v", err)
	}
	return w
}

// campaignEvents writes n campaign.updated events of the workspace by
// renaming a campaign n times, and returns their ids.
func campaignEvents(tb testing.TB, s *Services, c *link.Campaign, n int) []string {
	tb.Helper()
	recordEvents(tb, s)
	defer func() { s.Campaigns.Events = nil }()
	var ids []string
	for range n {
		name := fmt.Sprintf("Campaign %d", time.Now().UnixNano())
		if _, err := s.Campaigns.UpdateCampaign(context.Background(), c.WorkspaceID, c.ID, link.CampaignUpdate{Name: &name}); err != nil {
			tb.Fatal(err)
		}
		evs := events(tb, s, c.WorkspaceID)
		ids = append(ids, evs[len(evs)-1].ID)
	}
	return ids
}

// deliveries returns a webhook's log, oldest first.
func deliveries(tb testing.TB, hooks *storage.WebhookService, w *link.Webhook) []*link.Delivery {
	tb.Helper()
	ds, err := hooks.FindDeliveries(context.Background(), w.WorkspaceID, w.ID, 1000)
	if err != nil {
		tb.Fatal(err)
	}
	slices.Reverse(ds)
	return ds
}

// due returns what DueDeliveries gives at now, by webhook id.
func due(tb testing.TB, hooks *storage.WebhookService, now time.Time) map[string]*link.Delivery {
	tb.Helper()
	ds, err := hooks.DueDeliveries(context.Background(), now, 0)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]*link.Delivery{}
	for _, d := range ds {
		if out[d.WebhookID] != nil {
			tb.Fatalf("two due deliveries of webhook %s: %s and %s", d.WebhookID, out[d.WebhookID].ID, d.ID)
		}
		out[d.WebhookID] = d
	}
	return out
}

func succeed(tb testing.TB, hooks *storage.WebhookService, d *link.Delivery, at time.Time) {
	tb.Helper()
	if err := hooks.RecordAttempt(context.Background(), d, link.Attempt{At: at, ResponseCode: 200, Duration: time.Millisecond}, nil, ""); err != nil {
		tb.Fatalf("record success of %s: %v", d.ID, err)
	}
}

// body is the JSON body of a delivery.
type body struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	CreatedAt   time.Time       `json:"created_at"`
	WorkspaceID string          `json:"workspace_id"`
	Data        json.RawMessage `json:"data"`
}

func decodeBody(tb testing.TB, d *link.Delivery) body {
	tb.Helper()
	var b body
	dec := json.NewDecoder(strings.NewReader(string(d.Payload)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		tb.Fatalf("delivery %s payload %s: %v", d.ID, d.Payload, err)
	}
	return b
}

func TestWebhooks_CreateFindUpdateDelete(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()

	a := mustWebhook(t, hooks, ws.ID, true, link.EventLinkCreated, link.EventCampaignUpdated)
	if !strings.HasPrefix(a.ID, "wh_") || !a.CreatedAt.Equal(t0) || !a.UpdatedAt.Equal(t0) {
		t.Fatalf("created = %+v", a)
	}
	s.Clock.Add(time.Minute)
	b := mustWebhook(t, hooks, ws.ID, false, link.EventLinkClicked)
	o := mustWebhook(t, hooks, other.ID, true, link.EventLinkClicked)

	got, err := hooks.FindWebhookByID(ctx, ws.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != a.URL || got.Secret != a.Secret || !slices.Equal(got.Events, a.Events) || !got.Enabled || got.WorkspaceID != ws.ID {
		t.Fatalf("found %+v, want %+v", got, a)
	}
	list, err := hooks.FindWebhooks(ctx, ws.ID)
	if err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("list = %v, %v; want newest first [%s %s]", list, err, b.ID, a.ID)
	}
	// Another workspace's webhook is not found; malformed ids neither.
	for _, tt := range [][2]string{{ws.ID, o.ID}, {other.ID, a.ID}, {ws.ID, "wh_zzz"}, {ws.ID, "nope"}, {"nope", a.ID}} {
		_, err := hooks.FindWebhookByID(ctx, tt[0], tt[1])
		wantCode(t, err, link.ENOTFOUND)
	}
	wantCode(t, hooks.CreateWebhook(ctx, &link.Webhook{WorkspaceID: ws.ID, URL: "https://x.example", Events: []string{link.EventLinkClicked}}), link.EINVALID)
	wantCode(t, hooks.CreateWebhook(ctx, &link.Webhook{WorkspaceID: "ws_zzz", URL: "https://x.example", Events: []string{link.EventLinkClicked}, Secret: "s"}), link.ENOTFOUND)

	// Update: validated by the domain and by validate, which sees the result.
	s.Clock.Add(time.Minute)
	var seen *link.Webhook
	upd, err := hooks.UpdateWebhook(ctx, ws.ID, a.ID, link.WebhookUpdate{URL: ptr(" https://new.example/h "), Events: &[]string{link.EventLinkDeleted}},
		func(w *link.Webhook) error { seen = w; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if upd.URL != "https://new.example/h" || !slices.Equal(upd.Events, []string{link.EventLinkDeleted}) || !upd.UpdatedAt.Equal(s.Clock.Now()) || seen.URL != upd.URL {
		t.Fatalf("updated = %+v (validate saw %+v)", upd, seen)
	}
	_, err = hooks.UpdateWebhook(ctx, ws.ID, a.ID, link.WebhookUpdate{Events: &[]string{"link.nope"}}, nil)
	wantCode(t, err, link.EINVALID)
	refused := errors.New("refused")
	if _, err = hooks.UpdateWebhook(ctx, ws.ID, a.ID, link.WebhookUpdate{URL: ptr("http://127.0.0.1/")}, func(*link.Webhook) error { return refused }); err != refused {
		t.Fatalf("validate's error = %v, want it unchanged", err)
	}
	_, err = hooks.UpdateWebhook(ctx, other.ID, a.ID, link.WebhookUpdate{}, nil)
	wantCode(t, err, link.ENOTFOUND)
	if got, _ := hooks.FindWebhookByID(ctx, ws.ID, a.ID); got.URL != "https://new.example/h" {
		t.Fatalf("a refused update was written: %+v", got)
	}

	// Roll: the old secret signs beside the new one until the grace ends.
	grace := s.Clock.Now().Add(24 * time.Hour)
	rolled, err := hooks.RollSecret(ctx, ws.ID, a.ID, "whsec_new", grace)
	if err != nil {
		t.Fatal(err)
	}
	if rolled.Secret != "whsec_new" || rolled.PreviousSecret != a.Secret || !rolled.PreviousSecretExpiresAt.Equal(grace) {
		t.Fatalf("rolled = %+v", rolled)
	}
	_, err = hooks.RollSecret(ctx, ws.ID, a.ID, "", grace)
	wantCode(t, err, link.EINVALID)
	_, err = hooks.RollSecret(ctx, other.ID, a.ID, "x", grace)
	wantCode(t, err, link.ENOTFOUND)

	// Delete.
	wantCode(t, hooks.DeleteWebhook(ctx, other.ID, a.ID), link.ENOTFOUND)
	if err := hooks.DeleteWebhook(ctx, ws.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	_, err = hooks.FindWebhookByID(ctx, ws.ID, a.ID)
	wantCode(t, err, link.ENOTFOUND)
	wantCode(t, hooks.DeleteWebhook(ctx, ws.ID, a.ID), link.ENOTFOUND)
	if list, _ := hooks.FindWebhooks(ctx, ws.ID); len(list) != 1 || list[0].ID != b.ID {
		t.Fatalf("list after delete = %v", list)
	}
}

// TestUpdateWebhook_ValidateOutsideTransaction checks that validate runs
// outside the write transaction (it may write itself without a deadlock)
// and that a change made meanwhile makes the update validate again.
func TestUpdateWebhook_ValidateOutsideTransaction(t *testing.T) {
	s, _, ws := mustSetup(t)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	w := mustWebhook(t, hooks, ws.ID, true, link.EventLinkCreated)
	calls := 0
	got, err := hooks.UpdateWebhook(ctx, ws.ID, w.ID, link.WebhookUpdate{Description: ptr("mine")}, func(x *link.Webhook) error {
		calls++
		if calls == 1 { // a concurrent change: the events
			if _, err := hooks.UpdateWebhook(ctx, ws.ID, w.ID, link.WebhookUpdate{Events: &[]string{link.EventLinkDeleted}}, nil); err != nil {
				return err
			}
		} else if !slices.Equal(x.Events, []string{link.EventLinkDeleted}) {
			t.Errorf("second validate saw events %v", x.Events)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || got.Description != "mine" || !slices.Equal(got.Events, []string{link.EventLinkDeleted}) {
		t.Fatalf("%d validate calls, got %+v", calls, got)
	}
}

func TestAppendEvent_FanOut(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()

	subscribed := mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated, link.EventLinkCreated)
	also := mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated)
	elsewhere := mustWebhook(t, hooks, ws.ID, true, link.EventLinkCreated)
	disabled := mustWebhook(t, hooks, ws.ID, false, link.EventCampaignUpdated)
	foreign := mustWebhook(t, hooks, other.ID, true, link.EventCampaignUpdated)
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})

	s.Clock.Add(time.Minute)
	at := s.Clock.Now()
	evs := campaignEvents(t, s, c, 1)
	for _, w := range []*link.Webhook{elsewhere, disabled, foreign} {
		if ds := deliveries(t, hooks, w); len(ds) != 0 {
			t.Fatalf("webhook %v got deliveries %v", w.Events, ds)
		}
	}
	var bodies []string
	for _, w := range []*link.Webhook{subscribed, also} {
		ds := deliveries(t, hooks, w)
		if len(ds) != 1 {
			t.Fatalf("webhook %s: %d deliveries, want 1", w.ID, len(ds))
		}
		d := ds[0]
		if !strings.HasPrefix(d.ID, "dlv_") || d.WebhookID != w.ID || d.WorkspaceID != ws.ID || d.EventID != evs[0] ||
			d.EventType != link.EventCampaignUpdated || d.Status != link.DeliveryPending || d.Attempts != 0 ||
			d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(at) || !d.CreatedAt.Equal(at) || !d.QueuedAt.Equal(at) {
			t.Fatalf("delivery = %+v", d)
		}
		b := decodeBody(t, d)
		var data eventData
		if err := json.Unmarshal(b.Data, &data); err != nil {
			t.Fatal(err)
		}
		if b.ID != evs[0] || b.Type != link.EventCampaignUpdated || !b.CreatedAt.Equal(at) || b.WorkspaceID != ws.ID || data.ID != c.ID {
			t.Fatalf("body = %+v (%s)", b, b.Data)
		}
		bodies = append(bodies, string(d.Payload))
	}
	if bodies[0] != bodies[1] {
		t.Fatalf("the deliveries of one event differ: %s, %s", bodies[0], bodies[1])
	}

	// An encoder error rolls back the change, the event and the
	// deliveries.
	s.Campaigns.Events = &eventRecorder{Encoder: testEncoder(t), fail: errors.New("no")}
	if _, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{Name: ptr("Fails")}); err == nil {
		t.Fatal("no error from a failing encoder")
	}
	s.Campaigns.Events = nil
	if got := len(events(t, s, ws.ID)); got != 1 {
		t.Fatalf("%d events after a failed change, want 1", got)
	}
	if n := len(deliveries(t, hooks, subscribed)); n != 1 {
		t.Fatalf("%d deliveries after a failed change, want 1", n)
	}

	// Deliveries outlive a reopen, and the subscriptions too.
	db := MustReopen(t, s.DB, s.Clock)
	s = newServices(db, s.Clock)
	hooks = storage.NewWebhookService(db)
	campaignEvents(t, s, c, 1)
	if n := len(deliveries(t, hooks, subscribed)); n != 2 {
		t.Fatalf("%d deliveries after a reopen, want 2", n)
	}

	// Unsubscribing and disabling stop new deliveries; the queue stays.
	if _, err := hooks.UpdateWebhook(ctx, ws.ID, subscribed.ID, link.WebhookUpdate{Events: &[]string{link.EventLinkCreated}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := hooks.UpdateWebhook(ctx, ws.ID, also.ID, link.WebhookUpdate{Enabled: ptr(false)}, nil); err != nil {
		t.Fatal(err)
	}
	campaignEvents(t, s, c, 1)
	if a, b := len(deliveries(t, hooks, subscribed)), len(deliveries(t, hooks, also)); a != 2 || b != 2 {
		t.Fatalf("deliveries after unsubscribing: %d and %d, want 2 and 2", a, b)
	}
	if d := due(t, hooks, s.Clock.Now()); d[also.ID] != nil || d[subscribed.ID] == nil {
		t.Fatalf("due = %v: a disabled webhook's queue must wait, an unsubscribed one's go", d)
	}
	// Enabling subscribes it again.
	if _, err := hooks.UpdateWebhook(ctx, ws.ID, also.ID, link.WebhookUpdate{Enabled: ptr(true)}, nil); err != nil {
		t.Fatal(err)
	}
	campaignEvents(t, s, c, 1)
	if n := len(deliveries(t, hooks, also)); n != 3 {
		t.Fatalf("%d deliveries after enabling, want 3", n)
	}
}

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
	if err := hooks.RecordAttempt(context.Background(), head, link.Attempt{At: s.Clock.Now(), ResponseCode: 500, Error: "HTTP 500"}, &next, ""); err != nil {
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

func TestRecordAttempt_Transitions(t *testing.T) {
	s, _, ws := mustSetup(t)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	w := mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated)
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	campaignEvents(t, s, c, 4)
	now := s.Clock.Now()

	// Success.
	d := due(t, hooks, now)[w.ID]
	if err := hooks.RecordAttempt(ctx, d, link.Attempt{At: now, ResponseCode: 204, Duration: 3 * time.Millisecond}, nil, ""); err != nil {
		t.Fatal(err)
	}
	if d.Status != link.DeliverySucceeded || d.Attempts != 1 || d.ResponseCode != 204 || d.Duration != 3*time.Millisecond || d.NextAttemptAt != nil {
		t.Fatalf("succeeded = %+v", d)
	}
	// A finished delivery takes no more attempts.
	wantCode(t, hooks.RecordAttempt(ctx, d, link.Attempt{At: now}, nil, ""), link.ECONFLICT)

	// Failure given up without disabling: failed, out of the queue.
	d = due(t, hooks, now)[w.ID]
	long := strings.Repeat("é", 2000)
	if err := hooks.RecordAttempt(ctx, d, link.Attempt{At: now, Error: long}, nil, ""); err != nil {
		t.Fatal(err)
	}
	if d.Status != link.DeliveryFailed || d.ResponseCode != 0 || len(d.LastError) > 1024 || !strings.HasPrefix(long, d.LastError) {
		t.Fatalf("failed = %+v", d)
	}

	// Disable: the webhook is disabled with the reason; this delivery stays
	// pending at the head of the queue, the rest behind it, none due.
	d = due(t, hooks, now)[w.ID]
	reason := "disabled after 24 h of failed deliveries: HTTP 500"
	if err := hooks.RecordAttempt(ctx, d, link.Attempt{At: now, ResponseCode: 500, Error: "HTTP 500"}, nil, reason); err != nil {
		t.Fatal(err)
	}
	if d.Status != link.DeliveryPending || d.Attempts != 1 {
		t.Fatalf("disabling attempt left %+v", d)
	}
	wh, err := hooks.FindWebhookByID(ctx, ws.ID, w.ID)
	if err != nil || wh.Enabled || wh.DisabledReason != reason || wh.ConsecutiveFailures != 2 {
		t.Fatalf("webhook = %+v, %v", wh, err)
	}
	ds := deliveries(t, hooks, w)
	if last := ds[3]; last.Status != link.DeliveryPending {
		t.Fatalf("the rest of the queue = %+v", last)
	}
	if got := due(t, hooks, now); len(got) != 0 {
		t.Fatalf("due of a disabled webhook = %v", got)
	}
	hooks.Events = testEncoder(t)
	_, err = hooks.Ping(ctx, ws.ID, w.ID)
	wantCode(t, err, link.ECONFLICT)
	// New events still queue while linkbolt has it disabled: nothing is
	// lost while its receiver is down.
	campaignEvents(t, s, c, 1)
	if n := len(deliveries(t, hooks, w)); n != 5 {
		t.Fatalf("%d deliveries after an event while disabled, want 5", n)
	}

	// Re-enabling clears the reason and the failures; the queue resumes.
	wh, err = hooks.UpdateWebhook(ctx, ws.ID, w.ID, link.WebhookUpdate{Enabled: ptr(true)}, nil)
	if err != nil || !wh.Enabled || wh.DisabledReason != "" || wh.ConsecutiveFailures != 0 {
		t.Fatalf("re-enabled = %+v, %v", wh, err)
	}
	// The delivery that disabled it is first again.
	if got := due(t, hooks, now)[w.ID]; got == nil || got.ID != d.ID {
		t.Fatalf("due after re-enabling = %v, want %s", got, d.ID)
	}

	// A deleted webhook's attempt: ENOTFOUND.
	d = due(t, hooks, now)[w.ID]
	if err := hooks.DeleteWebhook(ctx, ws.ID, w.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, hooks.RecordAttempt(ctx, d, link.Attempt{At: now}, nil, ""), link.ENOTFOUND)
}

func TestPingAndRetry(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	// Subscribed to nothing that happens here: a ping still goes.
	w := mustWebhook(t, hooks, ws.ID, true, link.EventLinkDeleted)
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

func TestDeleteWebhook_DeletesDeliveries(t *testing.T) {
	s, _, ws := mustSetup(t)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	gone := mustWebhook(t, hooks, ws.ID, true, link.EventLinkClicked)
	kept := mustWebhook(t, hooks, ws.ID, true, link.EventLinkClicked)
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})

	// More deliveries than one deletion transaction takes.
	const n = 10_001
	clicks := make([]link.Click, n)
	for i := range clicks {
		clicks[i] = link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0.Add(time.Duration(i) * time.Millisecond)}
	}
	mustRecord(t, s, clicks...)
	d := due(t, hooks, s.Clock.Now())[gone.ID]
	succeed(t, hooks, d, s.Clock.Now())
	if got, queued, _ := s.DB.CountDeliveryRecords(); got != 2*n || queued != 2*n-1 {
		t.Fatalf("%d deliveries, %d queued; want %d, %d", got, queued, 2*n, 2*n-1)
	}
	if err := hooks.DeleteWebhook(ctx, ws.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	if got, queued, _ := s.DB.CountDeliveryRecords(); got != n || queued != n {
		t.Fatalf("after delete: %d deliveries, %d queued; want %d each", got, queued, n)
	}
	if got := due(t, hooks, s.Clock.Now()); len(got) != 1 || got[kept.ID] == nil {
		t.Fatalf("due = %v", got)
	}

	// A deletion cut short after its first step is finished by the prune.
	if err := hooks.StartDeleteWebhook(ws.ID, kept.ID); err != nil {
		t.Fatal(err)
	}
	_, err := hooks.FindWebhookByID(ctx, ws.ID, kept.ID)
	wantCode(t, err, link.ENOTFOUND)
	if got := due(t, hooks, s.Clock.Now()); len(got) != 0 {
		t.Fatalf("due of a webhook being deleted = %v", got)
	}
	if _, err := hooks.PruneDeliveries(ctx, t0); err != nil {
		t.Fatal(err)
	}
	if got, queued, _ := s.DB.CountDeliveryRecords(); got != 0 || queued != 0 {
		t.Fatalf("after the prune: %d deliveries, %d queued", got, queued)
	}
}

func TestPruneDeliveries(t *testing.T) {
	s, _, ws := mustSetup(t)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	w := mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated)
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})

	campaignEvents(t, s, c, 3) // at t0: one succeeds, one fails, one stays pending
	now := s.Clock.Now()
	succeed(t, hooks, due(t, hooks, now)[w.ID], now)
	if err := hooks.RecordAttempt(ctx, due(t, hooks, now)[w.ID], link.Attempt{At: now, Error: "x"}, nil, ""); err != nil {
		t.Fatal(err)
	}
	s.Clock.Add(48 * time.Hour)
	newer := campaignEvents(t, s, c, 1) // pending, recent
	old := deliveries(t, hooks, w)

	// A delivery finished recently (retried by hand) is kept.
	n, err := hooks.PruneDeliveries(ctx, t0.Add(time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v; want 2", n, err)
	}
	left := deliveries(t, hooks, w)
	if len(left) != 2 || left[0].ID != old[2].ID || left[1].ID != old[3].ID {
		t.Fatalf("left %v, want the pending %s and %s", left, old[2].ID, old[3].ID)
	}
	evs := events(t, s, ws.ID)
	if len(evs) != 1 || evs[0].ID != newer[0] {
		t.Fatalf("events left = %v, want %v", evs, newer)
	}
	// The pending old one finishes; it goes once it is older than the cut.
	succeed(t, hooks, due(t, hooks, s.Clock.Now())[w.ID], s.Clock.Now())
	if n, _ := hooks.PruneDeliveries(ctx, t0.Add(time.Hour)); n != 0 {
		t.Fatalf("pruned %d deliveries finished after the cut", n)
	}
	if n, _ := hooks.PruneDeliveries(ctx, s.Clock.Now().Add(time.Second)); n != 1 {
		t.Fatalf("pruned %d, want 1", n)
	}
	if left := deliveries(t, hooks, w); len(left) != 1 || left[0].Status != link.DeliveryPending {
		t.Fatalf("left = %v", left)
	}
}

func TestRecordClicks_ClickedEvents(t *testing.T) {
	s, admin, ws := mustSetup(t)
	quiet := mustWorkspace(t, s, "Quiet", admin.ID)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	w := mustWebhook(t, hooks, ws.ID, true, link.EventLinkClicked)
	notClicks := mustWebhook(t, hooks, quiet.ID, true, link.EventLinkCreated)
	off := mustWebhook(t, hooks, quiet.ID, false, link.EventLinkClicked)
	a := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	q := mustLink(t, s, quiet.ID, &link.Link{Alias: "q"})

	s.Clock.Add(time.Second)
	at := t0.Add(500 * time.Millisecond)
	mustRecord(t, s,
		link.Click{LinkID: a.ID, WorkspaceID: ws.ID, Time: at, Referrer: "news.example", Country: "DE", Device: "mobile",
			Browser: "Firefox", OS: "Android", UserAgent: "Mozilla/5.0 secret-agent", Visitor: 42},
		link.Click{LinkID: q.ID, WorkspaceID: quiet.ID, Time: at},
		link.Click{LinkID: a.ID, WorkspaceID: ws.ID, Time: at.Add(time.Millisecond), Device: "bot", Bot: true},
	)
	for _, x := range []*link.Webhook{notClicks, off} {
		if ds := deliveries(t, hooks, x); len(ds) != 0 {
			t.Fatalf("webhook %s: %v", x.ID, ds)
		}
	}
	if evs := events(t, s, quiet.ID); len(evs) != 0 {
		t.Fatalf("events of a workspace without a subscription: %v", evs)
	}
	// A click's event lives only in its deliveries, not in the events bucket.
	if evs := events(t, s, ws.ID); len(evs) != 0 {
		t.Fatalf("%d click events stored apart from their deliveries", len(evs))
	}
	ds := deliveries(t, hooks, w)
	if len(ds) != 2 {
		t.Fatalf("%d deliveries, want 2", len(ds))
	}
	type clickData struct {
		LinkID   string    `json:"link_id"`
		Time     time.Time `json:"time"`
		Referrer string    `json:"referrer"`
		Country  string    `json:"country"`
		Device   string    `json:"device"`
		Browser  string    `json:"browser"`
		OS       string    `json:"os"`
		Bot      bool      `json:"bot"`
	}
	want := []clickData{
		{a.ID, at, "news.example", "DE", "mobile", "Firefox", "Android", false},
		{a.ID, at.Add(time.Millisecond), "direct", "unknown", "bot", "unknown", "unknown", true},
	}
	for i, d := range ds {
		if strings.Contains(string(d.Payload), "secret-agent") || strings.Contains(string(d.Payload), "visitor") {
			t.Fatalf("payload leaks the user agent or visitor: %s", d.Payload)
		}
		b := decodeBody(t, d)
		var got clickData
		dec := json.NewDecoder(strings.NewReader(string(b.Data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if b.Type != link.EventLinkClicked || !strings.HasPrefix(b.ID, "evt_") || d.EventID != b.ID || (i > 0 && b.ID == ds[0].EventID) || !b.CreatedAt.Equal(s.Clock.Now()) ||
			!got.Time.Equal(want[i].Time) || got.LinkID != want[i].LinkID || got.Referrer != want[i].Referrer ||
			got.Country != want[i].Country || got.Device != want[i].Device || got.Browser != want[i].Browser || got.OS != want[i].OS || got.Bot != want[i].Bot {
			t.Fatalf("click event %d = %+v %+v, want %+v", i, b, got, want[i])
		}
	}

	// Unsubscribed: clicks write no delivery.
	if _, err := hooks.UpdateWebhook(ctx, ws.ID, w.ID, link.WebhookUpdate{Events: &[]string{link.EventLinkCreated}}, nil); err != nil {
		t.Fatal(err)
	}
	mustRecord(t, s, link.Click{LinkID: a.ID, WorkspaceID: ws.ID, Time: at})
	if ds := deliveries(t, hooks, w); len(ds) != 2 {
		t.Fatalf("%d deliveries after unsubscribing, want 2", len(ds))
	}
}

// BenchmarkRecordClicksWebhook records batches of 20,000 clicks on 100
// links with and without a webhook subscribed to link.clicked, which adds
// an event and a delivery per click to the batch's transaction.
func BenchmarkRecordClicksWebhook(b *testing.B) {
	for _, subscribed := range []bool{false, true} {
		b.Run(fmt.Sprintf("subscribed=%v", subscribed), func(b *testing.B) {
			s, _, ws := mustSetup(b)
			if subscribed {
				mustWebhook(b, storage.NewWebhookService(s.DB), ws.ID, true, link.EventLinkClicked)
			}
			var links []*link.Link
			for i := range 100 {
				links = append(links, mustLink(b, s, ws.ID, &link.Link{Alias: fmt.Sprintf("l%d", i)}))
			}
			const size = 20_000
			batch := make([]link.Click, size)
			at := t0
			b.ResetTimer()
			for range b.N {
				for j := range batch {
					l := links[j%len(links)]
					batch[j] = link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: at.Add(time.Duration(j) * time.Microsecond),
						Referrer: "news.example", Country: "DE", Device: "mobile", Browser: "Firefox", OS: "Android", Visitor: uint64(j)}
				}
				at = at.Add(time.Second)
				if _, err := s.Clicks.RecordClicks(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "clicks/s")
		})
	}
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

// TestRecordAttempts_ConcurrentRunsShareCommits: runs recorded at the
// same time by several workers stay whole and are all written.
func TestRecordAttempts_ConcurrentRunsShareCommits(t *testing.T) {
	s, _, ws := mustSetup(t)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	var hs []*link.Webhook
	for range 4 {
		hs = append(hs, mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated))
	}
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	campaignEvents(t, s, c, 20)
	now := s.Clock.Now()
	before := hooks.AttemptTxs()
	errs := make(chan error, len(hs))
	for _, w := range hs {
		go func() {
			for {
				run, err := hooks.NextDeliveries(ctx, w.ID, now, 3)
				if err != nil || len(run) == 0 {
					errs <- err
					return
				}
				var recs []link.AttemptRecord
				for _, d := range run {
					recs = append(recs, link.AttemptRecord{Delivery: d, Attempt: link.Attempt{At: now, ResponseCode: 200}})
				}
				if err := hooks.RecordAttempts(ctx, recs); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range hs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if txs := hooks.AttemptTxs() - before; txs > 4*7 {
		t.Fatalf("%d write transactions for 4 webhooks' 7 runs each", txs)
	}
	for _, w := range hs {
		for _, d := range deliveries(t, hooks, w) {
			if d.Status != link.DeliverySucceeded || d.Attempts != 1 {
				t.Fatalf("%+v", d)
			}
		}
	}
}
