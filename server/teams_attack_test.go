package server

import (
	"testing"
)

// TestLastOwnerIsOneWhoCanSignIn: an owner whose account is disabled signs
// in nowhere, so the last owner who can act neither steps down nor leaves
// while only disabled owners would remain.
func TestLastOwnerIsOneWhoCanSignIn(t *testing.T) {
	e := newEnv(t)
	me := e.do("GET", "/v1/me", e.adminToken, "", 200).str("id")
	sam, samID := e.join("sam@example.com", "owner")
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
	sam = e.login("sam@example.com", "a long new password")
	e.do("PATCH", "/v1/members/"+me, sam, `{"role":"owner"}`, 200)

	// An owner who can act may remove a disabled owner.
	e.do("PATCH", "/v1/users/"+samID, e.adminToken, `{"disabled":true}`, 200)
	e.do("DELETE", "/v1/members/"+samID, e.adminToken, "", 204)
}
