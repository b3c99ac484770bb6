package server

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// serveRedirect answers GET and HEAD /{code} on the primary host.
func (s *Server) serveRedirect(w http.ResponseWriter, r *http.Request, code string) {
	s.redirect(w, r, nil, code)
}

// redirect answers GET and HEAD /{code} on the primary host (d nil) or on
// the custom domain d. A GET is a click, handed to the in-memory recorder
// before the answer so that none is lost; a HEAD answers the same status
// and Location and is not a click. An unknown code on a domain with a
// not_found_url redirects there.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, d *link.Domain, code string) {
	host := ""
	if d != nil {
		host = d.Hostname
	}
	if !link.ValidCodeSyntax(code) {
		if p, ok := strings.CutSuffix(code, "+"); ok && link.ValidCodeSyntax(p) {
			s.preview(w, r, host, p)
			return
		}
		s.linkNotFound(w, r, d, code)
		return
	}
	l, ok := s.servedLink(w, r, d, host, code)
	if !ok {
		return
	}
	// A destination checked when it was saved may point back here now (a
	// custom domain verified since): refuse the hop, and count no click.
	// A protected link is looked at once the visitor is through
	// (redirectControlled): before, its answer says nothing of where it
	// goes.
	if l.PasswordHash == "" && s.loops(l.DestinationURL) {
		s.writeError(w, r, errHTTP(codeRedirectLoop, fmt.Sprintf(
			"short link %q points back into this service (%s), which would loop: change its destination", code, hostOf(l.DestinationURL))))
		return
	}
	var now time.Time
	// link controls: expiry, limits and the blocklist (redirect_gone.go,
	// redirect_click_limits.go); a plain link pays two tests while the
	// blocklist is empty.
	if l.Limited() || s.blocklist.active() {
		now = s.now()
		if s.controlRedirect(w, r, l, now) {
			return
		}
	}
	if l.HasControls() {
		s.redirectControlled(w, r, d, l)
		return
	}
	loc := Destination(l)
	if l.ForwardPath || l.ForwardQuery {
		var ok bool
		if loc, ok = s.forwardedLocation(w, r, l, loc); !ok {
			return
		}
	}
	if r.Method == http.MethodGet {
		if now.IsZero() {
			now = s.now()
		}
		s.recordClick(r, l, now, 0)
	}
	h := w.Header()
	h["Location"] = []string{loc}
	// Permanent redirects may be cached briefly so browsers still come back
	// (and count) after a change; temporary ones are never cached.
	if l.RedirectCode == http.StatusMovedPermanently || l.RedirectCode == http.StatusPermanentRedirect {
		h["Cache-Control"] = cachePermanent
	} else {
		h["Cache-Control"] = cacheTemporary
	}
	w.WriteHeader(l.RedirectCode)
}

// servedLink returns the link of code (a valid code) on host, d's ("" and
// nil for the primary host), or answers the request itself (the link's
// 404, or the store's error) and reports false.
func (s *Server) servedLink(w http.ResponseWriter, r *http.Request, d *link.Domain, host, code string) (*link.Link, bool) {
	l, err := s.links.FindLinkByAlias(r.Context(), host, code)
	if isNotFound(err) {
		s.linkNotFound(w, r, d, code)
		return nil, false
	} else if err != nil {
		s.writeError(w, r, err)
		return nil, false
	}
	return l, true
}

// The Cache-Control values of redirects, shared by every answer (net/http
// only reads them).
var (
	cachePermanent = []string{"public, max-age=300"}
	cacheTemporary = []string{"private, no-cache, no-store, max-age=0"}
)

// Destination returns where a link redirects to: its destination with the
// link's UTM values set in the query. The rest of the destination is kept
// byte for byte; a UTM value of the link replaces the same parameter in
// the destination.
func Destination(l *link.Link) string {
	if l.UTMSource == "" && l.UTMMedium == "" && l.UTMCampaign == "" {
		return asciiURL(l.DestinationURL)
	}
	rest, frag, hasFrag := strings.Cut(l.DestinationURL, "#")
	base, query, _ := strings.Cut(rest, "?")
	set := [...][2]string{{"utm_source", l.UTMSource}, {"utm_medium", l.UTMMedium}, {"utm_campaign", l.UTMCampaign}}
	var b strings.Builder
	b.WriteString(base)
	sep := byte('?')
	for _, pair := range strings.Split(query, "&") {
		if pair == "" {
			continue
		}
		key, _, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(key); err == nil && overridden(k, set[:]) {
			continue
		}
		b.WriteByte(sep)
		b.WriteString(pair)
		sep = '&'
	}
	for _, kv := range set {
		if kv[1] == "" {
			continue
		}
		b.WriteByte(sep)
		b.WriteString(kv[0])
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(kv[1]))
		sep = '&'
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(frag)
	}
	return asciiURL(b.String())
}

