package link_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode"

	"github.com/linkbolt/linkbolt/link"
)

// The messages CheckDestination answers with; the tests compare them
// exactly so that a URL rejected for the wrong reason fails too.
const (
	msgRequired    = "is required"
	msgTooLong     = "must be at most 4096 characters"
	msgUTF8        = "must be valid UTF-8"
	msgSpace       = "must not contain spaces or control characters"
	msgInvalidURL  = "is not a valid URL"
	msgScheme      = "must be an absolute http or https URL"
	msgHost        = "must be an absolute http or https URL with a host"
	msgCredentials = "must not contain credentials (user@host)"
	msgPort        = "has an invalid port"
	msgOwn         = "must not point to a short URL of this service"
)

// ownHosts is the service as the server describes it: its base URLs and a
// custom domain.
var ownHosts = testRules()

func testRules() *link.URLRules {
	r := &link.URLRules{IsDomain: func(h string) bool { return h == "go.custom.test" }}
	r.AddBaseURL("https", "sho.rt", "")
	r.AddBaseURL("http", "go.example.com", "8080")
	r.AddBaseURL("http", "[::1]", "9000")
	return r
}

// urlOfLength returns an https URL exactly n bytes long.
func urlOfLength(n int) string {
	const prefix = "https://example.com/"
	return prefix + strings.Repeat("a", n-len(prefix))
}

