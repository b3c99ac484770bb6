package webhook_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linkbolt/linkbolt/webhook"
)

func TestCheckAddr(t *testing.T) {
	for _, tt := range []struct {
		addr    string
		special bool
	}{
		{"127.0.0.1", true},
		{"127.255.0.9", true},
		{"::1", true},
		{"10.0.0.1", true},
		{"172.16.5.4", true},
		{"172.32.0.1", false},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"100.64.0.1", true},
		{"100.128.0.1", false},
		{"0.0.0.0", true},
		{"::", true},
		{"224.0.0.1", true},
		{"255.255.255.255", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"ff02::1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:10.1.2.3", true},
		{"::127.0.0.1", true},
		{"64:ff9b::7f00:1", true},    // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", true}, // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", false},  // NAT64 of 8.8.8.8
		{"2002:7f00:1::1", true},     // 6to4 of 127.0.0.1
		{"2002:808:808::1", false},   // 6to4 of 8.8.8.8
		{"2001::1", true},            // Teredo
		{"2001:db8::1", true},
		{"93.184.215.14", false},
		{"8.8.8.8", false},
		{"2606:4700:4700::1111", false},
		{"::ffff:8.8.8.8", false},
	} {
		ip := netip.MustParseAddr(tt.addr)
		err := webhook.CheckAddr(ip)
		if got := err != nil; got != tt.special {
			t.Errorf("CheckAddr(%s) = %v, want special %v", tt.addr, err, tt.special)
		}
		if err != nil && !errors.Is(err, webhook.ErrSpecialAddress) {
			t.Errorf("CheckAddr(%s) = %v, not ErrSpecialAddress", tt.addr, err)
		}
	}
}

// refusedTargets are the SSRF attempts of the issue.
var refusedTargets = []string{
	"http://127.0.0.1/hook",
	"http://127.0.0.1:8080/hook",
	"http://[::1]/hook",
	"http://10.0.0.1/hook",
	"http://169.254.169.254/latest/meta-data/",
	"http://100.64.0.1/hook",
	"http://[::ffff:127.0.0.1]/hook",
	"http://localhost/hook", // a name resolving to loopback
}

func TestCheckTarget(t *testing.T) {
	ctx := context.Background()
	for _, u := range refusedTargets {
		err := webhook.CheckTarget(ctx, u, false, nil)
		if !errors.Is(err, webhook.ErrSpecialAddress) {
			t.Errorf("CheckTarget(%s) = %v, want a refusal", u, err)
		}
		if err := webhook.CheckTarget(ctx, u, true, nil); err != nil {
			t.Errorf("CheckTarget(%s, allowPrivate) = %v", u, err)
		}
	}
	if err := webhook.CheckTarget(ctx, "http://localhost/", false, nil); err == nil || !strings.Contains(err.Error(), "localhost resolves to a private address") ||
		strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("the error should name the name but not its address: %v", err)
	}
	for _, u := range []string{"ftp://example.com/", "/relative", "http://", "mailto:a@example.com"} {
		if err := webhook.CheckTarget(ctx, u, true, nil); err == nil {
			t.Errorf("CheckTarget(%s) accepted", u)
		}
	}
	// Public literals pass without a lookup.
	for _, u := range []string{"https://93.184.215.14/hook", "https://[2606:4700:4700::1111]/"} {
		if err := webhook.CheckTarget(ctx, u, false, nil); err != nil {
			t.Errorf("CheckTarget(%s) = %v", u, err)
		}
	}
	// A name that does not resolve is refused (.invalid never resolves).
	if err := webhook.CheckTarget(ctx, "https://nothing.invalid/", false, nil); err == nil {
		t.Error("an unresolvable name was accepted")
	}
}

// TestNewClient_RefusesAtConnection sends to special addresses with the
// guarded client: the dialer refuses each before connecting, also a name
// that resolves to loopback; the client that allows private targets
// reaches a loopback receiver by address and by name.
func TestNewClient_RefusesAtConnection(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	guarded := webhook.NewClient(false)
	targets := []string{srv.URL, "http://localhost:" + port + "/", "http://[::ffff:127.0.0.1]:" + port + "/"}
	for _, u := range append(targets, "http://[::1]:"+port+"/", "http://10.0.0.1/", "http://169.254.169.254/", "http://100.64.0.1/") {
		resp, err := guarded.Post(u, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			t.Errorf("POST %s: status %d, want a refusal", u, resp.StatusCode)
			continue
		}
		if !errors.Is(err, webhook.ErrSpecialAddress) {
			t.Errorf("POST %s: %v, want ErrSpecialAddress", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the receiver was reached %d times", n)
	}

	open := webhook.NewClient(true)
	for _, u := range targets {
		resp, err := open.Post(u, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("allowPrivate: POST %s: %v", u, err)
		}
		resp.Body.Close()
	}
	if n := hits.Load(); n != int32(len(targets)) {
		t.Fatalf("allowPrivate: %d hits, want %d", n, len(targets))
	}
	// [::1] where the machine has IPv6 loopback.
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		srv6 := httptest.NewUnstartedServer(srv.Config.Handler)
		srv6.Listener.Close()
		srv6.Listener = ln
		srv6.Start()
		defer srv6.Close()
		resp, err := open.Post(srv6.URL, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("allowPrivate: POST %s: %v", srv6.URL, err)
		}
		resp.Body.Close()
	}
	// No proxy, whatever the environment says.
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	if tr := webhook.NewClient(false).Transport.(*http.Transport); tr.Proxy != nil {
		if u, _ := tr.Proxy(&http.Request{URL: &url.URL{Scheme: "http", Host: "example.com"}}); u != nil {
			t.Fatalf("proxy %v used", u)
		}
	}
}
