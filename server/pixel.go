package server

import (
	"net/http"
	"strings"

	"github.com/linkbolt/linkbolt/link"
)

// The tracking pixel of a short link: GET /{code}/track answers a 1×1
// transparent GIF and counts a visit of the link, without redirecting, for
// the places a redirect cannot go (an e-mail's image, a page that counts
// its views). The visit is a click like any other (analytics, the
// link.clicked event, the live stream, max_clicks), unless it is one
// analytics.untracked_* leaves out; HEAD is no click, as for redirects. A
// link expired, used up or blocked answers the pixel all the same (an
// e-mail shows no broken image) and counts nothing.

// pixelGIF is the smallest transparent GIF: 1×1, one colour.
var pixelGIF = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// pixelCode returns the code of a path /{code}/track, or "".
func pixelCode(p string) string {
	code, ok := strings.CutSuffix(p, "/track")
	if !ok || len(code) < 2 || strings.IndexByte(code[1:], '/') >= 0 {
		return ""
	}
	return code[1:]
}

// servePixel answers GET and HEAD /{code}/track on the primary host (d
// nil) or the custom domain d; an unknown code is the 404 of /{code}.
func (s *Server) servePixel(w http.ResponseWriter, r *http.Request, d *link.Domain, code string) {
	host := ""
	if d != nil {
		host = d.Hostname
	}
	if !link.ValidCodeSyntax(code) {
		s.linkNotFound(w, r, d, code)
		return
	}
	l, ok := s.servedLink(w, r, d, host, code)
	if !ok {
		return
	}
	if r.Method == http.MethodGet && !s.untracked(r) {
		now := s.now()
		gone, err := s.linkState(r.Context(), l, now, l.MaxClicks > 0)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if gone == linkLive {
			s.recordClick(r, l, now, 0)
		}
	}
	h := w.Header()
	h.Set("Content-Type", "image/gif")
	h["Cache-Control"] = cacheTemporary
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(pixelGIF)
}
