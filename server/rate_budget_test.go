package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
)

// instances returns the env's server and n-1 more, each over a store of
// its own on the env's database, as processes behind a load balancer
// would be: they share nothing but the database (and the env's clock).
func (e *env) instances(t *testing.T, n int) []*Server {
	t.Helper()
	srvs := []*Server{e.srv}
	for range n - 1 {
		st, err := e.db.open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Data.Close() })
		sessions, err := auth.LoadSessions(context.Background(), st.Accounts, e.clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		d := e.deps
		storeDeps(&d, st)
		d.Sessions = sessions
		srv, err := New(e.cfg, d)
		if err != nil {
			t.Fatal(err)
		}
		srvs = append(srvs, srv)
	}
	return srvs
}

// rated is what a rated answer said: its status and rate headers.
type rated struct {
	status                              int
	limit, remaining, reset, retryAfter string
}

func (r rated) String() string {
	return fmt.Sprintf("%d limit=%s remaining=%s reset=%s retry-after=%s", r.status, r.limit, r.remaining, r.reset, r.retryAfter)
}

// rateOn sends an API request with cred to srv.
func rateOn(t *testing.T, srv *Server, cred string) rated {
	req := newRequest("GET", "/v1/links?limit=1", cred, "")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	h := rec.Result().Header
	return rated{rec.Code, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), h.Get("Retry-After")}
}

// wantRated is what Server.rate answers for the memory limiter's d.
func wantRated(d auth.Decision) rated {
	r := rated{status: 200, limit: strconv.Itoa(d.Limit), remaining: strconv.Itoa(d.Remaining)}
	reset := d.Reset.Unix()
	if d.Reset.Nanosecond() > 0 {
		reset++
	}
	r.reset = strconv.FormatInt(reset, 10)
	if !d.Allowed {
		r.status, r.retryAfter = 429, strconv.Itoa(int(d.RetryAfter/time.Second))
	}
	return r
}

