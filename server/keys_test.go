package server

import (
	"strings"
	"testing"
	"time"
)

func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	created := e.do("POST", "/v1/keys", e.adminToken, `{"name":"ci","scope":"read_write"}`, 201)
	token, id := created.str("key"), created.str("id")
	if !strings.HasPrefix(token, "lb_live_") || !strings.HasPrefix(token, created.str("start")) {
		t.Fatalf("token %q, start %q", token, created.str("start"))
	}
	if got := created.str("state"); got != "active" {
		t.Fatalf("state = %q", got)
	}
	// The token is never shown again.
	got := e.do("GET", "/v1/keys/"+id, e.adminToken, "", 200)
	if _, ok := got.body.(map[string]any)["key"]; ok || strings.Contains(string(got.raw), token) {
		t.Fatalf("the token is listed: %s", got.raw)
	}
	if strings.Contains(string(e.do("GET", "/v1/keys", e.adminToken, "", 200).raw), token) {
		t.Fatal("the token is in the list")
	}

	// Usage is exact before any flush.
	for i := 0; i < 3; i++ {
		e.do("GET", "/v1/links", token, "", 200)
	}
	e.clock.Add(time.Minute)
	e.do("GET", "/v1/links", token, "", 200)
	k := e.do("GET", "/v1/keys/"+id, e.adminToken, "", 200)
	if got := k.path("request_count"); got != float64(4) {
		t.Fatalf("request_count = %v, want 4", got)
	}
	if got, want := k.str("last_used_at"), ts(testStart.Add(time.Minute)); got != want {
		t.Fatalf("last_used_at = %q, want %q", got, want)
	}

	// Rotate: a new key, the old one in grace and still working.
	rot := e.do("POST", "/v1/keys/"+id+"/rotate", token, "", 201)
	next := rot.str("key")
	if next == token || rot.str("name") != "ci" || rot.str("scope") != "read_write" {
		t.Fatalf("rotated key: %s", rot.raw)
	}
	old := e.do("GET", "/v1/keys/"+id, next, "", 200)
	if got := old.str("state"); got != "grace" {
		t.Fatalf("old key state = %q", got)
	}
	if got, want := old.str("grace_ends_at"), ts(e.clock.Now().Add(24*time.Hour)); got != want {
		t.Fatalf("grace_ends_at = %q, want %q", got, want)
	}
	if got := old.str("replaced_by"); got != rot.str("id") {
		t.Fatalf("replaced_by = %q, want %q", got, rot.str("id"))
	}
	e.do("GET", "/v1/links", token, "", 200)
	// A key in grace cannot be rotated again.
	wantProblem(t, e.request(newRequest("POST", "/v1/keys/"+id+"/rotate", next, "")), 409, "conflict")

	// The grace period runs out: the old key is revoked, the new one works.
	e.clock.Add(24*time.Hour - time.Second)
	e.do("GET", "/v1/links", token, "", 200)
	e.clock.Add(time.Second)
	wantProblem(t, e.request(newRequest("GET", "/v1/links", token, "")), 401, "unauthorized")
	if got := e.do("GET", "/v1/keys/"+id, next, "", 200).str("state"); got != "revoked" {
		t.Fatalf("old key state after grace = %q", got)
	}
	e.do("GET", "/v1/links", next, "", 200)

	// Revoke takes effect on the very next request, and the key stays listed.
	e.do("DELETE", "/v1/keys/"+rot.str("id"), e.writeKey, "", 204)
	wantProblem(t, e.request(newRequest("GET", "/v1/links", next, "")), 401, "unauthorized")
	if got := e.do("GET", "/v1/keys/"+rot.str("id"), e.writeKey, "", 200).str("state"); got != "revoked" {
		t.Fatalf("state = %q", got)
	}
	wantProblem(t, e.request(newRequest("POST", "/v1/keys/"+rot.str("id")+"/rotate", e.writeKey, "")), 409, "conflict")
}

func TestKeyExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	exp := testStart.Add(2 * time.Hour).Format(time.RFC3339)
	r := e.do("POST", "/v1/keys", e.adminToken, `{"name":"short","scope":"read","expires_at":"`+exp+`"}`, 201)
	e.do("GET", "/v1/links", r.str("key"), "", 200)
	e.clock.Add(2 * time.Hour)
	wantProblem(t, e.request(newRequest("GET", "/v1/links", r.str("key"), "")), 401, "unauthorized")
	if got := e.do("GET", "/v1/keys/"+r.str("id"), e.adminToken, "", 200).str("state"); got != "expired" {
		t.Fatalf("state = %q", got)
	}
	// Rotating keeps the expiry, so an expired key cannot be rotated.
	wantProblem(t, e.request(newRequest("POST", "/v1/keys/"+r.str("id")+"/rotate", e.adminToken, "")), 409, "conflict")
}

func TestKeyCreateValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	past := testStart.Add(-time.Minute).Format(time.RFC3339)
	for _, tc := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"unknown scope", `{"name":"x","scope":"admin"}`, 422, "validation_failed"},
		{"no name", `{"scope":"read"}`, 422, "validation_failed"},
		{"long name", `{"name":"` + strings.Repeat("n", 101) + `","scope":"read"}`, 422, "validation_failed"},
		{"expiry in the past", `{"name":"x","scope":"read","expires_at":"` + past + `"}`, 422, "validation_failed"},
		{"expiry not a time", `{"name":"x","scope":"read","expires_at":"tomorrow"}`, 400, "invalid_request"},
		{"scope wrong type", `{"name":"x","scope":1}`, 400, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, e.request(newRequest("POST", "/v1/keys", e.writeKey, tc.body)), tc.status, tc.code)
		})
	}
	// A read_write key may mint a read key, which cannot mint anything.
	rk := e.createKey(e.writeKey, "child", "read")
	wantProblem(t, e.request(newRequest("POST", "/v1/keys", rk, `{"name":"x","scope":"read"}`)), 403, "forbidden")
	// Nothing was stored by the refused requests.
	if got := len(e.do("GET", "/v1/keys", e.adminToken, "", 200).path("data").([]any)); got != 3 {
		t.Fatalf("%d keys, want 3", got)
	}
}
