package postgres

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// MaxPendingInvitations bounds a workspace's pending invitations (as the
// bbolt store's).
const MaxPendingInvitations = 100

// InvitationKeep is how long a used, revoked or expired invitation is kept
// so that its link still says why it no longer works; after that it is
// deleted (the next time the workspace makes an invitation) and its link
// is simply not found.
const InvitationKeep = 30 * 24 * time.Hour

// InvitationService keeps invitations in PostgreSQL. Changes to a
// workspace's invitations lock the workspace's row first, so that the
// rules over its pending invitations (one per e-mail, at most
// MaxPendingInvitations) hold across instances.
type InvitationService struct{ db *DB }

var _ link.InvitationService = (*InvitationService)(nil)

// invitationRow is an invitation with what ends it.
type invitationRow struct {
	link.Invitation
	acceptedAt, revokedAt *time.Time
}

func (r *invitationRow) pending(now time.Time) bool {
	return r.acceptedAt == nil && r.revokedAt == nil && now.Before(r.ExpiresAt)
}

const invitationColumns = `id, workspace_id, email, role, token_hash, invited_by, created_at, expires_at, accepted_at, revoked_at`

func scanInvitation(r pgx.CollectableRow) (*invitationRow, error) {
	var inv invitationRow
	err := r.Scan(&inv.ID, &inv.WorkspaceID, &inv.Email, &inv.Role, &inv.TokenHash, &inv.InvitedBy, &inv.CreatedAt, &inv.ExpiresAt,
		&inv.acceptedAt, &inv.revokedAt)
	inv.CreatedAt, inv.ExpiresAt = inv.CreatedAt.UTC(), inv.ExpiresAt.UTC()
	return &inv, err
}

// invitationTarget is the audit target of an invitation.
func invitationTarget(id string) link.AuditTarget {
	return link.AuditTarget{Type: "invitation", ID: id}
}

// CreateInvitation stores a validated invitation; sets ID and CreatedAt.
// EINVALID; ENOTFOUND for an unknown workspace; ECONFLICT if the e-mail's
// user is a member already, a pending invitation for the e-mail exists,
// or the workspace has MaxPendingInvitations pending.
func (s *InvitationService) CreateInvitation(ctx context.Context, inv *link.Invitation) error {
	v := *inv
	if err := v.Validate(); err != nil {
		return err
	}
	if len(v.TokenHash) != 32 {
		return fmt.Errorf("invitation token hash: %d bytes, want 32", len(v.TokenHash))
	}
	if !s.db.validID(link.PrefixWorkspace, v.WorkspaceID) || !s.db.validID(link.PrefixUser, v.InvitedBy) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", v.WorkspaceID)
	}
	now := s.db.now().UTC()
	v.ExpiresAt = v.ExpiresAt.UTC()
	var id string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findWorkspace(ctx, tx, v.WorkspaceID, true); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM invitations WHERE workspace_id = $1 AND least(expires_at, accepted_at, revoked_at) < $2`,
			v.WorkspaceID, now.Add(-InvitationKeep)); err != nil {
			return fmt.Errorf("delete old invitations: %w", err)
		}
		if err := checkInvitable(ctx, tx, v.WorkspaceID, v.Email, now); err != nil {
			return err
		}
		var seq int64
		var err error
		if id, seq, err = s.db.newID(ctx, tx, link.PrefixInvitation); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO invitations (id, seq, workspace_id, email, role, token_hash, invited_by, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, id, seq, v.WorkspaceID, v.Email, v.Role, v.TokenHash, v.InvitedBy, now, v.ExpiresAt)
		if isUnique(err, "invitations_token_hash_key") {
			return link.Errorf(link.ECONFLICT, "an invitation with this token exists already")
		} else if err != nil {
			return fmt.Errorf("insert invitation: %w", err)
		}
		// The token and its hash are secrets: the entry names the person
		// and the role only.
		return s.db.recordAudit(ctx, tx, v.WorkspaceID, link.AuditMemberInvited, invitationTarget(id),
			link.AuditChanges("email", nil, v.Email, "role", nil, string(v.Role), "expires_at", nil, link.AuditTime(&v.ExpiresAt)))
	})
	if err != nil {
		return err
	}
	v.ID, v.CreatedAt = id, now
	*inv = v
	return nil
}

// checkInvitable returns ECONFLICT when email cannot be invited to the
// (locked) workspace now: its user is a member, it has a pending
// invitation, or the workspace has too many pending.
func checkInvitable(ctx context.Context, tx pgx.Tx, workspaceID, email string, now time.Time) error {
	var member bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM members m JOIN users u ON u.id = m.user_id
		WHERE m.workspace_id = $1 AND u.email_key = $2)`, workspaceID, link.NormalizeEmail(email)).Scan(&member); err != nil {
		return fmt.Errorf("check membership: %w", err)
	}
	if member {
		return link.Errorf(link.ECONFLICT, "%s is a member of this workspace already", email)
	}
	rows, err := tx.Query(ctx, `SELECT email FROM invitations
		WHERE workspace_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2`, workspaceID, now)
	if err != nil {
		return fmt.Errorf("pending invitations: %w", err)
	}
	pending, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("pending invitations: %w", err)
	}
	for _, e := range pending {
		if link.SameEmail(e, email) {
			return link.Errorf(link.ECONFLICT, "%s has a pending invitation already: revoke it to send a new link", email)
		}
	}
	if len(pending) >= MaxPendingInvitations {
		return link.Errorf(link.ECONFLICT, "the workspace has %d pending invitations, the most it may have: revoke some first", len(pending))
	}
	return nil
}

