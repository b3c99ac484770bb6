package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// UserService keeps users, their sessions' state and their password
// links in PostgreSQL. E-mail addresses are unique in their normal form
// (users.email_key).
type UserService struct{ db *DB }

var (
	_ link.UserService    = (*UserService)(nil)
	_ link.AccountService = (*UserService)(nil)
	_ link.PasswordResets = (*UserService)(nil)
)

// bootstrapLock is the advisory lock under which Bootstrap checks that no
// user exists; CreateUser holds it shared, so that a user created at the
// same time cannot slip in beside the first admin.
const bootstrapLock = 0x6c62626f6f74 // "lbboot"

// userColumns are the columns scanUser reads, in its order.
const userColumns = `id, email, password_hash, admin, created_at, name, disabled, token_generation`

// scanUser reads a row of userColumns, then into more.
func scanUser(row pgx.Row, more ...any) (*link.User, error) {
	var u link.User
	var gen int64
	if err := row.Scan(append([]any{&u.ID, &u.Email, &u.PasswordHash, &u.Admin, &u.CreatedAt, &u.Name, &u.Disabled, &gen}, more...)...); err != nil {
		return nil, err
	}
	u.CreatedAt = u.CreatedAt.UTC()
	u.TokenGeneration = uint64(gen)
	return &u, nil
}

// findUser returns a user read in q (the pool or a transaction), locked
// for the transaction's update when lock is set. ENOTFOUND.
func findUser(ctx context.Context, q pgx.Tx, id string, lock bool) (*link.User, error) {
	sql := `SELECT ` + userColumns + ` FROM users WHERE id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	u, err := scanUser(q.QueryRow(ctx, sql, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "user %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("user %s: %w", id, err)
	}
	return u, nil
}

// FindUserByID returns a user. ENOTFOUND.
func (s *UserService) FindUserByID(ctx context.Context, id string) (*link.User, error) {
	if !s.db.validID(link.PrefixUser, id) {
		return nil, link.Errorf(link.ENOTFOUND, "user %q not found", id)
	}
	u, err := scanUser(s.db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "user %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("user %s: %w", id, err)
	}
	return u, nil
}

// FindUserByEmail returns a user by e-mail, ASCII letters in any case
// (link.NormalizeEmail). ENOTFOUND.
func (s *UserService) FindUserByEmail(ctx context.Context, email string) (*link.User, error) {
	u, err := scanUser(s.db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE email_key = $1`, link.NormalizeEmail(email)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "no user with e-mail %q", email)
	} else if err != nil {
		return nil, fmt.Errorf("user by e-mail: %w", err)
	}
	return u, nil
}

