package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// Timeouts of a delivery.
const (
	// ConnectTimeout bounds the TCP connection and the TLS handshake.
	ConnectTimeout = 5 * time.Second
	// RequestTimeout bounds a whole request: connection, sending, the
	// answer's headers and the part of its body that is read.
	RequestTimeout = 10 * time.Second
)

// ErrSpecialAddress matches (with errors.Is) the errors of CheckTarget and
// of connections refused because the target address is loopback, private,
// link-local or otherwise special.
var ErrSpecialAddress = errors.New("special address")

// specialError names a refused address and its range; it matches
// ErrSpecialAddress.
type specialError struct {
	host string // the name that resolved to addr, if any
	addr netip.Addr
	kind string
}

// Error names the address only when the client wrote it (an IP literal):
// what a name resolves to is the instance's network, not the client's
// business, so a name's error says "a private address" and no more.
func (e *specialError) Error() string {
	const refused = "refused unless webhooks.allow_private is set"
	if e.host != "" {
		return fmt.Sprintf("host %s resolves to a private address: %s", e.host, refused)
	}
	return fmt.Sprintf("%s is a %s address: %s", e.addr, e.kind, refused)
}

func (e *specialError) Is(target error) bool { return target == ErrSpecialAddress }

// specialRanges are the ranges no webhook may reach unless private targets
// are allowed: every range of the IANA special-purpose registries that is
// not globally reachable, and a few that are but only by way of an IPv4
// address checked apart (IPv4-mapped, NAT64, 6to4 are unwrapped first).
var specialRanges = func() []struct {
	p    netip.Prefix
	kind string
} {
	var out []struct {
		p    netip.Prefix
		kind string
	}
	for _, r := range [][2]string{
		{"0.0.0.0/8", "\"this network\""},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "shared (carrier-grade NAT)"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "IETF protocol assignment"},
		{"192.0.2.0/24", "documentation"},
		{"192.88.99.0/24", "6to4 relay"},
		{"192.168.0.0/16", "private"},
		{"198.18.0.0/15", "benchmarking"},
		{"198.51.100.0/24", "documentation"},
		{"203.0.113.0/24", "documentation"},
		{"224.0.0.0/4", "multicast"},
		{"240.0.0.0/4", "reserved"}, // and the broadcast address
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"::/96", "IPv4-compatible (deprecated)"},
		{"::ffff:0:0:0/96", "IPv4-translated"},
		{"64:ff9b:1::/48", "local NAT64"},
		{"100::/64", "discard-only"},
		{"2001::/23", "IETF protocol assignment (Teredo and others)"},
		{"2001:db8::/32", "documentation"},
		{"3fff::/20", "documentation"},
		{"5f00::/16", "segment routing"},
		{"fc00::/7", "unique local (private)"},
		{"fe80::/10", "link-local"},
		{"fec0::/10", "site-local (deprecated)"},
		{"ff00::/8", "multicast"},
	} {
		out = append(out, struct {
			p    netip.Prefix
			kind string
		}{netip.MustParsePrefix(r[0]), r[1]})
	}
	return out
}()

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// CheckAddr returns an error matching ErrSpecialAddress when ip is in a
// special range: loopback, private (RFC 1918, fc00::/7), link-local (so
// 169.254.169.254, the cloud metadata address), unspecified, multicast,
// carrier-grade NAT, documentation, reserved, and so on. An IPv4 address
// wrapped in IPv6 (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16) is
// judged by the IPv4 address.
func CheckAddr(ip netip.Addr) error {
	ip = ip.WithZone("")
	orig := ip
	switch {
	case ip.Is4In6():
		ip = ip.Unmap()
	case nat64.Contains(ip):
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:16]))
	case sixToFour.Contains(ip):
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[2:6]))
	}
	if !ip.IsValid() {
		return &specialError{addr: orig, kind: "invalid"}
	}
	for _, r := range specialRanges {
		if r.p.Contains(ip) {
			return &specialError{addr: orig, kind: r.kind}
		}
	}
	return nil
}

// control refuses a connection to a special address. It runs after name
// resolution, for each address the dialer tries, so a name that resolves
// (or starts resolving) to a private address is refused too.
func control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused to connect to %q: %w", address, ErrSpecialAddress)
	}
	return CheckAddr(ap.Addr())
}

// NewClient returns the HTTP client of deliveries: connections time out
// after ConnectTimeout and requests after RequestTimeout; redirects are
// not followed (the 3xx answer is the result); no proxy is used, since a
// proxy would connect on linkbolt's behalf where the address check cannot
// see. Unless allowPrivate, the dialer refuses every special address (see
// CheckAddr) at connection time, after DNS resolution.
func NewClient(allowPrivate bool) *http.Client {
	return NewClientResolver(allowPrivate, nil)
}

