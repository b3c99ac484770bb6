package link

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// reserved holds the aliases that would shadow a route of the service or a
// path of the dashboard. Matching is case-insensitive so that "V1" cannot
// be mistaken for the API by a person either.
var reserved = map[string]bool{
	"v1": true, "api": true, "healthz": true, "metrics": true, "setup": true,
	"login": true, "logout": true, "dashboard": true, "app": true, "admin": true,
	"static": true, "assets": true, "docs": true, "openapi.json": true,
	"favicon.ico": true, "robots.txt": true, "settings": true, "links": true,
	"keys": true, "analytics": true, "campaigns": true, "domains": true,
	"webhooks": true, "qr": true, "qr-codes": true, "workspaces": true, "auth": true,
	"health": true, "status": true, "well-known": true, ".well-known": true,
}

// IsReserved reports whether alias is a reserved word.
func IsReserved(alias string) bool { return reserved[strings.ToLower(alias)] }

// CheckAlias returns what is wrong with a custom alias, or "".
func CheckAlias(alias string) string {
	if alias == "" {
		return "must not be empty"
	}
	if len(alias) > MaxAliasLength {
		return "must be at most 64 characters"
	}
	for _, c := range alias {
		if !isAliasChar(c) {
			return "may contain only letters A-Z and a-z, digits, '-' and '_'"
		}
	}
	if IsReserved(alias) {
		return "is a reserved word"
	}
	return ""
}

func isAliasChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// ValidCodeSyntax reports whether s could be a short code at all; the
// redirect path uses it to answer 404 without a database read.
func ValidCodeSyntax(s string) bool {
	if s == "" || len(s) > MaxAliasLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAliasChar(rune(s[i])) {
			return false
		}
	}
	return true
}

// CheckDestination returns what is wrong with a destination URL, or "".
func CheckDestination(raw string, rules *URLRules) string {
	_, problem := NormalizeDestination(raw, rules)
	return problem
}

// NormalizeDestination checks a URL that linkbolt redirects to and returns
// the form to store: raw itself, or raw with its host rewritten in the
// canonical ASCII form where it was not ASCII (an internationalised name,
// converted to A-labels as browsers convert it, so that Location carries
// only ASCII) or an IPv4 address in another form than dotted decimal.
// problem says what is wrong, or is "". rules may be nil (no IDNA, no own
// hosts).
func NormalizeDestination(raw string, rules *URLRules) (normalized, problem string) {
	if raw == "" {
		return "", "is required"
	}
	if len(raw) > MaxDestinationLength {
		return "", "must be at most 4096 characters"
	}
	if !utf8.ValidString(raw) {
		return "", "must be valid UTF-8"
	}
	// Most URLs are ASCII, where a space or a control character is one
	// byte and no character is invisible: the runes are read from the
	// first other byte on.
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c >= utf8.RuneSelf {
			if msg := checkURLRunes(raw[i:]); msg != "" {
				return "", msg
			}
			break
		} else if c <= ' ' || c == 0x7f {
			return "", "must not contain spaces or control characters"
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "is not a valid URL"
	}
	if u.Scheme != "http" && u.Scheme != "https" { // url.Parse lower-cases it
		return "", "must be an absolute http or https URL"
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return "", "must be an absolute http or https URL with a host"
	}
	if u.User != nil {
		return "", "must not contain credentials (user@host)"
	}
	if p := u.Port(); p != "" {
		if n, ok := atoiPort(p); !ok || n == 0 {
			return "", "has an invalid port"
		}
	}
	hostname := u.Hostname()
	for _, c := range hostname { // percent-decoded by url.Parse
		if unicode.IsControl(c) || unicode.IsSpace(c) || invisible(c) {
			return "", "must not contain spaces, control or format characters in its host"
		}
	}
	if strings.HasPrefix(u.Host, "[") {
		hostname = "[" + hostname + "]"
	}
	var toASCII func(string) (string, error)
	if rules != nil {
		toASCII = rules.ToASCII
	}
	host, numeric, msg := CanonicalHost(hostname, toASCII)
	if msg != "" {
		return "", msg
	}
	if rules.PointsHere(host, EffectivePort(u.Scheme, u.Port())) {
		return "", "must not point to a short URL of this service"
	}
	// Rewrite the host in place; everything else stays byte for byte.
	start := strings.Index(raw, "://") + 3
	auth := raw[start : start+authorityLength(raw)]
	// u.Host is percent-decoded: an escaped host (b%C3%BCcher.example,
	// which a browser decodes and converts as bücher.example) is found in
	// the authority as written.
	if !numeric && isASCII(raw[:start+len(auth)]) && !strings.Contains(auth, "%") {
		return raw, ""
	}
	port := ""
	if i := strings.LastIndexByte(auth, ':'); i >= 0 && !strings.Contains(auth[i:], "]") {
		port = auth[i:]
	}
	if strings.HasSuffix(hostname, ".") && !strings.HasSuffix(host, ".") && !strings.HasPrefix(host, "[") && !numeric {
		host += "." // keep the absolute form the person wrote
	}
	out := raw[:start] + host + port + raw[start+len(auth):]
	if len(out) > MaxDestinationLength {
		return "", "must be at most 4096 characters"
	}
	return out, ""
}

