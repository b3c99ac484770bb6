package server

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/linkbolt/linkbolt/auth"
)

// auditWant is an entry a test expects: its action, actor, target and
// some of its changes (nil: no change expected).
type auditWant struct {
	action, actorType, actorID, targetType, targetID string
	changes                                          map[string][2]any
}

// checkAudit finds the newest entry of each want in log (with its target)
// and checks its actor, target, address and changes.
func checkAudit(t *testing.T, log []map[string]any, address string, wants []auditWant) {
	t.Helper()
	for _, tt := range wants {
		t.Run(tt.action+" "+tt.targetType, func(t *testing.T) {
			var got map[string]any
			for _, en := range findAudit(log, tt.action) {
				if field(en, "target", "id") == tt.targetID {
					got = en
					break
				}
			}
			if got == nil {
				t.Fatalf("no %s entry about %s in %d entries", tt.action, tt.targetID, len(log))
			}
			if field(got, "actor", "type") != tt.actorType || field(got, "actor", "id") != tt.actorID ||
				field(got, "target", "type") != tt.targetType || got["address"] != address {
				t.Fatalf("entry = %v", got)
			}
			changes, _ := got["changes"].(map[string]any)
			for f, want := range tt.changes {
				c, _ := changes[f].([]any)
				if len(c) != 2 || c[0] != want[0] || c[1] != want[1] {
					t.Fatalf("change %s = %v, want %v (entry %v)", f, changes[f], want, got)
				}
			}
		})
	}
}

// countAudit returns how many entries of action are about target.
func countAudit(log []map[string]any, action, target string) int {
	n := 0
	for _, en := range findAudit(log, action) {
		if field(en, "target", "id") == target {
			n++
		}
	}
	return n
}

// wantNoSecret fails if any of secrets is in the admin's and the owner's
// logs, as JSON pages, CSV or JSON lines.
func (e *env) wantNoSecret(t *testing.T, secrets []string) {
	t.Helper()
	var raw []string
	for _, p := range []string{"/v1/admin/audit-log?limit=500", "/v1/audit-log?limit=500",
		"/v1/admin/audit-log?format=csv", "/v1/admin/audit-log?format=jsonl",
		"/v1/audit-log?format=csv", "/v1/audit-log?format=jsonl"} {
		raw = append(raw, string(e.do("GET", p, e.adminToken, "", 200).raw))
	}
	all := strings.Join(raw, "\n")
	for _, s := range secrets {
		if s == "" {
			t.Fatal("an empty secret")
		}
		if strings.Contains(all, s) {
			t.Fatalf("secret %q in the audit log", s)
		}
	}
}

// tokenSecrets returns an invitation token with the forms of its hash.
func tokenSecrets(tok string) []string {
	h := auth.HashToken(tok)
	return []string{tok, hex.EncodeToString(h), base64.StdEncoding.EncodeToString(h), base64.RawURLEncoding.EncodeToString(h)}
}

