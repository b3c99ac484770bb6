package server

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMintedKeysShareTheWorkspaceBudget reproduces issue 9's attack: one
// free-plan key mints 100 keys and they all make requests. The clock does
// not move while they do, so the workspace's budget of 100 a minute is all
// there is, however many keys spend it.
func TestMintedKeysShareTheWorkspaceBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.MaxKeysPerWorkspace = 1000 })
	link := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"promo"}`, 201).str("id")

	// Minting itself draws from the budget: past 100 a minute it is refused.
	var keys []string
	refused := 0
	for len(keys) < 100 {
		r := e.request(newRequest("POST", "/v1/keys", e.writeKey, `{"name":"minted","scope":"read_write"}`))
		switch r.status {
		case 201:
			keys = append(keys, r.str("key"))
		case 429:
			refused++
			secs, _ := strconv.Atoi(r.header.Get("Retry-After"))
			e.clock.Add(time.Duration(secs) * time.Second)
		default:
			t.Fatalf("mint: %d %s", r.status, r.raw)
		}
	}
	if refused == 0 {
		t.Fatal("minting 100 keys in a burst was never rated")
	}

	e.clock.Add(time.Minute) // a full bucket, then the clock stands still
	ok, limited := 0, 0
	for round := 0; round < 3; round++ {
		for i, k := range keys {
			r := e.request(newRequest("GET", "/v1/links", k, ""))
			switch r.status {
			case 200:
				ok++
			case 429:
				limited++
			default:
				t.Fatalf("key %d: %d %s", i, r.status, r.raw)
			}
			if got := r.header.Get("X-RateLimit-Limit"); got != "100" {
				t.Fatalf("key %d: X-RateLimit-Limit = %q, want the workspace's 100", i, got)
			}
		}
	}
	if ok != 100 || limited != 200 {
		t.Fatalf("100 keys made 300 requests: %d answered, %d limited; want 100 and 200", ok, limited)
	}
	// The budget is the workspace's: the key that minted them and a user
	// acting in the workspace are out of it too.
	wantProblem(t, e.request(newRequest("GET", "/v1/links/"+link, e.writeKey, "")), 429, "rate_limited")
	wantProblem(t, e.request(newRequest("GET", "/v1/links", e.adminToken, "")), 429, "rate_limited")

	// Redirects and login are not counted: they work with the budget spent.
	r := e.request(newRequest("GET", "/promo", "", ""))
	if r.status != 302 || r.header.Get("Location") != "https://example.com/" {
		t.Fatalf("redirect with the budget spent: %d %v", r.status, r.header)
	}
	if r.header.Get("X-RateLimit-Limit") != "" {
		t.Fatalf("a redirect carries rate headers: %v", r.header)
	}
	e.login("admin@example.com", "correct horse battery")
	// Nor is setup: it answers for itself (the instance is set up), not 429.
	wantProblem(t, e.request(newRequest("POST", "/v1/setup", "", `{"token":"x","email":"a@example.com","password":"long enough pw"}`)), 403, "forbidden")
	// The other workspace never noticed.
	e.do("GET", "/v1/links", e.otherKey, "", 200)
}

// TestConcurrentRequestsShareTheBudget spends one workspace's budget from
// many keys at once: exactly the budget is answered.
func TestConcurrentRequestsShareTheBudget(t *testing.T) {
	e := newEnv(t)
	keys := []string{e.writeKey, e.readKey}
	for i := 0; i < 6; i++ {
		keys = append(keys, e.createKey(e.writeKey, fmt.Sprint("k", i), "read"))
	}
	e.clock.Add(time.Minute)
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				rec := e.request(newRequest("GET", "/v1/keys", k, ""))
				mu.Lock()
				counts[rec.status]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if counts[200] != 100 || counts[429] != 100 {
		t.Fatalf("8 keys made 200 requests at once: %v; want 100 answered and 100 limited", counts)
	}
}

// TestKeyMintingBounds reproduces a key expiring in 10 minutes minting a
// key that never expires, and a rotated key in its grace period rotating
// its own replacement.
func TestKeyMintingBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	in10 := testStart.Add(10 * time.Minute)
	short := e.do("POST", "/v1/keys", e.adminToken,
		`{"name":"short","scope":"read_write","expires_at":"`+in10.Format(time.RFC3339)+`"}`, 201)
	shortKey, shortID := short.str("key"), short.str("id")

	for _, tc := range []struct{ name, body string }{
		{"no expiry", `{"name":"forever","scope":"read_write"}`},
		{"null expiry", `{"name":"forever","scope":"read","expires_at":null}`},
		{"later expiry", `{"name":"later","scope":"read","expires_at":"` + in10.Add(time.Second).Format(time.RFC3339) + `"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.request(newRequest("POST", "/v1/keys", shortKey, tc.body))
			wantProblem(t, r, 422, "validation_failed")
			if f := r.path("errors", 0, "field"); f != "expires_at" {
				t.Fatalf("field = %v: %s", f, r.raw)
			}
			if msg := r.path("errors", 0, "message").(string); !strings.Contains(msg, ts(in10)) {
				t.Fatalf("message does not name the creating key's expiry: %q", msg)
			}
		})
	}
	// No later than its own expiry is fine, and the key records its maker.
	child := e.do("POST", "/v1/keys", shortKey, `{"name":"child","scope":"read","expires_at":"`+in10.Format(time.RFC3339)+`"}`, 201)
	if got := fmt.Sprint(child.path("created_by", "type"), " ", child.path("created_by", "id")); got != "key "+shortID {
		t.Fatalf("created_by = %s, want key %s", got, shortID)
	}
	// Rotating a key that never expires would mint a token outliving the
	// short key: refused. Rotating itself keeps its expiry: allowed.
	writer := e.keyID(e.writeKey)
	r := e.request(newRequest("POST", "/v1/keys/"+writer+"/rotate", shortKey, ""))
	wantProblem(t, r, 403, "forbidden")
	if !strings.Contains(r.str("detail"), "outlive") {
		t.Fatalf("detail: %s", r.raw)
	}
	if got := e.do("GET", "/v1/keys/"+writer, e.adminToken, "", 200).str("state"); got != "active" {
		t.Fatalf("refused rotation changed the key: state %q", got)
	}
	rot := e.do("POST", "/v1/keys/"+shortID+"/rotate", shortKey, "", 201)
	if got := rot.str("expires_at"); got != ts(in10) {
		t.Fatalf("rotated expires_at = %q", got)
	}
	// A user is bound by their role only.
	if e.do("POST", "/v1/keys", e.adminToken, `{"name":"forever","scope":"read_write"}`, 201).path("expires_at") != nil {
		t.Fatal("the admin's key got an expiry")
	}
	// Keys made by a user record the user.
	if got := e.do("GET", "/v1/keys/"+shortID, e.adminToken, "", 200).path("created_by", "type"); got != "user" {
		t.Fatalf("created_by.type = %v", got)
	}
}

