package server

import (
	"crypto/subtle"
	"html/template"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/linkbolt/linkbolt/dashboard"
	"github.com/linkbolt/linkbolt/link"
)

var homePage = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>linkbolt</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:12vh auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2em}</style></head>
<body><h1>linkbolt</h1>
<p>This linkbolt server is running.</p>
{{if .}}<p>It is not set up yet: open the setup link printed in the server's log to create the first admin.</p>{{end}}
<p>API reference: <a href="/v1/openapi.json"><code>/v1/openapi.json</code></a>. Health: <a href="/healthz"><code>/healthz</code></a>.</p>
</body></html>
`))

// serveHome opens the dashboard for a browser once the instance is set up,
// and otherwise answers the small status page (for curl, probes, and a
// browser before setup, which the page points to the setup link).
func (s *Server) serveHome(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	s.recordOrphan(r, nil, link.OrphanBaseURL)
	pending := s.pendingSetup() != nil
	if !pending && acceptsHTML(r) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Location", dashboard.Prefix)
		w.WriteHeader(http.StatusFound)
		return
	}
	writePage(w, r, http.StatusOK, pageCSP, homePage, pending)
}

// setupPage is the one-time setup form. Its text wraps anywhere: the
// dashboard's address it shows when done is one long word, which would
// otherwise run off a phone's screen. The login token /v1/setup answers is
// for API clients: a person signs in on the dashboard, and the page never
// shows it.
var setupPage = template.Must(template.New("setup").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Set up linkbolt</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:10vh auto;padding:0 1rem;color:#222;overflow-wrap:anywhere}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.4rem;font:inherit;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1rem;font:inherit}#msg{margin-top:1rem}</style></head>
<body><h1>Set up linkbolt</h1>
{{if .}}<p>Create the instance admin. This link works once.</p>
<form id="f"><input type="hidden" name="token" value="{{.}}">
<label for="email">E-mail</label><input id="email" name="email" type="email" required autocomplete="username">
<label for="password">Password (at least 10 characters)</label><input id="password" name="password" type="password" minlength="10" required autocomplete="new-password">
<label for="ws">Workspace name</label><input id="ws" name="workspace_name" value="Default">
<button type="submit">Create admin</button></form><p id="msg" role="status"></p>
<script>` + setupScript + `</script>{{else}}<p>This instance is set up already, or the setup link is not valid. <a href="/app/">Sign in to the dashboard</a> instead.</p>{{end}}
</body></html>
`))

// setupScript sends the setup form; the page's policy runs it alone.
const setupScript = `
document.getElementById('f').addEventListener('submit', async e => {
  e.preventDefault();
  const body = Object.fromEntries(new FormData(e.target));
  const res = await fetch('/v1/setup', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
  const data = await res.json();
  document.getElementById('msg').textContent = res.ok
    ? 'Done. Open the dashboard at ' + location.origin + '/app/ and sign in with this e-mail and password.'
    : (data.detail || 'Setup failed.');
  if (res.ok) {
    e.target.remove();
    const a = document.createElement('a');
    a.href = '/app/';
    a.id = 'open-dashboard';
    a.textContent = 'Open the dashboard';
    document.getElementById('msg').after(a);
  }
});
`

var setupPageCSP = scriptPageCSP(setupScript)

// serveSetupPage shows the one-time setup form when the token matches.
func (s *Server) serveSetupPage(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	tok := ""
	if want := s.pendingSetup(); want != nil && subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("token")), []byte(*want)) == 1 {
		tok = *want
	}
	writePage(w, r, http.StatusOK, setupPageCSP, setupPage, tok)
}
