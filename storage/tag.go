package storage

import (
	"bytes"
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// TagService keeps the colours and descriptions of the workspaces' tags
// in bucket tags (workspace id + tag name → tagRecord); how many links
// carry a tag is links.tag_count's.
type TagService struct {
	db *DB
}

var _ link.TagService = (*TagService)(nil)

// NewTagService returns the tag service of db.
func NewTagService(db *DB) *TagService { return &TagService{db: db} }

type tagRecord struct {
	Color       string    `json:"color,omitempty"`
	Description string    `json:"description,omitempty"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func (r *tagRecord) tag(wsID, name string) *link.Tag {
	return &link.Tag{WorkspaceID: wsID, Name: name, Color: r.Color, Description: r.Description, UpdatedAt: r.UpdatedAt}
}

// tagLinks returns how many links of workspace wid carry the tag.
func tagLinks(tx *bolt.Tx, wid uint64, name string) (int, error) {
	n, err := counter(tx.Bucket(bucketLinksTagCount), tagCountKey(wid, name))
	return int(n), err
}

// FindTags returns every tag of the workspace by name: those its links
// carry and those with a colour or a description. ENOTFOUND for an
// unknown workspace.
func (s *TagService) FindTags(ctx context.Context, workspaceID string) ([]*link.Tag, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.Tag{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		byName := map[string]*link.Tag{}
		prefix := itob(wid)
		c := tx.Bucket(bucketLinksTagCount).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(v) != 8 || btoi(v) == 0 {
				continue
			}
			t := &link.Tag{WorkspaceID: workspaceID, Name: string(k[8:]), Links: int(btoi(v))}
			byName[t.Name] = t
			out = append(out, t)
		}
		c = tx.Bucket(bucketTags).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var r tagRecord
			if err := decodeJSON(v, &r); err != nil {
				return err
			}
			name := string(k[8:])
			if t := byName[name]; t != nil {
				t.Color, t.Description, t.UpdatedAt = r.Color, r.Description, r.UpdatedAt
				continue
			}
			out = append(out, r.tag(workspaceID, name))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	link.SortTags(out)
	return out, nil
}

// FindTag returns a tag of the workspace. ENOTFOUND when no link carries
// it and it has no colour or description.
func (s *TagService) FindTag(ctx context.Context, workspaceID, name string) (*link.Tag, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.TagNotFound(name)
	}
	var out *link.Tag
	err := s.db.db.View(func(tx *bolt.Tx) error {
		var r tagRecord
		found, err := getJSON(tx.Bucket(bucketTags), concat(itob(wid), []byte(name)), &r)
		if err != nil {
			return err
		}
		n, err := tagLinks(tx, wid, name)
		if err != nil {
			return err
		}
		if !found && n == 0 {
			return link.TagNotFound(name)
		}
		out = r.tag(workspaceID, name)
		out.Links = n
		return nil
	})
	return out, err
}

// PutTag stores a tag's colour and description; both empty remove them.
// ENOTFOUND for an unknown workspace, ECONFLICT past link.MaxTagInfos.
func (s *TagService) PutTag(ctx context.Context, t *link.Tag) error {
	wid, ok := s.db.ids.parseID(prefixWorkspace, t.WorkspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", t.WorkspaceID)
	}
	now := s.db.now()
	return s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		b, key := tx.Bucket(bucketTags), concat(itob(wid), []byte(t.Name))
		had := b.Get(key) != nil
		if !t.HasInfo() {
			if err := b.Delete(key); err != nil {
				return err
			}
			t.UpdatedAt = time.Time{}
		} else {
			if !had && countPrefix(b, itob(wid)) >= link.MaxTagInfos {
				return link.ErrTooManyTagInfos
			}
			if err := putJSON(b, key, &tagRecord{Color: t.Color, Description: t.Description, UpdatedAt: now}); err != nil {
				return err
			}
			t.UpdatedAt = now
		}
		n, err := tagLinks(tx, wid, t.Name)
		t.Links = n
		return err
	})
}

// DeleteTag removes a tag's colour and description. ENOTFOUND when it has
// none.
func (s *TagService) DeleteTag(ctx context.Context, workspaceID, name string) error {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return link.TagNotFound(name)
	}
	return s.db.update(func(tx *bolt.Tx) error {
		b, key := tx.Bucket(bucketTags), concat(itob(wid), []byte(name))
		if b.Get(key) == nil {
			return link.Errorf(link.ENOTFOUND, "tag %q has no colour or description", name)
		}
		return b.Delete(key)
	})
}

// countPrefix counts the keys of b that start with prefix.
func countPrefix(b *bolt.Bucket, prefix []byte) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	return n
}
