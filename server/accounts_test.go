package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/auth"
)

// restart closes the data file and opens it again, and builds a new server
// over it with sessions loaded afresh, as a new process would.
func (e *env) restart() {
	e.t.Helper()
	if err := e.db.reopen(); err != nil {
		e.t.Fatal(err)
	}
	sessions, err := auth.LoadSessions(context.Background(), e.db.Accounts, e.clock.Now)
	if err != nil {
		e.t.Fatal(err)
	}
	d := e.deps
	storeDeps(&d, e.db.Store)
	d.Sessions = sessions
	srv, err := New(e.cfg, d)
	if err != nil {
		e.t.Fatal(err)
	}
	e.srv = srv
}

// wantDetail checks that a problem's detail mentions want.
func wantDetail(t *testing.T, r *response, want string) {
	t.Helper()
	if d, _ := r.path("detail").(string); !strings.Contains(d, want) {
		t.Fatalf("detail %q does not say %q", d, want)
	}
}

// wantFieldError checks that a 422 names field with a message containing msg.
func wantFieldError(t *testing.T, r *response, field, msg string) {
	t.Helper()
	wantProblem(t, r, 422, "validation_failed")
	errs, _ := r.path("errors").([]any)
	for _, fe := range errs {
		m, _ := fe.(map[string]any)
		if m["field"] == field && strings.Contains(m["message"].(string), msg) {
			return
		}
	}
	t.Fatalf("no error on %q saying %q: %s", field, msg, r.raw)
}

const adminPassword = "correct horse battery"

func TestPasswordChangeEndsEarlierTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.login("admin@example.com", adminPassword) // another device
	r := e.do("POST", "/v1/me/password", e.adminToken,
		`{"current_password":"`+adminPassword+`","new_password":"a longer passphrase 2026"}`, 200)
	fresh := r.str("token")

	for name, tok := range map[string]string{"the changing token": e.adminToken, "another device": other} {
		t.Run(name, func(t *testing.T) {
			r := e.request(newRequest("GET", "/v1/me", tok, ""))
			wantProblem(t, r, 401, "unauthorized")
			wantDetail(t, r, "password change")
		})
	}
	e.do("GET", "/v1/me", fresh, "", 200)
	// Tokens issued after the change work; the old password does not.
	e.do("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"`+adminPassword+`"}`, 401)
	later := e.login("admin@example.com", "a longer passphrase 2026")
	e.do("GET", "/v1/links", later, "", 200)
	// API keys are not tokens of the user: they keep working.
	e.do("GET", "/v1/links", e.readKey, "", 200)
}

func TestPasswordChangeRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name, body, field, msg string
	}{
		{"short", `{"current_password":"` + adminPassword + `","new_password":"short1"}`, "new_password", "at least 10 characters"},
		{"common", `{"current_password":"` + adminPassword + `","new_password":"1234567890"}`, "new_password", "most common passwords"},
		{"common in another case", `{"current_password":"` + adminPassword + `","new_password":"QwertyUIOP"}`, "new_password", "most common passwords"},
		{"too long", `{"current_password":"` + adminPassword + `","new_password":"` + strings.Repeat("x", 73) + `"}`, "new_password", "at most 72 bytes"},
		{"same as current", `{"current_password":"` + adminPassword + `","new_password":"` + adminPassword + `"}`, "new_password", "differ"},
		{"no current", `{"new_password":"a longer passphrase 2026"}`, "current_password", "required"},
		{"wrong current", `{"current_password":"not my password","new_password":"a longer passphrase 2026"}`, "current_password", "wrong"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.request(newRequest("POST", "/v1/me/password", e.adminToken, tc.body))
			wantFieldError(t, r, tc.field, tc.msg)
		})
	}
	// Nothing changed: the token and the password still work.
	e.do("GET", "/v1/me", e.adminToken, "", 200)
	e.login("admin@example.com", adminPassword)

	t.Run("wrong current passwords count as failed logins", func(t *testing.T) {
		for range e.cfg.LoginPerAddress { // the login above cleared the one before
			e.do("POST", "/v1/me/password", e.adminToken, `{"current_password":"guess guess guess","new_password":"a longer passphrase 2026"}`, 422)
		}
		r := e.request(newRequest("POST", "/v1/me/password", e.adminToken, `{"current_password":"`+adminPassword+`","new_password":"a longer passphrase 2026"}`))
		wantProblem(t, r, 429, "rate_limited")
		e.do("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"`+adminPassword+`"}`, 429)
	})
	t.Run("API keys cannot", func(t *testing.T) {
		r := e.request(newRequest("POST", "/v1/me/password", e.writeKey, `{"current_password":"x","new_password":"a longer passphrase 2026"}`))
		wantProblem(t, r, 403, "forbidden")
	})
}

func TestLogoutEndsOnlyThisToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	second := e.login("admin@example.com", adminPassword)
	e.do("POST", "/v1/auth/logout", e.adminToken, "", 204)
	r := e.do("GET", "/v1/me", e.adminToken, "", 401)
	wantProblem(t, r, 401, "unauthorized")
	wantDetail(t, r, "logged out")
	e.do("POST", "/v1/auth/logout", e.adminToken, "", 401) // once is enough
	e.do("GET", "/v1/me", second, "", 200)
	e.do("GET", "/v1/links", e.writeKey, "", 200)
	wantProblem(t, e.request(newRequest("POST", "/v1/auth/logout", e.writeKey, "")), 403, "forbidden")

	t.Run("forgotten once the token has expired", func(t *testing.T) {
		if got, want := e.srv.sessions.Revoked(), 1; got != want {
			t.Fatalf("revoked tokens in memory = %d, want %d", got, want)
		}
		e.clock.Add(e.cfg.TokenTTL + time.Minute)
		tok := e.login("admin@example.com", adminPassword)
		e.do("POST", "/v1/auth/logout", tok, "", 204)
		e.restart()
		// Only the token logged out last is still unexpired, on disk too.
		if got, want := e.srv.sessions.Revoked(), 1; got != want {
			t.Fatalf("revoked tokens after restart = %d, want %d", got, want)
		}
		e.do("GET", "/v1/me", tok, "", 401)
	})
}

func TestLogoutAllEndsEveryEarlierToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	second := e.login("admin@example.com", adminPassword)
	other := e.login("other@example.com", "other password 123")
	e.do("POST", "/v1/auth/logout-all", second, "", 204)
	for _, tok := range []string{e.adminToken, second} {
		wantDetail(t, e.do("GET", "/v1/me", tok, "", 401), "log-out everywhere")
	}
	// Another user's tokens are untouched, and new logins work.
	e.do("GET", "/v1/me", other, "", 200)
	fresh := e.login("admin@example.com", adminPassword)
	e.do("GET", "/v1/me", fresh, "", 200)
}

func TestLogoutsSurviveRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	kept := e.login("admin@example.com", adminPassword)
	e.do("POST", "/v1/auth/logout", e.adminToken, "", 204)
	otherOld := e.login("other@example.com", "other password 123")
	e.do("POST", "/v1/auth/logout-all", otherOld, "", 204)
	otherNew := e.login("other@example.com", "other password 123")

	e.restart()
	e.do("GET", "/v1/me", e.adminToken, "", 401)
	e.do("GET", "/v1/me", kept, "", 200)
	e.do("GET", "/v1/me", otherOld, "", 401)
	e.do("GET", "/v1/me", otherNew, "", 200)
	// A token issued after the restart carries the stored generation.
	e.do("GET", "/v1/me", e.login("other@example.com", "other password 123"), "", 200)

	// A second log-out everywhere after the restart builds on the stored one.
	e.do("POST", "/v1/auth/logout-all", otherNew, "", 204)
	e.restart()
	e.do("GET", "/v1/me", otherNew, "", 401)
}

// createUser makes a user through the admin's API and logs them in.
func (e *env) createUser(email, name, password string) (id, token string) {
	e.t.Helper()
	r := e.do("POST", "/v1/users", e.adminToken, `{"email":"`+email+`","name":"`+name+`","password":"`+password+`"}`, 201)
	return r.str("id"), e.login(email, password)
}

