package link

import (
	"context"
	"time"
)

// PasswordResets keeps the one-time links with which a user chooses a new
// password (linkbolt users reset-password --setup-link). Only the SHA-256
// of a link's token is stored.
type PasswordResets interface {
	// CreatePasswordReset stores a reset of the user's password by the
	// token of hash until expires, replacing any earlier one of the user.
	// ENOTFOUND.
	CreatePasswordReset(ctx context.Context, userID string, hash []byte, expires time.Time) error
	// UsePasswordReset sets the password hash of the reset's user, ends
	// every token they hold (user.password_changed) and forgets the reset,
	// so the link works once. EFORBIDDEN for an unknown, used or expired
	// token, or a disabled user.
	UsePasswordReset(ctx context.Context, hash, passwordHash []byte, now time.Time) (*User, error)
	// CheckPasswordReset reports whether the token of hash would be taken
	// by UsePasswordReset at now, without using it, so that the new
	// password is hashed (slow) only for a token that works. EFORBIDDEN as
	// UsePasswordReset.
	CheckPasswordReset(ctx context.Context, hash []byte, now time.Time) error
}
