package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
)

// accountRoutes are the instance admin's user management and each user's
// own account: name, password and logging out.
func (s *Server) accountRoutes() {
	s.handle("GET", "/v1/users", accessAdmin, s.handleListUsers)
	s.handle("POST", "/v1/users", accessAdmin, s.handleCreateUser)
	s.handle("PATCH", "/v1/users/:id", accessAdmin, s.handleUpdateUser)
	s.handle("PATCH", "/v1/me", accessUser, s.handleUpdateMe)
	s.handle("POST", "/v1/me/password", accessUser, s.handleChangePassword)
	s.handle("POST", "/v1/auth/logout", accessUser, s.handleLogout)
	s.handle("POST", "/v1/auth/logout-all", accessUser, s.handleLogoutAll)
	s.handle("PATCH", "/v1/keys/:id", accessWrite, s.handleUpdateKey)
}

// errDisabledAccount answers a disabled user's correct login.
var errDisabledAccount = link.Errorf(link.EFORBIDDEN, "this account is disabled: ask the instance admin")

type userResponse struct {
	ID        string `json:"id"`
	Email     string `json:"email"`
	Name      string `json:"name"`
	Admin     bool   `json:"admin"`
	Disabled  bool   `json:"disabled"`
	CreatedAt string `json:"created_at"`
}

func newUserResponse(u *link.User) userResponse {
	return userResponse{ID: u.ID, Email: u.Email, Name: u.Name, Admin: u.Admin, Disabled: u.Disabled, CreatedAt: ts(u.CreatedAt)}
}

// handleListUsers answers every user of the instance, oldest first, in one
// list: an instance has people, not millions.
func (s *Server) handleListUsers(w http.ResponseWriter, r *http.Request, _ *caller) error {
	users, err := s.accounts.ListUsers(r.Context())
	if err != nil {
		return err
	}
	out := make([]userResponse, 0, len(users))
	for _, u := range users {
		out = append(out, newUserResponse(u))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

type createUserRequest struct {
	Email    string `json:"email"`
	Name     string `json:"name"`
	Password string `json:"password"`
}

// handleCreateUser makes a user (never an admin) with a password the admin
// chose and hands on; they change it with POST /v1/me/password.
func (s *Server) handleCreateUser(w http.ResponseWriter, r *http.Request, _ *caller) error {
	var in createUserRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	return s.createUser(w, r, adminCreateUserRequest{Email: in.Email, Name: in.Name, Password: in.Password}, false)
}

// createUser checks in and makes the user, for POST /v1/users and POST
// /v1/admin/users (nameOptional: an empty name is no name there).
func (s *Server) createUser(w http.ResponseWriter, r *http.Request, in adminCreateUserRequest, nameOptional bool) error {
	in.Email, in.Name = link.NormalizeEmail(in.Email), strings.TrimSpace(in.Name)
	var fields []link.FieldError
	if msg := link.CheckEmail(in.Email); msg != "" {
		fields = append(fields, link.FieldError{Field: "email", Message: msg})
	}
	if msg := link.CheckUserName(in.Name); msg != "" && (in.Name != "" || !nameOptional) {
		fields = append(fields, link.FieldError{Field: "name", Message: msg})
	}
	if msg := auth.CheckPassword(in.Password); msg != "" {
		fields = append(fields, link.FieldError{Field: "password", Message: msg})
	}
	if len(fields) > 0 {
		return &link.Error{Code: link.EINVALID, Message: fields[0].Field + ": " + fields[0].Message, Fields: fields}
	}
	hash, err := s.hashPassword(w, r, in.Password)
	if err != nil {
		return err
	}
	u := &link.User{Email: in.Email, Name: in.Name, PasswordHash: hash, Admin: in.Admin}
	if err := s.accounts.CreateUser(r.Context(), u); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, newUserResponse(u))
	return nil
}

type updateUserRequest struct {
	Disabled *bool `json:"disabled"`
}

// handleUpdateUser disables or enables a user. Disabling ends every token
// the user holds at once (re-enabling does not revive them) and stops the
// keys they made unless an owner keeps them (keyScope). The admin
// cannot disable themselves: the instance would have nobody to undo it.
func (s *Server) handleUpdateUser(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in updateUserRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Disabled == nil {
		return &link.Error{Code: link.EINVALID, Message: "disabled: is required",
			Fields: []link.FieldError{{Field: "disabled", Message: "is required"}}}
	}
	id := c.params.ByName("id")
	if *in.Disabled && id == c.user.ID {
		return link.Errorf(link.ECONFLICT, "you cannot disable your own account: the instance would have no admin left to enable it")
	}
	u, err := s.updateAccount(r.Context(), id, link.UserUpdate{Disabled: in.Disabled, EndTokens: *in.Disabled})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newUserResponse(u))
	return nil
}

