package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countHashes counts the requests that pass the gate to hash or check a
// password (slowHash).
func countHashes(e *env) func() int {
	var mu sync.Mutex
	n := 0
	e.srv.costly.entered = func(class string, _ bool) func() {
		if class == costlyPassword {
			mu.Lock()
			n++
			mu.Unlock()
		}
		return func() {}
	}
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// resetLink makes a password link for the user id and returns its token.
func resetLink(e *env, id string) string {
	e.t.Helper()
	u := e.do("POST", "/v1/admin/users/"+id+"/password-link", e.adminToken, "", 201).str("url")
	return strings.TrimPrefix(u, "http://lb.test/auth/reset-password?token=")
}

func resetFrom(addr, token, pw string) *http.Request {
	req := newRequest("POST", "/v1/auth/password-reset", "", `{"token":"`+token+`","password":"`+pw+`"}`)
	req.RemoteAddr = addr + ":4321"
	return req
}

// TestPasswordResetCostsNoHashForAStranger reproduces the attack of issue
// 24, item 4: POST /v1/auth/password-reset hashed the new password (bcrypt)
// before it looked the token up, with no limit per address, so anyone
// could spend the server's cores on made-up tokens. The token is looked up
// first, and the route is limited per address as login is.
func TestPasswordResetCostsNoHashForAStranger(t *testing.T) {
	e := newEnv(t)
	const stranger = "203.0.113.9"
	oid := e.do("GET", "/v1/me", e.login("other@example.com", "other password 123"), "", 200).str("id")
	hashes := countHashes(e)
	for i := range e.srv.cfg.LoginPerIP {
		r := e.request(resetFrom(stranger, "made-up-token-"+strings.Repeat("x", i), "a brand new password 9"))
		wantProblem(t, r, 403, "forbidden")
	}
	if got := hashes(); got != 0 {
		t.Fatalf("%d password hashes for made-up tokens, want 0", got)
	}
	r := e.request(resetFrom(stranger, "made-up-token", "a brand new password 9"))
	wantProblem(t, r, 429, "rate_limited")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}

	// Someone else, with a real link, is not held by the stranger.
	tok := resetLink(e, oid)
	e.do("POST", "/v1/auth/password-reset", "", `{"token":"`+tok+`","password":"a brand new password 9"}`, 200)
	if got := hashes(); got != 1 {
		t.Fatalf("%d password hashes for one reset, want 1", got)
	}
	e.login("other@example.com", "a brand new password 9")
}

// TestSlowHashesPassTheGate: every password hash or check a request can
// reach, without a session or with one, passes the one bound (slowHash),
// once; a request that makes up a token passes it never.
func TestSlowHashesPassTheGate(t *testing.T) {
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/secret","alias":"vault","password":"vault password 1"}`, 201)
	oid := e.do("GET", "/v1/me", e.login("other@example.com", "other password 123"), "", 200).str("id")
	reset := resetLink(e, oid)
	invitation := e.invite(e.adminToken, "new@example.com", "read")
	madeUp := e.invite(e.adminToken, "other-new@example.com", "read") + "x"
	hashes := countHashes(e)

	for _, tt := range []struct {
		name   string
		req    func() *http.Request
		status int
		want   int // hashes
	}{
		{"login, unknown e-mail", func() *http.Request {
			return newRequest("POST", "/v1/auth/login", "", `{"email":"nobody@example.com","password":"a guess at it"}`)
		}, 401, 1},
		{"login, wrong password", func() *http.Request {
			return newRequest("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a guess at it"}`)
		}, 401, 1},
		{"login", func() *http.Request {
			return newRequest("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"`+adminPassword+`"}`)
		}, 200, 1},
		{"setup, wrong token", func() *http.Request {
			return newRequest("POST", "/v1/setup", "", `{"token":"made-up","email":"a@example.com","password":"a long new password"}`)
		}, 403, 0},
		{"password link, made-up token", func() *http.Request {
			return newRequest("POST", "/v1/auth/password-reset", "", `{"token":"made-up","password":"a brand new password 9"}`)
		}, 403, 0},
		{"password link", func() *http.Request {
			return newRequest("POST", "/v1/auth/password-reset", "", `{"token":"`+reset+`","password":"a brand new password 9"}`)
		}, 200, 1},
		{"invitation, made-up token", func() *http.Request {
			return newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+madeUp+`","name":"New","password":"a long new password"}`)
		}, 404, 0},
		{"invitation, new person", func() *http.Request {
			return newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+invitation+`","name":"New","password":"a long new password"}`)
		}, 201, 1},
		{"password change", func() *http.Request {
			return newRequest("POST", "/v1/me/password", e.adminToken, `{"current_password":"`+adminPassword+`","new_password":"the admin's next password"}`)
		}, 200, 2},
		{"new user", func() *http.Request {
			tok := e.login("admin@example.com", "the admin's next password")
			return newRequest("POST", "/v1/users", tok, `{"email":"made@example.com","name":"Made","password":"a long new password"}`)
		}, 201, 1},
		{"link password header", func() *http.Request {
			return visit("/vault", "198.51.100.8", "curl/8.4.0", "X-Link-Password", "vault password 1")
		}, 302, 1},
		{"link password form", func() *http.Request { return passwordPost("/vault", "198.51.100.9", "a wrong guess") }, 401, 1},
	} {
		req := tt.req() // a login of its own first, for "new user"
		before := hashes()
		r := e.request(req)
		if r.status != tt.status {
			t.Fatalf("%s: status %d, want %d: %s", tt.name, r.status, tt.status, r.raw)
		}
		if got := hashes() - before; got != tt.want {
			t.Errorf("%s: %d passes of the gate, want %d", tt.name, got, tt.want)
		}
	}
}

