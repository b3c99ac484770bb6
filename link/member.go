package link

import (
	"context"
	"time"
)

// Rank orders the roles: read < read_write < owner; an unknown role is 0.
func (r Role) Rank() int {
	switch r {
	case RoleRead:
		return 1
	case RoleReadWrite:
		return 2
	case RoleOwner:
		return 3
	}
	return 0
}

// Member is a user as a member of a workspace.
type Member struct {
	UserID   string
	Email    string
	Name     string
	Role     Role
	JoinedAt time.Time
}

// MemberService keeps the members of workspaces. Every change keeps at
// least one owner in each workspace.
type MemberService interface {
	// FindMembers returns the members of a workspace, longest-standing first.
	// ENOTFOUND if the workspace does not exist.
	FindMembers(ctx context.Context, workspaceID string) ([]*Member, error)
	// UpdateMemberRole sets a member's role, recording member.role_changed
	// when it changes. ENOTFOUND if the user is not
	// a member; EINVALID for an unknown role; ECONFLICT when it would
	// demote the workspace's last owner.
	UpdateMemberRole(ctx context.Context, workspaceID, userID string, role Role) (*Member, error)
	// RemoveMember ends a user's membership and remembers the user as a
	// former member, recording member.removed, or member.left when the
	// actor of ctx is the member. In the same transaction it ends what
	// would go on acting for them: the API keys they made (directly or
	// through keys they made) are revoked for good, unless an owner keeps
	// one (KeepWhenCreatorDisabled), and the webhooks made the same way
	// are disabled (WebhookCreatorRemoved); the entry names both.
	// ENOTFOUND if the user is not a member; ECONFLICT for the
	// workspace's last owner.
	RemoveMember(ctx context.Context, workspaceID, userID string) error
	// FindRemoval returns when a former member was removed from (or left)
	// the workspace. ENOTFOUND if the user is a member or never was one.
	FindRemoval(ctx context.Context, workspaceID, userID string) (time.Time, error)
}

// Invitation invites a person, by e-mail, to join a workspace with a role.
// Its token is shown once, at creation; only its hash is kept.
type Invitation struct {
	ID          string
	WorkspaceID string
	Email       string
	Role        Role
	// TokenHash is the SHA-256 of the one-time token.
	TokenHash []byte
	// InvitedBy is the user who made the invitation.
	InvitedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Validate checks and normalizes an invitation's e-mail (NormalizeEmail)
// and role.
func (inv *Invitation) Validate() error {
	var v validation
	inv.Email = NormalizeEmail(inv.Email)
	if msg := CheckEmail(inv.Email); msg != "" {
		v.add("email", "%s", msg)
	}
	if !inv.Role.Valid() {
		v.add("role", "must be one of read, read_write, owner")
	}
	return v.err()
}

// Acceptance is how a person accepts an invitation: as the signed-in user
// UserID, or, when UserID is empty, as a new user with Name and
// PasswordHash (and the invitation's e-mail).
type Acceptance struct {
	UserID       string
	Name         string
	PasswordHash []byte
}

// InvitationService keeps invitations and turns them into memberships.
type InvitationService interface {
	// CreateInvitation stores a validated invitation, recording
	// member.invited (never the token); sets ID and CreatedAt.
	// EINVALID; ECONFLICT if the e-mail's user is a member already or a
	// pending invitation for the e-mail exists.
	CreateInvitation(ctx context.Context, inv *Invitation) error
	// FindInvitations returns the workspace's pending invitations (neither
	// used, revoked nor expired), oldest first.
	FindInvitations(ctx context.Context, workspaceID string) ([]*Invitation, error)
	// RevokeInvitation ends a pending invitation, recording
	// invitation.revoked. ENOTFOUND if there is no pending invitation with
	// the ID in the workspace.
	RevokeInvitation(ctx context.Context, workspaceID, id string) error
	// AcceptInvitation turns the invitation with the token hash into a
	// membership, creating the user first for a new person, and marks it
	// used, in one transaction with member.joined (and user.created for a
	// new person) by the joining user at the address of ctx. ENOTFOUND
	// for an unknown token; EGONE once
	// used, revoked or expired; EFORBIDDEN when the signed-in user's
	// e-mail is not the invitation's; ECONFLICT when a new person's e-mail
	// is registered already, or the user is a member already.
	AcceptInvitation(ctx context.Context, tokenHash []byte, a Acceptance) (*User, *Membership, error)
	// FindInvitationByToken returns the pending invitation with the token
	// hash, so that a new person's password is hashed (slow) only for a
	// token that can be accepted. ENOTFOUND for an unknown token; EGONE
	// once used, revoked or expired, or when its maker is no longer an
	// owner who can sign in.
	FindInvitationByToken(ctx context.Context, tokenHash []byte) (*Invitation, error)
}
