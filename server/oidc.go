package server

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
)

// Single sign-on with OpenID Connect: /v1/auth/oidc/start sends the
// browser to the provider with a fresh state, nonce and PKCE challenge,
// kept in a sealed cookie (auth.FlowSealer) rather than on the server;
// /v1/auth/oidc/callback checks them, redeems the code and hands the
// browser a linkbolt JWT.

// oidcCookie holds the sealed flow of the sign-in in progress; it is sent
// back only to the two OIDC routes.
const (
	oidcCookie     = "linkbolt_oidc"
	oidcCookiePath = "/v1/auth/oidc"
)

// codeProviderUnavailable: the OpenID Connect provider cannot be reached.
const codeProviderUnavailable = "provider_unavailable"

// oidcRetryAfter is the Retry-After of a 503 while the provider is down:
// discovery is retried at most this often.
const oidcRetryAfter = 5 * time.Second

// appPath is where the dashboard lives; a browser signed in by the provider
// is sent there with its token in the fragment.
const appPath = "/app/"

// handleOIDCStart begins a sign-in: 302 to the provider's authorization
// endpoint, with the flow's cookie set. 404 when single sign-on is off.
// With check=true it only says whether a sign-in could start (204), so a
// page can show its button without a redirect to cancel or a flow begun.
func (s *Server) handleOIDCStart(w http.ResponseWriter, r *http.Request, _ *caller) error {
	if s.oidc == nil {
		return errOIDCOff()
	}
	if r.URL.Query().Get("check") == "true" {
		if err := s.oidc.Discover(r.Context()); err != nil {
			return s.oidcUnavailable(w, r, err)
		}
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	flow := s.flows.NewFlow()
	if cs := r.URL.Query().Get("client_state"); cs != "" {
		if !validClientState(cs) {
			return &link.Error{Code: link.EINVALIDREQUEST, Message: "client_state: must be 16 to 64 letters, digits, - or _",
				Fields: []link.FieldError{{Field: "client_state", Message: "must be 16 to 64 letters, digits, - or _"}}}
		}
		flow.ClientState = cs
	}
	to, err := s.oidc.AuthCodeURL(r.Context(), flow)
	if err != nil {
		return s.oidcUnavailable(w, r, err)
	}
	sealed, err := s.flows.Seal(flow)
	if err != nil {
		return err
	}
	s.setFlowCookie(w, sealed, flow.Expires)
	h := w.Header()
	h.Set("Location", to)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusFound)
	return nil
}

