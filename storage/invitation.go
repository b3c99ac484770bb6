package storage

import (
	"bytes"
	"context"
	"crypto/subtle"
	"fmt"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// prefixInvitation is the wire ID prefix of invitations.
const prefixInvitation = link.PrefixInvitation

// MaxPendingInvitations bounds a workspace's pending invitations.
const MaxPendingInvitations = 100

// InvitationKeep is how long a used, revoked or expired invitation is kept
// so that its link still says why it no longer works; after that it is
// deleted (the next time the workspace makes an invitation) and its link is
// simply not found.
const InvitationKeep = 30 * 24 * time.Hour

var _ link.InvitationService = (*InvitationService)(nil)

// InvitationService keeps invitations in bbolt. An invitation is kept once
// used or revoked, so that its link answers why it no longer works.
type InvitationService struct{ db *DB }

// NewInvitationService returns the invitation service of db.
func NewInvitationService(db *DB) *InvitationService { return &InvitationService{db: db} }

type invitationRecord struct {
	Workspace  uint64     `json:"workspace"`
	Email      string     `json:"email"`
	Role       link.Role  `json:"role"`
	TokenHash  []byte     `json:"token_hash"`
	InvitedBy  uint64     `json:"invited_by"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	AcceptedAt *time.Time `json:"accepted_at,omitempty"`
	AcceptedBy uint64     `json:"accepted_by,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

func (r *invitationRecord) pending(now time.Time) bool {
	return r.AcceptedAt == nil && r.RevokedAt == nil && now.Before(r.ExpiresAt)
}

// endedAt returns when the invitation stopped working: used, revoked or
// expired, whichever came first.
func (r *invitationRecord) endedAt() time.Time {
	end := r.ExpiresAt
	for _, t := range []*time.Time{r.AcceptedAt, r.RevokedAt} {
		if t != nil && t.Before(end) {
			end = *t
		}
	}
	return end
}

func (r *invitationRecord) invitation(ids *idCodec, id uint64) *link.Invitation {
	return &link.Invitation{
		ID: ids.formatID(prefixInvitation, id), WorkspaceID: ids.formatID(prefixWorkspace, r.Workspace),
		Email: r.Email, Role: r.Role, TokenHash: cloneBytes(r.TokenHash),
		InvitedBy: ids.formatID(prefixUser, r.InvitedBy), CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt,
	}
}

// CreateInvitation stores a validated invitation; sets ID and CreatedAt.
// EINVALID; ENOTFOUND for an unknown workspace or inviter; ECONFLICT if the
// e-mail's user is a member already, a pending invitation for the e-mail
// exists, or the workspace has MaxPendingInvitations pending.
func (s *InvitationService) CreateInvitation(ctx context.Context, inv *link.Invitation) error {
	v := *inv
	if err := v.Validate(); err != nil {
		return err
	}
	if len(v.TokenHash) != 32 {
		return fmt.Errorf("invitation token hash: %d bytes, want 32", len(v.TokenHash))
	}
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, v.WorkspaceID)
	by, ok2 := s.db.ids.parseID(prefixUser, v.InvitedBy)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", v.WorkspaceID)
	}
	now := s.db.now()
	var id uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		if err := pruneInvitations(tx, wid, now); err != nil {
			return err
		}
		if err := checkInvitable(tx, wid, v.Email, now); err != nil {
			return err
		}
		b := tx.Bucket(bucketInvitations)
		var err error
		if id, err = nextID(b); err != nil {
			return err
		}
		rec := &invitationRecord{Workspace: wid, Email: v.Email, Role: v.Role, TokenHash: v.TokenHash,
			InvitedBy: by, CreatedAt: now, ExpiresAt: v.ExpiresAt.UTC()}
		if err := putJSON(b, itob(id), rec); err != nil {
			return err
		}
		if err := tx.Bucket(bucketInvitationsHash).Put(cloneBytes(v.TokenHash), itob(id)); err != nil {
			return fmt.Errorf("index invitation token: %w", err)
		}
		if err := tx.Bucket(bucketInvitationsWorkspace).Put(concat(itob(wid), itob(id)), nil); err != nil {
			return fmt.Errorf("index invitation workspace: %w", err)
		}
		// The token and its hash are secrets: the entry names the person
		// and the role only.
		return s.db.recordAudit(ctx, tx, wid, link.AuditMemberInvited, invitationTarget(s.db.ids, id),
			link.AuditChanges("email", nil, rec.Email, "role", nil, string(rec.Role), "expires_at", nil, link.AuditTime(&rec.ExpiresAt)))
	})
	if err != nil {
		return err
	}
	v.ID, v.CreatedAt, v.ExpiresAt = s.db.ids.formatID(prefixInvitation, id), now, v.ExpiresAt.UTC()
	*inv = v
	return nil
}

