package server

import (
	"net/netip"
	"testing"
)

// TestUntrackedVisits: visits from analytics.untracked_ips or with
// analytics.untracked_param redirect as any other but are not counted,
// and take none of a limited link's clicks; other visits are counted.
func TestUntrackedVisits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) {
		c.UntrackedIPs = []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("2001:db8::/32")}
		c.UntrackedParam = "lb_check"
	})
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"quiet","max_clicks":1}`, 201).str("id")
	get := func(path, addr string) int {
		req := newRequest("GET", path, "", "")
		req.RemoteAddr = addr
		req.Header.Set("User-Agent", firefoxUA)
		return e.request(req).status
	}
	for _, v := range []struct{ path, addr string }{
		{"/quiet", "203.0.113.7:1000"}, {"/quiet", "[2001:db8::1]:1000"}, {"/quiet?lb_check", "198.51.100.1:1000"},
		{"/quiet?lb_check=1&x=2", "198.51.100.1:1000"},
	} {
		if got := get(v.path, v.addr); got != 302 {
			t.Fatalf("uncounted %s from %s: %d, want 302", v.path, v.addr, got)
		}
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != 0.0 {
		t.Fatalf("clicks after uncounted visits: %v", got)
	}
	// A counted visit takes the one click; an uncounted check then still
	// sees the link used up.
	if got := get("/quiet", "198.51.100.1:1000"); got != 302 {
		t.Fatalf("counted visit: %d", got)
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != 1.0 {
		t.Fatalf("clicks after a counted visit: %v", got)
	}
	if got := get("/quiet?lb_check", "198.51.100.1:1000"); got != 410 {
		t.Fatalf("an uncounted check of a used-up link: %d, want 410", got)
	}
}