// TestSlowHashesWhenBusy: while every slot of the bound is taken, a
// password hash or check waits at most server.costly_wait and is then
// answered 503 server_busy with Retry-After, having changed nothing (a
// login so refused is no failed attempt, a link is not used up); redirects
// go on.
func TestSlowHashesWhenBusy(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyConcurrency = 1; c.CostlyWait = 0 })
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"busy"}`, 201).str("id")
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/secret","alias":"vault","password":"vault password 1"}`, 201)
	oid := e.do("GET", "/v1/me", e.login("other@example.com", "other password 123"), "", 200).str("id")
	reset := resetLink(e, oid)
	invitation := e.invite(e.adminToken, "new@example.com", "read")
	letGo := holdGate(t, e, id)

	for _, req := range []*http.Request{
		newRequest("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"`+adminPassword+`"}`),
		newRequest("POST", "/v1/auth/login", "", `{"email":"nobody@example.com","password":"a guess at it"}`),
		newRequest("POST", "/v1/auth/password-reset", "", `{"token":"`+reset+`","password":"a brand new password 9"}`),
		newRequest("POST", "/v1/invitations/accept", "", `{"token":"`+invitation+`","name":"New","password":"a long new password"}`),
		visit("/vault", "198.51.100.8", "curl/8.4.0", "X-Link-Password", "vault password 1"),
	} {
		r := e.request(req)
		wantProblem(t, r, http.StatusServiceUnavailable, "server_busy")
		if r.header.Get("Retry-After") == "" {
			t.Fatalf("%s %s: 503 without Retry-After", req.Method, req.URL.Path)
		}
	}
	if r := e.request(passwordPost("/vault", "198.51.100.9", "vault password 1")); r.status != http.StatusServiceUnavailable {
		t.Fatalf("the link's password form while busy: %d", r.status)
	}
	e.do("GET", "/busy", "", "", http.StatusFound)
	letGo()

	// Nothing was used up or counted meanwhile.
	e.do("POST", "/v1/auth/password-reset", "", `{"token":"`+reset+`","password":"a brand new password 9"}`, 200)
	e.do("POST", "/v1/invitations/accept", "", `{"token":"`+invitation+`","name":"New","password":"a long new password"}`, 201)
	e.login("admin@example.com", adminPassword)
}

// While strangers fill the shared gate with password guesses, a user's
// login from a browser they logged in from before (its device cookie) is
// checked in a lane of its own and answers; the same login without the
// cookie, with another user's cookie or with a forged one waits with the
// strangers (here: 503 at once, as server.costly_wait is 0).
func TestKnownDeviceLoginPassesAFullGate(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyConcurrency = 1; c.CostlyWait = 0 })
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"busy"}`, 201).str("id")
	e.login("other@example.com", "other password 123")
	cookieOf := func(email, password string) *http.Cookie {
		t.Helper()
		r := e.request(newRequest("POST", "/v1/auth/login", "", `{"email":"`+email+`","password":"`+password+`"}`))
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			if c.Name == deviceCookie {
				if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/v1/auth/login" {
					t.Fatalf("device cookie %+v: want HttpOnly, SameSite=Strict, Path=/v1/auth/login", c)
				}
				return c
			}
		}
		t.Fatalf("a successful login set no device cookie: %v", r.header)
		return nil
	}
	admin, other := cookieOf("admin@example.com", adminPassword), cookieOf("other@example.com", "other password 123")
	forged := &http.Cookie{Name: deviceCookie, Value: admin.Value[:len(admin.Value)-3] + "AAA"}
	letGo := holdGate(t, e, id)
	defer letGo()

	login := func(password string, c *http.Cookie) *response {
		req := newRequest("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"`+password+`"}`)
		if c != nil {
			req.AddCookie(c)
		}
		return e.request(req)
	}
	for name, c := range map[string]*http.Cookie{"no cookie": nil, "another user's": other, "forged": forged} {
		if r := login(adminPassword, c); r.status != http.StatusServiceUnavailable {
			t.Errorf("%s: the admin's login through a full gate answered %d, want 503", name, r.status)
		}
	}
	if r := login(adminPassword, admin); r.status != http.StatusOK {
		t.Fatalf("the admin's login from a known device through a full gate: %d %s", r.status, r.raw)
	}
	// The lane checks the password, and a wrong one counts as ever.
	wantProblem(t, login("not the password", admin), http.StatusUnauthorized, "unauthorized")
}

