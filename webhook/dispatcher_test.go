package webhook_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
	"github.com/linkbolt/linkbolt/webhook"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// env is a data file with a workspace and a campaign whose renames write
// campaign.updated events.
type env struct {
	path      string
	clock     *clocktest.Clock
	db        *storage.DB
	hooks     *storage.WebhookService
	campaigns *storage.CampaignService
	encoder   *webhook.Encoder
	ws        *link.Workspace
	campaign  *link.Campaign
	renames   int
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	e := &env{path: filepath.Join(tb.TempDir(), "linkbolt.db"), clock: clocktest.New(t0)}
	e.open(tb)
	ctx := context.Background()
	e.ws = &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := storage.NewUserService(e.db).Bootstrap(ctx, &link.User{Email: "a@example.com", PasswordHash: []byte("x")}, e.ws); err != nil {
		tb.Fatal(err)
	}
	e.campaign = &link.Campaign{WorkspaceID: e.ws.ID, Name: "Spring", Status: link.CampaignActive}
	if err := e.campaigns.CreateCampaign(ctx, e.campaign); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := e.db.Close(); err != nil {
			tb.Error(err)
		}
	})
	return e
}

// open opens (or reopens) the data file.
func (e *env) open(tb testing.TB) {
	tb.Helper()
	e.db = storage.NewDB(e.path)
	e.db.Now = e.clock.Now
	if err := e.db.Open(); err != nil {
		tb.Fatal(err)
	}
	events, err := webhook.NewEncoder(&url.URL{Scheme: "http", Host: "lb.test"}, "")
	if err != nil {
		tb.Fatal(err)
	}
	e.encoder = events
	e.hooks = storage.NewWebhookService(e.db)
	e.hooks.Events = events
	e.campaigns = storage.NewCampaignService(e.db)
	e.campaigns.Events = events
}

// reopen closes the data file and opens it again, as a restart does.
func (e *env) reopen(tb testing.TB) {
	tb.Helper()
	if err := e.db.Close(); err != nil {
		tb.Fatal(err)
	}
	e.open(tb)
}

func (e *env) webhook(tb testing.TB, url string, events ...string) *link.Webhook {
	tb.Helper()
	if len(events) == 0 {
		events = []string{link.EventCampaignUpdated}
	}
	w := &link.Webhook{WorkspaceID: e.ws.ID, URL: url, Events: events, Enabled: true, Secret: "whsec_test"}
	if err := e.hooks.CreateWebhook(context.Background(), w); err != nil {
		tb.Fatal(err)
	}
	return w
}

// events writes n campaign.updated events and returns their ids.
func (e *env) events(tb testing.TB, n int) []string {
	tb.Helper()
	var ids []string
	for range n {
		e.renames++
		name := fmt.Sprintf("Spring %d", e.renames)
		_, err := e.campaigns.UpdateCampaign(context.Background(), e.ws.ID, e.campaign.ID, link.CampaignUpdate{Name: &name})
		if err != nil {
			tb.Fatal(err)
		}
		evs, err := e.campaigns.FindEvents(context.Background(), e.ws.ID, "", 1000)
		if err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, evs[len(evs)-1].ID)
	}
	return ids
}

func (e *env) dispatcher() *webhook.Dispatcher {
	return &webhook.Dispatcher{Store: e.hooks, Now: e.clock.Now, Client: webhook.NewClient(true),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func (e *env) deliveries(tb testing.TB, w *link.Webhook) []*link.Delivery {
	tb.Helper()
	ds, err := e.hooks.FindDeliveries(context.Background(), w.WorkspaceID, w.ID, 1000)
	if err != nil {
		tb.Fatal(err)
	}
	slices.Reverse(ds)
	return ds
}

func (e *env) find(tb testing.TB, w *link.Webhook) *link.Webhook {
	tb.Helper()
	got, err := e.hooks.FindWebhookByID(context.Background(), w.WorkspaceID, w.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

func runOnce(tb testing.TB, d *webhook.Dispatcher) int {
	tb.Helper()
	n, err := d.RunOnce(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// request is what a receiver got.
type request struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a webhook receiver on loopback; respond decides each
// answer (nil: 200).
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []request
	respond func(w http.ResponseWriter, r *http.Request, n int)
}

func newReceiver(tb testing.TB, respond func(w http.ResponseWriter, r *http.Request, n int)) *receiver {
	rc := &receiver{respond: respond}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, request{header: r.Header.Clone(), body: body, at: time.Now()})
		n := len(rc.reqs)
		respond := rc.respond
		rc.mu.Unlock()
		if respond != nil {
			respond(w, r, n)
		}
	}))
	tb.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.reqs)
}

