package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/linkbolt/linkbolt/auth"
)

// The single sign-on tests run the whole flow against a real OpenID Connect
// provider in the test process (oauth2-proxy's mockoidc: discovery, JWKS,
// authorization and token endpoints, PKCE, one-time codes, RS256 ID
// tokens), with a browser that keeps cookies and follows redirects.

// oidcEnv is env with single sign-on set up against a provider.
type oidcEnv struct {
	*env
	op  *mockoidc.MockOIDC
	sso *auth.OIDC
}

// newOIDCEnv starts a provider whose clock is the test's and a server that
// signs in with it; configure adjusts the single sign-on settings.
func newOIDCEnv(t *testing.T, configure func(*auth.OIDC)) *oidcEnv {
	t.Helper()
	op, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Shutdown() })
	return newOIDCEnvAt(t, op.Issuer(), op, configure)
}

func newOIDCEnvAt(t *testing.T, issuer string, op *mockoidc.MockOIDC, configure func(*auth.OIDC)) *oidcEnv {
	t.Helper()
	var sso *auth.OIDC
	e := newEnvWith(t, func(d *Deps) {
		sso = &auth.OIDC{Issuer: issuer, ClientID: op.ClientID, ClientSecret: op.ClientSecret,
			RedirectURL: "http://lb.test/v1/auth/oidc/callback", Now: d.Now}
		if configure != nil {
			configure(sso)
		}
		d.OIDC = sso
	})
	// The provider's tokens are stamped with the test's clock.
	op.FastForward(time.Until(e.clock.Now()))
	return &oidcEnv{env: e, op: op, sso: sso}
}

// browser is a person's browser: a cookie jar, the server under test at
// lb.test through its real router (each answer checked against the OpenAPI
// document), the provider over the network.
type browser struct {
	t *testing.T
	c *http.Client
	// accept is the Accept header of every request; empty: a browser's.
	accept string
}

func (e *oidcEnv) browser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t}
	b.c = &http.Client{Jar: jar, Transport: routeTransport{t: t, srv: e.srv},
		// Stop at every redirect; follow walks them.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return b
}

type routeTransport struct {
	t   testing.TB
	srv *Server
}

