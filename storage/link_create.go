package storage

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// CreateLink stores a link, generating a code when the alias is empty;
// sets ID, Alias, CreatedAt, UpdatedAt (and the normalised fields) once
// the link is durable. ENOTFOUND for an unknown workspace; EINVALID
// (field domain) unless Domain is empty or a verified domain of the
// workspace; ECONFLICT if the alias is taken on the domain.
//
// Concurrent creations share one commit and one write of the search
// index (see creationBatch). The batch function may run more than once,
// so it computes everything from the input and the result reaches l only
// after success.
func (s *LinkService) CreateLink(ctx context.Context, l *link.Link) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	wid, ok := s.db.ids.parseID(prefixWorkspace, l.WorkspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", l.WorkspaceID)
	}
	in := normalizedInput(l)
	now := s.db.now()

	var created *link.Link
	err := s.db.batchIndexed(func(tx *bolt.Tx, ix *searchIndexer) error {
		created = nil
		if err := workspaceExists(tx, wid); err != nil {
			return refusal{err}
		}
		rec := newLinkRecord(wid, &in, now)
		id, err := addLink(tx, rec, ix)
		if code := link.ErrorCode(err); code == link.ECONFLICT || code == link.EINVALID {
			return refusal{err} // addLink checks before it writes
		} else if err != nil {
			return err
		}
		created = rec.link(s.db.ids, id, 0)
		return s.emit(tx, wid, link.EventLinkCreated, created)
	})
	if err != nil {
		return err
	}
	*l = *created
	return nil
}

// normalizedInput returns a copy of a link given to store, normalised
// (link.Link.Normalize), sharing no slice the normalisation changes with
// l. It is the one place where storage normalises the links it creates
// (CreateLink, CreateLinks, ImportLinks): the server and the importer
// normalise a link before they validate it, and storage again for callers
// that did not, so what is stored never depends on the caller.
func normalizedInput(l *link.Link) link.Link {
	in := *l
	in.Tags = slices.Clone(l.Tags)
	in.Normalize()
	return in
}

// newLinkRecord is the record of the new link in of workspace wid,
// created at now.
func newLinkRecord(wid uint64, in *link.Link, now time.Time) *linkRecord {
	rec := &linkRecord{
		Workspace:    wid,
		Alias:        in.Alias,
		Domain:       in.Domain,
		Destination:  in.DestinationURL,
		Tags:         in.Tags,
		UTMSource:    in.UTMSource,
		UTMMedium:    in.UTMMedium,
		UTMCampaign:  in.UTMCampaign,
		CampaignID:   in.CampaignID,
		RedirectCode: in.RedirectCode,
		CreatedAt:    now,
		UpdatedAt:    now,
		ForwardPath:  in.ForwardPath,
		ForwardQuery: in.ForwardQuery,
		ExternalID:   in.ExternalID,
		Crawlable:    in.Crawlable,
		PublicStats:  in.PublicStats,
		EscapeInApp:  in.EscapeInApp,
		Retargeting:  in.Retargeting,
	}
	rec.linkLimitsRecord = limitsRecord(in.LinkLimits)
	rec.setControls(in)
	return rec
}

// addLink stores a link record with all its index entries and counters;
// an empty alias is replaced by a generated code. A non-empty rec.Domain
// must be a verified domain of rec.Workspace, checked here, in the
// transaction that stores the link (EINVALID, field domain). The link's
// search index entries are gathered in ix, for the caller to write
// (several links' at once). It checks everything that can refuse the link
// (domain, campaign, alias) before it writes anything, so that a refused
// link leaves the transaction as it was.
func addLink(tx *bolt.Tx, rec *linkRecord, ix *searchIndexer) (uint64, error) {
	if rec.Domain != "" {
		if err := domainForLink(tx, rec.Workspace, rec.Domain); err != nil {
			return 0, err
		}
	}
	var cid uint64
	if rec.CampaignID != "" {
		var err error
		if cid, err = campaignForLink(tx, rec.Workspace, rec.CampaignID); err != nil {
			return 0, err
		}
	}
	if err := checkExternalID(tx, rec.Workspace, 0, rec.ExternalID); err != nil {
		return 0, err
	}
	aliases := tx.Bucket(bucketLinksAlias)
	if rec.Alias == "" {
		code, err := freeCode(tx, rec.Domain, rec.UpdatedAt) // now, also for an imported link's past CreatedAt
		if err != nil {
			return 0, err
		}
		rec.Alias = code
	} else if err := takeAlias(tx, aliasKey(rec.Domain, rec.Alias), rec.Alias, rec.Workspace, rec.UpdatedAt); err != nil {
		return 0, err
	}
	links := tx.Bucket(bucketLinks)
	id, err := nextID(links)
	if err != nil {
		return 0, err
	}
	idb := itob(id)
	// Links take ever larger IDs, so records and the indexes keyed by
	// workspace (or tag, or campaign) and then ID grow at the end of their
	// ranges: filling the pages before a split leaves them full rather
	// than half empty. Aliases come in any order and keep bolt's default.
	links.FillPercent = linkFill
	if err := putLink(links, idb, rec); err != nil {
		return 0, err
	}
	if err := aliases.Put(aliasKey(rec.Domain, rec.Alias), idb); err != nil {
		return 0, fmt.Errorf("index alias: %w", err)
	}
	if err := moveExternalID(tx, rec.Workspace, id, "", rec.ExternalID); err != nil {
		return 0, err
	}
	if err := indexCrawlable(tx, nil, rec, idb); err != nil {
		return 0, err
	}
	byWorkspace := tx.Bucket(bucketLinksWorkspace)
	byWorkspace.FillPercent = linkFill
	tx.Bucket(bucketLinksCampaign).FillPercent = linkFill
	tx.Bucket(bucketLinksTag).FillPercent = linkFill
	if err := byWorkspace.Put(concat(itob(rec.Workspace), idb), []byte{}); err != nil {
		return 0, fmt.Errorf("index link workspace: %w", err)
	}
	if cid != 0 {
		if err := tx.Bucket(bucketLinksCampaign).Put(campaignLinkKey(rec.Workspace, cid, id), []byte{}); err != nil {
			return 0, fmt.Errorf("index link campaign: %w", err)
		}
	}
	if err := addCounter(tx.Bucket(bucketLinksCount), itob(rec.Workspace), 1); err != nil {
		return 0, err
	}
	if err := countArchived(tx, rec.Workspace, false, rec.Archived); err != nil {
		return 0, err
	}
	for _, t := range rec.Tags {
		if err := addTag(tx, rec.Workspace, t, idb); err != nil {
			return 0, err
		}
	}
	ix.add(id, rec)
	return id, nil
}

// linkFill is the fill of the pages of links and of their indexes by
// workspace, tag and campaign, which new links append to.
const linkFill = 0.9
