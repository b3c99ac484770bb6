package server

import (
	"cmp"
	"crypto/rand"
	"net/http"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
)

// DefaultInvitationTTL is how long an invitation link works when
// Config.InvitationTTL is zero.
const DefaultInvitationTTL = 7 * 24 * time.Hour

// maxInvitationToken bounds the token of an accept request: a real one is
// 26 characters, so anything much longer is not one and costs no hashing.
const maxInvitationToken = 128

// memberRoutes registers the members and invitations of a workspace. Every
// route but accept runs in the caller's workspace; what needs an owner is
// checked by the handler (requireOwner), so that a member may leave.
func (s *Server) memberRoutes() {
	s.handle("GET", "/v1/members", accessRead, s.handleListMembers)
	s.handle("PATCH", "/v1/members/:user_id", accessRead, s.handleUpdateMember)
	s.handle("DELETE", "/v1/members/:user_id", accessRead, s.handleRemoveMember)
	s.handle("GET", "/v1/invitations", accessRead, s.handleListInvitations)
	s.handle("POST", "/v1/invitations", accessRead, s.handleCreateInvitation)
	s.handle("DELETE", "/v1/invitations/:id", accessRead, s.handleRevokeInvitation)
	s.handle("POST", "/v1/invitations/accept", accessPublic, s.handleAcceptInvitation)
}

// requireOwner lets only an owner of the workspace, signed in with a JWT,
// do what. API keys act as the workspace, not as one of its members, so
// they have no role to manage members with.
func requireOwner(c *caller, what string) error {
	if c.user == nil {
		return link.Errorf(link.EFORBIDDEN, "API keys cannot %s: it needs an owner of the workspace signed in with a token from POST /v1/auth/login", what)
	}
	if c.role != link.RoleOwner {
		return link.Errorf(link.EFORBIDDEN, "only an owner of the workspace may %s; your role is %s", what, c.role)
	}
	return nil
}

type memberResponse struct {
	UserID   string `json:"user_id"`
	Email    string `json:"email"`
	Name     string `json:"name"`
	Role     string `json:"role"`
	JoinedAt string `json:"joined_at"`
}

func newMemberResponse(m *link.Member) memberResponse {
	return memberResponse{UserID: m.UserID, Email: m.Email, Name: m.Name, Role: string(m.Role), JoinedAt: ts(m.JoinedAt)}
}