func (rt routeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != "lb.test" {
		return http.DefaultTransport.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Host, r.RemoteAddr, r.RequestURI = req.URL.Host, "192.0.2.7:4321", req.URL.RequestURI()
	rec := httptest.NewRecorder()
	rt.srv.ServeHTTP(rec, r)
	res := rec.Result()
	raw, _ := io.ReadAll(res.Body)
	checkOpenAPI(rt.t, r, res.StatusCode, res.Header, raw)
	res.Body, res.Request = io.NopCloser(bytes.NewReader(raw)), req
	return res, nil
}

// get sends one GET and returns the answer with its body read.
func (b *browser) get(rawURL string) (*http.Response, []byte) {
	b.t.Helper()
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	if b.accept != "" {
		req.Header.Set("Accept", b.accept)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

// location returns the redirect target of res, which must be a 302.
func (b *browser) location(res *http.Response, body []byte) string {
	b.t.Helper()
	if res.StatusCode != http.StatusFound {
		b.t.Fatalf("GET %s: status %d, want 302: %s", res.Request.URL, res.StatusCode, body)
	}
	loc := res.Header.Get("Location")
	if loc == "" {
		b.t.Fatalf("GET %s: 302 without Location", res.Request.URL)
	}
	return loc
}

// toCallback opens /v1/auth/oidc/start and lets the provider sign the person
// in; it returns the callback URL the provider sends the browser to.
func (b *browser) toCallback() string {
	b.t.Helper()
	auth := b.location(b.get("http://lb.test/v1/auth/oidc/start"))
	cb := b.location(b.get(auth))
	if !strings.HasPrefix(cb, "http://lb.test/v1/auth/oidc/callback?") {
		b.t.Fatalf("the provider sent the browser to %s", cb)
	}
	return cb
}

// signIn runs the whole flow and returns the token handed to the
// dashboard in the fragment of the redirect to /app/.
func (b *browser) signIn() string {
	b.t.Helper()
	loc := b.location(b.get(b.toCallback()))
	u, err := url.Parse(loc)
	if err != nil || u.Host != "lb.test" || u.Path != "/app/" || u.RawQuery != "" {
		b.t.Fatalf("signed in to %s, want http://lb.test/app/#token=…", loc)
	}
	frag, err := url.ParseQuery(u.Fragment)
	if err != nil || frag.Get("token") == "" || frag.Get("expires_at") == "" {
		b.t.Fatalf("fragment %q: want token and expires_at", u.Fragment)
	}
	return frag.Get("token")
}

// problem reads a problem+json answer and checks status and code.
func (b *browser) problem(res *http.Response, body []byte, status int, code string) string {
	b.t.Helper()
	r := &response{t: b.t, status: res.StatusCode, header: res.Header, raw: body}
	if err := json.Unmarshal(body, &r.body); err != nil {
		b.t.Fatalf("status %d, not JSON: %s", res.StatusCode, body)
	}
	wantProblem(b.t, r, status, code)
	return r.str("detail")
}

// cookie returns the flow cookie the browser holds for the callback.
func (b *browser) cookie() *http.Cookie {
	u, _ := url.Parse("http://lb.test/v1/auth/oidc/callback")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == oidcCookie {
			return c
		}
	}
	return nil
}

func person(email string, verified bool) *mockoidc.MockUser {
	return &mockoidc.MockUser{Subject: "sub-" + email, Email: email, EmailVerified: verified}
}

// claimsUser is a person whose ID token the provider signs with claims
// changed by edit, as a provider set up for another client would.
type claimsUser struct {
	*mockoidc.MockUser
	edit func(*mockoidc.IDTokenClaims)
}

func (u claimsUser) Claims(scope []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	u.edit(base)
	return u.MockUser.Claims(scope, base)
}

func (e *oidcEnv) userCount() int {
	e.t.Helper()
	n, err := e.db.Users.CountUsers(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	e := newOIDCEnv(t, nil)
	b := e.browser(t)

	t.Run("an existing user, whatever the case of the e-mail", func(t *testing.T) {
		e.op.QueueUser(person("Admin@EXAMPLE.com", true))
		tok := b.signIn()
		me := e.do("GET", "/v1/me", tok, "", 200)
		if got, want := me.str("email"), "admin@example.com"; got != want {
			t.Fatalf("signed in as %q, want %q", got, want)
		}
		if c := b.cookie(); c != nil {
			t.Fatalf("the flow cookie outlived the sign-in: %v", c)
		}
	})

	t.Run("client_state comes back with the token, and only a valid one is taken", func(t *testing.T) {
		e.op.QueueUser(person("admin@example.com", true))
		fresh := e.browser(t)
		state := "Zq3-x_9KfT2mWc7RbN1p"
		auth := fresh.location(fresh.get("http://lb.test/v1/auth/oidc/start?client_state=" + state))
		cb := fresh.location(fresh.get(auth))
		u, err := url.Parse(fresh.location(fresh.get(cb)))
		if err != nil {
			t.Fatal(err)
		}
		frag, _ := url.ParseQuery(u.Fragment)
		if frag.Get("client_state") != state || frag.Get("token") == "" {
			t.Fatalf("fragment %q: want the token and client_state %q", u.Fragment, state)
		}
		for _, bad := range []string{"short", strings.Repeat("a", 65), "has space in it, see", "with%26amp%3Dsigns12"} {
			res, body := e.browser(t).get("http://lb.test/v1/auth/oidc/start?client_state=" + url.QueryEscape(bad))
			if res.StatusCode != http.StatusBadRequest || res.Header.Get("Set-Cookie") != "" || !strings.Contains(string(body), "client_state") {
				t.Fatalf("client_state %q: %d %s", bad, res.StatusCode, body)
			}
		}
	})

	t.Run("check=true says single sign-on is on and starts nothing", func(t *testing.T) {
		fresh := e.browser(t)
		res, body := fresh.get("http://lb.test/v1/auth/oidc/start?check=true")
		if res.StatusCode != http.StatusNoContent || len(body) != 0 || res.Header.Get("Location") != "" || res.Header.Get("Set-Cookie") != "" {
			t.Fatalf("check: %d, Location %q, Set-Cookie %q, body %q", res.StatusCode, res.Header.Get("Location"), res.Header.Get("Set-Cookie"), body)
		}
		if c := fresh.cookie(); c != nil {
			t.Fatalf("the check set the flow cookie: %v", c)
		}
	})

	t.Run("the start sends PKCE S256, state and nonce and sets the cookie", func(t *testing.T) {
		res, body := b.get("http://lb.test/v1/auth/oidc/start")
		loc, _ := url.Parse(b.location(res, body))
		q := loc.Query()
		for k, want := range map[string]string{
			"client_id": e.op.ClientID, "response_type": "code", "scope": "openid email profile",
			"redirect_uri": "http://lb.test/v1/auth/oidc/callback", "code_challenge_method": "S256",
		} {
			if got := q.Get(k); got != want {
				t.Errorf("%s = %q, want %q", k, got, want)
			}
		}
		for _, k := range []string{"state", "nonce", "code_challenge"} {
			if len(q.Get(k)) < 20 {
				t.Errorf("%s = %q: want a long random value", k, q.Get(k))
			}
		}
		sc := res.Header.Get("Set-Cookie")
		for _, want := range []string{oidcCookie + "=", "Path=/v1/auth/oidc", "Max-Age=600", "HttpOnly", "SameSite=Lax"} {
			if !strings.Contains(sc, want) {
				t.Errorf("Set-Cookie %q lacks %q", sc, want)
			}
		}
		if strings.Contains(sc, "Secure") {
			t.Errorf("Set-Cookie %q: Secure on an http base URL, which a browser would not send back", sc)
		}
		if strings.Contains(sc, q.Get("state")) {
			t.Errorf("the cookie holds the state in the clear: %q", sc)
		}
		// A second start gets a fresh state.
		res2, body2 := b.get("http://lb.test/v1/auth/oidc/start")
		loc2, _ := url.Parse(b.location(res2, body2))
		if loc2.Query().Get("state") == q.Get("state") || loc2.Query().Get("nonce") == q.Get("nonce") {
			t.Fatal("two sign-ins got the same state or nonce")
		}
	})

	t.Run("JSON for a client that asks for it", func(t *testing.T) {
		b := e.browser(t)
		e.op.QueueUser(person("admin@example.com", true))
		cb := b.toCallback()
		b.accept = "application/json"
		res, body := b.get(cb)
		if res.StatusCode != 200 {
			t.Fatalf("status %d: %s", res.StatusCode, body)
		}
		var tok tokenResponse
		if err := json.Unmarshal(body, &tok); err != nil || tok.Token == "" || tok.ExpiresAt == "" {
			t.Fatalf("answer %s: %v", body, err)
		}
		if got, want := tok.ExpiresAt, ts(e.clock.Now().Add(24*time.Hour)); got != want {
			t.Fatalf("expires_at %s, want %s", got, want)
		}
		e.do("GET", "/v1/me", tok.Token, "", 200)
	})
}

func TestOIDCSecureCookieOnHTTPS(t *testing.T) {
	t.Parallel()
	op, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Shutdown() })
	e := newEnvWith(t, func(d *Deps) {
		d.OIDC = &auth.OIDC{Issuer: op.Issuer(), ClientID: op.ClientID, ClientSecret: op.ClientSecret,
			RedirectURL: "https://lb.test/v1/auth/oidc/callback", Now: d.Now}
	}, func(c *Config) { c.BaseURL = &url.URL{Scheme: "https", Host: "lb.test"} })
	r := e.do("GET", "/v1/auth/oidc/start", "", "", 302)
	if sc := r.header.Get("Set-Cookie"); !strings.Contains(sc, "; Secure") || !strings.Contains(sc, "HttpOnly") {
		t.Fatalf("Set-Cookie %q: want Secure and HttpOnly on an https base URL", sc)
	}
}

// TestOIDCAttacks: every sign-in that must fail fails with a clear problem
// and no token.
func TestOIDCAttacks(t *testing.T) {
	t.Parallel()
	e := newOIDCEnv(t, func(o *auth.OIDC) { o.AllowedDomains = []string{"example.com"} })

	t.Run("wrong state", func(t *testing.T) {
		b := e.browser(t)
		cb, _ := url.Parse(b.toCallback())
		q := cb.Query()
		q.Set("state", "ATTACKERSSTATE")
		cb.RawQuery = q.Encode()
		res, body := b.get(cb.String())
		b.problem(res, body, 400, "invalid_request")
	})

	t.Run("missing state", func(t *testing.T) {
		b := e.browser(t)
		cb, _ := url.Parse(b.toCallback())
		q := cb.Query()
		q.Del("state")
		cb.RawQuery = q.Encode()
		res, body := b.get(cb.String())
		b.problem(res, body, 400, "invalid_request")
	})

	t.Run("a callback in another browser (no cookie)", func(t *testing.T) {
		cb := e.browser(t).toCallback()
		b := e.browser(t)
		res, body := b.get(cb)
		b.problem(res, body, 400, "invalid_request")
	})

	t.Run("a forged cookie", func(t *testing.T) {
		b := e.browser(t)
		cb := b.toCallback()
		c := b.cookie()
		u, _ := url.Parse(cb)
		raw := []byte(c.Value)
		raw[len(raw)/2] ^= 1
		b.c.Jar.SetCookies(u, []*http.Cookie{{Name: oidcCookie, Value: string(raw), Path: oidcCookiePath}})
		res, body := b.get(cb)
		b.problem(res, body, 400, "invalid_request")
	})

	t.Run("a replayed code", func(t *testing.T) {
		b := e.browser(t)
		e.op.QueueUser(person("admin@example.com", true))
		cb := b.toCallback()
		b.signInAt(cb)
		// The same URL again: the cookie is gone.
		res, body := b.get(cb)
		b.problem(res, body, 400, "invalid_request")
		// With a fresh sign-in's cookie and state: the provider refuses
		// the code it redeemed already.
		fresh, _ := url.Parse(b.toCallback())
		old, _ := url.Parse(cb)
		q := old.Query()
		q.Set("state", fresh.Query().Get("state"))
		old.RawQuery = q.Encode()
		res, body = b.get(old.String())
		if d := b.problem(res, body, 401, "unauthorized"); !strings.Contains(d, "refused the code") {
			t.Fatalf("detail %q", d)
		}
	})

	t.Run("an unverified e-mail", func(t *testing.T) {
		b := e.browser(t)
		e.op.QueueUser(person("admin@example.com", false))
		res, body := b.get(b.toCallback())
		if d := b.problem(res, body, 403, "forbidden"); !strings.Contains(d, "not verified") {
			t.Fatalf("detail %q", d)
		}
	})

	t.Run("an e-mail outside allowed_domains", func(t *testing.T) {
		b := e.browser(t)
		e.op.QueueUser(person("mallory@example.org", true))
		res, body := b.get(b.toCallback())
		if d := b.problem(res, body, 403, "forbidden"); !strings.Contains(d, "example.org") {
			t.Fatalf("detail %q", d)
		}
		// A subdomain is another domain.
		e.op.QueueUser(person("admin@evil.example.com", true))
		res, body = b.get(b.toCallback())
		b.problem(res, body, 403, "forbidden")
	})

	t.Run("an ID token for another client", func(t *testing.T) {
		b := e.browser(t)
		e.op.QueueUser(claimsUser{person("admin@example.com", true), func(c *mockoidc.IDTokenClaims) {
			c.Audience = jwt.ClaimStrings{"another-client"}
		}})
		res, body := b.get(b.toCallback())
		if d := b.problem(res, body, 401, "unauthorized"); !strings.Contains(d, "another client") {
			t.Fatalf("detail %q", d)
		}
	})

	t.Run("an ID token from another issuer", func(t *testing.T) {
		b := e.browser(t)
		e.op.QueueUser(claimsUser{person("admin@example.com", true), func(c *mockoidc.IDTokenClaims) {
			c.Issuer = "https://other-provider.example"
		}})
		res, body := b.get(b.toCallback())
		if d := b.problem(res, body, 401, "unauthorized"); !strings.Contains(d, "another provider") {
			t.Fatalf("detail %q", d)
		}
	})

	t.Run("an ID token with another nonce", func(t *testing.T) {
		b := e.browser(t)
		e.op.QueueUser(claimsUser{person("admin@example.com", true), func(c *mockoidc.IDTokenClaims) {
			c.Nonce = "NONCEOFANOTHERSIGNIN"
		}})
		res, body := b.get(b.toCallback())
		if d := b.problem(res, body, 401, "unauthorized"); !strings.Contains(d, "nonce") {
			t.Fatalf("detail %q", d)
		}
	})

	t.Run("an expired ID token", func(t *testing.T) {
		b := e.browser(t)
		e.op.QueueUser(claimsUser{person("admin@example.com", true), func(c *mockoidc.IDTokenClaims) {
			c.ExpiresAt = jwt.NewNumericDate(e.clock.Now().Add(-time.Minute))
		}})
		res, body := b.get(b.toCallback())
		if d := b.problem(res, body, 401, "unauthorized"); !strings.Contains(d, "expired") {
			t.Fatalf("detail %q", d)
		}
	})

	t.Run("a sign-in that took longer than 10 minutes", func(t *testing.T) {
		b := e.browser(t)
		cb := b.toCallback()
		e.clock.Add(auth.OIDCFlowTTL)
		e.op.FastForward(auth.OIDCFlowTTL)
		res, body := b.get(cb)
		b.problem(res, body, 400, "invalid_request")
	})

	t.Run("the provider's error", func(t *testing.T) {
		b := e.browser(t)
		cb, _ := url.Parse(b.toCallback())
		cb.RawQuery = url.Values{"error": {"access_denied"}, "error_description": {"The user said no.\x00"},
			"state": {cb.Query().Get("state")}}.Encode()
		res, body := b.get(cb.String())
		if d := b.problem(res, body, 401, "unauthorized"); !strings.Contains(d, "access_denied (The user said no.)") {
			t.Fatalf("detail %q", d)
		}
	})

	t.Run("no user has the e-mail and auto_create is off", func(t *testing.T) {
		before := e.userCount()
		b := e.browser(t)
		e.op.QueueUser(person("newcomer@example.com", true))
		res, body := b.get(b.toCallback())
		if d := b.problem(res, body, 403, "forbidden"); !strings.Contains(d, "invitation") {
			t.Fatalf("detail %q", d)
		}
		if got := e.userCount(); got != before {
			t.Fatalf("%d users after a refused sign-in, want %d", got, before)
		}
	})

	if strings.Contains(e.logs.String(), "eyJ") {
		t.Fatal("a token reached the log")
	}
}

// signInAt finishes a sign-in at the callback URL cb.
func (b *browser) signInAt(cb string) {
	b.t.Helper()
	if loc := b.location(b.get(cb)); !strings.HasPrefix(loc, "http://lb.test/app/#token=") {
		b.t.Fatalf("signed in to %s", loc)
	}
}

func TestOIDCDisabledUser(t *testing.T) {
	t.Parallel()
	e := newOIDCEnv(t, nil)
	b := e.browser(t)
	id := e.do("POST", "/v1/users", e.adminToken, `{"email":"grace@example.com","name":"Grace","password":"compiler pioneer 1952"}`, 201).str("id")
	e.op.QueueUser(person("grace@example.com", true))
	b.signIn()
	e.do("PATCH", "/v1/users/"+id, e.adminToken, `{"disabled":true}`, 200)
	e.op.QueueUser(person("grace@example.com", true))
	res, body := b.get(b.toCallback())
	if detail := b.problem(res, body, 403, "forbidden"); !strings.Contains(detail, "disabled") {
		t.Fatalf("detail %q: want it to say the account is disabled", detail)
	}
}

func TestOIDCAutoCreate(t *testing.T) {
	t.Parallel()
	e := newOIDCEnv(t, func(o *auth.OIDC) { o.AutoCreate = true })
	before := e.userCount()
	b := e.browser(t)
	e.op.QueueUser(person("New.Person@Example.COM", true))
	tok := b.signIn()
	if got, want := e.userCount(), before+1; got != want {
		t.Fatalf("%d users, want %d", got, want)
	}
	me := e.do("GET", "/v1/me", tok, "", 200)
	if got, want := me.str("email"), "new.person@example.com"; got != want {
		t.Fatalf("email %q, want %q", got, want)
	}
	// The provider gave no name: the local part of the e-mail stands in.
	if got, want := me.str("name"), "new.person"; got != want {
		t.Fatalf("name %q, want %q", got, want)
	}
	if ws := me.path("workspaces").([]any); len(ws) != 0 {
		t.Fatalf("a new user is in workspaces %v; they get one by invitation or by creating it", ws)
	}
	id := me.str("id")

	// The next sign-in finds the same user.
	e.op.QueueUser(person("new.person@example.com", true))
	if got := e.do("GET", "/v1/me", b.signIn(), "", 200).str("id"); got != id {
		t.Fatalf("second sign-in as %s, want %s", got, id)
	}
	if got, want := e.userCount(), before+1; got != want {
		t.Fatalf("%d users, want %d", got, want)
	}
	// The user has no password: no password logs them in.
	r := e.request(newRequest("POST", "/v1/auth/login", "", `{"email":"new.person@example.com","password":"anything at all"}`))
	wantProblem(t, r, 401, "unauthorized")
	// Nor can a token give them one; it is no wrong password either.
	for range 6 {
		r = e.request(newRequest("POST", "/v1/me/password", tok, `{"current_password":"anything at all","new_password":"a long new password"}`))
		wantProblem(t, r, 409, "conflict")
		wantDetail(t, r, "single sign-on")
	}
	e.do("GET", "/v1/me", tok, "", 200)

	// auto_create never creates a user for an unverified e-mail.
	e.op.QueueUser(person("unverified@example.com", false))
	res, body := b.get(b.toCallback())
	b.problem(res, body, 403, "forbidden")
	if got, want := e.userCount(), before+1; got != want {
		t.Fatalf("%d users, want %d", got, want)
	}
}

func TestOIDCOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, p := range []string{"/v1/auth/oidc/start", "/v1/auth/oidc/start?check=true", "/v1/auth/oidc/callback?code=x&state=y"} {
		r := e.request(newRequest("GET", p, "", ""))
		wantProblem(t, r, 404, "not_found")
		if !strings.Contains(r.str("detail"), "single sign-on") {
			t.Fatalf("detail %q", r.str("detail"))
		}
	}
}

