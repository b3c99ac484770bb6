package server

import (
	"testing"
)

// TestAdminRescueRoutes: the routes linkbolt's command line calls while a
// server runs create an instance admin, set a user's password (ending
// their tokens) and revoke a key of a workspace the admin is no member
// of, each for the instance admin only, each audited.
func TestAdminRescueRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	otok := e.login("other@example.com", "other password 123")

	t.Run("only the instance admin", func(t *testing.T) {
		for _, cred := range []string{otok, e.writeKey} {
			wantProblem(t, e.request(newRequest("POST", "/v1/admin/users", cred, `{"email":"x@example.com","password":"a long password 1"}`)), 403, "forbidden")
			wantProblem(t, e.request(newRequest("POST", "/v1/admin/users/x/password", cred, `{"password":"a long password 1"}`)), 403, "forbidden")
			wantProblem(t, e.request(newRequest("DELETE", "/v1/admin/workspaces/"+e.otherWS+"/keys/x", cred, "")), 403, "forbidden")
		}
	})

	t.Run("create an instance admin", func(t *testing.T) {
		r := e.do("POST", "/v1/admin/users", e.adminToken, `{"email":"Grace@Example.com","name":"Grace","password":"compiler since 1952","admin":true}`, 201)
		if r.str("email") != "grace@example.com" || r.path("admin") != true {
			t.Fatalf("created %s", r.raw)
		}
		tok := e.login("grace@example.com", "compiler since 1952")
		e.do("GET", "/v1/users", tok, "", 200) // an admin's route
		wantFieldError(t, e.request(newRequest("POST", "/v1/admin/users", e.adminToken, `{"email":"h@example.com","password":"short"}`)), "password", "")
		wantProblem(t, e.request(newRequest("POST", "/v1/admin/users", e.adminToken, `{"email":"grace@example.com","password":"compiler since 1952"}`)), 409, "conflict")
	})

	t.Run("set a user's password", func(t *testing.T) {
		oid := e.do("GET", "/v1/me", otok, "", 200).str("id")
		wantFieldError(t, e.request(newRequest("POST", "/v1/admin/users/"+oid+"/password", e.adminToken, `{"password":"short"}`)), "password", "")
		e.do("POST", "/v1/admin/users/"+oid+"/password", e.adminToken, `{"password":"a brand new password 7"}`, 200)
		wantProblem(t, e.request(newRequest("GET", "/v1/me", otok, "")), 401, "unauthorized")
		e.do("POST", "/v1/auth/login", "", `{"email":"other@example.com","password":"other password 123"}`, 401)
		e.login("other@example.com", "a brand new password 7")
		wantProblem(t, e.request(newRequest("POST", "/v1/admin/users/nobody/password", e.adminToken, `{"password":"a brand new password 7"}`)), 404, "not_found")
		if !hasAudit(e.auditEntries("/v1/admin/audit-log", e.adminToken), "user.password_changed") {
			t.Fatal("no user.password_changed in the audit log")
		}
	})

	t.Run("revoke a key of another workspace", func(t *testing.T) {
		keys := e.do("GET", "/v1/keys", e.otherKey, "", 200).path("data").([]any)
		kid := keys[0].(map[string]any)["id"].(string)
		wantProblem(t, e.request(newRequest("DELETE", "/v1/admin/workspaces/"+e.ws+"/keys/"+kid, e.adminToken, "")), 404, "not_found")
		e.do("GET", "/v1/links", e.otherKey, "", 200)
		e.do("DELETE", "/v1/admin/workspaces/"+e.otherWS+"/keys/"+kid, e.adminToken, "", 204)
		wantProblem(t, e.request(newRequest("GET", "/v1/links", e.otherKey, "")), 401, "unauthorized")
		e.do("DELETE", "/v1/admin/workspaces/"+e.otherWS+"/keys/"+kid, e.adminToken, "", 204) // again: a no-op
		if !hasAudit(e.auditEntries("/v1/admin/audit-log", e.adminToken), "key.revoked") {
			t.Fatal("no key.revoked in the audit log")
		}
	})
}

func hasAudit(entries []map[string]any, action string) bool {
	for _, en := range entries {
		if en["action"] == action {
			return true
		}
	}
	return false
}
