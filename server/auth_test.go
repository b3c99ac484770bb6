package server

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestKeyTransports(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		set  func(r *http.Request, key string)
	}{
		{"bearer", func(r *http.Request, k string) { r.Header.Set("Authorization", "Bearer "+k) }},
		{"x-api-key", func(r *http.Request, k string) { r.Header.Set("X-API-Key", k) }},
		{"query", func(r *http.Request, k string) { r.URL.RawQuery = "api_key=" + k }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, key := range []string{e.readKey, e.writeKey} {
				req := newRequest("GET", "/v1/links", "", "")
				tc.set(req, key)
				r := e.request(req)
				if r.status != 200 {
					t.Fatalf("status %d: %s", r.status, r.raw)
				}
				if r.header.Get("X-RateLimit-Limit") != "100" {
					t.Fatalf("X-RateLimit-Limit = %q", r.header.Get("X-RateLimit-Limit"))
				}
			}
			// A read key cannot write by any transport.
			req := newRequest("POST", "/v1/links", "", `{"destination_url":"https://example.com/"}`)
			tc.set(req, e.readKey)
			wantProblem(t, e.request(req), 403, "forbidden")
		})
	}
}

func TestAPIKeyQueryValueNeverLogged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("GET", "/v1/links?api_key="+e.readKey, "", "", 200)
	e.do("POST", "/v1/links?api_key="+e.readKey, "", `{"destination_url":"https://example.com/"}`, 403)
	// One character off (whatever the last one is).
	last := "x"
	if strings.HasSuffix(e.readKey, "x") {
		last = "y"
	}
	bad := e.readKey[:len(e.readKey)-1] + last
	e.do("GET", "/v1/links?api_key="+bad, "", "", 401)
	e.do("GET", "/nope-"+e.readKey[:10]+"?api_key="+e.readKey, "", "", 404)
	logs := e.logs.String()
	if !strings.Contains(logs, "/v1/links") {
		t.Fatalf("the request log is missing: %s", logs)
	}
	for _, secret := range []string{e.readKey, bad, e.readKey[8:]} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a key reached the log:\n%s", logs)
		}
	}
}

func TestBadCredentials(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	oneOff := []byte(e.readKey)
	if oneOff[20] == 'a' {
		oneOff[20] = 'b'
	} else {
		oneOff[20] = 'a'
	}
	// A well-formed key with a valid checksum that was never issued.
	unknown, _, _, err := e.srv.tokens.Generate()
	if err != nil {
		t.Fatal(err)
	}
	adminID := e.do("GET", "/v1/me", e.adminToken, "", 200).str("id")
	claims := jwt.MapClaims{"sub": adminID, "iss": "linkbolt", "exp": testStart.Add(time.Hour).Unix(), "iat": testStart.Unix()}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	wrongSig, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte("another-secret-another-secret-12"))
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, claims).SignedString([]byte("test-secret-test-secret-test-secret!"))
	parts := strings.Split(e.adminToken, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"`+adminID+`","iss":"linkbolt","exp":9999999999}`)) + "." + parts[2]

	for _, tc := range []struct {
		name, header, value string
	}{
		{"no credential", "", ""},
		{"empty bearer", "Authorization", "Bearer "},
		{"basic scheme", "Authorization", "Basic YWRtaW46cGFzcw=="},
		{"malformed key", "X-API-Key", "lb_live_short"},
		{"wrong prefix", "X-API-Key", "xx_live_" + e.readKey[8:]},
		{"one character off", "Authorization", "Bearer " + string(oneOff)},
		{"truncated", "Authorization", "Bearer " + e.readKey[:len(e.readKey)-1]},
		{"never issued", "Authorization", "Bearer " + unknown},
		{"jwt in x-api-key", "X-API-Key", e.adminToken},
		{"garbage bearer", "Authorization", "Bearer not.a.jwt"},
		{"alg none", "Authorization", "Bearer " + none},
		{"wrong signature", "Authorization", "Bearer " + wrongSig},
		{"hs512", "Authorization", "Bearer " + hs512},
		{"tampered payload", "Authorization", "Bearer " + tampered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest("GET", "/v1/links", "", "")
			if tc.header != "" {
				req.Header.Set(tc.header, tc.value)
			}
			wantProblem(t, e.request(req), 401, "unauthorized")
		})
	}

	t.Run("expired jwt", func(t *testing.T) {
		e.clock.Add(25 * time.Hour)
		wantProblem(t, e.request(newRequest("GET", "/v1/me", e.adminToken, "")), 401, "unauthorized")
	})
}

func TestScopesAndRoles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	link := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a"}`, 201).str("id")
	keyID := e.do("GET", "/v1/keys", e.readKey, "", 200).path("data", 0, "id").(string)
	for _, tc := range []struct {
		method, path, body string
	}{
		{"POST", "/v1/links", `{"destination_url":"https://example.com/"}`},
		{"PATCH", "/v1/links/" + link, `{"tags":["x"]}`},
		{"DELETE", "/v1/links/" + link, ""},
		{"POST", "/v1/keys", `{"name":"x","scope":"read"}`},
		{"POST", "/v1/keys/" + keyID + "/rotate", ""},
		{"DELETE", "/v1/keys/" + keyID, ""},
		{"POST", "/api/urls", `{"originalUrl":"https://example.com/"}`},
	} {
		t.Run("read key "+tc.method+" "+tc.path, func(t *testing.T) {
			wantProblem(t, e.request(newRequest(tc.method, tc.path, e.readKey, tc.body)), 403, "forbidden")
		})
	}
	// Reads work with the read key.
	e.do("GET", "/v1/links/"+link, e.readKey, "", 200)
	e.do("GET", "/v1/keys/"+keyID, e.readKey, "", 200)
	e.do("GET", "/v1/analytics/workspace", e.readKey, "", 200)

	// JWT-only and admin-only routes refuse API keys with 403.
	for _, p := range []string{"/v1/me", "/v1/workspaces", "/v1/admin/backup"} {
		wantProblem(t, e.request(newRequest("GET", p, e.writeKey, "")), 403, "forbidden")
	}
	// A user who is not the instance admin cannot back up or set plans.
	other := e.login("other@example.com", "other password 123")
	wantProblem(t, e.request(newRequest("GET", "/v1/admin/backup", other, "")), 403, "forbidden")
	wantProblem(t, e.request(newRequest("PATCH", "/v1/workspaces/"+e.otherWS, other, `{"plan":"pro"}`)), 403, "forbidden")
	wantProblem(t, e.request(newRequest("POST", "/v1/workspaces", other, `{"name":"x","plan":"pro"}`)), 403, "forbidden")
	e.do("PATCH", "/v1/workspaces/"+e.otherWS, other, `{"name":"Renamed"}`, 200)
	// The admin may.
	r := e.do("PATCH", "/v1/workspaces/"+e.otherWS, e.adminToken, `{"plan":"pro"}`, 200)
	if got := r.str("plan"); got != "pro" {
		t.Fatalf("plan = %q", got)
	}
	wantProblem(t, e.request(newRequest("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"plan":"gold"}`)), 422, "validation_failed")
}

func TestCrossWorkspace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	otherKeyID := e.do("GET", "/v1/keys", e.otherKey, "", 200).path("data", 0, "id").(string)
	for _, tc := range []struct {
		method, path, body string
	}{
		{"GET", "/v1/links/" + e.otherLink, ""},
		{"PATCH", "/v1/links/" + e.otherLink, `{"tags":["mine"]}`},
		{"DELETE", "/v1/links/" + e.otherLink, ""},
		{"GET", "/v1/keys/" + otherKeyID, ""},
		{"POST", "/v1/keys/" + otherKeyID + "/rotate", ""},
		{"DELETE", "/v1/keys/" + otherKeyID, ""},
		{"GET", "/v1/links/" + neighbourID(e.otherLink), ""},
		{"GET", "/v1/links/lnk_zzzzzz", ""},
		{"GET", "/v1/links/not-an-id", ""},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			for _, cred := range []string{e.writeKey, e.adminToken} {
				wantProblem(t, e.request(newRequest(tc.method, tc.path, cred, tc.body)), 404, "not_found")
			}
		})
	}
	// The other workspace's link and key are untouched.
	e.do("GET", "/v1/links/"+e.otherLink, e.otherKey, "", 200)
	if got := e.do("GET", "/v1/keys/"+otherKeyID, e.otherKey, "", 200).str("state"); got != "active" {
		t.Fatalf("state = %q", got)
	}
	// A user naming a workspace they are not in gets 404, not 403.
	req := newRequest("GET", "/v1/links", e.adminToken, "")
	req.Header.Set("X-Workspace-Id", e.otherWS)
	wantProblem(t, e.request(req), 404, "not_found")
	other := e.login("other@example.com", "other password 123")
	wantProblem(t, e.request(newRequest("GET", "/v1/workspaces/"+e.ws, other, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("PATCH", "/v1/workspaces/"+e.ws, other, `{"name":"mine"}`)), 404, "not_found")
}

