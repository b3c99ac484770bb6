package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
)

// caller is who makes an API request, after the three steps of the
// pipeline: authenticated, authorized, and scoped to a workspace.
type caller struct {
	key       *link.APIKey    // set for API keys
	user      *link.User      // set for logged-in users
	workspace *link.Workspace // nil on routes without a workspace
	scope     link.Scope
	role      link.Role // a user's role in workspace; empty for keys
	params    httprouter.Params
	token     auth.Claims // the JWT's claims, for logged-in users
}

// limiterKey names the rate limiter a request draws from. The plan's rate
// is the workspace's budget, shared by all its keys and users, so minting
// keys never buys requests. A user's request outside any workspace (/v1/me,
// /v1/workspaces) draws from a limiter of the user's own.
func (c *caller) limiterKey() string {
	if c.workspace != nil {
		return "ws:" + c.workspace.ID
	}
	return "user:" + c.user.ID
}

// credential returns the token of a request and where it came from. The
// Authorization header wins over X-API-Key, which wins over the query.
func credential(r *http.Request) (token string, fromAuthorization bool, err error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
			return "", false, link.Errorf(link.EUNAUTHORIZED, "the Authorization header must be 'Bearer <token>'")
		}
		return strings.TrimSpace(tok), true, nil
	}
	if h := r.Header.Get("X-API-Key"); h != "" {
		return strings.TrimSpace(h), false, nil
	}
	if q := r.URL.Query().Get("api_key"); q != "" {
		return q, false, nil
	}
	return "", false, errNoCredential
}

// authorize runs the three steps for a route of the given access: it
// authenticates the credential (401), rates it (429), checks that its scope
// or role allows the action (403) and picks the workspace it acts in (404
// when the user is not a member: another workspace is never revealed).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, a access) (*caller, error) {
	c, err := s.authenticate(r)
	if err != nil {
		return nil, err
	}
	if c.user != nil && (a == accessRead || a == accessWrite) {
		if err := s.pickWorkspace(r, c); err != nil {
			return nil, err
		}
	}
	if err := s.rate(w, r, c); err != nil {
		return nil, err
	}
	if a == accessRead || a == accessWrite {
		if err := checkKeyResources(c, r); err != nil {
			return nil, err
		}
	}
	switch a {
	case accessUser, accessAdmin:
		if c.user == nil {
			return nil, link.Errorf(link.EFORBIDDEN, "this endpoint needs a user token from POST /v1/auth/login; API keys cannot use it")
		}
		if a == accessAdmin && !c.user.Admin {
			return nil, link.Errorf(link.EFORBIDDEN, "only the instance admin may do this")
		}
	case accessWrite:
		if !c.scope.Allows(link.ScopeReadWrite) {
			if c.key != nil && c.key.Scope != c.scope {
				return nil, link.Errorf(link.EFORBIDDEN, "the member who made this API key has the read role now, so the key reads only; %s %s needs read_write", r.Method, r.URL.Path)
			}
			if c.key != nil {
				return nil, link.Errorf(link.EFORBIDDEN, "this API key has the read scope; %s %s needs read_write", r.Method, r.URL.Path)
			}
			return nil, link.Errorf(link.EFORBIDDEN, "your role in this workspace is read; %s %s needs read_write", r.Method, r.URL.Path)
		}
	}
	return c, nil
}

// authenticate resolves the credential of a request: an API key (in any of
// the three places) or a JWT (only in the Authorization header).
func (s *Server) authenticate(r *http.Request) (*caller, error) {
	token, fromAuthorization, err := credential(r)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	if !auth.LooksLikeKey(token, s.cfg.KeyPrefix) {
		if !fromAuthorization {
			return nil, link.Errorf(link.EUNAUTHORIZED, "malformed API key: keys start with %q", s.cfg.KeyPrefix+"_live_")
		}
		claims, err := s.verified.VerifyClaims(token)
		if err != nil {
			return nil, err
		}
		if s.callers != nil {
			return s.tokenCaller(ctx, claims)
		}
		if err := s.sessions.Check(claims); err != nil {
			return nil, err
		}
		u, err := s.users.FindUserByID(ctx, claims.UserID)
		if isNotFound(err) {
			return nil, link.Errorf(link.EUNAUTHORIZED, "the token's user no longer exists")
		} else if err != nil {
			return nil, err
		}
		// Sessions knows of the changes made through this server; the
		// record, read anyway, also holds those made by another process on
		// a shared database (another instance, or linkbolt users on
		// PostgreSQL).
		if u.Disabled {
			return nil, link.Errorf(link.EUNAUTHORIZED, "your account is disabled: ask the instance admin")
		}
		if claims.Generation < u.TokenGeneration {
			return nil, link.Errorf(link.EUNAUTHORIZED, "this token was ended by a password change or a log-out everywhere: log in again")
		}
		return &caller{user: u, token: claims}, nil
	}
	if err := s.tokens.Check(token); err != nil {
		return nil, err
	}
	hash := auth.HashToken(token)
	k, ws, creator, err := s.findKey(ctx, hash)
	if isNotFound(err) {
		return nil, link.Errorf(link.EUNAUTHORIZED, "unknown API key")
	} else if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(k.Hash, hash) != 1 {
		return nil, link.Errorf(link.EUNAUTHORIZED, "unknown API key")
	}
	now := s.now()
	switch st := k.State(now); st {
	case link.KeyRevoked:
		return nil, link.Errorf(link.EUNAUTHORIZED, "this API key was revoked")
	case link.KeyExpired:
		return nil, link.Errorf(link.EUNAUTHORIZED, "this API key expired at %s", k.ExpiresAt.UTC().Format(timeFormat))
	}
	scope, err := s.keyScope(ctx, k, creator)
	if err != nil {
		return nil, err
	}
	if ws == nil {
		ws, err = s.workspaces.FindWorkspaceByID(ctx, k.WorkspaceID)
		if isNotFound(err) {
			return nil, link.Errorf(link.EUNAUTHORIZED, "the API key's workspace no longer exists")
		} else if err != nil {
			return nil, err
		}
	}
	s.keys.TouchKey(k.ID, now)
	return &caller{key: k, workspace: ws, scope: scope}, nil
}

