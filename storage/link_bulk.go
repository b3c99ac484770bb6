package storage

import (
	"context"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// CreateLinks stores links of the workspace in one transaction (see
// link.LinkService): each link's index entries, counters and
// link.created event as CreateLink writes them, the search index entries
// of them all written once at the end. A link refused for a reason of its
// own (its alias taken, its domain or campaign not the workspace's) gets
// that error and writes nothing; the others are stored.
func (s *LinkService) CreateLinks(ctx context.Context, workspaceID string, links []*link.Link) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	ins := make([]link.Link, len(links))
	for i, l := range links {
		ins[i] = normalizedInput(l)
	}
	now := s.db.now()
	errs := make([]error, len(links))
	created := make([]*link.Link, len(links))
	err := s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		var ix searchIndexer
		for i := range ins {
			rec := newLinkRecord(wid, &ins[i], now)
			id, err := addLink(tx, rec, &ix)
			if code := link.ErrorCode(err); code == link.ECONFLICT || code == link.EINVALID {
				errs[i] = err // addLink checks before it writes
				continue
			} else if err != nil {
				return err
			}
			created[i] = rec.link(s.db.ids, id, 0)
			if err := s.emit(tx, wid, link.EventLinkCreated, created[i]); err != nil {
				return err
			}
		}
		return ix.write(tx)
	})
	if err != nil {
		return nil, err
	}
	for i, l := range created {
		if l != nil {
			*links[i] = *l
		}
	}
	return errs, nil
}
