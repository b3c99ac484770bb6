package postgres

// The audit log: one row per entry in audit_entries, with the workspaces
// it belongs to in an array (empty for an instance-level entry). An entry
// of a change is written by the transaction of the change
// (db.recordAudit), so a change that fails records nothing.

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// AuditService keeps the audit log in PostgreSQL.
type AuditService struct{ db *DB }

var _ link.AuditService = (*AuditService)(nil)

// auditSystemID is what the actor filter names the system actor by, which
// has no ID.
const auditSystemID = "system"

// recordAudit records action on target in tx, the transaction of the
// change, for workspace wsID ("" for the instance), at the database's
// clock, by the actor and from the address of ctx (link.WithActor; the
// system when none). changes hold the changed fields as before and after,
// never a secret (auditChanges builds them). Every write of a service
// calls it beside its change:
//
//	err := s.db.recordAudit(ctx, tx, wsID, link.AuditKeyRevoked,
//		link.AuditTarget{Type: "key", ID: keyID}, link.AuditChanges("state", "active", "revoked"))
func (db *DB) recordAudit(ctx context.Context, tx pgx.Tx, wsID, action string, target link.AuditTarget, changes map[string][2]*string) error {
	var ws []string
	if wsID != "" {
		ws = []string{wsID}
	}
	return db.putAudit(ctx, tx, ws, action, target, changes)
}

// recordUserAudit is recordAudit for an action on a user's account (a
// password change, a sign-out everywhere): the entry belongs to every
// workspace the user is a member of, read in tx, and to the instance when
// there is none (an unknown user too).
func (db *DB) recordUserAudit(ctx context.Context, tx pgx.Tx, userID, action string, target link.AuditTarget, changes map[string][2]*string) error {
	rows, err := tx.Query(ctx, `SELECT m.workspace_id FROM members m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.user_id = $1 ORDER BY w.seq`, userID)
	if err != nil {
		return err
	}
	ws, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("workspaces of user %s: %w", userID, err)
	}
	return db.putAudit(ctx, tx, ws, action, target, changes)
}

