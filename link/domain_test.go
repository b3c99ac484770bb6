package link_test

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/idna"

	"github.com/linkbolt/linkbolt/link"
)

func TestNormalizeHostname(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, tt := range []struct {
		in, want, problem string // problem: a substring of the message
	}{
		{"go.example.com", "go.example.com", ""},
		{"  Go.Example.COM ", "go.example.com", ""},
		{"go.example.com.", "go.example.com", ""},
		{"bücher.example", "xn--bcher-kva.example", ""},
		{"BÜCHER.Example", "xn--bcher-kva.example", ""},
		{"xn--bcher-kva.example", "xn--bcher-kva.example", ""},
		{"münchen.de", "xn--mnchen-3ya.de", ""},
		{"a-b.c-d.example", "a-b.c-d.example", ""},
		{long + ".example", long + ".example", ""},
		{strings.Repeat(long+".", 3) + strings.Repeat("a", 61), strings.Repeat(long+".", 3) + strings.Repeat("a", 61), ""},

		{"", "", "required"},
		{"   ", "", "required"},
		{"go.example.com:8080", "", "port"},
		{"go.example.com:", "", "port"},
		{"https://go.example.com", "", "scheme"},
		{"http://go.example.com/", "", "scheme"},
		{"go.example.com/path", "", "path"},
		{"go.example.com?x=1", "", "path"},
		{"go example.com", "", "spaces"},
		{"go.example.com\t", "go.example.com", ""}, // trimmed
		{"go\x00.example.com", "", "control"},
		{"go_links.example.com", "", "letters, digits"},
		{"user@go.example.com", "", "user@"},
		{"localhost", "", "two labels"},
		{"com", "", "two labels"},
		{"-go.example.com", "", "'-'"},
		{"go-.example.com", "", "'-'"},
		{"go..example.com", "", "empty labels"},
		{".go.example.com", "", "empty labels"},
		{long + "a.example", "", "63"},
		{strings.Repeat(long+".", 4), "", "253"},
		{"192.168.1.10", "", "IP address"},
		{"[::1]", "", "IP address"},
		{"::1", "", "IP address"},
		{"go.example.123", "", "not a number"},
		{"xn--a.example", "", "internationalised"},
		{"bad☃_.example", "", "internationalised"},
		{"\xff.example", "", "UTF-8"},
	} {
		got, problem := link.NormalizeHostname(tt.in, idna.Lookup.ToASCII)
		if got != tt.want || (tt.problem == "") != (problem == "") || !strings.Contains(problem, tt.problem) {
			t.Errorf("NormalizeHostname(%q) = %q, %q; want %q, a problem with %q", tt.in, got, problem, tt.want, tt.problem)
		}
	}
	// Without an IDNA conversion, names that are not ASCII are refused.
	if _, problem := link.NormalizeHostname("bücher.example", nil); problem == "" {
		t.Error("bücher.example accepted without IDNA")
	}
	if got, problem := link.NormalizeHostname("GO.example.com", nil); got != "go.example.com" || problem != "" {
		t.Errorf("ASCII without IDNA: %q, %q", got, problem)
	}
}