// CountUsers returns the number of users.
func (s *UserService) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := s.db.pool.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// Bootstrap creates the first user as instance admin and the workspace ws
// with the user as owner, in one transaction; sets their IDs and times.
// ECONFLICT if any user exists already; EINVALID for a bad e-mail or
// workspace.
func (s *UserService) Bootstrap(ctx context.Context, u *link.User, ws *link.Workspace) error {
	if msg := link.CheckEmail(u.Email); msg != "" {
		return &link.Error{Code: link.EINVALID, Message: "email: " + msg, Fields: []link.FieldError{{Field: "email", Message: msg}}}
	}
	w := *ws
	if err := w.Validate(); err != nil {
		return err
	}
	now := s.db.now().UTC()
	var uid, wid string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(bootstrapLock)); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users)`).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return link.Errorf(link.ECONFLICT, "linkbolt is already set up: a user exists")
		}
		var err error
		if uid, err = s.db.insertUser(ctx, tx, &link.User{Email: u.Email, PasswordHash: u.PasswordHash, Admin: true, CreatedAt: now}); err != nil {
			return err
		}
		if wid, err = s.db.insertWorkspace(ctx, tx, &link.Workspace{Name: w.Name, Plan: w.Plan, CreatedAt: now, UpdatedAt: now}, uid); err != nil {
			return err
		}
		// The set-up itself is audited, the system its actor: nobody is
		// signed in yet.
		if err := s.db.recordAudit(ctx, tx, wid, link.AuditUserCreated, link.AuditTarget{Type: "user", ID: uid},
			link.AuditChanges("email", nil, u.Email, "admin", nil, "true", "via", nil, "setup")); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditWorkspaceCreated, workspaceTarget(wid),
			link.AuditChanges("name", nil, w.Name, "plan", nil, string(w.Plan)))
	})
	if err != nil {
		return err
	}
	u.ID, u.Admin, u.CreatedAt = uid, true, now
	w.ID, w.CreatedAt, w.UpdatedAt = wid, now, now
	*ws = w
	return nil
}

// CreateUser stores a further user (not an admin unless u.Admin),
// recording user.created; sets ID and CreatedAt. ECONFLICT if the e-mail
// is taken (by another instance at the same time too: users_email_key);
// EINVALID for a bad e-mail or name (a name is optional here).
func (s *UserService) CreateUser(ctx context.Context, u *link.User) error {
	if msg := link.CheckEmail(u.Email); msg != "" {
		return &link.Error{Code: link.EINVALID, Message: "email: " + msg, Fields: []link.FieldError{{Field: "email", Message: msg}}}
	}
	u.Name = strings.TrimSpace(u.Name)
	if msg := link.CheckUserName(u.Name); u.Name != "" && msg != "" {
		return &link.Error{Code: link.EINVALID, Message: "name: " + msg, Fields: []link.FieldError{{Field: "name", Message: msg}}}
	}
	now := s.db.now().UTC()
	var uid string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, int64(bootstrapLock)); err != nil {
			return err
		}
		rec := &link.User{Email: u.Email, PasswordHash: u.PasswordHash, Admin: u.Admin, CreatedAt: now, Name: u.Name}
		var err error
		if uid, err = s.db.insertUser(ctx, tx, rec); err != nil {
			return err
		}
		return s.recordCreated(ctx, tx, uid, rec)
	})
	if err != nil {
		return err
	}
	u.ID, u.CreatedAt = uid, now
	return nil
}

// recordCreated records user.created for a user made by CreateUser: by
// the instance admin (via admin), or, for a user without a password, at
// their first single sign-on (via oidc), when the person is their own
// actor: ctx names them by e-mail only, having had no account yet. The
// entry is the instance's, as the new user is in no workspace.
func (s *UserService) recordCreated(ctx context.Context, tx pgx.Tx, uid string, rec *link.User) error {
	via := "admin"
	if len(rec.PasswordHash) == 0 {
		via = "oidc"
	}
	if actor, addr := link.ActorFrom(ctx); actor.Type == link.ActorUser && actor.ID == "" {
		ctx = link.WithActor(ctx, link.Actor{Type: link.ActorUser, ID: uid, Name: rec.Email}, addr)
	}
	return s.db.recordUserAudit(ctx, tx, uid, link.AuditUserCreated, link.AuditTarget{Type: "user", ID: uid},
		link.AuditChanges("email", nil, rec.Email, "name", nil, rec.Name, "admin", nil, fmt.Sprint(rec.Admin), "via", nil, via))
}

// insertUser stores u (its e-mail, password hash, admin flag, name and
// creation time) under a new ID and returns the ID. ECONFLICT if the
// e-mail is taken.
func (db *DB) insertUser(ctx context.Context, tx pgx.Tx, u *link.User) (string, error) {
	id, seq, err := db.newID(ctx, tx, link.PrefixUser)
	if err != nil {
		return "", err
	}
	hash := u.PasswordHash
	if hash == nil {
		hash = []byte{}
	}
	_, err = tx.Exec(ctx, `INSERT INTO users (id, seq, email, email_key, password_hash, admin, name, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, id, seq, u.Email, link.NormalizeEmail(u.Email), hash, u.Admin, u.Name, u.CreatedAt)
	if isUnique(err, "users_email_key") {
		return "", link.Errorf(link.ECONFLICT, "a user with e-mail %q exists already", u.Email)
	} else if err != nil {
		return "", fmt.Errorf("insert user: %w", err)
	}
	return id, nil
}

