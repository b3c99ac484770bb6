package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// WorkspaceService keeps workspaces and memberships in PostgreSQL.
type WorkspaceService struct{ db *DB }

var _ link.WorkspaceService = (*WorkspaceService)(nil)

// workspaceColumns are the columns scanWorkspace reads, in its order;
// wsColumns the same of a query that names the table w.
const (
	workspaceColumns = `id, name, plan, created_at, updated_at, data_since, link_forward, destination_checks, pixel_meta, pixel_google, pixel_linkedin`
	wsColumns        = `w.id, w.name, w.plan, w.created_at, w.updated_at, w.data_since, w.link_forward, w.destination_checks, w.pixel_meta, w.pixel_google, w.pixel_linkedin`
)

// scanWorkspace reads a row of workspaceColumns, then into more.
func scanWorkspace(row pgx.Row, more ...any) (*link.Workspace, error) {
	var w link.Workspace
	var since *time.Time
	var forward int16
	if err := row.Scan(append([]any{&w.ID, &w.Name, &w.Plan, &w.CreatedAt, &w.UpdatedAt, &since, &forward, &w.DestinationChecks, &w.Pixels.Meta, &w.Pixels.Google, &w.Pixels.LinkedIn}, more...)...); err != nil {
		return nil, err
	}
	w.ForwardPath, w.ForwardQuery = forward&forwardPath != 0, forward&forwardQuery != 0
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	if since != nil {
		w.DataSince = since.UTC()
	}
	return &w, nil
}

// findWorkspace returns a workspace read in tx, locked for the
// transaction's update when lock is set: a change of its members or
// invitations locks it first, so that changes to one workspace from
// several instances happen one after the other. ENOTFOUND.
func findWorkspace(ctx context.Context, tx pgx.Tx, id string, lock bool) (*link.Workspace, error) {
	sql := `SELECT ` + workspaceColumns + ` FROM workspaces WHERE id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	w, err := scanWorkspace(tx.QueryRow(ctx, sql, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", id, err)
	}
	return w, nil
}

// workspaceTarget is a workspace as the target of an audit entry.
func workspaceTarget(id string) link.AuditTarget {
	return link.AuditTarget{Type: "workspace", ID: id}
}

// insertWorkspace stores w (name, plan, times) under a new ID with
// ownerID as its owner and returns the ID.
func (db *DB) insertWorkspace(ctx context.Context, tx pgx.Tx, w *link.Workspace, ownerID string) (string, error) {
	id, seq, err := db.newID(ctx, tx, link.PrefixWorkspace)
	if err != nil {
		return "", err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO workspaces (id, seq, name, plan, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		id, seq, w.Name, w.Plan, w.CreatedAt, w.UpdatedAt); err != nil {
		return "", fmt.Errorf("insert workspace: %w", err)
	}
	return id, putMembership(ctx, tx, id, ownerID, link.RoleOwner, w.CreatedAt)
}

// putMembership makes a user a member of a workspace with role since at;
// a former member who joins again is a member like any other.
func putMembership(ctx context.Context, tx pgx.Tx, wsID, userID string, role link.Role, at time.Time) error {
	if _, err := tx.Exec(ctx, `DELETE FROM former_members WHERE workspace_id = $1 AND user_id = $2`, wsID, userID); err != nil {
		return fmt.Errorf("delete former membership: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO members (workspace_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role, created_at = excluded.created_at`,
		wsID, userID, role, at); err != nil {
		return fmt.Errorf("put membership: %w", err)
	}
	return nil
}

// CreateWorkspace stores a workspace with ownerID as its owner; sets ID,
// CreatedAt and UpdatedAt. EINVALID; ENOTFOUND if the owner does not
// exist; ECONFLICT when the owner owns maxOwned workspaces already (0: no
// bound), counted under the owner's row lock so that requests at once,
// on any instance, cannot pass the bound together.
func (s *WorkspaceService) CreateWorkspace(ctx context.Context, w *link.Workspace, ownerID string, maxOwned int) error {
	v := *w
	if err := v.Validate(); err != nil {
		return err
	}
	if !s.db.validID(link.PrefixUser, ownerID) {
		return link.Errorf(link.ENOTFOUND, "user %q not found", ownerID)
	}
	now := s.db.now().UTC()
	var wid string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findUser(ctx, tx, ownerID, true); err != nil {
			return err
		}
		if maxOwned > 0 {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM members WHERE user_id = $1 AND role = 'owner'`, ownerID).Scan(&n); err != nil {
				return fmt.Errorf("count owned workspaces: %w", err)
			}
			if n >= maxOwned {
				return link.Errorf(link.ECONFLICT, "you own %d workspaces, the most one user may own to create another (workspaces.max_per_user); the instance admin is not bound by it", n)
			}
		}
		var err error
		if wid, err = s.db.insertWorkspace(ctx, tx, &link.Workspace{Name: v.Name, Plan: v.Plan, CreatedAt: now, UpdatedAt: now}, ownerID); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditWorkspaceCreated, workspaceTarget(wid),
			link.AuditChanges("name", nil, v.Name, "plan", nil, string(v.Plan)))
	})
	if err != nil {
		return err
	}
	v.ID, v.CreatedAt, v.UpdatedAt = wid, now, now
	*w = v
	return nil
}

// FindWorkspaceByID returns a workspace. ENOTFOUND.
func (s *WorkspaceService) FindWorkspaceByID(ctx context.Context, id string) (*link.Workspace, error) {
	if !s.db.validID(link.PrefixWorkspace, id) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", id)
	}
	w, err := scanWorkspace(s.db.pool.QueryRow(ctx, `SELECT `+workspaceColumns+` FROM workspaces WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", id, err)
	}
	return w, nil
}

