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

// TestCommonPasswordTricks: spaces around a common password, or padding a
// short one up to the minimum, are refused wherever a password is chosen.
func TestCommonPasswordTricks(t *testing.T) {
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
