package server

// Links that no longer send visitors to their destination: expired, used
// up (the click limit, counted in redirect_click_limits.go) or blocked,
// and the answer they get instead (expired_url or 410).

import (
	"context"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
)

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
	// A link-preview bot fetching a social card is no click.
	click := l.MaxClicks > 0 && r.Method == http.MethodGet && l.PasswordHash == "" &&
		(l.OG == nil || !analytics.PreviewBot(r.Header.Get("User-Agent"))) && !s.untracked(r)
	gone, err := s.linkState(r.Context(), l, now, click)
	if err != nil {
		s.writeError(w, r, err)
		return true
	}
	if gone == linkLive {
		return false
	}
	s.goneRedirect(w, r, l, gone, false)
	return true
}

// linkState says whether l still goes to its destination at now: the
// blocklist, then the expiry, then the click limit, whose click it takes
// when consume is set.
func (s *Server) linkState(ctx context.Context, l *link.Link, now time.Time, consume bool) (linkGone, error) {
	switch {
	case s.blocklist.blocksLinkAt(l, now):
		return linkBlocked, nil
	case l.ExpiredAt(now):
		return linkExpired, nil
	case l.MaxClicks > 0:
		ok, err := s.reserveClick(ctx, l, now, consume)
		if err != nil {
			return linkLive, err
		}
		if !ok {
			return linkUsedUp, nil
		}
	}
	return linkLive, nil
}

// goneRedirect answers a redirect of l that no longer goes to its
// destination: to expired_url, or 410. An expired_url on the blocklist is
// not followed: 410 with the blocklist's notice, as a blocked destination
// answers. The expired_url of a protected link is, like its destination,
// for those who know the password: a visitor not unlocked yet (unlocked
// false: the request has not been looked at) is asked for it as on a live
// link (the form; 401 or 429 for X-Link-Password), and a POST of the form
// has its password checked, before the redirect.
func (s *Server) goneRedirect(w http.ResponseWriter, r *http.Request, l *link.Link, gone linkGone, unlocked bool) {
	if gone != linkBlocked && l.ExpiredURL != "" && !s.loops(l.ExpiredURL) {
		if !s.blocklist.blocks(l.ExpiredURL) {
			if l.PasswordHash != "" && !unlocked && !s.unlocked(w, r, l) {
				return
			}
			h := w.Header()
			h["Location"] = []string{asciiURL(l.ExpiredURL)}
			h["Cache-Control"] = cacheTemporary
			w.WriteHeader(http.StatusFound)
			return
		}
		gone = linkBlocked
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
	writePage(w, r, http.StatusGone, pageCSP, gonePage, msg)
}