func TestCheckDestination(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		own  *link.URLRules
		want string
	}{
		{"https", "https://example.com/path?q=1#frag", ownHosts, ""},
		{"http", "http://example.com", ownHosts, ""},
		{"upper case scheme", "HTTPS://Example.COM/x", ownHosts, ""},
		{"explicit port", "https://example.com:8443/x", ownHosts, ""},
		{"highest port", "https://example.com:65535/x", ownHosts, ""},
		{"IPv4 literal", "http://192.0.2.1/x", ownHosts, ""},
		{"IPv6 literal", "http://[2001:db8::1]/x", ownHosts, ""},
		{"IPv6 literal with port", "http://[2001:db8::1]:8080/x", ownHosts, ""},
		{"IDN host without IDNA", "https://bücher.example/x", ownHosts, "must have an ASCII host"},
		{"underscore in host", "https://my_host.example.com/x", ownHosts, ""},
		{"triple hyphen in host", "https://r3---sn-abc.googlevideo.com/x", ownHosts, ""},
		{"IPv4 in decimal", "http://3221225985/x", ownHosts, ""},
		{"non-ASCII path", "https://example.com/straße", ownHosts, ""},
		{"exactly 4096 bytes", urlOfLength(link.MaxDestinationLength), ownHosts, ""},
		{"nil own list", "https://sho.rt/x", nil, ""},

		{"empty", "", ownHosts, msgRequired},
		{"4097 bytes", urlOfLength(link.MaxDestinationLength + 1), ownHosts, msgTooLong},
		{"far too long", urlOfLength(100_000), ownHosts, msgTooLong},
		{"invalid UTF-8", "https://example.com/\xff", ownHosts, msgUTF8},
		{"space in host", "https://exa mple.com/", ownHosts, msgSpace},
		{"space in path", "https://example.com/a b", ownHosts, msgSpace},
		{"leading space", " https://example.com/", ownHosts, msgSpace},
		{"trailing newline", "https://example.com/\n", ownHosts, msgSpace},
		{"tab", "https://example.com/\tx", ownHosts, msgSpace},
		{"NUL", "https://example.com/\x00", ownHosts, msgSpace},
		{"DEL", "https://example.com/\x7f", ownHosts, msgSpace},
		{"C1 control NEL", "https://example.com/\u0085", ownHosts, msgSpace},
		{"no-break space", "https://example.com/\u00a0", ownHosts, msgSpace},
		{"bidi override", "https://example.com/\u202egnp.exe", ownHosts, "must not contain invisible format or bidi control characters (U+202E)"},
		{"zero-width space in host", "https://exa\u200bmple.com/", ownHosts, "must not contain invisible format or bidi control characters (U+200B)"},
		{"five IPv4 parts", "http://1.2.3.4.5/", ownHosts, "has an invalid IPv4 address as host"},
		{"IPv4 part over 255", "http://256.1.1.1/", ownHosts, "has an invalid IPv4 address as host"},
		{"name ending in a number", "http://example.123/", ownHosts, "has an invalid IPv4 address as host"},
		{"bad octal", "http://127.0.0.08/", ownHosts, "has an invalid IPv4 address as host"},
		{"empty label", "http://a..example.com/", ownHosts, "must not have empty labels in its host"},
		{"line separator", "https://example.com/\u2028", ownHosts, msgSpace},
		{"javascript", "javascript:alert(1)", ownHosts, msgScheme},
		{"javascript with slashes", "javascript://example.com/%0aalert(1)", ownHosts, msgScheme},
		{"data", "data:text/html,<script>alert(1)</script>", ownHosts, msgScheme},
		{"ftp", "ftp://example.com/file", ownHosts, msgScheme},
		{"mailto", "mailto:a@example.com", ownHosts, msgScheme},
		{"relative path", "/some/path", ownHosts, msgScheme},
		{"relative host-less", "example.com/path", ownHosts, msgScheme},
		{"protocol-relative", "//example.com/path", ownHosts, msgScheme},
		{"opaque http", "http:example.com", ownHosts, msgHost},
		{"one slash", "http:/example.com", ownHosts, msgHost},
		{"empty authority", "https:///x", ownHosts, msgHost},
		{"port only", "http://:8080/x", ownHosts, msgHost},
		{"bad escape", "https://example.com/%zz", ownHosts, msgInvalidURL},
		{"non-numeric port", "https://example.com:abc/", ownHosts, msgInvalidURL},
		{"user and password", "https://user:pw@example.com/", ownHosts, msgCredentials},
		{"user only", "https://user@example.com/", ownHosts, msgCredentials},
		{"empty user info", "https://:@example.com/", ownHosts, msgCredentials},
		{"port 0", "https://example.com:0/", ownHosts, msgPort},
		{"port 65536", "https://example.com:65536/", ownHosts, msgPort},
		{"port 99999", "https://example.com:99999/", ownHosts, msgPort},
		{"six-digit port", "https://example.com:123456/", ownHosts, msgPort},

		// A name of a base URL: its port, 80 and 443 (a proxy in front).
		{"own host", "https://sho.rt/abc", ownHosts, msgOwn},
		{"own host http", "http://sho.rt/abc", ownHosts, msgOwn},
		{"own host upper case", "https://SHO.RT/abc", ownHosts, msgOwn},
		{"own host mixed case", "https://Sho.Rt/abc", ownHosts, msgOwn},
		{"own host trailing dot", "https://sho.rt./abc", ownHosts, msgOwn},
		{"own host trailing dot upper case", "https://SHO.RT./abc", ownHosts, msgOwn},
		{"own host default port", "https://sho.rt:443/abc", ownHosts, msgOwn},
		{"own host http on 443", "http://sho.rt:443/abc", ownHosts, msgOwn},
		{"own host empty port", "https://sho.rt:/abc", ownHosts, msgOwn},
		{"own host on another port", "https://sho.rt:8443/abc", ownHosts, ""},
		{"subdomain of own host", "https://www.sho.rt/abc", ownHosts, ""},
		{"own host as suffix", "https://notsho.rt/abc", ownHosts, ""},
		{"own host in path", "https://example.com/sho.rt", ownHosts, ""},
		{"own host and port", "http://go.example.com:8080/abc", ownHosts, msgOwn},
		{"own host and port upper case", "http://GO.EXAMPLE.COM:8080/abc", ownHosts, msgOwn},
		{"own host and port trailing dot", "http://go.example.com.:8080/abc", ownHosts, msgOwn},
		{"own host, port omitted", "http://go.example.com/abc", ownHosts, msgOwn},
		{"second own host on another port", "http://go.example.com:9090/abc", ownHosts, ""},
		{"second own host on another port, trailing dot", "http://go.example.com.:9090/abc", ownHosts, ""},

		// A custom domain of the instance: every port.
		{"custom domain", "https://go.custom.test/x", ownHosts, msgOwn},
		{"custom domain upper case, trailing dot", "https://GO.Custom.TEST./x", ownHosts, msgOwn},
		{"custom domain, any port", "http://go.custom.test:1234/x", ownHosts, msgOwn},

		// Every spelling of loopback on a port of the service (8080 of
		// go.example.com, 9000 of [::1], 443 of sho.rt) is this service.
		{"localhost", "http://localhost:8080/x", ownHosts, msgOwn},
		{"LOCALHOST", "http://LOCALHOST:8080/x", ownHosts, msgOwn},
		{"localhost trailing dot", "http://localhost.:8080/x", ownHosts, msgOwn},
		{"subdomain of localhost", "http://app.localhost:8080/x", ownHosts, msgOwn},
		{"127.0.0.1", "http://127.0.0.1:8080/x", ownHosts, msgOwn},
		{"127.1", "http://127.1:8080/x", ownHosts, msgOwn},
		{"127.0.1", "http://127.0.1:8080/x", ownHosts, msgOwn},
		{"IPv6 loopback", "http://[::1]:8080/x", ownHosts, msgOwn},
		{"IPv6 loopback long", "http://[0:0:0:0:0:0:0:1]:8080/x", ownHosts, msgOwn},
		{"IPv4-mapped IPv6", "http://[::ffff:127.0.0.1]:8080/x", ownHosts, msgOwn},
		{"IPv4-mapped IPv6 hex", "http://[::ffff:7f00:1]:8080/x", ownHosts, msgOwn},
		{"decimal", "http://2130706433:8080/x", ownHosts, msgOwn},
		{"hex", "http://0x7f000001:8080/x", ownHosts, msgOwn},
		{"hex upper case", "http://0X7F000001:8080/x", ownHosts, msgOwn},
		{"hex parts", "http://0x7f.0x0.0x0.0x1:8080/x", ownHosts, msgOwn},
		{"octal", "http://0177.0.0.1:8080/x", ownHosts, msgOwn},
		{"zero-padded", "http://127.000.000.001:8080/x", ownHosts, msgOwn},
		{"another loopback address", "http://127.0.0.2:8080/x", ownHosts, msgOwn},
		{"end of the loopback network", "http://127.255.255.254:8080/x", ownHosts, msgOwn},
		{"unspecified", "http://0.0.0.0:8080/x", ownHosts, msgOwn},
		{"unspecified short", "http://0:8080/x", ownHosts, msgOwn},
		{"IPv6 unspecified", "http://[::]:8080/x", ownHosts, msgOwn},
		{"trailing dot after IPv4", "http://127.0.0.1.:8080/x", ownHosts, msgOwn},
		{"loopback on the https port", "https://127.1/x", ownHosts, msgOwn},
		{"IPv6 base URL's port", "http://[::1]:9000/x", ownHosts, msgOwn},
		{"loopback on another port", "http://127.0.0.1:8081/x", ownHosts, ""},
		{"localhost on another port", "http://localhost:3000/x", ownHosts, ""},
		{"IPv6 loopback on another port", "http://[::1]:9001/x", ownHosts, ""},
		{"loopback on port 80, not served", "http://localhost/x", ownHosts, ""},
		{"another address", "http://127.0.0.1.example.com:8080/x", ownHosts, ""},
		{"private address", "http://10.0.0.1:8080/x", ownHosts, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := link.CheckDestination(tt.raw, tt.own), tt.want; got != want {
				t.Fatalf("CheckDestination(%.80q) = %q, want %q", tt.raw, got, want)
			}
		})
	}
}