// FindInvitations returns the workspace's pending invitations, oldest
// first.
func (s *InvitationService) FindInvitations(ctx context.Context, workspaceID string) ([]*link.Invitation, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	now := s.db.now()
	rows, err := s.db.pool.Query(ctx, `SELECT `+invitationColumns+` FROM invitations
		WHERE workspace_id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $2 ORDER BY seq`, workspaceID, now)
	if err != nil {
		return nil, fmt.Errorf("invitations: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanInvitation)
	if err != nil {
		return nil, fmt.Errorf("invitations: %w", err)
	}
	out := make([]*link.Invitation, len(list))
	for i, r := range list {
		out[i] = &r.Invitation
	}
	return out, nil
}

// RevokeInvitation ends a pending invitation: its link answers that it
// was revoked. ENOTFOUND if there is no pending invitation with the ID in
// the workspace.
func (s *InvitationService) RevokeInvitation(ctx context.Context, workspaceID, id string) error {
	notFound := link.Errorf(link.ENOTFOUND, "no pending invitation %q in this workspace", id)
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixInvitation, id) {
		return notFound
	}
	now := s.db.now().UTC()
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findWorkspace(ctx, tx, workspaceID, true); link.ErrorCode(err) == link.ENOTFOUND {
			return notFound
		} else if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+invitationColumns+` FROM invitations WHERE id = $1 AND workspace_id = $2 FOR UPDATE`, id, workspaceID)
		if err != nil {
			return fmt.Errorf("invitation: %w", err)
		}
		inv, err := pgx.CollectExactlyOneRow(rows, scanInvitation)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound
		} else if err != nil {
			return fmt.Errorf("invitation: %w", err)
		}
		if !inv.pending(now) {
			return notFound
		}
		if _, err := tx.Exec(ctx, `UPDATE invitations SET revoked_at = $2 WHERE id = $1`, id, now); err != nil {
			return fmt.Errorf("revoke invitation: %w", err)
		}
		return s.db.recordAudit(ctx, tx, workspaceID, link.AuditInvitationRevoked, invitationTarget(id),
			link.AuditChanges("state", "pending", "revoked", "email", inv.Email, nil))
	})
}

