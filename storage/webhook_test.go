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
// renaming a campaign n times, and returns their ids. The outbox keeps
// them only when a webhook of the workspace is subscribed to them.
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
	if err := recordAttempt(context.Background(), hooks, d, link.Attempt{At: at, ResponseCode: 200, Duration: time.Millisecond}, nil, ""); err != nil {
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

// TestOutboxKeepsSubscribedEventsOnly: an event no enabled webhook of the
// workspace is subscribed to leaves nothing in the data file; once one is,
// its events are kept (and delivered).
func TestOutboxKeepsSubscribedEventsOnly(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	s.Links.Events = testEncoder(t)
	hooks := storage.NewWebhookService(s.DB)
	mustLink(t, s, ws.ID, &link.Link{Alias: "unheard", DestinationURL: "https://example.com/a"})
	mustWebhook(t, hooks, ws.ID, false, link.EventLinkCreated)    // disabled
	mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated) // another type
	mustLink(t, s, ws.ID, &link.Link{Alias: "unheard-too", DestinationURL: "https://example.com/b"})
	if evs := events(t, s, ws.ID); len(evs) != 0 {
		t.Fatalf("outbox without a subscriber: %d events", len(evs))
	}
	w := mustWebhook(t, hooks, ws.ID, true, link.EventLinkCreated)
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "heard", DestinationURL: "https://example.com/c"})
	evs := events(t, s, ws.ID)
	if len(evs) != 1 || evs[0].Type != link.EventLinkCreated || !strings.Contains(string(evs[0].Data), l.ID) {
		t.Fatalf("outbox with a subscriber: %+v", evs)
	}
	ds, err := hooks.FindDeliveries(ctx, ws.ID, w.ID, 10)
	if err != nil || len(ds) != 1 || ds[0].EventID != evs[0].ID {
		t.Fatalf("deliveries: %+v, %v", ds, err)
	}
}