// updateAccount stores a change to a user and then its effect on tokens,
// in that order under accountMu, so the memory never runs ahead of the
// file nor two changes cross between them.
func (s *Server) updateAccount(ctx context.Context, id string, upd link.UserUpdate) (*link.User, error) {
	s.accountMu.Lock()
	defer s.accountMu.Unlock()
	u, err := s.accounts.UpdateUser(ctx, id, upd)
	if err != nil {
		return nil, err
	}
	s.sessions.SetUser(u)
	return u, nil
}

type updateMeRequest struct {
	Name *string `json:"name"`
}

// handleUpdateMe renames the caller and answers as GET /v1/me.
func (s *Server) handleUpdateMe(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in updateMeRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Name == nil {
		return &link.Error{Code: link.EINVALID, Message: "name: is required",
			Fields: []link.FieldError{{Field: "name", Message: "is required"}}}
	}
	u, err := s.updateAccount(r.Context(), c.user.ID, link.UserUpdate{Name: in.Name})
	if err != nil {
		return err
	}
	c.user = u
	return s.handleMe(w, r, c)
}

type changePasswordRequest struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// handleChangePassword sets a new password after checking the current one
// with the slow hash, ends every token issued before (the caller's too),
// and answers a fresh token so the caller stays signed in. Wrong current
// passwords count as failed logins (auth.LoginGuard), so a stolen token
// cannot be used to guess the password either.
func (s *Server) handleChangePassword(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in changePasswordRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	// A user made by single sign-on has no password, and gets none from a
	// token alone: one would keep them signed in after the provider let
	// them go, and a stolen token would become a lasting password.
	if len(c.user.PasswordHash) == 0 {
		return link.Errorf(link.ECONFLICT, "your account has no password: it signs in through single sign-on only")
	}
	if in.CurrentPassword == "" {
		return &link.Error{Code: link.EINVALID, Message: "current_password: is required",
			Fields: []link.FieldError{{Field: "current_password", Message: "is required"}}}
	}
	if err := auth.ValidatePassword("new_password", in.NewPassword); err != nil {
		return err
	}
	if in.NewPassword == in.CurrentPassword {
		return &link.Error{Code: link.EINVALID, Message: "new_password: must differ from the current password",
			Fields: []link.FieldError{{Field: "new_password", Message: "must differ from the current password"}}}
	}
	att, wait := s.logins.Begin(loginAccount(link.NormalizeEmail(c.user.Email)), s.clientIP(r))
	if att == nil {
		secs := retryAfter(w, wait)
		return link.Errorf(link.ERATELIMITED, "too many wrong passwords for this account from your address; retry in %d s", secs)
	}
	defer att.Release()
	if ok, err := s.verifyPassword(w, r, c.user.PasswordHash, in.CurrentPassword); err != nil {
		return err
	} else if !ok {
		att.Failed()
		return &link.Error{Code: link.EINVALID, Message: "current_password: is wrong",
			Fields: []link.FieldError{{Field: "current_password", Message: "is wrong"}}}
	}
	att.Succeeded()
	hash, err := s.hashPassword(w, r, in.NewPassword)
	if err != nil {
		return err
	}
	u, err := s.updateAccount(r.Context(), c.user.ID, link.UserUpdate{PasswordHash: hash, EndTokens: true})
	if err != nil {
		return err
	}
	return s.writeToken(w, http.StatusOK, u)
}