// TestAuditLogRecordsTeamActions makes every members, invitations and
// account change through the router and finds each in the log with its
// actor, target, address and changes; refused changes record nothing, and
// no invitation token, password or JWT enters the log.
func TestAuditLogRecordsTeamActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.do("GET", "/v1/me", e.adminToken, "", 200).str("id")
	other := e.do("GET", "/v1/me", e.login("other@example.com", "other password 123"), "", 200).str("id")
	secrets := []string{"correct horse battery", "other password 123", "a long new password", "a newer long password",
		"analytical engine 1843", e.adminToken}

	// A new person is invited and joins; the invitation works once.
	inv := e.do("POST", "/v1/invitations", e.adminToken, `{"email":"sam@example.com","role":"read_write"}`, 201)
	samInv := inv.str("id")
	secrets = append(secrets, tokenSecrets(inv.str("token"))...)
	secrets = append(secrets, inv.str("url"))
	acc := e.do("POST", "/v1/invitations/accept", "", `{"token":"`+inv.str("token")+`","name":"Sam","password":"a long new password"}`, 201)
	sam, samJWT := acc.str("user_id"), acc.str("token")
	secrets = append(secrets, samJWT)
	wantProblem(t, e.request(newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+inv.str("token")+`","name":"Eve","password":"another long password"}`)), 410, "gone")

	// An existing user accepts signed in.
	otherInv := e.do("POST", "/v1/invitations", e.adminToken, `{"email":"other@example.com","role":"read"}`, 201)
	secrets = append(secrets, tokenSecrets(otherInv.str("token"))...)
	otherJWT := e.login("other@example.com", "other password 123")
	secrets = append(secrets, otherJWT)
	e.do("POST", "/v1/invitations/accept", otherJWT, `{"token":"`+otherInv.str("token")+`"}`, 200)

	// An invitation revoked.
	revInv := e.do("POST", "/v1/invitations", e.adminToken, `{"email":"pat@example.com","role":"read"}`, 201)
	secrets = append(secrets, tokenSecrets(revInv.str("token"))...)
	e.do("DELETE", "/v1/invitations/"+revInv.str("id"), e.adminToken, "", 204)
	wantProblem(t, e.request(newRequest("DELETE", "/v1/invitations/"+samInv, e.adminToken, "")), 404, "not_found")

	// Roles: Sam demoted; the last owner cannot step down (409).
	e.do("PATCH", "/v1/members/"+sam, e.adminToken, `{"role":"read"}`, 200)
	wantProblem(t, e.request(newRequest("PATCH", "/v1/members/"+admin, e.adminToken, `{"role":"read"}`)), 409, "conflict")
	wantProblem(t, e.request(newRequest("DELETE", "/v1/members/"+admin, e.adminToken, "")), 409, "conflict")

	// Sam's account: renamed, password changed, one token logged out,
	// then every token.
	e.do("PATCH", "/v1/me", samJWT, `{"name":"Samuel"}`, 200)
	wantProblem(t, e.request(newRequest("PATCH", "/v1/me", samJWT, `{"name":""}`)), 422, "validation_failed")
	pw := e.do("POST", "/v1/me/password", samJWT, `{"current_password":"a long new password","new_password":"a newer long password"}`, 200)
	samJWT = pw.str("token")
	secrets = append(secrets, samJWT)
	e.do("POST", "/v1/auth/logout", samJWT, "", 204)
	samJWT = e.login("sam@example.com", "a newer long password")
	secrets = append(secrets, samJWT)
	e.do("POST", "/v1/auth/logout-all", samJWT, "", 204)
	samJWT = e.login("sam@example.com", "a newer long password")
	secrets = append(secrets, samJWT)

	// Sam leaves; the owner removes the other user.
	e.do("DELETE", "/v1/members/"+sam, samJWT, "", 204)
	e.do("DELETE", "/v1/members/"+other, e.adminToken, "", 204)

	// A key kept working for a disabled creator.
	key := e.do("POST", "/v1/keys", e.adminToken, `{"name":"ci","scope":"read"}`, 201)
	secrets = append(secrets, key.str("key"))
	e.do("PATCH", "/v1/keys/"+key.str("id"), e.adminToken, `{"keep_when_creator_disabled":true}`, 200)

	// The instance admin creates, disables and enables a user.
	ada := e.do("POST", "/v1/users", e.adminToken, `{"email":"ada@example.com","name":"Ada","password":"analytical engine 1843"}`, 201).str("id")
	e.do("PATCH", "/v1/users/"+ada, e.adminToken, `{"disabled":true}`, 200)
	e.do("PATCH", "/v1/users/"+ada, e.adminToken, `{"disabled":false}`, 200)

	owner := e.auditEntries("/v1/audit-log", e.adminToken)
	all := e.auditEntries("/v1/admin/audit-log", e.adminToken)
	t.Run("in the workspace's log", func(t *testing.T) {
		checkAudit(t, owner, "192.0.2.1", []auditWant{
			{"member.invited", "user", admin, "invitation", samInv, map[string][2]any{
				"email": {nil, "sam@example.com"}, "role": {nil, "read_write"}, "expires_at": {nil, inv.str("expires_at")}}},
			{"user.created", "user", sam, "user", sam, map[string][2]any{"email": {nil, "sam@example.com"}, "via": {nil, "invitation"}}},
			{"member.joined", "user", sam, "user", sam, map[string][2]any{
				"role": {nil, "read_write"}, "invitation": {nil, samInv}, "new_account": {nil, "true"}}},
			{"member.joined", "user", other, "user", other, map[string][2]any{
				"role": {nil, "read"}, "invitation": {nil, otherInv.str("id")}, "new_account": {nil, "false"}}},
			{"invitation.revoked", "user", admin, "invitation", revInv.str("id"), map[string][2]any{"state": {"pending", "revoked"}}},
			{"member.role_changed", "user", admin, "user", sam, map[string][2]any{"role": {"read_write", "read"}}},
			{"user.renamed", "user", sam, "user", sam, map[string][2]any{"name": {"Sam", "Samuel"}}},
			{"user.password_changed", "user", sam, "user", sam, nil},
			{"auth.logout", "user", sam, "user", sam, nil},
			{"auth.logout_all", "user", sam, "user", sam, nil},
			{"member.left", "user", sam, "user", sam, map[string][2]any{"role": {"read", nil}}},
			{"member.removed", "user", admin, "user", other, map[string][2]any{"role": {"read", nil}}},
			{"key.updated", "user", admin, "key", key.str("id"), map[string][2]any{"keep_when_creator_disabled": {"false", "true"}}},
		})
	})
	t.Run("in the instance's log", func(t *testing.T) {
		checkAudit(t, all, "192.0.2.1", []auditWant{
			{"user.created", "user", admin, "user", ada, map[string][2]any{
				"email": {nil, "ada@example.com"}, "name": {nil, "Ada"}, "via": {nil, "admin"}}},
			{"user.disabled", "user", admin, "user", ada, map[string][2]any{"disabled": {"false", "true"}}},
			{"user.enabled", "user", admin, "user", ada, map[string][2]any{"disabled": {"true", "false"}}},
		})
		// Ada is in no workspace: her entries are the instance's.
		for _, en := range owner {
			if field(en, "target", "id") == ada {
				t.Fatalf("an entry about a user of no workspace in the workspace's log: %v", en)
			}
		}
	})
	t.Run("a single log-out names the token by its expiry only", func(t *testing.T) {
		en := findAudit(owner, "auth.logout")[0]
		c, _ := field(en, "changes", "token_expires_at").([]any)
		if len(c) != 2 || c[0] == nil || c[1] != nil {
			t.Fatalf("changes = %v", en["changes"])
		}
	})
	t.Run("refused changes record nothing", func(t *testing.T) {
		for _, tt := range []struct {
			action, target string
			want           int
		}{
			{"member.joined", sam, 1},           // the invitation used twice
			{"user.created", sam, 1},            // nor a second account made
			{"invitation.revoked", samInv, 0},   // a used invitation is not revoked
			{"member.role_changed", admin, 0},   // the last owner stepping down
			{"member.removed", admin, 0},        // nor leaving
			{"member.left", admin, 0},           //
			{"user.renamed", sam, 1},            // the empty name
			{"member.removed", sam, 0},          // leaving is not a removal
			{"auth.logout_all", sam, 1},         // a password change is not a log-out everywhere
			{"auth.logout_all", ada, 0},         // nor is disabling
			{"user.password_changed", ada, 0},   //
			{"user.password_changed", admin, 0}, //
		} {
			if got := countAudit(all, tt.action, tt.target); got != tt.want {
				t.Errorf("%d %s entries about %s, want %d", got, tt.action, tt.target, tt.want)
			}
		}
	})
	t.Run("a change that changes nothing records nothing", func(t *testing.T) {
		e.do("PATCH", "/v1/keys/"+key.str("id"), e.adminToken, `{"keep_when_creator_disabled":true}`, 200)
		e.do("PATCH", "/v1/users/"+ada, e.adminToken, `{"disabled":false}`, 200)
		e.do("PATCH", "/v1/me", e.adminToken, `{"name":""}`, 422)
		all := e.auditEntries("/v1/admin/audit-log", e.adminToken)
		if countAudit(all, "key.updated", key.str("id")) != 1 || countAudit(all, "user.enabled", ada) != 1 {
			t.Fatal("an update without a change was recorded")
		}
	})
	t.Run("no secret in any entry", func(t *testing.T) { e.wantNoSecret(t, secrets) })
}