func TestAdminManagesUsers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/users", e.adminToken, `{"email":"Ada@Example.com","name":" Ada Lovelace ","password":"analytical engine 1843"}`, 201)
	id := r.str("id")
	if got, want := r.str("email"), "ada@example.com"; got != want {
		t.Fatalf("email %q, want %q", got, want)
	}
	if got, want := r.str("name"), "Ada Lovelace"; got != want {
		t.Fatalf("name %q, want %q", got, want)
	}
	if r.path("admin") != false || r.path("disabled") != false {
		t.Fatalf("a new user is neither admin nor disabled: %s", r.raw)
	}
	list := e.do("GET", "/v1/users", e.adminToken, "", 200)
	var emails []string
	for _, u := range list.path("data").([]any) {
		emails = append(emails, u.(map[string]any)["email"].(string))
	}
	if got, want := strings.Join(emails, ","), "admin@example.com,other@example.com,ada@example.com"; got != want {
		t.Fatalf("users %s, want %s", got, want)
	}
	ada := e.login("ada@example.com", "analytical engine 1843")
	if got := e.do("GET", "/v1/me", ada, "", 200).str("name"); got != "Ada Lovelace" {
		t.Fatalf("GET /v1/me name %q", got)
	}

	t.Run("bad input", func(t *testing.T) {
		for _, tc := range []struct{ name, body, field, msg string }{
			{"bad e-mail", `{"email":"ada","name":"Ada","password":"analytical engine 1843"}`, "email", "valid e-mail"},
			{"no name", `{"email":"b@example.com","name":" ","password":"analytical engine 1843"}`, "name", "required"},
			{"short password", `{"email":"b@example.com","name":"B","password":"short"}`, "password", "at least 10"},
			{"common password", `{"email":"b@example.com","name":"B","password":"basketball"}`, "password", "most common"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantFieldError(t, e.request(newRequest("POST", "/v1/users", e.adminToken, tc.body)), tc.field, tc.msg)
			})
		}
		r := e.request(newRequest("POST", "/v1/users", e.adminToken, `{"email":"ADA@example.com","name":"Ada 2","password":"analytical engine 1843"}`))
		wantProblem(t, r, 409, "conflict")
		wantFieldError(t, e.request(newRequest("PATCH", "/v1/users/"+id, e.adminToken, `{}`)), "disabled", "required")
		wantProblem(t, e.request(newRequest("PATCH", "/v1/users/usr_nope", e.adminToken, `{"disabled":true}`)), 404, "not_found")
	})
	t.Run("the admin cannot disable themselves", func(t *testing.T) {
		me := e.do("GET", "/v1/me", e.adminToken, "", 200).str("id")
		wantProblem(t, e.request(newRequest("PATCH", "/v1/users/"+me, e.adminToken, `{"disabled":true}`)), 409, "conflict")
		e.do("GET", "/v1/me", e.adminToken, "", 200)
	})
	t.Run("only the admin", func(t *testing.T) {
		for _, cred := range []string{ada, e.writeKey} {
			wantProblem(t, e.request(newRequest("GET", "/v1/users", cred, "")), 403, "forbidden")
			wantProblem(t, e.request(newRequest("POST", "/v1/users", cred, `{"email":"c@example.com","name":"C","password":"analytical engine 1843"}`)), 403, "forbidden")
			wantProblem(t, e.request(newRequest("PATCH", "/v1/users/"+id, cred, `{"disabled":true}`)), 403, "forbidden")
		}
		wantProblem(t, e.request(newRequest("GET", "/v1/users", "", "")), 401, "unauthorized")
	})
}

func TestRenameMe(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("PATCH", "/v1/me", e.adminToken, `{"name":"  Grace Hopper "}`, 200)
	if got, want := r.str("name"), "Grace Hopper"; got != want {
		t.Fatalf("name %q, want %q", got, want)
	}
	if got := r.path("workspaces", 0, "id"); got != e.ws {
		t.Fatalf("PATCH /v1/me answers as GET /v1/me: workspace %v", got)
	}
	e.restart()
	if got := e.do("GET", "/v1/me", e.adminToken, "", 200).str("name"); got != "Grace Hopper" {
		t.Fatalf("name after restart %q", got)
	}
	wantFieldError(t, e.request(newRequest("PATCH", "/v1/me", e.adminToken, `{"name":""}`)), "name", "required")
	wantFieldError(t, e.request(newRequest("PATCH", "/v1/me", e.adminToken, `{"name":null}`)), "name", "required")
	wantFieldError(t, e.request(newRequest("PATCH", "/v1/me", e.adminToken, `{"name":"`+strings.Repeat("n", 101)+`"}`)), "name", "at most 100")
	wantFieldError(t, e.request(newRequest("PATCH", "/v1/me", e.adminToken, `{"name":"a\u202eb"}`)), "name", "")
	wantProblem(t, e.request(newRequest("PATCH", "/v1/me", e.adminToken, `{"name":"x","admin":true}`)), 400, "invalid_request")
	wantProblem(t, e.request(newRequest("PATCH", "/v1/me", e.readKey, `{"name":"x"}`)), 403, "forbidden")
}

func TestDisabledUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bobID, bob := e.createUser("bob@example.com", "Bob", "bobs long password")
	bob2 := e.login("bob@example.com", "bobs long password")
	ws := e.do("POST", "/v1/workspaces", bob, `{"name":"Bob's"}`, 201).str("id")
	keyOf := func(cred, name string) (token, id string) {
		r := e.do("POST", "/v1/keys", cred, `{"name":"`+name+`","scope":"read_write"}`, 201)
		return r.str("key"), r.str("id")
	}
	bobKey, _ := keyOf(bob, "script")
	minted, _ := keyOf(bobKey, "minted by the script")
	kept, keptID := keyOf(bob, "kept")
	keptMinted, _ := keyOf(kept, "minted by the kept key")
	// Only an owner, logged in, keeps a key: not a key, whatever its scope.
	wantProblem(t, e.request(newRequest("PATCH", "/v1/keys/"+keptID, bobKey, `{"keep_when_creator_disabled":true}`)), 403, "forbidden")
	r := e.do("PATCH", "/v1/keys/"+keptID, bob, `{"keep_when_creator_disabled":true}`, 200)
	if r.path("keep_when_creator_disabled") != true || r.path("creator_disabled") != false {
		t.Fatalf("kept key: %s", r.raw)
	}
	// Another workspace's key is not found.
	wantProblem(t, e.request(newRequest("PATCH", "/v1/keys/"+keptID, e.adminToken, `{"keep_when_creator_disabled":true}`)), 404, "not_found")

	d := e.do("PATCH", "/v1/users/"+bobID, e.adminToken, `{"disabled":true}`, 200)
	if d.path("disabled") != true {
		t.Fatalf("PATCH answer: %s", d.raw)
	}
	t.Run("tokens stop at once", func(t *testing.T) {
		for _, tok := range []string{bob, bob2} {
			r := e.do("GET", "/v1/me", tok, "", 401)
			wantProblem(t, r, 401, "unauthorized")
			wantDetail(t, r, "disabled")
		}
	})
	t.Run("login is refused", func(t *testing.T) {
		r := e.request(newRequest("POST", "/v1/auth/login", "", `{"email":"bob@example.com","password":"bobs long password"}`))
		wantProblem(t, r, 403, "forbidden")
		wantDetail(t, r, "disabled")
		// A wrong password says nothing about the account.
		r = e.request(newRequest("POST", "/v1/auth/login", "", `{"email":"bob@example.com","password":"not bobs password"}`))
		wantProblem(t, r, 401, "unauthorized")
	})
	t.Run("keys stop unless kept", func(t *testing.T) {
		for _, k := range []string{bobKey, minted} {
			r := e.request(newRequest("GET", "/v1/links", k, ""))
			wantProblem(t, r, 401, "unauthorized")
			wantDetail(t, r, "creator is disabled")
		}
		for _, k := range []string{kept, keptMinted} {
			e.do("GET", "/v1/links", k, "", 200)
		}
		// The list tells which keys stopped.
		list := e.do("GET", "/v1/keys", kept, "", 200)
		stopped := map[string]bool{}
		for _, it := range list.path("data").([]any) {
			m := it.(map[string]any)
			stopped[m["name"].(string)] = m["creator_disabled"].(bool) && !m["keep_when_creator_disabled"].(bool)
		}
		want := map[string]bool{"script": true, "minted by the script": true, "kept": false, "minted by the kept key": false}
		for name, w := range want {
			if stopped[name] != w {
				t.Errorf("key %q stopped = %v, want %v", name, stopped[name], w)
			}
		}
		// Other users' keys never stop.
		e.do("GET", "/v1/links", e.writeKey, "", 200)
	})
	t.Run("survives a restart", func(t *testing.T) {
		e.restart()
		e.do("GET", "/v1/me", bob, "", 401)
		e.do("GET", "/v1/links", bobKey, "", 401)
		e.do("GET", "/v1/links", kept, "", 200)
	})
	t.Run("enabled again", func(t *testing.T) {
		e.do("PATCH", "/v1/users/"+bobID, e.adminToken, `{"disabled":false}`, 200)
		// The tokens held when disabled stay ended; keys work again.
		e.do("GET", "/v1/me", bob, "", 401)
		e.do("GET", "/v1/links", bobKey, "", 200)
		e.do("GET", "/v1/links", minted, "", 200)
		fresh := e.login("bob@example.com", "bobs long password")
		if got := e.do("GET", "/v1/workspaces/"+ws, fresh, "", 200).str("role"); got != "owner" {
			t.Fatalf("role %q", got)
		}
	})
}
