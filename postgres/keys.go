package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// KeyService keeps API keys in PostgreSQL. Key usage (TouchKey) is
// counted in memory, written in batches by a goroutine of the store, and
// merged into every read (see key_usage.go).
type KeyService struct{ db *DB }

var _ link.KeyStore = (*KeyService)(nil)

// keyColumns are the columns scanKey reads, of keys named k.
const keyColumns = `k.id, k.workspace_id, k.name, k.scope, k.hash, k.start, k.created_at, k.expires_at, k.revoked_at,
	k.grace_ends_at, k.replaced_by, k.creator_type, k.creator_id, k.keep_when_creator_disabled, k.resources`

// keyUsageColumns follow keyColumns in a read with usage: the counts
// written, and the snapshot of the statement (to tell which batches of
// uses in memory it holds).
const keyUsageColumns = `, coalesce(u.request_count, 0), u.last_used_at, pg_current_snapshot()::text
	FROM keys k LEFT JOIN key_usage u ON u.key_id = k.id`

// scanKey reads a row of keyColumns, then into more.
func scanKey(row pgx.Row, more ...any) (*link.APIKey, error) {
	var k link.APIKey
	var scope string
	var replacedBy *string
	err := row.Scan(append([]any{&k.ID, &k.WorkspaceID, &k.Name, &scope, &k.Hash, &k.Start, &k.CreatedAt, &k.ExpiresAt,
		&k.RevokedAt, &k.GraceEndsAt, &replacedBy, &k.CreatedBy.Type, &k.CreatedBy.ID, &k.KeepWhenCreatorDisabled, &k.Resources}, more...)...)
	if err != nil {
		return nil, err
	}
	k.Scope = link.Scope(scope)
	k.CreatedAt = k.CreatedAt.UTC()
	k.ExpiresAt, k.RevokedAt, k.GraceEndsAt = utcPtr(k.ExpiresAt), utcPtr(k.RevokedAt), utcPtr(k.GraceEndsAt)
	if replacedBy != nil {
		k.ReplacedBy = *replacedBy
	}
	return &k, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// nilIfNone is a key's resources as the column keeps them: NULL for
// every resource.
func nilIfNone(rs []string) []string {
	if len(rs) == 0 {
		return nil
	}
	return rs
}

// keyTarget is a key as the target of an audit entry.
func keyTarget(id string) link.AuditTarget { return link.AuditTarget{Type: "key", ID: id} }

func keyNotFound(id string) error { return link.Errorf(link.ENOTFOUND, "key %q not found", id) }

// findKeyRow returns key id of workspace wsID read in tx, without usage,
// locked for the transaction's update when lock is set (after the
// workspace's row; FOR NO KEY UPDATE, which the key_usage rows' check of
// their key does not wait for). ENOTFOUND.
func findKeyRow(ctx context.Context, tx pgx.Tx, wsID, id string, lock bool) (*link.APIKey, error) {
	sql := `SELECT ` + keyColumns + ` FROM keys k WHERE k.id = $1 AND k.workspace_id = $2`
	if lock {
		sql += ` FOR NO KEY UPDATE`
	}
	k, err := scanKey(tx.QueryRow(ctx, sql, id, wsID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, keyNotFound(id)
	} else if err != nil {
		return nil, fmt.Errorf("key %s: %w", id, err)
	}
	return k, nil
}

// lockKey locks the workspace's row, then the key's, and returns the key.
// ENOTFOUND for either.
func lockKey(ctx context.Context, tx pgx.Tx, wsID, id string) (*link.APIKey, error) {
	if _, err := findWorkspace(ctx, tx, wsID, true); link.ErrorCode(err) == link.ENOTFOUND {
		return nil, keyNotFound(id)
	} else if err != nil {
		return nil, err
	}
	return findKeyRow(ctx, tx, wsID, id, true)
}

// insertKey stores k (its fields as given) under a new ID and returns the
// ID. ECONFLICT if a key has its hash.
func (db *DB) insertKey(ctx context.Context, tx pgx.Tx, k *link.APIKey) (string, error) {
	if len(k.Hash) == 0 {
		return "", errors.New("postgres: key without hash")
	}
	id, seq, err := db.newID(ctx, tx, link.PrefixKey)
	if err != nil {
		return "", err
	}
	_, err = tx.Exec(ctx, `INSERT INTO keys (id, seq, workspace_id, name, scope, hash, start, created_at, expires_at, revoked_at, creator_type, creator_id, resources)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		id, seq, k.WorkspaceID, k.Name, string(k.Scope), k.Hash, k.Start, k.CreatedAt, k.ExpiresAt, k.RevokedAt, k.CreatedBy.Type, k.CreatedBy.ID, nilIfNone(k.Resources))
	if isUnique(err, "keys_hash_key") {
		return "", link.Errorf(link.ECONFLICT, "a key with this token exists already")
	} else if err != nil {
		return "", fmt.Errorf("insert key: %w", err)
	}
	return id, nil
}

// countLiveKeys returns how many keys of the workspace are active or in
// grace at now, after recording the ends of those whose expiry or grace
// period has passed (as the data file's store does when it counts). The
// caller holds the workspace's row lock.
func (db *DB) countLiveKeys(ctx context.Context, tx pgx.Tx, wsID string, now time.Time) (int, error) {
	if _, err := db.recordEndedKeys(ctx, tx, wsID, now); err != nil {
		return 0, err
	}
	var n int
	err := tx.QueryRow(ctx, `SELECT count(*) FROM keys WHERE workspace_id = $1 AND revoked_at IS NULL
		AND (expires_at IS NULL OR expires_at > $2) AND (grace_ends_at IS NULL OR grace_ends_at > $2)`, wsID, now).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count keys: %w", err)
	}
	return n, nil
}

// CreateKey stores a validated key; sets ID and, when zero, CreatedAt.
// ENOTFOUND if the workspace does not exist; ECONFLICT if a key with the
// same hash exists, or if the workspace has max keys active or in grace
// (max <= 0: no cap), counted under the workspace's row lock so that
// creations at once, on any instance, cannot pass the cap together.
func (s *KeyService) CreateKey(ctx context.Context, k *link.APIKey, max int) error {
	if !s.db.validID(link.PrefixWorkspace, k.WorkspaceID) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", k.WorkspaceID)
	}
	now := s.db.now().UTC()
	rec := &link.APIKey{
		WorkspaceID: k.WorkspaceID,
		Name:        k.Name,
		Scope:       k.Scope,
		Hash:        k.Hash,
		Start:       k.Start,
		CreatedAt:   k.CreatedAt.UTC(),
		ExpiresAt:   utcPtr(k.ExpiresAt),
		RevokedAt:   utcPtr(k.RevokedAt),
		CreatedBy:   k.CreatedBy,
		Resources:   k.Resources,
	}
	if k.CreatedAt.IsZero() {
		rec.CreatedAt = now
	}
	var id string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findWorkspace(ctx, tx, k.WorkspaceID, true); err != nil {
			return err
		}
		if err := s.db.checkActor(ctx, tx, k.WorkspaceID, now); err != nil {
			return err
		}
		if max > 0 {
			n, err := s.db.countLiveKeys(ctx, tx, k.WorkspaceID, now)
			if err != nil {
				return err
			}
			if n >= max {
				return link.Errorf(link.ECONFLICT, "the workspace has %d keys active or in grace, the most allowed (keys.max_per_workspace); revoke keys it no longer needs, or rotate one instead", n)
			}
		}
		var err error
		if id, err = s.db.insertKey(ctx, tx, rec); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, k.WorkspaceID, link.AuditKeyCreated, keyTarget(id),
			link.AuditChanges("name", nil, rec.Name, "scope", nil, string(rec.Scope), "expires_at", nil, link.AuditTime(rec.ExpiresAt)))
	})
	if err != nil {
		return err
	}
	k.ID, k.CreatedAt = id, rec.CreatedAt
	return nil
}

// FindKeyByID returns a key of the workspace with its usage. ENOTFOUND.
func (s *KeyService) FindKeyByID(ctx context.Context, workspaceID, id string) (*link.APIKey, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixKey, id) {
		return nil, keyNotFound(id)
	}
	k, err := s.readKey(ctx, `SELECT `+keyColumns+keyUsageColumns+` WHERE k.id = $1 AND k.workspace_id = $2`, id, workspaceID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, keyNotFound(id)
	}
	return k, err
}

// FindKeyByHash returns the key with the token hash, in any state, with
// its usage. ENOTFOUND.
func (s *KeyService) FindKeyByHash(ctx context.Context, hash []byte) (*link.APIKey, error) {
	if len(hash) == 0 {
		return nil, link.Errorf(link.ENOTFOUND, "key not found")
	}
	k, err := s.readKey(ctx, `SELECT `+keyColumns+keyUsageColumns+` WHERE k.hash = $1`, hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "key not found")
	}
	return k, err
}

// readKey reads one key with its usage by sql. pgx.ErrNoRows when none.
func (s *KeyService) readKey(ctx context.Context, sql string, args ...any) (*link.APIKey, error) {
	u := s.db.usage.begin()
	var count int64
	var last *time.Time
	var snap string
	k, err := scanKey(s.db.pool.QueryRow(ctx, sql, args...), &count, &last, &snap)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	setUsage(k, count, last)
	if err := s.db.usage.merge(ctx, s.db, u, snap, []*link.APIKey{k}); err != nil {
		return nil, err
	}
	return k, nil
}

// FindKeys returns the workspace's keys, newest first, with their usage.
// ENOTFOUND for an unknown workspace.
func (s *KeyService) FindKeys(ctx context.Context, workspaceID string) ([]*link.APIKey, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	var exists bool
	if err := s.db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = $1)`, workspaceID).Scan(&exists); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", workspaceID, err)
	}
	if !exists {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	u := s.db.usage.begin()
	rows, err := s.db.pool.Query(ctx, `SELECT `+keyColumns+keyUsageColumns+` WHERE k.workspace_id = $1 ORDER BY k.seq DESC`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("keys of workspace %s: %w", workspaceID, err)
	}
	out := []*link.APIKey{}
	var snap string
	for rows.Next() {
		var count int64
		var last *time.Time
		k, err := scanKey(rows, &count, &last, &snap)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("keys of workspace %s: %w", workspaceID, err)
		}
		setUsage(k, count, last)
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("keys of workspace %s: %w", workspaceID, err)
	}
	if len(out) > 0 {
		if err := s.db.usage.merge(ctx, s.db, u, snap, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func setUsage(k *link.APIKey, count int64, last *time.Time) {
	k.RequestCount = count
	k.LastUsedAt = utcPtr(last)
}

// RotateKey stores next with the old key's name, scope and expiry, and puts
// the old key in grace until graceEnds, in one transaction under the
// workspace's row lock; sets next's ID, WorkspaceID, Name, Scope,
// ExpiresAt and CreatedAt and returns it. ENOTFOUND; ECONFLICT unless the
// old key is active.
//
// Rotation may pass max (keys active or in grace; max <= 0: no cap) so that
// a workspace at the cap can still rotate every key once; at twice max it
// is refused with ECONFLICT until grace periods end or keys are revoked.
func (s *KeyService) RotateKey(ctx context.Context, workspaceID, id string, next *link.APIKey, graceEnds time.Time, max int) (*link.APIKey, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixKey, id) {
		return nil, keyNotFound(id)
	}
	now := s.db.now().UTC()
	g := graceEnds.UTC()
	var nk *link.APIKey
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		old, err := lockKey(ctx, tx, workspaceID, id)
		if err != nil {
			return err
		}
		if st := old.State(now); st != link.KeyActive {
			return link.Errorf(link.ECONFLICT, "only an active key can be rotated; this key is %s", st)
		}
		if err := s.db.checkActor(ctx, tx, workspaceID, now); err != nil {
			return err
		}
		if max > 0 {
			n, err := s.db.countLiveKeys(ctx, tx, workspaceID, now)
			if err != nil {
				return err
			}
			if n >= 2*max {
				return link.Errorf(link.ECONFLICT, "the workspace has %d keys active or in grace, twice keys.max_per_workspace; revoke keys in grace before rotating more", n)
			}
		}
		nk = &link.APIKey{
			WorkspaceID: workspaceID,
			Name:        old.Name,
			Scope:       old.Scope,
			Hash:        next.Hash,
			Start:       next.Start,
			CreatedAt:   now,
			ExpiresAt:   old.ExpiresAt,
			CreatedBy:   next.CreatedBy,
			Resources:   old.Resources,
		}
		if nk.ID, err = s.db.insertKey(ctx, tx, nk); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE keys SET grace_ends_at = $2, replaced_by = $3 WHERE id = $1`, id, g, nk.ID); err != nil {
			return fmt.Errorf("rotate key %s: %w", id, err)
		}
		// The entry names when the old key stops working; key.grace_ended
		// follows once that time has passed (RecordEndedKeys).
		return s.db.recordAudit(ctx, tx, workspaceID, link.AuditKeyRotated, keyTarget(id),
			link.AuditChanges("replaced_by", nil, nk.ID, "grace_ends_at", nil, link.AuditTime(&g)))
	})
	if err != nil {
		return nil, err
	}
	*next = *nk
	return next, nil
}

// RevokeKey revokes a key now. ENOTFOUND. Revoking a revoked key keeps its
// first revocation time.
func (s *KeyService) RevokeKey(ctx context.Context, workspaceID, id string) error {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixKey, id) {
		return keyNotFound(id)
	}
	now := s.db.now().UTC()
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		k, err := lockKey(ctx, tx, workspaceID, id)
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return nil
		}
		state := k.State(now)
		if _, err := tx.Exec(ctx, `UPDATE keys SET revoked_at = $2 WHERE id = $1`, id, now); err != nil {
			return fmt.Errorf("revoke key %s: %w", id, err)
		}
		return s.db.recordAudit(ctx, tx, workspaceID, link.AuditKeyRevoked, keyTarget(id),
			link.AuditChanges("state", string(state), string(link.KeyRevoked)))
	})
}

// SetKeepWhenCreatorDisabled sets whether the key keeps working when its
// creator is disabled, recording key.updated when that changes, and
// returns the key. ENOTFOUND.
func (s *KeyService) SetKeepWhenCreatorDisabled(ctx context.Context, workspaceID, id string, keep bool) (*link.APIKey, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixKey, id) {
		return nil, keyNotFound(id)
	}
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		k, err := lockKey(ctx, tx, workspaceID, id)
		if err != nil {
			return err
		}
		if k.KeepWhenCreatorDisabled == keep {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE keys SET keep_when_creator_disabled = $2 WHERE id = $1`, id, keep); err != nil {
			return fmt.Errorf("update key %s: %w", id, err)
		}
		return s.db.recordAudit(ctx, tx, workspaceID, link.AuditKeyUpdated, keyTarget(id),
			link.AuditChanges("keep_when_creator_disabled", fmt.Sprint(!keep), fmt.Sprint(keep)))
	})
	if err != nil {
		return nil, err
	}
	return s.FindKeyByID(ctx, workspaceID, id)
}

