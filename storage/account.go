package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.AccountService = (*UserService)(nil)

// ListUsers returns every user, oldest first. An instance has people, not
// millions: the whole list is one answer.
func (s *UserService) ListUsers(ctx context.Context) ([]*link.User, error) {
	var out []*link.User
	err := s.db.db.View(func(tx *bolt.Tx) error {
		ids := s.db.ids
		return tx.Bucket(bucketUsers).ForEach(func(k, v []byte) error {
			rec, err := decodeUser(k, v)
			if err != nil {
				return err
			}
			out = append(out, rec.user(ids, btoi(k)))
			return nil
		})
	})
	return out, err
}

// UpdateUser applies upd to a user in one transaction, with its audit
// entries (recordUserUpdate), and returns the user as stored. ENOTFOUND,
// EINVALID.
func (s *UserService) UpdateUser(ctx context.Context, id string, upd link.UserUpdate) (*link.User, error) {
	uid, ok := s.db.ids.parseID(prefixUser, id)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "user %q not found", id)
	}
	if upd.Name != nil {
		name := strings.TrimSpace(*upd.Name)
		if msg := link.CheckUserName(name); msg != "" {
			return nil, &link.Error{Code: link.EINVALID, Message: "name: " + msg, Fields: []link.FieldError{{Field: "name", Message: msg}}}
		}
		upd.Name = &name
	}
	var u *link.User
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findUser(tx, uid)
		if err != nil {
			return err
		}
		before := *rec
		if upd.Name != nil {
			rec.Name = *upd.Name
		}
		if upd.PasswordHash != nil {
			rec.PasswordHash = upd.PasswordHash
		}
		if upd.Disabled != nil {
			rec.Disabled = *upd.Disabled
		}
		if upd.EndTokens {
			rec.TokenGeneration++
		}
		if err := putJSON(tx.Bucket(bucketUsers), itob(uid), rec); err != nil {
			return err
		}
		u = rec.user(s.db.ids, uid)
		return s.recordUserUpdate(ctx, tx, uid, &before, rec, upd)
	})
	return u, err
}

// recordUserUpdate records what an update changed, each its own action:
// user.renamed, user.password_changed (never a hash), user.disabled or
// user.enabled, and auth.logout_all when tokens were ended for nothing
// else. Nothing is recorded for what did not change.
func (s *UserService) recordUserUpdate(ctx context.Context, tx *bolt.Tx, uid uint64, before, after *userRecord, upd link.UserUpdate) error {
	target := link.AuditTarget{Type: "user", ID: s.db.ids.formatID(prefixUser, uid)}
	es := link.UserUpdateAudit(before.Name, after.Name, before.Disabled, after.Disabled, upd)
	for _, e := range es {
		if err := s.db.recordUserAudit(ctx, tx, uid, e.Action, target, e.Changes); err != nil {
			return err
		}
	}
	return nil
}

// LoadSessions returns every user's token generation and disabled flag,
// and the revoked tokens that have not expired at now.
func (s *UserService) LoadSessions(ctx context.Context, now time.Time) ([]link.UserSession, []link.RevokedToken, error) {
	var users []link.UserSession
	var revoked []link.RevokedToken
	err := s.db.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketUsers).ForEach(func(k, v []byte) error {
			rec, err := decodeUser(k, v)
			if err != nil {
				return err
			}
			if rec.TokenGeneration > 0 || rec.Disabled {
				users = append(users, link.UserSession{UserID: s.db.ids.formatID(prefixUser, btoi(k)),
					TokenGeneration: rec.TokenGeneration, Disabled: rec.Disabled})
			}
			return nil
		})
		if err != nil {
			return err
		}
		return tx.Bucket(bucketTokensRevoked).ForEach(func(k, v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("revoked token %q: expiry of %d bytes", k, len(v))
			}
			if exp := time.Unix(0, int64(btoi(v))).UTC(); now.Before(exp) {
				revoked = append(revoked, link.RevokedToken{ID: string(k), ExpiresAt: exp})
			}
			return nil
		})
	})
	return users, revoked, err
}

// RevokeToken records a logged-out token until it expires, with an
// auth.logout entry for the user of ctx, and forgets the revoked tokens
// that expired before now (the bucket holds the logouts of one token
// lifetime, so the walk is short).
func (s *UserService) RevokeToken(ctx context.Context, t link.RevokedToken, now time.Time) error {
	if t.ID == "" {
		return fmt.Errorf("revoke token: empty ID")
	}
	return s.db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTokensRevoked)
		var expired [][]byte
		if err := b.ForEach(func(k, v []byte) error {
			if len(v) == 8 && !now.Before(time.Unix(0, int64(btoi(v)))) {
				expired = append(expired, cloneBytes(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range expired {
			if err := b.Delete(k); err != nil {
				return fmt.Errorf("forget revoked token: %w", err)
			}
		}
		if err := b.Put([]byte(t.ID), itob(uint64(t.ExpiresAt.UnixNano()))); err != nil {
			return fmt.Errorf("revoke token: %w", err)
		}
		return s.recordLogout(ctx, tx, t)
	})
}

// recordLogout records auth.logout for the user of ctx, who ends their own
// token: in every workspace of theirs. The token is named by when it would
// have expired, never by its ID, which would let the entry's reader
// recognise the token.
func (s *UserService) recordLogout(ctx context.Context, tx *bolt.Tx, t link.RevokedToken) error {
	actor, _ := link.ActorFrom(ctx)
	uid, _ := s.db.ids.parseID(prefixUser, actor.ID)
	return s.db.recordUserAudit(ctx, tx, uid, link.AuditLogout, link.AuditTarget{Type: "user", ID: actor.ID},
		link.AuditChanges("token_expires_at", link.AuditTime(&t.ExpiresAt), nil))
}

// decodeUser decodes the user record v stored under k.
func decodeUser(k, v []byte) (*userRecord, error) {
	var rec userRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, fmt.Errorf("decode user %x: %w", k, err)
	}
	return &rec, nil
}
