package server

import (
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/auth"
)

// TestOIDCKelvinSignIsNotK reproduces the attack of issue 24, item 6: an ID
// token for "\u212Aate@example.com" (the Kelvin sign, which Unicode
// lower-cases to k) signed in as the existing user kate@example.com.
// Addresses fold only their ASCII letters, so it is another address.
func TestOIDCKelvinSignIsNotK(t *testing.T) {
	t.Parallel()
	e := newOIDCEnv(t, func(o *auth.OIDC) { o.AllowedDomains = []string{"example.com", "work.example"} })
	kate := e.do("POST", "/v1/users", e.adminToken, `{"email":"kate@example.com","name":"Kate","password":"kate's long password"}`, 201).str("id")
	b := e.browser(t)

	// Kate herself, in any ASCII case, is Kate.
	e.op.QueueUser(person("KATE@Example.com", true))
	if got := e.do("GET", "/v1/me", b.signIn(), "", 200).str("id"); got != kate {
		t.Fatalf("KATE@Example.com signed in as %s, want Kate (%s)", got, kate)
	}

	before := e.userCount()
	e.op.QueueUser(person("\u212Aate@example.com", true))
	res, body := b.get(b.toCallback())
	if detail := b.problem(res, body, 403, "forbidden"); detail == "" {
		t.Fatal("no detail")
	}
	if got := e.userCount(); got != before {
		t.Fatalf("%d users, want %d", got, before)
	}

	// A domain allowed by its ASCII spelling does not allow a look-alike
	// (exampl\u212A.com, as it was, folds to examplk.com: no look-alike).
	e.op.QueueUser(person("kate@wor\u212A.example", true))
	res, body = b.get(b.toCallback())
	wantDomain := b.problem(res, body, 403, "forbidden")
	if got := e.userCount(); got != before {
		t.Fatalf("%d users after %q, want %d", got, wantDomain, before)
	}
	// Refused for its domain, not only for naming no user.
	if !strings.Contains(wantDomain, "may not sign in") {
		t.Fatalf("detail %q, want the domain refused", wantDomain)
	}

	// Nor does a password login under the Kelvin sign reach Kate.
	r := e.request(newRequest("POST", "/v1/auth/login", "", `{"email":"\u212Aate@example.com","password":"kate's long password"}`))
	wantProblem(t, r, 401, "unauthorized")
	e.login("Kate@EXAMPLE.com", "kate's long password")
}

// TestOIDCKelvinSignAutoCreated: with auto_create on, the Kelvin sign's
// address is a new user of its own, never Kate.
func TestOIDCKelvinSignAutoCreated(t *testing.T) {
	t.Parallel()
	e := newOIDCEnv(t, func(o *auth.OIDC) { o.AutoCreate = true })
	kate := e.do("POST", "/v1/users", e.adminToken, `{"email":"kate@example.com","name":"Kate","password":"kate's long password"}`, 201).str("id")
	b := e.browser(t)
	e.op.QueueUser(person("\u212Aate@example.com", true))
	me := e.do("GET", "/v1/me", b.signIn(), "", 200)
	if me.str("id") == kate {
		t.Fatal("the Kelvin sign's address signed in as kate@example.com")
	}
	if got, want := me.str("email"), "\u212Aate@example.com"; got != want {
		t.Fatalf("email %q, want %q", got, want)
	}
}

// TestInvitationLongSIsNotS reproduces the attack of issue 24, item 9: the
// user ſam@example.com (long s, which folds to s) accepted an owner
// invitation addressed to sam@example.com.
func TestInvitationLongSIsNotS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/users", e.adminToken, `{"email":"\u017Fam@example.com","name":"Not Sam","password":"a long new password"}`, 201)
	notSam := e.login("\u017Fam@example.com", "a long new password")
	tok := e.invite(e.adminToken, "sam@example.com", "owner")

	r := e.request(newRequest("POST", "/v1/invitations/accept", notSam, `{"token":"`+tok+`"}`))
	wantProblem(t, r, 403, "forbidden")
	wantDetail(t, r, "this invitation is for sam@example.com")
	if ws := e.do("GET", "/v1/me", notSam, "", 200).path("workspaces").([]any); len(ws) != 0 {
		t.Fatalf("ſam@example.com joined %v", ws)
	}

	// Sam, in any ASCII case, accepts it.
	e.do("POST", "/v1/users", e.adminToken, `{"email":"Sam@Example.com","name":"Sam","password":"sam's long password"}`, 201)
	sam := e.login("SAM@example.com", "sam's long password")
	e.do("POST", "/v1/invitations/accept", sam, `{"token":"`+tok+`"}`, 200)
}