// ids returns the Linkbolt-Delivery of each request, in order.
func (rc *receiver) ids() []string {
	var out []string
	for _, r := range rc.requests() {
		out = append(out, r.header.Get(webhook.HeaderDelivery))
	}
	return out
}

func TestDispatcher_SignedDelivery(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	w := e.webhook(t, rc.srv.URL+"/hook")
	evs := e.events(t, 1)
	d := e.dispatcher()
	if n := runOnce(t, d); n != 1 {
		t.Fatalf("RunOnce sent %d, want 1", n)
	}
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	ds := e.deliveries(t, w)
	if got, want := string(r.body), string(ds[0].Payload); got != want {
		t.Fatalf("body %s, want the stored payload %s", got, want)
	}
	if !strings.Contains(string(r.body), `"id":"`+evs[0]+`"`) || !strings.Contains(string(r.body), `"type":"campaign.updated"`) {
		t.Fatalf("body = %s", r.body)
	}
	for k, want := range map[string]string{
		"Content-Type": "application/json", "User-Agent": "linkbolt-webhooks/1",
		webhook.HeaderEvent: link.EventCampaignUpdated, webhook.HeaderDelivery: ds[0].ID,
	} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	sig := r.header.Get(webhook.HeaderSignature)
	if err := webhook.Verify(sig, "whsec_test", r.body, e.clock.Now(), 0); err != nil {
		t.Fatalf("Verify(%s) = %v", sig, err)
	}
	if want := fmt.Sprintf("t=%d,v1=%s", e.clock.Now().Unix(), hmacHex("whsec_test", e.clock.Now().Unix(), r.body)); sig != want {
		t.Fatalf("signature %s, want %s", sig, want)
	}
	if ds := e.deliveries(t, w); ds[0].Status != link.DeliverySucceeded || ds[0].Attempts != 1 || ds[0].ResponseCode != 200 || ds[0].Duration <= 0 {
		t.Fatalf("delivery = %+v", ds[0])
	}
	if n := runOnce(t, d); n != 0 {
		t.Fatalf("RunOnce sent %d after everything was delivered", n)
	}

	// During a roll both secrets sign; after the grace period only the new.
	ctx := context.Background()
	if _, err := e.hooks.RollSecret(ctx, e.ws.ID, w.ID, "whsec_new", e.clock.Now().Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.events(t, 1)
	runOnce(t, d)
	r = rc.requests()[1]
	sig = r.header.Get(webhook.HeaderSignature)
	now := e.clock.Now().Unix()
	if want := fmt.Sprintf("t=%d,v1=%s,v1=%s", now, hmacHex("whsec_new", now, r.body), hmacHex("whsec_test", now, r.body)); sig != want {
		t.Fatalf("signature during the roll %s, want %s", sig, want)
	}
	for _, secret := range []string{"whsec_new", "whsec_test"} {
		if err := webhook.Verify(sig, secret, r.body, e.clock.Now(), 0); err != nil {
			t.Fatalf("Verify with %s during the roll: %v", secret, err)
		}
	}
	e.clock.Add(24 * time.Hour)
	e.events(t, 1)
	runOnce(t, d)
	r = rc.requests()[2]
	sig = r.header.Get(webhook.HeaderSignature)
	if strings.Count(sig, "v1=") != 1 || webhook.Verify(sig, "whsec_new", r.body, e.clock.Now(), 0) != nil ||
		webhook.Verify(sig, "whsec_test", r.body, e.clock.Now(), 0) == nil {
		t.Fatalf("signature after the grace period: %s", sig)
	}
}

func TestDispatcher_RetriesAfter500(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n <= 3 {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "database is down\n"+strings.Repeat("x", 10_000))
		}
	})
	w := e.webhook(t, rc.srv.URL)
	other := newReceiver(t, nil)
	e.webhook(t, other.srv.URL)
	e.events(t, 2)
	d := e.dispatcher()
	d.Jitter = func(max time.Duration) time.Duration { return max } // the ceiling: 10 s, 20 s, 40 s

	start := e.clock.Now()
	for i, wait := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		runOnce(t, d)
		ds := e.deliveries(t, w)
		head := ds[0]
		if head.Status != link.DeliveryPending || head.Attempts != i+1 || head.ResponseCode != 500 ||
			!strings.HasPrefix(head.LastError, "HTTP 500: database is down") || len(head.LastError) > 230 ||
			!head.NextAttemptAt.Equal(e.clock.Now().Add(wait)) {
			t.Fatalf("after failure %d: %+v", i+1, head)
		}
		if ds[1].Attempts != 0 {
			t.Fatalf("the second delivery was tried while the first waits: %+v", ds[1])
		}
		// Not due before its time; the other webhook is not held back.
		e.clock.Add(wait - time.Second)
		runOnce(t, d)
		if n := len(rc.requests()); n != i+1 {
			t.Fatalf("%d requests before the retry was due, want %d", n, i+1)
		}
		e.clock.Add(time.Second)
	}
	if got := other.ids(); len(got) != 2 {
		t.Fatalf("the healthy webhook got %v, want both deliveries", got)
	}
	// The fourth attempt succeeds, then the second event goes.
	runOnce(t, d)
	runOnce(t, d)
	ds := e.deliveries(t, w)
	if ds[0].Status != link.DeliverySucceeded || ds[0].Attempts != 4 || ds[1].Status != link.DeliverySucceeded {
		t.Fatalf("deliveries = %+v, %+v", ds[0], ds[1])
	}
	if got, want := rc.ids(), []string{ds[0].ID, ds[0].ID, ds[0].ID, ds[0].ID, ds[1].ID}; !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
	if got := e.find(t, w).ConsecutiveFailures; got != 0 {
		t.Fatalf("consecutive failures after a success = %d", got)
	}
	if !e.clock.Now().Equal(start.Add(70 * time.Second)) {
		t.Fatal("clock arithmetic")
	}
}

