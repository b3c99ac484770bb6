package server

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// newURLRules returns the rules of the URLs linkbolt redirects to for a
// server with these base URLs listening on listen (host:port; empty when
// unknown, as in tests).
func newURLRules(primary, alt *url.URL, listen string) *link.URLRules {
	r := &link.URLRules{ToASCII: wire.DestinationIDNA.ToASCII}
	for _, u := range []*url.URL{primary, alt} {
		host := u.Hostname()
		if strings.HasPrefix(u.Host, "[") {
			host = "[" + host + "]"
		}
		r.AddBaseURL(u.Scheme, host, u.Port())
	}
	if listen == "" {
		return r
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return r
	}
	if p, err := strconv.Atoi(port); err == nil && p > 0 {
		r.AddPort(p)
	}
	// The machine's host name reaches it through /etc/hosts, no DNS asked.
	if name, err := os.Hostname(); err == nil {
		r.AddMachineName(name)
		if short, _, ok := strings.Cut(name, "."); ok {
			r.AddMachineName(short)
		}
	}
	a, err := netip.ParseAddr(host)
	switch {
	case err == nil && !a.IsUnspecified():
		r.AddAddr(a)
	case host == "" || err == nil:
		// Every interface: each address of the machine reaches the service.
		addrs, _ := net.InterfaceAddrs()
		for _, ia := range addrs {
			if n, ok := ia.(*net.IPNet); ok {
				if a, ok := netip.AddrFromSlice(n.IP); ok {
					r.AddAddr(a)
				}
			}
		}
	}
	return r
}

// servedURLRules returns the rules of redirects as they are served: the
// custom domains that count are the verified ones, which route requests,
// looked up in memory.
func (s *Server) servedURLRules() *link.URLRules {
	r := *s.rules
	if s.domains != nil {
		r.IsDomain = func(h string) bool {
			_, err := s.domains.FindVerifiedDomain(context.Background(), h)
			return err == nil
		}
	}
	return &r
}

// loops reports whether a URL stored before (a destination, a domain's
// redirect) points back into this service now: at a custom domain
// verified since it was saved, or, for data saved by an older linkbolt,
// at another spelling of this service. It is on the path of every
// redirect: no allocation for a stored URL, which is ASCII, and map
// lookups only.
func (s *Server) loops(raw string) bool {
	i := strings.Index(raw, "://")
	if i < 0 {
		return false
	}
	scheme, rest := raw[:i], raw[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	host, port := rest, ""
	if j := strings.LastIndexByte(rest, ':'); j >= 0 && strings.IndexByte(rest[j:], ']') < 0 {
		host, port = rest[:j], rest[j+1:]
	}
	var toASCII func(string) (string, error)
	for k := 0; k < len(host); k++ {
		if host[k] >= 0x80 || host[k] == '%' {
			toASCII = wire.DestinationIDNA.ToASCII // saved by an older linkbolt
			if h, err := url.PathUnescape(host); err == nil {
				host = h
			}
			break
		}
	}
	canonical, _, problem := link.CanonicalHost(host, toASCII)
	if problem != "" {
		return false
	}
	return s.servedRules.PointsHere(canonical, link.EffectivePort(scheme, port))
}
