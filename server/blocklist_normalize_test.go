package server

import (
	"strings"
	"testing"
)

// TestBlockTail: the path and query of a destination as the blocklist
// matches them.
func TestBlockTail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "/"},
		{"/", "/"},
		{"?x=1", "/?x=1"},
		{"/promo/x", "/promo/x"},
		// dot segments (RFC 3986 §5.2.4)
		{"/./promo/x", "/promo/x"},
		{"/a/../promo/x", "/promo/x"},
		{"/../../promo/x", "/promo/x"},
		{"/a/b/..", "/a/"},
		{"/a/b/.", "/a/b/"},
		{"/a/..", "/"},
		{"/.", "/"},
		{"/..", "/"},
		{"/a/.../b", "/a/.../b"},
		{"/a/..b/.c", "/a/..b/.c"},
		{"/file.txt", "/file.txt"},
		// escapes of unreserved characters (RFC 3986 §2.3) are decoded
		{"/%70romo/x", "/promo/x"},
		{"/%2e%2E/promo", "/promo"},
		{"/a/.%2e/promo", "/promo"},
		{"/%7E%5f%2D%30", "/~_-0"},
		// others keep their escape (lowered, as the whole is)
		{"/%2Fpromo", "/%2fpromo"},
		{"/%2fpromo", "/%2fpromo"},
		{"/a%20b", "/a%20b"},
		{"/%zz%4", "/%25zz%254"},
		{"/%", "/%25"},
		{"/%7%41", "/%257a"},
		// bytes outside ASCII are escaped as the redirect sends them
		{"/prömo", "/pr%c3%b6mo"},
		{"/pr%C3%B6mo", "/pr%c3%b6mo"},
		// repeated slashes, backslashes
		{"//promo/x", "/promo/x"},
		{"/a///b//", "/a/b/"},
		{`/a\..\promo\x`, "/promo/x"},
		{`\promo`, "/promo"},
		// case
		{"/PROMO/X", "/promo/x"},
		// the query: escapes decoded and lowered, slashes and dots kept
		{"/p?a=%41&b=./..//c", "/p?a=a&b=./..//c"},
		{"/a/../p?x=/../y", "/p?x=/../y"},
		{"/p?q=%2F", "/p?q=%2f"},
	} {
		if got := blockTail(tc.in); got != tc.want {
			t.Errorf("blockTail(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCanonicalBlockEntry: entries are kept as they are matched.
func TestCanonicalBlockEntry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://Example.COM/", "example.com"},
		{"example.com:8443", "example.com"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"*.Example.net/Login*", "*.example.net/login*"},
		{"example.org/./promo/*", "example.org/promo/*"},
		{"example.org//%70romo/*", "example.org/promo/*"},
		{"example.org/a/../promo/*", "example.org/promo/*"},
		{"example.org?x=1", "example.org/?x=1"},
		{"bad-*.example", "bad-*.example"},
	} {
		got, problem := canonicalBlockEntry(tc.in)
		if problem != "" || got != tc.want {
			t.Errorf("canonicalBlockEntry(%q) = %q %q, want %q", tc.in, got, problem, tc.want)
		}
	}
}

// FuzzBlockTail: blockTail is idempotent and leaves no dot segment, no
// repeated or back slash in the path, no escape of an unreserved
// character, no byte outside ASCII and no upper-case letter; the
// destination it comes from is blocked by the pattern of its own
// normalised form, however the destination is spelt.
func FuzzBlockTail(f *testing.F) {
	for _, s := range []string{"", "/", "/./promo/x", "/a/../promo/x", "/%70romo/x", "//promo/x", `/a\..\b`,
		"/PROMO?X=%41", "/prömo/%c3%b6", "/%2e%2E/", "/a/b/..", "/%", "/%%41", "/%7%41", "?/../"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tail string) {
		if tail != "" && tail[0] != '/' && tail[0] != '?' {
			tail = "/" + tail
		}
		got := blockTail(tail)
		if again := blockTail(got); again != got {
			t.Fatalf("blockTail(%q) = %q, and again %q", tail, got, again)
		}
		path, _, _ := strings.Cut(got, "?")
		if !strings.HasPrefix(path, "/") || strings.Contains(path, "//") || strings.Contains(path, `\`) {
			t.Fatalf("blockTail(%q) = %q: a path with empty segments or backslashes", tail, got)
		}
		for _, seg := range strings.Split(path, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("blockTail(%q) = %q: a dot segment", tail, got)
			}
		}
		for i := 0; i < len(got); i++ {
			c := got[i]
			if c >= 0x80 || 'A' <= c && c <= 'Z' {
				t.Fatalf("blockTail(%q) = %q: byte %q", tail, got, c)
			}
			if c == '%' && i+2 < len(got) && isHex(got[i+1]) && isHex(got[i+2]) && isUnreserved(unhex(got[i+1])<<4|unhex(got[i+2])) {
				t.Fatalf("blockTail(%q) = %q: an escaped unreserved character", tail, got)
			}
		}
		if strings.Contains(tail, "#") {
			return // a fragment is no part of what a browser requests
		}
		c := &compiledBlocklist{patterns: []blockPattern{{host: "example.org", tail: got}}}
		if !c.matches("https://example.org" + tail) {
			t.Fatalf("pattern %q does not block https://example.org%s", "example.org"+got, tail)
		}
	})
}

// A pattern's "*" stays in its part: the host part matches the host, the
// path part the path, and neither runs into the other.
func TestBlocklistPatternParts(t *testing.T) {
	t.Parallel()
	b := &blocklist{}
	b.apiLines = []string{"*.example.net/login*", "example.com/*/promo", "bad-*.example"}
	b.compile()
	c := b.list.Load()
	for url, want := range map[string]bool{
		"https://www.example.net/login":                true,
		"https://a.b.example.net/login/x?y=1":          true,
		"https://innocent.example/x.example.net/login": false,
		"https://example.net.evil.example/login":       false,
		"https://example.com/a/b/promo":                true,
		"https://example.com.innocent.example/a/promo": false,
		"https://innocent.example/example.com/a/promo": false,
		"https://bad-actor.example/":                   true,
		"https://innocent.example/bad-actor.example":   false,
	} {
		if got := c.matches(url); got != want {
			t.Errorf("matches(%q) = %v, want %v", url, got, want)
		}
	}
}

// A destination saved as written by an older linkbolt, its host escaped,
// is matched by the host a browser connects to.
func TestBlocklistMatchesStoredHostSpellings(t *testing.T) {
	t.Parallel()
	b := &blocklist{}
	b.apiLines = []string{"xn--bcher-kva.example", "192.0.2.7", "evil.example/promo/*"}
	b.compile()
	c := b.list.Load()
	for url, want := range map[string]bool{
		"https://b%C3%BCcher.example/x":        true,
		"https://bu%cc%88cher.example/x":       true,
		"https://www.b%C3%BCcher.example./x":   true,
		"https://bücher.example/x":             true,
		"http://[::ffff:192.0.2.7]:80/x":       true,
		"http://[::ffff:c000:207]/x":           true,
		"https://%C3%A9vil.example/promo/x":    false,
		"https://b%C3%A4cher.example/x":        false,
		"http://[::ffff:192.0.2.8]/x":          false,
		"http://[2001:db8::c000:207]/x":        false,
		"https://b%zzcher.example/x":           false,
		"https://xn--bcher-kva.example.evil/x": false,
	} {
		if got := c.matches(url); got != want {
			t.Errorf("matches(%q) = %v, want %v", url, got, want)
		}
	}
}