func (s *Server) handleListMembers(w http.ResponseWriter, r *http.Request, c *caller) error {
	ms, err := s.members.FindMembers(r.Context(), c.workspace.ID)
	if err != nil {
		return err
	}
	out := make([]memberResponse, 0, len(ms))
	for _, m := range ms {
		out = append(out, newMemberResponse(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

type memberUpdateRequest struct {
	Role *string `json:"role"`
}

// handleUpdateMember sets a member's role (owners only, so any role may be
// granted: nobody grants one above their own). An owner may step down
// while another owner remains.
func (s *Server) handleUpdateMember(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in memberUpdateRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := requireOwner(c, "change a member's role"); err != nil {
		return err
	}
	if in.Role == nil {
		return &link.Error{Code: link.EINVALID, Message: "role: is required",
			Fields: []link.FieldError{{Field: "role", Message: "is required"}}}
	}
	role := link.Role(*in.Role)
	if err := checkGrant(c, role); err != nil {
		return err
	}
	m, err := s.members.UpdateMemberRole(r.Context(), c.workspace.ID, c.params.ByName("user_id"), role)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newMemberResponse(m))
	return nil
}

// checkGrant refuses an unknown role (422) and a role above the caller's
// own (403).
func checkGrant(c *caller, role link.Role) error {
	if !role.Valid() {
		return &link.Error{Code: link.EINVALID, Message: "role: must be one of read, read_write, owner",
			Fields: []link.FieldError{{Field: "role", Message: "must be one of read, read_write, owner"}}}
	}
	if role.Rank() > c.role.Rank() {
		return link.Errorf(link.EFORBIDDEN, "you cannot grant the role %s, which is above your own (%s)", role, c.role)
	}
	return nil
}

// handleRemoveMember removes a member (owners), or lets a member leave
// (their own user ID). The last owner can do neither (409).
func (s *Server) handleRemoveMember(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := c.params.ByName("user_id")
	if c.user == nil || c.user.ID != id {
		if err := requireOwner(c, "remove a member"); err != nil {
			return err
		}
	}
	if err := s.members.RemoveMember(r.Context(), c.workspace.ID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type invitationResponse struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	InvitedBy string `json:"invited_by"`
	CreatedAt string `json:"created_at"`
	ExpiresAt string `json:"expires_at"`
	// Token and URL are shown once, by create.
	Token string `json:"token,omitempty"`
	URL   string `json:"url,omitempty"`
}

func newInvitationResponse(inv *link.Invitation) invitationResponse {
	return invitationResponse{ID: inv.ID, Email: inv.Email, Role: string(inv.Role), InvitedBy: inv.InvitedBy,
		CreatedAt: ts(inv.CreatedAt), ExpiresAt: ts(inv.ExpiresAt)}
}

type invitationRequest struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

// handleCreateInvitation makes a one-time invitation link (owners). The
// token is in the URL's fragment, which browsers never send to a server,
// so it reaches no access log and no Referer header; only its SHA-256 is
// kept.
func (s *Server) handleCreateInvitation(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in invitationRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := requireOwner(c, "invite members"); err != nil {
		return err
	}
	role := link.Role(in.Role)
	inv := &link.Invitation{WorkspaceID: c.workspace.ID, Email: in.Email, Role: role, InvitedBy: c.user.ID}
	if err := inv.Validate(); err != nil {
		return err
	}
	if err := checkGrant(c, role); err != nil {
		return err
	}
	tok := rand.Text()
	inv.TokenHash = auth.HashToken(tok)
	inv.ExpiresAt = s.now().Add(cmp.Or(s.cfg.InvitationTTL, DefaultInvitationTTL))
	if err := s.invitations.CreateInvitation(r.Context(), inv); err != nil {
		return err
	}
	out := newInvitationResponse(inv)
	out.Token, out.URL = tok, s.primary.String()+"/app/invite#token="+tok
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) handleListInvitations(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := requireOwner(c, "list invitations"); err != nil {
		return err
	}
	invs, err := s.invitations.FindInvitations(r.Context(), c.workspace.ID)
	if err != nil {
		return err
	}
	out := make([]invitationResponse, 0, len(invs))
	for _, inv := range invs {
		out = append(out, newInvitationResponse(inv))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

func (s *Server) handleRevokeInvitation(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := requireOwner(c, "revoke invitations"); err != nil {
		return err
	}
	if err := s.invitations.RevokeInvitation(r.Context(), c.workspace.ID, c.params.ByName("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type acceptRequest struct {
	Token    string  `json:"token"`
	Name     *string `json:"name"`
	Password *string `json:"password"`
}

type acceptResponse struct {
	UserID    string            `json:"user_id"`
	Workspace workspaceResponse `json:"workspace"`
	// Token and ExpiresAt sign a new person in, as login would.
	Token     string `json:"token,omitempty"`
	ExpiresAt string `json:"expires_at,omitempty"`
}

// handleAcceptInvitation joins the invitation's workspace: a signed-in user
// (JWT) as themselves, anyone else as a new user with a name and password,
// who is signed in by the answer. Attempts are limited per address like
// logins.
func (s *Server) handleAcceptInvitation(w http.ResponseWriter, r *http.Request, _ *caller) error {
	var in acceptRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if d := s.limiters.Allow("invite-ip:"+s.clientIP(r), s.cfg.LoginPerIP); !d.Allowed {
		secs := retryAfter(w, d.RetryAfter)
		return link.Errorf(link.ERATELIMITED, "too many invitation attempts from your address; retry in %d s", secs)
	}
	if strings.TrimSpace(in.Token) == "" {
		return &link.Error{Code: link.EINVALID, Message: "token: is required",
			Fields: []link.FieldError{{Field: "token", Message: "is required"}}}
	}
	if len(in.Token) > maxInvitationToken {
		return link.Errorf(link.ENOTFOUND, "this invitation link is not valid: check that it was copied whole")
	}
	a, err := s.acceptance(w, r, &in)
	if err != nil {
		return err
	}
	// The route is public: the audit entries take the address from here
	// and the joining user as their actor (storage names them).
	ctx := link.WithActor(r.Context(), link.Actor{Type: link.ActorUser}, s.clientAddress(r))
	u, m, err := s.invitations.AcceptInvitation(ctx, auth.HashToken(strings.TrimSpace(in.Token)), a)
	if err != nil {
		return err
	}
	out := acceptResponse{UserID: u.ID, Workspace: s.workspaceResponse(m.Workspace, m.Role)}
	if a.UserID != "" {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	// The stored generation counts too: another instance on the same
	// database may have ended the user's tokens since this one heard.
	tok, exp, err := s.jwt.IssueGeneration(u.ID, max(u.TokenGeneration, s.sessions.Generation(u.ID)))
	if err != nil {
		return err
	}
	out.Token, out.ExpiresAt = tok, ts(exp)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// acceptance says who accepts: the signed-in user of the request's JWT, or
// a new person with a name and a password (hashed here).
func (s *Server) acceptance(w http.ResponseWriter, r *http.Request, in *acceptRequest) (link.Acceptance, error) {
	if _, _, err := credential(r); err != errNoCredential {
		c, err := s.authenticate(r)
		if err != nil {
			return link.Acceptance{}, err
		}
		if c.user == nil {
			return link.Acceptance{}, link.Errorf(link.EFORBIDDEN, "an API key cannot accept an invitation: a person does, signed in with a token from POST /v1/auth/login or as a new user")
		}
		if in.Name != nil || in.Password != nil {
			return link.Acceptance{}, link.Errorf(link.EINVALIDREQUEST, "name and password make a new account; signed in, send only the token")
		}
		return link.Acceptance{UserID: c.user.ID}, nil
	}
	var fields []link.FieldError
	name, password := "", ""
	if in.Name != nil {
		name = strings.TrimSpace(*in.Name)
	}
	if in.Password != nil {
		password = *in.Password
	}
	if msg := link.CheckUserName(name); msg != "" {
		fields = append(fields, link.FieldError{Field: "name", Message: msg})
	}
	if msg := auth.CheckPassword(password); msg != "" {
		fields = append(fields, link.FieldError{Field: "password", Message: msg})
	}
	if len(fields) > 0 {
		return link.Acceptance{}, &link.Error{Code: link.EINVALID,
			Message: fields[0].Field + ": " + fields[0].Message + " (a new account needs a name and a password; already registered? sign in and send your token)",
			Fields:  fields}
	}
	// The token first: hashing is slow, and a stranger's made-up token
	// must not cost it.
	if _, err := s.invitations.FindInvitationByToken(r.Context(), auth.HashToken(strings.TrimSpace(in.Token))); err != nil {
		return link.Acceptance{}, err
	}
	hash, err := s.hashPassword(w, r, password)
	if err != nil {
		return link.Acceptance{}, err
	}
	return link.Acceptance{Name: name, PasswordHash: hash}, nil
}

// notMember is the answer to a user naming a workspace they are not a
// member of: 404, so that no other workspace is revealed, except to a
// former member, who knew it and is told why their access ended (403).
func (s *Server) notMember(r *http.Request, workspaceID, userID string) error {
	at, err := s.members.FindRemoval(r.Context(), workspaceID, userID)
	if err == nil {
		return link.Errorf(link.EFORBIDDEN, "you are no longer a member of workspace %q (removed at %s); an owner can invite you again", workspaceID, ts(at))
	} else if !isNotFound(err) {
		return err
	}
	return link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
}