func TestCheckAlias(t *testing.T) {
	const (
		msgEmpty    = "must not be empty"
		msgLong     = "must be at most 64 characters"
		msgCharset  = "may contain only letters A-Z and a-z, digits, '-' and '_'"
		msgReserved = "is a reserved word"
	)
	tests := []struct {
		alias string
		want  string
	}{
		{"a", ""},
		{"abc", ""},
		{"Launch-2026_Q1", ""},
		{"0", ""},
		{"-", ""},
		{"_", ""},
		{"ABCXYZabcxyz0189-_", ""},
		{strings.Repeat("x", 64), ""},
		{"apis", ""},
		{"v2", ""},
		{"my-admin", ""},

		{"", msgEmpty},
		{strings.Repeat("x", 65), msgLong},
		{strings.Repeat("é", 33), msgLong}, // 66 bytes
		{"a b", msgCharset},
		{"a.b", msgCharset},
		{"a/b", msgCharset},
		{"a?b", msgCharset},
		{"a%20b", msgCharset},
		{"a~b", msgCharset},
		{"é", msgCharset},
		{"ａ", msgCharset}, // full-width a
		{"a\x00", msgCharset},
		{"a\n", msgCharset},
		{"\xff", msgCharset},
		{"openapi.json", msgCharset},
		{".well-known", msgCharset},

		{"api", msgReserved},
		{"API", msgReserved},
		{"Api", msgReserved},
		{"v1", msgReserved},
		{"V1", msgReserved},
		{"healthz", msgReserved},
		{"Dashboard", msgReserved},
		{"ADMIN", msgReserved},
		{"qr-codes", msgReserved},
		{"QR-Codes", msgReserved},
		{"well-known", msgReserved},
	}
	for _, tt := range tests {
		if got, want := link.CheckAlias(tt.alias), tt.want; got != want {
			t.Errorf("CheckAlias(%q) = %q, want %q", tt.alias, got, want)
		}
	}
}