func TestDispatcher_RetriesAfterTimeout(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 { // longer than the timeout
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}
	})
	w := e.webhook(t, rc.srv.URL)
	e.events(t, 1)
	d := e.dispatcher()
	d.Timeout = 100 * time.Millisecond
	begin := time.Now()
	runOnce(t, d)
	if took := time.Since(begin); took > 3*time.Second {
		t.Fatalf("the attempt took %v with a timeout of 100ms", took)
	}
	head := e.deliveries(t, w)[0]
	if head.Status != link.DeliveryPending || head.Attempts != 1 || head.ResponseCode != 0 ||
		head.LastError != "no answer within 100ms" || head.Duration < 50*time.Millisecond || head.NextAttemptAt == nil {
		t.Fatalf("after a timeout: %+v", head)
	}
	e.clock.Add(10 * time.Second)
	runOnce(t, d)
	if head := e.deliveries(t, w)[0]; head.Status != link.DeliverySucceeded || head.Attempts != 2 {
		t.Fatalf("after the retry: %+v", head)
	}
}

// TestDispatcher_ReceiverDownThenUp has a receiver that is down for a
// while, part of it answering 503 after it did the work, part refusing
// connections: once it is up it has had every event at least once, and
// de-duplicating by Linkbolt-Delivery gives each exactly once, in order.
func TestDispatcher_ReceiverDownThenUp(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	down := true
	var processed []string // what the receiver acted on, duplicates and all
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		mu.Lock()
		defer mu.Unlock()
		processed = append(processed, r.Header.Get(webhook.HeaderDelivery))
		if down {
			w.WriteHeader(http.StatusServiceUnavailable) // did the work, then failed
		}
	})
	// The same receiver, behind an address that first drops every
	// connection (a network error, as if nothing listened) and later serves.
	var mu2 sync.Mutex
	serving := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu2.Lock()
		up := serving
		mu2.Unlock()
		if !up {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		rc.srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	w := e.webhook(t, srv.URL+"/hook")
	d := e.dispatcher()

	var want []string
	for round := range 6 {
		e.events(t, 2)
		if round == 2 { // up, but answering 503
			mu2.Lock()
			serving = true
			mu2.Unlock()
		}
		if round == 4 {
			mu.Lock()
			down = false
			mu.Unlock()
		}
		runOnce(t, d)
		e.clock.Add(time.Hour) // past any backoff
	}
	for range 50 {
		if runOnce(t, d) == 0 {
			break
		}
		e.clock.Add(time.Hour)
	}
	for _, dl := range e.deliveries(t, w) {
		if dl.Status != link.DeliverySucceeded {
			t.Fatalf("delivery not done: %+v", dl)
		}
		want = append(want, dl.ID)
	}
	if len(want) != 12 {
		t.Fatalf("%d deliveries, want 12", len(want))
	}
	mu.Lock()
	got := slices.Clone(processed)
	mu.Unlock()
	var seen = map[string]bool{}
	var dedup []string
	for _, id := range got {
		if !seen[id] {
			seen[id] = true
			dedup = append(dedup, id)
		}
	}
	if !slices.Equal(dedup, want) {
		t.Fatalf("de-duplicated %v, want %v", dedup, want)
	}
	if len(got) == len(want) {
		t.Fatalf("no duplicates: the receiver was never down while reachable (%v)", got)
	}
	if f := e.find(t, w); !f.Enabled {
		t.Fatalf("webhook disabled: %s", f.DisabledReason)
	}
}

