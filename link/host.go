package link

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// URLRules is what checking a URL that linkbolt redirects to needs (a
// link's destination, a domain's root and not-found URLs): the IDNA
// conversion of host names, and this service's own hosts, which such a URL
// must not point back into (a redirect loop that every follower, curl -L
// included, would count as clicks).
//
// Hosts are compared in their canonical form (see CanonicalHost), so every
// spelling of a host is the same host: case, a trailing dot, IDNA, the
// IPv4 forms browsers and curl accept (127.1, 2130706433, 0x7f000001,
// 127.000.000.001), IPv4-mapped IPv6, and the default port of the scheme.
// Which port reaches the service depends on the host:
//   - a name of a base URL: its port, and 80 and 443, where a reverse
//     proxy in front of linkbolt may answer; another port is another
//     service;
//   - a custom domain of the instance: every port;
//   - loopback (127.0.0.0/8, ::1, localhost and *.localhost, and the
//     machine's own names added with AddMachineName), the
//     unspecified address (0.0.0.0, ::) and the addresses added with
//     AddAddr (the machine's, an IP base URL's): the ports added with
//     AddPort (the listen port and the base URLs' ports); another port is
//     another service on the same machine.
type URLRules struct {
	// ToASCII is the IDNA conversion of a host name to A-labels (the
	// server passes UTS #46 as browsers apply it); nil takes ASCII names
	// only.
	ToASCII func(string) (string, error)
	// IsDomain reports whether a canonical name is a custom domain of the
	// instance, verified or not; nil means none.
	IsDomain func(name string) bool

	names map[string][]int // canonical name → ports that reach the service
	local map[string]bool  // names of this machine, like localhost
	addrs map[netip.Addr]bool
	ports map[int]bool
}

// AddBaseURL adds the host and port of a base URL of the service
// (scheme://host[:port]).
func (r *URLRules) AddBaseURL(scheme, host, port string) {
	p := EffectivePort(scheme, port)
	h, _, problem := CanonicalHost(host, r.ToASCII)
	if problem != "" {
		return
	}
	r.AddPort(p)
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		r.AddAddr(a)
		return
	}
	if isLocalhost(h) {
		return
	}
	if r.names == nil {
		r.names = map[string][]int{}
	}
	for _, q := range []int{p, 80, 443} {
		if !slices.Contains(r.names[h], q) {
			r.names[h] = append(r.names[h], q)
		}
	}
}

// AddMachineName adds a name of this machine (its host name), which
// reaches the service on the ports of AddPort as localhost does: the
// machine resolves it to itself from /etc/hosts, without DNS.
func (r *URLRules) AddMachineName(name string) {
	h, _, problem := CanonicalHost(name, r.ToASCII)
	if problem != "" || h == "" {
		return
	}
	if r.local == nil {
		r.local = map[string]bool{}
	}
	r.local[h] = true
}

// AddAddr adds an address of this machine that reaches the service on the
// ports of AddPort.
func (r *URLRules) AddAddr(a netip.Addr) {
	if r.addrs == nil {
		r.addrs = map[netip.Addr]bool{}
	}
	r.addrs[a.Unmap().WithZone("")] = true
}

// AddPort adds a port on which the service listens on this machine's
// addresses.
func (r *URLRules) AddPort(p int) {
	if r.ports == nil {
		r.ports = map[int]bool{}
	}
	r.ports[p] = true
}

// WithDomain returns a copy of r for which name is a custom domain too
// (the domain being saved, or the link's own domain).
func (r *URLRules) WithDomain(name string) *URLRules {
	if name == "" {
		return r
	}
	c := *r
	prev := r.IsDomain
	c.IsDomain = func(h string) bool { return h == name || prev != nil && prev(h) }
	return &c
}

// IsOwnName reports whether a canonical name is the host of a base URL.
func (r *URLRules) IsOwnName(name string) bool {
	_, ok := r.names[name]
	return ok || isLocalhost(name)
}

