package storage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.ImportService = (*ImportService)(nil)

// ImportService stores the links an import brings in from another
// shortener, with their clicks, and remembers which links of which source
// it imported (the imports bucket: workspace id + source + 0 + source key
// → link id), so a run repeated, or resumed after its source failed
// half-way, adds nothing twice.
type ImportService struct {
	db *DB
}

// NewImportService returns the import service of db.
func NewImportService(db *DB) *ImportService { return &ImportService{db: db} }

// errDryRun rolls a dry run's transaction back.
var errDryRun = errors.New("dry run")

// maxRenames bounds the search for a free alias when renaming: alias-2
// up to alias-100.
const maxRenames = 100

// ImportLinks stores a batch of imported links in one transaction (see
// link.ImportService). A dry run does the same work in a transaction it
// rolls back, so it reports exactly what the batch would do. A link's
// domain that is not a verified domain of the workspace is dropped (the
// link goes to the primary host, said in its Reason). Dated clicks are
// written as the click recorder writes them (raw clicks, visitors,
// aggregates), at their own times: raw clicks older than the retention
// period are pruned by the next prune like any others, while the hourly
// and daily aggregates analytics read are kept. Undated clicks go into
// the aggregates and the link's total only, at their UndatedAt hour.
func (s *ImportService) ImportLinks(ctx context.Context, workspaceID string, b *link.ImportBatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	for i := range b.Items {
		b.Items[i].Link = normalizedInput(&b.Items[i].Link)
	}
	now := s.db.now()
	results := make([]link.ImportItem, len(b.Items))
	var claimed []*link.ImportItem
	write := func(tx *bolt.Tx) error {
		claimed = claimed[:0]
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		im := importTx{tx: tx, ids: s.db.ids, wid: wid, source: b.Source, now: now, claimed: b.Claimed}
		var ix searchIndexer
		clicks := newClickBatch(0)
		for i := range b.Items {
			results[i] = b.Items[i]
			if err := im.importItem(&results[i], &ix, clicks); err != nil {
				return err
			}
			if results[i].Status == link.ImportImported {
				claimed = append(claimed, &results[i])
			}
		}
		if err := ix.write(tx); err != nil {
			return err
		}
		if err := lowerDataSince(tx, wid, im.earliest); err != nil {
			return err
		}
		if err := writeImportedClicks(tx, clicks); err != nil {
			return err
		}
		if b.DryRun {
			return errDryRun
		}
		return nil
	}
	var err error
	if b.DryRun {
		// Not s.db.update: the rollback is no failed write.
		if err = s.db.db.Update(write); errors.Is(err, errDryRun) {
			err = nil
		}
	} else {
		err = s.db.update(write)
	}
	if err != nil {
		return fmt.Errorf("import links: %w", err)
	}
	copy(b.Items, results)
	if b.DryRun && b.Claimed != nil {
		for _, it := range claimed {
			b.Claimed.Add(it.Link.Domain, "/", it.Alias)
		}
	}
	return nil
}

// importTx is one batch's transaction.
type importTx struct {
	tx      *bolt.Tx
	ids     *idCodec
	wid     uint64
	source  string
	now     time.Time
	claimed *link.NameSet
	// earliest is the earliest time of the links and clicks imported.
	earliest time.Time
}

// seen lowers earliest to t.
func (im *importTx) seen(t time.Time) {
	if im.earliest.IsZero() || t.Before(im.earliest) {
		im.earliest = t
	}
}

// lowerDataSince sets the workspace's DataSince to t when t is before
// both its creation and its DataSince, so that range=all covers what an
// import dated before the workspace was made.
func lowerDataSince(tx *bolt.Tx, wid uint64, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	rec, err := findWorkspace(tx, wid)
	if err != nil {
		return err
	}
	if !t.Before(rec.CreatedAt) || rec.DataSince != nil && !t.Before(*rec.DataSince) {
		return nil
	}
	t = t.UTC()
	rec.DataSince = &t
	return putJSON(tx.Bucket(bucketWorkspaces), itob(wid), rec)
}