func TestDispatcher_DisablesAfter24Hours(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		http.Error(w, "gone fishing", http.StatusBadGateway)
	})
	w := e.webhook(t, rc.srv.URL)
	e.events(t, 3)
	d := e.dispatcher()
	d.MaxFailures = 1000 // the time limit alone

	queued := e.clock.Now()
	for range 200 {
		runOnce(t, d)
		if !e.find(t, w).Enabled {
			break
		}
		e.clock.Add(30 * time.Minute)
	}
	got := e.find(t, w)
	if got.Enabled || got.DisabledReason != "disabled after 24 h of failed deliveries: HTTP 502: gone fishing" {
		t.Fatalf("webhook = %+v", got)
	}
	ds := e.deliveries(t, w)
	if ds[0].Status != link.DeliveryPending || ds[0].UpdatedAt.Before(queued.Add(24*time.Hour)) || ds[0].UpdatedAt.After(queued.Add(25*time.Hour)) {
		t.Fatalf("head = %+v, want still pending, last tried between 24 and 25 h after %v", ds[0], queued)
	}
	if ds[1].Status != link.DeliveryPending || ds[2].Status != link.DeliveryPending || ds[1].Attempts != 0 {
		t.Fatalf("the rest = %+v, %+v; want pending", ds[1], ds[2])
	}
	n := len(rc.requests())
	e.clock.Add(time.Hour)
	if runOnce(t, d); len(rc.requests()) != n {
		t.Fatal("a disabled webhook was sent to")
	}
	// Enabled again, its queue resumes in order.
	rc.mu.Lock()
	rc.respond = nil
	rc.mu.Unlock()
	if _, err := e.hooks.UpdateWebhook(context.Background(), e.ws.ID, w.ID, link.WebhookUpdate{Enabled: ptr(true)}, nil); err != nil {
		t.Fatal(err)
	}
	runOnce(t, d)
	runOnce(t, d)
	runOnce(t, d)
	// The head that failed for 24 h goes first, then the rest: none lost.
	if got := rc.ids()[n:]; !slices.Equal(got, []string{ds[0].ID, ds[1].ID, ds[2].ID}) {
		t.Fatalf("after enabling: %v, want %s %s %s", got, ds[0].ID, ds[1].ID, ds[2].ID)
	}
}