// TestSignedInSlowHashesWhenBusy: the routes of signed-in users that hash
// a password wait at the same gate, and their 503 server_busy is in the
// OpenAPI document as the public routes' is.
func TestSignedInSlowHashesWhenBusy(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyConcurrency = 1; c.CostlyWait = 0 })
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"busy"}`, 201).str("id")
	oid := e.do("GET", "/v1/me", e.login("other@example.com", "other password 123"), "", 200).str("id")
	letGo := holdGate(t, e, id)
	for _, req := range []*http.Request{
		newRequest("POST", "/v1/me/password", e.adminToken, `{"current_password":"`+adminPassword+`","new_password":"a brand new password 9"}`),
		newRequest("POST", "/v1/users", e.adminToken, `{"email":"new@example.com","name":"New","password":"a long new password"}`),
		newRequest("POST", "/v1/admin/users", e.adminToken, `{"email":"new@example.com","name":"New","password":"a long new password"}`),
		newRequest("POST", "/v1/admin/users/"+oid+"/password", e.adminToken, `{"password":"a brand new password 9"}`),
	} {
		r := e.request(req)
		wantProblem(t, r, http.StatusServiceUnavailable, "server_busy")
		if r.header.Get("Retry-After") == "" {
			t.Fatalf("%s %s: 503 without Retry-After", req.Method, req.URL.Path)
		}
	}
	letGo()
	e.do("POST", "/v1/admin/users/"+oid+"/password", e.adminToken, `{"password":"a brand new password 9"}`, 200)
}

// TestKnownDeviceLaneHoldsOneLoginAUser: any user has a device cookie of
// their own, so one who floods the login route with their own e-mail and
// cookie filled the known devices' lane, and the owner's login from a
// known device waited behind every one of those logins (past
// server.costly_wait, 503) as it would at the full shared gate. A user has
// one login at a time in the lane; their others wait at the shared gate.
func TestKnownDeviceLaneHoldsOneLoginAUser(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyConcurrency = 1; c.CostlyWait = 5 * time.Second })
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"busy"}`, 201).str("id")
	cookieOf := func(email, password string) *http.Cookie {
		t.Helper()
		r := e.request(newRequest("POST", "/v1/auth/login", "", `{"email":"`+email+`","password":"`+password+`"}`))
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			if c.Name == deviceCookie {
				return c
			}
		}
		t.Fatalf("no device cookie: %s", r.raw)
		return nil
	}
	admin, insider := cookieOf("admin@example.com", adminPassword), cookieOf("other@example.com", "other password 123")
	letGo := holdGate(t, e, id)

	// Each check in the lane waits for the test to let it go.
	step := make(chan struct{})
	var entered atomic.Int64
	e.srv.deviceLane.entered = func(string, bool) func() {
		entered.Add(1)
		<-step
		return func() {}
	}
	login := func(email, password string, c *http.Cookie, done chan<- int) {
		req := newRequest("POST", "/v1/auth/login", "", `{"email":"`+email+`","password":"`+password+`"}`)
		req.AddCookie(c)
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, req)
		done <- rec.Code
	}
	parked := func() int64 { return e.srv.deviceLane.waiting.Load() + e.srv.costly.waiting.Load() }

	insiders := make(chan int, 4)
	go login("other@example.com", "other password 123", insider, insiders)
	waitFor(func() bool { return entered.Load() == 1 })
	for range 3 {
		go login("other@example.com", "other password 123", insider, insiders)
	}
	waitFor(func() bool { return parked() == 3 })
	adminDone := make(chan int, 1)
	go login("admin@example.com", adminPassword, admin, adminDone)
	waitFor(func() bool { return parked() == 4 })

	// Let the lane's checks go one by one: the admin's is the second.
	for lets := 1; ; lets++ {
		step <- struct{}{}
		if lets == 2 {
			break
		}
		waitFor(func() bool { return entered.Load() == int64(lets+1) })
	}
	if got := <-adminDone; got != http.StatusOK {
		t.Fatalf("the admin's login: %d", got)
	}
	if got := entered.Load(); got != 2 {
		t.Fatalf("%d checks in the lane before the admin's was done, want 2 (the insider's first, the admin's)", got)
	}
	close(step)
	letGo()
	for range 4 {
		if got := <-insiders; got != http.StatusOK {
			t.Errorf("an insider's login: %d", got)
		}
	}
}
