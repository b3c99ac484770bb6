package server

import (
	"html/template"
	"net/http"

	"github.com/julienschmidt/httprouter"
)

// invitePage accepts an invitation in a browser until the dashboard takes
// this path over. The token is in the fragment (#token=…), which the page
// reads and the server never sees. A new person chooses a name and a
// password; someone with an account signs in first.
var invitePage = template.Must(template.New("invite").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Join a linkbolt workspace</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:10vh auto;padding:0 1rem;color:#222;overflow-wrap:anywhere}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.4rem;font:inherit;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1rem;font:inherit}#msg{margin-top:1rem}</style></head>
<body><h1>Join a linkbolt workspace</h1>
<p>This invitation link works once.</p>
<h2>New to linkbolt</h2>
<form id="new"><label for="name">Your name</label><input id="name" name="name" required autocomplete="name">
<label for="pw">Password (at least 10 characters)</label><input id="pw" name="password" type="password" minlength="10" required autocomplete="new-password">
<button type="submit">Create account and join</button></form>
<h2>I have an account</h2>
<form id="old"><label for="email">E-mail</label><input id="email" name="email" type="email" required autocomplete="username">
<label for="opw">Password</label><input id="opw" name="password" type="password" required autocomplete="current-password">
<button type="submit">Sign in and join</button></form>
<p id="msg" role="status"></p>
<script>
const token = new URLSearchParams(location.hash.slice(1)).get('token') || '';
const msg = document.getElementById('msg');
async function post(path, body, jwt) {
  const headers = {'Content-Type': 'application/json'};
  if (jwt) headers.Authorization = 'Bearer ' + jwt;
  const res = await fetch(path, {method: 'POST', headers, body: JSON.stringify(body)});
  return [res.ok, await res.json()];
}
function done(data, jwt) {
  msg.textContent = 'You joined ' + data.workspace.name + ' as ' + data.workspace.role + '. Your login token: ' + jwt;
  document.querySelectorAll('form').forEach(f => f.remove());
}
document.getElementById('new').addEventListener('submit', async e => {
  e.preventDefault();
  const [ok, data] = await post('/v1/invitations/accept', {token, ...Object.fromEntries(new FormData(e.target))});
  ok ? done(data, data.token) : msg.textContent = data.detail || 'That did not work.';
});
document.getElementById('old').addEventListener('submit', async e => {
  e.preventDefault();
  const [ok, login] = await post('/v1/auth/login', Object.fromEntries(new FormData(e.target)));
  if (!ok) { msg.textContent = login.detail || 'Sign-in failed.'; return; }
  const [ok2, data] = await post('/v1/invitations/accept', {token}, login.token);
  ok2 ? done(data, login.token) : msg.textContent = data.detail || 'That did not work.';
});
</script>
</body></html>
`))

// serveInvitePage shows the form that accepts an invitation.
func (s *Server) serveInvitePage(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	_ = invitePage.Execute(w, nil)
}
