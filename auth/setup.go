package auth

import (
	"context"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// Setup sets up a fresh instance: the first user, the instance admin, with
// a hashed password, and a first workspace. The setup page (through
// link.AdminSetup) and the admin.* configuration at start both use it.
type Setup struct {
	Users     link.UserService
	Passwords Passwords
	// Plan is the plan of the first workspace (workspaces.default_plan).
	Plan link.Plan
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

var _ link.AdminSetup = (*Setup)(nil)

// Bootstrap creates the instance admin and a first workspace (named
// "Default" when name is empty). EINVALID, ECONFLICT once any user exists.
func (s *Setup) Bootstrap(ctx context.Context, email, password, name string) (*link.User, error) {
	if err := link.ValidateCredentials(email, password); err != nil {
		return nil, err
	}
	if err := ValidatePassword("password", password); err != nil {
		return nil, err
	}
	if strings.TrimSpace(name) == "" {
		name = "Default"
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	ws := &link.Workspace{Name: name, Plan: s.Plan, CreatedAt: now, UpdatedAt: now}
	if err := ws.Validate(); err != nil {
		return nil, err
	}
	// Every start with admin.* configured comes here: once set up, answer
	// before paying for a slow password hash. (The store checks again in
	// its transaction.)
	if n, err := s.Users.CountUsers(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		return nil, link.Errorf(link.ECONFLICT, "linkbolt is set up already")
	}
	hash, err := s.Passwords.Hash(password)
	if err != nil {
		return nil, err
	}
	u := &link.User{Email: link.NormalizeEmail(email), PasswordHash: hash, Admin: true, CreatedAt: now}
	if err := s.Users.Bootstrap(ctx, u, ws); err != nil {
		return nil, err
	}
	return u, nil
}