// ListUsers returns every user, oldest first. An instance has people, not
// millions: the whole list is one answer.
func (s *UserService) ListUsers(ctx context.Context) ([]*link.User, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT `+userColumns+` FROM users ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.User, error) { return scanUser(r) })
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// UpdateUser applies upd to a user in one transaction, with its audit
// entries (recordUserUpdate), and returns the user as stored. ENOTFOUND,
// EINVALID.
func (s *UserService) UpdateUser(ctx context.Context, id string, upd link.UserUpdate) (*link.User, error) {
	if !s.db.validID(link.PrefixUser, id) {
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
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		before, err := findUser(ctx, tx, id, true)
		if err != nil {
			return err
		}
		after := *before
		if upd.Name != nil {
			after.Name = *upd.Name
		}
		if upd.PasswordHash != nil {
			after.PasswordHash = upd.PasswordHash
		}
		if upd.Disabled != nil {
			after.Disabled = *upd.Disabled
		}
		if upd.EndTokens {
			after.TokenGeneration++
		}
		if err := putUser(ctx, tx, &after); err != nil {
			return err
		}
		u = &after
		return s.recordUserUpdate(ctx, tx, before, &after, upd)
	})
	return u, err
}

// putUser writes what UpdateUser changes of u.
func putUser(ctx context.Context, tx pgx.Tx, u *link.User) error {
	_, err := tx.Exec(ctx, `UPDATE users SET name = $2, password_hash = $3, disabled = $4, token_generation = $5 WHERE id = $1`,
		u.ID, u.Name, u.PasswordHash, u.Disabled, int64(u.TokenGeneration))
	if err != nil {
		return fmt.Errorf("update user %s: %w", u.ID, err)
	}
	return nil
}

// recordUserUpdate records what an update changed, each its own action:
// user.renamed, user.password_changed (never a hash), user.disabled or
// user.enabled, and auth.logout_all when tokens were ended for nothing
// else. Nothing is recorded for what did not change.
func (s *UserService) recordUserUpdate(ctx context.Context, tx pgx.Tx, before, after *link.User, upd link.UserUpdate) error {
	target := link.AuditTarget{Type: "user", ID: after.ID}
	es := link.UserUpdateAudit(before.Name, after.Name, before.Disabled, after.Disabled, upd)
	for _, e := range es {
		if err := s.db.recordUserAudit(ctx, tx, after.ID, e.Action, target, e.Changes); err != nil {
			return err
		}
	}
	return nil
}

// LoadSessions returns the token generation and disabled flag of every
// user whose sessions were ended or who is disabled, and the revoked
// tokens that have not expired at now.
func (s *UserService) LoadSessions(ctx context.Context, now time.Time) ([]link.UserSession, []link.RevokedToken, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT id, token_generation, disabled FROM users
		WHERE token_generation > 0 OR disabled ORDER BY seq`)
	if err != nil {
		return nil, nil, fmt.Errorf("load sessions: %w", err)
	}
	users, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (link.UserSession, error) {
		var us link.UserSession
		var gen int64
		err := r.Scan(&us.UserID, &gen, &us.Disabled)
		us.TokenGeneration = uint64(gen)
		return us, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("load sessions: %w", err)
	}
	rows, err = s.db.pool.Query(ctx, `SELECT id, expires_at FROM revoked_tokens WHERE expires_at > $1 ORDER BY id`, now)
	if err != nil {
		return nil, nil, fmt.Errorf("load revoked tokens: %w", err)
	}
	revoked, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (link.RevokedToken, error) {
		var t link.RevokedToken
		err := r.Scan(&t.ID, &t.ExpiresAt)
		t.ExpiresAt = t.ExpiresAt.UTC()
		return t, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("load revoked tokens: %w", err)
	}
	return users, revoked, nil
}

// RevokeToken records a logged-out token until it expires, with an
// auth.logout entry for the user of ctx, and forgets the revoked tokens
// that expired before now.
func (s *UserService) RevokeToken(ctx context.Context, t link.RevokedToken, now time.Time) error {
	if t.ID == "" {
		return fmt.Errorf("revoke token: empty ID")
	}
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM revoked_tokens WHERE expires_at <= $1`, now); err != nil {
			return fmt.Errorf("forget revoked tokens: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO revoked_tokens (id, expires_at) VALUES ($1, $2)
			ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`, t.ID, t.ExpiresAt); err != nil {
			return fmt.Errorf("revoke token: %w", err)
		}
		// The token is named by when it would have expired, never by its
		// ID, which would let the entry's reader recognise the token.
		actor, _ := link.ActorFrom(ctx)
		return s.db.recordUserAudit(ctx, tx, actor.ID, link.AuditLogout, link.AuditTarget{Type: "user", ID: actor.ID},
			link.AuditChanges("token_expires_at", link.AuditTime(&t.ExpiresAt), nil))
	})
}
