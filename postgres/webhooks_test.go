package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
	"github.com/linkbolt/linkbolt/webhook"
)

// outboxInstances opens n stores over one new database, as instances
// with webhook events, and a plain connection; it makes a workspace with
// a campaign (whose renames queue campaign.updated events) and hooks
// webhooks subscribed to them.
func outboxInstances(t *testing.T, n, hooks int) ([]*link.Store, *pgx.Conn, *link.Campaign, []*link.Webhook) {
	t.Helper()
	u := pgtest.URL(t)
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	enc, err := webhook.NewEncoder(&url.URL{Scheme: "https", Host: "sho.rt"}, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var stores []*link.Store
	for range n {
		s, err := postgres.Open(ctx, postgres.Options{URL: u, Now: clock.Now, Events: enc})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Data.Close() })
		stores = append(stores, s)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	_, ws := bootstrap(t, stores[0])
	c := &link.Campaign{WorkspaceID: ws.ID, Name: "Spring", Status: link.CampaignActive}
	if err := stores[0].Campaigns.CreateCampaign(ctx, c); err != nil {
		t.Fatal(err)
	}
	var whs []*link.Webhook
	for i := range hooks {
		w := &link.Webhook{WorkspaceID: ws.ID, URL: fmt.Sprintf("https://hooks.example.com/%d", i),
			Events: []string{link.EventCampaignUpdated}, Enabled: true, Secret: "whsec_x"}
		if err := stores[0].Webhooks.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
		whs = append(whs, w)
	}
	return stores, conn, c, whs
}

// rename writes a campaign.updated event of c through s.
func rename(s *link.Store, c *link.Campaign, name string) error {
	_, err := s.Campaigns.UpdateCampaign(context.Background(), c.WorkspaceID, c.ID, link.CampaignUpdate{Name: &name})
	return err
}