// AcceptInvitation turns the invitation with the token hash into a
// membership, creating the user first for a new person, and marks it
// used, all in one transaction. ENOTFOUND for an unknown token; EGONE
// once used, revoked or expired; EFORBIDDEN when the signed-in user's
// e-mail is not the invitation's; ECONFLICT when a new person's e-mail is
// registered already or the user is a member already; EINVALID for a bad
// name.
func (s *InvitationService) AcceptInvitation(ctx context.Context, tokenHash []byte, a link.Acceptance) (*link.User, *link.Membership, error) {
	if a.UserID != "" {
		if !s.db.validID(link.PrefixUser, a.UserID) {
			return nil, nil, link.Errorf(link.ENOTFOUND, "user %q not found", a.UserID)
		}
	} else {
		a.Name = strings.TrimSpace(a.Name)
		if msg := link.CheckUserName(a.Name); msg != "" {
			return nil, nil, &link.Error{Code: link.EINVALID, Message: "name: " + msg, Fields: []link.FieldError{{Field: "name", Message: msg}}}
		}
	}
	now := s.db.now().UTC()
	var u *link.User
	var m *link.Membership
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		// The workspace is locked before the invitation, in the order
		// every change of its invitations and members locks them.
		inv, err := findInvitationByToken(ctx, tx, tokenHash, now, false)
		if err != nil {
			return err
		}
		if _, err := findWorkspace(ctx, tx, inv.WorkspaceID, true); err != nil {
			return err
		}
		if inv, err = findInvitationByToken(ctx, tx, tokenHash, now, true); err != nil {
			return err
		}
		if a.UserID != "" {
			if u, err = findUser(ctx, tx, a.UserID, false); err != nil {
				return err
			}
			if !link.SameEmail(u.Email, inv.Email) {
				return link.Errorf(link.EFORBIDDEN, "this invitation is for %s; you are signed in as %s", inv.Email, u.Email)
			}
			var member bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM members WHERE workspace_id = $1 AND user_id = $2)`,
				inv.WorkspaceID, u.ID).Scan(&member); err != nil {
				return fmt.Errorf("check membership: %w", err)
			}
			if member {
				return link.Errorf(link.ECONFLICT, "you are a member of this workspace already")
			}
		} else {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE email_key = $1)`, link.NormalizeEmail(inv.Email)).Scan(&exists); err != nil {
				return fmt.Errorf("check e-mail: %w", err)
			}
			if exists {
				return link.Errorf(link.ECONFLICT, "an account with the e-mail %s exists already: sign in, then accept the invitation with your login token", inv.Email)
			}
			u = &link.User{Email: inv.Email, Name: a.Name, PasswordHash: a.PasswordHash, CreatedAt: now}
			if u.ID, err = s.db.insertUser(ctx, tx, u); err != nil {
				return err
			}
		}
		if err := putMembership(ctx, tx, inv.WorkspaceID, u.ID, inv.Role, now); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE invitations SET accepted_at = $2, accepted_by = $3 WHERE id = $1`, inv.ID, now, u.ID); err != nil {
			return fmt.Errorf("mark invitation used: %w", err)
		}
		ws, err := findWorkspace(ctx, tx, inv.WorkspaceID, false)
		if err != nil {
			return err
		}
		m = &link.Membership{Workspace: ws, UserID: u.ID, Role: inv.Role, CreatedAt: now}
		return s.recordAccept(ctx, tx, inv, u, a.UserID == "")
	})
	if err != nil {
		return nil, nil, err
	}
	return u, m, nil
}

// recordAccept records member.joined, and user.created before it for a
// new person, with the joining user as the actor (a new person had no
// account to be an actor with) at the address of ctx.
func (s *InvitationService) recordAccept(ctx context.Context, tx pgx.Tx, inv *invitationRow, u *link.User, created bool) error {
	_, addr := link.ActorFrom(ctx)
	ctx = link.WithActor(ctx, link.Actor{Type: link.ActorUser, ID: u.ID, Name: u.Email}, addr)
	target := memberTarget(u.ID)
	if created {
		if err := s.db.recordAudit(ctx, tx, inv.WorkspaceID, link.AuditUserCreated, target,
			link.AuditChanges("email", nil, u.Email, "name", nil, u.Name, "via", nil, "invitation")); err != nil {
			return err
		}
	}
	return s.db.recordAudit(ctx, tx, inv.WorkspaceID, link.AuditMemberJoined, target,
		link.AuditChanges("role", nil, string(inv.Role), "invitation", nil, inv.ID, "new_account", nil, fmt.Sprint(created)))
}

// FindInvitationByToken returns the pending invitation with the token
// hash. ENOTFOUND for an unknown token; EGONE once used, revoked or
// expired, or when its maker is no longer an owner who can sign in.
func (s *InvitationService) FindInvitationByToken(ctx context.Context, tokenHash []byte) (*link.Invitation, error) {
	var inv *invitationRow
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		var err error
		inv, err = findInvitationByToken(ctx, tx, tokenHash, s.db.now(), false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &inv.Invitation, nil
}

// findInvitationByToken returns the pending invitation with the token
// hash, locked when lock is set. ENOTFOUND for an unknown token; EGONE
// once used, revoked or expired, or when its maker is no longer an owner
// who can sign in.
func findInvitationByToken(ctx context.Context, tx pgx.Tx, hash []byte, now time.Time, lock bool) (*invitationRow, error) {
	notFound := link.Errorf(link.ENOTFOUND, "this invitation link is not valid: check that it was copied whole")
	if len(hash) != 32 {
		return nil, notFound
	}
	sql := `SELECT ` + invitationColumns + ` FROM invitations WHERE token_hash = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	rows, err := tx.Query(ctx, sql, hash)
	if err != nil {
		return nil, fmt.Errorf("invitation: %w", err)
	}
	inv, err := pgx.CollectExactlyOneRow(rows, scanInvitation)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound
	} else if err != nil {
		return nil, fmt.Errorf("invitation: %w", err)
	}
	if subtle.ConstantTimeCompare(inv.TokenHash, hash) != 1 {
		return nil, notFound
	}
	switch {
	case inv.acceptedAt != nil:
		return nil, link.Errorf(link.EGONE, "this invitation was used already, at %s; it works once: ask an owner for a new one", inv.acceptedAt.UTC().Format(time.RFC3339))
	case inv.revokedAt != nil:
		return nil, link.Errorf(link.EGONE, "this invitation was revoked by an owner of the workspace: ask an owner for a new one")
	case !now.Before(inv.ExpiresAt):
		return nil, link.Errorf(link.EGONE, "this invitation expired at %s: ask an owner for a new one", inv.ExpiresAt.UTC().Format(time.RFC3339))
	}
	// Nobody grants a role above their own, so an owner who was demoted,
	// removed or disabled no longer lets anyone in through the links they
	// made (an owner who stayed makes new ones).
	var inviterOK bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM members m JOIN users u ON u.id = m.user_id
		WHERE m.workspace_id = $1 AND m.user_id = $2 AND m.role = 'owner' AND NOT u.disabled)`,
		inv.WorkspaceID, inv.InvitedBy).Scan(&inviterOK); err != nil {
		return nil, fmt.Errorf("check inviter: %w", err)
	}
	if !inviterOK {
		return nil, link.Errorf(link.EGONE, "the owner who made this invitation is no longer an owner of the workspace: ask an owner for a new one")
	}
	return inv, nil
}
