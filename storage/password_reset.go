package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.PasswordResets = (*UserService)(nil)

// errResetRefused answers a reset token that is unknown, used or expired:
// one answer for all, so a guess learns nothing.
var errResetRefused = link.Errorf(link.EFORBIDDEN, "this password link is not valid: it was used, it expired, or it was replaced by a newer one; ask the instance admin for a new one")

// CreatePasswordReset stores a reset of the user's password by the token
// of hash until expires, replacing any earlier one of the user and
// forgetting expired ones. ENOTFOUND.
func (s *UserService) CreatePasswordReset(ctx context.Context, userID string, hash []byte, expires time.Time) error {
	uid, ok := s.db.ids.parseID(prefixUser, userID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "user %q not found", userID)
	}
	now := s.db.now()
	return s.db.update(func(tx *bolt.Tx) error {
		if _, err := findUser(tx, uid); err != nil {
			return err
		}
		b := tx.Bucket(bucketUsersReset)
		var stale [][]byte
		_ = b.ForEach(func(k, v []byte) error {
			if len(v) != 16 || btoi(v[:8]) == uid || time.Unix(0, int64(btoi(v[8:]))).Before(now) {
				stale = append(stale, cloneBytes(k))
			}
			return nil
		})
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return b.Put(hash, binary.BigEndian.AppendUint64(itob(uid), uint64(expires.UnixNano())))
	})
}

// CheckPasswordReset reports whether UsePasswordReset would take the
// token of hash at now, in a read transaction that changes nothing.
// EFORBIDDEN for an unknown, used or expired token, or a disabled user.
func (s *UserService) CheckPasswordReset(ctx context.Context, hash []byte, now time.Time) error {
	return s.db.db.View(func(tx *bolt.Tx) error {
		_, err := findPasswordReset(tx, hash, now)
		return err
	})
}

// findPasswordReset returns the record of the user whose reset has the
// token of hash, valid at now. EFORBIDDEN as UsePasswordReset.
func findPasswordReset(tx *bolt.Tx, hash []byte, now time.Time) (*userRecord, error) {
	v := tx.Bucket(bucketUsersReset).Get(hash)
	if len(v) != 16 || !now.Before(time.Unix(0, int64(btoi(v[8:])))) {
		return nil, errResetRefused
	}
	rec, err := findUser(tx, btoi(v[:8]))
	if err != nil {
		return nil, err
	}
	if rec.Disabled {
		return nil, errResetDisabled
	}
	return rec, nil
}

// errResetDisabled answers the reset of a disabled user's password.
var errResetDisabled = link.Errorf(link.EFORBIDDEN, "this account is disabled: ask the instance admin")

// UsePasswordReset sets the password of the reset's user, ends their
// tokens and forgets the reset, in one transaction. EFORBIDDEN for an
// unknown, used or expired token, or a disabled user.
func (s *UserService) UsePasswordReset(ctx context.Context, hash, passwordHash []byte, now time.Time) (*link.User, error) {
	var u *link.User
	err := s.db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketUsersReset)
		v := b.Get(hash)
		if len(v) != 16 {
			return errResetRefused
		}
		uid, expires := btoi(v[:8]), time.Unix(0, int64(btoi(v[8:])))
		if err := b.Delete(hash); err != nil {
			return err
		}
		if !now.Before(expires) {
			return errResetRefused
		}
		rec, err := findUser(tx, uid)
		if err != nil {
			return err
		}
		if rec.Disabled {
			return errResetDisabled
		}
		before := *rec
		rec.PasswordHash = bytes.Clone(passwordHash)
		rec.TokenGeneration++
		if err := putJSON(tx.Bucket(bucketUsers), itob(uid), rec); err != nil {
			return err
		}
		u = rec.user(s.db.ids, uid)
		return s.recordUserUpdate(ctx, tx, uid, &before, rec, link.UserUpdate{PasswordHash: passwordHash, EndTokens: true})
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}