func TestDispatcher_DisablesAfterConsecutiveFailures(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) { w.WriteHeader(http.StatusTeapot) })
	w := e.webhook(t, rc.srv.URL)
	e.events(t, 1)
	d := e.dispatcher()
	for i := 1; i <= webhook.DefaultMaxFailures; i++ {
		if !e.find(t, w).Enabled {
			t.Fatalf("disabled after %d failures", i-1)
		}
		runOnce(t, d)
		e.clock.Add(time.Hour)
	}
	got := e.find(t, w)
	if got.Enabled || got.DisabledReason != "disabled after 20 consecutive failed deliveries: HTTP 418" || got.ConsecutiveFailures != 20 {
		t.Fatalf("webhook = %+v", got)
	}
	if n := len(rc.requests()); n != 20 {
		t.Fatalf("%d requests, want 20", n)
	}
	// What metrics show: every failed attempt, and the delivery given up.
	if got, want := d.FailedAttempts(), int64(20); got != want {
		t.Fatalf("FailedAttempts = %d, want %d", got, want)
	}
	if got, want := d.FailedDeliveries(), int64(1); got != want {
		t.Fatalf("FailedDeliveries = %d, want %d", got, want)
	}
}

func TestDispatcher_RedirectNotFollowed(t *testing.T) {
	e := newEnv(t)
	target := newReceiver(t, nil)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		http.Redirect(w, r, target.srv.URL+"/elsewhere", http.StatusTemporaryRedirect)
	})
	w := e.webhook(t, rc.srv.URL)
	e.events(t, 1)
	runOnce(t, e.dispatcher())
	if n := len(target.requests()); n != 0 {
		t.Fatalf("the redirect was followed (%d requests)", n)
	}
	head := e.deliveries(t, w)[0]
	if head.Status != link.DeliveryPending || head.ResponseCode != 307 || !strings.Contains(head.LastError, "not followed") {
		t.Fatalf("after a redirect: %+v", head)
	}
}

// TestDispatcher_RefusesPrivateAtConnection: a webhook stored with a name
// that resolves to loopback (or that started to since it was checked) is
// refused when the dispatcher connects.
func TestDispatcher_RefusesPrivateAtConnection(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	w := e.webhook(t, "http://localhost:"+port+"/hook")
	e.events(t, 1)
	d := e.dispatcher()
	d.Client = webhook.NewClient(false)
	runOnce(t, d)
	head := e.deliveries(t, w)[0]
	if len(rc.requests()) != 0 || head.Status != link.DeliveryPending || strings.Contains(head.LastError, "127.0.0.1") ||
		!strings.Contains(head.LastError, "localhost resolves to a private address") {
		t.Fatalf("after a refused connection: %+v", head)
	}
}

// TestDispatcher_StoppedMidDelivery stops a dispatcher while a delivery is
// in flight, as kill -9 would: the attempt is not recorded, and a new
// dispatcher on the reopened file delivers it (at least once).
func TestDispatcher_StoppedMidDelivery(t *testing.T) {
	e := newEnv(t)
	arrived := make(chan struct{}, 1)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			arrived <- struct{}{}
			<-r.Context().Done() // never answers
		}
	})
	w := e.webhook(t, rc.srv.URL)
	e.events(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	d := e.dispatcher()
	d.Poll = 10 * time.Millisecond
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the delivery never arrived")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	ds := e.deliveries(t, w)
	if ds[0].Status != link.DeliveryPending || ds[0].Attempts != 0 {
		t.Fatalf("the interrupted delivery = %+v, want pending and untried", ds[0])
	}

	e.reopen(t)
	d = e.dispatcher()
	runOnce(t, d)
	runOnce(t, d)
	ds = e.deliveries(t, w)
	for _, dl := range ds {
		if dl.Status != link.DeliverySucceeded {
			t.Fatalf("after the restart: %+v", dl)
		}
	}
	if got, want := rc.ids(), []string{ds[0].ID, ds[0].ID, ds[1].ID}; !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
}