// TestStepOrder checks that each step of the pipeline answers before the
// next: 401 before 403, 403 before 404, 429 before 403.
func TestStepOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// A revoked read_write key on a write route: 401, not 403 or 404.
	k := e.do("POST", "/v1/keys", e.adminToken, `{"name":"gone","scope":"read_write"}`, 201)
	e.do("DELETE", "/v1/keys/"+k.str("id"), e.adminToken, "", 204)
	wantProblem(t, e.request(newRequest("DELETE", "/v1/links/"+e.otherLink, k.str("key"), "")), 401, "unauthorized")
	// A read key deleting another workspace's link: 403 (authorize) before 404 (scope).
	wantProblem(t, e.request(newRequest("DELETE", "/v1/links/"+e.otherLink, e.readKey, "")), 403, "forbidden")
	// A read_write key: 404, the other workspace's link is not revealed.
	wantProblem(t, e.request(newRequest("DELETE", "/v1/links/"+e.otherLink, e.writeKey, "")), 404, "not_found")
	// Over the limit, a forbidden write is a 429 first.
	for i := 0; i < 100; i++ {
		e.request(newRequest("GET", "/v1/links", e.readKey, ""))
	}
	wantProblem(t, e.request(newRequest("POST", "/v1/links", e.readKey, `{"destination_url":"https://example.com/"}`)), 429, "rate_limited")
}

func TestHTTPEdges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// HEAD answers wherever GET does, without a body.
	for _, p := range []string{"/v1/links", "/v1/keys", "/healthz", "/v1/openapi.json", "/"} {
		r := e.request(newRequest("HEAD", p, e.readKey, ""))
		if r.status != 200 || len(r.raw) != 0 {
			t.Fatalf("HEAD %s: %d, %d bytes", p, r.status, len(r.raw))
		}
	}
	// A trailing slash is a 404, not a redirect that would copy the query.
	r := e.request(newRequest("GET", "/v1/links/?api_key="+e.readKey, "", ""))
	wantProblem(t, r, 404, "not_found")
	if r.header.Get("Location") != "" {
		t.Fatalf("redirected to %q", r.header.Get("Location"))
	}
	wantProblem(t, e.request(newRequest("POST", "/v1/links", e.writeKey, `null`)), 400, "invalid_request")
	wantProblem(t, e.request(newRequest("GET", "/v1/links?tags="+tags(21), e.readKey, "")), 400, "invalid_request")
}
