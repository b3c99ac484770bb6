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

var _ link.WorkspaceService = (*WorkspaceService)(nil)

// WorkspaceService keeps workspaces and memberships in bbolt. A membership
// is stored twice, under workspace+user and under user+workspace, so both
// "members of a workspace" and "workspaces of a user" are prefix scans.
type WorkspaceService struct{ db *DB }

// NewWorkspaceService returns the workspace service of db.
func NewWorkspaceService(db *DB) *WorkspaceService { return &WorkspaceService{db: db} }

type workspaceRecord struct {
	Name      string    `json:"name"`
	Plan      link.Plan `json:"plan"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// DataSince is link.Workspace's: set by imports of data dated before
	// CreatedAt.
	DataSince    *time.Time `json:"data_since,omitempty"`
	ForwardPath  bool       `json:"forward_path,omitempty"`
	ForwardQuery bool       `json:"forward_query,omitempty"`
	// DestinationChecks is link.Workspace's; link_check.go keeps the checks.
	DestinationChecks bool          `json:"destination_checks,omitempty"`
	Pixels            *pixelsRecord `json:"pixels,omitempty"`
}

// pixelsRecord is link.Pixels, stored when the workspace has any.
type pixelsRecord struct {
	Meta     string `json:"meta,omitempty"`
	Google   string `json:"google,omitempty"`
	LinkedIn string `json:"linkedin,omitempty"`
}

func newPixelsRecord(p link.Pixels) *pixelsRecord {
	if !p.Any() {
		return nil
	}
	return &pixelsRecord{Meta: p.Meta, Google: p.Google, LinkedIn: p.LinkedIn}
}

func (r *workspaceRecord) pixels() link.Pixels {
	if r.Pixels == nil {
		return link.Pixels{}
	}
	return link.Pixels{Meta: r.Pixels.Meta, Google: r.Pixels.Google, LinkedIn: r.Pixels.LinkedIn}
}

func (r *workspaceRecord) workspace(ids *idCodec, id uint64) *link.Workspace {
	w := &link.Workspace{
		ID:          ids.formatID(prefixWorkspace, id),
		Name:        r.Name,
		Plan:        r.Plan,
		CreatedAt:   r.CreatedAt,
		UpdatedAt:   r.UpdatedAt,
		ForwardPath: r.ForwardPath, ForwardQuery: r.ForwardQuery,
		DestinationChecks: r.DestinationChecks,
		Pixels:            r.pixels(),
	}
	if r.DataSince != nil {
		w.DataSince = *r.DataSince
	}
	return w
}

type memberRecord struct {
	Role      link.Role `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateWorkspace stores a workspace with ownerID as its owner; sets ID,
// CreatedAt and UpdatedAt. EINVALID; ENOTFOUND if the owner does not
// exist; ECONFLICT when the owner owns maxOwned workspaces already (0: no
// bound), counted in the writing transaction so that requests at once
// cannot pass the bound together.
func (s *WorkspaceService) CreateWorkspace(ctx context.Context, w *link.Workspace, ownerID string, maxOwned int) error {
	v := *w
	if err := v.Validate(); err != nil {
		return err
	}
	uid, ok := s.db.ids.parseID(prefixUser, ownerID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "user %q not found", ownerID)
	}
	now := s.db.now()
	var wid uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		if _, err := findUser(tx, uid); err != nil {
			return err
		}
		if maxOwned > 0 {
			n, err := ownedWorkspaces(tx, uid)
			if err != nil {
				return err
			}
			if n >= maxOwned {
				return link.Errorf(link.ECONFLICT, "you own %d workspaces, the most one user may own to create another (workspaces.max_per_user); the instance admin is not bound by it", n)
			}
		}
		var err error
		if wid, err = createWorkspace(tx, &workspaceRecord{Name: v.Name, Plan: v.Plan, CreatedAt: now, UpdatedAt: now}, uid); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditWorkspaceCreated, workspaceTarget(s.db.ids, wid),
			link.AuditChanges("name", nil, v.Name, "plan", nil, string(v.Plan)))
	})
	if err != nil {
		return err
	}
	v.ID, v.CreatedAt, v.UpdatedAt = s.db.ids.formatID(prefixWorkspace, wid), now, now
	*w = v
	return nil
}

