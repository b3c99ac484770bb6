package auth

import (
	"context"
	"sync"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// Sessions is the in-memory state that ends JWTs before they expire: each
// user's token generation and disabled flag, and the IDs of logged-out
// tokens. It is loaded once at start (LoadSessions) and updated after each
// change is stored, so checking a token on a request reads no disk.
//
//   - A logout revokes one token by its jti until the token's expiry; then
//     the entry is dropped (here and on disk), so the set stays as small as
//     the logouts of one token lifetime.
//   - A password change or "log out everywhere" raises the user's
//     generation; a token carries the generation it was issued under and
//     is refused once that is older. Tokens issued afterwards carry the new
//     generation and keep working.
//   - A disabled user's tokens are refused at once, whatever their
//     generation.
//
// Sessions is safe for concurrent use.
type Sessions struct {
	now func() time.Time

	mu        sync.RWMutex
	users     map[string]userState
	disabled  int                  // users disabled, so AnyDisabled is one read
	revoked   map[string]time.Time // jti → the token's expiry
	nextPrune time.Time
}

type userState struct {
	generation uint64
	disabled   bool
}

// NewSessions returns empty sessions reading the clock now (nil: time.Now).
func NewSessions(now func() time.Time) *Sessions {
	if now == nil {
		now = time.Now
	}
	return &Sessions{now: now, users: make(map[string]userState), revoked: make(map[string]time.Time)}
}

// LoadSessions returns the sessions stored in store, read once.
func LoadSessions(ctx context.Context, store link.AccountService, now func() time.Time) (*Sessions, error) {
	s := NewSessions(now)
	users, revoked, err := store.LoadSessions(ctx, s.now())
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		s.setUser(u.UserID, u.TokenGeneration, u.Disabled)
	}
	for _, r := range revoked {
		s.revoked[r.ID] = r.ExpiresAt
	}
	return s, nil
}

// Generation returns the user's current token generation, for JWT.Issue.
func (s *Sessions) Generation(userID string) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.users[userID].generation
}

// Disabled reports whether the user is disabled.
func (s *Sessions) Disabled(userID string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.users[userID].disabled
}

// AnyDisabled reports whether any user is disabled, so that API keys need
// their creators checked only then.
func (s *Sessions) AnyDisabled() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.disabled > 0
}

// Check returns a link.EUNAUTHORIZED error saying why a verified token no
// longer authenticates, or nil.
func (s *Sessions) Check(c Claims) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	u := s.users[c.UserID]
	switch {
	case u.disabled:
		return link.Errorf(link.EUNAUTHORIZED, "your account is disabled: ask the instance admin")
	case c.ID != "" && s.isRevoked(c.ID):
		return link.Errorf(link.EUNAUTHORIZED, "this token was logged out: log in again")
	case c.Generation < u.generation:
		return link.Errorf(link.EUNAUTHORIZED, "this token was ended by a password change or a log-out everywhere: log in again")
	}
	return nil
}

func (s *Sessions) isRevoked(jti string) bool {
	exp, ok := s.revoked[jti]
	return ok && s.now().Before(exp)
}

// SetUser records a user's state as just stored. A generation never goes
// back, so two changes stored concurrently cannot revive old tokens
// whichever is recorded last.
func (s *Sessions) SetUser(u *link.User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setUser(u.ID, u.TokenGeneration, u.Disabled)
}

func (s *Sessions) setUser(id string, generation uint64, disabled bool) {
	st := s.users[id]
	if st.disabled != disabled {
		if disabled {
			s.disabled++
		} else {
			s.disabled--
		}
	}
	st.generation = max(st.generation, generation)
	st.disabled = disabled
	s.users[id] = st
}

// Revoke records a logged-out token (as just stored) until it expires.
func (s *Sessions) Revoke(t link.RevokedToken) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked[t.ID] = t.ExpiresAt
	if now.Before(s.nextPrune) {
		return
	}
	s.nextPrune = now.Add(sweepInterval)
	for id, exp := range s.revoked {
		if !now.Before(exp) {
			delete(s.revoked, id)
		}
	}
}

// Revoked returns the number of logged-out tokens remembered.
func (s *Sessions) Revoked() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.revoked)
}