// putAudit stores an entry for the workspaces ws (none: the instance).
func (db *DB) putAudit(ctx context.Context, tx pgx.Tx, ws []string, action string, target link.AuditTarget, changes map[string][2]*string) error {
	actor, addr := link.ActorFrom(ctx)
	id, seq, err := db.newID(ctx, tx, link.PrefixAudit)
	if err != nil {
		return err
	}
	if ws == nil {
		ws = []string{}
	}
	var ch any
	if len(changes) > 0 {
		ch = changes
	}
	_, err = tx.Exec(ctx, `INSERT INTO audit_entries (seq, id, at, workspace_ids, actor_type, actor_id, actor_name, action, target_type, target_id, address, changes)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		seq, id, db.now().UTC(), ws, actor.Type, actor.ID, actor.Name, action, target.Type, target.ID, addr, ch)
	if err != nil {
		return fmt.Errorf("audit entry: %w", err)
	}
	return nil
}

// RecordAudit stores an entry of an action that changes nothing else (a
// login, a backup download) for the workspaces named (none: the
// instance), with the actor and address of ctx. IDs that are no
// workspace's are left out.
func (s *AuditService) RecordAudit(ctx context.Context, workspaceIDs []string, action string, target link.AuditTarget, changes map[string]link.Change) error {
	var ws []string
	for _, id := range workspaceIDs {
		if s.db.validID(link.PrefixWorkspace, id) {
			ws = append(ws, id)
		}
	}
	ch := link.AuditChangeRecords(changes)
	return s.db.tx(ctx, func(tx pgx.Tx) error { return s.db.putAudit(ctx, tx, ws, action, target, ch) })
}

// RecordUserAudit stores an entry of an action on a user's account that
// changes nothing else (a sign-in) in every workspace of the user, with
// the actor and address of ctx; for an unknown user, the instance's.
func (s *AuditService) RecordUserAudit(ctx context.Context, userID, action string, target link.AuditTarget, changes map[string]link.Change) error {
	ch := link.AuditChangeRecords(changes)
	return s.db.tx(ctx, func(tx pgx.Tx) error { return s.db.recordUserAudit(ctx, tx, userID, action, target, ch) })
}

// auditCursor is where a page ends: the time (in microseconds, the
// database's precision) and sequence of its last entry.
type auditCursor struct {
	at  int64
	seq int64
}

func (c auditCursor) String() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(c.at))
	binary.BigEndian.PutUint64(b[8:], uint64(c.seq))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func parseAuditCursor(s string) (auditCursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return auditCursor{}, false
	}
	return auditCursor{at: int64(binary.BigEndian.Uint64(b[:8])), seq: int64(binary.BigEndian.Uint64(b[8:]))}, true
}

// FindAuditEntries returns a page of the entries f selects, newest first,
// and the cursor of the next page ("" when there is none).
// EINVALIDREQUEST for a malformed cursor; an unknown workspace has no
// entries.
func (s *AuditService) FindAuditEntries(ctx context.Context, f link.AuditFilter) ([]*link.AuditEntry, string, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	switch {
	case f.AllWorkspaces && f.WorkspaceID == "":
	case f.WorkspaceID != "":
		if !s.db.validID(link.PrefixWorkspace, f.WorkspaceID) {
			return []*link.AuditEntry{}, "", nil
		}
		where = append(where, "workspace_ids @> ARRAY["+arg(f.WorkspaceID)+"]::text[]")
	default:
		where = append(where, "cardinality(workspace_ids) = 0")
	}
	switch f.Actor {
	case "":
	case auditSystemID:
		where = append(where, "actor_type = 'system'")
	default:
		where = append(where, "actor_id = "+arg(f.Actor)+" AND actor_type <> 'system'")
	}
	if f.Action != "" {
		where = append(where, "action = "+arg(f.Action))
	}
	if f.Target != "" {
		where = append(where, "target_id = "+arg(f.Target))
	}
	if !f.Start.IsZero() {
		where = append(where, "at >= "+arg(f.Start))
	}
	if !f.End.IsZero() {
		where = append(where, "at < "+arg(f.End))
	}
	if f.Cursor != "" {
		c, ok := parseAuditCursor(f.Cursor)
		if !ok {
			return nil, "", link.Errorf(link.EINVALIDREQUEST, "cursor is not one this server gave out")
		}
		where = append(where, "(at, seq) < ("+arg(time.UnixMicro(c.at))+", "+arg(c.seq)+")")
	}
	limit := f.Limit
	if limit <= 0 || limit > link.MaxAuditPage {
		limit = link.MaxAuditPage
	}
	q := `SELECT seq, id, at, workspace_ids, actor_type, actor_id, actor_name, action, target_type, target_id, address, changes FROM audit_entries`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY at DESC, seq DESC LIMIT " + arg(limit+1)
	rows, err := s.db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("audit entries: %w", err)
	}
	defer rows.Close()
	out := []*link.AuditEntry{}
	var last auditCursor
	next := ""
	for rows.Next() {
		if len(out) == limit {
			next = last.String()
			break
		}
		var e link.AuditEntry
		var seq int64
		var changes map[string][2]*string
		if err := rows.Scan(&seq, &e.ID, &e.Time, &e.WorkspaceIDs, &e.Actor.Type, &e.Actor.ID, &e.Actor.Name, &e.Action,
			&e.Target.Type, &e.Target.ID, &e.Address, &changes); err != nil {
			return nil, "", fmt.Errorf("audit entries: %w", err)
		}
		e.Time = e.Time.UTC()
		if len(e.WorkspaceIDs) == 0 {
			e.WorkspaceIDs = nil
		}
		if len(changes) > 0 {
			e.Changes = make(map[string]link.Change, len(changes))
			for f, c := range changes {
				e.Changes[f] = link.Change{Before: c[0], After: c[1]}
			}
		}
		out = append(out, &e)
		last = auditCursor{at: e.Time.UnixMicro(), seq: seq}
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("audit entries: %w", err)
	}
	return out, next, nil
}

// auditPruneChunk is how many entries one pruning transaction deletes.
const auditPruneChunk = 5000

// PruneAudit deletes the entries recorded before before, oldest first, in
// transactions of at most auditPruneChunk entries, and returns how many.
func (s *AuditService) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	deleted := 0
	for {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		var n int64
		err := s.db.tx(ctx, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `DELETE FROM audit_entries WHERE seq IN (
				SELECT seq FROM audit_entries WHERE at < $1 ORDER BY at, seq LIMIT $2)`, before, auditPruneChunk)
			n = tag.RowsAffected()
			return err
		})
		if err != nil {
			return deleted, fmt.Errorf("prune audit log: %w", err)
		}
		deleted += int(n)
		if n < auditPruneChunk {
			return deleted, nil
		}
	}
}
