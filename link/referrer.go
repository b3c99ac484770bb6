package link

import (
	"net/netip"
	"strings"
)

// ReferrerInvalid is the referrer of a click whose Referer header names a
// host that is not a hostname or an IP address: one fixed value, so that
// made-up hosts cannot grow the referrers dimension, and visibly apart
// from direct visits (no '(' can be in a hostname).
const ReferrerInvalid = "(invalid)"

// ReferrerHost returns the referrer of a click from its Referer header:
//   - "" (a direct visit) when the header is empty or names no host
//     (about:blank, a relative or scheme-less reference, file:///…);
//   - the host, as CanonicalReferrer makes it, when it is a hostname or an
//     IP address;
//   - ReferrerInvalid for any other host.
//
// The result never shares memory with ref, so a click keeps a few bytes of
// a header, not the whole header, alive. It allocates at most the host.
func ReferrerHost(ref string) string {
	i := strings.Index(ref, "://")
	if i <= 0 {
		return ""
	}
	if !validScheme(ref[:i]) {
		return ReferrerInvalid
	}
	// The authority ends at the path, query or fragment; a host is at most
	// 253 bytes, so one that runs on past maxAuthority is not looked for
	// to its end (in a 60 KB header).
	auth := ref[i+3:]
	if j := strings.IndexAny(auth[:min(len(auth), maxAuthority+1)], "/?#\\"); j >= 0 {
		auth = auth[:j]
	} else if len(auth) > maxAuthority {
		return ReferrerInvalid
	}
	if j := strings.LastIndexByte(auth, '@'); j >= 0 {
		auth = auth[j+1:]
	}
	host, ok := stripPort(auth)
	if !ok {
		return ReferrerInvalid
	}
	if host == "" {
		return ""
	}
	h, fresh := canonicalReferrer(host)
	if !fresh && h != ReferrerInvalid {
		// A substring of the header: copy it out.
		return strings.Clone(h)
	}
	return h
}

// maxAuthority bounds the authority (user, host, port) of a Referer.
const maxAuthority = 1024

// validScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, '+', '-' or '.').
func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (s[i] >= '0' && s[i] <= '9' || s[i] == '+' || s[i] == '-' || s[i] == '.'):
		default:
			return false
		}
	}
	return true
}

// stripPort returns the host of an authority without userinfo: an IPv6
// literal keeps its brackets; a port, if any, must be digits.
func stripPort(auth string) (host string, ok bool) {
	port := ""
	if strings.HasPrefix(auth, "[") {
		j := strings.IndexByte(auth, ']')
		if j < 0 {
			return "", false
		}
		host, port = auth[:j+1], auth[j+1:]
	} else if j := strings.IndexByte(auth, ':'); j >= 0 {
		host, port = auth[:j], auth[j:]
	} else {
		host = auth
	}
	if port != "" {
		if port[0] != ':' {
			return "", false
		}
		for k := 1; k < len(port); k++ {
			if port[k] < '0' || port[k] > '9' {
				return "", false
			}
		}
	}
	return host, true
}

// CanonicalReferrer returns host as a referrer dimension value:
//   - a hostname (at most 253 bytes once lower-cased and stripped of one
//     trailing dot; labels of 1 to 63 letters, digits and '-', not starting
//     or ending with '-'; internationalised names in their xn-- form, as
//     browsers send them; single-label names such as localhost allowed)
//     in lower case;
//   - an IP address (IPv6 in brackets or not, without a zone) in its
//     canonical form: 192.0.2.1, 2001:db8::1 — an address is a real host;
//   - "" for "" and "direct" (how storage writes a direct visit);
//   - ReferrerInvalid for everything else, including ReferrerInvalid itself
//     and a name whose last label is a number (127.1), which no DNS name is.
//
// It returns host itself, without allocating, when host is already
// canonical.
func CanonicalReferrer(host string) string {
	h, _ := canonicalReferrer(host)
	return h
}

// canonicalReferrer is CanonicalReferrer; fresh reports that the result
// was allocated rather than cut from host.
func canonicalReferrer(host string) (_ string, fresh bool) {
	if host == "" || host == "direct" {
		return "", true
	}
	if host[0] == '[' {
		if host[len(host)-1] != ']' {
			return ReferrerInvalid, true
		}
		return canonicalIP(host[1 : len(host)-1])
	}
	if strings.IndexByte(host, ':') >= 0 {
		return canonicalIP(host)
	}
	h := strings.TrimSuffix(host, ".")
	if h == "" || len(h) > MaxHostnameLength {
		return ReferrerInvalid, true
	}
	upper, lastNumeric := false, false
	label := 0 // length of the current label
	allDigits := true
	for i := 0; i <= len(h); i++ {
		if i == len(h) || h[i] == '.' {
			if label == 0 || label > MaxLabelLength || h[i-1] == '-' || h[i-label] == '-' {
				return ReferrerInvalid, true
			}
			lastNumeric = allDigits
			label, allDigits = 0, true
			continue
		}
		switch c := h[i]; {
		case c >= 'a' && c <= 'z', c == '-':
			allDigits = false
		case c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z':
			upper, allDigits = true, false
		default:
			return ReferrerInvalid, true
		}
		label++
	}
	if lastNumeric {
		// Only a dotted-quad IPv4 address may end in a number.
		if a, err := netip.ParseAddr(h); err != nil || !a.Is4() {
			return ReferrerInvalid, true
		}
		return h, false
	}
	if upper {
		return strings.ToLower(h), true
	}
	return h, false
}

// canonicalIP returns the canonical form of an IPv6 address without a
// zone, or ReferrerInvalid.
func canonicalIP(s string) (_ string, fresh bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" || !a.Is6() {
		return ReferrerInvalid, true
	}
	return a.String(), true
}