// TestAuditLogRecordsSingleSignOn: sign-ins through the provider are
// recorded like password logins, with the method and why one failed;
// failures before the provider names anyone are instance entries, bounded
// by the login limit per address.
func TestAuditLogRecordsSingleSignOn(t *testing.T) {
	t.Parallel()
	e := newOIDCEnv(t, func(o *auth.OIDC) { o.AutoCreate = true; o.AllowedDomains = []string{"example.com"} })
	admin := e.do("GET", "/v1/me", e.adminToken, "", 200).str("id")
	var secrets []string

	b := e.browser(t)
	e.op.QueueUser(person("admin@example.com", true))
	cb := b.toCallback()
	code, _ := url.Parse(cb)
	secrets = append(secrets, code.Query().Get("code"), code.Query().Get("state"), b.cookie().Value)
	b.signInAt(cb)

	e.op.QueueUser(person("newcomer@example.com", true))
	newTok := b.signIn()
	secrets = append(secrets, newTok)
	newcomer := e.do("GET", "/v1/me", newTok, "", 200).str("id")

	// Refused: a forged state, an unverified e-mail, a disabled user.
	forged, _ := url.Parse(b.toCallback())
	q := forged.Query()
	q.Set("state", "ATTACKERSSTATE")
	forged.RawQuery = q.Encode()
	res, body := b.get(forged.String())
	b.problem(res, body, 400, "invalid_request")
	e.op.QueueUser(person("admin@example.com", false))
	res, body = b.get(b.toCallback())
	b.problem(res, body, 403, "forbidden")
	e.do("PATCH", "/v1/users/"+newcomer, e.adminToken, `{"disabled":true}`, 200)
	e.op.QueueUser(person("newcomer@example.com", true))
	res, body = b.get(b.toCallback())
	b.problem(res, body, 403, "forbidden")

	all := e.auditEntries("/v1/admin/audit-log", e.adminToken)
	checkAudit(t, all, "192.0.2.7", []auditWant{
		{"auth.login_succeeded", "user", admin, "user", admin, map[string][2]any{"method": {nil, "oidc"}}},
		{"user.created", "user", newcomer, "user", newcomer, map[string][2]any{"email": {nil, "newcomer@example.com"}, "via": {nil, "oidc"}}},
		{"auth.login_succeeded", "user", newcomer, "user", newcomer, map[string][2]any{"method": {nil, "oidc"}}},
		{"auth.login_failed", "user", newcomer, "user", newcomer, map[string][2]any{"method": {nil, "oidc"}, "reason": {nil, "disabled"}}},
	})
	reasons := map[string]bool{}
	for _, en := range findAudit(all, "auth.login_failed") {
		if field(en, "target", "id") == nil {
			c, _ := field(en, "changes", "reason").([]any)
			reason := c[1].(string)
			// A refused e-mail names the address the provider sent (for
			// nobody signed in); a forged state names nobody.
			wantName := any(nil)
			if reason == "email_refused" {
				wantName = "admin@example.com"
			}
			if field(en, "actor", "id") != nil || field(en, "actor", "name") != wantName || en["address"] != "192.0.2.7" || en["workspace_ids"] != nil {
				t.Fatalf("a failed single sign-on of nobody = %v", en)
			}
			reasons[reason] = true
		}
	}
	if !reasons["state"] || !reasons["email_refused"] {
		t.Fatalf("failure reasons %v, want state and email_refused", reasons)
	}
	// The password login names its method too.
	e.login("admin@example.com", "correct horse battery")
	if l := findAudit(e.auditEntries("/v1/audit-log?action=auth.login_succeeded", e.adminToken), "auth.login_succeeded")[0]; field(l, "changes", "method") == nil ||
		field(l, "changes", "method").([]any)[1] != "password" {
		t.Fatalf("password login = %v", l)
	}

	t.Run("a flood of bogus callbacks is bounded by the login limit", func(t *testing.T) {
		count := func() int {
			return len(e.auditEntries("/v1/admin/audit-log?action=auth.login_failed", e.adminToken))
		}
		before := count()
		limited := 0
		for range 3 * e.srv.cfg.LoginPerIP {
			r := e.request(newRequest("GET", "/v1/auth/oidc/callback?code=x&state=y", "", ""))
			if r.status == 429 {
				limited++
			}
		}
		if limited == 0 {
			t.Fatal("no callback was limited")
		}
		if got, most := count()-before, 3*e.srv.cfg.LoginPerIP-limited; got != most || got > e.srv.cfg.LoginPerIP {
			t.Fatalf("%d entries for %d callbacks past the limit of %d", got, most, e.srv.cfg.LoginPerIP)
		}
	})
	t.Run("no secret in any entry", func(t *testing.T) { e.wantNoSecret(t, secrets) })
}

