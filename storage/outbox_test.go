package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// TestPendingDeliveries: the outbox depth metrics read is a counter; it
// must equal the real number of queued deliveries through every way a
// delivery is queued or leaves the queue, and across a restart.
func TestPendingDeliveries(t *testing.T) {
	s, _, ws := mustSetup(t)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	check := func(step string) {
		t.Helper()
		_, queued, _ := s.DB.CountDeliveryRecords()
		if got, want := hooks.PendingDeliveries(), int64(queued); got != want {
			t.Fatalf("%s: PendingDeliveries = %d, want %d (the queue's entries)", step, got, want)
		}
	}
	check("empty")
	a := mustWebhook(t, hooks, ws.ID, true, link.EventLinkClicked, link.EventCampaignUpdated)
	b := mustWebhook(t, hooks, ws.ID, true, link.EventLinkClicked)
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	clicks := make([]link.Click, 100)
	for i := range clicks {
		clicks[i] = link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0.Add(time.Duration(i) * time.Millisecond)}
	}
	mustRecord(t, s, clicks...)
	check("after a batch of clicks")
	if got, want := hooks.PendingDeliveries(), int64(200); got != want {
		t.Fatalf("PendingDeliveries = %d, want %d", got, want)
	}
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	campaignEvents(t, s, c, 2)
	check("after campaign events")

	succeed(t, hooks, due(t, hooks, s.Clock.Now())[a.ID], s.Clock.Now())
	check("after a delivery succeeded")
	next := s.Clock.Now().Add(time.Minute)
	if err := recordAttempt(ctx, hooks, due(t, hooks, s.Clock.Now())[a.ID], link.Attempt{At: s.Clock.Now(), Error: "refused"}, &next, ""); err != nil {
		t.Fatal(err)
	}
	check("after a failed attempt to retry")
	failed := due(t, hooks, s.Clock.Now())[b.ID]
	if err := recordAttempt(ctx, hooks, failed, link.Attempt{At: s.Clock.Now(), Error: "refused"}, nil, ""); err != nil {
		t.Fatal(err)
	}
	check("after a delivery was given up")
	if _, err := hooks.RetryDelivery(ctx, ws.ID, b.ID, failed.ID); err != nil {
		t.Fatal(err)
	}
	check("after a retry by hand")
	hooks.Events = testEncoder(t)
	if _, err := hooks.Ping(ctx, ws.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	check("after a ping")
	if err := hooks.DeleteWebhook(ctx, ws.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	check("after a webhook was deleted")
	if hooks.PendingDeliveries() == 0 {
		t.Fatal("nothing left queued: the test proves too little")
	}

	s.DB = MustReopen(t, s.DB, s.Clock)
	hooks = storage.NewWebhookService(s.DB)
	check("after a restart")
}
