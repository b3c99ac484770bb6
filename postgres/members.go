package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// MemberService keeps the members of workspaces in PostgreSQL. Every
// change keeps at least one owner: it locks the workspace's row first, so
// that two owners stepping down at once on two instances cannot both
// pass the check.
type MemberService struct{ db *DB }

var _ link.MemberService = (*MemberService)(nil)

// FindRemoval returns when a former member was removed from (or left) the
// workspace. ENOTFOUND if the user is a member or never was one.
func (s *MemberService) FindRemoval(ctx context.Context, workspaceID, userID string) (time.Time, error) {
	var at time.Time
	err := s.db.pool.QueryRow(ctx, `SELECT removed_at FROM former_members WHERE workspace_id = $1 AND user_id = $2`,
		workspaceID, userID).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, link.Errorf(link.ENOTFOUND, "user %q was never removed from workspace %q", userID, workspaceID)
	} else if err != nil {
		return time.Time{}, fmt.Errorf("former member: %w", err)
	}
	return at.UTC(), nil
}

// FindMembers returns the members of a workspace, longest-standing first.
// ENOTFOUND if the workspace does not exist.
func (s *MemberService) FindMembers(ctx context.Context, workspaceID string) ([]*link.Member, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	var out []*link.Member
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		if _, err := findWorkspace(ctx, tx, workspaceID, false); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT u.id, u.email, u.name, m.role, m.created_at FROM members m
			JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 ORDER BY m.created_at, u.seq`, workspaceID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanMember)
		return err
	})
	if err != nil {
		if link.ErrorCode(err) != link.EINTERNAL {
			return nil, err
		}
		return nil, fmt.Errorf("members: %w", err)
	}
	if out == nil {
		out = []*link.Member{}
	}
	return out, nil
}

// scanMember reads a member: user ID, e-mail, name, role and when they
// joined.
func scanMember(r pgx.CollectableRow) (*link.Member, error) {
	var m link.Member
	err := r.Scan(&m.UserID, &m.Email, &m.Name, &m.Role, &m.JoinedAt)
	m.JoinedAt = m.JoinedAt.UTC()
	return &m, err
}

// findMember returns a member of a locked workspace, locking the
// membership too. ENOTFOUND.
func findMember(ctx context.Context, tx pgx.Tx, workspaceID, userID string) (*link.Member, error) {
	rows, err := tx.Query(ctx, `SELECT u.id, u.email, u.name, m.role, m.created_at FROM members m
		JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 AND m.user_id = $2 FOR UPDATE OF m`, workspaceID, userID)
	if err != nil {
		return nil, fmt.Errorf("member: %w", err)
	}
	m, err := pgx.CollectExactlyOneRow(rows, scanMember)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "user %q is not a member of this workspace", userID)
	} else if err != nil {
		return nil, fmt.Errorf("member: %w", err)
	}
	return m, nil
}

// lockMembers locks the workspace's row for a change of its members.
// ENOTFOUND (as for the member, whom an unknown workspace does not have).
func lockMembers(ctx context.Context, tx pgx.Tx, workspaceID, userID string) error {
	_, err := findWorkspace(ctx, tx, workspaceID, true)
	if link.ErrorCode(err) == link.ENOTFOUND {
		return link.Errorf(link.ENOTFOUND, "user %q is not a member of this workspace", userID)
	}
	return err
}

// memberTarget is the audit target of a member: the user.
func memberTarget(userID string) link.AuditTarget {
	return link.AuditTarget{Type: "user", ID: userID}
}

// UpdateMemberRole sets a member's role, recording member.role_changed
// when it changes. ENOTFOUND if the user is not a member; EINVALID for an
// unknown role; ECONFLICT when it would demote the workspace's last owner.
func (s *MemberService) UpdateMemberRole(ctx context.Context, workspaceID, userID string, role link.Role) (*link.Member, error) {
	if !role.Valid() {
		return nil, &link.Error{Code: link.EINVALID, Message: "role: must be one of read, read_write, owner",
			Fields: []link.FieldError{{Field: "role", Message: "must be one of read, read_write, owner"}}}
	}
	if err := s.check(workspaceID, userID); err != nil {
		return nil, err
	}
	var out *link.Member
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if err := lockMembers(ctx, tx, workspaceID, userID); err != nil {
			return err
		}
		m, err := findMember(ctx, tx, workspaceID, userID)
		if err != nil {
			return err
		}
		if m.Role == link.RoleOwner && role != link.RoleOwner {
			if err := keepAnOwner(ctx, tx, workspaceID, userID, "demoted"); err != nil {
				return err
			}
		}
		before := m.Role
		m.Role = role
		if _, err := tx.Exec(ctx, `UPDATE members SET role = $3 WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID, role); err != nil {
			return fmt.Errorf("update member role: %w", err)
		}
		out = m
		if before == role {
			return nil
		}
		return s.db.recordAudit(ctx, tx, workspaceID, link.AuditMemberRoleChanged, memberTarget(userID),
			link.AuditChanges("role", string(before), string(role)))
	})
	return out, err
}

