package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/internal/pgtest"
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
