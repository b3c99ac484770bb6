package server

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPasswordLink: the admin makes a one-time link, the page carries its
// token, the user sets a password with it once, before it expires, and a
// newer link replaces an older one.
func TestPasswordLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	otok := e.login("other@example.com", "other password 123")
	oid := e.do("GET", "/v1/me", otok, "", 200).str("id")

	wantProblem(t, e.request(newRequest("POST", "/v1/admin/users/"+oid+"/password-link", otok, "")), 403, "forbidden")
	wantProblem(t, e.request(newRequest("POST", "/v1/admin/users/nobody/password-link", e.adminToken, "")), 404, "not_found")

	link := func() string {
		t.Helper()
		r := e.do("POST", "/v1/admin/users/"+oid+"/password-link", e.adminToken, "", 201)
		u := r.str("url")
		if !strings.HasPrefix(u, "http://lb.test/auth/reset-password?token=") {
			t.Fatalf("url %q", u)
		}
		if exp, err := time.Parse(time.RFC3339, r.str("expires_at")); err != nil || !exp.Equal(e.clock.Now().Add(PasswordLinkTTL).Truncate(time.Second)) && !exp.Equal(e.clock.Now().Add(PasswordLinkTTL)) {
			t.Fatalf("expires_at %q", r.str("expires_at"))
		}
		return strings.TrimPrefix(u, "http://lb.test/auth/reset-password?token=")
	}
	old := link()
	tok := link() // replaces the old one
	reset := func(token, pw string) *response {
		return e.request(newRequest("POST", "/v1/auth/password-reset", "", `{"token":"`+token+`","password":"`+pw+`"}`))
	}
	wantProblem(t, reset(old, "a brand new password 9"), 403, "forbidden")

	// The page carries the token, out of caches and referrers.
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, httptest.NewRequest("GET", "/auth/reset-password?token="+tok, nil))
	page, _ := io.ReadAll(rec.Body)
	if rec.Code != 200 || !strings.Contains(string(page), `name="token" value="`+tok+`"`) || rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("page: %d %v\n%s", rec.Code, rec.Header(), page)
	}

	wantFieldError(t, reset(tok, "short"), "password", "")
	e.do("GET", "/v1/me", otok, "", 200) // the old password's session still works
	r := reset(tok, "a brand new password 9")
	if r.status != 200 || r.str("token") == "" {
		t.Fatalf("reset: %d %s", r.status, r.raw)
	}
	e.do("GET", "/v1/me", r.str("token"), "", 200)
	wantProblem(t, e.request(newRequest("GET", "/v1/me", otok, "")), 401, "unauthorized")
	e.login("other@example.com", "a brand new password 9")
	wantProblem(t, reset(tok, "another new password 10"), 403, "forbidden") // once

	// A link expires.
	late := link()
	e.clock.Add(PasswordLinkTTL)
	wantProblem(t, reset(late, "another new password 10"), 403, "forbidden")
	wantProblem(t, reset("", "another new password 10"), 422, "validation_failed")
}