// checkInvitable returns ECONFLICT when email cannot be invited to the
// workspace now: its user is a member, it has a pending invitation, or the
// workspace has too many pending.
func checkInvitable(tx *bolt.Tx, wid uint64, email string, now time.Time) error {
	if idb := tx.Bucket(bucketUsersEmail).Get(emailKey(email)); idb != nil {
		if tx.Bucket(bucketWorkspaceMembers).Get(concat(itob(wid), idb)) != nil {
			return link.Errorf(link.ECONFLICT, "%s is a member of this workspace already", email)
		}
	}
	pending := 0
	err := eachInvitation(tx, wid, func(_ uint64, rec *invitationRecord) error {
		if !rec.pending(now) {
			return nil
		}
		if link.SameEmail(rec.Email, email) {
			return link.Errorf(link.ECONFLICT, "%s has a pending invitation already: revoke it to send a new link", email)
		}
		pending++
		return nil
	})
	if err != nil {
		return err
	}
	if pending >= MaxPendingInvitations {
		return link.Errorf(link.ECONFLICT, "the workspace has %d pending invitations, the most it may have: revoke some first", pending)
	}
	return nil
}

// pruneInvitations deletes the workspace's invitations that ended more than
// InvitationKeep ago, with their index entries.
func pruneInvitations(tx *bolt.Tx, wid uint64, now time.Time) error {
	var old []uint64
	var hashes [][]byte
	err := eachInvitation(tx, wid, func(id uint64, rec *invitationRecord) error {
		if !rec.pending(now) && now.Sub(rec.endedAt()) > InvitationKeep {
			old, hashes = append(old, id), append(hashes, rec.TokenHash)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, id := range old {
		if err := tx.Bucket(bucketInvitations).Delete(itob(id)); err != nil {
			return fmt.Errorf("delete invitation: %w", err)
		}
		if err := tx.Bucket(bucketInvitationsHash).Delete(hashes[i]); err != nil {
			return fmt.Errorf("delete invitation token index: %w", err)
		}
		if err := tx.Bucket(bucketInvitationsWorkspace).Delete(concat(itob(wid), itob(id))); err != nil {
			return fmt.Errorf("delete invitation workspace index: %w", err)
		}
	}
	return nil
}

// eachInvitation calls fn for each invitation of a workspace, oldest first.
func eachInvitation(tx *bolt.Tx, wid uint64, fn func(id uint64, rec *invitationRecord) error) error {
	prefix := itob(wid)
	b := tx.Bucket(bucketInvitations)
	c := tx.Bucket(bucketInvitationsWorkspace).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) != 16 {
			return fmt.Errorf("invitation index key %x: %d bytes, want 16", k, len(k))
		}
		id := btoi(k[8:])
		var rec invitationRecord
		if ok, err := getJSON(b, itob(id), &rec); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("invitation index names %d, which does not exist", id)
		}
		if err := fn(id, &rec); err != nil {
			return err
		}
	}
	return nil
}

// FindInvitations returns the workspace's pending invitations, oldest first.
func (s *InvitationService) FindInvitations(ctx context.Context, workspaceID string) ([]*link.Invitation, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	now := s.db.now()
	out := []*link.Invitation{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		return eachInvitation(tx, wid, func(id uint64, rec *invitationRecord) error {
			if rec.pending(now) {
				out = append(out, rec.invitation(s.db.ids, id))
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RevokeInvitation ends a pending invitation: its link answers that it was
// revoked. ENOTFOUND if there is no pending invitation with the ID in the
// workspace.
func (s *InvitationService) RevokeInvitation(ctx context.Context, workspaceID, id string) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	iid, ok2 := s.db.ids.parseID(prefixInvitation, id)
	notFound := link.Errorf(link.ENOTFOUND, "no pending invitation %q in this workspace", id)
	if !ok1 || !ok2 {
		return notFound
	}
	now := s.db.now()
	return s.db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketInvitations)
		var rec invitationRecord
		if ok, err := getJSON(b, itob(iid), &rec); err != nil {
			return err
		} else if !ok || rec.Workspace != wid || !rec.pending(now) {
			return notFound
		}
		rec.RevokedAt = &now
		if err := putJSON(b, itob(iid), &rec); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditInvitationRevoked, invitationTarget(s.db.ids, iid),
			link.AuditChanges("state", "pending", "revoked", "email", rec.Email, nil))
	})
}

