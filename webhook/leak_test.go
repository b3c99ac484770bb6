package webhook_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/webhook"
)

// zone is a real DNS server on loopback answering A questions from a
// table; names it does not know are NXDOMAIN, names in fail SERVFAIL.
type zone struct {
	mu   sync.Mutex
	a    map[string]netip.Addr // lower-case FQDN → address
	fail map[string]bool
}

// startZone starts a zone on 127.0.0.1 and returns it with a resolver that
// asks it, and the server's address.
func startZone(t *testing.T) (*zone, *net.Resolver, string) {
	t.Helper()
	z := &zone{a: map[string]netip.Addr{}, fail: map[string]bool{}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	started := make(chan struct{})
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(z.serve), NotifyStartedFunc: func() { close(started) }}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return z, resolverAt(addr), addr
}

// resolverAt is Go's resolver asking only the DNS server at addr.
func resolverAt(addr string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

func (z *zone) set(name, addr string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.a[name+"."] = netip.MustParseAddr(addr)
}

func (z *zone) serve(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) == 1 {
		q := req.Question[0]
		z.mu.Lock()
		a, ok := z.a[strings.ToLower(q.Name)]
		fail := z.fail[strings.ToLower(q.Name)]
		z.mu.Unlock()
		switch {
		case fail:
			m.Rcode = dns.RcodeServerFailure
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA && a.Is4():
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: a.AsSlice()})
		}
	}
	_ = w.WriteMsg(m)
}

// noLeak fails when msg names an address it must not: what a name
// resolves to, or the resolver.
func noLeak(t *testing.T, what, msg string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(msg, s) {
			t.Errorf("%s %q reveals %q", what, msg, s)
		}
	}
	if strings.Contains(msg, " on ") || strings.Contains(msg, ":53") {
		t.Errorf("%s %q reveals the resolver", what, msg)
	}
}

// TestCheckTarget_NoLeaks is the attack of issue 9: webhook save errors
// showed the resolver's address and what a private name resolves to.
func TestCheckTarget_NoLeaks(t *testing.T) {
	z, r, dnsAddr := startZone(t)
	z.set("internal.example", "10.1.2.3")
	z.set("loop.example", "127.0.0.1")
	z.set("public.example", "93.184.215.14")
	z.mu.Lock()
	z.fail["broken.example."] = true
	z.mu.Unlock()
	ctx := context.Background()
	secrets := []string{"10.1.2.3", "127.0.0.1", dnsAddr}

	for _, host := range []string{"internal.example", "loop.example"} {
		err := webhook.CheckTarget(ctx, "https://"+host+"/hook", false, r)
		if !errors.Is(err, webhook.ErrSpecialAddress) {
			t.Fatalf("%s: %v, want a refusal", host, err)
		}
		if got, want := err.Error(), "host "+host+" resolves to a private address"; !strings.HasPrefix(got, want) {
			t.Errorf("%s: %q, want it to start %q", host, got, want)
		}
		noLeak(t, "the refusal", err.Error(), secrets...)
	}
	err := webhook.CheckTarget(ctx, "https://nothing.example/hook", false, r)
	if err == nil || !strings.Contains(err.Error(), "host nothing.example does not resolve") {
		t.Errorf("a name that does not resolve: %v", err)
	}
	noLeak(t, "the unresolved error", err.Error(), secrets...)
	err = webhook.CheckTarget(ctx, "https://broken.example/hook", false, r)
	if err == nil || !strings.Contains(err.Error(), "does not resolve") {
		t.Errorf("a failing lookup: %v", err)
	}
	noLeak(t, "the failed lookup", err.Error(), secrets...)
	if err := webhook.CheckTarget(ctx, "https://public.example/hook", false, r); err != nil {
		t.Errorf("a public name: %v", err)
	}

	// A resolver that is down: the error names neither it nor its socket.
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.LocalAddr().String()
	ln.Close()
	err = webhook.CheckTarget(ctx, "https://internal.example/hook", false, resolverAt(down))
	if err == nil {
		t.Fatal("accepted with the resolver down")
	}
	noLeak(t, "the error with the resolver down", err.Error(), "127.0.0.1", down)

	// An IP literal is the client's own words: it may be named.
	if err := webhook.CheckTarget(ctx, "http://10.1.2.3/", false, r); err == nil || !strings.Contains(err.Error(), "10.1.2.3 is a private address") {
		t.Errorf("a private literal: %v", err)
	}
}

// TestDispatcher_LastErrorNoLeaks: the delivery log, which the workspace
// reads, names neither what a target's name resolves to nor the resolver,
// whether the guard refuses the address, the lookup fails or the
// connection is refused.
func TestDispatcher_LastErrorNoLeaks(t *testing.T) {
	z, r, dnsAddr := startZone(t)
	z.set("internal.example", "10.1.2.3")
	z.set("loop.example", "127.0.0.1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close() // nothing listens there: connections are refused
	secrets := []string{"10.1.2.3", "127.0.0.1", dnsAddr}

	for _, tt := range []struct {
		name         string
		url          string
		allowPrivate bool
		want         string
	}{
		{"refused by the guard", "http://internal.example/hook", false, "host internal.example resolves to a private address"},
		{"loopback refused by the guard", "http://loop.example:" + closedPort + "/hook", false, "host loop.example resolves to a private address"},
		{"connection refused", "http://loop.example:" + closedPort + "/hook", true, "cannot connect to host loop.example: connection refused"},
		{"does not resolve", "http://nothing.example/hook", true, "host nothing.example does not resolve"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			w := e.webhook(t, tt.url)
			e.events(t, 1)
			d := e.dispatcher()
			d.Client = webhook.NewClientResolver(tt.allowPrivate, r)
			runOnce(t, d)
			head := e.deliveries(t, w)[0]
			if head.Status != link.DeliveryPending || !strings.HasPrefix(head.LastError, tt.want) {
				t.Fatalf("last error %q (status %s), want it to start %q", head.LastError, head.Status, tt.want)
			}
			noLeak(t, "last_error", head.LastError, secrets...)
		})
	}
}
