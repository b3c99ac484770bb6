package dnscheck_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/dnscheck"
	"github.com/linkbolt/linkbolt/link"
)

// TestVerifyDomain_ResolverDown checks that a verification whose DNS
// server does not answer is EINVALID, names the record it looked for, and
// shows nothing of the resolver. (The server's tests run every answer of a
// DNS server of their own through the API.)
func TestVerifyDomain_ResolverDown(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := pc.LocalAddr().String()
	pc.Close() // nothing answers there
	d := &link.Domain{Hostname: "go.example.com", VerificationToken: "tok"}
	err = dnscheck.NewDomains(down).VerifyDomain(context.Background(), d)
	if link.ErrorCode(err) != link.EINVALID {
		t.Fatalf("VerifyDomain = %v, want EINVALID", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, d.VerificationName()) || !strings.Contains(msg, "no answer from the DNS server") {
		t.Errorf("error %q", msg)
	}
	for _, leak := range []string{down, "127.0.0.1", "udp"} {
		if strings.Contains(msg, leak) {
			t.Errorf("the error reveals %q: %s", leak, msg)
		}
	}
}

func TestNewResolver(t *testing.T) {
	if dnscheck.NewResolver("") != net.DefaultResolver {
		t.Error("an empty address is not the system's resolver")
	}
	if r := dnscheck.NewResolver("192.0.2.53"); r == net.DefaultResolver || !r.PreferGo {
		t.Error("a resolver address does not make Go's own resolver")
	}
}
