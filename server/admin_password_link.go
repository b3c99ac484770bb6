package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
)

// PasswordLinkTTL is how long a one-time password link works.
const PasswordLinkTTL = 24 * time.Hour

// passwordLinkRoutes are the one-time links with which a user chooses a
// new password: the instance admin makes one (linkbolt users
// reset-password --setup-link), the user opens /auth/reset-password?token=… (under the reserved word auth, so no alias is shadowed)
// and sends the new password with the token.
func (s *Server) passwordLinkRoutes() {
	s.handle("POST", "/v1/admin/users/:id/password-link", accessAdmin, s.handleAdminPasswordLink)
	s.handle("POST", "/v1/auth/password-reset", accessPublic, s.handlePasswordReset)
	s.page("/auth/reset-password", s.servePasswordResetPage)
}

// resets returns the store of password links: the account service, which
// keeps them beside the users.
func (s *Server) resets() (link.PasswordResets, error) {
	r, ok := s.accounts.(link.PasswordResets)
	if !ok {
		return nil, link.Errorf(link.EINTERNAL, "this server keeps no password links")
	}
	return r, nil
}

type passwordLinkResponse struct {
	URL       string `json:"url"`
	ExpiresAt string `json:"expires_at"`
}

// handleAdminPasswordLink makes a one-time link for the user to choose a
// new password, replacing any earlier link of theirs. The link's token is
// in the answer only; the data file keeps its SHA-256.
func (s *Server) handleAdminPasswordLink(w http.ResponseWriter, r *http.Request, c *caller) error {
	resets, err := s.resets()
	if err != nil {
		return err
	}
	token, hash := NewPasswordLinkToken()
	expires := s.now().Add(PasswordLinkTTL)
	if err := resets.CreatePasswordReset(r.Context(), c.params.ByName("id"), hash, expires); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, passwordLinkResponse{URL: PasswordLinkURL(s.primary.String(), token), ExpiresAt: ts(expires)})
	return nil
}

// NewPasswordLinkToken returns a new random token of a password link
// (256 bits) and its SHA-256.
func NewPasswordLinkToken() (token string, hash []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, PasswordLinkHash(token)
}

// PasswordLinkHash returns the SHA-256 of a password link's token.
func PasswordLinkHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// PasswordLinkURL is the page at base where a password link's token is
// used.
func PasswordLinkURL(base, token string) string {
	return base + "/auth/reset-password?token=" + token
}

type passwordResetRequest struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

// handlePasswordReset sets the password of a password link's user, ends
// every token they held and answers a fresh one. The link works once.
// Attempts are limited per client address as logins are, and the new
// password is hashed only once the token is known to work.
func (s *Server) handlePasswordReset(w http.ResponseWriter, r *http.Request, _ *caller) error {
	var in passwordResetRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Token == "" {
		return &link.Error{Code: link.EINVALID, Message: "token: is required", Fields: []link.FieldError{{Field: "token", Message: "is required"}}}
	}
	if d := s.limiters.Allow("reset-ip:"+s.clientIP(r), s.cfg.LoginPerIP); !d.Allowed {
		secs := retryAfter(w, d.RetryAfter)
		return link.Errorf(link.ERATELIMITED, "too many password link attempts from your address; retry in %d s", secs)
	}
	if err := auth.ValidatePassword("password", in.Password); err != nil {
		return err
	}
	resets, err := s.resets()
	if err != nil {
		return err
	}
	// The token first: hashing is slow, and a stranger's made-up token
	// must not cost it. (UsePasswordReset checks it again as it uses it.)
	if err := resets.CheckPasswordReset(r.Context(), PasswordLinkHash(in.Token), s.now()); err != nil {
		return err
	}
	hash, err := s.hashPassword(w, r, in.Password)
	if err != nil {
		return err
	}
	s.accountMu.Lock()
	u, err := resets.UsePasswordReset(r.Context(), PasswordLinkHash(in.Token), hash, s.now())
	if err == nil {
		s.sessions.SetUser(u)
	}
	s.accountMu.Unlock()
	if err != nil {
		return err
	}
	return s.writeToken(w, http.StatusOK, u)
}

// passwordResetPage is the form of a password link. Whether the token is
// valid is told only when the form is sent (the page reads nothing).
var passwordResetPage = template.Must(template.New("reset").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Choose a password · linkbolt</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:10vh auto;padding:0 1rem;color:#222;overflow-wrap:anywhere}
label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.4rem;font:inherit;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1rem;font:inherit}#msg{margin-top:1rem}</style></head>
<body><h1>Choose a password</h1>
{{if .}}<p>Choose the password you sign in to linkbolt with. This link works once.</p>
<form id="f"><input type="hidden" name="token" value="{{.}}">
<label for="password">New password (at least 10 characters)</label><input id="password" name="password" type="password" minlength="10" required autocomplete="new-password">
<button type="submit">Set password</button></form><p id="msg" role="status"></p>
<script>` + passwordResetScript + `</script>{{else}}<p>This link has no token. Ask the instance admin for a new one.</p>{{end}}
</body></html>
`))

// passwordResetScript sends the form; the page's policy runs it alone.
const passwordResetScript = `
document.getElementById('f').addEventListener('submit', async e => {
  e.preventDefault();
  const body = Object.fromEntries(new FormData(e.target));
  const res = await fetch('/v1/auth/password-reset', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
  const data = await res.json();
  document.getElementById('msg').textContent = res.ok ? 'Done. Sign in with your new password.' : (data.detail || 'That did not work.');
  if (res.ok) {
    e.target.remove();
    const a = document.createElement('a');
    a.href = '/app/';
    a.textContent = 'Open the dashboard';
    document.getElementById('msg').after(a);
  }
});
`

var passwordResetPageCSP = scriptPageCSP(passwordResetScript)

// servePasswordResetPage shows the form of a password link. The token
// stays out of referrers and caches (writePage's headers).
func (s *Server) servePasswordResetPage(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	tok := r.URL.Query().Get("token")
	if len(tok) > 100 {
		tok = ""
	}
	writePage(w, r, http.StatusOK, passwordResetPageCSP, passwordResetPage, tok)
}