// NewClientResolver is NewClient with the names of targets resolved by
// resolver (nil means the default).
func NewClientResolver(allowPrivate bool, resolver *net.Resolver) *http.Client {
	dialer := &net.Dialer{Timeout: ConnectTimeout, KeepAlive: 30 * time.Second, Resolver: resolver}
	if !allowPrivate {
		dialer.Control = control
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    ConnectTimeout,
		ResponseHeaderTimeout:  RequestTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   RequestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// TargetGuard checks webhook URLs when webhooks are saved, with
// CheckTarget.
type TargetGuard struct {
	// AllowPrivate lets webhooks target loopback, private and link-local
	// addresses (webhooks.allow_private).
	AllowPrivate bool
	// Resolver resolves the names of targets; nil means the system's.
	Resolver *net.Resolver
}

var _ link.WebhookTargetChecker = TargetGuard{}

// CheckWebhookTarget is CheckTarget with the guard's settings.
func (g TargetGuard) CheckWebhookTarget(ctx context.Context, rawURL string) error {
	return CheckTarget(ctx, rawURL, g.AllowPrivate, g.Resolver)
}

// CheckTarget refuses a webhook URL early, at creation or update: it must
// be an absolute http or https URL and, unless allowPrivate, its host must
// not be a special address (see CheckAddr): an IP literal is checked
// directly, a name is resolved (with resolver; nil means the default) and
// refused if any of its addresses is special, or if it does not resolve.
// The dialer of NewClient checks again at every connection, since what a
// name resolves to can change. Errors read well after "url: ".
func CheckTarget(ctx context.Context, rawURL string, allowPrivate bool, resolver *net.Resolver) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return errors.New("must be an absolute http or https URL")
	}
	if allowPrivate {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		return CheckAddr(ip)
	}
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return lookupError(host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("host %s has no address", host)
	}
	for _, a := range addrs {
		var se *specialError
		if err := CheckAddr(a.Unmap()); errors.As(err, &se) {
			se.host = host
			return se
		}
	}
	return nil
}

// lookupError describes a failed lookup of host without the resolver's
// address or anything else DNSError.Error adds (the instance's network is
// not the client's business).
func lookupError(host string, err error) error {
	var de *net.DNSError
	switch {
	case errors.As(err, &de) && de.IsNotFound:
		return fmt.Errorf("host %s does not resolve", host)
	case errors.As(err, &de) && de.IsTimeout, errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("host %s does not resolve: the DNS lookup timed out", host)
	default:
		return fmt.Errorf("host %s does not resolve: the DNS lookup failed", host)
	}
}

// describeDialError turns an error of connecting to host (the URL's host,
// a name or an IP literal) into words that name no address the client did
// not write: not what a name resolves to, not the resolver.
func describeDialError(host string, err error) (string, bool) {
	_, notIP := netip.ParseAddr(host)
	var se *specialError
	if errors.As(err, &se) {
		if notIP != nil {
			se = &specialError{host: host, addr: se.addr, kind: se.kind}
		}
		return se.Error(), true
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		return lookupError(host, err).Error(), true
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		var errno syscall.Errno
		if errors.As(oe.Err, &errno) {
			return fmt.Sprintf("cannot connect to host %s: %s", host, errno.Error()), true
		}
		return fmt.Sprintf("cannot connect to host %s", host), true
	}
	return "", false
}

// scrubAddrs replaces every IP address (with or without a port) in msg by
// "<address>", except the URL's own host when that is an IP literal. It is
// the last guard of error text from deep in the network stack (TLS and
// protocol errors) that describeDialError does not know.
func scrubAddrs(msg, host string) string {
	own, _ := netip.ParseAddr(host)
	fields := strings.FieldsFunc(msg, func(r rune) bool {
		return r == ' ' || r == ',' || r == ';' || r == '(' || r == ')' || r == '"' || r == '\'' || r == '-' || r == '>'
	})
	for _, f := range fields {
		tok := strings.TrimRight(f, ":.")
		var a netip.Addr
		if ap, err := netip.ParseAddrPort(tok); err == nil {
			a = ap.Addr()
		} else if ip, err := netip.ParseAddr(strings.Trim(tok, "[]")); err == nil {
			a = ip
		} else {
			continue
		}
		if own.IsValid() && a.WithZone("") == own.WithZone("") {
			continue
		}
		msg = strings.ReplaceAll(msg, tok, "<address>")
	}
	return msg
}

// DescribeRequestError words an error of a request to host as the delivery
// log does: without the addresses a name resolves to, nor the resolver's.
// The destination checks of links (linkcheck) use it too.
func DescribeRequestError(err error, host string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if msg, ok := describeDialError(host, err); ok {
		return msg
	}
	return scrubAddrs(err.Error(), host)
}

// IsDialError reports whether err is a failure to resolve the target's
// name or to connect to it (a refused address included).
func IsDialError(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	_, ok := describeDialError("", err)
	return ok
}
