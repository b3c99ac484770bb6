package auth

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/linkbolt/linkbolt/link"
)

// ErrProviderUnreachable is returned (wrapped) while the OpenID Connect
// provider's discovery document cannot be read. The server answers 503.
var ErrProviderUnreachable = errors.New("auth: the OpenID Connect provider is unreachable")

// OIDCScopes are the scopes linkbolt asks the provider for: the ID token
// must carry the e-mail address and whether the provider verified it.
var OIDCScopes = []string{oidc.ScopeOpenID, "email", "profile"}

// discoveryRetry is the shortest time between two attempts to read an
// unreachable provider's discovery document, so that a burst of sign-ins
// while it is down does not become a burst of outgoing requests.
const discoveryRetry = 5 * time.Second

// oidcTimeout bounds each request to the provider.
const oidcTimeout = 10 * time.Second

// OIDC signs users in with an OpenID Connect provider (auth.oidc.*): the
// authorization code flow with PKCE (S256), state and nonce. The provider
// is discovered lazily: at start-up (Discover, in the background) and
// again on the first sign-in after a failure, at most every 5 s, so that a
// provider that is down never stops linkbolt from starting.
//
// OIDC is safe for concurrent use.
type OIDC struct {
	// Issuer is the provider's issuer URL; discovery reads
	// Issuer + "/.well-known/openid-configuration".
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is linkbolt's callback, {base_url}/v1/auth/oidc/callback.
	RedirectURL string
	// AllowedDomains are the e-mail domains (lower case) that may sign in;
	// none means any.
	AllowedDomains []string
	// AutoCreate creates a user for a verified e-mail no user has yet.
	AutoCreate bool
	// Client makes the requests to the provider; nil means a client with a
	// 10 s timeout.
	Client *http.Client
	// Now is the clock for ID token expiry and discovery retries; nil
	// means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	provider *oidc.Provider
	lastTry  time.Time // of the last failed discovery
}

// OIDCIdentity is who the provider says signed in, after every check.
type OIDCIdentity struct {
	// Subject is the provider's stable ID of the person (sub).
	Subject string
	// Email is the verified address, in lower case.
	Email string
	// Name is the display name the provider gave, if any.
	Name string
}

func (o *OIDC) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (o *OIDC) client() *http.Client {
	if o.Client == nil {
		return &http.Client{Timeout: oidcTimeout}
	}
	return o.Client
}

// Discover reads the provider's discovery document, unless it has been
// read already. A failure is ErrProviderUnreachable wrapping the cause; a
// further call within 5 s of a failure fails at once without a request.
func (o *OIDC) Discover(ctx context.Context) error {
	_, err := o.discover(ctx, false)
	return err
}

// discover returns the provider, reading its discovery document when it
// has not been read yet. force ignores the retry pause (start-up).
func (o *OIDC) discover(ctx context.Context, force bool) (*oidc.Provider, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, nil
	}
	if !force && !o.lastTry.IsZero() && o.now().Sub(o.lastTry) < discoveryRetry {
		return nil, fmt.Errorf("%w: the last attempt failed %s ago", ErrProviderUnreachable, o.now().Sub(o.lastTry).Round(time.Second))
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, o.client()), oidcTimeout)
	defer cancel()
	p, err := oidc.NewProvider(ctx, o.Issuer)
	if err != nil {
		o.lastTry = o.now()
		return nil, fmt.Errorf("%w: %w", ErrProviderUnreachable, err)
	}
	o.provider = p
	return p, nil
}

// oauth2Config returns the code flow's configuration at provider p.
func (o *OIDC) oauth2Config(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{
		ClientID: o.ClientID, ClientSecret: o.ClientSecret, RedirectURL: o.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: OIDCScopes,
	}
}

// AuthCodeURL returns the provider's authorization URL for flow: state,
// nonce and the S256 challenge of its verifier. ErrProviderUnreachable
// while the provider cannot be discovered.
func (o *OIDC) AuthCodeURL(ctx context.Context, flow OIDCFlow) (string, error) {
	p, err := o.discover(ctx, false)
	if err != nil {
		return "", err
	}
	return o.oauth2Config(p).AuthCodeURL(flow.State, oidc.Nonce(flow.Nonce),
		oauth2.S256ChallengeOption(flow.Verifier)), nil
}

