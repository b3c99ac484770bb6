package server

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLastOwnerIsOneWhoCanSignIn: an owner whose account is disabled signs
// in nowhere, so the last owner who can act neither steps down nor leaves
// while only disabled owners would remain.
func TestLastOwnerIsOneWhoCanSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	me := e.do("GET", "/v1/me", e.adminToken, "", 200).str("id")
	_, samID := e.join("sam@example.com", "owner")
	e.do("PATCH", "/v1/users/"+samID, e.adminToken, `{"disabled":true}`, 200)

	r := e.request(newRequest("PATCH", "/v1/members/"+me, e.adminToken, `{"role":"read"}`))
	wantProblem(t, r, 409, "conflict")
	wantDetail(t, r, "disabled")
	wantProblem(t, e.request(newRequest("DELETE", "/v1/members/"+me, e.adminToken, "")), 409, "conflict")
	if got := e.do("GET", "/v1/workspaces/"+e.ws, e.adminToken, "", 200).str("role"); got != "owner" {
		t.Fatalf("role = %q, want owner", got)
	}

	// Enabled again, Sam is an owner who can act: the admin may step down.
	e.do("PATCH", "/v1/users/"+samID, e.adminToken, `{"disabled":false}`, 200)
	e.do("PATCH", "/v1/members/"+me, e.adminToken, `{"role":"read"}`, 200)
	sam := e.login("sam@example.com", "a long new password")
	e.do("PATCH", "/v1/members/"+me, sam, `{"role":"owner"}`, 200)

	// An owner who can act may remove a disabled owner.
	e.do("PATCH", "/v1/users/"+samID, e.adminToken, `{"disabled":true}`, 200)
	e.do("DELETE", "/v1/members/"+samID, e.adminToken, "", 204)
}

// TestCommonPasswordTricks: spaces around a common password, or padding a
// short one up to the minimum, are refused wherever a password is chosen.
func TestCommonPasswordTricks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.invite(e.adminToken, "pad@example.com", "read")
	for _, pw := range []string{"password1 ", " qwertyuiop ", `\t1234567890`, "          "} {
		r := e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+tok+`","name":"Pad","password":"`+pw+`"}`))
		wantProblem(t, r, 422, "validation_failed")
		wantDetail(t, r, "password")
		r = e.request(newRequest("POST", "/v1/me/password", e.adminToken, `{"current_password":"`+adminPassword+`","new_password":"`+pw+`"}`))
		wantProblem(t, r, 422, "validation_failed")
		r = e.request(newRequest("POST", "/v1/users", e.adminToken, `{"email":"pad2@example.com","name":"Pad","password":"`+pw+`"}`))
		wantProblem(t, r, 422, "validation_failed")
	}
	// The invitation still works with a good password.
	e.do("POST", "/v1/invitations/accept", "", `{"token":"`+tok+`","name":"Pad","password":" a long new password "}`, 201)
	e.login("pad@example.com", " a long new password ")
}

// TestRemovedMembersKeysStop: removing a member ends their access at once,
// the keys they made included (they may hold those tokens), unless an owner
// kept a key for the scripts that use it beforehand.
func TestRemovedMembersKeysStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sam, samID := e.join("sam@example.com", "read_write")
	keyOf := func(cred, name string) (token, id string) {
		r := e.do("POST", "/v1/keys", cred, `{"name":"`+name+`","scope":"read_write"}`, 201)
		return r.str("key"), r.str("id")
	}
	samKey, _ := keyOf(sam, "sam's script")
	minted, _ := keyOf(samKey, "minted by sam's script")
	kept, keptID := keyOf(sam, "kept")
	keptMinted, _ := keyOf(kept, "minted by the kept key")
	// The owner keeps one for a script that must go on.
	e.do("PATCH", "/v1/keys/"+keptID, e.adminToken, `{"keep_when_creator_disabled":true}`, 200)

	e.do("DELETE", "/v1/members/"+samID, e.adminToken, "", 204)
	for _, k := range []string{samKey, minted} {
		wantProblem(t, e.request(newRequest("GET", "/v1/links", k, "")), 401, "unauthorized")
		wantProblem(t, e.request(newRequest("POST", "/v1/links", k, `{"destination_url":"https://example.com/after"}`)), 401, "unauthorized")
	}
	// The owner sees which keys ended: revoked, for good.
	list := e.do("GET", "/v1/keys", e.adminToken, "", 200)
	for _, it := range list.path("data").([]any) {
		m := it.(map[string]any)
		want := map[string]string{"sam's script": "revoked", "minted by sam's script": "revoked", "kept": "active", "minted by the kept key": "active"}[m["name"].(string)]
		if want != "" && m["state"] != want {
			t.Errorf("key %q: state %v, want %s", m["name"], m["state"], want)
		}
	}
	e.do("GET", "/v1/links", kept, "", 200)
	e.do("GET", "/v1/links", keptMinted, "", 200)
	e.do("GET", "/v1/links", e.writeKey, "", 200)

	// A member who leaves on their own ends their keys as well.
	pat, patID := e.join("pat@example.com", "read_write")
	patKey, _ := keyOf(pat, "pat's script")
	e.do("DELETE", "/v1/members/"+patID, pat, "", 204)
	wantProblem(t, e.request(newRequest("GET", "/v1/links", patKey, "")), 401, "unauthorized")
}