// invitationTarget is the audit target of an invitation.
func invitationTarget(ids *idCodec, iid uint64) link.AuditTarget {
	return link.AuditTarget{Type: "invitation", ID: ids.formatID(prefixInvitation, iid)}
}

// AcceptInvitation turns the invitation with the token hash into a
// membership, creating the user first for a new person, and marks it used,
// all in one transaction. ENOTFOUND for an unknown token; EGONE once used,
// revoked or expired; EFORBIDDEN when the signed-in user's e-mail is not
// the invitation's; ECONFLICT when a new person's e-mail is registered
// already or the user is a member already; EINVALID for a bad name.
func (s *InvitationService) AcceptInvitation(ctx context.Context, tokenHash []byte, a link.Acceptance) (*link.User, *link.Membership, error) {
	var uid uint64
	if a.UserID != "" {
		var ok bool
		if uid, ok = s.db.ids.parseID(prefixUser, a.UserID); !ok {
			return nil, nil, link.Errorf(link.ENOTFOUND, "user %q not found", a.UserID)
		}
	} else {
		a.Name = strings.TrimSpace(a.Name)
		if msg := link.CheckUserName(a.Name); msg != "" {
			return nil, nil, &link.Error{Code: link.EINVALID, Message: "name: " + msg, Fields: []link.FieldError{{Field: "name", Message: msg}}}
		}
	}
	now := s.db.now()
	var u *link.User
	var m *link.Membership
	err := s.db.update(func(tx *bolt.Tx) error {
		iid, rec, err := findInvitationByToken(tx, tokenHash, now)
		if err != nil {
			return err
		}
		var user *userRecord
		if a.UserID != "" {
			if user, err = findUser(tx, uid); err != nil {
				return err
			}
			if !link.SameEmail(user.Email, rec.Email) {
				return link.Errorf(link.EFORBIDDEN, "this invitation is for %s; you are signed in as %s", rec.Email, user.Email)
			}
			if tx.Bucket(bucketWorkspaceMembers).Get(concat(itob(rec.Workspace), itob(uid))) != nil {
				return link.Errorf(link.ECONFLICT, "you are a member of this workspace already")
			}
		} else {
			if tx.Bucket(bucketUsersEmail).Get(emailKey(rec.Email)) != nil {
				return link.Errorf(link.ECONFLICT, "an account with the e-mail %s exists already: sign in, then accept the invitation with your login token", rec.Email)
			}
			user = &userRecord{Email: rec.Email, Name: a.Name, PasswordHash: a.PasswordHash, CreatedAt: now}
			if uid, err = createUser(tx, user); err != nil {
				return err
			}
		}
		member := &memberRecord{Role: rec.Role, CreatedAt: now}
		if err := putMembership(tx, rec.Workspace, uid, member); err != nil {
			return err
		}
		rec.AcceptedAt, rec.AcceptedBy = &now, uid
		if err := putJSON(tx.Bucket(bucketInvitations), itob(iid), rec); err != nil {
			return err
		}
		ws, err := findWorkspace(tx, rec.Workspace)
		if err != nil {
			return err
		}
		u = user.user(s.db.ids, uid)
		m = &link.Membership{Workspace: ws.workspace(s.db.ids, rec.Workspace), UserID: u.ID, Role: rec.Role, CreatedAt: now}
		return s.recordAccept(ctx, tx, iid, rec, uid, user, a.UserID == "")
	})
	if err != nil {
		return nil, nil, err
	}
	return u, m, nil
}

