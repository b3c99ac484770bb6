package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// errResetRefused answers a reset token that is unknown, used or expired:
// one answer for all, so a guess learns nothing.
var errResetRefused = link.Errorf(link.EFORBIDDEN, "this password link is not valid: it was used, it expired, or it was replaced by a newer one; ask the instance admin for a new one")

// errResetDisabled answers the reset of a disabled user's password.
var errResetDisabled = link.Errorf(link.EFORBIDDEN, "this account is disabled: ask the instance admin")

// CreatePasswordReset stores a reset of the user's password by the token
// of hash until expires, replacing any earlier one of the user and
// forgetting expired ones. ENOTFOUND.
func (s *UserService) CreatePasswordReset(ctx context.Context, userID string, hash []byte, expires time.Time) error {
	if !s.db.validID(link.PrefixUser, userID) {
		return link.Errorf(link.ENOTFOUND, "user %q not found", userID)
	}
	now := s.db.now()
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findUser(ctx, tx, userID, true); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM password_resets WHERE user_id = $1 OR expires_at < $2`, userID, now); err != nil {
			return fmt.Errorf("forget password resets: %w", err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO password_resets (token_hash, user_id, expires_at) VALUES ($1, $2, $3)
			ON CONFLICT (token_hash) DO UPDATE SET user_id = excluded.user_id, expires_at = excluded.expires_at`,
			bytes.Clone(hash), userID, expires)
		if err != nil {
			return fmt.Errorf("store password reset: %w", err)
		}
		return nil
	})
}

// CheckPasswordReset reports whether UsePasswordReset would take the
// token of hash at now, changing nothing. EFORBIDDEN for an unknown, used
// or expired token, or a disabled user.
func (s *UserService) CheckPasswordReset(ctx context.Context, hash []byte, now time.Time) error {
	var disabled bool
	err := s.db.pool.QueryRow(ctx, `SELECT u.disabled FROM password_resets r JOIN users u ON u.id = r.user_id
		WHERE r.token_hash = $1 AND r.expires_at > $2`, hash, now).Scan(&disabled)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return errResetRefused
	case err != nil:
		return fmt.Errorf("password reset: %w", err)
	case disabled:
		return errResetDisabled
	}
	return nil
}

// UsePasswordReset sets the password of the reset's user, ends their
// tokens and forgets the reset, in one transaction. EFORBIDDEN for an
// unknown, used or expired token, or a disabled user.
func (s *UserService) UsePasswordReset(ctx context.Context, hash, passwordHash []byte, now time.Time) (*link.User, error) {
	var u *link.User
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		var uid string
		var expires time.Time
		err := tx.QueryRow(ctx, `DELETE FROM password_resets WHERE token_hash = $1 RETURNING user_id, expires_at`, hash).Scan(&uid, &expires)
		if errors.Is(err, pgx.ErrNoRows) {
			return errResetRefused
		} else if err != nil {
			return fmt.Errorf("password reset: %w", err)
		}
		if !now.Before(expires) {
			return errResetRefused
		}
		before, err := findUser(ctx, tx, uid, true)
		if err != nil {
			return err
		}
		if before.Disabled {
			return errResetDisabled
		}
		after := *before
		after.PasswordHash = bytes.Clone(passwordHash)
		after.TokenGeneration++
		if err := putUser(ctx, tx, &after); err != nil {
			return err
		}
		u = &after
		return s.recordUserUpdate(ctx, tx, before, &after, link.UserUpdate{PasswordHash: passwordHash, EndTokens: true})
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}