// tokenCaller authenticates a verified token on a store other processes
// share: the user, their disabled flag and generation and the token's
// logout are read from the store, in one round trip, so that what another
// instance ended is refused here on the very next request. The checks and
// their answers are those of Sessions.Check.
func (s *Server) tokenCaller(ctx context.Context, claims auth.Claims) (*caller, error) {
	u, revoked, err := s.callers.FindTokenUser(ctx, claims.UserID, claims.ID, s.now())
	if isNotFound(err) {
		return nil, link.Errorf(link.EUNAUTHORIZED, "the token's user no longer exists")
	} else if err != nil {
		return nil, err
	}
	switch {
	case u.Disabled:
		return nil, link.Errorf(link.EUNAUTHORIZED, "your account is disabled: ask the instance admin")
	case claims.ID != "" && revoked:
		return nil, link.Errorf(link.EUNAUTHORIZED, "this token was logged out: log in again")
	case claims.Generation < u.TokenGeneration:
		return nil, link.Errorf(link.EUNAUTHORIZED, "this token was ended by a password change or a log-out everywhere: log in again")
	}
	return &caller{user: u, token: claims}, nil
}

// findKey returns the API key with the token hash. On a store other
// processes share it comes with its workspace and the state of the user
// who made it (nil otherwise: read as needed), in one round trip.
// ENOTFOUND.
func (s *Server) findKey(ctx context.Context, hash []byte) (*link.APIKey, *link.Workspace, *keyCreator, error) {
	if s.callers == nil {
		k, err := s.keys.FindKeyByHash(ctx, hash)
		return k, nil, nil, err
	}
	kc, err := s.callers.FindKeyCaller(ctx, hash)
	if err != nil {
		return nil, nil, nil, err
	}
	return kc.Key, kc.Workspace, &keyCreator{disabled: kc.CreatorDisabled, role: kc.CreatorRole}, nil
}

// pickWorkspace sets the workspace a user acts in: the one named by the
// X-Workspace-Id header or workspace_id query, or the only one they have.
func (s *Server) pickWorkspace(r *http.Request, c *caller) error {
	ctx := r.Context()
	id := r.Header.Get("X-Workspace-Id")
	if id == "" {
		id = r.URL.Query().Get("workspace_id")
	}
	if id == "" {
		ms, err := s.workspaces.FindMemberships(ctx, c.user.ID)
		if err != nil {
			return err
		}
		switch len(ms) {
		case 0:
			return link.Errorf(link.ENOTFOUND, "you are not a member of any workspace; create one with POST /v1/workspaces")
		case 1:
			c.workspace, c.scope, c.role = ms[0].Workspace, ms[0].Role.Scope(), ms[0].Role
			return nil
		}
		return link.Errorf(link.EINVALIDREQUEST, "you belong to %d workspaces: name one with the X-Workspace-Id header", len(ms))
	}
	m, err := s.workspaces.FindMembership(ctx, id, c.user.ID)
	if isNotFound(err) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", id)
	} else if err != nil {
		return err
	}
	c.workspace, c.scope, c.role = m.Workspace, m.Role.Scope(), m.Role
	return nil
}

// rate takes one request from the workspace's budget at its plan's rate (a
// plan change applies from the next request, as the workspace is read
// afresh for each) and sets the X-RateLimit headers, which report that
// budget (shared by every process on PostgreSQL: see allow). Outside a
// workspace a user is rated alone at the default plan. Unlimited plans
// carry no headers.
func (s *Server) rate(w http.ResponseWriter, r *http.Request, c *caller) error {
	plan := s.cfg.DefaultPlan
	if c.workspace != nil {
		plan = c.workspace.Plan
	}
	d := s.allow(r.Context(), c.limiterKey(), s.cfg.Plans[plan])
	if d.Unlimited {
		return nil
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
	reset := d.Reset.Unix()
	if d.Reset.Nanosecond() > 0 {
		reset++ // a whole second at which the bucket is full, not before
	}
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
	if !d.Allowed {
		secs := retryAfter(w, d.RetryAfter)
		if c.workspace != nil {
			return link.Errorf(link.ERATELIMITED, "the workspace's rate limit of %d requests a minute (%s plan, shared by all its keys and users) is used up; retry in %d s", d.Limit, plan, secs)
		}
		return link.Errorf(link.ERATELIMITED, "rate limit of %d requests a minute exceeded; retry in %d s", d.Limit, secs)
	}
	return nil
}