// TouchKey counts one use of the key at the given time, in memory only.
// Unknown or malformed IDs are ignored when written.
func (s *KeyService) TouchKey(id string, at time.Time) {
	if !s.db.validID(link.PrefixKey, id) {
		return
	}
	s.db.usage.touch(id, at)
}

// RecordEndedKeys records key.grace_ended or key.expired for each key
// whose grace period or expiry has passed by now and is not recorded yet,
// and returns how many ended. The server runs it with the audit log's
// pruning, every hour.
func (s *KeyService) RecordEndedKeys(ctx context.Context, now time.Time) (int, error) {
	n := 0
	err := s.db.tx(ctx, func(tx pgx.Tx) (err error) {
		n, err = s.db.recordEndedKeys(ctx, tx, "", now)
		return err
	})
	return n, err
}

// recordEndedKeys records the ends (expiry, end of grace) passed by now of
// the keys of workspace wsID ("": every workspace) not recorded yet, each
// at the time it ended and by the system, and returns how many. A key
// revoked before its end has its revocation's entry only. The rows are
// locked in the order of their sequence (as a member's removal locks
// them), and a row another transaction recorded meanwhile is left out
// when its lock is granted, so each end is recorded once.
func (db *DB) recordEndedKeys(ctx context.Context, tx pgx.Tx, wsID string, now time.Time) (int, error) {
	rows, err := tx.Query(ctx, `SELECT id, workspace_id, expires_at, grace_ends_at FROM keys
		WHERE NOT end_recorded AND revoked_at IS NULL AND (expires_at IS NOT NULL OR grace_ends_at IS NOT NULL)
			AND LEAST(expires_at, grace_ends_at) <= $1 AND ($2 = '' OR workspace_id = $2)
		ORDER BY seq FOR NO KEY UPDATE`, now, wsID)
	if err != nil {
		return 0, fmt.Errorf("ended keys: %w", err)
	}
	type ended struct {
		id, ws           string
		expires, graceAt *time.Time
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ended, error) {
		var e ended
		err := r.Scan(&e.id, &e.ws, &e.expires, &e.graceAt)
		return e, err
	})
	if err != nil {
		return 0, fmt.Errorf("ended keys: %w", err)
	}
	for _, k := range keys {
		action, at, after := link.AuditKeyGraceEnded, k.graceAt, link.KeyRevoked
		if k.expires != nil && !now.Before(*k.expires) && (k.graceAt == nil || k.expires.Before(*k.graceAt)) {
			action, at, after = link.AuditKeyExpired, k.expires, link.KeyExpired
		}
		before := link.KeyActive
		if k.graceAt != nil {
			before = link.KeyGrace
		}
		if _, err := tx.Exec(ctx, `UPDATE keys SET end_recorded = true WHERE id = $1`, k.id); err != nil {
			return 0, fmt.Errorf("record end of key %s: %w", k.id, err)
		}
		if err := db.putAuditAt(ctx, tx, []string{k.ws}, at.UTC(), action, keyTarget(k.id),
			link.AuditChanges("state", string(before), string(after))); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// putAuditAt stores an entry by the system at the time at, for an end
// noticed after it happened.
func (db *DB) putAuditAt(ctx context.Context, tx pgx.Tx, ws []string, at time.Time, action string, target link.AuditTarget, changes map[string][2]*string) error {
	id, seq, err := db.newID(ctx, tx, link.PrefixAudit)
	if err != nil {
		return err
	}
	var ch any
	if len(changes) > 0 {
		ch = changes
	}
	_, err = tx.Exec(ctx, `INSERT INTO audit_entries (seq, id, at, workspace_ids, actor_type, actor_id, actor_name, action, target_type, target_id, address, changes)
		VALUES ($1, $2, $3, $4, $5, '', '', $6, $7, $8, '', $9)`,
		seq, id, at, ws, link.SystemActor.Type, action, target.Type, target.ID, ch)
	if err != nil {
		return fmt.Errorf("audit entry: %w", err)
	}
	return nil
}