// recordAccept records member.joined, and user.created before it for a new
// person, with the joining user as the actor (a new person had no account
// to be an actor with) at the address of ctx.
func (s *InvitationService) recordAccept(ctx context.Context, tx *bolt.Tx, iid uint64, rec *invitationRecord, uid uint64, user *userRecord, created bool) error {
	_, addr := link.ActorFrom(ctx)
	ctx = link.WithActor(ctx, link.Actor{Type: link.ActorUser, ID: s.db.ids.formatID(prefixUser, uid), Name: user.Email}, addr)
	target := memberTarget(s.db.ids, uid)
	if created {
		if err := s.db.recordAudit(ctx, tx, rec.Workspace, link.AuditUserCreated, target,
			link.AuditChanges("email", nil, user.Email, "name", nil, user.Name, "via", nil, "invitation")); err != nil {
			return err
		}
	}
	return s.db.recordAudit(ctx, tx, rec.Workspace, link.AuditMemberJoined, target,
		link.AuditChanges("role", nil, string(rec.Role), "invitation", nil, s.db.ids.formatID(prefixInvitation, iid),
			"new_account", nil, fmt.Sprint(created)))
}

// FindInvitationByToken returns the pending invitation with the token
// hash, in a read transaction. ENOTFOUND for an unknown token; EGONE once
// used, revoked or expired, or when its maker is no longer an owner who
// can sign in.
func (s *InvitationService) FindInvitationByToken(ctx context.Context, tokenHash []byte) (*link.Invitation, error) {
	var inv *link.Invitation
	err := s.db.db.View(func(tx *bolt.Tx) error {
		iid, rec, err := findInvitationByToken(tx, tokenHash, s.db.now())
		if err != nil {
			return err
		}
		inv = rec.invitation(idsOf(tx), iid)
		return nil
	})
	return inv, err
}

// findInvitationByToken returns the pending invitation with the token
// hash. ENOTFOUND for an unknown token; EGONE once used, revoked or expired.
func findInvitationByToken(tx *bolt.Tx, hash []byte, now time.Time) (uint64, *invitationRecord, error) {
	notFound := link.Errorf(link.ENOTFOUND, "this invitation link is not valid: check that it was copied whole")
	if len(hash) != 32 {
		return 0, nil, notFound
	}
	idb := tx.Bucket(bucketInvitationsHash).Get(hash)
	if idb == nil {
		return 0, nil, notFound
	}
	iid := btoi(idb)
	var rec invitationRecord
	if ok, err := getJSON(tx.Bucket(bucketInvitations), itob(iid), &rec); err != nil {
		return 0, nil, err
	} else if !ok {
		return 0, nil, fmt.Errorf("invitation token index names %d, which does not exist", iid)
	}
	if subtle.ConstantTimeCompare(rec.TokenHash, hash) != 1 {
		return 0, nil, notFound
	}
	switch {
	case rec.AcceptedAt != nil:
		return 0, nil, link.Errorf(link.EGONE, "this invitation was used already, at %s; it works once: ask an owner for a new one", rec.AcceptedAt.UTC().Format(time.RFC3339))
	case rec.RevokedAt != nil:
		return 0, nil, link.Errorf(link.EGONE, "this invitation was revoked by an owner of the workspace: ask an owner for a new one")
	case !now.Before(rec.ExpiresAt):
		return 0, nil, link.Errorf(link.EGONE, "this invitation expired at %s: ask an owner for a new one", rec.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if err := checkInviter(tx, &rec); err != nil {
		return 0, nil, err
	}
	return iid, &rec, nil
}

// checkInviter returns EGONE unless the invitation's maker is still an
// owner of its workspace who can sign in: nobody grants a role above their
// own, so an owner who was demoted, removed or disabled no longer lets
// anyone in through the links they made (an owner who stayed makes new
// ones).
func checkInviter(tx *bolt.Tx, rec *invitationRecord) error {
	gone := link.Errorf(link.EGONE, "the owner who made this invitation is no longer an owner of the workspace: ask an owner for a new one")
	var m memberRecord
	if ok, err := getJSON(tx.Bucket(bucketWorkspaceMembers), concat(itob(rec.Workspace), itob(rec.InvitedBy)), &m); err != nil {
		return err
	} else if !ok || m.Role != link.RoleOwner {
		return gone
	}
	u, err := findUser(tx, rec.InvitedBy)
	if err != nil {
		return err
	}
	if u.Disabled {
		return gone
	}
	return nil
}