func TestIsReserved(t *testing.T) {
	tests := []struct {
		alias string
		want  bool
	}{
		{"api", true},
		{"API", true},
		{"openapi.json", true},
		{"OpenAPI.JSON", true},
		{"favicon.ico", true},
		{"robots.txt", true},
		{".well-known", true},
		{"links", true},
		{"Links", true},
		{"link", false},
		{"", false},
		{"api ", false},
		{"xapi", false},
	}
	for _, tt := range tests {
		if got, want := link.IsReserved(tt.alias), tt.want; got != want {
			t.Errorf("IsReserved(%q) = %v, want %v", tt.alias, got, want)
		}
	}
}

func TestValidCodeSyntax(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"a", true},
		{"aB3dE9z", true},
		{"with-dash_and_underscore", true},
		{strings.Repeat("Z", 64), true},
		{"api", true}, // reserved, but a valid code syntactically
		{"", false},
		{strings.Repeat("Z", 65), false},
		{"a.b", false},
		{"a/b", false},
		{"favicon.ico", false},
		{"é", false},
		{"a\x00", false},
		{"\xff", false},
		{" a", false},
		{"a%41", false},
	}
	for _, tt := range tests {
		if got, want := link.ValidCodeSyntax(tt.code), tt.want; got != want {
			t.Errorf("ValidCodeSyntax(%q) = %v, want %v", tt.code, got, want)
		}
	}
}

func TestCheckTag(t *testing.T) {
	const (
		msgEmpty   = "must not be empty"
		msgLong    = "must be at most 50 characters"
		msgComma   = "must not contain commas"
		msgControl = "must not contain control characters"
	)
	tests := []struct {
		tag  string
		want string
	}{
		{"launch", ""},
		{"Launch 2026", ""},
		{"spring/sale", ""},
		{"grüße", ""},
		{"日本", ""},
		{strings.Repeat("x", 50), ""},
		{strings.Repeat("ü", 50), ""}, // 50 characters, 100 bytes

		{"", msgEmpty},
		{strings.Repeat("x", 51), msgLong},
		{strings.Repeat("ü", 51), msgLong},
		{"a,b", msgComma},
		{",", msgComma},
		{"a\x00b", msgComma},
		{"\xff", "must be valid UTF-8"},
		{"a\tb", msgControl},
		// Format characters (Unicode Cf): invisible, or reordering what is shown.
		{"news\u200b", "must not contain invisible format or bidi control characters (U+200B)"},
		{"\u202egnp.exe", "must not contain invisible format or bidi control characters (U+202E)"},
		{"a\u00adb", "must not contain invisible format or bidi control characters (U+00AD)"},
		{"\ufeffbom", "must not contain invisible format or bidi control characters (U+FEFF)"},
		{"a\nb", msgControl},
		{"a\x7fb", msgControl},
		{"a\u0085b", msgControl},
		{".", "must not be . or .."},
		{"..", "must not be . or .."},
		{"...", ""},
		{".hidden", ""},
	}
	for _, tt := range tests {
		if got, want := link.CheckTag(tt.tag), tt.want; got != want {
			t.Errorf("CheckTag(%q) = %q, want %q", tt.tag, got, want)
		}
	}
}