// keyID returns the ID of the key with the token.
func (e *env) keyID(token string) string {
	e.t.Helper()
	start := token[:len("lb_live_")+4]
	for _, k := range e.do("GET", "/v1/keys", e.adminToken, "", 200).path("data").([]any) {
		if m := k.(map[string]any); m["start"] == start {
			return m["id"].(string)
		}
	}
	e.t.Fatalf("no key starts with %q", start)
	return ""
}

func TestGraceKeyCannotManageKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	leaked := e.createKey(e.adminToken, "leaked", "read_write")
	leakedID := e.keyID(leaked)
	// The owner rotates the leaked key; the old one is in grace.
	rot := e.do("POST", "/v1/keys/"+leakedID+"/rotate", e.adminToken, "", 201)
	next, nextID := rot.str("key"), rot.str("id")
	if got := rot.path("created_by", "type"); got != "user" {
		t.Fatalf("created_by.type of the rotated key = %v", got)
	}

	for _, tc := range []struct{ name, method, path, body string }{
		{"rotate its replacement", "POST", "/v1/keys/" + nextID + "/rotate", ""},
		{"rotate another key", "POST", "/v1/keys/" + e.keyID(e.readKey) + "/rotate", ""},
		{"create a key", "POST", "/v1/keys", `{"name":"backdoor","scope":"read"}`},
		{"revoke its replacement", "DELETE", "/v1/keys/" + nextID, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.request(newRequest(tc.method, tc.path, leaked, tc.body))
			wantProblem(t, r, 403, "forbidden")
			if !strings.Contains(r.str("detail"), "grace") || !strings.Contains(r.str("detail"), nextID) {
				t.Fatalf("detail: %s", r.raw)
			}
		})
	}
	// Nothing changed: the replacement is active and works, no key was added.
	if got := e.do("GET", "/v1/keys/"+nextID, next, "", 200).str("state"); got != "active" {
		t.Fatalf("replacement state = %q", got)
	}
	if got := len(e.do("GET", "/v1/keys", e.adminToken, "", 200).path("data").([]any)); got != 4 {
		t.Fatalf("%d keys, want 4", got)
	}
	// Everything else still works in grace, and the key may end its own grace.
	e.do("POST", "/v1/links", leaked, `{"destination_url":"https://example.com/"}`, 201)
	e.do("GET", "/v1/keys", leaked, "", 200)
	e.do("DELETE", "/v1/keys/"+leakedID, leaked, "", 204)
	wantProblem(t, e.request(newRequest("GET", "/v1/links", leaked, "")), 401, "unauthorized")
	e.do("GET", "/v1/links", next, "", 200)
}

func TestKeyCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Enterprise: unlimited, so that only the cap is tested here.
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"plan":"enterprise"}`, 200)
	// newEnv made 2 keys; one that expires and one revoked do not count.
	exp := e.do("POST", "/v1/keys", e.adminToken, `{"name":"brief","scope":"read","expires_at":"`+testStart.Add(time.Minute).Format(time.RFC3339)+`"}`, 201)
	gone := e.do("POST", "/v1/keys", e.adminToken, `{"name":"gone","scope":"read"}`, 201).str("id")
	e.do("DELETE", "/v1/keys/"+gone, e.adminToken, "", 204)
	e.clock.Add(time.Minute)
	if got := e.do("GET", "/v1/keys/"+exp.str("id"), e.adminToken, "", 200).str("state"); got != "expired" {
		t.Fatalf("state = %q", got)
	}
	var last string
	for i := 2; i < 100; i++ {
		last = e.do("POST", "/v1/keys", e.writeKey, fmt.Sprintf(`{"name":"k%d","scope":"read"}`, i), 201).str("id")
	}
	// Key 101 is refused, by a key and by a user alike.
	for _, cred := range []string{e.writeKey, e.adminToken} {
		r := e.request(newRequest("POST", "/v1/keys", cred, `{"name":"one too many","scope":"read"}`))
		wantProblem(t, r, 409, "conflict")
		if d := r.str("detail"); !strings.Contains(d, "100 keys active or in grace") || !strings.Contains(d, "keys.max_per_workspace") {
			t.Fatalf("detail: %q", d)
		}
	}
	// Rotation at the cap works: the old key goes to grace.
	e.do("POST", "/v1/keys/"+last+"/rotate", e.writeKey, "", 201)
	// Revoking a key in grace makes room again.
	e.do("DELETE", "/v1/keys/"+last, e.writeKey, "", 204)
	wantProblem(t, e.request(newRequest("POST", "/v1/keys", e.writeKey, `{"name":"still full","scope":"read"}`)), 409, "conflict")
	e.do("DELETE", "/v1/keys/"+e.keyID(e.readKey), e.writeKey, "", 204)
	e.do("POST", "/v1/keys", e.writeKey, `{"name":"room","scope":"read"}`, 201)
}

// TestKeyCapConcurrent creates keys at once from many goroutines: the cap
// is checked in the write transaction, so it is never passed.
func TestKeyCapConcurrent(t *testing.T) {
	const max = 10
	e := newEnv(t, func(c *Config) { c.MaxKeysPerWorkspace = max })
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"plan":"enterprise"}`, 200)
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				r := e.request(newRequest("POST", "/v1/keys", e.writeKey, `{"name":"racer","scope":"read"}`))
				mu.Lock()
				counts[r.status]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if counts[201] != max-2 || counts[409] != 40-(max-2) {
		t.Fatalf("40 creations at once under a cap of %d with 2 keys: %v", max, counts)
	}
	if got := len(e.do("GET", "/v1/keys", e.adminToken, "", 200).path("data").([]any)); got != max {
		t.Fatalf("%d keys stored, want %d", got, max)
	}
}