// TestDispatcher_Run runs the dispatcher with several webhooks and checks
// that each has at most one request in flight, gets its events in order,
// and that a slow webhook does not hold back the others.
func TestDispatcher_Run(t *testing.T) {
	e := newEnv(t)
	type track struct {
		mu        sync.Mutex
		inflight  int
		overlap   bool
		delivered []string
	}
	tracks := map[string]*track{}
	var hooks []*link.Webhook
	for i := range 3 {
		tr := &track{}
		slow := i == 0
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
			tr.mu.Lock()
			tr.inflight++
			if tr.inflight > 1 {
				tr.overlap = true
			}
			tr.mu.Unlock()
			if slow {
				time.Sleep(20 * time.Millisecond)
			}
			tr.mu.Lock()
			tr.inflight--
			tr.delivered = append(tr.delivered, r.Header.Get(webhook.HeaderDelivery))
			tr.mu.Unlock()
		})
		w := e.webhook(t, rc.srv.URL)
		tracks[w.ID] = tr
		hooks = append(hooks, w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := e.dispatcher()
	d.Workers = 2
	d.Poll = 5 * time.Millisecond
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	const n = 10
	for range n {
		e.events(t, 1)
		d.Kick()
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		all := true
		for _, tr := range tracks {
			tr.mu.Lock()
			if len(tr.delivered) < n {
				all = false
			}
			tr.mu.Unlock()
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not everything was delivered")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, w := range hooks {
		tr := tracks[w.ID]
		var want []string
		for _, dl := range e.deliveries(t, w) {
			want = append(want, dl.ID)
		}
		tr.mu.Lock()
		if tr.overlap {
			t.Errorf("webhook %s had two deliveries in flight", w.ID)
		}
		if !slices.Equal(tr.delivered, want) {
			t.Errorf("webhook %s got %v, want %v in order, each once", w.ID, tr.delivered, want)
		}
		tr.mu.Unlock()
	}
}

func TestDispatcher_DeletedWebhook(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	w := e.webhook(t, rc.srv.URL)
	e.events(t, 1)
	if err := e.hooks.DeleteWebhook(context.Background(), e.ws.ID, w.ID); err != nil {
		t.Fatal(err)
	}
	if n := runOnce(t, e.dispatcher()); n != 0 || len(rc.requests()) != 0 {
		t.Fatalf("sent %d for a deleted webhook", n)
	}
}

func TestRetryDelay(t *testing.T) {
	d := &webhook.Dispatcher{Jitter: func(max time.Duration) time.Duration { return max }}
	for n, want := range map[int]time.Duration{1: 10 * time.Second, 2: 20 * time.Second, 9: 2560 * time.Second, 10: time.Hour, 64: time.Hour, 1000: time.Hour} {
		if got := d.RetryDelay(n); got != want {
			t.Errorf("RetryDelay(%d) = %v, want %v", n, got, want)
		}
	}
	d.Jitter = nil
	for range 1000 {
		if got := d.RetryDelay(3); got < time.Second || got > 40*time.Second {
			t.Fatalf("RetryDelay(3) = %v, want within [1s, 40s]", got)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// countingStore counts the writes of attempts a dispatcher makes.
type countingStore struct {
	*storage.WebhookService
	mu     sync.Mutex
	writes []int // the number of attempts of each write
}

func (s *countingStore) RecordAttempts(ctx context.Context, rs []link.AttemptRecord) error {
	s.mu.Lock()
	s.writes = append(s.writes, len(rs))
	s.mu.Unlock()
	return s.WebhookService.RecordAttempts(ctx, rs)
}

func (s *countingStore) counts() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.writes)
}

func deliveryIDs(ds []*link.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// TestDispatcher_RunsInOneWrite: a webhook's due deliveries go out one
// after another, one request per event and one at a time, in order, and
// each run's attempts are recorded in one write; runs follow each other
// in order.
func TestDispatcher_RunsInOneWrite(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	inflight, overlap := 0, false
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		mu.Lock()
		inflight++
		overlap = overlap || inflight > 1
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		inflight--
		mu.Unlock()
	})
	w := e.webhook(t, rc.srv.URL)
	e.events(t, 10)
	store := &countingStore{WebhookService: e.hooks}
	d := e.dispatcher()
	d.Store = store
	d.RunLength = 4
	for _, want := range []int{4, 4, 2, 0} {
		if n := runOnce(t, d); n != want {
			t.Fatalf("RunOnce sent %d, want %d", n, want)
		}
	}
	if got := store.counts(); !slices.Equal(got, []int{4, 4, 2}) {
		t.Fatalf("writes of %v attempts, want one write per run: [4 4 2]", got)
	}
	ds := e.deliveries(t, w)
	for _, dl := range ds {
		if dl.Status != link.DeliverySucceeded || dl.Attempts != 1 {
			t.Fatalf("delivery %+v", dl)
		}
	}
	if got, want := rc.ids(), deliveryIDs(ds); !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
	mu.Lock()
	overlapped := overlap
	mu.Unlock()
	if overlapped {
		t.Fatal("two requests of a webhook in flight at once")
	}
	for i, r := range rc.requests() {
		if r.header.Get(webhook.HeaderEvent) != link.EventCampaignUpdated || string(r.body) != string(ds[i].Payload) ||
			webhook.Verify(r.header.Get(webhook.HeaderSignature), "whsec_test", r.body, e.clock.Now(), 0) != nil {
			t.Fatalf("request %d: %v %s", i, r.header, r.body)
		}
	}

	// The default run takes the whole (short) queue in one write.
	e.events(t, 7)
	d.RunLength = 0
	if n := runOnce(t, d); n != 7 {
		t.Fatalf("RunOnce sent %d, want 7", n)
	}
	if got := store.counts(); !slices.Equal(got, []int{4, 4, 2, 7}) {
		t.Fatalf("writes of %v attempts, want [4 4 2 7]", got)
	}
	if got, want := rc.ids(), deliveryIDs(e.deliveries(t, w)); !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
}

// TestDispatcher_FailureMidRun: a failure stops the run; the deliveries
// before it are recorded as succeeded, the failed one waits for its retry
// at the head, and the rest stays pending, untried and in order.
func TestDispatcher_FailureMidRun(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 3 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	w := e.webhook(t, rc.srv.URL)
	e.events(t, 6)
	store := &countingStore{WebhookService: e.hooks}
	d := e.dispatcher()
	d.Store = store
	d.Jitter = func(max time.Duration) time.Duration { return max }
	if n := runOnce(t, d); n != 3 {
		t.Fatalf("RunOnce sent %d, want 3", n)
	}
	if got := store.counts(); !slices.Equal(got, []int{3}) {
		t.Fatalf("writes of %v attempts, want [3]", got)
	}
	ds := e.deliveries(t, w)
	if ds[0].Status != link.DeliverySucceeded || ds[1].Status != link.DeliverySucceeded {
		t.Fatalf("before the failure: %+v, %+v", ds[0], ds[1])
	}
	if h := ds[2]; h.Status != link.DeliveryPending || h.Attempts != 1 || h.ResponseCode != 500 ||
		!h.NextAttemptAt.Equal(e.clock.Now().Add(10*time.Second)) {
		t.Fatalf("the failed delivery: %+v", h)
	}
	for _, dl := range ds[3:] {
		if dl.Status != link.DeliveryPending || dl.Attempts != 0 || dl.LastError != "" || dl.ResponseCode != 0 {
			t.Fatalf("behind the failure: %+v, want pending and untried", dl)
		}
	}
	if f := e.find(t, w).ConsecutiveFailures; f != 1 {
		t.Fatalf("consecutive failures = %d, want 1", f)
	}
	if n := runOnce(t, d); n != 0 || len(rc.requests()) != 3 {
		t.Fatalf("sent %d before the retry was due", n)
	}
	e.clock.Add(10 * time.Second)
	if n := runOnce(t, d); n != 4 {
		t.Fatalf("RunOnce at the retry sent %d, want 4", n)
	}
	ds = e.deliveries(t, w)
	for _, dl := range ds {
		if dl.Status != link.DeliverySucceeded {
			t.Fatalf("after the retry: %+v", dl)
		}
	}
	want := []string{ds[0].ID, ds[1].ID, ds[2].ID, ds[2].ID, ds[3].ID, ds[4].ID, ds[5].ID}
	if got := rc.ids(); !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
	if f := e.find(t, w).ConsecutiveFailures; f != 0 {
		t.Fatalf("consecutive failures after the run = %d, want 0", f)
	}
}

// TestDispatcher_FailuresCountAcrossRun: a success in a run resets the
// webhook's consecutive failures for the failure after it, as a recorded
// success would.
func TestDispatcher_FailuresCountAcrossRun(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n != 2 { // the head fails until the limit is close, then one success, then a failure
			w.WriteHeader(http.StatusTeapot)
		}
	})
	w := e.webhook(t, rc.srv.URL)
	e.events(t, 2)
	d := e.dispatcher()
	d.MaxFailures = 2
	runOnce(t, d) // request 1 fails: 1 failure
	e.clock.Add(time.Hour)
	runOnce(t, d) // request 2 succeeds, request 3 fails: 1 failure, not 2
	got := e.find(t, w)
	if !got.Enabled || got.ConsecutiveFailures != 1 {
		t.Fatalf("webhook = %+v, want enabled with 1 failure", got)
	}
}

