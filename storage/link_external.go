package storage

import (
	"context"
	"fmt"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// externalKey is the links.external key of an external ID of workspace
// wid.
func externalKey(wid uint64, externalID string) []byte {
	return concat(itob(wid), []byte(externalID))
}

// checkExternalID refuses (ECONFLICT, field external_id) an external ID
// that another link than lid of workspace wid has; "" is never taken.
func checkExternalID(tx *bolt.Tx, wid, lid uint64, externalID string) error {
	if externalID == "" {
		return nil
	}
	v := tx.Bucket(bucketLinksExternal).Get(externalKey(wid, externalID))
	if v == nil || lid != 0 && btoi(v) == lid {
		return nil
	}
	msg := "is the external ID of link " + idsOf(tx).formatID(prefixLink, btoi(v))
	return &link.Error{Code: link.ECONFLICT, Message: fmt.Sprintf("external_id: %q %s", externalID, msg),
		Fields: []link.FieldError{{Field: "external_id", Message: msg}}}
}

// moveExternalID moves the links.external entry of link lid from the
// external ID it had to the one it has ("" for none), checked before with
// checkExternalID.
func moveExternalID(tx *bolt.Tx, wid, lid uint64, was, is string) error {
	if was == is {
		return nil
	}
	b := tx.Bucket(bucketLinksExternal)
	if was != "" {
		if err := b.Delete(externalKey(wid, was)); err != nil {
			return fmt.Errorf("unindex external ID: %w", err)
		}
	}
	if is != "" {
		if err := b.Put(externalKey(wid, is), itob(lid)); err != nil {
			return fmt.Errorf("index external ID: %w", err)
		}
	}
	return nil
}

// FindLinkByExternalID returns the link of the workspace with the
// external ID, with its clicks. ENOTFOUND.
func (s *LinkService) FindLinkByExternalID(ctx context.Context, workspaceID, externalID string) (*link.Link, error) {
	notFound := link.Errorf(link.ENOTFOUND, "no link has the external ID %q", externalID)
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok || externalID == "" {
		return nil, notFound
	}
	var out *link.Link
	err := s.db.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketLinksExternal).Get(externalKey(wid, externalID))
		if v == nil {
			return notFound
		}
		lid := btoi(v)
		rec, err := findLink(tx, wid, lid)
		if err != nil {
			return err
		}
		out, err = linkWithClicks(tx, lid, rec)
		return err
	})
	return out, err
}