// importItem creates one item's link (or finds why not) and adds its
// clicks to clicks.
func (im *importTx) importItem(it *link.ImportItem, ix *searchIndexer, clicks *clickBatch) error {
	imports := im.tx.Bucket(bucketImports)
	key := concat(itob(im.wid), []byte(im.source), []byte{0}, []byte(it.Key))
	if v := imports.Get(key); v != nil {
		it.Status, it.Reason = link.ImportExists, "imported before"
		it.LinkID = im.ids.formatID(prefixLink, btoi(v))
		if rec, err := findLink(im.tx, 0, btoi(v)); err == nil {
			it.Alias = rec.Alias
		}
		return nil
	}
	rec := newLinkRecord(im.wid, &it.Link, im.now)
	if !it.Link.CreatedAt.IsZero() && it.Link.CreatedAt.Before(im.now) {
		rec.CreatedAt = it.Link.CreatedAt.UTC() // never after the import
	}
	if rec.Domain != "" {
		if err := domainForLink(im.tx, im.wid, rec.Domain); err != nil {
			it.Reason = "domain " + rec.Domain + " is not a verified domain of this workspace: the link is on the primary host"
			rec.Domain = ""
		}
	}
	if rec.Alias != "" {
		done, err := im.pickAlias(it, rec, key)
		if done || err != nil {
			return err
		}
	}
	id, err := addLink(im.tx, rec, ix)
	if code := link.ErrorCode(err); code == link.ECONFLICT || code == link.EINVALID {
		it.Status, it.Reason = link.ImportSkipped, link.ErrorMessage(err)
		return nil
	} else if err != nil {
		return err
	}
	if err := imports.Put(key, itob(id)); err != nil {
		return fmt.Errorf("remember imported link: %w", err)
	}
	it.Status, it.LinkID, it.Alias = link.ImportImported, im.ids.formatID(prefixLink, id), rec.Alias
	it.Link.Domain = rec.Domain
	im.seen(rec.CreatedAt)
	for i := range it.Clicks {
		c := it.Clicks[i]
		c.WorkspaceID, c.LinkID, c.CampaignID, c.Variant = "", "", "", 0
		p, ok := clickAt(im.wid, id, &c)
		if !ok || c.Time.After(im.now) {
			// A time out of range, or after the import, which no range
			// of analytics reads (the importer counts those undated):
			// counted nowhere.
			continue
		}
		im.seen(c.Time)
		clicks.clicks = append(clicks.clicks, p)
	}
	if it.Undated > 0 {
		// Counted at the hour of UndatedAt (never after the import), in
		// the link's total and the aggregates only, as direct clicks of
		// unknown clients.
		at := it.UndatedAt
		if at.After(im.now) {
			at = im.now
		}
		if p, ok := clickAt(im.wid, id, &link.Click{Time: at}); ok {
			p.weight = uint64(it.Undated)
			im.seen(at)
			clicks.clicks = append(clicks.clicks, p)
		}
	}
	return nil
}

// pickAlias decides the alias of an item whose source names one: kept
// when free, else renamed (Rename) or the item skipped. done says the
// item is decided (skipped, or found imported by hand before).
func (im *importTx) pickAlias(it *link.ImportItem, rec *linkRecord, key []byte) (done bool, err error) {
	if im.aliasFree(rec.Domain, rec.Alias) {
		return false, nil
	}
	if other, ok := im.aliasLink(rec.Domain, rec.Alias); ok && other.Workspace == im.wid && other.Destination == rec.Destination {
		// The same link, made here by hand or by another tool: remember
		// it, add nothing.
		lid := btoi(im.tx.Bucket(bucketLinksAlias).Get(aliasKey(rec.Domain, rec.Alias)))
		if err := im.tx.Bucket(bucketImports).Put(key, itob(lid)); err != nil {
			return true, fmt.Errorf("remember imported link: %w", err)
		}
		it.Status, it.Reason = link.ImportExists, "alias already leads to the same URL"
		it.LinkID, it.Alias = im.ids.formatID(prefixLink, lid), rec.Alias
		return true, nil
	}
	if !it.Rename {
		it.Status, it.Reason = link.ImportSkipped, fmt.Sprintf("alias %q is already taken", rec.Alias)
		return true, nil
	}
	for n := 2; n <= maxRenames; n++ {
		suffix := "-" + strconv.Itoa(n)
		base := rec.Alias
		if len(base)+len(suffix) > link.MaxAliasLength {
			base = base[:link.MaxAliasLength-len(suffix)]
		}
		if alias := base + suffix; im.aliasFree(rec.Domain, alias) {
			it.Reason = fmt.Sprintf("alias %q is taken: renamed to %q", rec.Alias, alias)
			rec.Alias = alias
			return false, nil
		}
	}
	it.Status, it.Reason = link.ImportSkipped, fmt.Sprintf("alias %q and %d renamings of it are taken", rec.Alias, maxRenames-1)
	return true, nil
}

// aliasFree reports whether alias can be taken on domain by the
// workspace: no link has it, no other workspace holds it, and no earlier
// batch of a dry run claimed it.
func (im *importTx) aliasFree(domain, alias string) bool {
	k := aliasKey(domain, alias)
	if im.tx.Bucket(bucketLinksAlias).Get(k) != nil || (im.claimed != nil && im.claimed.Has(domain, "/", alias)) {
		return false
	}
	v := im.tx.Bucket(bucketLinksAliasHold).Get(k)
	return !(len(v) == 16 && btoi(v[:8]) != im.wid && im.now.UnixNano() < int64(btoi(v[8:])))
}

// aliasLink returns the record of the link holding alias on domain.
func (im *importTx) aliasLink(domain, alias string) (*linkRecord, bool) {
	v := im.tx.Bucket(bucketLinksAlias).Get(aliasKey(domain, alias))
	if v == nil {
		return nil, false
	}
	rec, err := findLink(im.tx, 0, btoi(v))
	return rec, err == nil
}

// writeImportedClicks writes a batch's clicks as RecordClicks does,
// without link.clicked events (they happened long ago, elsewhere): the
// dated ones whole, the undated ones (weighted) in the totals and
// aggregates only.
func writeImportedClicks(tx *bolt.Tx, b *clickBatch) error {
	if len(b.clicks) == 0 {
		return nil
	}
	for i := range b.clicks {
		b.add(&b.clicks[i])
	}
	return b.plan().write(tx)
}