// RemoveMember ends a user's membership and remembers them as a former
// member, recording member.removed (member.left when the actor of ctx is
// the member), and ends what they made that would act for them
// (endMembersWork). ENOTFOUND if the user is not a member; ECONFLICT for
// the workspace's last owner.
func (s *MemberService) RemoveMember(ctx context.Context, workspaceID, userID string) error {
	if err := s.check(workspaceID, userID); err != nil {
		return err
	}
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		if err := lockMembers(ctx, tx, workspaceID, userID); err != nil {
			return err
		}
		m, err := findMember(ctx, tx, workspaceID, userID)
		if err != nil {
			return err
		}
		if m.Role == link.RoleOwner {
			if err := keepAnOwner(ctx, tx, workspaceID, userID, "removed"); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM members WHERE workspace_id = $1 AND user_id = $2`, workspaceID, userID); err != nil {
			return fmt.Errorf("delete membership: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO former_members (workspace_id, user_id, removed_at) VALUES ($1, $2, $3)
			ON CONFLICT (workspace_id, user_id) DO UPDATE SET removed_at = excluded.removed_at`,
			workspaceID, userID, s.db.now().UTC()); err != nil {
			return fmt.Errorf("remember former member: %w", err)
		}
		ended, err := s.db.endMembersWork(ctx, tx, workspaceID, userID)
		if err != nil {
			return err
		}
		// A member removing themselves leaves: its own action, so that
		// an owner can tell departures from removals.
		action := link.AuditMemberRemoved
		if actor, _ := link.ActorFrom(ctx); actor.Type == link.ActorUser && actor.ID == userID {
			action = link.AuditMemberLeft
		}
		return s.db.recordAudit(ctx, tx, workspaceID, action, memberTarget(userID), link.AuditChanges("role", string(m.Role), nil,
			"keys_revoked", nil, ended.keys, "webhooks_disabled", nil, ended.webhooks))
	})
}

// check returns ENOTFOUND unless both IDs are ones the store could have
// given out.
func (s *MemberService) check(workspaceID, userID string) error {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixUser, userID) {
		return link.Errorf(link.ENOTFOUND, "user %q is not a member of this workspace", userID)
	}
	return nil
}

// keepAnOwner returns ECONFLICT unless the workspace keeps an owner who
// can act besides userID, the owner about to be demoted or removed:
// another owner whose account is not disabled. A disabled owner signs in
// nowhere, so a workspace left to them alone would have nobody to manage
// it.
func keepAnOwner(ctx context.Context, tx pgx.Tx, workspaceID, userID, what string) error {
	var enabled, disabled int
	err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE NOT u.disabled), count(*) FILTER (WHERE u.disabled)
		FROM members m JOIN users u ON u.id = m.user_id
		WHERE m.workspace_id = $1 AND m.role = 'owner' AND m.user_id <> $2`, workspaceID, userID).Scan(&enabled, &disabled)
	if err != nil {
		return fmt.Errorf("count owners: %w", err)
	}
	switch {
	case enabled > 0:
		return nil
	case disabled > 0:
		return link.Errorf(link.ECONFLICT, "a workspace keeps at least one owner who can sign in: the other owners are disabled, so make another member owner before this one is %s", what)
	}
	return link.Errorf(link.ECONFLICT, "a workspace keeps at least one owner: make another member owner before this one is %s", what)
}
