package storage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

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
	if err := recordAttempt(ctx, hooks, d, link.Attempt{At: now, ResponseCode: 204, Duration: 3 * time.Millisecond}, nil, ""); err != nil {
		t.Fatal(err)
	}
	if d.Status != link.DeliverySucceeded || d.Attempts != 1 || d.ResponseCode != 204 || d.Duration != 3*time.Millisecond || d.NextAttemptAt != nil {
		t.Fatalf("succeeded = %+v", d)
	}
	// A finished delivery takes no more attempts.
	wantCode(t, recordAttempt(ctx, hooks, d, link.Attempt{At: now}, nil, ""), link.ECONFLICT)

	// Failure given up without disabling: failed, out of the queue.
	d = due(t, hooks, now)[w.ID]
	long := strings.Repeat("é", 2000)
	if err := recordAttempt(ctx, hooks, d, link.Attempt{At: now, Error: long}, nil, ""); err != nil {
		t.Fatal(err)
	}
	if d.Status != link.DeliveryFailed || d.ResponseCode != 0 || len(d.LastError) > 1024 || !strings.HasPrefix(long, d.LastError) {
		t.Fatalf("failed = %+v", d)
	}

	// Disable: the webhook is disabled with the reason; this delivery stays
	// pending at the head of the queue, the rest behind it, none due.
	d = due(t, hooks, now)[w.ID]
	reason := "disabled after 24 h of failed deliveries: HTTP 500"
	if err := recordAttempt(ctx, hooks, d, link.Attempt{At: now, ResponseCode: 500, Error: "HTTP 500"}, nil, reason); err != nil {
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
	wantCode(t, recordAttempt(ctx, hooks, d, link.Attempt{At: now}, nil, ""), link.ENOTFOUND)
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

// recordAttempt records one attempt as the dispatcher does, through
// RecordAttempts, and returns its error.
func recordAttempt(ctx context.Context, hooks *storage.WebhookService, d *link.Delivery, a link.Attempt, next *time.Time, disable string) error {
	return hooks.RecordAttempts(ctx, []link.AttemptRecord{{Delivery: d, Attempt: a, Next: next, Disable: disable}})
}
