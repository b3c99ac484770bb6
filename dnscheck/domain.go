// Package dnscheck asks DNS what linkbolt needs to know of names it does
// not own: whether a custom domain carries its verification record. It
// owns the resolver of those lookups (domains.resolver) and the words that
// tell a client what the lookup found, which name no resolver address.
package dnscheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// VerifyTimeout bounds the DNS lookup of a domain verification.
const VerifyTimeout = 5 * time.Second

// NewResolver returns the system's resolver when addr is empty, else one
// that asks the DNS server at addr (host:port, port 53 when left out) with
// Go's own resolver.
func NewResolver(addr string) *net.Resolver {
	if addr == "" {
		return net.DefaultResolver
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "53")
	}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
}

// Domains verifies custom domains by their TXT record.
type Domains struct {
	resolver *net.Resolver
}

var _ link.DomainVerifier = (*Domains)(nil)

// NewDomains returns the verifier of custom domains that asks the DNS
// server at addr (domains.resolver; see NewResolver).
func NewDomains(addr string) *Domains { return &Domains{resolver: NewResolver(addr)} }

// VerifyDomain looks up the TXT records of the domain's verification
// name. It returns nil when one of them is the expected value, else an
// EINVALID error that says what the lookup found.
func (v *Domains) VerifyDomain(ctx context.Context, d *link.Domain) error {
	ctx, cancel := context.WithTimeout(ctx, VerifyTimeout)
	defer cancel()
	name, want := d.VerificationName(), d.VerificationValue()
	// The trailing dot makes the name absolute: no search domain is tried.
	values, err := v.resolver.LookupTXT(ctx, name+".")
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		values, err = nil, nil
	case errors.As(err, &dnsErr) && dnsErr.IsTimeout:
		return link.Errorf(link.EINVALID, "the DNS lookup of the TXT record %s timed out after %s; try again later", name, VerifyTimeout)
	case errors.As(err, &dnsErr) && dnsErr.Err == "server misbehaving":
		return link.Errorf(link.EINVALID, "the DNS lookup of the TXT record %s failed (the DNS server answered with an error); try again later", name)
	case err != nil:
		// The resolver's own words name its address (and sockets): they
		// are the instance's business, not the client's.
		return link.Errorf(link.EINVALID, "the DNS lookup of the TXT record %s failed (no answer from the DNS server); try again later", name)
	}
	for _, v := range values {
		if strings.TrimSpace(v) == want {
			return nil
		}
	}
	if len(values) == 0 {
		return link.Errorf(link.EINVALID, "no TXT record found at %s: add one with the value %q and try again (DNS changes may take a while to show)", name, want)
	}
	const shown = 5
	quoted := make([]string, 0, shown)
	for i, v := range values {
		if i == shown {
			quoted = append(quoted, fmt.Sprintf("and %d more", len(values)-shown))
			break
		}
		if len(v) > 100 {
			v = v[:100] + "…"
		}
		quoted = append(quoted, strconv.Quote(v))
	}
	return link.Errorf(link.EINVALID, "the TXT records at %s are %s, none of them %q: set the value and try again",
		name, strings.Join(quoted, ", "), want)
}