// handleLogout ends the token of the request, and only it. It is
// remembered (in memory and in the data file) until it would have expired.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request, c *caller) error {
	if c.token.ID == "" {
		return link.Errorf(link.ECONFLICT, "this token was issued before single log-outs existed: end it with POST /v1/auth/logout-all")
	}
	t := link.RevokedToken{ID: c.token.ID, ExpiresAt: c.token.ExpiresAt}
	if err := s.accounts.RevokeToken(r.Context(), t, s.now()); err != nil {
		return err
	}
	s.sessions.Revoke(t)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleLogoutAll ends every token of the caller issued until now, the
// request's own too, on every device.
func (s *Server) handleLogoutAll(w http.ResponseWriter, r *http.Request, c *caller) error {
	if _, err := s.updateAccount(r.Context(), c.user.ID, link.UserUpdate{EndTokens: true}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// maxCreatorChain bounds the walk from a key to the user who made it
// through keys that made keys. A key does not mint a key past it, and a
// key whose walk does not end within it is refused (creatorTooDeep), so
// that no chain outlasts the member it acts for.
const maxCreatorChain = 16

// creatorStop says why a key stops because of the user who made it.
type creatorStop int

const (
	creatorActive   creatorStop = iota
	creatorDisabled             // the user's account is disabled
	creatorLeft                 // the user is no longer a member of the key's workspace
	creatorTooDeep              // the walk did not reach a user within maxCreatorChain keys
)

// keyCreatorStop says whether k stops because of the user on whose behalf
// it was made: its creator, or following keys made by keys, their first
// user, when that user is disabled or has left (or was removed from) the
// key's workspace, since a person who left should not keep access through
// a key they hold. A key an owner keeps (KeepWhenCreatorDisabled) vouches
// for itself and the keys made through it, so the walk stops there. The
// user's state is read by readKeyCreator, or given (known, when not nil)
// for k's own creator. For a creator who is a member, it also returns
// their role now, which bounds what the key may do: a member demoted to
// read does not keep writing through a key.
func (s *Server) keyCreatorStop(ctx context.Context, k *link.APIKey, known *keyCreator) (creatorStop, link.Role, error) {
	return s.keyCreatorStopIn(ctx, k, known, nil)
}

// creatorMemo keeps, for an answer about many keys of one workspace (the
// list of keys), the keys listed and the state of each creator read, so
// that a creator or a key met again is not read again.
type creatorMemo struct {
	keys  map[string]*link.APIKey
	users map[string]*keyCreator
}

func newCreatorMemo(keys []*link.APIKey) *creatorMemo {
	m := &creatorMemo{keys: make(map[string]*link.APIKey, len(keys)), users: make(map[string]*keyCreator)}
	for _, k := range keys {
		m.keys[k.ID] = k
	}
	return m
}

// keyCreatorStopIn is keyCreatorStop reading through memo (nil: none).
func (s *Server) keyCreatorStopIn(ctx context.Context, k *link.APIKey, known *keyCreator, memo *creatorMemo) (creatorStop, link.Role, error) {
	for range maxCreatorChain {
		if k.KeepWhenCreatorDisabled {
			return creatorActive, "", nil
		}
		switch k.CreatedBy.Type {
		case link.CreatorUser:
			c := known
			if c == nil && memo != nil {
				c = memo.users[k.CreatedBy.ID]
			}
			if c == nil {
				var err error
				if c, err = s.readKeyCreator(ctx, k); err != nil {
					return creatorActive, "", err
				}
				if memo != nil {
					memo.users[k.CreatedBy.ID] = c
				}
			}
			switch {
			case c.disabled:
				return creatorDisabled, "", nil
			case c.role == "":
				return creatorLeft, "", nil
			}
			return creatorActive, c.role, nil
		case link.CreatorKey:
			var next *link.APIKey
			var err error
			if memo != nil {
				next = memo.keys[k.CreatedBy.ID]
			}
			if next == nil {
				next, err = s.keys.FindKeyByID(ctx, k.WorkspaceID, k.CreatedBy.ID)
			}
			if isNotFound(err) {
				return creatorActive, "", nil
			} else if err != nil {
				return creatorActive, "", err
			}
			k, known = next, nil
		default:
			return creatorActive, "", nil
		}
	}
	// Unknown who it acts for: the member's removal could not find it
	// either (storage walks as far), so it must not act.
	return creatorTooDeep, "", nil
}

// keyCreator is the state of the user who made a key: disabled, and
// their role in the key's workspace ("" when no longer a member).
type keyCreator struct {
	disabled bool
	role     link.Role
}

// readKeyCreator reads the state of the user who made k. The disabled flag
// is in memory (sessions) when this process holds the store alone, else
// read with the user; membership is one read.
func (s *Server) readKeyCreator(ctx context.Context, k *link.APIKey) (*keyCreator, error) {
	c := &keyCreator{}
	if s.callers == nil {
		c.disabled = s.sessions.Disabled(k.CreatedBy.ID)
	} else {
		u, err := s.users.FindUserByID(ctx, k.CreatedBy.ID)
		if isNotFound(err) {
			return c, nil // gone: no longer a member either
		} else if err != nil {
			return nil, err
		}
		c.disabled = u.Disabled
	}
	if c.disabled {
		return c, nil
	}
	m, err := s.workspaces.FindMembership(ctx, k.WorkspaceID, k.CreatedBy.ID)
	if isNotFound(err) {
		return c, nil
	} else if err != nil {
		return nil, err
	}
	c.role = m.Role
	return c, nil
}

// keyScope refuses a key whose creator is disabled or no longer a member
// of its workspace, unless an owner keeps it, and returns the scope the key
// acts with: its own, narrowed to read while its creator's role is read.
// creator, when not nil, is the state of the user who made k, read with it.
func (s *Server) keyScope(ctx context.Context, k *link.APIKey, creator *keyCreator) (link.Scope, error) {
	stop, role, err := s.keyCreatorStop(ctx, k, creator)
	if err != nil {
		return "", err
	}
	switch stop {
	case creatorDisabled:
		return "", link.Errorf(link.EUNAUTHORIZED, "the key's creator is disabled; an owner of the workspace can keep the key working with PATCH /v1/keys/%s", k.ID)
	case creatorLeft:
		return "", link.Errorf(link.EUNAUTHORIZED, "the key's creator is no longer a member of its workspace; an owner of the workspace can keep the key working with PATCH /v1/keys/%s", k.ID)
	case creatorTooDeep:
		return "", link.Errorf(link.EUNAUTHORIZED, "the key was minted through more than %d keys, each by the one before; an owner of the workspace can keep the key working with PATCH /v1/keys/%s", maxCreatorChain, k.ID)
	}
	if role != "" && !role.Scope().Allows(k.Scope) {
		return role.Scope(), nil
	}
	return k.Scope, nil
}

// creatorDisabled reports, for key answers, whether k stops because of its
// creator (disabled, or no longer a member), reading through memo (nil:
// none). A read error counts as not (the answer is advice; authentication
// checks for itself).
func (s *Server) creatorDisabled(k *link.APIKey, memo *creatorMemo) bool {
	stop, _, err := s.keyCreatorStopIn(context.Background(), k, nil, memo)
	return err == nil && stop != creatorActive
}

type updateKeyRequest struct {
	KeepWhenCreatorDisabled *bool `json:"keep_when_creator_disabled"`
}

// handleUpdateKey lets an owner of the workspace (logged in, not a key)
// keep a key working when its creator is disabled, or undo that.
func (s *Server) handleUpdateKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in updateKeyRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if c.user == nil {
		return link.Errorf(link.EFORBIDDEN, "only an owner of the workspace, logged in, may keep a key working for a disabled creator; API keys cannot")
	}
	m, err := s.workspaces.FindMembership(r.Context(), c.workspace.ID, c.user.ID)
	if err != nil {
		return err
	}
	if m.Role != link.RoleOwner {
		return link.Errorf(link.EFORBIDDEN, "your role in this workspace is %s; only an owner may keep a key working for a disabled creator", m.Role)
	}
	if in.KeepWhenCreatorDisabled == nil {
		return &link.Error{Code: link.EINVALID, Message: "keep_when_creator_disabled: is required",
			Fields: []link.FieldError{{Field: "keep_when_creator_disabled", Message: "is required"}}}
	}
	k, err := s.keys.SetKeepWhenCreatorDisabled(r.Context(), c.workspace.ID, c.params.ByName("id"), *in.KeepWhenCreatorDisabled)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newKeyResponse(k))
	return nil
}