// TestRemovedMembersKeysStayRevoked reproduces the attack of issue 24,
// item 13: a removed member's keys were only refused while they were not a
// member, so inviting them again brought every old key back, tokens they
// may have kept or handed on. Removal revokes them in the data file.
func TestRemovedMembersKeysStayRevoked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sam, samID := e.join("sam@example.com", "read_write")
	r := e.do("POST", "/v1/keys", sam, `{"name":"sam's script","scope":"read_write"}`, 201)
	key, keyID := r.str("key"), r.str("id")
	minted := e.do("POST", "/v1/keys", key, `{"name":"minted","scope":"read_write"}`, 201).str("key")

	e.do("DELETE", "/v1/members/"+samID, e.adminToken, "", 204)
	tok := e.invite(e.adminToken, "sam@example.com", "read_write")
	e.do("POST", "/v1/invitations/accept", sam, `{"token":"`+tok+`"}`, 200)
	e.do("GET", "/v1/links", sam, "", 200) // Sam is a member again

	for _, k := range []string{key, minted} {
		r := e.request(newRequest("GET", "/v1/links", k, ""))
		wantProblem(t, r, 401, "unauthorized")
	}
	if got := e.do("GET", "/v1/keys/"+keyID, e.adminToken, "", 200).str("state"); got != "revoked" {
		t.Fatalf("state %q, want revoked", got)
	}
	// Marking it kept now brings nothing back: revoked is final.
	e.do("PATCH", "/v1/keys/"+keyID, e.adminToken, `{"keep_when_creator_disabled":true}`, 200)
	wantProblem(t, e.request(newRequest("GET", "/v1/links", key, "")), 401, "unauthorized")
	// The entry of the removal names the keys it revoked.
	entry := e.do("GET", "/v1/audit-log?action=member.removed", e.adminToken, "", 200).path("data").([]any)[0].(map[string]any)
	ch, _ := entry["changes"].(map[string]any)["keys_revoked"].([]any)
	if len(ch) != 2 || ch[0] != nil || !strings.Contains(fmt.Sprint(ch[1]), keyID) {
		t.Fatalf("keys_revoked = %v, want [nil, …%s…]", ch, keyID)
	}
}

// TestDemotedMembersKeysRead: a key never does more than the member who
// made it may do now; demoted to read, their read_write key reads only,
// and promoted again it writes again. A key an owner keeps is not bound.
func TestDemotedMembersKeysRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sam, samID := e.join("sam@example.com", "read_write")
	r := e.do("POST", "/v1/keys", sam, `{"name":"sam's script","scope":"read_write"}`, 201)
	key, keyID := r.str("key"), r.str("id")
	minted := e.do("POST", "/v1/keys", key, `{"name":"minted","scope":"read_write"}`, 201).str("key")
	e.do("POST", "/v1/links", key, `{"destination_url":"https://example.com/before"}`, 201)

	e.do("PATCH", "/v1/members/"+samID, e.adminToken, `{"role":"read"}`, 200)
	for _, k := range []string{key, minted} {
		e.do("GET", "/v1/links", k, "", 200)
		r := e.request(newRequest("POST", "/v1/links", k, `{"destination_url":"https://example.com/after"}`))
		wantProblem(t, r, 403, "forbidden")
		wantDetail(t, r, "read role")
		wantProblem(t, e.request(newRequest("POST", "/v1/keys", k, `{"name":"escape","scope":"read"}`)), 403, "forbidden")
	}
	// The key itself keeps its scope: the list says what it was made with.
	if got := e.do("GET", "/v1/keys/"+keyID, e.adminToken, "", 200).str("scope"); got != "read_write" {
		t.Fatalf("scope = %q", got)
	}

	e.do("PATCH", "/v1/members/"+samID, e.adminToken, `{"role":"owner"}`, 200)
	e.do("POST", "/v1/links", minted, `{"destination_url":"https://example.com/again"}`, 201)

	e.do("PATCH", "/v1/members/"+samID, sam, `{"role":"read"}`, 200)
	e.do("PATCH", "/v1/keys/"+keyID, e.adminToken, `{"keep_when_creator_disabled":true}`, 200)
	e.do("POST", "/v1/links", key, `{"destination_url":"https://example.com/kept"}`, 201)
}

