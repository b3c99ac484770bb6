package storage

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// DeleteLinks removes links of the workspace in one transaction, each as
// DeleteLink does; errs holds, for each id, ENOTFOUND for one that is not
// a link of the workspace (or was named twice), nil for one removed.
func (s *LinkService) DeleteLinks(ctx context.Context, workspaceID string, ids []string) ([]error, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	var errs []error
	var keys [][]byte
	defer func() {
		for _, k := range keys {
			s.db.aliases.forget(string(k))
		}
	}()
	err := s.db.update(func(tx *bolt.Tx) error {
		errs, keys = make([]error, len(ids)), nil
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		for i, id := range ids {
			lid, ok := s.db.ids.parseID(prefixLink, id)
			if !ok {
				errs[i] = link.Errorf(link.ENOTFOUND, "link %q not found", id)
				continue
			}
			rec, err := findLink(tx, wid, lid)
			if link.ErrorCode(err) == link.ENOTFOUND {
				errs[i] = err
				continue
			} else if err != nil {
				return err
			}
			key, err := s.deleteLinkTx(tx, wid, lid, rec)
			if err != nil {
				return err // a write began: the whole deletion fails
			}
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return errs, nil
}

// UpdateLinks applies upd to links of the workspace in one transaction,
// each as UpdateLink does (validate runs for each); out and errs hold, for
// each id, the link as updated or why it was not: ENOTFOUND (also for an
// id named twice after its first), validate's error. An error apart
// updates none. upd must not change the alias.
func (s *LinkService) UpdateLinks(ctx context.Context, workspaceID string, ids []string, upd link.LinkUpdate, validate func(*link.Link) error) ([]*link.Link, []error, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	if upd.Alias != nil {
		return nil, nil, link.Errorf(link.EINVALID, "a bulk update cannot change aliases")
	}
	now := s.db.now()
	var out []*link.Link
	var errs []error
	var keys [][]byte
	defer func() {
		for _, k := range keys {
			s.db.aliases.forget(string(k))
		}
	}()
	err := s.db.update(func(tx *bolt.Tx) error {
		out, errs, keys = make([]*link.Link, len(ids)), make([]error, len(ids)), nil
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		seen := map[uint64]bool{}
		for i, id := range ids {
			lid, ok := s.db.ids.parseID(prefixLink, id)
			if !ok || seen[lid] {
				errs[i] = link.Errorf(link.ENOTFOUND, "link %q not found (or named twice)", id)
				continue
			}
			seen[lid] = true
			l, key, wrote, err := s.updateLinkTx(tx, wid, lid, upd, validate, now)
			switch {
			case err != nil && !wrote && link.ErrorCode(err) != link.EINTERNAL:
				errs[i] = err
				continue
			case err != nil:
				return err // a write began: the whole update fails
			}
			out[i], keys = l, append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, errs, nil
}