// handleOIDCCallback ends a sign-in: the provider sent the browser back
// with a code and the state. The flow's cookie is cleared whatever the
// outcome, so a callback URL works at most once in a browser. The answer
// is a 302 to {base_url}/app/#token=…&expires_at=…[&client_state=…], or
// the token as JSON
// when the client asks for application/json; every failure is
// problem+json.
func (s *Server) handleOIDCCallback(w http.ResponseWriter, r *http.Request, _ *caller) error {
	if s.oidc == nil {
		return errOIDCOff()
	}
	w.Header().Set("Cache-Control", "no-store")
	// The callback URL carries the code: keep it out of any Referer.
	w.Header().Set("Referrer-Policy", "no-referrer")
	s.clearFlowCookie(w)
	if d := s.limiters.Allow("login-ip:"+s.clientIP(r), s.cfg.LoginPerIP); !d.Allowed {
		secs := retryAfter(w, d.RetryAfter)
		return link.Errorf(link.ERATELIMITED, "too many sign-ins from your address; retry in %d s", secs)
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		s.recordLogin(r, nil, "", loginOIDC, "provider_error")
		return link.Errorf(link.EUNAUTHORIZED, "the sign-in provider did not sign you in: %s", providerError(e, q.Get("error_description")))
	}
	flow, err := s.callbackFlow(r)
	if err != nil {
		if link.ErrorCode(err) != link.EINTERNAL {
			s.recordLogin(r, nil, "", loginOIDC, "state")
		}
		return err
	}
	code := q.Get("code")
	if code == "" {
		s.recordLogin(r, nil, "", loginOIDC, "no_code")
		return &link.Error{Code: link.EINVALIDREQUEST, Message: "code: the provider sent no code",
			Fields: []link.FieldError{{Field: "code", Message: "is required"}}}
	}
	id, err := s.oidc.Exchange(r.Context(), code, flow)
	if err != nil {
		// The provider's refusals; an outage (503) or an internal error is
		// no attempt refused, and is not recorded.
		switch link.ErrorCode(err) {
		case link.EUNAUTHORIZED:
			s.recordLogin(r, nil, "", loginOIDC, "token_refused")
		case link.EFORBIDDEN:
			email := ""
			if id != nil {
				email = id.Email // refused: unverified, or outside allowed_domains
			}
			s.recordLogin(r, nil, email, loginOIDC, "email_refused")
		}
		return s.oidcUnavailable(w, r, err)
	}
	u, err := s.oidcUser(r, id)
	if err != nil {
		return err
	}
	// The stored generation counts too: another instance on the same
	// database may have ended the user's tokens since this one heard.
	tok, exp, err := s.jwt.IssueGeneration(u.ID, max(u.TokenGeneration, s.sessions.Generation(u.ID)))
	if err != nil {
		return err
	}
	s.recordLogin(r, u, u.Email, loginOIDC, "")
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, tokenResponse{Token: tok, ExpiresAt: ts(exp)})
		return nil
	}
	// A JWT is URL-safe as it is.
	frag := "token=" + tok + "&expires_at=" + url.QueryEscape(ts(exp))
	if flow.ClientState != "" {
		frag += "&client_state=" + flow.ClientState // URL-safe, checked at the start
	}
	w.Header().Set("Location", s.primary.String()+appPath+"#"+frag)
	w.WriteHeader(http.StatusFound)
	return nil
}