// FindWorkspaceByID returns a workspace. ENOTFOUND.
func (s *WorkspaceService) FindWorkspaceByID(ctx context.Context, id string) (*link.Workspace, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, id)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", id)
	}
	var w *link.Workspace
	err := s.db.db.View(func(tx *bolt.Tx) error {
		rec, err := findWorkspace(tx, wid)
		if err != nil {
			return err
		}
		w = rec.workspace(s.db.ids, wid)
		return nil
	})
	return w, err
}

// FindMemberships returns the user's workspaces with roles, oldest
// membership first. An unknown user has none.
func (s *WorkspaceService) FindMemberships(ctx context.Context, userID string) ([]*link.Membership, error) {
	uid, ok := s.db.ids.parseID(prefixUser, userID)
	if !ok {
		return []*link.Membership{}, nil
	}
	out := []*link.Membership{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		prefix := itob(uid)
		c := tx.Bucket(bucketUserWorkspaces).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != 16 {
				return fmt.Errorf("membership key %x: %d bytes, want 16", k, len(k))
			}
			var m memberRecord
			if err := decodeJSON(v, &m); err != nil {
				return err
			}
			wid := btoi(k[8:])
			rec, err := findWorkspace(tx, wid)
			if err != nil {
				return err
			}
			out = append(out, &link.Membership{Workspace: rec.workspace(s.db.ids, wid), UserID: userID, Role: m.Role, CreatedAt: m.CreatedAt})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Keys are in workspace order; a membership may be younger than its workspace.
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// FindMembership returns the user's role in a workspace. ENOTFOUND if the
// user is not a member (or either does not exist).
func (s *WorkspaceService) FindMembership(ctx context.Context, workspaceID, userID string) (*link.Membership, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	uid, ok2 := s.db.ids.parseID(prefixUser, userID)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "user %q is not a member of workspace %q", userID, workspaceID)
	}
	var m *link.Membership
	err := s.db.db.View(func(tx *bolt.Tx) error {
		var rec memberRecord
		if ok, err := getJSON(tx.Bucket(bucketWorkspaceMembers), concat(itob(wid), itob(uid)), &rec); err != nil {
			return err
		} else if !ok {
			return link.Errorf(link.ENOTFOUND, "user %q is not a member of workspace %q", userID, workspaceID)
		}
		ws, err := findWorkspace(tx, wid)
		if err != nil {
			return err
		}
		m = &link.Membership{Workspace: ws.workspace(s.db.ids, wid), UserID: s.db.ids.formatID(prefixUser, uid), Role: rec.Role, CreatedAt: rec.CreatedAt}
		return nil
	})
	return m, err
}

// UpdateWorkspace applies an update and validates the result. ENOTFOUND,
// EINVALID.
func (s *WorkspaceService) UpdateWorkspace(ctx context.Context, id string, upd link.WorkspaceUpdate) (*link.Workspace, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, id)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", id)
	}
	var w *link.Workspace
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findWorkspace(tx, wid)
		if err != nil {
			return err
		}
		next := rec.workspace(s.db.ids, wid)
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
		if next.DestinationChecks != rec.DestinationChecks {
			if err := setDestinationChecks(tx, wid, next.DestinationChecks); err != nil {
				return err
			}
		}
		before := *rec
		rec.DestinationChecks = next.DestinationChecks
		rec.Name, rec.Plan, rec.UpdatedAt = next.Name, next.Plan, s.db.now()
		rec.ForwardPath, rec.ForwardQuery = next.ForwardPath, next.ForwardQuery
		rec.Pixels = newPixelsRecord(next.Pixels)
		if err := putJSON(tx.Bucket(bucketWorkspaces), itob(wid), rec); err != nil {
			return err
		}
		if before.Name != rec.Name {
			if err := s.db.recordAudit(ctx, tx, wid, link.AuditWorkspaceRenamed, workspaceTarget(s.db.ids, wid),
				link.AuditChanges("name", before.Name, rec.Name)); err != nil {
				return err
			}
		}
		if before.Plan != rec.Plan {
			if err := s.db.recordAudit(ctx, tx, wid, link.AuditWorkspacePlan, workspaceTarget(s.db.ids, wid),
				link.AuditChanges("plan", string(before.Plan), string(rec.Plan))); err != nil {
				return err
			}
		}
		w = rec.workspace(s.db.ids, wid)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// workspaceTarget is a workspace as the target of an audit entry.