// Exchange redeems the authorization code with flow's verifier, verifies
// the ID token (signature, issuer, audience = ClientID, expiry, nonce) and
// the e-mail it names (verified, in AllowedDomains), and returns who signed
// in. Errors: EUNAUTHORIZED when the provider refuses the code (used
// already, expired, wrong verifier) or the ID token fails a check;
// EFORBIDDEN for an unverified e-mail or one outside AllowedDomains, with
// the identity too when the token named an address (for the audit log:
// never a signed-in person); ErrProviderUnreachable while discovery fails; anything else is internal.
func (o *OIDC) Exchange(ctx context.Context, code string, flow OIDCFlow) (*OIDCIdentity, error) {
	p, err := o.discover(ctx, false)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, oidcTimeout)
	defer cancel()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, o.client())
	tok, err := o.oauth2Config(p).Exchange(ctx, code, oauth2.VerifierOption(flow.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			return nil, link.Errorf(link.EUNAUTHORIZED, "the sign-in provider refused the code (%s): it works once and for a few minutes; sign in again",
				cmp.Or(re.ErrorCode, re.Response.Status))
		}
		return nil, fmt.Errorf("%w: token request: %w", ErrProviderUnreachable, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, link.Errorf(link.EUNAUTHORIZED, "the sign-in provider sent no ID token")
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: o.ClientID, Now: o.now}).Verify(ctx, raw)
	if err != nil {
		return nil, link.Errorf(link.EUNAUTHORIZED, "the ID token from the sign-in provider is not valid for this server: %s", idTokenProblem(err))
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(flow.Nonce)) != 1 {
		return nil, link.Errorf(link.EUNAUTHORIZED, "the ID token from the sign-in provider is not valid for this server: its nonce is not the one of this sign-in")
	}
	return o.identity(idt)
}

// identity reads and checks the e-mail claims of a verified ID token.
func (o *OIDC) identity(idt *oidc.IDToken) (*OIDCIdentity, error) {
	var claims struct {
		Email         string `json:"email"`
		EmailVerified any    `json:"email_verified"`
		Name          string `json:"name"`
	}
	if err := idt.Claims(&claims); err != nil {
		return nil, link.Errorf(link.EUNAUTHORIZED, "the ID token's claims cannot be read")
	}
	email := link.NormalizeEmail(claims.Email)
	if email == "" {
		return nil, link.Errorf(link.EFORBIDDEN, "the sign-in provider sent no e-mail address: allow linkbolt the email scope")
	}
	// Most providers send a boolean; a few send the string "true".
	refused := &OIDCIdentity{Subject: idt.Subject, Email: email}
	if v := claims.EmailVerified; v != true && v != "true" {
		return refused, link.Errorf(link.EFORBIDDEN, "the sign-in provider has not verified the e-mail address %s", email)
	}
	if !o.DomainAllowed(email) {
		return refused, link.Errorf(link.EFORBIDDEN, "e-mail addresses at %s may not sign in to this server", emailDomain(email))
	}
	return &OIDCIdentity{Subject: idt.Subject, Email: email, Name: strings.TrimSpace(claims.Name)}, nil
}

// DomainAllowed reports whether email's domain is in AllowedDomains (any
// domain when there are none). Subdomains are not included.
func (o *OIDC) DomainAllowed(email string) bool {
	if len(o.AllowedDomains) == 0 {
		return true
	}
	d := emailDomain(email)
	for _, a := range o.AllowedDomains {
		if d != "" && link.SameEmail(a, d) {
			return true
		}
	}
	return false
}

// emailDomain returns the part after the last @, its ASCII letters in
// lower case (see link.NormalizeEmail).
func emailDomain(email string) string {
	i := strings.LastIndexByte(email, '@')
	if i < 0 {
		return ""
	}
	return link.NormalizeEmail(email[i+1:])
}

// idTokenProblem names what is wrong with an ID token, without echoing it.
func idTokenProblem(err error) string {
	var exp *oidc.TokenExpiredError
	switch msg := err.Error(); {
	case errors.As(err, &exp):
		return "it has expired"
	case strings.Contains(msg, "expected audience"):
		return "it was issued for another client"
	case strings.Contains(msg, "different provider"):
		return "it was issued by another provider"
	case strings.Contains(msg, "nbf"):
		return "it is not valid yet: check the clocks of linkbolt and the provider"
	case strings.Contains(msg, "signature"):
		return "its signature does not verify"
	default:
		return "it fails verification"
	}
}