// hostOf returns the authority of an absolute URL, for messages.
func hostOf(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// asciiURL percent-encodes the non-ASCII bytes after the host of a URL, so
// that a Location header carries only ASCII as HTTP requires. A host is
// ASCII (A-labels) since links are saved so; one that is not, saved by an
// older linkbolt, is converted with IDNA here.
func asciiURL(u string) string {
	start := strings.Index(u, "://")
	if start < 0 {
		return u
	}
	start += 3
	if i := strings.IndexAny(u[start:], "/?#"); i >= 0 {
		start += i
	} else {
		start = len(u)
	}
	if auth := u[strings.Index(u, "://")+3 : start]; !isASCII(auth) {
		host, port := auth, ""
		if i := strings.LastIndexByte(auth, ':'); i >= 0 {
			host, port = auth[:i], auth[i:]
		}
		if a, err := wire.DestinationIDNA.ToASCII(host); err == nil {
			u = u[:start-len(auth)] + a + port + u[start:]
			start += len(a) + len(port) - len(auth)
		} else {
			start -= len(auth) // percent-encode it: at least ASCII
		}
	}
	n := 0
	for i := start; i < len(u); i++ {
		if u[i] >= 0x80 {
			n++
		}
	}
	if n == 0 {
		return u
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(u)+2*n)
	b = append(b, u[:start]...)
	for i := start; i < len(u); i++ {
		if c := u[i]; c >= 0x80 {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func overridden(key string, set [][2]string) bool {
	for _, kv := range set {
		if kv[1] != "" && kv[0] == key {
			return true
		}
	}
	return false
}

// recordClick hands the click of r on l at now, sent to variant (from 1;
// 0 for none), to the recorder.
func (s *Server) recordClick(r *http.Request, l *link.Link, now time.Time, variant uint8) {
	if s.untracked(r) {
		return
	}
	s.recorder.Record(link.Click{
		LinkID: l.ID, WorkspaceID: l.WorkspaceID, CampaignID: l.CampaignID, Time: now,
		Referrer: link.ReferrerHost(r.Header.Get("Referer")), UserAgent: clickUA(r.Header.Get("User-Agent")),
		Addr: s.clientAddr(r), Variant: variant,
	})
}

// untracked reports whether a visit is never counted: from a client of
// analytics.untracked_ips, or with analytics.untracked_param in its
// query. It costs nothing while neither is set. An uncounted visit takes
// none of a limited link's clicks either, so that a monitor checking that
// links still redirect uses up none.
func (s *Server) untracked(r *http.Request) bool {
	if p := s.cfg.UntrackedParam; p != "" && r.URL.RawQuery != "" && r.URL.Query().Has(p) {
		return true
	}
	if len(s.cfg.UntrackedIPs) > 0 {
		a := s.clientAddr(r)
		for _, p := range s.cfg.UntrackedIPs {
			if p.Contains(a) {
				return true
			}
		}
	}
	return false
}

// clickUA returns what a click keeps of a User-Agent header: the first
// analytics.MaxUALength bytes, all that classification and the visitor
// hash read. A longer header is copied, so that the queued click does not
// keep the whole header (up to MaxHeaderBytes) alive; a usual one is kept
// as it is, without an allocation.
func clickUA(ua string) string {
	if len(ua) > analytics.MaxUALength {
		return strings.Clone(ua[:analytics.MaxUALength])
	}
	return ua
}

var notFoundPage = template.Must(template.New("404").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Link not found</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#222}</style></head>
<body><h1>Link not found</h1><p>There is no short link <code>/{{.}}</code> here. Check the address for typos.</p></body></html>
`))

// linkNotFound answers an unknown short code: a redirect to the domain's
// not_found_url where it has one (that neither loops nor has come onto the
// blocklist since it was saved), else notFound.
func (s *Server) linkNotFound(w http.ResponseWriter, r *http.Request, d *link.Domain, code string) {
	s.recordOrphan(r, d, link.OrphanInvalidShortURL)
	if d == nil || d.NotFoundURL == "" || s.loops(d.NotFoundURL) || s.blocklist.blocks(d.NotFoundURL) {
		s.notFound(w, r, code)
		return
	}
	h := w.Header()
	h["Location"] = []string{asciiURL(d.NotFoundURL)}
	h["Cache-Control"] = cacheTemporary
	w.WriteHeader(http.StatusFound)
}

// notFound answers an unknown short code: a small page for browsers and
// problem+json for everything else.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request, code string) {
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		s.writeError(w, r, link.Errorf(link.ENOTFOUND, "no short link %q", code))
		return
	}
	writePage(w, r, http.StatusNotFound, pageCSP, notFoundPage, code)
}
