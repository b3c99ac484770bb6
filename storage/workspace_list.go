package storage

import (
	"context"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// ListWorkspaces returns every workspace of the instance, oldest first,
// for the instance admin's command line: an instance has teams, not
// millions of them.
func (s *WorkspaceService) ListWorkspaces(ctx context.Context) ([]*link.Workspace, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []*link.Workspace
	err := s.db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWorkspaces).ForEach(func(k, v []byte) error {
			var rec workspaceRecord
			if err := decodeJSON(v, &rec); err != nil {
				return err
			}
			out = append(out, rec.workspace(s.db.ids, btoi(k)))
			return nil
		})
	})
	return out, err
}

// CountLinks returns the number of links of the workspace id (archived
// ones included). ENOTFOUND.
func (s *WorkspaceService) CountLinks(ctx context.Context, id string) (int, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, id)
	if !ok {
		return 0, link.Errorf(link.ENOTFOUND, "workspace %q not found", id)
	}
	var n uint64
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		var err error
		n, err = counter(tx.Bucket(bucketLinksCount), itob(wid))
		return err
	})
	return int(n), err
}