func FuzzCheckAlias(f *testing.F) {
	for _, s := range []string{
		"", "a", "abc", "Launch-2026_Q1", "api", "API", "V1", "openapi.json",
		".well-known", "well-known", "a b", "é", "\xff", "a\x00",
		strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("é", 32),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, alias string) {
		msg := link.CheckAlias(alias)
		syntax, reserved := link.ValidCodeSyntax(alias), link.IsReserved(alias)
		if msg == "" {
			if !syntax {
				t.Fatalf("CheckAlias(%q) accepted an alias that ValidCodeSyntax rejects", alias)
			}
			if reserved {
				t.Fatalf("CheckAlias(%q) accepted a reserved word", alias)
			}
			if len(alias) > link.MaxAliasLength {
				t.Fatalf("CheckAlias(%q) accepted %d bytes", alias, len(alias))
			}
		} else if syntax && !reserved {
			// A valid, unreserved code must be usable as an alias too, or the
			// redirect path and the API would disagree.
			t.Fatalf("CheckAlias(%q) = %q, but ValidCodeSyntax accepts it and it is not reserved", alias, msg)
		}
	})
}

func TestNormalizeDestination(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{"https://Example.COM/Path?q=1", "https://Example.COM/Path?q=1"}, // ASCII names stay as written
		{"http://3221225985:81/x?y#z", "http://192.0.2.1:81/x?y#z"},
		{"http://0xc0.0.513:81/x", "http://192.0.2.1:81/x"},
		{"http://0300.0250.2.1/x", "http://192.168.2.1/x"},
		{"http://192.000.002.001/", "http://192.0.2.1/"},
		{"http://192.0.2.1./x", "http://192.0.2.1/x"},
		{"http://[2001:DB8::1]:8443/x", "http://[2001:DB8::1]:8443/x"},
	} {
		got, msg := link.NormalizeDestination(tt.raw, ownHosts)
		if got != tt.want || msg != "" {
			t.Errorf("NormalizeDestination(%q) = %q, %q; want %q", tt.raw, got, msg, tt.want)
		}
	}
}

// An escaped host is the host a browser decodes: stored in A-labels as a
// name written in Unicode is, refused where no IDNA conversion is given
// (url.Parse decodes the host, and the escaped spelling was stored as
// written, past the blocklist's match of hosts).
func TestNormalizeDestinationEscapedHost(t *testing.T) {
	rules := testRules()
	rules.ToASCII = func(s string) (string, error) {
		if a, ok := map[string]string{"bücher.example": "xn--bcher-kva.example", "www.bücher.example": "www.xn--bcher-kva.example"}[s]; ok {
			return a, nil
		}
		return s, nil
	}
	for raw, want := range map[string]string{
		"https://b%C3%BCcher.example/x%C3%BC?q=%41": "https://xn--bcher-kva.example/x%C3%BC?q=%41",
		"https://www.b%c3%bccher.example:8443/x":    "https://www.xn--bcher-kva.example:8443/x",
		"https://bücher.example/x":                  "https://xn--bcher-kva.example/x",
		"https://example.com/%C3%BC":                "https://example.com/%C3%BC",
	} {
		if got, msg := link.NormalizeDestination(raw, rules); got != want || msg != "" {
			t.Errorf("NormalizeDestination(%q) = %q, %q; want %q", raw, got, msg, want)
		}
	}
	if _, msg := link.NormalizeDestination("https://b%C3%BCcher.example/", nil); msg != "must have an ASCII host" {
		t.Errorf("an escaped host without IDNA: %q", msg)
	}
}

