package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// UpdateLink applies an update in one transaction: it loads the link,
// applies upd, calls validate (whose error is returned unchanged), moves
// the alias index if the alias changed (an empty alias gets a new code;
// the old alias is held for the workspace for AliasHold)
// and the tag indexes and counters if the tags changed, and sets
// UpdatedAt. validate runs inside the write transaction: it may read
// through the services but must not write. ENOTFOUND, ECONFLICT (alias).
func (s *LinkService) UpdateLink(ctx context.Context, workspaceID, id string, upd link.LinkUpdate, validate func(*link.Link) error) (*link.Link, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	lid, ok2 := s.db.ids.parseID(prefixLink, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	now := s.db.now()
	var out *link.Link
	var oldKey []byte
	err := s.db.update(func(tx *bolt.Tx) error {
		var err error
		out, oldKey, _, err = s.updateLinkTx(tx, wid, lid, upd, validate, now)
		return err
	})
	if oldKey != nil {
		s.db.aliases.forget(string(oldKey))
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// updateLinkTx is UpdateLink's work in tx at now: the link as updated,
// the alias key it had, and whether it wrote anything before an error
// (ENOTFOUND and validate's errors come before any write).
func (s *LinkService) updateLinkTx(tx *bolt.Tx, wid, lid uint64, upd link.LinkUpdate, validate func(*link.Link) error, now time.Time) (*link.Link, []byte, bool, error) {
	rec, err := findLink(tx, wid, lid)
	if err != nil {
		return nil, nil, false, err
	}
	oldKey := aliasKey(rec.Domain, rec.Alias)
	l, err := linkWithClicks(tx, lid, rec)
	if err != nil {
		return nil, oldKey, false, err
	}
	upd.Apply(l)
	if validate != nil {
		if err := validate(l); err != nil {
			return nil, oldKey, false, err
		}
	}
	idb := itob(lid)
	if err := checkExternalID(tx, wid, lid, l.ExternalID); err != nil {
		return nil, oldKey, false, err
	}

	var ix searchIndexer
	ix.remove(lid, rec)
	oldAlias := rec.Alias
	alias, err := s.moveAlias(tx, wid, idb, rec, l.Alias, now)
	if err != nil {
		return nil, oldKey, true, err
	}
	if err := moveTags(tx, wid, idb, rec.Tags, l.Tags); err != nil {
		return nil, oldKey, true, err
	}

	rec.Alias = alias
	rec.Destination = l.DestinationURL
	rec.Tags = l.Tags
	rec.UTMSource, rec.UTMMedium, rec.UTMCampaign = l.UTMSource, l.UTMMedium, l.UTMCampaign
	if err := s.moveCampaign(tx, wid, lid, rec.CampaignID, l.CampaignID); err != nil {
		return nil, oldKey, true, err
	}
	rec.CampaignID = l.CampaignID
	rec.RedirectCode = l.RedirectCode
	rec.ForwardPath, rec.ForwardQuery = l.ForwardPath, l.ForwardQuery
	if err := moveExternalID(tx, wid, lid, rec.ExternalID, l.ExternalID); err != nil {
		return nil, oldKey, true, err
	}
	rec.ExternalID = l.ExternalID
	was := *rec
	was.Alias = oldAlias
	rec.Crawlable = l.Crawlable
	if err := indexCrawlable(tx, &was, rec, idb); err != nil {
		return nil, oldKey, true, err
	}
	rec.PublicStats = l.PublicStats
	rec.EscapeInApp, rec.Retargeting = l.EscapeInApp, l.Retargeting
	// link controls: expiry and limits
	if err := countArchived(tx, wid, rec.Archived, l.Archived); err != nil {
		return nil, oldKey, true, err
	}
	rec.linkLimitsRecord = limitsRecord(l.LinkLimits)
	rec.setControls(l)
	rec.UpdatedAt = now
	if err := putLink(tx.Bucket(bucketLinks), idb, rec); err != nil {
		return nil, oldKey, true, err
	}
	ix.add(lid, rec)
	if err := ix.write(tx); err != nil {
		return nil, oldKey, true, err
	}
	out := rec.link(s.db.ids, lid, uint64(l.Clicks))
	return out, oldKey, true, s.emit(tx, wid, link.EventLinkUpdated, out)
}

// moveCampaign moves the link lid's campaign index entry from the campaign
// it was in to the one it is in ("" for none). ENOTFOUND (field
// campaign_id) for a campaign not of the workspace.
func (s *LinkService) moveCampaign(tx *bolt.Tx, wid, lid uint64, was, is string) error {
	if is == was {
		return nil
	}
	idx := tx.Bucket(bucketLinksCampaign)
	if was != "" {
		if old, ok := s.db.ids.parseID(prefixCampaign, was); ok {
			if err := idx.Delete(campaignLinkKey(wid, old, lid)); err != nil {
				return fmt.Errorf("unindex link campaign: %w", err)
			}
		}
	}
	if is != "" {
		cid, err := campaignForLink(tx, wid, is)
		if err != nil {
			return err
		}
		if err := idx.Put(campaignLinkKey(wid, cid, lid), []byte{}); err != nil {
			return fmt.Errorf("index link campaign: %w", err)
		}
	}
	return nil
}
