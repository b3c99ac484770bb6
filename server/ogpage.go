package server

// The pages of the link controls: the social card that link-preview bots
// read and the password form people fill in. Neither runs script.

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"

	"github.com/linkbolt/linkbolt/link"
)

const controlPageStyle = `body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:15vh auto;padding:0 1rem;color:#222}` +
	`input,button{font:inherit;padding:.4rem .6rem}p.err{color:#b00020}`

// controlPageCSP allows the pages nothing but their own style and a form
// posted back to this host.
var controlPageCSP = "default-src 'none'; style-src 'sha256-" + cspHash(controlPageStyle) +
	"'; img-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// cspHash is the base64 SHA-256 of an inline style or script, as a CSP
// source ('sha256-…') names it.
func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

var passwordPage = template.Must(template.New("password").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>Password required</title>
<style>` + controlPageStyle + `</style></head>
<body><h1>Password required</h1><p>The short link <code>/{{.Code}}</code> is protected. Enter its password to continue.</p>
{{if .Message}}<p class="err" role="alert">{{.Message}}</p>{{end}}
<form method="post" action="/{{.Code}}"><label>Password <input type="password" name="password" required autofocus autocomplete="off"></label>
<button type="submit">Continue</button></form></body></html>
`))

// writePasswordPage answers the password form of l with status and message.
func (s *Server) writePasswordPage(w http.ResponseWriter, r *http.Request, status int, l *link.Link, message string) {
	writePage(w, r, status, controlPageCSP, passwordPage, struct{ Code, Message string }{l.Alias, message})
}

var ogPage = template.Must(template.New("og").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Title}}</title>
<meta property="og:type" content="website">
<meta property="og:url" content="{{.URL}}">
{{if .Title}}<meta property="og:title" content="{{.Title}}">
<meta name="twitter:title" content="{{.Title}}">
{{end}}{{if .Description}}<meta property="og:description" content="{{.Description}}">
<meta name="twitter:description" content="{{.Description}}">
<meta name="description" content="{{.Description}}">
{{end}}{{if .ImageURL}}<meta property="og:image" content="{{.ImageURL}}">
<meta name="twitter:image" content="{{.ImageURL}}">
<meta name="twitter:card" content="summary_large_image">
{{else}}<meta name="twitter:card" content="summary">
{{end}}</head>
<body><h1>{{.Title}}</h1><p>{{.Description}}</p></body></html>
`))

// serveOGPage answers a link-preview bot with l's social card; a GET is
// recorded as a click, which analytics classify as a bot's. Not for a
// link with max_clicks: its stored total seeds its click counter again
// (after a restart, or once the counter was idle), so a fetch recorded
// there would use up a click the counter never gave.
func (s *Server) serveOGPage(w http.ResponseWriter, r *http.Request, l *link.Link) {
	if r.Method != http.MethodHead && l.MaxClicks == 0 {
		s.recordClick(r, l, s.now(), 0) // sent to no variant
	}
	writePage(w, r, http.StatusOK, controlPageCSP, ogPage, struct {
		URL string
		link.OG
	}{s.urls.ShortURL(l), *l.OG})
}