// TestOwnersDemotingEachOtherKeepAnOwner: two owners who demote each other
// (or leave) at the same moment cannot both succeed; the workspace keeps
// exactly one owner whichever runs first.
func TestOwnersDemotingEachOtherKeepAnOwner(t *testing.T) {
	e := newEnv(t)
	me := e.do("GET", "/v1/me", e.adminToken, "", 200).str("id")
	sam, samID := e.join("sam@example.com", "owner")
	for round := range 20 {
		reqs := []struct{ cred, method, target, body string }{
			{e.adminToken, "PATCH", samID, `{"role":"read"}`},
			{sam, "PATCH", me, `{"role":"read"}`},
		}
		if round%2 == 1 { // both leave at once
			reqs[0] = struct{ cred, method, target, body string }{e.adminToken, "DELETE", me, ""}
			reqs[1] = struct{ cred, method, target, body string }{sam, "DELETE", samID, ""}
		}
		var wg sync.WaitGroup
		for _, q := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.srv.ServeHTTP(httptest.NewRecorder(), newRequest(q.method, "/v1/members/"+q.target, q.cred, q.body))
			}()
		}
		wg.Wait()
		owners := []string{}
		var ownerCred string
		list := e.request(inWS("GET", "/v1/members", e.adminToken, "", e.ws))
		if list.status == 404 { // the admin left: Sam is still a member
			list = e.request(inWS("GET", "/v1/members", sam, "", e.ws))
		}
		if list.status != 200 {
			t.Fatalf("round %d: members: status %d: %s", round, list.status, list.raw)
		}
		for _, m := range list.path("data").([]any) {
			m := m.(map[string]any)
			if m["role"] == "owner" {
				owners = append(owners, m["user_id"].(string))
			}
		}
		if len(owners) != 1 {
			t.Fatalf("round %d: owners %v, want exactly one", round, owners)
		}
		// The one owner makes the other an owner (again) for the next round.
		other, otherEmail := samID, "sam@example.com"
		ownerCred = e.adminToken
		if owners[0] == samID {
			other, otherEmail, ownerCred = me, "admin@example.com", sam
		}
		if r := e.request(newRequest("PATCH", "/v1/members/"+other, ownerCred, `{"role":"owner"}`)); r.status == 404 {
			tok := e.invite(ownerCred, otherEmail, "owner")
			cred := e.adminToken
			if other == samID {
				cred = sam
			}
			e.do("POST", "/v1/invitations/accept", cred, `{"token":"`+tok+`"}`, 200)
		} else if r.status != 200 {
			t.Fatalf("round %d: re-promote: status %d: %s", round, r.status, r.raw)
		}
	}
}

// TestInvitationNeedsItsOwnerStill: nobody grants a role above their own,
// so the links an owner made stop working (410) once that owner is demoted,
// removed or disabled: a demoted owner cannot let themselves back in as an
// owner through a link they made beforehand.
func TestInvitationNeedsItsOwnerStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sam, samID := e.join("sam@example.com", "owner")
	accept := func(tok, name string) *response {
		return e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+tok+`","name":"`+name+`","password":"a long new password"}`))
	}

	t.Run("demoted", func(t *testing.T) {
		tok := e.invite(sam, "sams.alias@example.com", "owner")
		e.do("PATCH", "/v1/members/"+samID, e.adminToken, `{"role":"read"}`, 200)
		r := accept(tok, "Alias")
		wantProblem(t, r, 410, "gone")
		wantDetail(t, r, "no longer an owner")
		wantProblem(t, e.request(newRequest("POST", "/v1/auth/login", "", `{"email":"sams.alias@example.com","password":"a long new password"}`)), 401, "unauthorized")
		// Promoted again, the link works again, until it expires.
		e.do("PATCH", "/v1/members/"+samID, e.adminToken, `{"role":"owner"}`, 200)
		r = accept(tok, "Alias")
		if got := r.path("workspace", "role"); r.status != 201 || got != "owner" {
			t.Fatalf("status %d, role %v: %s", r.status, got, r.raw)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		tok := e.invite(sam, "second.alias@example.com", "read")
		e.do("PATCH", "/v1/users/"+samID, e.adminToken, `{"disabled":true}`, 200)
		wantProblem(t, accept(tok, "Alias"), 410, "gone")
		e.do("PATCH", "/v1/users/"+samID, e.adminToken, `{"disabled":false}`, 200)
	})
	t.Run("removed", func(t *testing.T) {
		sam = e.login("sam@example.com", "a long new password")
		tok := e.invite(sam, "third.alias@example.com", "read")
		e.do("DELETE", "/v1/members/"+samID, e.adminToken, "", 204)
		wantProblem(t, accept(tok, "Alias"), 410, "gone")
		// An owner who stayed revokes it and makes a new link.
		for _, inv := range e.do("GET", "/v1/invitations", e.adminToken, "", 200).path("data").([]any) {
			e.do("DELETE", "/v1/invitations/"+inv.(map[string]any)["id"].(string), e.adminToken, "", 204)
		}
		if r := accept(e.invite(e.adminToken, "third.alias@example.com", "read"), "Third"); r.status != 201 {
			t.Fatalf("status %d: %s", r.status, r.raw)
		}
	})
}

