package link_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

func TestParseIPRange(t *testing.T) {
	for _, c := range []struct {
		in, want string // want "" for refused
	}{
		{"203.0.113.7", "203.0.113.7/32"},
		{" 203.0.113.7 ", "203.0.113.7/32"},
		{"198.51.100.77/24", "198.51.100.0/24"},
		{"0.0.0.0/0", "0.0.0.0/0"},
		{"2001:db8::1", "2001:db8::1/128"},
		{"2001:DB8:0:0::/32", "2001:db8::/32"},
		{"::ffff:192.0.2.1", "192.0.2.1/32"},
		{"::ffff:192.0.2.0/120", "192.0.2.0/24"},
		{"::ffff:0:0/96", "0.0.0.0/0"},
		{"::ffff:0:0/80", "::/80"},
		{"", ""},
		{"office", ""},
		{"192.0.2.1/33", ""},
		{"192.0.2.1/-1", ""},
		{"2001:db8::/129", ""},
		{"fe80::1%eth0", ""},
		{"192.0.2.1/24/8", ""},
		{"192.0.2", ""},
	} {
		p, ok := link.ParseIPRange(c.in)
		if got := map[bool]string{true: p.String(), false: ""}[ok]; got != c.want {
			t.Errorf("ParseIPRange(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

// FuzzParseIPRange checks that what ParseIPRange accepts is a valid,
// masked network that reads back as itself.
func FuzzParseIPRange(f *testing.F) {
	for _, s := range []string{"203.0.113.7", "198.51.100.77/24", "2001:db8::/32", "::ffff:192.0.2.0/120", "fe80::1%eth0", "1.2.3.4/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := link.ParseIPRange(s)
		if !ok {
			return
		}
		if !p.IsValid() || p != p.Masked() || p.Addr().Is4In6() || p.Addr().Zone() != "" {
			t.Fatalf("ParseIPRange(%q) = %v", s, p)
		}
		if again, ok := link.ParseIPRange(p.String()); !ok || again != p {
			t.Fatalf("ParseIPRange(%q) = %v reads back as %v, %v", s, p, again, ok)
		}
	})
}

func TestRuleConditionWindowAndAddress(t *testing.T) {
	after := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	before := after.Add(24 * time.Hour)
	c := link.RuleCondition{After: &after, Before: &before,
		IP: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8::/32")}}
	for _, w := range []struct {
		at   time.Time
		want bool
	}{{after.Add(-time.Nanosecond), false}, {after, true}, {before.Add(-time.Nanosecond), true}, {before, false}} {
		if got := c.InWindow(w.at); got != w.want {
			t.Errorf("InWindow(%v) = %v, want %v", w.at, got, w.want)
		}
	}
	for _, a := range []struct {
		addr string
		want bool
	}{{"198.51.100.1", true}, {"::ffff:198.51.100.1", true}, {"198.51.101.1", false}, {"2001:db8:1::1", true}, {"2001:db9::1", false}} {
		if got := c.ContainsAddr(netip.MustParseAddr(a.addr)); got != a.want {
			t.Errorf("ContainsAddr(%s) = %v, want %v", a.addr, got, a.want)
		}
	}
	if c.ContainsAddr(netip.Addr{}) {
		t.Error("an unknown address is in the ranges")
	}
}
