package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// invite makes an invitation as cred in the admin's workspace and returns
// its token.
func (e *env) invite(cred, email, role string) string {
	e.t.Helper()
	return e.do("POST", "/v1/invitations", cred, `{"email":"`+email+`","role":"`+role+`"}`, 201).str("token")
}

// join invites email with role to the admin's workspace and accepts it as
// a new person; it returns the new user's JWT and ID.
func (e *env) join(email, role string) (jwt, id string) {
	e.t.Helper()
	tok := e.invite(e.adminToken, email, role)
	r := e.do("POST", "/v1/invitations/accept", "", `{"token":"`+tok+`","name":"New Person","password":"a long new password"}`, 201)
	return r.str("token"), r.str("user_id")
}

// inWS returns a request naming the workspace ws.
func inWS(method, path, cred, body, ws string) *http.Request {
	req := newRequest(method, path, cred, body)
	req.Header.Set("X-Workspace-Id", ws)
	return req
}

func TestInvitationForANewPerson(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/invitations", e.adminToken, `{"email":" Sam@Example.com ","role":"read_write"}`, 201)
	tok := r.str("token")
	if got, want := r.str("url"), "http://lb.test/app/invite#token="+tok; got != want {
		t.Fatalf("url = %q, want %q", got, want)
	}
	if got, want := r.str("email"), "sam@example.com"; got != want {
		t.Fatalf("email = %q, want %q", got, want)
	}
	if got, want := r.str("expires_at"), testStart.Add(7*24*time.Hour).Format(time.RFC3339); got != want {
		t.Fatalf("expires_at = %q, want %q (auth.invitation_ttl defaults to 7 days)", got, want)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the answer with the token may be cached: %q", r.header.Get("Cache-Control"))
	}
	invID := r.str("id")

	t.Run("the list shows it without its token", func(t *testing.T) {
		l := e.do("GET", "/v1/invitations", e.adminToken, "", 200)
		if got := l.path("data", 0, "id"); got != invID {
			t.Fatalf("first invitation = %v, want %s", got, invID)
		}
		if strings.Contains(string(l.raw), tok) || l.path("data", 0, "url") != nil || l.path("data", 0, "token") != nil {
			t.Fatalf("list shows the token: %s", l.raw)
		}
	})

	t.Run("a new person needs a name and a good password", func(t *testing.T) {
		for _, body := range []string{
			`{"token":"` + tok + `"}`,
			`{"token":"` + tok + `","name":"Sam","password":"short"}`,
			`{"token":"` + tok + `","name":" ","password":"a long new password"}`,
			// The embedded list of common passwords applies here too.
			`{"token":"` + tok + `","name":"Sam","password":"1234567890"}`,
		} {
			wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", "", body)), 422, "validation_failed")
		}
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", "", `{"name":"Sam"}`)), 422, "validation_failed")
	})

	var samJWT string
	t.Run("accepting creates the user, joins and signs in", func(t *testing.T) {
		r := e.do("POST", "/v1/invitations/accept", "", `{"token":"`+tok+`","name":"Sam Jones","password":"a long new password"}`, 201)
		samJWT = r.str("token")
		if got := r.path("workspace", "id"); got != e.ws {
			t.Fatalf("workspace = %v, want %s", got, e.ws)
		}
		if got := r.path("workspace", "role"); got != "read_write" {
			t.Fatalf("role = %v", got)
		}
		me := e.do("GET", "/v1/me", samJWT, "", 200)
		if got := me.str("email"); got != "sam@example.com" {
			t.Fatalf("email = %q", got)
		}
		// The password works for login, and the role for writing.
		e.login("sam@example.com", "a long new password")
		e.do("POST", "/v1/links", samJWT, `{"destination_url":"https://example.com/sam"}`, 201)
		m := e.do("GET", "/v1/members", samJWT, "", 200)
		if got := m.path("data", 1, "name"); got != "Sam Jones" {
			t.Fatalf("members = %s", m.raw)
		}
		if got := m.path("data", 1, "role"); got != "read_write" {
			t.Fatalf("members = %s", m.raw)
		}
	})

	t.Run("the link works once", func(t *testing.T) {
		r := e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+tok+`","name":"Eve","password":"another long password"}`))
		wantProblem(t, r, 410, "gone")
		if !strings.Contains(r.str("detail"), "used already") {
			t.Fatalf("detail = %q", r.str("detail"))
		}
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", samJWT, `{"token":"`+tok+`"}`)), 410, "gone")
		if got := len(e.do("GET", "/v1/invitations", e.adminToken, "", 200).path("data").([]any)); got != 0 {
			t.Fatalf("%d invitations pending after use", got)
		}
		// Revoking a used invitation: it is not pending.
		wantProblem(t, e.request(newRequest("DELETE", "/v1/invitations/"+invID, e.adminToken, "")), 404, "not_found")
	})

	t.Run("the page of the link", func(t *testing.T) {
		// The dashboard's page at /app/invite loads its app, whose
		// invitation page accepts with POST /v1/invitations/accept.
		r := e.do("GET", "/app/invite", "", "", 200)
		if r.header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("page: %s %v", r.raw, r.header)
		}
		js := e.serve("/app/assets/"+e.srv.dashboard.AssetName("invite.js"), 200)
		if !strings.Contains(string(r.raw), "/app/assets/") || !strings.Contains(string(js.raw), "/v1/invitations/accept") {
			t.Fatalf("page: %s\ninvite.js: %s", r.raw, js.raw)
		}
	})
}

func TestInvitationForASignedInUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.login("other@example.com", "other password 123")
	tok := e.invite(e.adminToken, "other@example.com", "read")

	wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", other, `{"token":"`+tok+`","name":"Other"}`)), 400, "invalid_request")
	r := e.do("POST", "/v1/invitations/accept", other, `{"token":"`+tok+`"}`, 200)
	if r.path("token") != nil {
		t.Fatalf("a signed-in user got a new token: %s", r.raw)
	}
	if got := r.path("workspace", "role"); got != "read" {
		t.Fatalf("role = %v", got)
	}
	// Other now has two workspaces; in the admin's, they read only.
	if got := len(e.do("GET", "/v1/me", other, "", 200).path("workspaces").([]any)); got != 2 {
		t.Fatalf("%d workspaces", got)
	}
	if r := e.request(inWS("GET", "/v1/links", other, "", e.ws)); r.status != 200 {
		t.Fatalf("read in the new workspace: %d %s", r.status, r.raw)
	}
	wantProblem(t, e.request(inWS("POST", "/v1/links", other, `{"destination_url":"https://example.com/"}`, e.ws)), 403, "forbidden")

	// A member cannot be invited again, nor use another link to join again.
	wantProblem(t, e.request(newRequest("POST", "/v1/invitations", e.adminToken, `{"email":"other@example.com","role":"owner"}`)), 409, "conflict")
	wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", other, `{"token":"`+tok+`"}`)), 410, "gone")
}

func TestInvitationAttacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.InvitationTTL = time.Hour })
	other := e.login("other@example.com", "other password 123")

	t.Run("for another e-mail", func(t *testing.T) {
		tok := e.invite(e.adminToken, "someone@example.com", "owner")
		r := e.request(newRequest("POST", "/v1/invitations/accept", other, `{"token":"`+tok+`"}`))
		wantProblem(t, r, 403, "forbidden")
		wantProblem(t, e.request(inWS("GET", "/v1/links", other, "", e.ws)), 404, "not_found")
		// An e-mail with an account must sign in: nobody takes it over as a new person.
		tok = e.invite(e.adminToken, "other@example.com", "owner")
		r = e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+tok+`","name":"Mallory","password":"mallory's password"}`))
		wantProblem(t, r, 409, "conflict")
		e.login("other@example.com", "other password 123")
		wantProblem(t, e.request(inWS("GET", "/v1/links", other, "", e.ws)), 404, "not_found")
	})

	t.Run("after expiry", func(t *testing.T) {
		r := e.do("POST", "/v1/invitations", e.adminToken, `{"email":"late@example.com","role":"read"}`, 201)
		if got, want := r.str("expires_at"), e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339); got != want {
			t.Fatalf("expires_at = %q, want %q (auth.invitation_ttl)", got, want)
		}
		e.clock.Add(time.Hour)
		r = e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+r.str("token")+`","name":"Late","password":"a long new password"}`))
		wantProblem(t, r, 410, "gone")
		if !strings.Contains(r.str("detail"), "expired") {
			t.Fatalf("detail = %q", r.str("detail"))
		}
		wantProblem(t, e.request(newRequest("POST", "/v1/auth/login", "", `{"email":"late@example.com","password":"a long new password"}`)), 401, "unauthorized")
	})

	t.Run("after revocation", func(t *testing.T) {
		r := e.do("POST", "/v1/invitations", e.adminToken, `{"email":"gone@example.com","role":"read"}`, 201)
		e.do("DELETE", "/v1/invitations/"+r.str("id"), e.adminToken, "", 204)
		wantProblem(t, e.request(newRequest("DELETE", "/v1/invitations/"+r.str("id"), e.adminToken, "")), 404, "not_found")
		a := e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+r.str("token")+`","name":"Gone","password":"a long new password"}`))
		wantProblem(t, a, 410, "gone")
		if !strings.Contains(a.str("detail"), "revoked") {
			t.Fatalf("detail = %q", a.str("detail"))
		}
		// Another workspace's owner cannot revoke it, nor see it.
		r = e.do("POST", "/v1/invitations", e.adminToken, `{"email":"kept@example.com","role":"read"}`, 201)
		wantProblem(t, e.request(newRequest("DELETE", "/v1/invitations/"+r.str("id"), other, "")), 404, "not_found")
		if strings.Contains(string(e.do("GET", "/v1/invitations", other, "", 200).raw), "kept@") {
			t.Fatal("another workspace's owner sees the invitation")
		}
	})

	t.Run("forged and malformed tokens", func(t *testing.T) {
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"MZXW6YTBOI4TQMRTGQ2DMNZYHE","name":"X","password":"a long new password"}`)), 404, "not_found")
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+strings.Repeat("A", 10000)+`","name":"X","password":"a long new password"}`)), 404, "not_found")
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":""}`)), 422, "validation_failed")
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"x","extra":1}`)), 400, "invalid_request")
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", "not-a-jwt", `{"token":"x"}`)), 401, "unauthorized")
	})

	t.Run("API keys neither accept nor invite", func(t *testing.T) {
		tok := e.invite(e.adminToken, "key@example.com", "read")
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", e.writeKey, `{"token":"`+tok+`"}`)), 403, "forbidden")
		for _, key := range []string{e.writeKey, e.readKey} {
			wantProblem(t, e.request(newRequest("POST", "/v1/invitations", key, `{"email":"k@example.com","role":"read"}`)), 403, "forbidden")
			wantProblem(t, e.request(newRequest("GET", "/v1/invitations", key, "")), 403, "forbidden")
		}
	})

	t.Run("only owners invite, and never above their role", func(t *testing.T) {
		rw, _ := e.join("rw@example.com", "read_write")
		r := e.request(newRequest("POST", "/v1/invitations", rw, `{"email":"boss@example.com","role":"owner"}`))
		wantProblem(t, r, 403, "forbidden")
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations", rw, `{"email":"peer@example.com","role":"read"}`)), 403, "forbidden")
		wantProblem(t, e.request(newRequest("GET", "/v1/invitations", rw, "")), 403, "forbidden")
		for _, inv := range e.do("GET", "/v1/invitations", e.adminToken, "", 200).path("data").([]any) {
			if email := inv.(map[string]any)["email"]; email == "boss@example.com" || email == "peer@example.com" {
				t.Fatalf("a read_write member made an invitation: %v", inv)
			}
		}
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations", e.adminToken, `{"email":"x@example.com","role":"god"}`)), 422, "validation_failed")
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations", e.adminToken, `{"email":"not an e-mail","role":"read"}`)), 422, "validation_failed")
	})

	t.Run("one pending invitation per e-mail", func(t *testing.T) {
		e.invite(e.adminToken, "twice@example.com", "read")
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations", e.adminToken, `{"email":"TWICE@example.com","role":"owner"}`)), 409, "conflict")
	})
}

func TestInvitationAcceptIsLimitedPerAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.LoginPerIP = 3 })
	for range 3 {
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"guess","name":"X","password":"a long new password"}`)), 404, "not_found")
	}
	r := e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"guess","name":"X","password":"a long new password"}`))
	wantProblem(t, r, 429, "rate_limited")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
}

func TestMembers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sam, samID := e.join("sam@example.com", "read")
	me := e.do("GET", "/v1/me", e.adminToken, "", 200).str("id")

	t.Run("any member and any key reads the list", func(t *testing.T) {
		for _, cred := range []string{e.adminToken, sam, e.readKey, e.writeKey} {
			r := e.do("GET", "/v1/members", cred, "", 200)
			if got := len(r.path("data").([]any)); got != 2 {
				t.Fatalf("%d members: %s", got, r.raw)
			}
			if r.path("data", 0, "user_id") != me || r.path("data", 0, "role") != "owner" || r.path("data", 0, "email") != "admin@example.com" {
				t.Fatalf("first member: %s", r.raw)
			}
		}
		// The other workspace's key sees its own members only.
		r := e.do("GET", "/v1/members", e.otherKey, "", 200)
		if got := r.path("data", 0, "email"); got != "other@example.com" || len(r.path("data").([]any)) != 1 {
			t.Fatalf("other workspace's members: %s", r.raw)
		}
	})

	t.Run("only owners change roles", func(t *testing.T) {
		wantProblem(t, e.request(newRequest("PATCH", "/v1/members/"+samID, sam, `{"role":"owner"}`)), 403, "forbidden")
		wantProblem(t, e.request(newRequest("PATCH", "/v1/members/"+samID, e.writeKey, `{"role":"owner"}`)), 403, "forbidden")
		wantProblem(t, e.request(newRequest("PATCH", "/v1/members/"+samID, e.adminToken, `{}`)), 422, "validation_failed")
		wantProblem(t, e.request(newRequest("PATCH", "/v1/members/"+samID, e.adminToken, `{"role":"admin"}`)), 422, "validation_failed")
		wantProblem(t, e.request(newRequest("PATCH", "/v1/members/usr_nobody", e.adminToken, `{"role":"read"}`)), 404, "not_found")
		// The other workspace's owner is not a member here.
		other := e.login("other@example.com", "other password 123")
		otherID := e.do("GET", "/v1/me", other, "", 200).str("id")
		wantProblem(t, e.request(newRequest("PATCH", "/v1/members/"+otherID, e.adminToken, `{"role":"read"}`)), 404, "not_found")
		r := e.do("PATCH", "/v1/members/"+samID, e.adminToken, `{"role":"read_write"}`, 200)
		if got := r.str("role"); got != "read_write" {
			t.Fatalf("role = %q", got)
		}
		// The new role applies from the next request.
		e.do("POST", "/v1/links", sam, `{"destination_url":"https://example.com/sam"}`, 201)
	})

	t.Run("the last owner neither steps down nor leaves", func(t *testing.T) {
		r := e.request(newRequest("PATCH", "/v1/members/"+me, e.adminToken, `{"role":"read"}`))
		wantProblem(t, r, 409, "conflict")
		if !strings.Contains(r.str("detail"), "at least one owner") {
			t.Fatalf("detail = %q", r.str("detail"))
		}
		wantProblem(t, e.request(newRequest("DELETE", "/v1/members/"+me, e.adminToken, "")), 409, "conflict")
		if got := e.do("GET", "/v1/workspaces/"+e.ws, e.adminToken, "", 200).str("role"); got != "owner" {
			t.Fatalf("role = %q", got)
		}
	})

	t.Run("a member leaves; only owners remove others", func(t *testing.T) {
		pat, patID := e.join("pat@example.com", "read")
		wantProblem(t, e.request(newRequest("DELETE", "/v1/members/"+samID, pat, "")), 403, "forbidden")
		wantProblem(t, e.request(newRequest("DELETE", "/v1/members/"+patID, e.writeKey, "")), 403, "forbidden")
		e.do("DELETE", "/v1/members/"+patID, pat, "", 204)
		wantProblem(t, e.request(newRequest("DELETE", "/v1/members/"+patID, e.adminToken, "")), 404, "not_found")
	})

	t.Run("with two owners, one may leave", func(t *testing.T) {
		e.do("PATCH", "/v1/members/"+samID, e.adminToken, `{"role":"owner"}`, 200)
		e.do("PATCH", "/v1/members/"+me, sam, `{"role":"read"}`, 200)
		wantProblem(t, e.request(newRequest("POST", "/v1/invitations", e.adminToken, `{"email":"x@example.com","role":"read"}`)), 403, "forbidden")
		e.do("DELETE", "/v1/members/"+me, e.adminToken, "", 204)
		wantProblem(t, e.request(newRequest("DELETE", "/v1/members/"+samID, sam, "")), 409, "conflict")
		// The admin, who left, no longer reaches the workspace's objects;
		// as instance admin they still see the workspace itself.
		wantProblem(t, e.request(inWS("GET", "/v1/links", e.adminToken, "", e.ws)), 404, "not_found")
		e.do("GET", "/v1/workspaces/"+e.ws, e.adminToken, "", 200)
	})
}

func TestRemovedMemberLosesTheWorkspaceAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sam, samID := e.join("sam@example.com", "read_write")
	lnk := e.do("POST", "/v1/links", sam, `{"destination_url":"https://example.com/sam"}`, 201).str("id")
	// Sam has a workspace of their own too.
	own := e.do("POST", "/v1/workspaces", sam, `{"name":"Sam's"}`, 201).str("id")

	e.do("DELETE", "/v1/members/"+samID, e.adminToken, "", 204)

	t.Run("403 on the workspace", func(t *testing.T) {
		r := e.request(newRequest("GET", "/v1/workspaces/"+e.ws, sam, ""))
		wantProblem(t, r, 403, "forbidden")
		if !strings.Contains(r.str("detail"), "no longer a member") {
			t.Fatalf("detail = %q", r.str("detail"))
		}
		wantProblem(t, e.request(newRequest("PATCH", "/v1/workspaces/"+e.ws, sam, `{"name":"mine"}`)), 403, "forbidden")
	})
	t.Run("404 for its objects", func(t *testing.T) {
		wantProblem(t, e.request(inWS("GET", "/v1/links", sam, "", e.ws)), 404, "not_found")
		wantProblem(t, e.request(inWS("GET", "/v1/members", sam, "", e.ws)), 404, "not_found")
		wantProblem(t, e.request(inWS("POST", "/v1/links", sam, `{"destination_url":"https://example.com/x"}`, e.ws)), 404, "not_found")
		wantProblem(t, e.request(newRequest("GET", "/v1/links/"+lnk, sam, "")), 404, "not_found")
		wantProblem(t, e.request(inWS("DELETE", "/v1/links/"+lnk, sam, "", own)), 404, "not_found")
		e.do("GET", "/v1/links/"+lnk, e.adminToken, "", 200)
	})
	t.Run("the token keeps working for their other workspaces", func(t *testing.T) {
		e.do("GET", "/v1/links", sam, "", 200)
		ws := e.do("GET", "/v1/me", sam, "", 200).path("workspaces").([]any)
		if len(ws) != 1 || ws[0].(map[string]any)["id"] != own {
			t.Fatalf("workspaces = %v", ws)
		}
	})
	t.Run("a stranger still gets 404, never 403", func(t *testing.T) {
		other := e.login("other@example.com", "other password 123")
		wantProblem(t, e.request(newRequest("GET", "/v1/workspaces/"+e.ws, other, "")), 404, "not_found")
	})
	t.Run("invited again, they are a member again", func(t *testing.T) {
		tok := e.invite(e.adminToken, "sam@example.com", "read")
		e.do("POST", "/v1/invitations/accept", sam, `{"token":"`+tok+`"}`, 200)
		e.do("GET", "/v1/workspaces/"+e.ws, sam, "", 200)
		if r := e.request(inWS("GET", "/v1/links/"+lnk, sam, "", e.ws)); r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.raw)
		}
	})
}

// TestInvitationAcceptedOnceUnderRace sends the same invitation from
// several clients at once: exactly one joins, the others are told it was
// used, and exactly one user exists.
func TestInvitationAcceptedOnceUnderRace(t *testing.T) {
	e := newEnv(t)
	tok := e.invite(e.adminToken, "race@example.com", "read")
	const n = 8
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+tok+`","name":"Racer","password":"a long new password"}`)
			req.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", 10+i)
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, req)
			statuses <- rec.Code
		}()
	}
	wg.Wait()
	close(statuses)
	got := map[int]int{}
	for s := range statuses {
		got[s]++
	}
	if got[201] != 1 || got[410] != n-1 {
		t.Fatalf("statuses = %v, want one 201 and %d 410", got, n-1)
	}
	if got := len(e.do("GET", "/v1/members", e.adminToken, "", 200).path("data").([]any)); got != 2 {
		t.Fatalf("%d members, want 2", got)
	}
}
