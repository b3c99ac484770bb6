package storage

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.MemberService = (*MemberService)(nil)

// MemberService keeps the members of workspaces in bbolt (the membership
// records of workspace.go). Every change keeps at least one owner.
type MemberService struct{ db *DB }

// NewMemberService returns the member service of db.
func NewMemberService(db *DB) *MemberService { return &MemberService{db: db} }

// formerRecord remembers that a user was a member, so that the workspace
// can refuse them with a reason (403) rather than as if it did not exist:
// they knew it existed, so nothing is revealed.
type formerRecord struct {
	RemovedAt time.Time `json:"removed_at"`
}

// FindRemoval returns when a former member was removed from (or left) the
// workspace. ENOTFOUND if the user is a member or never was one.
func (s *MemberService) FindRemoval(ctx context.Context, workspaceID, userID string) (time.Time, error) {
	wid, uid, err := s.parse(workspaceID, userID)
	if err != nil {
		return time.Time{}, err
	}
	var rec formerRecord
	err = s.db.db.View(func(tx *bolt.Tx) error {
		if ok, err := getJSON(tx.Bucket(bucketWorkspaceFormer), concat(itob(wid), itob(uid)), &rec); err != nil {
			return err
		} else if !ok {
			return link.Errorf(link.ENOTFOUND, "user %q was never removed from workspace %q", userID, workspaceID)
		}
		return nil
	})
	return rec.RemovedAt, err
}

// FindMembers returns the members of a workspace, longest-standing first.
// ENOTFOUND if the workspace does not exist.
func (s *MemberService) FindMembers(ctx context.Context, workspaceID string) ([]*link.Member, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.Member{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		prefix := itob(wid)
		c := tx.Bucket(bucketWorkspaceMembers).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != 16 {
				return fmt.Errorf("member key %x: %d bytes, want 16", k, len(k))
			}
			var m memberRecord
			if err := decodeJSON(v, &m); err != nil {
				return err
			}
			uid := btoi(k[8:])
			u, err := findUser(tx, uid)
			if err != nil {
				return err
			}
			out = append(out, s.member(uid, u, &m))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].JoinedAt.Before(out[j].JoinedAt) })
	return out, nil
}

func (s *MemberService) member(uid uint64, u *userRecord, m *memberRecord) *link.Member {
	return &link.Member{UserID: s.db.ids.formatID(prefixUser, uid), Email: u.Email, Name: u.Name, Role: m.Role, JoinedAt: m.CreatedAt}
}

// UpdateMemberRole sets a member's role, recording member.role_changed
// when it changes. ENOTFOUND if the user is not a member; EINVALID for an
// unknown role; ECONFLICT when it would demote the workspace's last owner.
func (s *MemberService) UpdateMemberRole(ctx context.Context, workspaceID, userID string, role link.Role) (*link.Member, error) {
	if !role.Valid() {
		return nil, &link.Error{Code: link.EINVALID, Message: "role: must be one of read, read_write, owner",
			Fields: []link.FieldError{{Field: "role", Message: "must be one of read, read_write, owner"}}}
	}
	wid, uid, err := s.parse(workspaceID, userID)
	if err != nil {
		return nil, err
	}
	var out *link.Member
	err = s.db.update(func(tx *bolt.Tx) error {
		m, err := findMember(tx, wid, uid, userID)
		if err != nil {
			return err
		}
		if m.Role == link.RoleOwner && role != link.RoleOwner {
			if err := keepAnOwner(tx, wid, uid, "demoted"); err != nil {
				return err
			}
		}
		before := m.Role
		m.Role = role
		if err := putMembership(tx, wid, uid, m); err != nil {
			return err
		}
		u, err := findUser(tx, uid)
		if err != nil {
			return err
		}
		out = s.member(uid, u, m)
		if before == role {
			return nil
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditMemberRoleChanged, memberTarget(s.db.ids, uid),
			link.AuditChanges("role", string(before), string(role)))
	})
	return out, err
}