// breakBudget makes the database refuse every write of the rate budgets
// with a real error of its own, until the returned mend is called; the
// test's end mends it too, as the database is used again by other tests.
func breakBudget(t *testing.T, url string) (mend func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ALTER TABLE rate_budgets ADD CONSTRAINT rate_budgets_down CHECK (false) NOT VALID`); err != nil {
		conn.Close(ctx)
		t.Fatal(err)
	}
	var once sync.Once
	mend = func() {
		once.Do(func() {
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, `ALTER TABLE rate_budgets DROP CONSTRAINT rate_budgets_down`); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(mend)
	return mend
}

func skipOnBolt(t *testing.T) {
	t.Helper()
	if !onPostgres() {
		t.Skip("the shared rate budget is PostgreSQL's; bbolt is one process")
	}
}

// TestRateBudgetAcrossInstances: a free workspace's requests spread round
// robin and concurrently over three instances on one database get the
// plan's budget, not three times it: 100 at once from a full bucket, then
// 100 a minute as time refills it.
func TestRateBudgetAcrossInstances(t *testing.T) {
	t.Parallel()
	skipOnBolt(t)
	e := newEnv(t)
	srvs := e.instances(t, 3)
	e.clock.Add(time.Minute) // newEnv's own requests drew from the budget: refill it

	burst := func(n int) (allowed int) {
		var ok atomic.Int64
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				switch r := rateOn(t, srvs[i%len(srvs)], e.readKey); r.status {
				case 200:
					ok.Add(1)
				case 429:
				default:
					t.Errorf("request %d: %v", i, r)
				}
			})
		}
		wg.Wait()
		return int(ok.Load())
	}
	if got, want := burst(300), 100; got != want {
		t.Fatalf("a full bucket over three instances allowed %d of 300 requests at once, want %d", got, want)
	}
	// A minute of requests, three at once every 100 ms, one to each
	// instance: the bucket refills 100 in the minute.
	allowed := 0
	for range 600 {
		e.clock.Add(100 * time.Millisecond)
		allowed += burst(3)
	}
	t.Logf("a minute over three instances allowed %d requests", allowed)
	if allowed < 99 || allowed > 105 {
		t.Fatalf("a minute over three instances allowed %d requests, want 100 (+5 %%)", allowed)
	}
	// No instance rated a request in its own memory.
	for i, srv := range srvs {
		if f := srv.budgets.Fallbacks(); f != 0 {
			t.Errorf("instance %d fell back to memory %d times", i, f)
		}
	}
}

// TestRateBudgetHeaders: the shared budget answers, from any instance,
// what one process's memory limiter answers for the same requests at the
// same times, also across plan changes (the bucket keeps what it holds,
// at most the new plan's rate).
func TestRateBudgetHeaders(t *testing.T) {
	t.Parallel()
	skipOnBolt(t)
	e := newEnv(t)
	srvs := e.instances(t, 3)
	e.clock.Add(time.Minute)
	mem := auth.NewLimiters(e.clock.Now)
	plan := link.PlanFree
	n := 0
	take := func(k int) {
		t.Helper()
		for range k {
			got := rateOn(t, srvs[n%len(srvs)], e.readKey)
			want := wantRated(mem.Allow("ws", e.cfg.Plans[plan]))
			if got != want {
				var faults []string
				for _, l := range strings.Split(e.logs.String(), "\n") {
					if strings.Contains(l, "rate budget") {
						faults = append(faults, l)
					}
				}
				t.Fatalf("request %d on instance %d (%s plan): %v, want %v; budget faults: %q", n, n%len(srvs), plan, got, want, faults)
			}
			n++
		}
	}
	setPlan := func(p link.Plan) {
		t.Helper()
		if _, err := e.db.Workspaces.UpdateWorkspace(context.Background(), e.ws, link.WorkspaceUpdate{Plan: &p}); err != nil {
			t.Fatal(err)
		}
		plan = p
	}
	take(50)
	e.clock.Add(250 * time.Millisecond)
	take(55) // the last refused
	e.clock.Add(1700 * time.Millisecond)
	take(5)
	e.clock.Add(600 * time.Millisecond)
	take(3)
	e.clock.Add(13 * time.Second)
	take(30)

	// An upgrade keeps the requests held and refills at the new rate.
	setPlan(link.PlanPro)
	take(40)
	e.clock.Add(90 * time.Millisecond)
	take(3)
	e.clock.Add(6 * time.Second)
	take(120)
	// A downgrade keeps at most the new rate.
	e.clock.Add(30 * time.Second)
	setPlan(link.PlanFree)
	take(105)
	e.clock.Add(59 * time.Second)
	take(2)
	// Unlimited touches no budget; back on free the bucket is as it was
	// left, refilled by the time passed.
	setPlan(link.PlanEnterprise)
	if r := rateOn(t, srvs[0], e.readKey); r.status != 200 || r.limit != "" {
		t.Fatalf("unlimited: %v", r)
	}
	e.clock.Add(2 * time.Minute)
	setPlan(link.PlanFree)
	mem = auth.NewLimiters(e.clock.Now) // a bucket a minute idle is full
	take(101)
}

// TestRateBudgetDatabaseFails: when the database refuses the budget's
// statements, requests are rated in each instance's memory instead,
// never failed by the limiter, counted and logged once; the shared
// budget serves again once the database does.
func TestRateBudgetDatabaseFails(t *testing.T) {
	t.Parallel()
	skipOnBolt(t)
	e := newEnv(t)
	srvs := e.instances(t, 2)
	e.clock.Add(time.Minute)
	mend := breakBudget(t, e.db.url)
	// Each instance rates on its own: 100 each, then 429 from memory.
	for i, srv := range srvs {
		for j := range 100 {
			if r := rateOn(t, srv, e.readKey); r.status != 200 || r.remaining != strconv.Itoa(99-j) || r.limit != "100" {
				t.Fatalf("instance %d, request %d with the budget failing: %v", i, j, r)
			}
		}
		if r := rateOn(t, srv, e.readKey); r.status != 429 || r.retryAfter != "1" {
			t.Fatalf("instance %d over its memory bucket: %v", i, r)
		}
		if got, want := srv.budgets.Fallbacks(), int64(101); got != want {
			t.Fatalf("instance %d fallbacks = %d, want %d", i, got, want)
		}
	}
	// The instances log to one buffer: once each.
	if got := strings.Count(e.logs.String(), "the shared rate budget cannot be read"); got != len(srvs) {
		t.Fatalf("the failing budget was logged %d times by %d instances, want once each:\n%s", got, len(srvs), e.logs)
	}
	mend()
	e.clock.Add(time.Minute)
	if r := rateOn(t, srvs[1], e.readKey); r.status != 200 || r.remaining != "99" {
		t.Fatalf("the budget back: %v", r)
	}
	if r := rateOn(t, srvs[0], e.readKey); r.status != 200 || r.remaining != "98" {
		t.Fatalf("the budget back, on the other instance: %v", r)
	}
	if !strings.Contains(e.logs.String(), "the shared rate budget works again") {
		t.Fatalf("the budget's return was not logged:\n%s", e.logs)
	}
}

// TestRateBudgetRefusalsRemembered: an instance answers a refused
// workspace from memory until its next request is due, so that a flood of
// refused requests writes nothing: with the database refusing the budget's
// writes meanwhile, the instance that refused still refuses, without
// falling back, while another instance has to ask the database.
func TestRateBudgetRefusalsRemembered(t *testing.T) {
	t.Parallel()
	skipOnBolt(t)
	e := newEnv(t)
	srvs := e.instances(t, 2)
	e.clock.Add(time.Minute)
	for i := range 100 {
		if r := rateOn(t, srvs[0], e.readKey); r.status != 200 {
			t.Fatalf("request %d: %v", i, r)
		}
	}
	first := rateOn(t, srvs[0], e.readKey)
	if first.status != 429 {
		t.Fatalf("request 101: %v", first)
	}
	breakBudget(t, e.db.url)
	e.clock.Add(500 * time.Millisecond) // the next request is due 600 ms after the refusal
	for i := range 50 {
		if r := rateOn(t, srvs[0], e.readKey); r != first {
			t.Fatalf("refused request %d: %v, want %v", i, r, first)
		}
	}
	if f := srvs[0].budgets.Fallbacks(); f != 0 {
		t.Fatalf("the refusing instance asked the database %d times", f)
	}
	if r := rateOn(t, srvs[1], e.readKey); r.status != 200 || srvs[1].budgets.Fallbacks() != 1 {
		t.Fatalf("the other instance: %v, %d fallbacks", r, srvs[1].budgets.Fallbacks())
	}
	// Once due, the refusing instance asks the database again.
	e.clock.Add(100 * time.Millisecond)
	if r := rateOn(t, srvs[0], e.readKey); r.status != 200 || srvs[0].budgets.Fallbacks() != 1 {
		t.Fatalf("due again: %v, %d fallbacks", r, srvs[0].budgets.Fallbacks())
	}
	if n := srvs[0].budgets.Len(); n != 0 {
		t.Fatalf("%d refusals remembered after they ended", n)
	}
}