// pendingIn counts the pending deliveries in the table itself.
func pendingIn(t *testing.T, conn *pgx.Conn) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM deliveries WHERE status = 'pending'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOutboxDepthAcrossInstances: changes queueing deliveries and
// dispatchers recording attempts on two instances at once leave the
// outbox's depth, as every instance reads it, equal to the pending
// deliveries in the table; a transaction rolled back moves it not.
func TestOutboxDepthAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, conn, c, _ := outboxInstances(t, 2, 3)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 4 { // writers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				if err := rename(stores[i%2], c, fmt.Sprintf("Name %d-%d", i, j)); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range 2 { // dispatchers
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[i]
			for range 20 {
				ds, err := s.Webhooks.DueDeliveries(ctx, time.Now().Add(time.Hour), 0)
				if err != nil {
					errs <- err
					return
				}
				for _, d := range ds {
					a := link.Attempt{At: time.Now(), ResponseCode: 200}
					if i == 1 {
						a = link.Attempt{At: time.Now(), Error: "refused"}
					}
					// The other instance may have recorded it first.
					if err := s.Webhooks.RecordAttempts(ctx, []link.AttemptRecord{{Delivery: d, Attempt: a}}); err != nil && link.ErrorCode(err) != link.ECONFLICT {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// A rename refused (no name) rolls back, depth and all.
	if err := rename(stores[0], c, ""); link.ErrorCode(err) != link.EINVALID {
		t.Fatalf("an invalid rename: %v", err)
	}
	want := pendingIn(t, conn)
	for i, s := range stores {
		if got := s.Webhooks.PendingDeliveries(); got != want {
			t.Errorf("instance %d: PendingDeliveries = %d, want the %d pending in the table", i, got, want)
		}
	}
	var total int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM deliveries`).Scan(&total); err != nil || total != 3*40 {
		t.Fatalf("%d deliveries, %v; want 3 webhooks × 40 events", total, err)
	}
}

// TestAttemptRecordedOnce: two instances that took the same due delivery
// (the first's claim ended, as when it died mid-run) and record its
// success at once record one attempt; the other is told it is no longer
// pending.
func TestAttemptRecordedOnce(t *testing.T) {
	t.Parallel()
	stores, _, c, whs := outboxInstances(t, 2, 1)
	ctx := context.Background()
	for round := range 10 {
		if err := rename(stores[0], c, fmt.Sprintf("Round %d", round)); err != nil {
			t.Fatal(err)
		}
		var heads [2]*link.Delivery
		now := time.Now().Add(time.Hour)
		for i, s := range stores {
			ds, err := s.Webhooks.DueDeliveries(ctx, now.Add(time.Duration(i)*postgres.DefaultClaimFor), 0)
			if err != nil || len(ds) != 1 {
				t.Fatalf("due = %+v, %v", ds, err)
			}
			heads[i] = ds[0]
		}
		if heads[0].ID != heads[1].ID {
			t.Fatalf("the instances' heads %s and %s differ", heads[0].ID, heads[1].ID)
		}
		ok := race(t, stores, 2, link.ECONFLICT, func(i int, s *link.Store) error {
			return s.Webhooks.RecordAttempts(ctx, []link.AttemptRecord{{Delivery: heads[i], Attempt: link.Attempt{At: time.Now(), ResponseCode: 200}}})
		})
		if ok != 1 {
			t.Fatalf("round %d: %d instances recorded the success, want 1", round, ok)
		}
		for _, s := range stores {
			if err := s.Webhooks.(webhook.Releaser).ReleaseDelivery(ctx, whs[0].ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	ds, err := stores[0].Webhooks.FindDeliveries(ctx, c.WorkspaceID, whs[0].ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Status != link.DeliverySucceeded || d.Attempts != 1 {
			t.Fatalf("delivery %+v; want succeeded at its one attempt", d)
		}
	}
}

// TestDeleteWebhookWhileEventsQueue: a webhook deleted while changes on
// another instance queue events for it leaves no delivery behind, fails
// none of the changes, and the outbox's depth counts only what is left.
func TestDeleteWebhookWhileEventsQueue(t *testing.T) {
	t.Parallel()
	stores, conn, c, whs := outboxInstances(t, 2, 2)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	begun := make(chan struct{}, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 15 {
				if err := rename(stores[1], c, fmt.Sprintf("Name %d-%d", i, j)); err != nil {
					errs <- err
				}
				if j == 2 {
					begun <- struct{}{}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-begun // in the midst of the renames
		if err := stores[0].Webhooks.DeleteWebhook(ctx, c.WorkspaceID, whs[0].ID); err != nil {
			errs <- err
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var left int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE webhook_id = $1`, whs[0].ID).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d deliveries of the deleted webhook left, %v", left, err)
	}
	if got, want := stores[0].Webhooks.PendingDeliveries(), pendingIn(t, conn); got != want || want != 45 {
		t.Fatalf("PendingDeliveries = %d, %d pending in the table; want 45 (the other webhook's)", got, want)
	}
}

// TestPruneFinishesDeletions: a webhook whose deletion was cut short
// after its first step (marked deleting) is gone, with its deliveries,
// after PruneDeliveries, and the outbox's depth drops by its queue.
func TestPruneFinishesDeletions(t *testing.T) {
	t.Parallel()
	stores, conn, c, whs := outboxInstances(t, 1, 2)
	s := stores[0]
	ctx := context.Background()
	for i := range 5 {
		if err := rename(s, c, fmt.Sprintf("Name %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `UPDATE webhooks SET deleting = true WHERE id = $1`, whs[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Webhooks.FindWebhookByID(ctx, c.WorkspaceID, whs[0].ID); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a webhook being deleted: %v, want ENOTFOUND", err)
	}
	if n, err := s.Webhooks.PruneDeliveries(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneDeliveries = %d, %v", n, err)
	}
	var rows int64
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM webhooks WHERE id = $1) + (SELECT count(*) FROM deliveries WHERE webhook_id = $1)`,
		whs[0].ID).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("%d rows of the deleted webhook left, %v", rows, err)
	}
	if got := s.Webhooks.PendingDeliveries(); got != 5 {
		t.Fatalf("PendingDeliveries = %d, want the other webhook's 5", got)
	}
}

// TestWebhookOfRemovedMember: a member's webhook created on one instance
// while another removes the member is either refused or disabled by the
// removal; it never outlives the removal enabled.
func TestWebhookOfRemovedMember(t *testing.T) {
	t.Parallel()
	stores, conn, clock := instances(t, 2)
	admin, ws := bootstrap(t, stores[0])
	for round := range 8 {
		u := &link.User{Email: fmt.Sprintf("member%d@example.com", round), PasswordHash: []byte("h")}
		if err := stores[0].Users.CreateUser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		join(t, stores[0], clock, ws, admin, u, link.RoleReadWrite)
		ctx := link.WithActor(context.Background(), link.Actor{Type: link.ActorUser, ID: u.ID, Name: u.Email}, "")
		w := &link.Webhook{WorkspaceID: ws.ID, URL: "https://hooks.example.com/x", Events: []string{link.EventLinkCreated},
			Enabled: true, Secret: "whsec_x", CreatedBy: link.KeyCreator{Type: link.CreatorUser, ID: u.ID}}
		race(t, stores, 2, link.EFORBIDDEN, func(i int, s *link.Store) error {
			if i == 0 {
				return s.Webhooks.CreateWebhook(ctx, w)
			}
			return s.Members.RemoveMember(context.Background(), ws.ID, u.ID)
		})
		var enabled int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM webhooks WHERE creator_id = $1 AND enabled`, u.ID).Scan(&enabled); err != nil || enabled != 0 {
			t.Fatalf("round %d: %d webhooks of the removed member enabled, %v", round, enabled, err)
		}
	}
}
