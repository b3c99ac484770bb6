package server

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
)

// sibling is a second instance of e's server on e's database, as another
// linkbolt process on the same PostgreSQL database would be: a store,
// sessions, recorder and limiters of its own, the same JWT secret,
// configuration and clock. It shares e's admin, workspaces and keys.
func (e *env) sibling() *env {
	t := e.t
	t.Helper()
	st, err := e.db.open()
	if err != nil {
		t.Fatal(err)
	}
	db := &testStore{Store: st, open: e.db.open}
	ctx := context.Background()
	rec := analytics.NewRecorder(liveClicks{db}, time.Hour, 0, e.deps.Logger)
	rec.SetClock(e.clock.Now)
	rec.SetEnrich(analytics.Enricher(analytics.NewClassifier(nil), liveClicks{db}))
	sessions, err := auth.LoadSessions(ctx, st.Accounts, e.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	d := e.deps
	storeDeps(&d, st)
	jwt := *e.deps.JWT
	d.JWT, d.Sessions, d.Recorder = &jwt, sessions, rec
	srv, err := New(e.cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		if err := rec.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if err := st.Data.Close(); err != nil {
			t.Error(err)
		}
	})
	s := *e
	s.srv, s.db, s.recorder, s.deps = srv, db, rec, d
	return &s
}

// TestInstancesEndSessionsOnTheNextRequest: what one instance ends — a
// logout, a log-out everywhere, a disabled user, a removed member, a
// revoked key — is refused by another instance on the same database on
// the very next request, and tokens issued by either keep working
// everywhere.
func TestInstancesEndSessionsOnTheNextRequest(t *testing.T) {
	pgtest.SkipUnlessPostgres(t)
	t.Parallel()
	a := newEnv(t)
	b := a.sibling()
	// b has served the admin and the keys before (its memory has them).
	b.do("GET", "/v1/me", a.adminToken, "", 200)
	b.do("GET", "/v1/links", a.writeKey, "", 200)

	// Read your own writes: a link created on a, read on b at once.
	id := a.do("POST", "/v1/links", a.writeKey, `{"destination_url":"https://example.com/x"}`, 201).str("id")
	b.do("GET", "/v1/links/"+id, a.readKey, "", 200)

	t.Run("logout", func(t *testing.T) {
		tok := a.login("admin@example.com", "correct horse battery")
		b.do("GET", "/v1/me", tok, "", 200)
		a.do("POST", "/v1/auth/logout", tok, "", 204)
		if r := b.do("GET", "/v1/me", tok, "", 401); !strings.Contains(r.str("detail"), "logged out") {
			t.Fatalf("b after the logout on a: %s", r.raw)
		}
	})
	t.Run("log out everywhere, then a new login on b", func(t *testing.T) {
		tok := a.login("admin@example.com", "correct horse battery")
		a.do("POST", "/v1/auth/logout-all", tok, "", 204)
		if r := b.do("GET", "/v1/me", tok, "", 401); !strings.Contains(r.str("detail"), "log-out everywhere") {
			t.Fatalf("b after a log-out everywhere on a: %s", r.raw)
		}
		// A token b issues now, whose sessions heard nothing, works on both.
		fresh := b.login("admin@example.com", "correct horse battery")
		a.do("GET", "/v1/me", fresh, "", 200)
		b.do("GET", "/v1/me", fresh, "", 200)
		a.adminToken, b.adminToken = fresh, fresh
	})
	t.Run("a disabled user and their keys", func(t *testing.T) {
		otok := b.login("other@example.com", otherPassword)
		b.do("GET", "/v1/me", otok, "", 200)
		b.do("GET", "/v1/links", a.otherKey, "", 200)
		otherID := b.do("GET", "/v1/me", otok, "", 200).str("id")
		a.do("PATCH", "/v1/users/"+otherID, a.adminToken, `{"disabled":true}`, 200)
		if r := b.do("GET", "/v1/me", otok, "", 401); !strings.Contains(r.str("detail"), "disabled") {
			t.Fatalf("b, the disabled user's token: %s", r.raw)
		}
		if r := b.do("GET", "/v1/links", a.otherKey, "", 401); !strings.Contains(r.str("detail"), "creator is disabled") {
			t.Fatalf("b, the disabled user's key: %s", r.raw)
		}
		a.do("PATCH", "/v1/users/"+otherID, a.adminToken, `{"disabled":false}`, 200)
		b.do("GET", "/v1/links", a.otherKey, "", 200)
	})
	t.Run("a removed member's key", func(t *testing.T) {
		invite := a.do("POST", "/v1/invitations", a.adminToken, `{"email":"member@example.com","role":"read_write"}`, 201)
		joined := b.do("POST", "/v1/invitations/accept", "", `{"token":"`+invite.str("token")+`","password":"member password 1","name":"M"}`, 201)
		mtok := joined.str("token")
		mkey := b.createKey(mtok, "member's", "read_write")
		a.do("POST", "/v1/links", mkey, `{"destination_url":"https://example.com/m"}`, 201)
		a.do("DELETE", "/v1/members/"+joined.str("user_id"), a.adminToken, "", 204)
		// The removal revokes the keys the member made.
		if r := b.do("GET", "/v1/links", mkey, "", 401); !strings.Contains(r.str("detail"), "revoked") {
			t.Fatalf("b, the removed member's key: %s", r.raw)
		}
	})
	t.Run("a revoked key", func(t *testing.T) {
		k := a.do("POST", "/v1/keys", a.adminToken, `{"name":"short-lived","scope":"read"}`, 201)
		b.do("GET", "/v1/links", k.str("key"), "", 200)
		a.do("DELETE", "/v1/keys/"+k.str("id"), a.adminToken, "", 204)
		if r := b.do("GET", "/v1/links", k.str("key"), "", 401); !strings.Contains(r.str("detail"), "revoked") {
			t.Fatalf("b, the revoked key: %s", r.raw)
		}
	})
}