// authorityLength returns the length of the authority of an absolute URL
// (what follows "://" up to the path, query or fragment).
func authorityLength(raw string) int {
	rest := raw[strings.Index(raw, "://")+3:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return i
	}
	return len(rest)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func atoiPort(s string) (int, bool) {
	if len(s) > 5 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= 65535
}

func normalizeTags(tags []string) []string {
	if tags == nil {
		return nil
	}
	out := make([]string, 0, len(tags))
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

func checkTags(v *validation, tags []string) {
	if len(tags) > MaxTags {
		v.add("tags", "at most %d tags", MaxTags)
		return
	}
	for _, t := range tags {
		if msg := CheckTag(t); msg != "" {
			v.add("tags", "tag %q %s", t, msg)
			return
		}
	}
}

// CheckTag returns what is wrong with a tag, or "".
func CheckTag(t string) string {
	if t == "" {
		return "must not be empty"
	}
	if utf8.RuneCountInString(t) > MaxTagLength {
		return "must be at most 50 characters"
	}
	if !utf8.ValidString(t) {
		return "must be valid UTF-8"
	}
	if strings.ContainsAny(t, ",\x00") {
		return "must not contain commas"
	}
	if t == "." || t == ".." {
		// /v1/tags/{name} could not name it: URLs drop such segments.
		return "must not be . or .."
	}
	return checkText(t)
}

// checkText returns what is wrong with a short text a person reads (a
// name, a tag), or "": it must be valid UTF-8 without control characters
// (Unicode Cc) and without format characters (Unicode Cf: zero-width
// spaces and joiners, bidi overrides such as U+202E, soft hyphens), which
// make two texts that look the same differ or reorder what is shown.
func checkText(s string) string {
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	for _, c := range s {
		if unicode.IsControl(c) {
			return "must not contain control characters"
		}
		if invisible(c) {
			return fmt.Sprintf("must not contain invisible format or bidi control characters (U+%04X)", c)
		}
	}
	return ""
}

// checkURLRunes returns the problem of the first space, control or
// invisible character of s, "" for none.
func checkURLRunes(s string) string {
	for _, c := range s {
		if unicode.IsControl(c) || unicode.IsSpace(c) {
			return "must not contain spaces or control characters"
		}
		if invisible(c) {
			return fmt.Sprintf("must not contain invisible format or bidi control characters (U+%04X)", c)
		}
	}
	return ""
}

// invisible reports whether c shows as nothing (or as a blank that is not
// a space) where a name is shown: the format characters (Unicode category
// Cf), the line and paragraph separators (Zl, Zp), and the fillers and
// blanks that are letters or marks by category (Hangul fillers, the braille
// blank, the combining grapheme joiner, the Khmer inherent vowels, the
// Mongolian free variation selectors). Emoji variation selectors (U+FE0F)
// are not: they are part of how emoji are written.
func invisible(c rune) bool {
	switch c {
	case 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x2800, 0x3164, 0xFFA0:
		return true
	}
	return unicode.In(c, unicode.Cf, unicode.Zl, unicode.Zp)
}

func checkUTM(v *validation, field, val string) {
	if utf8.RuneCountInString(val) > MaxUTMLength {
		v.add(field, "must be at most %d characters", MaxUTMLength)
		return
	}
	if msg := checkText(val); msg != "" {
		v.add(field, "%s", msg)
	}
}

// checkName validates a display name of 1 to max characters.
func checkName(v *validation, field, name string, max int) {
	if strings.TrimSpace(name) == "" {
		v.add(field, "is required")
		return
	}
	if utf8.RuneCountInString(name) > max {
		v.add(field, "must be at most %d characters", max)
		return
	}
	if msg := checkText(name); msg != "" {
		v.add(field, "%s", msg)
	}
}

// ExternalIDPrefix marks an external ID where an API path takes a link's
// ID: /v1/links/ext_{external_id}.
const ExternalIDPrefix = "ext_"

// CheckExternalID returns why id cannot be a link's external ID, or "":
// 1 to MaxExternalIDLength characters, each a letter or digit of ASCII or
// one of - _ . : @ + = ~ (what another system's IDs use, and what an URL
// path segment carries as it is).
func CheckExternalID(id string) string {
	if id == "" {
		return "must not be empty"
	}
	if len(id) > MaxExternalIDLength {
		return fmt.Sprintf("must be at most %d characters", MaxExternalIDLength)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.:@+=~", c) >= 0 {
			continue
		}
		return "may hold only letters and digits of ASCII and - _ . : @ + = ~"
	}
	return ""
}