// PointsHere reports whether the canonical host (as CanonicalHost returns
// it) on port reaches this service.
func (r *URLRules) PointsHere(host string, port int) bool {
	if r == nil || host == "" {
		return false
	}
	// A canonical host is an address when it is bracketed or ends in a
	// digit (names end in a letter); parsing only then keeps a name's
	// check free of allocations.
	if c := host[len(host)-1]; c == ']' || c >= '0' && c <= '9' {
		if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
			a = a.Unmap().WithZone("")
			return (a.IsLoopback() || a.IsUnspecified() || r.addrs[a]) && r.ports[port]
		}
	}
	if isLocalhost(host) || r.local[host] {
		return r.ports[port]
	}
	if ports, ok := r.names[host]; ok && slices.Contains(ports, port) {
		return true
	}
	return r.IsDomain != nil && r.IsDomain(host)
}

// isLocalhost reports whether a canonical name is loopback by definition
// (RFC 6761): browsers and curl resolve it so without asking DNS.
func isLocalhost(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}

// EffectivePort returns the port a URL of scheme with the given port
// (possibly empty) connects to; -1 for a port that is not one.
func EffectivePort(scheme, port string) int {
	if port != "" {
		if n, ok := atoiPort(port); ok {
			return n
		}
		return -1
	}
	if strings.EqualFold(scheme, "https") {
		return 443
	}
	return 80
}

// CanonicalHost returns the canonical form of the host of a URL (without
// port), as browsers (the WHATWG URL standard) read it: a name converted
// by toASCII (IDNA; nil takes ASCII names only) and lower case, without a
// trailing dot; an IPv4 address in any form browsers and curl accept
// (decimal, octal, hex, fewer than four parts) in dotted decimal; an IPv6
// address in brackets in its canonical form. numeric reports an IPv4
// address written otherwise than in dotted decimal. problem says what is
// wrong, or is "".
func CanonicalHost(host string, toASCII func(string) (string, error)) (canonical string, numeric bool, problem string) {
	if strings.HasPrefix(host, "[") {
		a, err := netip.ParseAddr(strings.TrimSuffix(host[1:], "]"))
		if err != nil || !strings.HasSuffix(host, "]") || !a.Is6() || a.Zone() != "" {
			return "", false, "has an invalid IPv6 address as host"
		}
		return "[" + a.String() + "]", false, ""
	}
	h := strings.TrimSuffix(host, ".")
	if h == "" {
		return "", false, "must have a host"
	}
	ascii := true
	for i := 0; i < len(h); i++ {
		if h[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if toASCII != nil {
		a, err := toASCII(h)
		if err != nil {
			return "", false, "has a host that is not a valid internationalised domain name (" + strings.TrimPrefix(err.Error(), "idna: ") + ")"
		}
		h = a
	} else if !ascii {
		return "", false, "must have an ASCII host"
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "" || strings.Contains(h, "..") || strings.HasPrefix(h, ".") {
		return "", false, "must not have empty labels in its host"
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "", false, "may have only letters, digits, '-', '_' and dots in its host"
		}
	}
	if !endsInNumber(h) {
		return h, false, ""
	}
	a, ok := parseIPv4(h)
	if !ok {
		return "", false, "has an invalid IPv4 address as host"
	}
	s := a.String()
	return s, s != host, ""
}

// endsInNumber reports whether the last label of a name is a number
// (decimal, or hex with 0x), which makes the whole host an IPv4 address
// for browsers.
func endsInNumber(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		return strings.Trim(last[2:], "0123456789abcdefABCDEF") == ""
	}
	return false
}

// parseIPv4 parses an IPv4 address as the WHATWG URL standard does: one to
// four parts, each decimal, octal (a leading 0) or hex (0x), the last one
// filling the bytes the others leave.
func parseIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		switch {
		case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
			if p == "" {
				p = "0"
			}
		case len(p) >= 2 && p[0] == '0':
			base, p = 8, p[1:]
		case p == "":
			return netip.Addr{}, false
		}
		n, err := strconv.ParseUint(p, base, 64)
		if err != nil || n > 1<<32-1 {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
