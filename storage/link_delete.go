package storage

import (
	"context"
	"fmt"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// DeleteLink removes a link, its index entries, its click counter and its
// link-scope click aggregates, and holds its alias for the workspace for
// AliasHold (a held alias redirects nowhere). The workspace's (and
// campaign's) aggregates and raw clicks keep its clicks. ENOTFOUND.
func (s *LinkService) DeleteLink(ctx context.Context, workspaceID, id string) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	lid, ok2 := s.db.ids.parseID(prefixLink, id)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	var oldKey []byte
	defer func() {
		if oldKey != nil {
			s.db.aliases.forget(string(oldKey))
		}
	}()
	return s.db.update(func(tx *bolt.Tx) error {
		rec, err := findLink(tx, wid, lid)
		if err != nil {
			return err
		}
		oldKey, err = s.deleteLinkTx(tx, wid, lid, rec)
		return err
	})
}

// deleteLinkTx is DeleteLink's work in tx on the link lid, read as rec;
// it returns the alias key the link had.
func (s *LinkService) deleteLinkTx(tx *bolt.Tx, wid, lid uint64, rec *linkRecord) ([]byte, error) {
	if s.Events != nil {
		clicks, err := linkClicks(tx, lid)
		if err != nil {
			return nil, err
		}
		if err := s.emit(tx, wid, link.EventLinkDeleted, rec.link(s.db.ids, lid, clicks)); err != nil {
			return nil, err
		}
	}
	if err := forgetLinkCheck(tx, wid, lid); err != nil {
		return nil, err
	}
	oldKey := aliasKey(rec.Domain, rec.Alias)
	idb := itob(lid)
	if err := tx.Bucket(bucketLinks).Delete(idb); err != nil {
		return nil, fmt.Errorf("delete link: %w", err)
	}
	if err := tx.Bucket(bucketLinksAlias).Delete(aliasKey(rec.Domain, rec.Alias)); err != nil {
		return nil, fmt.Errorf("unindex alias: %w", err)
	}
	now := s.db.now()
	if err := holdAlias(tx, aliasKey(rec.Domain, rec.Alias), wid, now.Add(s.AliasHold), s.AliasHold); err != nil {
		return nil, err
	}
	if err := tx.Bucket(bucketLinksWorkspace).Delete(concat(itob(wid), idb)); err != nil {
		return nil, fmt.Errorf("unindex link workspace: %w", err)
	}
	if err := moveExternalID(tx, wid, lid, rec.ExternalID, ""); err != nil {
		return nil, err
	}
	if err := indexCrawlable(tx, rec, nil, idb); err != nil {
		return nil, err
	}
	if cid, ok := s.db.ids.parseID(prefixCampaign, rec.CampaignID); ok {
		if err := tx.Bucket(bucketLinksCampaign).Delete(campaignLinkKey(wid, cid, lid)); err != nil {
			return nil, fmt.Errorf("unindex link campaign: %w", err)
		}
	}
	if err := addCounter(tx.Bucket(bucketLinksCount), itob(wid), -1); err != nil {
		return nil, err
	}
	if err := countArchived(tx, wid, rec.Archived, false); err != nil {
		return nil, err
	}
	for _, t := range rec.Tags {
		if err := removeTag(tx, wid, t, idb); err != nil {
			return nil, err
		}
	}
	var ix searchIndexer
	ix.remove(lid, rec)
	if err := ix.write(tx); err != nil {
		return nil, err
	}
	return oldKey, deleteLinkStats(tx, lid)
}