// TestOIDCProviderDown: a provider that cannot be reached makes sign-ins
// answer 503 (the server is built and serves everything else); discovery is
// tried again, at most every 5 s, and sign-ins work once it answers.
func TestOIDCProviderDown(t *testing.T) {
	t.Run("nothing listens at the issuer", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		op, err := mockoidc.NewServer(nil)
		if err != nil {
			t.Fatal(err)
		}
		e := newOIDCEnvAt(t, "http://"+addr+mockoidc.IssuerBase, op, nil)
		b := e.browser(t)
		for _, p := range []string{"/v1/auth/oidc/start", "/v1/auth/oidc/start?check=true"} {
			res, body := b.get("http://lb.test" + p)
			b.problem(res, body, 503, "provider_unavailable")
			if res.Header.Get("Retry-After") != "5" || res.Header.Get("Set-Cookie") != "" {
				t.Fatalf("%s: Retry-After %q, Set-Cookie %q", p, res.Header.Get("Retry-After"), res.Header.Get("Set-Cookie"))
			}
		}
		e.do("GET", "/v1/me", e.adminToken, "", 200)
		if !strings.Contains(e.logs.String(), "provider is unreachable") {
			t.Fatal("no log line says the provider is unreachable")
		}
	})

	t.Run("the provider fails, then recovers", func(t *testing.T) {
		e := newOIDCEnv(t, nil)
		e.op.QueueError(&mockoidc.ServerError{Code: 503, Error: "temporarily_unavailable", Description: "down for maintenance"})
		if err := e.sso.Discover(context.Background()); !errors.Is(err, auth.ErrProviderUnreachable) {
			t.Fatalf("Discover: %v, want ErrProviderUnreachable", err)
		}
		b := e.browser(t)
		// Within 5 s of the failure, no new attempt.
		res, body := b.get("http://lb.test/v1/auth/oidc/start")
		b.problem(res, body, 503, "provider_unavailable")
		e.clock.Add(5 * time.Second)
		e.op.FastForward(5 * time.Second)
		e.op.QueueUser(person("admin@example.com", true))
		e.do("GET", "/v1/me", b.signIn(), "", 200)
	})
}