// TestKeyRotationBoundedAtTwiceTheCap: every key can be rotated once at the
// cap, but rotating in a loop cannot pile up keys in grace without end.
func TestKeyRotationBoundedAtTwiceTheCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.MaxKeysPerWorkspace = 3 })
	e.createKey(e.adminToken, "third", "read")
	id := e.keyID(e.writeKey)
	for i := 0; i < 3; i++ { // 3 active + 3 in grace
		id = e.do("POST", "/v1/keys/"+id+"/rotate", e.adminToken, "", 201).str("id")
	}
	r := e.request(newRequest("POST", "/v1/keys/"+id+"/rotate", e.adminToken, ""))
	wantProblem(t, r, 409, "conflict")
	if !strings.Contains(r.str("detail"), "twice keys.max_per_workspace") {
		t.Fatalf("detail: %s", r.raw)
	}
	// When the grace periods end, rotation works again.
	e.clock.Add(24 * time.Hour)
	e.do("POST", "/v1/keys/"+id+"/rotate", e.login("admin@example.com", "correct horse battery"), "", 201)
}

// loginFrom logs in from a client address.
func (e *env) loginFrom(addr, email, password string) *response {
	e.t.Helper()
	req := newRequest("POST", "/v1/auth/login", "", `{"email":"`+email+`","password":"`+password+`"}`)
	req.RemoteAddr = addr + ":4321"
	return e.request(req)
}

// TestLoginStrangerCannotLockOutOwner reproduces issue 9's attack: ten wrong
// passwords a minute from anywhere kept the right password at 429.
func TestLoginStrangerCannotLockOutOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const stranger, owner = "203.0.113.66", "198.51.100.7"
	for minute := 0; minute < 60; minute++ {
		for i := 0; i < 10; i++ {
			r := e.loginFrom(stranger, "admin@example.com", "wrong password")
			if r.status != 401 && r.status != 429 {
				t.Fatalf("minute %d attempt %d: %d %s", minute, i, r.status, r.raw)
			}
		}
		if r := e.loginFrom(owner, "admin@example.com", "correct horse battery"); r.status != 200 {
			t.Fatalf("minute %d: the owner's login from their address: %d %s", minute, r.status, r.raw)
		}
		e.clock.Add(time.Minute)
	}
}

func TestLoginLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const a = "203.0.113.66"
	// Five failures from an address: then that address is locked out of the
	// account, even with the right password.
	for i := 0; i < 5; i++ {
		wantProblem(t, e.loginFrom(a, "admin@example.com", "wrong password"), 401, "unauthorized")
	}
	r := e.loginFrom(a, "admin@example.com", "correct horse battery")
	wantProblem(t, r, 429, "rate_limited")
	if got, want := r.header.Get("Retry-After"), "900"; got != want {
		t.Fatalf("Retry-After = %q, want %q", got, want)
	}
	// Other accounts are not locked for it, and an unknown e-mail counts
	// exactly like a known one.
	e.loginFrom(a, "other@example.com", "other password 123")
	for i := 0; i < 5; i++ {
		wantProblem(t, e.loginFrom(a, "nobody@example.com", "wrong password"), 401, "unauthorized")
	}
	wantProblem(t, e.loginFrom(a, "nobody@example.com", "wrong password"), 429, "rate_limited")
	// Operators see the accounts with failures remembered.
	if m := e.request(newRequest("GET", "/metrics", "", "")); !strings.Contains(string(m.raw), "linkbolt_login_accounts 2") {
		t.Fatalf("metrics: %s", m.raw)
	}
	// The oldest failure leaves the 15 minute window: one more try.
	e.clock.Add(15 * time.Minute)
	if r := e.loginFrom(a, "admin@example.com", "correct horse battery"); r.status != 200 {
		t.Fatalf("after the window: %d %s", r.status, r.raw)
	}
	// A success clears the address's failures.
	for i := 0; i < 5; i++ {
		wantProblem(t, e.loginFrom(a, "admin@example.com", "wrong password"), 401, "unauthorized")
	}

	// One address against many accounts: the per-address flood limit.
	const flood = "203.0.113.99"
	for i := 0; i < 20; i++ {
		wantProblem(t, e.loginFrom(flood, fmt.Sprintf("u%d@example.com", i), "wrong password"), 401, "unauthorized")
	}
	r = e.loginFrom(flood, "u99@example.com", "wrong password")
	wantProblem(t, r, 429, "rate_limited")
	if !strings.Contains(r.str("detail"), "your address") {
		t.Fatalf("detail: %s", r.raw)
	}
}