// TestAuditLogSingleSignOnRefusals: a verified e-mail that names no user
// (auto_create off) is a failed sign-in of that e-mail, and an ID token
// for another client a refused token, both instance entries.
func TestAuditLogSingleSignOnRefusals(t *testing.T) {
	t.Parallel()
	e := newOIDCEnv(t, nil)
	b := e.browser(t)
	e.op.QueueUser(person("newcomer@example.com", true))
	res, body := b.get(b.toCallback())
	b.problem(res, body, 403, "forbidden")
	e.op.QueueUser(claimsUser{person("admin@example.com", true), func(c *mockoidc.IDTokenClaims) {
		c.Audience = jwt.ClaimStrings{"another-client"}
	}})
	res, body = b.get(b.toCallback())
	b.problem(res, body, 401, "unauthorized")

	got := map[string]any{}
	for _, en := range e.auditEntries("/v1/admin/audit-log?action=auth.login_failed", e.adminToken) {
		c, _ := field(en, "changes", "reason").([]any)
		if len(c) != 2 || field(en, "actor", "id") != nil || en["workspace_ids"] != nil || en["address"] != "192.0.2.7" {
			t.Fatalf("entry = %v", en)
		}
		got[c[1].(string)] = field(en, "actor", "name")
	}
	if name, ok := got["unknown_email"]; !ok || name != "newcomer@example.com" {
		t.Fatalf("failures %v: want unknown_email by newcomer@example.com", got)
	}
	if name, ok := got["token_refused"]; !ok || name != nil {
		t.Fatalf("failures %v: want token_refused by nobody", got)
	}
}
