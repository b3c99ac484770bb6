package storage

import (
	"bytes"
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// UTMTemplateService keeps the workspaces' UTM templates.
type UTMTemplateService struct {
	db *DB
}

var _ link.UTMTemplateService = (*UTMTemplateService)(nil)

// NewUTMTemplateService returns the UTM template service of db.
func NewUTMTemplateService(db *DB) *UTMTemplateService { return &UTMTemplateService{db: db} }

type utmTemplateRecord struct {
	Workspace   uint64    `json:"ws"`
	Name        string    `json:"name"`
	UTMSource   string    `json:"utm_source,omitempty"`
	UTMMedium   string    `json:"utm_medium,omitempty"`
	UTMCampaign string    `json:"utm_campaign,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func (r *utmTemplateRecord) template(ids *idCodec, id uint64) *link.UTMTemplate {
	return &link.UTMTemplate{
		ID: ids.formatID(link.PrefixUTM, id), WorkspaceID: ids.formatID(prefixWorkspace, r.Workspace),
		Name: r.Name, UTMSource: r.UTMSource, UTMMedium: r.UTMMedium, UTMCampaign: r.UTMCampaign,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

func utmNotFound(tx *bolt.Tx, id uint64) error {
	return link.Errorf(link.ENOTFOUND, "UTM template %q not found", idsOf(tx).formatID(link.PrefixUTM, id))
}

func findUTMTemplate(tx *bolt.Tx, wid, id uint64) (*utmTemplateRecord, error) {
	var rec utmTemplateRecord
	ok, err := getJSON(tx.Bucket(bucketUTMTemplates), itob(id), &rec)
	if err != nil {
		return nil, err
	}
	if !ok || rec.Workspace != wid {
		return nil, utmNotFound(tx, id)
	}
	return &rec, nil
}

// eachUTMTemplate calls fn with each template of workspace wid, in
// creation order.
func eachUTMTemplate(tx *bolt.Tx, wid uint64, fn func(id uint64, r *utmTemplateRecord) error) error {
	prefix := itob(wid)
	c := tx.Bucket(bucketUTMTemplatesWorkspace).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id := btoi(k[8:])
		rec, err := findUTMTemplate(tx, wid, id)
		if err != nil {
			return err
		}
		if err := fn(id, rec); err != nil {
			return err
		}
	}
	return nil
}

// nameTaken answers ECONFLICT when workspace wid has a template other
// than except named name, whatever the case; with count, it also answers
// one when the workspace has link.MaxUTMTemplates.
func utmNameFree(tx *bolt.Tx, wid, except uint64, name string, count bool) error {
	n := 0
	err := eachUTMTemplate(tx, wid, func(id uint64, r *utmTemplateRecord) error {
		n++
		if id != except && link.SameTemplateName(r.Name, name) {
			return link.UTMTemplateNameTaken(name)
		}
		return nil
	})
	if err == nil && count && n >= link.MaxUTMTemplates {
		return link.ErrTooManyUTMTemplates
	}
	return err
}

// CreateUTMTemplate stores a template; sets ID, CreatedAt and UpdatedAt.
// ENOTFOUND for an unknown workspace; ECONFLICT for a name the workspace
// has, or a workspace with link.MaxUTMTemplates.
func (s *UTMTemplateService) CreateUTMTemplate(ctx context.Context, t *link.UTMTemplate) error {
	wid, ok := s.db.ids.parseID(prefixWorkspace, t.WorkspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", t.WorkspaceID)
	}
	now := s.db.now()
	var id uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		if err := utmNameFree(tx, wid, 0, t.Name, true); err != nil {
			return err
		}
		b := tx.Bucket(bucketUTMTemplates)
		var err error
		if id, err = nextID(b); err != nil {
			return err
		}
		rec := utmTemplateRecord{Workspace: wid, Name: t.Name, UTMSource: t.UTMSource, UTMMedium: t.UTMMedium,
			UTMCampaign: t.UTMCampaign, CreatedAt: now, UpdatedAt: now}
		if err := putJSON(b, itob(id), &rec); err != nil {
			return err
		}
		return tx.Bucket(bucketUTMTemplatesWorkspace).Put(concat(itob(wid), itob(id)), []byte{})
	})
	if err != nil {
		return err
	}
	t.ID, t.CreatedAt, t.UpdatedAt = s.db.ids.formatID(link.PrefixUTM, id), now, now
	return nil
}

// FindUTMTemplateByID returns a template of the workspace. ENOTFOUND.
func (s *UTMTemplateService) FindUTMTemplateByID(ctx context.Context, workspaceID, id string) (*link.UTMTemplate, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	tid, ok2 := s.db.ids.parseID(link.PrefixUTM, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "UTM template %q not found", id)
	}
	var out *link.UTMTemplate
	err := s.db.db.View(func(tx *bolt.Tx) error {
		rec, err := findUTMTemplate(tx, wid, tid)
		if err != nil {
			return err
		}
		out = rec.template(s.db.ids, tid)
		return nil
	})
	return out, err
}

// FindUTMTemplates returns the workspace's templates by name, then
// creation. ENOTFOUND for an unknown workspace.
func (s *UTMTemplateService) FindUTMTemplates(ctx context.Context, workspaceID string) ([]*link.UTMTemplate, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.UTMTemplate{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		return eachUTMTemplate(tx, wid, func(id uint64, r *utmTemplateRecord) error {
			out = append(out, r.template(s.db.ids, id))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	link.SortUTMTemplates(out)
	return out, nil
}

// UpdateUTMTemplate applies an update and validates the result.
// ENOTFOUND, EINVALID, ECONFLICT.
func (s *UTMTemplateService) UpdateUTMTemplate(ctx context.Context, workspaceID, id string, upd link.UTMTemplateUpdate) (*link.UTMTemplate, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	tid, ok2 := s.db.ids.parseID(link.PrefixUTM, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "UTM template %q not found", id)
	}
	now := s.db.now()
	var out *link.UTMTemplate
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findUTMTemplate(tx, wid, tid)
		if err != nil {
			return err
		}
		t := rec.template(s.db.ids, tid)
		upd.Apply(t)
		t.Normalize()
		if err := t.Validate(); err != nil {
			return err
		}
		if err := utmNameFree(tx, wid, tid, t.Name, false); err != nil {
			return err
		}
		rec.Name, rec.UTMSource, rec.UTMMedium, rec.UTMCampaign, rec.UpdatedAt = t.Name, t.UTMSource, t.UTMMedium, t.UTMCampaign, now
		if err := putJSON(tx.Bucket(bucketUTMTemplates), itob(tid), rec); err != nil {
			return err
		}
		out = rec.template(s.db.ids, tid)
		return nil
	})
	return out, err
}

// DeleteUTMTemplate deletes a template. ENOTFOUND.
func (s *UTMTemplateService) DeleteUTMTemplate(ctx context.Context, workspaceID, id string) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	tid, ok2 := s.db.ids.parseID(link.PrefixUTM, id)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "UTM template %q not found", id)
	}
	return s.db.update(func(tx *bolt.Tx) error {
		if _, err := findUTMTemplate(tx, wid, tid); err != nil {
			return err
		}
		if err := tx.Bucket(bucketUTMTemplates).Delete(itob(tid)); err != nil {
			return err
		}
		return tx.Bucket(bucketUTMTemplatesWorkspace).Delete(concat(itob(wid), itob(tid)))
	})
}