// FindMemberships returns the user's workspaces with roles, oldest
// membership first. An unknown user has none.
func (s *WorkspaceService) FindMemberships(ctx context.Context, userID string) ([]*link.Membership, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT `+wsColumns+`, m.role, m.created_at FROM members m
		JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id = $1 ORDER BY m.created_at, w.seq`, userID)
	if err != nil {
		return nil, fmt.Errorf("memberships: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Membership, error) {
		m := &link.Membership{UserID: userID}
		var err error
		m.Workspace, err = scanWorkspace(r, &m.Role, &m.CreatedAt)
		m.CreatedAt = m.CreatedAt.UTC()
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("memberships: %w", err)
	}
	if out == nil {
		out = []*link.Membership{}
	}
	return out, nil
}

// FindMembership returns the user's role in a workspace. ENOTFOUND if the
// user is not a member (or either does not exist).
func (s *WorkspaceService) FindMembership(ctx context.Context, workspaceID, userID string) (*link.Membership, error) {
	m := &link.Membership{UserID: userID}
	var err error
	m.Workspace, err = scanWorkspace(s.db.pool.QueryRow(ctx, `SELECT `+wsColumns+`, m.role, m.created_at FROM members m
		JOIN workspaces w ON w.id = m.workspace_id WHERE m.workspace_id = $1 AND m.user_id = $2`, workspaceID, userID),
		&m.Role, &m.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "user %q is not a member of workspace %q", userID, workspaceID)
	} else if err != nil {
		return nil, fmt.Errorf("membership: %w", err)
	}
	m.CreatedAt = m.CreatedAt.UTC()
	return m, nil
}

// UpdateWorkspace applies an update and validates the result, recording
// workspace.renamed and workspace.plan_changed for what changed.
// ENOTFOUND, EINVALID.
func (s *WorkspaceService) UpdateWorkspace(ctx context.Context, id string, upd link.WorkspaceUpdate) (*link.Workspace, error) {
	if !s.db.validID(link.PrefixWorkspace, id) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", id)
	}
	var w *link.Workspace
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		before, err := findWorkspace(ctx, tx, id, true)
		if err != nil {
			return err
		}
		next := *before
		if upd.Name != nil {
			next.Name = *upd.Name
		}
		if upd.Plan != nil {
			next.Plan = *upd.Plan
		}
		if upd.ForwardPath != nil {
			next.ForwardPath = *upd.ForwardPath
		}
		if upd.ForwardQuery != nil {
			next.ForwardQuery = *upd.ForwardQuery
		}
		if upd.DestinationChecks != nil {
			next.DestinationChecks = *upd.DestinationChecks
		}
		if upd.Pixels != nil {
			next.Pixels = *upd.Pixels
		}
		if err := next.Validate(); err != nil {
			return err
		}
		if before.DestinationChecks != next.DestinationChecks {
			if err := setDestinationChecks(ctx, tx, id, next.DestinationChecks); err != nil {
				return err
			}
		}
		next.UpdatedAt = s.db.now().UTC()
		forward := forwardBits(&link.Link{ForwardPath: next.ForwardPath, ForwardQuery: next.ForwardQuery})
		if _, err := tx.Exec(ctx, `UPDATE workspaces SET name = $2, plan = $3, updated_at = $4, link_forward = $5, destination_checks = $6,
			pixel_meta = $7, pixel_google = $8, pixel_linkedin = $9 WHERE id = $1`,
			id, next.Name, next.Plan, next.UpdatedAt, forward, next.DestinationChecks, next.Pixels.Meta, next.Pixels.Google, next.Pixels.LinkedIn); err != nil {
			return fmt.Errorf("update workspace %s: %w", id, err)
		}
		if before.Name != next.Name {
			if err := s.db.recordAudit(ctx, tx, id, link.AuditWorkspaceRenamed, workspaceTarget(id),
				link.AuditChanges("name", before.Name, next.Name)); err != nil {
				return err
			}
		}
		if before.Plan != next.Plan {
			if err := s.db.recordAudit(ctx, tx, id, link.AuditWorkspacePlan, workspaceTarget(id),
				link.AuditChanges("plan", string(before.Plan), string(next.Plan))); err != nil {
				return err
			}
		}
		w = &next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}
