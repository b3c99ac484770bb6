package server

import (
	"context"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
)

// clickLimits reserves the clicks of links with max_clicks, so that a
// link is never followed more than max_clicks times, however many
// visitors click at once.
//
// Each limited link has a counter in memory, seeded once per process: the
// recorder is flushed first (so that clicks handed to it, perhaps before
// the link had a limit, are in the stored totals), then the link's stored
// total is read. From then on the counter is the authority: a GET takes
// the counter's lock, compares and increments it before it answers, so
// the (max_clicks+1)-th of any number of concurrent clicks finds the link
// used up. The click itself still goes to the recorder as every click
// does. A click the recorder drops (queue full) is still counted here, so
// the counter errs on the side of fewer redirects; after a restart the
// stored total, which lacks such a click, is the seed. Links without
// max_clicks never reach this code.
type clickLimits struct {
	mu       sync.Mutex
	counters map[string]*clickCounter // link ID → counter
}

type clickCounter struct {
	mu     sync.Mutex
	seeded bool
	used   int64
}

// counter returns the counter of the link id, created unseeded.
func (c *clickLimits) counter(id string) *clickCounter {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counters == nil {
		c.counters = map[string]*clickCounter{}
	}
	n := c.counters[id]
	if n == nil {
		n = &clickCounter{}
		c.counters[id] = n
	}
	return n
}

// seed sets the counter of l from its stored total, with the clicks the
// recorder holds written first. The caller holds n.mu.
func (s *Server) seedClicks(ctx context.Context, n *clickCounter, l *link.Link) error {
	if n.seeded {
		return nil
	}
	if s.recorder != nil {
		if err := s.recorder.Flush(ctx); err != nil {
			return err
		}
	}
	stored, err := s.links.FindLinkByID(ctx, l.WorkspaceID, l.ID)
	if err != nil {
		return err
	}
	n.used, n.seeded = stored.Clicks, true
	return nil
}

// reserveClick takes one of the clicks left to l (consume, for a GET) or
// only looks whether one is left (a HEAD). ok is false once the link is
// used up.
func (s *Server) reserveClick(ctx context.Context, l *link.Link, consume bool) (ok bool, err error) {
	n := s.clickLimits.counter(l.ID)
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := s.seedClicks(ctx, n, l); err != nil {
		return false, err
	}
	if n.used >= l.MaxClicks {
		return false, nil
	}
	if consume {
		n.used++
	}
	return true, nil
}

// linkGone says why a link no longer sends visitors to its destination.
type linkGone int

const (
	linkLive linkGone = iota
	linkExpired
	linkUsedUp
	linkBlocked
)

// controlRedirect applies the link controls of expiry and limits and the
// blocklist to a redirect of l at now (or to the password form's POST). It
// answers and returns true when the link does not go to its destination;
// a GET of a link with max_clicks that goes on has had its click reserved,
// unless the link has a password: its click is taken once the visitor is
// through (takeClick), as the form is no click.
func (s *Server) controlRedirect(w http.ResponseWriter, r *http.Request, l *link.Link, now time.Time) bool {
	gone := linkLive
	switch {
	case s.blocklist.blocks(l.DestinationURL):
		gone = linkBlocked
	case l.ExpiredAt(now):
		gone = linkExpired
	case l.MaxClicks > 0:
		// A link-preview bot fetching a social card is no click.
		click := r.Method == http.MethodGet && l.PasswordHash == "" && (l.OG == nil || !analytics.PreviewBot(r.Header.Get("User-Agent")))
		ok, err := s.reserveClick(r.Context(), l, click)
		if err != nil {
			s.writeError(w, r, err)
			return true
		}
		if !ok {
			gone = linkUsedUp
		}
	}
	if gone == linkLive {
		return false
	}
	s.goneRedirect(w, r, l, gone)
	return true
}

// takeClick reserves the click of a visitor let through a protected link
// with max_clicks (the right password posted, an unlock cookie, the
// X-Link-Password header), under the same lock and counter as every click
// of the link. Once the link is used up, or after an error, it has
// answered and returns false.
func (s *Server) takeClick(w http.ResponseWriter, r *http.Request, l *link.Link) bool {
	if l.MaxClicks <= 0 || r.Method == http.MethodHead {
		return true
	}
	ok, err := s.reserveClick(r.Context(), l, true)
	if err != nil {
		s.writeError(w, r, err)
		return false
	}
	if !ok {
		s.goneRedirect(w, r, l, linkUsedUp)
	}
	return ok
}

// goneRedirect answers a redirect of l that no longer goes to its
// destination: to expired_url, or 410.
func (s *Server) goneRedirect(w http.ResponseWriter, r *http.Request, l *link.Link, gone linkGone) {
	if gone != linkBlocked && l.ExpiredURL != "" && !s.loops(l.ExpiredURL) {
		h := w.Header()
		h["Location"] = []string{asciiURL(l.ExpiredURL)}
		h["Cache-Control"] = cacheTemporary
		w.WriteHeader(http.StatusFound)
		return
	}
	s.goneAnswer(w, r, l, gone)
}

var gonePage = template.Must(template.New("410").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.Title}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#222}</style></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p></body></html>
`))

type goneText struct{ Title, Text string }

func goneMessage(l *link.Link, gone linkGone) goneText {
	code := "/" + l.Alias
	switch gone {
	case linkBlocked:
		return goneText{"Link disabled", "The short link " + code + " has been disabled: its destination is on this service's blocklist."}
	case linkUsedUp:
		return goneText{"Link expired", "The short link " + code + " has reached its click limit and no longer redirects."}
	default:
		return goneText{"Link expired", "The short link " + code + " has expired and no longer redirects."}
	}
}

// goneAnswer answers 410 Gone: a small page for browsers (and for any
// client that does not ask for JSON), problem+json for API clients.
func (s *Server) goneAnswer(w http.ResponseWriter, r *http.Request, l *link.Link, gone linkGone) {
	msg := goneMessage(l, gone)
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if strings.Contains(r.Header.Get("Accept"), "json") {
		code := "gone"
		h.Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusGone)
		if r.Method != http.MethodHead {
			_ = jsonEncode(w, problem{Type: problemTypeBase + code, Title: msg.Title, Status: http.StatusGone, Detail: msg.Text, Code: code})
		}
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusGone)
	if r.Method != http.MethodHead {
		_ = gonePage.Execute(w, msg)
	}
}

// pageCSP is the Content-Security-Policy of the small pages of links
// (410, preview): no script, no frame, inline style only.
const pageCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