// eventually polls check every millisecond until it reports true, and
// returns how long that took; it fails the test after 10 s. The delays
// themselves are measured by BenchmarkInstancesInvalidation, not
// asserted.
func eventually(t *testing.T, what string, check func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !check() {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s: not seen after 10 s", what)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(start)
}

// TestInstancesSeeLinkChanges: a link changed, expired, blocklisted or
// deleted through one instance stops redirecting with its old state on
// another, which had it in memory, without waiting for its cache to
// expire (the clock does not move: only the database's notification can
// tell it).
func TestInstancesSeeLinkChanges(t *testing.T) {
	pgtest.SkipUnlessPostgres(t)
	t.Parallel()
	a := newEnv(t)
	b := a.sibling()
	id := a.do("POST", "/v1/links", a.writeKey, `{"destination_url":"https://example.com/one","alias":"shared"}`, 201).str("id")
	location := func(e *env) string {
		r := e.request(newRequest("GET", "/shared", "", ""))
		if r.status != 302 {
			return strconv.Itoa(r.status)
		}
		return r.header.Get("Location")
	}
	if got := location(b); got != "https://example.com/one" {
		t.Fatalf("b: %s", got)
	}
	steps := []struct {
		what   string
		change func()
		want   string
	}{
		{"a new destination", func() {
			a.do("PATCH", "/v1/links/"+id, a.writeKey, `{"destination_url":"https://example.com/two"}`, 200)
		}, "https://example.com/two"},
		{"blocklisted", func() { a.do("POST", "/v1/admin/blocklist", a.adminToken, `{"entry":"example.com/two"}`, 201) }, "410"},
		{"off the blocklist", func() { a.do("DELETE", "/v1/admin/blocklist?entry=example.com/two", a.adminToken, "", 204) }, "https://example.com/two"},
		{"expired", func() {
			a.do("PATCH", "/v1/links/"+id, a.writeKey, `{"expires_at":"`+a.clock.Now().Add(-time.Minute).Format(time.RFC3339)+`"}`, 200)
		}, "410"},
		{"alive again", func() { a.do("PATCH", "/v1/links/"+id, a.writeKey, `{"expires_at":null}`, 200) }, "https://example.com/two"},
		{"deleted", func() { a.do("DELETE", "/v1/links/"+id, a.writeKey, "", 204) }, "404"},
	}
	for _, st := range steps {
		st.change()
		if got := location(a); got != st.want {
			t.Fatalf("%s: a answers %s, want %s", st.what, got, st.want)
		}
		d := eventually(t, st.what+" on b", func() bool { return location(b) == st.want })
		t.Logf("%s: seen on b after %s", st.what, d)
	}
}

// BenchmarkInstancesInvalidation measures how long a link changed through
// one instance keeps redirecting with its old destination on another that
// had it in memory, on one PostgreSQL database: the delay's p50 and p99
// (and the mean as ns/op). Run with
//
//	LINKBOLT_TEST_STORE=postgres go test ./server/ -run '^$' -bench InstancesInvalidation -benchtime 500x
func BenchmarkInstancesInvalidation(b *testing.B) {
	pgtest.SkipUnlessPostgres(b)
	a := newEnv(b, func(c *Config) { c.Plans = map[link.Plan]int{link.PlanFree: 0} })
	s := a.sibling()
	id := a.do("POST", "/v1/links", a.writeKey, `{"destination_url":"https://example.com/0","alias":"bench"}`, 201).str("id")
	location := func() string {
		return s.request(newRequest("GET", "/bench", "", "")).header.Get("Location")
	}
	location()
	delays := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		want := "https://example.com/" + strconv.Itoa(i+1)
		a.do("PATCH", "/v1/links/"+id, a.writeKey, `{"destination_url":"`+want+`"}`, 200)
		start := time.Now()
		for location() != want {
			if time.Since(start) > 10*time.Second {
				b.Fatalf("change %d not seen after 10 s", i)
			}
			runtime.Gosched()
		}
		delays = append(delays, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(delays)
	b.ReportMetric(float64(delays[len(delays)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(delays[len(delays)*99/100].Microseconds()), "p99-µs")
}

// TestInstancesRaceInvariants races what the database must keep true
// through two instances at once: the key cap, an alias taken once, an
// invitation accepted once, a workspace never left without an owner.
func TestInstancesRaceInvariants(t *testing.T) {
	pgtest.SkipUnlessPostgres(t)
	t.Parallel()
	const maxKeys = 10
	a := newEnv(t, func(c *Config) { c.MaxKeysPerWorkspace = maxKeys; c.Plans = map[link.Plan]int{link.PlanFree: 0} })
	b := a.sibling()
	envs := []*env{a, b}
	// race runs n requests at once, alternating between the instances,
	// and counts the answers' statuses.
	race := func(n int, req func(i int) *http.Request) map[int]int {
		var mu sync.Mutex
		counts := map[int]int{}
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := envs[i%2].request(req(i))
				mu.Lock()
				counts[r.status]++
				mu.Unlock()
			})
		}
		wg.Wait()
		return counts
	}

	t.Run("key cap", func(t *testing.T) {
		counts := race(30, func(int) *http.Request {
			return newRequest("POST", "/v1/keys", a.writeKey, `{"name":"racer","scope":"read"}`)
		})
		if counts[201] != maxKeys-2 || counts[409] != 30-(maxKeys-2) {
			t.Fatalf("30 creations over two instances under a cap of %d with 2 keys: %v", maxKeys, counts)
		}
	})
	t.Run("one alias", func(t *testing.T) {
		counts := race(20, func(i int) *http.Request {
			return newRequest("POST", "/v1/links", a.writeKey, fmt.Sprintf(`{"destination_url":"https://example.com/%d","alias":"contested"}`, i))
		})
		if counts[201] != 1 || counts[409] != 19 {
			t.Fatalf("20 creations of one alias over two instances: %v", counts)
		}
	})
	t.Run("one invitation", func(t *testing.T) {
		token := a.do("POST", "/v1/invitations", a.adminToken, `{"email":"once@example.com","role":"read"}`, 201).str("token")
		counts := race(10, func(i int) *http.Request {
			return newRequest("POST", "/v1/invitations/accept", "", fmt.Sprintf(`{"token":%q,"name":"N%d","password":"a long password %d"}`, token, i, i))
		})
		if counts[201] != 1 || counts[201]+counts[410]+counts[409] != 10 {
			t.Fatalf("10 acceptances of one invitation over two instances: %v", counts)
		}
	})
	t.Run("an owner left", func(t *testing.T) {
		for round := range 5 {
			email := fmt.Sprintf("owner%d@example.com", round)
			inv := a.do("POST", "/v1/invitations", a.adminToken, `{"email":"`+email+`","role":"owner"}`, 201)
			joined := b.do("POST", "/v1/invitations/accept", "", `{"token":"`+inv.str("token")+`","name":"O","password":"a long password 1"}`, 201)
			admin := a.do("GET", "/v1/me", a.adminToken, "", 200).str("id")
			// Each owner removes the other at the same moment, one through
			// each instance.
			var wg sync.WaitGroup
			var ra, rb *response
			wg.Go(func() { ra = a.request(newRequest("DELETE", "/v1/members/"+joined.str("user_id"), a.adminToken, "")) })
			wg.Go(func() { rb = b.request(newRequest("DELETE", "/v1/members/"+admin, joined.str("token"), "")) })
			wg.Wait()
			members := a.db.Members
			ms, err := members.FindMembers(context.Background(), a.ws)
			if err != nil {
				t.Fatal(err)
			}
			owners := 0
			for _, m := range ms {
				if m.Role == link.RoleOwner {
					owners++
				}
			}
			if owners == 0 {
				t.Fatalf("round %d: no owner left (answers %d and %d)", round, ra.status, rb.status)
			}
			if rb.status == 204 { // the admin was removed: stop here
				t.Logf("round %d: the admin was removed, the new owner stays", round)
				return
			}
		}
	})
}