func TestDomainValidate(t *testing.T) {
	own := &link.URLRules{}
	own.AddBaseURL("http", "lb.test", "8080")
	own.AddBaseURL("http", "s.test", "")
	for _, tt := range []struct {
		name   string
		d      link.Domain
		fields []string
	}{
		{"valid", link.Domain{Hostname: "go.example.com"}, nil},
		{"valid with redirects", link.Domain{Hostname: "go.example.com", RootRedirectURL: "https://example.com/",
			NotFoundURL: "https://example.com/404?from=go"}, nil},
		{"primary host, port aside", link.Domain{Hostname: "lb.test"}, []string{"hostname"}},
		{"alternate host", link.Domain{Hostname: "s.test"}, []string{"hostname"}},
		{"not normalised", link.Domain{Hostname: "Go.example.com"}, []string{"hostname"}},
		{"root not http", link.Domain{Hostname: "go.example.com", RootRedirectURL: "ftp://example.com/"}, []string{"root_redirect_url"}},
		{"root relative", link.Domain{Hostname: "go.example.com", RootRedirectURL: "/home"}, []string{"root_redirect_url"}},
		{"root to itself loops", link.Domain{Hostname: "go.example.com", RootRedirectURL: "https://go.example.com/"}, []string{"root_redirect_url"}},
		{"not found to itself loops", link.Domain{Hostname: "go.example.com", NotFoundURL: "https://GO.example.com/x"}, []string{"not_found_url"}},
		{"not found to a short URL", link.Domain{Hostname: "go.example.com", NotFoundURL: "http://lb.test:8080/x"}, []string{"not_found_url"}},
		{"not found to loopback", link.Domain{Hostname: "go.example.com", NotFoundURL: "http://127.1:8080/x"}, []string{"not_found_url"}},
		{"root to another custom domain", link.Domain{Hostname: "go.example.com", RootRedirectURL: "https://other.example.com/"}, nil},
		{"all wrong", link.Domain{Hostname: "s.test", RootRedirectURL: "x", NotFoundURL: "y"}, []string{"hostname", "root_redirect_url", "not_found_url"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.d.Validate(own)
			if got := fieldNames(err); strings.Join(got, ",") != strings.Join(tt.fields, ",") {
				t.Fatalf("fields %v, want %v (%v)", got, tt.fields, err)
			}
			if err != nil && link.ErrorCode(err) != link.EINVALID {
				t.Fatalf("code %q", link.ErrorCode(err))
			}
		})
	}
	// The domain's own name counts for its redirects only: own is not
	// modified.
	d := link.Domain{Hostname: "go.example.com", RootRedirectURL: "https://example.com/"}
	_ = d.Validate(own)
	if msg := link.CheckDestination("https://go.example.com/", own); msg != "" {
		t.Fatalf("Validate changed the caller's rules: %q", msg)
	}
}

func TestDomainVerification(t *testing.T) {
	tok := link.NewVerificationToken()
	if len(tok) != link.VerificationTokenLength || strings.Trim(tok, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		t.Fatalf("token %q", tok)
	}
	if link.NewVerificationToken() == tok {
		t.Fatal("two equal tokens")
	}
	d := link.Domain{Hostname: "go.example.com", VerificationToken: tok}
	if got, want := d.VerificationName(), "_linkbolt.go.example.com"; got != want {
		t.Fatalf("name %q, want %q", got, want)
	}
	if got, want := d.VerificationValue(), "linkbolt-verify="+tok; got != want {
		t.Fatalf("value %q, want %q", got, want)
	}

	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.FixedZone("X", 3600))
	link.DomainUpdate{Verified: ptr(true), RootRedirectURL: ptr(" https://example.com/ ")}.Apply(&d, now)
	if !d.Verified || d.VerifiedAt == nil || !d.VerifiedAt.Equal(now) || d.VerifiedAt.Location() != time.UTC ||
		d.RootRedirectURL != "https://example.com/" {
		t.Fatalf("after verifying: %+v", d)
	}
	// Verified again: the first time stays.
	link.DomainUpdate{Verified: ptr(true)}.Apply(&d, now.Add(time.Hour))
	if !d.VerifiedAt.Equal(now) {
		t.Fatalf("verified_at moved: %v", d.VerifiedAt)
	}
	link.DomainUpdate{Verified: ptr(false), RootRedirectURL: ptr("")}.Apply(&d, now)
	if d.Verified || d.VerifiedAt != nil || d.RootRedirectURL != "" {
		t.Fatalf("after unverifying: %+v", d)
	}
}

func FuzzNormalizeHostname(f *testing.F) {
	for _, s := range []string{"go.example.com", "bücher.example", "a:1", "xn--a.b", "-.-", "1.2.3.4", " A.B. "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		h, problem := link.NormalizeHostname(raw, idna.Lookup.ToASCII)
		if problem != "" {
			if h != "" {
				t.Fatalf("%q: a hostname %q with a problem %q", raw, h, problem)
			}
			return
		}
		if msg := link.CheckHostname(h); msg != "" {
			t.Fatalf("%q normalised to %q, which %s", raw, h, msg)
		}
		if again, p := link.NormalizeHostname(h, idna.Lookup.ToASCII); again != h || p != "" {
			t.Fatalf("%q: normalising %q again gives %q, %q", raw, h, again, p)
		}
	})
}