// RemoveMember ends a user's membership and remembers them as a former
// member, recording member.removed (member.left when the actor of ctx is
// the member), and ends what they made that would act for them
// (endMembersWork). ENOTFOUND if the user is not a member; ECONFLICT for the
// workspace's last owner.
func (s *MemberService) RemoveMember(ctx context.Context, workspaceID, userID string) error {
	wid, uid, err := s.parse(workspaceID, userID)
	if err != nil {
		return err
	}
	return s.db.update(func(tx *bolt.Tx) error {
		m, err := findMember(tx, wid, uid, userID)
		if err != nil {
			return err
		}
		if m.Role == link.RoleOwner {
			if err := keepAnOwner(tx, wid, uid, "removed"); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketWorkspaceMembers).Delete(concat(itob(wid), itob(uid))); err != nil {
			return fmt.Errorf("delete membership: %w", err)
		}
		if err := tx.Bucket(bucketUserWorkspaces).Delete(concat(itob(uid), itob(wid))); err != nil {
			return fmt.Errorf("delete membership: %w", err)
		}
		if err := putJSON(tx.Bucket(bucketWorkspaceFormer), concat(itob(wid), itob(uid)), &formerRecord{RemovedAt: s.db.now()}); err != nil {
			return err
		}
		ended, err := s.db.endMembersWork(ctx, tx, wid, uid)
		if err != nil {
			return err
		}
		// A member removing themselves leaves: its own action, so that
		// an owner can tell departures from removals.
		action := link.AuditMemberRemoved
		if actor, _ := link.ActorFrom(ctx); actor.Type == link.ActorUser && actor.ID == userID {
			action = link.AuditMemberLeft
		}
		return s.db.recordAudit(ctx, tx, wid, action, memberTarget(s.db.ids, uid), link.AuditChanges("role", string(m.Role), nil,
			"keys_revoked", nil, ended.keys, "webhooks_disabled", nil, ended.webhooks))
	})
}

// memberTarget is the audit target of a member: the user.
func memberTarget(ids *idCodec, uid uint64) link.AuditTarget {
	return link.AuditTarget{Type: "user", ID: ids.formatID(prefixUser, uid)}
}

func (s *MemberService) parse(workspaceID, userID string) (wid, uid uint64, err error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	uid, ok2 := s.db.ids.parseID(prefixUser, userID)
	if !ok1 || !ok2 {
		return 0, 0, link.Errorf(link.ENOTFOUND, "user %q is not a member of this workspace", userID)
	}
	return wid, uid, nil
}

// findMember returns the membership record of a member. ENOTFOUND.
func findMember(tx *bolt.Tx, wid, uid uint64, userID string) (*memberRecord, error) {
	var m memberRecord
	if ok, err := getJSON(tx.Bucket(bucketWorkspaceMembers), concat(itob(wid), itob(uid)), &m); err != nil {
		return nil, err
	} else if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "user %q is not a member of this workspace", userID)
	}
	return &m, nil
}

// keepAnOwner returns ECONFLICT unless the workspace keeps an owner who
// can act besides uid, the owner about to be demoted or removed: another
// owner whose account is not disabled. A disabled owner signs in nowhere,
// so a workspace left to them alone would have nobody to manage it.
func keepAnOwner(tx *bolt.Tx, wid, uid uint64, what string) error {
	prefix := itob(wid)
	c := tx.Bucket(bucketWorkspaceMembers).Cursor()
	disabledOwners := 0
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != 16 {
			return fmt.Errorf("member key %x: %d bytes, want 16", k, len(k))
		}
		var m memberRecord
		if err := decodeJSON(v, &m); err != nil {
			return err
		}
		other := btoi(k[8:])
		if m.Role != link.RoleOwner || other == uid {
			continue
		}
		u, err := findUser(tx, other)
		if err != nil {
			return err
		}
		if !u.Disabled {
			return nil
		}
		disabledOwners++
	}
	if disabledOwners > 0 {
		return link.Errorf(link.ECONFLICT, "a workspace keeps at least one owner who can sign in: the other owners are disabled, so make another member owner before this one is %s", what)
	}
	return link.Errorf(link.ECONFLICT, "a workspace keeps at least one owner: make another member owner before this one is %s", what)
}
