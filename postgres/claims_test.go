package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
	"github.com/linkbolt/linkbolt/webhook"
)

// receiver is a webhook receiver that counts the requests of each
// delivery id and each event id (the body's "id").
type receiver struct {
	mu         sync.Mutex
	deliveries map[string]int
	events     map[string]int
	// hold, when set, is called with each request before it is answered.
	hold func(r *http.Request) bool
}

func newReceiver(t *testing.T) (*receiver, *httptest.Server) {
	rc := &receiver{deliveries: map[string]int{}, events: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if rc.hold != nil && !rc.hold(r) {
			return
		}
		var ev struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" {
			t.Errorf("body %q: %v", body, err)
		}
		rc.mu.Lock()
		rc.deliveries[r.Header.Get(webhook.HeaderDelivery)]++
		rc.events[ev.ID]++
		rc.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return rc, srv
}

func (rc *receiver) counts() (deliveries, events map[string]int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return maps(rc.deliveries), maps(rc.events)
}

func maps(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// claimInstances opens n stores over one new database with a shared
// clock, a workspace with a campaign and hooks webhooks to srv.
func claimInstances(t *testing.T, n, hooks int, clock *clocktest.Clock, srv *httptest.Server) ([]*link.Store, *link.Campaign, []*link.Webhook) {
	t.Helper()
	return claimInstancesOn(t, pgtest.URL(t), n, hooks, clock, srv)
}

func claimInstancesOn(t *testing.T, u string, n, hooks int, clock *clocktest.Clock, srv *httptest.Server) ([]*link.Store, *link.Campaign, []*link.Webhook) {
	t.Helper()
	enc, err := webhook.NewEncoder(&url.URL{Scheme: "https", Host: "sho.rt"}, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var stores []*link.Store
	for i := range n {
		s, err := postgres.Open(ctx, postgres.Options{URL: u, Now: clock.Now, Events: enc, Instance: fmt.Sprintf("node%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Data.Close() })
		stores = append(stores, s)
	}
	_, ws := bootstrap(t, stores[0])
	c := &link.Campaign{WorkspaceID: ws.ID, Name: "Spring", Status: link.CampaignActive}
	if err := stores[0].Campaigns.CreateCampaign(ctx, c); err != nil {
		t.Fatal(err)
	}
	var whs []*link.Webhook
	for i := range hooks {
		w := &link.Webhook{WorkspaceID: ws.ID, URL: fmt.Sprintf("%s/%d", srv.URL, i),
			Events: []string{link.EventCampaignUpdated}, Enabled: true, Secret: "whsec_x"}
		if err := stores[0].Webhooks.CreateWebhook(ctx, w); err != nil {
			t.Fatal(err)
		}
		whs = append(whs, w)
	}
	return stores, c, whs
}

// TestDispatchersSendOnce: three dispatchers on three instances of one
// database, running at once while events are written, send every
// delivery once: one request per delivery id, and per event id one per
// webhook.
func TestDispatchersSendOnce(t *testing.T) {
	t.Parallel()
	rc, srv := newReceiver(t)
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	const hooks, events = 4, 60
	stores, c, _ := claimInstances(t, 3, hooks, clock, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range stores {
		d := &webhook.Dispatcher{Store: s.Webhooks, Now: clock.Now, Client: webhook.NewClient(true),
			Poll: 5 * time.Millisecond, RunLength: 3, Workers: 2}
		wg.Add(1)
		go func() { defer wg.Done(); d.Run(ctx) }()
	}
	for i := range events {
		if err := rename(stores[i%len(stores)], c, fmt.Sprintf("Name %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ds, _ := rc.counts()
		if len(ds) == hooks*events {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries received, want %d", len(ds), hooks*events)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Received is not yet recorded: each sender writes its delivery done
	// after the answer. Wait for that too before stopping them.
	for pending := int64(-1); pending != 0; {
		pending = 0
		for _, s := range stores {
			pending += s.Webhooks.PendingDeliveries()
		}
		if pending != 0 && time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending after every one was received", pending)
		}
		if pending != 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	cancel()
	wg.Wait()
	ds, evs := rc.counts()
	for id, n := range ds {
		if n != 1 {
			t.Errorf("delivery %s sent %d times, want once", id, n)
		}
	}
	if len(evs) != events {
		t.Errorf("%d event ids, want %d", len(evs), events)
	}
	for id, n := range evs {
		if n != hooks {
			t.Errorf("event %s received %d times, want once by each of the %d webhooks", id, n, hooks)
		}
	}
	for _, s := range stores {
		if n := s.Webhooks.PendingDeliveries(); n != 0 {
			t.Errorf("%d deliveries pending, want none", n)
		}
	}
}

// TestClaimOfDeadInstanceEnds: an instance that claimed a webhook's queue
// and died before recording holds it until its claim ends; then another
// instance sends the delivery, with its delivery id and event id.
func TestClaimOfDeadInstanceEnds(t *testing.T) {
	t.Parallel()
	rc, srv := newReceiver(t)
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	stores, c, _ := claimInstances(t, 2, 1, clock, srv)
	ctx := context.Background()
	if err := rename(stores[0], c, "Summer"); err != nil {
		t.Fatal(err)
	}
	claimed, err := stores[0].Webhooks.DueDeliveries(ctx, clock.Now(), 0)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("due = %+v, %v", claimed, err)
	}
	stores[0].Data.Close() // dies: nothing recorded, nothing released

	d := &webhook.Dispatcher{Store: stores[1].Webhooks, Now: clock.Now, Client: webhook.NewClient(true)}
	if n, err := d.RunOnce(ctx); n != 0 || err != nil {
		t.Fatalf("while the claim lasts: RunOnce = %d, %v; want nothing sent", n, err)
	}
	clock.Add(postgres.DefaultClaimFor - time.Second)
	if n, err := d.RunOnce(ctx); n != 0 || err != nil {
		t.Fatalf("a second before the claim ends: RunOnce = %d, %v; want nothing sent", n, err)
	}
	clock.Add(time.Second)
	if n, err := d.RunOnce(ctx); n != 1 || err != nil {
		t.Fatalf("once the claim ended: RunOnce = %d, %v; want the delivery sent", n, err)
	}
	ds, evs := rc.counts()
	if len(ds) != 1 || ds[claimed[0].ID] != 1 || evs[claimed[0].EventID] != 1 {
		t.Fatalf("received deliveries %v, events %v; want %s of event %s once", ds, evs, claimed[0].ID, claimed[0].EventID)
	}
	if n := stores[1].Webhooks.PendingDeliveries(); n != 0 {
		t.Errorf("%d deliveries pending, want none", n)
	}
}

// TestStoppedDispatcherReleases: a dispatcher stopped mid-request records
// nothing and gives its claim up, so another instance sends the delivery
// at once.
func TestStoppedDispatcherReleases(t *testing.T) {
	t.Parallel()
	rc, srv := newReceiver(t)
	arrived := make(chan struct{})
	var once sync.Once
	rc.hold = func(r *http.Request) bool {
		first := false
		once.Do(func() { first = true })
		if !first {
			return true
		}
		close(arrived)
		<-r.Context().Done()
		return false
	}
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	stores, c, _ := claimInstances(t, 2, 1, clock, srv)
	if err := rename(stores[0], c, "Summer"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	a := &webhook.Dispatcher{Store: stores[0].Webhooks, Now: clock.Now, Client: webhook.NewClient(true)}
	if n, err := a.RunOnce(ctx); n != 0 || err == nil {
		t.Fatalf("stopped: RunOnce = %d, %v; want nothing recorded", n, err)
	}
	b := &webhook.Dispatcher{Store: stores[1].Webhooks, Now: clock.Now, Client: webhook.NewClient(true)}
	if n, err := b.RunOnce(context.Background()); n != 1 || err != nil {
		t.Fatalf("the other instance: RunOnce = %d, %v; want the delivery sent at once", n, err)
	}
	if ds, _ := rc.counts(); len(ds) != 1 {
		t.Fatalf("received %v; want one delivery answered", ds)
	}
}

// TestRestartTakesItsClaimsOver: a process that died and is started again
// under the same server.instance_id sends at once what its predecessor
// had claimed; another instance's claims stay.
func TestRestartTakesItsClaimsOver(t *testing.T) {
	t.Parallel()
	rc, srv := newReceiver(t)
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	u := pgtest.URL(t)
	stores, c, _ := claimInstancesOn(t, u, 2, 2, clock, srv)
	ctx := context.Background()
	if err := rename(stores[0], c, "Summer"); err != nil {
		t.Fatal(err)
	}
	// node0 claims the first webhook, node1 the second; both die.
	for i, s := range stores {
		ds, err := s.Webhooks.DueDeliveries(ctx, clock.Now(), 1)
		if err != nil || len(ds) != 1 {
			t.Fatalf("instance %d: due = %+v, %v", i, ds, err)
		}
		s.Data.Close()
	}
	again, err := postgres.Open(ctx, postgres.Options{URL: u, Now: clock.Now, Instance: "node0"})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Data.Close()
	d := &webhook.Dispatcher{Store: again.Webhooks, Now: clock.Now, Client: webhook.NewClient(true)}
	if n, err := d.RunOnce(ctx); n != 1 || err != nil {
		t.Fatalf("node0 started again: RunOnce = %d, %v; want its predecessor's delivery sent, node1's left", n, err)
	}
	clock.Add(postgres.DefaultClaimFor)
	if n, err := d.RunOnce(ctx); n != 1 || err != nil {
		t.Fatalf("once node1's claim ended: RunOnce = %d, %v; want its delivery sent", n, err)
	}
	if ds, _ := rc.counts(); len(ds) != 2 {
		t.Fatalf("received %v; want two deliveries once each", ds)
	}
}
