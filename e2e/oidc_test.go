package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"
)

// TestOIDCEndToEnd signs in through the whole server on a real listener
// with a real OpenID Connect provider, as a browser would.
func TestOIDCEndToEnd(t *testing.T) {
	op, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Shutdown() })
	t.Setenv("LINKBOLT_SERVER_BASE_URL", "http://linkbolt.test")
	t.Setenv("LINKBOLT_AUTH_OIDC_ISSUER", op.Issuer())
	t.Setenv("LINKBOLT_AUTH_OIDC_CLIENT_ID", op.ClientID)
	t.Setenv("LINKBOLT_AUTH_OIDC_CLIENT_SECRET", op.ClientSecret)
	t.Setenv("LINKBOLT_AUTH_OIDC_ALLOWED_DOMAINS", "example.com")
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	logs := &syncWriter{}
	base, stop := startApp(t, cfg, logs)

	// The browser reaches linkbolt at its base URL.
	addr := strings.TrimPrefix(base, "http://")
	dial := (&net.Dialer{}).DialContext
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Transport: &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		if a == "linkbolt.test:80" {
			a = addr
		}
		return dial(ctx, network, a)
	}}}
	var landed *url.URL
	browser.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == "/app/" {
			landed = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}
	op.QueueUser(&mockoidc.MockUser{Subject: "42", Email: "ADMIN@example.com", EmailVerified: true})
	res, err := browser.Get("http://linkbolt.test/v1/auth/oidc/start")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 302 || landed == nil {
		t.Fatalf("the sign-in ended with %d at %v", res.StatusCode, res.Request.URL)
	}
	frag, _ := url.ParseQuery(landed.Fragment)
	c := client{t, base}
	if got := c.must("GET", "/v1/me", frag.Get("token"), "", 200)["email"]; got != "admin@example.com" {
		t.Fatalf("signed in as %v", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "found the OpenID Connect provider") {
		t.Fatalf("no log line names the provider:\n%s", logs)
	}
}

// TestOIDCProviderDownAtStart: linkbolt starts while the provider cannot be
// reached, serves everything else, and answers sign-ins 503.
func TestOIDCProviderDownAtStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String() + "/dex"
	ln.Close()
	t.Setenv("LINKBOLT_AUTH_OIDC_ISSUER", issuer)
	t.Setenv("LINKBOLT_AUTH_OIDC_CLIENT_ID", "linkbolt")
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	logs := &syncWriter{}
	base, _ := startApp(t, cfg, logs)
	c := client{t, base}
	c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)
	status, body, h := c.call("GET", "/v1/auth/oidc/start", "", "")
	if status != 503 || body["code"] != "provider_unavailable" || h.Get("Retry-After") == "" {
		t.Fatalf("start: %d %v %v", status, body, h)
	}
	res, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var health map[string]any
	if json.Unmarshal(raw, &health); res.StatusCode != 200 || health["status"] != "ok" {
		t.Fatalf("healthz: %d %s", res.StatusCode, raw)
	}
	if !strings.Contains(logs.String(), "provider is unreachable") {
		t.Fatalf("no log line says the provider is unreachable:\n%s", logs)
	}
}
