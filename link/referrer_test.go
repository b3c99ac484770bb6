package link_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

func TestReferrerHost(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	host253 := strings.Join([]string{label63, label63, label63, strings.Repeat("b", 61)}, ".") // 253 bytes
	const bad = link.ReferrerInvalid
	for _, tt := range []struct{ ref, want string }{
		// No referrer.
		{"", ""},
		{"about:blank", ""},
		{"null", ""},
		{"/relative/path", ""},
		{"example.com/no-scheme", ""},
		{"file:///etc/passwd", ""},
		{"https:///path", ""},
		{strings.Repeat("x", 60<<10), ""},
		// Hostnames, lower-cased, without port, user or path.
		{"https://news.ycombinator.com/item?id=1", "news.ycombinator.com"},
		{"https://WWW.Example.COM/Path", "www.example.com"},
		{"http://user:pass@example.com:8080/x", "example.com"},
		{"https://example.com.", "example.com"},
		{"https://example.com:/", "example.com"},
		{"android-app://com.google.android.gm/", "com.google.android.gm"},
		{"https://xn--bcher-kva.example/", "xn--bcher-kva.example"},
		{"http://localhost:3000/", "localhost"},
		{"https://a-b.c-d.example/", "a-b.c-d.example"},
		{"https://" + host253 + "/", host253},
		{"https://example.com/" + strings.Repeat("p", 60<<10), "example.com"},
		{"https://example.com\\evil.test/", "example.com"},
		// IP literals are real hosts, kept in canonical form.
		{"http://192.0.2.1/", "192.0.2.1"},
		{"http://192.0.2.1:8080/", "192.0.2.1"},
		{"http://[2001:DB8::1]:8080/", "2001:db8::1"},
		{"http://[2001:db8:0:0:0:0:0:1]/", "2001:db8::1"},
		{"http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"},
		// Anything else is one fixed bucket.
		{"https://" + host253 + "c/", bad},
		{"https://" + strings.Repeat("a", 64) + ".example/", bad},
		{"https://" + strings.Repeat("a", 60<<10) + "/", bad},
		{"https://bücher.example/", bad},
		{"https://ex%41mple.com/", bad},
		{"https://exa_mple.com/", bad},
		{"https://-example.com/", bad},
		{"https://example-.com/", bad},
		{"https://a..b/", bad},
		{"https://.example.com/", bad},
		{"https://example.com../", bad},
		{"https://example.com:80a/", bad},
		{"https://exa mple.com/", bad},
		{"https://example.com\x00/", bad},
		{"https://127.1/", bad},
		{"https://127.000.000.001/", bad},
		{"https://1.2.3.4.5/", bad},
		{"https://[fe80::1%25eth0]/", bad},
		{"https://[192.0.2.1]/", bad},
		{"https://[::1/", bad},
		{"https://[::1]x/", bad},
		{"ht tp://example.com/", bad},
		{"1http://example.com/", bad},
		{"https://(invalid)/", bad},
	} {
		if got := link.ReferrerHost(tt.ref); got != tt.want {
			t.Errorf("ReferrerHost(%.80q) = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

func TestCanonicalReferrer(t *testing.T) {
	for _, tt := range []struct{ host, want string }{
		{"", ""},
		{"direct", ""},
		{"example.com", "example.com"},
		{"Example.COM.", "example.com"},
		{"2001:db8::1", "2001:db8::1"},
		{"[2001:DB8::1]", "2001:db8::1"},
		{"192.0.2.1", "192.0.2.1"},
		{link.ReferrerInvalid, link.ReferrerInvalid},
		{"example.com:80", link.ReferrerInvalid},
		{"a/b", link.ReferrerInvalid},
	} {
		if got := link.CanonicalReferrer(tt.host); got != tt.want {
			t.Errorf("CanonicalReferrer(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
}

// FuzzReferrerHost checks that whatever a client sends, the referrer is
// "", ReferrerInvalid or a canonical host that fits the rules.
func FuzzReferrerHost(f *testing.F) {
	for _, s := range []string{
		"", "https://example.com/", "http://[::1]:80/", "https://EXAMPLE.com./x",
		"http://u@h:1", "x://a..b", "https://127.1/", "https://xn--a.b/", "https://[fe80::1%25x]/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		got := link.ReferrerHost(ref)
		if got == "" || got == link.ReferrerInvalid {
			return
		}
		if again := link.CanonicalReferrer(got); again != got {
			t.Fatalf("%q: referrer %q is not canonical (%q)", ref, got, again)
		}
		if a, err := netip.ParseAddr(got); err == nil {
			if a.String() != got {
				t.Fatalf("%q: address %q not in canonical form", ref, got)
			}
			return
		}
		if len(got) > link.MaxHostnameLength {
			t.Fatalf("%q: host %q longer than 253 bytes", ref, got)
		}
		for _, l := range strings.Split(got, ".") {
			if l == "" || len(l) > link.MaxLabelLength || l[0] == '-' || l[len(l)-1] == '-' {
				t.Fatalf("%q: host %q has a bad label %q", ref, got, l)
			}
			if strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
				t.Fatalf("%q: host %q has a label %q of other than a-z, 0-9, '-'", ref, got, l)
			}
		}
	})
}
