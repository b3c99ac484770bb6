package server

// The forwarding of what a visitor adds to a short URL to the link's
// destination (link.Link.ForwardPath, ForwardQuery): /{code}/rest/of/path
// goes to the destination's path followed by /rest/of/path, and the
// visitor's query is added to the destination's. A link that forwards
// nothing never reaches this file.

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/linkbolt/linkbolt/link"
)

// reservedForwardSegments are the first segments after a code that are
// never forwarded, kept for answers of the short URL itself (a tracking
// pixel, QR codes, public statistics): /{code}/track answers as if the
// link forwarded nothing, whatever follows it.
var reservedForwardSegments = map[string]bool{"track": true, "qr": true, "qr-code": true, "stats": true}

// forwardTarget splits the escaped path of a request into the code (its
// first segment) and the path after it, from its slash on; ok is false for
// a path of one segment, or whose code is not a code's syntax, or is
// reserved, or whose next segment is reserved.
func forwardTarget(r *http.Request) (code, rest string, ok bool) {
	p := r.URL.EscapedPath()
	if len(p) < 2 || p[0] != '/' {
		return "", "", false
	}
	i := strings.IndexByte(p[1:], '/')
	if i <= 0 {
		return "", "", false
	}
	code, rest = p[1:1+i], p[1+i:]
	if !link.ValidCodeSyntax(code) || link.IsReserved(code) {
		return "", "", false
	}
	seg, _, _ := strings.Cut(rest[1:], "/")
	if reservedForwardSegments[strings.ToLower(seg)] {
		return "", "", false
	}
	return code, rest, true
}

// forwardCandidate reports whether a request to the primary host may be
// one for a link that forwards the path: a GET, HEAD or POST of a path of
// more than one segment that no route and no page serves.
func (s *Server) forwardCandidate(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		return false
	}
	p := r.URL.Path
	if len(p) < 2 {
		return false
	}
	i := strings.IndexByte(p[1:], '/')
	if i <= 0 || s.pages[p] || s.pages[p[:1+i]] {
		return false
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	h, _, _ := s.router.Lookup(method, p)
	return h == nil
}

// serveForwarded answers a GET, HEAD or POST (a password form) of
// /{code}/rest on the primary host (d nil) or the custom domain d when the
// link of code forwards the path. It reports false, having written
// nothing, when the request is not one: the caller answers it as before
// (a 404).
func (s *Server) serveForwarded(w http.ResponseWriter, r *http.Request, d *link.Domain) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		return false
	}
	code, _, ok := forwardTarget(r)
	if !ok {
		return false
	}
	host := ""
	if d != nil {
		host = d.Hostname
	}
	l, err := s.links.FindLinkByAlias(r.Context(), host, code)
	if isNotFound(err) {
		return false
	} else if err != nil {
		s.writeError(w, r, err)
		return true
	}
	if !l.ForwardPath {
		return false
	}
	if r.Method == http.MethodPost {
		if l.PasswordHash == "" {
			return false
		}
		s.unlockPost(w, r, d, l)
		return true
	}
	s.redirect(w, r, d, code)
	return true
}

// forwardedLocation is loc, where l sends the visitor of r, with what the
// visitor added (forwardTo). It answers r itself and reports false when
// the path holds a dot segment (400) or the forwarded URL is on the
// blocklist (the blocked link's answer).
func (s *Server) forwardedLocation(w http.ResponseWriter, r *http.Request, l *link.Link, loc string) (string, bool) {
	rest := ""
	if l.ForwardPath {
		_, rest, _ = forwardTarget(r)
	}
	query := ""
	if l.ForwardQuery {
		query = r.URL.RawQuery
	}
	out, ok := forwardTo(loc, rest, query)
	if !ok {
		s.writeError(w, r, link.Errorf(link.EINVALIDREQUEST,
			"the path after the short code may not hold \".\" or \"..\" segments"))
		return "", false
	}
	if out != loc && s.blocklist.active() && s.blocklist.blocks(out) {
		s.goneAnswer(w, r, l, linkBlocked)
		return "", false
	}
	return out, true
}

// forwardTo returns the URL loc with the escaped path rest ("" or from its
// slash on) added to its path and the raw query added to its query. The
// path joins with one slash (https://x.test/a + /b/c is
// https://x.test/a/b/c); loc's query and fragment stay. The link's own
// query parameters, its UTM values among them, win: a visitor's parameter
// of the same name is dropped; the others are added in the visitor's
// order, as they were sent. ok is false when rest holds a "." or ".."
// segment, escaped or not, or behind an escaped slash or a backslash.
func forwardTo(loc, rest, query string) (string, bool) {
	if rest == "" && query == "" {
		return loc, true
	}
	if !cleanForwardPath(rest) {
		return "", false
	}
	head, frag, hasFrag := strings.Cut(loc, "#")
	base, own, _ := strings.Cut(head, "?")
	var b strings.Builder
	b.Grow(len(loc) + len(rest) + len(query) + 1)
	b.WriteString(base)
	if rest != "" {
		if strings.HasSuffix(base, "/") {
			rest = rest[1:]
		}
		b.WriteString(rest)
	}
	sep := byte('?')
	if own != "" {
		b.WriteByte('?')
		b.WriteString(own)
		sep = '&'
	}
	if query != "" {
		names := queryNames(own)
		for _, pair := range strings.Split(query, "&") {
			if pair == "" {
				continue
			}
			key, _, _ := strings.Cut(pair, "=")
			if k, err := url.QueryUnescape(key); err != nil || names[k] {
				continue
			}
			b.WriteByte(sep)
			b.WriteString(pair)
			sep = '&'
		}
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(frag)
	}
	return asciiURL(b.String()), true
}

// queryNames returns the names of the parameters of a raw query.
func queryNames(q string) map[string]bool {
	if q == "" {
		return nil
	}
	names := map[string]bool{}
	for _, pair := range strings.Split(q, "&") {
		key, _, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(key); err == nil {
			names[k] = true
		}
	}
	return names
}

// cleanForwardPath reports whether the escaped path rest holds no segment
// that is "." or "..", escaped or not, also where an escaped slash or a
// backslash (which browsers read as a slash) divides segments.
func cleanForwardPath(rest string) bool {
	for _, seg := range strings.Split(rest, "/") {
		u, err := url.PathUnescape(seg)
		if err != nil {
			return false
		}
		for _, part := range strings.FieldsFunc(u, func(c rune) bool { return c == '/' || c == '\\' }) {
			if part == "." || part == ".." {
				return false
			}
		}
	}
	return true
}