// validClientState reports whether s may be a sign-in's client_state: 16
// to 64 URL-safe characters, so it goes into the fragment as it is.
func validClientState(s string) bool {
	if len(s) < 16 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// callbackFlow returns the flow of the cookie when the request's state is
// the one it was started with. EINVALIDREQUEST otherwise: a callback
// without the cookie (another browser, a replay, an expired sign-in) or
// with another state (a forged callback).
func (s *Server) callbackFlow(r *http.Request) (auth.OIDCFlow, error) {
	c, err := r.Cookie(oidcCookie)
	if err != nil {
		return auth.OIDCFlow{}, link.Errorf(link.EINVALIDREQUEST,
			"this sign-in cannot be matched to your browser (no sign-in in progress, or it was used already): start it again")
	}
	flow, err := s.flows.Open(c.Value)
	if err != nil {
		return auth.OIDCFlow{}, err
	}
	state := r.URL.Query().Get("state")
	if state == "" || subtle.ConstantTimeCompare([]byte(state), []byte(flow.State)) != 1 {
		return auth.OIDCFlow{}, &link.Error{Code: link.EINVALIDREQUEST,
			Message: "state: does not match the sign-in this browser started; start it again",
			Fields:  []link.FieldError{{Field: "state", Message: "does not match the sign-in this browser started"}}}
	}
	return flow, nil
}

// oidcUser returns the user with the identity's verified e-mail (any
// case), or creates one when auth.oidc.auto_create is on. EFORBIDDEN when
// no user has the e-mail and none may be created, or the user is disabled
// (each recorded as a failed sign-in).
func (s *Server) oidcUser(r *http.Request, id *auth.OIDCIdentity) (*link.User, error) {
	u, err := s.users.FindUserByEmail(r.Context(), id.Email)
	if err == nil {
		if u.Disabled {
			s.recordLogin(r, u, u.Email, loginOIDC, "disabled")
			return nil, link.Errorf(link.EFORBIDDEN, "this account is disabled: ask the instance admin")
		}
		return u, nil
	} else if !isNotFound(err) {
		return nil, err
	}
	if !s.oidc.AutoCreate {
		s.recordLogin(r, nil, id.Email, loginOIDC, "unknown_email")
		return nil, link.Errorf(link.EFORBIDDEN, "no linkbolt user has the e-mail address %s: ask an owner for an invitation", id.Email)
	}
	// No password: this user signs in through the provider only (a
	// password login compares against nothing and fails like a wrong one).
	u = &link.User{Email: id.Email, Name: oidcName(id)}
	// The person makes their own account (user.created, via oidc): they
	// are its actor, known by e-mail until it has an ID.
	ctx := link.WithActor(r.Context(), link.Actor{Type: link.ActorUser, Name: id.Email}, s.clientAddress(r))
	err = s.users.CreateUser(ctx, u)
	if link.ErrorCode(err) == link.ECONFLICT {
		// Two first sign-ins at once: the other one created the user.
		return s.users.FindUserByEmail(r.Context(), id.Email)
	} else if err != nil {
		return nil, err
	}
	s.logger.Info("created a user at their first single sign-on", "user", u.ID)
	return u, nil
}

// oidcName is the name of a user made at their first sign-in: the one the
// provider gave, else the local part of their e-mail address (a name is
// required of every user).
func oidcName(id *auth.OIDCIdentity) string {
	if name := strings.TrimSpace(id.Name); name != "" && link.CheckUserName(name) == "" {
		return name
	}
	local, _, _ := strings.Cut(id.Email, "@")
	return local
}

// oidcUnavailable turns auth.ErrProviderUnreachable into a 503 with
// Retry-After, logging the cause (the client sees none of it); other errors
// pass through.
func (s *Server) oidcUnavailable(w http.ResponseWriter, r *http.Request, err error) error {
	if !errors.Is(err, auth.ErrProviderUnreachable) {
		return err
	}
	s.logger.Warn("single sign-on: the OpenID Connect provider is unreachable", "path", r.URL.Path, "err", err)
	secs := retryAfter(w, oidcRetryAfter)
	return errHTTP(codeProviderUnavailable, fmt.Sprintf("the sign-in provider cannot be reached; retry in %d s, or sign in with your password", secs))
}

func errOIDCOff() error {
	return link.Errorf(link.ENOTFOUND, "single sign-on is not set up on this server (auth.oidc.issuer)")
}

func (s *Server) setFlowCookie(w http.ResponseWriter, value string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name: oidcCookie, Value: value, Path: oidcCookiePath,
		MaxAge: int(auth.OIDCFlowTTL / time.Second), Expires: expires,
		HttpOnly: true, Secure: s.primary.Scheme == "https", SameSite: http.SameSiteLaxMode,
	})
}

func (s *Server) clearFlowCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: oidcCookie, Value: "", Path: oidcCookiePath, MaxAge: -1,
		HttpOnly: true, Secure: s.primary.Scheme == "https", SameSite: http.SameSiteLaxMode,
	})
}

// wantsJSON reports whether the client asked for JSON rather than a page:
// an Accept header naming application/json and not text/html.
func wantsJSON(r *http.Request) bool {
	asked := false
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			switch {
			case err != nil:
			case mt == "text/html":
				return false
			case mt == "application/json":
				asked = true
			}
		}
	}
	return asked
}

// providerError is the provider's error code and its description, cut
// short and limited to printable ASCII, for a problem's detail.
func providerError(code, desc string) string {
	clean := func(s string, n int) string {
		b := make([]byte, 0, min(len(s), n))
		for i := 0; i < len(s) && len(b) < n; i++ {
			if c := s[i]; c >= 0x20 && c < 0x7f {
				b = append(b, c)
			}
		}
		return string(b)
	}
	if desc = clean(desc, 200); desc != "" {
		return clean(code, 64) + " (" + desc + ")"
	}
	return clean(code, 64)
}
