package link_test

import (
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

// ownHosts is the service as the server describes it: lower case host[:port].
var ownHosts = []string{"sho.rt", "go.example.com:8080", "[::1]:9000"}

// urlOfLength returns an https URL exactly n bytes long.
func urlOfLength(n int) string {
	const prefix = "https://example.com/"
	return prefix + strings.Repeat("a", n-len(prefix))
}

func TestCheckDestination(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		own  []string
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
		{"IDN host", "https://bücher.example/x", ownHosts, ""},
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

		// Own host without a port in the list: any port of the host is ours.
		{"own host", "https://sho.rt/abc", ownHosts, msgOwn},
		{"own host http", "http://sho.rt/abc", ownHosts, msgOwn},
		{"own host upper case", "https://SHO.RT/abc", ownHosts, msgOwn},
		{"own host mixed case", "https://Sho.Rt/abc", ownHosts, msgOwn},
		{"own host trailing dot", "https://sho.rt./abc", ownHosts, msgOwn},
		{"own host trailing dot upper case", "https://SHO.RT./abc", ownHosts, msgOwn},
		{"own host default port", "https://sho.rt:443/abc", ownHosts, msgOwn},
		{"own host other port", "https://sho.rt:8443/abc", ownHosts, msgOwn},
		{"own host empty port", "https://sho.rt:/abc", ownHosts, msgOwn},
		{"subdomain of own host", "https://www.sho.rt/abc", ownHosts, ""},
		{"own host as suffix", "https://notsho.rt/abc", ownHosts, ""},
		{"own host in path", "https://example.com/sho.rt", ownHosts, ""},

		// Own host with a port in the list: that port, or no port, is ours;
		// another port is another service.
		{"own host and port", "http://go.example.com:8080/abc", ownHosts, msgOwn},
		{"own host and port upper case", "http://GO.EXAMPLE.COM:8080/abc", ownHosts, msgOwn},
		{"own host and port trailing dot", "http://go.example.com.:8080/abc", ownHosts, msgOwn},
		{"own host, port omitted", "http://go.example.com/abc", ownHosts, msgOwn},
		{"own host on another port", "http://go.example.com:9090/abc", ownHosts, ""},
		{"own host on another port, trailing dot", "http://go.example.com.:9090/abc", ownHosts, ""},

		// IPv6 own host.
		{"own IPv6 host and port", "http://[::1]:9000/abc", ownHosts, msgOwn},
		{"own IPv6 host, port omitted", "http://[::1]/abc", ownHosts, msgOwn},
		{"own IPv6 host on another port", "http://[::1]:9001/abc", ownHosts, ""},
		{"own IPv6 host without port, bracketed", "http://[::1]/abc", []string{"[::1]"}, msgOwn},
		{"own IPv6 host without port, bare", "http://[::1]:8080/abc", []string{"::1"}, msgOwn},
		{"own host written with trailing dot", "https://sho.rt/abc", []string{"sho.rt."}, msgOwn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := link.CheckDestination(tt.raw, tt.own), tt.want; got != want {
				t.Fatalf("CheckDestination(%.80q, %q) = %q, want %q", tt.raw, tt.own, got, want)
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

func FuzzCheckDestination(f *testing.F) {
	for _, s := range []string{
		"https://example.com/path?q=1#frag", "http://example.com", "HTTP://EXAMPLE.COM:8080/",
		"javascript:alert(1)", "data:text/html,x", "/relative", "https:///x", "http:example.com",
		"https://user:pw@example.com/", "https://example.com:0/", "https://example.com:65536/",
		"http://[::1]:9000/", "http://[2001:db8::1]/", "https://sho.rt./x", "http://go.example.com:9090/",
		"https://exa mple.com/", "https://example.com/\t", "https://example.com/\u2028",
		"https://example.com/%zz", "https://b\u00fccher.example/", "http://:80/", "http://./",
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
		if host := strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")); host == "sho.rt" {
			t.Fatalf("accepted %q, which points to the own host sho.rt", raw)
		}
	})
}
