package server

import (
	"net/http"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
)

// adminRoutes are the instance admin's rescue routes that linkbolt's
// command line (users, keys) calls while a server holds the data file:
// creating an instance admin, setting a user's password, and revoking a key
// of any workspace. Each change is recorded in the audit log as the same
// change made elsewhere is.
func (s *Server) adminRoutes() {
	s.handle("POST", "/v1/admin/users", accessAdmin, s.handleAdminCreateUser)
	s.handle("POST", "/v1/admin/users/:id/password", accessAdmin, s.handleAdminSetPassword)
	s.handle("DELETE", "/v1/admin/workspaces/:id/keys/:key", accessAdmin, s.handleAdminRevokeKey)
}

type adminCreateUserRequest struct {
	Email    string `json:"email"`
	Name     string `json:"name"`
	Password string `json:"password"`
	Admin    bool   `json:"admin"`
}

// handleAdminCreateUser makes a user as POST /v1/users does, who may be an
// instance admin.
func (s *Server) handleAdminCreateUser(w http.ResponseWriter, r *http.Request, _ *caller) error {
	var in adminCreateUserRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	return s.createUser(w, r, in, true)
}

type adminSetPasswordRequest struct {
	Password string `json:"password"`
}

// handleAdminSetPassword gives a user a new password chosen by the admin
// (linkbolt users reset-password) and ends every token the user holds.
func (s *Server) handleAdminSetPassword(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in adminSetPasswordRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if err := auth.ValidatePassword("password", in.Password); err != nil {
		return err
	}
	hash, err := s.hashPassword(w, r, in.Password)
	if err != nil {
		return err
	}
	u, err := s.updateAccount(r.Context(), c.params.ByName("id"), link.UserUpdate{PasswordHash: hash, EndTokens: true})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newUserResponse(u))
	return nil
}

// handleAdminRevokeKey revokes a key of any workspace, the admin a member
// of it or not: for the day a key leaks and nobody who could revoke it can
// sign in.
func (s *Server) handleAdminRevokeKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.keys.RevokeKey(r.Context(), c.params.ByName("id"), c.params.ByName("key")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
