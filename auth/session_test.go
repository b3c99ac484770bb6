package auth

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/link"
)

func TestSessions(t *testing.T) {
	c := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	s := NewSessions(c.Now)
	j := testJWT(c)
	j.Generation = s.Generation
	verify := func(tok string) Claims {
		t.Helper()
		cl, err := j.VerifyClaims(tok)
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	issue := func(uid string) Claims {
		t.Helper()
		tok, _, err := j.Issue(uid)
		if err != nil {
			t.Fatal(err)
		}
		return verify(tok)
	}
	wantRefused := func(cl Claims, why string) {
		t.Helper()
		err := s.Check(cl)
		if link.ErrorCode(err) != link.EUNAUTHORIZED || !strings.Contains(link.ErrorMessage(err), why) {
			t.Fatalf("Check = %v, want EUNAUTHORIZED saying %q", err, why)
		}
	}

	a1, a2, b1 := issue("usr_a"), issue("usr_a"), issue("usr_b")
	if a1.ID == "" || a1.ID == a2.ID {
		t.Fatalf("token IDs %q and %q: want distinct", a1.ID, a2.ID)
	}
	for _, cl := range []Claims{a1, a2, b1} {
		if err := s.Check(cl); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("revoke one", func(t *testing.T) {
		s.Revoke(link.RevokedToken{ID: a1.ID, ExpiresAt: a1.ExpiresAt})
		wantRefused(a1, "logged out")
		if err := s.Check(a2); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("end earlier tokens", func(t *testing.T) {
		s.SetUser(&link.User{ID: "usr_a", TokenGeneration: 1})
		wantRefused(a2, "password change")
		a3 := issue("usr_a")
		if a3.Generation != 1 {
			t.Fatalf("generation %d, want 1", a3.Generation)
		}
		if err := s.Check(a3); err != nil {
			t.Fatal(err)
		}
		// A change recorded late with an older generation never goes back.
		s.SetUser(&link.User{ID: "usr_a", TokenGeneration: 0})
		wantRefused(a2, "password change")
		if err := s.Check(b1); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		if s.AnyDisabled() {
			t.Fatal("AnyDisabled before any is")
		}
		s.SetUser(&link.User{ID: "usr_b", Disabled: true})
		wantRefused(b1, "disabled")
		wantRefused(issue("usr_b"), "disabled")
		if !s.AnyDisabled() || !s.Disabled("usr_b") || s.Disabled("usr_a") {
			t.Fatal("Disabled/AnyDisabled disagree")
		}
		s.SetUser(&link.User{ID: "usr_b"})
		if s.AnyDisabled() {
			t.Fatal("AnyDisabled after enabling")
		}
		if err := s.Check(b1); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("revoked tokens are forgotten after expiry", func(t *testing.T) {
		if got := s.Revoked(); got != 1 {
			t.Fatalf("Revoked = %d, want 1", got)
		}
		c.Add(2 * time.Hour) // past a1's expiry and a sweep interval
		a4 := issue("usr_a")
		s.Revoke(link.RevokedToken{ID: a4.ID, ExpiresAt: a4.ExpiresAt})
		if got := s.Revoked(); got != 1 {
			t.Fatalf("Revoked = %d, want 1 (the expired entry dropped)", got)
		}
	})
}

func TestJWTClaims(t *testing.T) {
	c := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	j := testJWT(c)
	j.Generation = func(uid string) uint64 { return 7 }
	tok, exp, err := j.Issue("usr_a")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := j.VerifyClaims(tok)
	if err != nil {
		t.Fatal(err)
	}
	if cl.UserID != "usr_a" || cl.Generation != 7 || !cl.ExpiresAt.Equal(exp) || !cl.IssuedAt.Equal(c.Now()) || len(cl.ID) < 20 {
		t.Fatalf("claims = %+v", cl)
	}
}

// TestIssueGeneration: a token issued with the generation a login read
// before a password change is ended by that change, whatever Generation
// says when it is signed.
func TestIssueGeneration(t *testing.T) {
	c := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	j := testJWT(c)
	s := NewSessions(c.Now)
	j.Generation = s.Generation
	s.SetUser(&link.User{ID: "usr_a", TokenGeneration: 1})
	tok, _, err := j.IssueGeneration("usr_a", 0)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := j.VerifyClaims(tok)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Generation != 0 {
		t.Fatalf("generation = %d, want 0", cl.Generation)
	}
	if err := s.Check(cl); link.ErrorCode(err) != link.EUNAUTHORIZED {
		t.Fatalf("Check = %v, want unauthorized", err)
	}
	if tok, _, err = j.Issue("usr_a"); err != nil {
		t.Fatal(err)
	}
	if cl, err = j.VerifyClaims(tok); err != nil || s.Check(cl) != nil || cl.Generation != 1 {
		t.Fatalf("a token of the current generation: %+v, %v, %v", cl, err, s.Check(cl))
	}
}

// TestSessionsConcurrent checks tokens while generations rise, users are
// disabled and enabled and tokens are revoked, for the race detector; at
// the end the state is what the last changes say.
func TestSessionsConcurrent(t *testing.T) {
	c := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	s := NewSessions(c.Now)
	old := Claims{UserID: "usr_a", ID: "old", ExpiresAt: c.Now().Add(time.Hour)}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				s.SetUser(&link.User{ID: "usr_a", TokenGeneration: uint64(g*200 + i + 1), Disabled: i%2 == 0})
				s.Revoke(link.RevokedToken{ID: fmt.Sprintf("t%d-%d", g, i), ExpiresAt: c.Now().Add(time.Hour)})
				_ = s.Check(old)
				_ = s.AnyDisabled()
			}
		}()
	}
	wg.Wait()
	s.SetUser(&link.User{ID: "usr_a", TokenGeneration: 0})
	if got, want := s.Generation("usr_a"), uint64(800); got != want {
		t.Fatalf("generation %d, want %d (the highest stored)", got, want)
	}
	if s.AnyDisabled() {
		t.Fatal("AnyDisabled after the last change enabled the user")
	}
	if got, want := s.Revoked(), 800; got != want {
		t.Fatalf("Revoked = %d, want %d", got, want)
	}
	if s.Check(old) == nil {
		t.Fatal("a token of generation 0 passed")
	}
}