func workspaceTarget(ids *idCodec, wid uint64) link.AuditTarget {
	return link.AuditTarget{Type: "workspace", ID: ids.formatID(prefixWorkspace, wid)}
}

func findWorkspace(tx *bolt.Tx, id uint64) (*workspaceRecord, error) {
	var rec workspaceRecord
	if ok, err := getJSON(tx.Bucket(bucketWorkspaces), itob(id), &rec); err != nil {
		return nil, err
	} else if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", idsOf(tx).formatID(prefixWorkspace, id))
	}
	return &rec, nil
}

// workspaceExists returns ENOTFOUND unless the workspace exists.
func workspaceExists(tx *bolt.Tx, id uint64) error {
	if tx.Bucket(bucketWorkspaces).Get(itob(id)) == nil {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", idsOf(tx).formatID(prefixWorkspace, id))
	}
	return nil
}

// createWorkspace stores a workspace and makes ownerID its owner.
func createWorkspace(tx *bolt.Tx, rec *workspaceRecord, ownerID uint64) (uint64, error) {
	b := tx.Bucket(bucketWorkspaces)
	id, err := nextID(b)
	if err != nil {
		return 0, err
	}
	if err := putJSON(b, itob(id), rec); err != nil {
		return 0, err
	}
	return id, putMembership(tx, id, ownerID, &memberRecord{Role: link.RoleOwner, CreatedAt: rec.CreatedAt})
}

// ownedWorkspaces counts the workspaces user uid is an owner of.
func ownedWorkspaces(tx *bolt.Tx, uid uint64) (int, error) {
	n := 0
	prefix := itob(uid)
	c := tx.Bucket(bucketUserWorkspaces).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var m memberRecord
		if err := decodeJSON(v, &m); err != nil {
			return 0, err
		}
		if m.Role == link.RoleOwner {
			n++
		}
	}
	return n, nil
}

// putMembership writes a membership in both directions; a former member
// who joins again is a member like any other.
func putMembership(tx *bolt.Tx, wid, uid uint64, m *memberRecord) error {
	if err := tx.Bucket(bucketWorkspaceFormer).Delete(concat(itob(wid), itob(uid))); err != nil {
		return fmt.Errorf("delete former membership: %w", err)
	}
	if err := putJSON(tx.Bucket(bucketWorkspaceMembers), concat(itob(wid), itob(uid)), m); err != nil {
		return err
	}
	return putJSON(tx.Bucket(bucketUserWorkspaces), concat(itob(uid), itob(wid)), m)
}

// AddMember makes a user a member of a workspace with a role, recording
// member.joined. ENOTFOUND for an unknown user or workspace, ECONFLICT
// when the user is a member already, EINVALID for an unknown role.
func (s *WorkspaceService) AddMember(ctx context.Context, workspaceID, userID string, role link.Role) error {
	if !role.Valid() {
		return link.Errorf(link.EINVALID, "role must be read, read_write or owner")
	}
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	uid, ok2 := s.db.ids.parseID(prefixUser, userID)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "user %q or workspace %q not found", userID, workspaceID)
	}
	return s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		if _, err := findUser(tx, uid); err != nil {
			return err
		}
		if tx.Bucket(bucketWorkspaceMembers).Get(concat(itob(wid), itob(uid))) != nil {
			return link.Errorf(link.ECONFLICT, "user %q is a member of workspace %q already", userID, workspaceID)
		}
		if err := putMembership(tx, wid, uid, &memberRecord{Role: role, CreatedAt: s.db.now()}); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditMemberJoined, link.AuditTarget{Type: "user", ID: userID},
			link.AuditChanges("role", nil, string(role)))
	})
}