func FuzzCheckDestination(f *testing.F) {
	for _, s := range []string{
		"https://example.com/path?q=1#frag", "http://example.com", "HTTP://EXAMPLE.COM:8080/",
		"javascript:alert(1)", "data:text/html,x", "/relative", "https:///x", "http:example.com",
		"https://user:pw@example.com/", "https://example.com:0/", "https://example.com:65536/",
		"http://[::1]:9000/", "http://[2001:db8::1]/", "https://sho.rt./x", "http://go.example.com:9090/",
		"https://exa mple.com/", "https://example.com/\t", "https://example.com/\u2028",
		"https://example.com/%zz", "https://b\u00fccher.example/", "http://:80/", "http://./",
		"http://0x7f000001:8080/", "http://127.1:9/", "http://[::ffff:127.0.0.1]:8080/", "http://2130706433./x",
		urlOfLength(link.MaxDestinationLength), urlOfLength(link.MaxDestinationLength + 1),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if link.CheckDestination(raw, ownHosts) != "" {
			return
		}
		if len(raw) > link.MaxDestinationLength {
			t.Fatalf("accepted %d bytes", len(raw))
		}
		for _, c := range raw {
			if unicode.IsSpace(c) || unicode.IsControl(c) {
				t.Fatalf("accepted %q with space or control character %U", raw, c)
			}
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("accepted %q, which net/url rejects: %v", raw, err)
		}
		if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
			t.Fatalf("accepted %q with scheme %q", raw, u.Scheme)
		}
		if u.Host == "" || u.Hostname() == "" {
			t.Fatalf("accepted %q without a host", raw)
		}
		if u.User != nil {
			t.Fatalf("accepted %q with user info %q", raw, u.User)
		}
		if host := strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")); host == "sho.rt" && (u.Port() == "" || u.Port() == "80" || u.Port() == "443") {
			t.Fatalf("accepted %q, which points to the own host sho.rt", raw)
		}
		// The stored form is stable: normalising it again changes nothing.
		norm, _ := link.NormalizeDestination(raw, ownHosts)
		if again, msg := link.NormalizeDestination(norm, ownHosts); msg != "" || again != norm {
			t.Fatalf("NormalizeDestination(%q) = %q, which normalises to %q, %q", raw, norm, again, msg)
		}
	})
}

// TestNormalizeDestinationEveryRune: every character, at the start of
// the path or after another non-ASCII one (the bytes are read until the
// first non-ASCII one, the runes after it), is refused exactly when it is
// a space, a control or an invisible character. The planes of Unicode are
// checked side by side: each is over a million calls under -race.
func TestNormalizeDestinationEveryRune(t *testing.T) {
	const plane = 0x10000
	for first := rune(0); first <= unicode.MaxRune; first += plane {
		t.Run(fmt.Sprintf("U+%04X", first), func(t *testing.T) {
			t.Parallel()
			for c := first; c < first+plane; c++ {
				if c >= 0xD800 && c <= 0xDFFF {
					continue
				}
				bad := unicode.IsControl(c) || unicode.IsSpace(c) || unicode.In(c, unicode.Cf, unicode.Zl, unicode.Zp) ||
					strings.ContainsRune("\u034F\u115F\u1160\u17B4\u17B5\u180B\u180C\u180D\u180F\u2800\u3164\uFFA0", c)
				for _, raw := range []string{"https://example.com/" + string(c), "https://example.com/é" + string(c)} {
					_, problem := link.NormalizeDestination(raw, nil)
					refused := strings.Contains(problem, "spaces or control") || strings.Contains(problem, "invisible")
					if refused != bad {
						t.Fatalf("%q: problem %q, want refused %v", raw, problem, bad)
					}
				}
			}
		})
	}
}