// TestLoginRacingAPasswordChange: a login that checked the old password
// gets a token of the generation it read, so the password change ends it
// even when the token is issued after the change is stored. Every token
// the old password bought is refused once the change has answered.
func TestLoginRacingAPasswordChange(t *testing.T) {
	// The password change waits its turn behind the logins however busy
	// the machine is: this test is of the race, not of the gate.
	e := newEnv(t, func(c *Config) { c.LoginPerIP = 1000; c.CostlyWait = time.Minute })
	for round := range 5 {
		oldPW, newPW := fmt.Sprintf("old password %d ok", round), fmt.Sprintf("new password %d ok", round)
		if round == 0 {
			oldPW = adminPassword
		}
		cur := e.login("admin@example.com", oldPW)
		const n = 24
		tokens := make(chan string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := newRequest("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"`+oldPW+`"}`)
				req.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", 10+i)
				rec := httptest.NewRecorder()
				e.srv.ServeHTTP(rec, req)
				if rec.Code == 200 {
					var out struct{ Token string }
					if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
						t.Error(err)
					}
					tokens <- out.Token
				}
			}()
		}
		e.do("POST", "/v1/me/password", cur, `{"current_password":"`+oldPW+`","new_password":"`+newPW+`"}`, 200)
		wg.Wait()
		close(tokens)
		for tok := range tokens {
			wantProblem(t, e.request(newRequest("GET", "/v1/me", tok, "")), 401, "unauthorized")
		}
		// The next round starts from this round's new password.
		e.do("POST", "/v1/me/password", e.login("admin@example.com", newPW), `{"current_password":"`+newPW+`","new_password":"`+fmt.Sprintf("old password %d ok", round+1)+`"}`, 200)
	}
}

// TestRemovedMembersDeepKeyChainEnds: the walk from a key to the member it
// acts for stops after maxCreatorChain keys, so a member who minted a
// chain of keys one deeper than that had a key that neither their removal
// revoked nor authentication refused once they were gone. A key no longer
// mints a key past the bound, and a key whose walk does not end within it
// is refused.
func TestRemovedMembersDeepKeyChainEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sam, samID := e.join("sam@example.com", "read_write")
	key := e.do("POST", "/v1/keys", sam, `{"name":"k1","scope":"read_write"}`, 201).str("key")
	for i := 2; ; i++ {
		r := e.request(newRequest("POST", "/v1/keys", key, fmt.Sprintf(`{"name":"k%d","scope":"read_write"}`, i)))
		if r.status == 403 {
			if i <= maxCreatorChain {
				t.Fatalf("minting k%d refused; the walk reaches %d keys", i, maxCreatorChain)
			}
			break
		}
		if r.status != 201 {
			t.Fatalf("minting k%d: %d %s", i, r.status, r.raw)
		}
		key = r.str("key")
		if i > maxCreatorChain+1 {
			break
		}
	}
	e.do("GET", "/v1/links", key, "", 200)
	// Nor does it rotate a key, which would make one past the bound.
	other := e.do("POST", "/v1/keys", sam, `{"name":"other","scope":"read_write"}`, 201).str("id")
	r := e.request(newRequest("POST", "/v1/keys/"+other+"/rotate", key, ""))
	wantProblem(t, r, 403, "forbidden")
	wantDetail(t, r, "minted through")
	e.do("DELETE", "/v1/members/"+samID, e.adminToken, "", 204)
	wantProblem(t, e.request(newRequest("GET", "/v1/links", key, "")), 401, "unauthorized")
	tok := e.invite(e.adminToken, "sam@example.com", "read_write")
	e.do("POST", "/v1/invitations/accept", sam, `{"token":"`+tok+`"}`, 200)
	wantProblem(t, e.request(newRequest("GET", "/v1/links", key, "")), 401, "unauthorized")
}
