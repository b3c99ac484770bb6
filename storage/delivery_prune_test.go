package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

func TestPruneDeliveries(t *testing.T) {
	s, _, ws := mustSetup(t)
	hooks := storage.NewWebhookService(s.DB)
	ctx := context.Background()
	w := mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated)
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})

	campaignEvents(t, s, c, 3) // at t0: one succeeds, one fails, one stays pending
	now := s.Clock.Now()
	succeed(t, hooks, due(t, hooks, now)[w.ID], now)
	if err := recordAttempt(ctx, hooks, due(t, hooks, now)[w.ID], link.Attempt{At: now, Error: "x"}, nil, ""); err != nil {
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