// TestLoginAccountDelayGrows spreads failures over many addresses: once the
// account has taken 10 in a row, each further failure doubles the wait of
// the addresses that failed, up to auth.login_max_delay; an address that
// has not failed is never held.
func TestLoginAccountDelayGrows(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.LoginMaxDelay = 8 * time.Second })
	addr := func(i int) string { return fmt.Sprintf("203.0.113.%d", i) }
	for i := 1; i <= 10; i++ {
		wantProblem(t, e.loginFrom(addr(i), "admin@example.com", "wrong password"), 401, "unauthorized")
	}
	for i, want := range []string{"1", "2", "4", "8", "8"} {
		a := addr(1 + i%4) // addresses that failed before, under their own limit
		r := e.loginFrom(a, "admin@example.com", "wrong password")
		wantProblem(t, r, 429, "rate_limited")
		if got := r.header.Get("Retry-After"); got != want {
			t.Fatalf("step %d: Retry-After = %q, want %q", i, got, want)
		}
		secs, _ := strconv.Atoi(want)
		e.clock.Add(time.Duration(secs) * time.Second)
		wantProblem(t, e.loginFrom(a, "admin@example.com", "wrong password"), 401, "unauthorized")
	}
	// The owner, from an address with no failure, is not held.
	if r := e.loginFrom("198.51.100.7", "admin@example.com", "correct horse battery"); r.status != 200 {
		t.Fatalf("owner: %d %s", r.status, r.raw)
	}
	// Their success ended the run: the failing addresses wait no more.
	wantProblem(t, e.loginFrom(addr(1), "admin@example.com", "wrong password"), 401, "unauthorized")
}

// TestLoginLimitsIPv6Block: the addresses of one IPv6 /64 share their login
// limits, so walking through a block's addresses buys no fresh tries.
func TestLoginLimitsIPv6Block(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := 1; i <= 5; i++ {
		wantProblem(t, e.loginFrom(fmt.Sprintf("[2001:db8:1:2::%x]", i), "admin@example.com", "wrong password"), 401, "unauthorized")
	}
	wantProblem(t, e.loginFrom("[2001:db8:1:2:ffff::1]", "admin@example.com", "correct horse battery"), 429, "rate_limited")
	// Another /64 is another client.
	if r := e.loginFrom("[2001:db8:1:3::1]", "admin@example.com", "correct horse battery"); r.status != 200 {
		t.Fatalf("another /64: %d %s", r.status, r.raw)
	}
}

// TestUnratedRequestsLeaveTheBudget: redirects, logins and setup take
// nothing from the workspace's budget.
func TestUnratedRequestsLeaveTheBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"free"}`, 201)
	e.clock.Add(time.Minute) // a full bucket; the clock stands still from here
	for i := 0; i < 150; i++ {
		e.do("GET", "/free", "", "", 302)
	}
	for i := 0; i < 3; i++ {
		e.login("admin@example.com", "correct horse battery")
		e.request(newRequest("POST", "/v1/setup", "", `{"token":"x","email":"a@example.com","password":"long enough pw"}`))
	}
	r := e.do("GET", "/v1/links", e.readKey, "", 200)
	if got := r.header.Get("X-RateLimit-Remaining"); got != "99" {
		t.Fatalf("X-RateLimit-Remaining after redirects, logins and setup = %q, want 99", got)
	}
}

// TestLoginHugeEmailsAreNotKept: failed logins with e-mails of half a
// megabyte each (the body limit allows a megabyte) are answered 401 like
// any wrong login, and the login limits remember them by a digest: the
// heap does not keep the e-mails for the hour the limits remember failures.
func TestLoginHugeEmailsAreNotKept(t *testing.T) {
	e := newEnv(t)
	const attempts, size = 16, 512 << 10
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := range attempts {
		email := strings.Repeat(string(rune('a'+i)), size) + "@example.com"
		wantProblem(t, e.loginFrom(fmt.Sprintf("203.0.113.%d", i+1), email, "wrong password"), 401, "unauthorized")
	}
	if got, want := e.srv.logins.Len(), attempts; got != want {
		t.Fatalf("accounts remembered = %d, want %d", got, want)
	}
	// 16 kept e-mails would be 8 MiB; their digests are a few KiB.
	if grown := int64(heap()) - int64(before); grown > 2<<20 {
		t.Fatalf("the heap grew by %d bytes after %d failed logins with %d-byte e-mails", grown, attempts, size)
	}
}
