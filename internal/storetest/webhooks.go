package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var webhookTests = []test{
	{"CreateFindUpdateDelete", testWebhooksCRUD},
	{"EventsIntoOutbox", testWebhooksEvents},
	{"OutboxKeepsSubscribedOnly", testWebhooksSubscribed},
	{"DeliveriesInOrder", testWebhooksDue},
	{"RetriesAndFailures", testWebhooksRetries},
	{"PingAndRetryByHand", testWebhooksPing},
	{"PendingDeliveries", testWebhooksPending},
	{"PruneDeliveries", testWebhooksPrune},
}

func testWebhooksCRUD(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	a := e.webhook(ws.ID, link.EventLinkCreated, link.EventCampaignUpdated)
	if a.ID == "" || !a.CreatedAt.Equal(e.now()) || !a.UpdatedAt.Equal(e.now()) {
		t.Fatalf("created webhook = %+v", a)
	}
	e.clock.Add(time.Minute)
	b := e.webhook(ws.ID, link.EventLinkClicked)
	o := e.webhook(other.ID, link.EventLinkClicked)

	got, err := e.Webhooks.FindWebhookByID(e.ctx, ws.ID, a.ID)
	if err != nil || got.URL != a.URL || got.Secret != a.Secret || !slices.Equal(got.Events, a.Events) || !got.Enabled || got.WorkspaceID != ws.ID {
		t.Fatalf("FindWebhookByID = %+v, %v; want %+v", got, err, a)
	}
	if list, err := e.Webhooks.FindWebhooks(e.ctx, ws.ID); err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("FindWebhooks = %+v, %v; want b, a (newest first)", list, err)
	}
	for _, tt := range [][2]string{{ws.ID, o.ID}, {other.ID, a.ID}, {ws.ID, "wh_unknown"}} {
		_, err := e.Webhooks.FindWebhookByID(e.ctx, tt[0], tt[1])
		wantCode(t, err, link.ENOTFOUND)
	}
	wantCode(t, e.Webhooks.CreateWebhook(e.ctx, &link.Webhook{WorkspaceID: ws.ID, URL: "https://x.example/", Events: []string{link.EventLinkClicked}}), link.EINVALID)
	wantCode(t, e.Webhooks.CreateWebhook(e.ctx, &link.Webhook{WorkspaceID: "ws_unknown", URL: "https://x.example/", Events: []string{link.EventLinkClicked}, Secret: "s"}), link.ENOTFOUND)

	// Update: the result is validated, validate sees it, and its error
	// comes back unchanged with nothing written.
	e.clock.Add(time.Minute)
	var seen *link.Webhook
	upd, err := e.Webhooks.UpdateWebhook(e.ctx, ws.ID, a.ID, link.WebhookUpdate{URL: ptr(" https://new.example/h "), Events: &[]string{link.EventLinkDeleted}},
		func(w *link.Webhook) error { seen = w; return nil })
	if err != nil || upd.URL != "https://new.example/h" || !slices.Equal(upd.Events, []string{link.EventLinkDeleted}) || !upd.UpdatedAt.Equal(e.now()) ||
		seen == nil || seen.URL != upd.URL {
		t.Fatalf("UpdateWebhook = %+v, %v (validate saw %+v)", upd, err, seen)
	}
	_, err = e.Webhooks.UpdateWebhook(e.ctx, ws.ID, a.ID, link.WebhookUpdate{Events: &[]string{"link.nope"}}, nil)
	wantCode(t, err, link.EINVALID)
	refused := errors.New("refused")
	if _, err := e.Webhooks.UpdateWebhook(e.ctx, ws.ID, a.ID, link.WebhookUpdate{URL: ptr("http://127.0.0.1/")}, func(*link.Webhook) error { return refused }); err != refused {
		t.Fatalf("UpdateWebhook = %v, want validate's error unchanged", err)
	}
	_, err = e.Webhooks.UpdateWebhook(e.ctx, other.ID, a.ID, link.WebhookUpdate{}, nil)
	wantCode(t, err, link.ENOTFOUND)
	if got, _ := e.Webhooks.FindWebhookByID(e.ctx, ws.ID, a.ID); got.URL != "https://new.example/h" {
		t.Fatalf("a refused update was written: %+v", got)
	}

	// Roll: the old secret signs beside the new one until the grace ends.
	grace := e.now().Add(24 * time.Hour)
	rolled, err := e.Webhooks.RollSecret(e.ctx, ws.ID, a.ID, "whsec_new", grace)
	if err != nil || rolled.Secret != "whsec_new" || rolled.PreviousSecret != a.Secret || rolled.PreviousSecretExpiresAt == nil || !rolled.PreviousSecretExpiresAt.Equal(grace) {
		t.Fatalf("RollSecret = %+v, %v", rolled, err)
	}
	_, err = e.Webhooks.RollSecret(e.ctx, other.ID, a.ID, "x", grace)
	wantCode(t, err, link.ENOTFOUND)

	e.restart()
	if got, err := e.Webhooks.FindWebhookByID(e.ctx, ws.ID, a.ID); err != nil || got.Secret != "whsec_new" || got.PreviousSecret != a.Secret {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
	wantCode(t, e.Webhooks.DeleteWebhook(e.ctx, other.ID, a.ID), link.ENOTFOUND)
	if err := e.Webhooks.DeleteWebhook(e.ctx, ws.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	_, err = e.Webhooks.FindWebhookByID(e.ctx, ws.ID, a.ID)
	wantCode(t, err, link.ENOTFOUND)
	wantCode(t, e.Webhooks.DeleteWebhook(e.ctx, ws.ID, a.ID), link.ENOTFOUND)
	if list, _ := e.Webhooks.FindWebhooks(e.ctx, ws.ID); len(list) != 1 || list[0].ID != b.ID {
		t.Fatalf("FindWebhooks after a delete = %+v", list)
	}
	got2 := actions(e.audit(link.AuditFilter{WorkspaceID: ws.ID, Target: a.ID}))
	for _, want := range []string{link.AuditWebhookCreated, link.AuditWebhookUpdated, link.AuditWebhookSecretRoll, link.AuditWebhookDeleted} {
		if !slices.Contains(got2, want) {
			t.Errorf("the webhook's entries %v lack %s", got2, want)
		}
	}
}

// eventTypes returns the types of events, in their order.
func eventTypes(evs []*link.Event) []string {
	out := []string{}
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func testWebhooksEvents(t *testing.T, e *env) {
	_, ws := e.setup()
	c := e.campaign(ws.ID, &link.Campaign{Name: "Spring"})
	w := e.webhook(ws.ID, link.EventTypes...)
	l := e.link(ws.ID, &link.Link{Alias: "ev"})
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, l.ID, link.LinkUpdate{DestinationURL: ptr("https://example.com/new")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Campaigns.UpdateCampaign(e.ctx, ws.ID, c.ID, link.CampaignUpdate{Name: ptr("Autumn")}); err != nil {
		t.Fatal(err)
	}
	// An update that changes nothing writes no campaign.updated.
	if _, err := e.Campaigns.UpdateCampaign(e.ctx, ws.ID, c.ID, link.CampaignUpdate{Name: ptr("Autumn")}); err != nil {
		t.Fatal(err)
	}
	e.record(click(l, e.now(), 1))
	if err := e.Links.DeleteLink(e.ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	// The outbox lists the events of changes, oldest first (a store may
	// list clicks' events too, or keep them in their deliveries only).
	evs := slices.DeleteFunc(e.eventsOf(ws.ID), func(ev *link.Event) bool { return ev.Type == link.EventLinkClicked })
	want := []string{link.EventLinkCreated, link.EventLinkUpdated, link.EventCampaignUpdated, link.EventLinkDeleted}
	if got := eventTypes(evs); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v (oldest first)", got, want)
	}
	for _, ev := range evs {
		if ev.ID == "" || ev.WorkspaceID != ws.ID || len(ev.Data) == 0 {
			t.Fatalf("event %+v", ev)
		}
	}
	// FindEvents pages after an event.
	if got := e.eventsAfter(ws.ID, evs[0].ID, 2); !slices.Equal(eventTypes(got), want[1:3]) {
		t.Fatalf("events after the first, at most 2: %v", eventTypes(got))
	}
	if got := e.eventsAfter(ws.ID, evs[3].ID, 10); len(got) != 0 {
		t.Fatalf("events after the last: %v", eventTypes(got))
	}
	// Each event is a delivery of the webhook, its body from the encoder.
	ds := e.deliveries(w)
	slices.Reverse(ds)
	var types []string
	for _, d := range ds {
		p := e.decode(d)
		if d.Status != link.DeliveryPending || d.WebhookID != w.ID || d.WorkspaceID != ws.ID || d.EventID == "" ||
			p.ID != d.EventID || p.Type != d.EventType || p.WorkspaceID != ws.ID {
			t.Fatalf("delivery %+v, body %+v", d, p)
		}
		if i := slices.IndexFunc(evs, func(ev *link.Event) bool { return ev.ID == d.EventID }); i >= 0 && evs[i].Type != d.EventType {
			t.Fatalf("delivery of event %s is of type %s, the event %s", d.EventID, d.EventType, evs[i].Type)
		}
		types = append(types, d.EventType)
	}
	wantDeliveries := []string{link.EventLinkCreated, link.EventLinkUpdated, link.EventCampaignUpdated, link.EventLinkClicked, link.EventLinkDeleted}
	if !slices.Equal(types, wantDeliveries) {
		t.Fatalf("deliveries of %v, want %v (oldest first)", types, wantDeliveries)
	}
	if got := string(e.decode(ds[3]).Data); got != `{"bot":false,"link_id":"`+l.ID+`","referrer":"news.example.org"}` {
		t.Fatalf("link.clicked data = %s", got)
	}
	if got := e.decode(ds[0]).Data; string(got) != `{"alias":"ev","destination_url":"`+l.DestinationURL+`","id":"`+l.ID+`"}` {
		t.Fatalf("link.created data = %s", got)
	}
	e.restart()
	after := slices.DeleteFunc(e.eventsOf(ws.ID), func(ev *link.Event) bool { return ev.Type == link.EventLinkClicked })
	if got := eventTypes(after); !slices.Equal(got, want) {
		t.Fatalf("events after a restart: %v", got)
	}
}

// eventsAfter returns the workspace's events after an event, at most limit.
func (e *env) eventsAfter(wsID, after string, limit int) []*link.Event {
	e.t.Helper()
	evs, err := e.Campaigns.FindEvents(e.ctx, wsID, after, limit)
	if err != nil {
		e.t.Fatalf("find events: %v", err)
	}
	return evs
}

func testWebhooksSubscribed(t *testing.T, e *env) {
	admin, ws := e.setup()
	quiet := e.workspace("Quiet", admin)
	w := e.webhook(ws.ID, link.EventLinkDeleted)
	e.link(quiet.ID, &link.Link{})
	l := e.link(ws.ID, &link.Link{})
	e.record(click(l, e.now(), 1))
	if err := e.Links.DeleteLink(e.ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	if got := eventTypes(e.eventsOf(ws.ID)); !slices.Equal(got, []string{link.EventLinkDeleted}) {
		t.Fatalf("events with a webhook of link.deleted only: %v", got)
	}
	if got := e.eventsOf(quiet.ID); len(got) != 0 {
		t.Fatalf("a workspace without webhooks keeps events %v", eventTypes(got))
	}
	// A disabled webhook is sent nothing.
	if _, err := e.Webhooks.UpdateWebhook(e.ctx, ws.ID, w.ID, link.WebhookUpdate{Enabled: ptr(false)}, nil); err != nil {
		t.Fatal(err)
	}
	if ds, err := e.Webhooks.DueDeliveries(e.ctx, e.now(), 0); err != nil || len(ds) != 0 {
		t.Fatalf("due deliveries of a disabled webhook: %+v, %v", ds, err)
	}
}

// delivery returns the delivery id of w.
func (e *env) delivery(w *link.Webhook, id string) *link.Delivery {
	e.t.Helper()
	for _, d := range e.deliveries(w) {
		if d.ID == id {
			return d
		}
	}
	e.t.Fatalf("webhook %s has no delivery %s", w.ID, id)
	return nil
}

// due returns the deliveries due at now, by webhook.
func (e *env) due(now time.Time) map[string]*link.Delivery {
	e.t.Helper()
	ds, err := e.Webhooks.DueDeliveries(e.ctx, now, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]*link.Delivery{}
	for _, d := range ds {
		if out[d.WebhookID] != nil {
			e.t.Fatalf("two due deliveries of webhook %s", d.WebhookID)
		}
		out[d.WebhookID] = d
	}
	return out
}

// attempt records the outcome of a try of d.
func (e *env) attempt(d *link.Delivery, code int, next *time.Time, disable string) {
	e.t.Helper()
	a := link.Attempt{At: e.now(), ResponseCode: code, Duration: time.Millisecond}
	if code < 200 || code > 299 {
		a.Error = "HTTP error"
	}
	if err := e.Webhooks.RecordAttempts(e.ctx, []link.AttemptRecord{{Delivery: d, Attempt: a, Next: next, Disable: disable}}); err != nil {
		e.t.Fatalf("record attempt of %s: %v", d.ID, err)
	}
}

// renames writes n campaign.updated events of c.
func (e *env) renames(c *link.Campaign, n int) []string {
	e.t.Helper()
	var ids []string
	for range n {
		name := fmt.Sprintf("Campaign %d", seq.Add(1))
		if _, err := e.Campaigns.UpdateCampaign(e.ctx, c.WorkspaceID, c.ID, link.CampaignUpdate{Name: &name}); err != nil {
			e.t.Fatal(err)
		}
		evs := e.eventsOf(c.WorkspaceID)
		ids = append(ids, evs[len(evs)-1].ID)
	}
	return ids
}

func testWebhooksDue(t *testing.T, e *env) {
	_, ws := e.setup()
	c := e.campaign(ws.ID, &link.Campaign{Name: "Spring"})
	a := e.webhook(ws.ID, link.EventCampaignUpdated)
	b := e.webhook(ws.ID, link.EventCampaignUpdated)
	evs := e.renames(c, 3)
	for i := range evs {
		got := e.due(e.now())
		if len(got) != 2 || got[a.ID] == nil || got[b.ID] == nil || got[a.ID].EventID != evs[i] || got[b.ID].EventID != evs[i] {
			t.Fatalf("round %d: due %+v; want each webhook's delivery of event %d", i, got, i)
		}
		// Only an attempt moves a queue on.
		if again := e.due(e.now()); again[a.ID].ID != got[a.ID].ID {
			t.Fatalf("the queue moved without an attempt")
		}
		e.attempt(got[a.ID], 200, nil, "")
		e.attempt(got[b.ID], 204, nil, "")
	}
	if got := e.due(e.now()); len(got) != 0 {
		t.Fatalf("due after every delivery succeeded: %+v", got)
	}
	ds := e.deliveries(a)
	if len(ds) != 3 || ds[0].Status != link.DeliverySucceeded || ds[0].Attempts != 1 || ds[0].ResponseCode != 200 {
		t.Fatalf("a's deliveries = %+v", ds)
	}
	// NextDeliveries gives a webhook's run in order.
	evs = e.renames(c, 3)
	run, err := e.Webhooks.NextDeliveries(e.ctx, a.ID, e.now(), 2)
	if err != nil || len(run) != 2 || run[0].EventID != evs[0] || run[1].EventID != evs[1] {
		t.Fatalf("NextDeliveries(2) = %+v, %v", run, err)
	}
	recs := []link.AttemptRecord{
		{Delivery: run[0], Attempt: link.Attempt{At: e.now(), ResponseCode: 200}},
		{Delivery: run[1], Attempt: link.Attempt{At: e.now(), ResponseCode: 200}},
	}
	if err := e.Webhooks.RecordAttempts(e.ctx, recs); err != nil {
		t.Fatal(err)
	}
	if run, err := e.Webhooks.NextDeliveries(e.ctx, a.ID, e.now(), 10); err != nil || len(run) != 1 || run[0].EventID != evs[2] {
		t.Fatalf("NextDeliveries after a run = %+v, %v", run, err)
	}
}

func testWebhooksRetries(t *testing.T, e *env) {
	_, ws := e.setup()
	c := e.campaign(ws.ID, &link.Campaign{Name: "Spring"})
	a := e.webhook(ws.ID, link.EventCampaignUpdated)
	b := e.webhook(ws.ID, link.EventCampaignUpdated)
	evs := e.renames(c, 3)
	// A head waiting for its retry holds back its own webhook only.
	head := e.due(e.now())[a.ID]
	retry := e.now().Add(time.Minute)
	e.attempt(head, 500, &retry, "")
	got := e.due(e.now())
	if got[a.ID] != nil || got[b.ID] == nil || got[b.ID].EventID != evs[0] {
		t.Fatalf("due while a's head waits = %+v", got)
	}
	if run, _ := e.Webhooks.NextDeliveries(e.ctx, a.ID, e.now(), 10); len(run) != 0 {
		t.Fatalf("NextDeliveries while the head waits = %+v", run)
	}
	if wh, _ := e.Webhooks.FindWebhookByID(e.ctx, ws.ID, a.ID); wh.ConsecutiveFailures != 1 {
		t.Fatalf("consecutive failures = %d, want 1", wh.ConsecutiveFailures)
	}
	ds := e.deliveries(a)
	if d := ds[len(ds)-1]; d.ID != head.ID || d.Status != link.DeliveryPending || d.Attempts != 1 || d.ResponseCode != 500 ||
		d.LastError == "" || d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(retry) {
		t.Fatalf("the retrying delivery = %+v", d)
	}
	e.clock.Set(retry)
	if got := e.due(e.now())[a.ID]; got == nil || got.ID != head.ID {
		t.Fatalf("due at the retry = %+v, want a's head", got)
	}
	e.attempt(head, 200, nil, "")
	if wh, _ := e.Webhooks.FindWebhookByID(e.ctx, ws.ID, a.ID); wh.ConsecutiveFailures != 0 {
		t.Fatalf("consecutive failures after a success = %d, want 0", wh.ConsecutiveFailures)
	}
	// Without a retry: failed, and out of the queue.
	failed := e.due(e.now())[a.ID]
	e.attempt(failed, 0, nil, "")
	if d := e.delivery(a, failed.ID); d.Status != link.DeliveryFailed || d.Attempts != 1 {
		t.Fatalf("a delivery given up = %+v", d)
	}
	// Given up with the webhook: it is disabled with the reason, and
	// sends nothing meanwhile.
	last := e.due(e.now())[a.ID]
	if last == nil || last.ID == failed.ID || last.EventID != evs[2] {
		t.Fatalf("due after a failure = %+v, want the next event's delivery", last)
	}
	e.attempt(last, 0, nil, "too many failures")
	wh, err := e.Webhooks.FindWebhookByID(e.ctx, ws.ID, a.ID)
	if err != nil || wh.Enabled || wh.DisabledReason != "too many failures" {
		t.Fatalf("the webhook after giving up = %+v, %v", wh, err)
	}
	if d := e.delivery(a, last.ID); d.Status == link.DeliverySucceeded || d.Attempts != 1 {
		t.Fatalf("the delivery that disabled its webhook = %+v", d)
	}
	if got := e.due(e.now().Add(time.Hour))[a.ID]; got != nil {
		t.Fatalf("a disabled webhook has a due delivery %+v", got)
	}
	// Enabling it again clears the reason.
	wh, err = e.Webhooks.UpdateWebhook(e.ctx, ws.ID, a.ID, link.WebhookUpdate{Enabled: ptr(true)}, nil)
	if err != nil || !wh.Enabled || wh.DisabledReason != "" {
		t.Fatalf("enabled again = %+v, %v", wh, err)
	}
}

func testWebhooksPing(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	w := e.webhook(ws.ID, link.EventLinkDeleted)
	e.clock.Add(time.Minute)
	ping, err := e.Webhooks.Ping(e.ctx, ws.ID, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	p := e.decode(ping)
	if ping.ID == "" || ping.EventType != link.EventPing || ping.Status != link.DeliveryPending || ping.WebhookID != w.ID ||
		p.ID != ping.EventID || p.Type != link.EventPing || p.WorkspaceID != ws.ID || string(p.Data) != `{"ping":true}` {
		t.Fatalf("ping = %+v, body %+v", ping, p)
	}
	_, err = e.Webhooks.Ping(e.ctx, other.ID, w.ID)
	wantCode(t, err, link.ENOTFOUND)
	// A pending delivery is not retried by hand.
	_, err = e.Webhooks.RetryDelivery(e.ctx, ws.ID, w.ID, ping.ID)
	wantCode(t, err, link.ECONFLICT)
	second, err := e.Webhooks.Ping(e.ctx, ws.ID, w.ID)
	if err != nil || second.EventID == ping.EventID {
		t.Fatalf("second ping = %+v, %v", second, err)
	}
	if d := e.due(e.now())[w.ID]; d == nil || d.ID != ping.ID {
		t.Fatalf("due = %+v, want the first ping", d)
	}
	e.attempt(ping, 500, nil, "")
	// Retried by hand, a finished delivery goes behind the queue, with
	// its ID and body.
	e.clock.Add(time.Minute)
	r, err := e.Webhooks.RetryDelivery(e.ctx, ws.ID, w.ID, ping.ID)
	if err != nil || r.ID != ping.ID || r.Status != link.DeliveryPending || !r.QueuedAt.Equal(e.now()) || string(r.Payload) != string(ping.Payload) {
		t.Fatalf("RetryDelivery = %+v, %v", r, err)
	}
	if d := e.due(e.now())[w.ID]; d == nil || d.ID != second.ID {
		t.Fatalf("due = %+v, want the second ping before the retried one", d)
	}
	e.attempt(second, 200, nil, "")
	if d := e.due(e.now())[w.ID]; d == nil || d.ID != ping.ID {
		t.Fatalf("due = %+v, want the retried ping", d)
	}
	for _, tt := range [][3]string{{other.ID, w.ID, ping.ID}, {ws.ID, w.ID, "dlv_unknown"}, {ws.ID, "wh_unknown", ping.ID}} {
		_, err := e.Webhooks.RetryDelivery(e.ctx, tt[0], tt[1], tt[2])
		wantCode(t, err, link.ENOTFOUND)
	}
	// A disabled webhook is not pinged.
	if _, err := e.Webhooks.UpdateWebhook(e.ctx, ws.ID, w.ID, link.WebhookUpdate{Enabled: ptr(false)}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.Webhooks.Ping(e.ctx, ws.ID, w.ID)
	wantCode(t, err, link.ECONFLICT)
}

func testWebhooksPending(t *testing.T, e *env) {
	_, ws := e.setup()
	if got := e.Webhooks.PendingDeliveries(); got != 0 {
		t.Fatalf("PendingDeliveries of a new store = %d", got)
	}
	a := e.webhook(ws.ID, link.EventLinkClicked, link.EventCampaignUpdated)
	e.webhook(ws.ID, link.EventLinkClicked)
	l := e.link(ws.ID, &link.Link{})
	clicks := make([]link.Click, 10)
	for i := range clicks {
		clicks[i] = click(l, t0.Add(time.Duration(i)*time.Second), uint64(i))
	}
	e.record(clicks...)
	if got := e.Webhooks.PendingDeliveries(); got != 20 {
		t.Fatalf("PendingDeliveries after 10 clicks to 2 webhooks = %d, want 20", got)
	}
	e.attempt(e.due(e.now())[a.ID], 200, nil, "")
	if got := e.Webhooks.PendingDeliveries(); got != 19 {
		t.Fatalf("PendingDeliveries after a success = %d, want 19", got)
	}
	retry := e.now().Add(time.Minute)
	e.attempt(e.due(e.now())[a.ID], 500, &retry, "")
	if got := e.Webhooks.PendingDeliveries(); got != 19 {
		t.Fatalf("PendingDeliveries after a failure to retry = %d, want 19", got)
	}
	e.restart()
	if got := e.Webhooks.PendingDeliveries(); got != 19 {
		t.Fatalf("PendingDeliveries after a restart = %d, want 19", got)
	}
	if err := e.Webhooks.DeleteWebhook(e.ctx, ws.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.Webhooks.PendingDeliveries(); got != 10 {
		t.Fatalf("PendingDeliveries after a webhook's deletion = %d, want 10", got)
	}
}

func testWebhooksPrune(t *testing.T, e *env) {
	_, ws := e.setup()
	c := e.campaign(ws.ID, &link.Campaign{Name: "Spring"})
	w := e.webhook(ws.ID, link.EventCampaignUpdated)
	start := e.now()
	e.renames(c, 3) // one succeeds, one fails, one stays pending
	e.attempt(e.due(e.now())[w.ID], 200, nil, "")
	e.attempt(e.due(e.now())[w.ID], 500, nil, "")
	e.clock.Add(48 * time.Hour)
	newer := e.renames(c, 1)
	old := e.deliveries(w)
	slices.Reverse(old)

	n, err := e.Webhooks.PruneDeliveries(e.ctx, start.Add(time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("PruneDeliveries = %d, %v; want the 2 finished", n, err)
	}
	left := e.deliveries(w)
	if len(left) != 2 || left[1].ID != old[2].ID || left[0].ID != old[3].ID {
		t.Fatalf("left %+v; want the pending %s and %s", left, old[2].ID, old[3].ID)
	}
	if evs := e.eventsOf(ws.ID); len(evs) == 0 || evs[len(evs)-1].ID != newer[0] {
		t.Fatalf("events left = %v; want the newest kept", eventTypes(evs))
	}
	// A delivery that finishes after the cut stays until it is older.
	e.attempt(e.due(e.now())[w.ID], 200, nil, "")
	if n, _ := e.Webhooks.PruneDeliveries(e.ctx, start.Add(time.Hour)); n != 0 {
		t.Fatalf("pruned %d deliveries finished after the cut", n)
	}
	if n, _ := e.Webhooks.PruneDeliveries(e.ctx, e.now().Add(time.Second)); n != 1 {
		t.Fatalf("pruned %d, want 1", n)
	}
	if left := e.deliveries(w); len(left) != 1 || left[0].Status != link.DeliveryPending {
		t.Fatalf("left = %+v", left)
	}
}