// TestDispatcher_StoppedMidRun stops a dispatcher while a run is half
// sent, as kill -9 would: the finished requests are recorded, the one in
// flight and the rest stay pending, and a new dispatcher on the reopened
// file delivers everything at least once, in order.
func TestDispatcher_StoppedMidRun(t *testing.T) {
	e := newEnv(t)
	arrived := make(chan struct{}, 1)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 4 {
			arrived <- struct{}{}
			<-r.Context().Done() // never answers
		}
	})
	w := e.webhook(t, rc.srv.URL)
	e.events(t, 8)
	ctx, cancel := context.WithCancel(context.Background())
	d := e.dispatcher()
	d.Poll = 10 * time.Millisecond
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the fourth delivery never arrived")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	ds := e.deliveries(t, w)
	for i, dl := range ds {
		if i < 3 && dl.Status != link.DeliverySucceeded || i >= 3 && (dl.Status != link.DeliveryPending || dl.Attempts != 0) {
			t.Fatalf("delivery %d after the stop = %+v", i, dl)
		}
	}

	e.reopen(t)
	d = e.dispatcher()
	for runOnce(t, d) > 0 {
	}
	ds = e.deliveries(t, w)
	for _, dl := range ds {
		if dl.Status != link.DeliverySucceeded {
			t.Fatalf("after the restart: %+v", dl)
		}
	}
	var dedup []string
	seen := map[string]bool{}
	for _, id := range rc.ids() {
		if !seen[id] {
			seen[id] = true
			dedup = append(dedup, id)
		}
	}
	if want := deliveryIDs(ds); !slices.Equal(dedup, want) {
		t.Fatalf("de-duplicated %v, want %v", dedup, want)
	}
	if got, want := rc.ids(), deliveryIDs(ds); len(got) != 9 || !slices.Equal(got[:4], want[:4]) || !slices.Equal(got[4:], want[3:]) {
		t.Fatalf("requests %v, want %v with the fourth sent twice", got, want)
	}
}

// TestDispatcher_RunStopsAfterRunTime: no delivery of a run starts after
// RunTime; the rest waits for the next run.
func TestDispatcher_RunStopsAfterRunTime(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, n int) { time.Sleep(30 * time.Millisecond) })
	e.webhook(t, rc.srv.URL)
	e.events(t, 5)
	d := e.dispatcher()
	d.RunTime = 50 * time.Millisecond
	sent := []int{}
	for total := 0; total < 5; {
		n := runOnce(t, d)
		if n < 1 || n > 2 {
			t.Fatalf("RunOnce sent %d within 50ms of 30ms requests, want 1 or 2 (so far %v)", n, sent)
		}
		sent = append(sent, n)
		total += n
	}
	if len(rc.requests()) != 5 {
		t.Fatalf("%d requests, want 5", len(rc.requests()))
	}
}
