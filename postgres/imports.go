package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// ImportService stores the links an import brings in from another
// shortener, with their clicks, and remembers which links of which source
// it imported (the imports table: workspace, source, source key → link
// id), so a run repeated, or resumed after its source failed half-way,
// adds nothing twice.
type ImportService struct {
	links *LinkService
}

var _ link.ImportService = (*ImportService)(nil)

// errDryRun rolls a dry run's transaction back.
var errDryRun = errors.New("dry run")

// importLockClass is the first key of the advisory locks of imports
// ("imp" in ASCII); the second is the hash of workspace and source.
const importLockClass = 0x696d70

// maxRenames bounds the search for a free alias when renaming: alias-2
// up to alias-100.
const maxRenames = 100

// importedClicks are the clicks of one imported link: the dated ones,
// with their WorkspaceID and LinkID set, and those its source counts
// without dates, to be counted at UndatedAt as direct clicks of unknown
// clients.
type importedClicks struct {
	LinkID    string
	Clicks    []link.Click
	Undated   int64
	UndatedAt time.Time
}

// ImportLinks stores a batch of imported links in one transaction (see
// link.ImportService). A dry run does the same work in a transaction it
// rolls back, so it reports exactly what the batch would do. A link's
// domain that is not a verified domain of the workspace is dropped (the
// link goes to the primary host, said in its Reason). The links' and
// clicks' earliest time lowers the workspace's data_since when it is
// before the workspace's creation. Imported links and clicks write no
// events.
func (s *ImportService) ImportLinks(ctx context.Context, workspaceID string, b *link.ImportBatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	db := s.links.db
	if !db.validID(link.PrefixWorkspace, workspaceID) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	for i := range b.Items {
		b.Items[i].Link = normalizedInput(&b.Items[i].Link)
	}
	now := dbTime(db.now())
	results := make([]link.ImportItem, len(b.Items))
	var claimed []*link.ImportItem
	write := func(tx pgx.Tx) error {
		claimed = claimed[:0]
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		// Two runs of one source into the workspace at once take turns,
		// so the second finds what the first imported: its lock is taken
		// before the aliases', as no other writer takes it.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, importLockClass, workspaceID+"\n"+b.Source); err != nil {
			return fmt.Errorf("lock import: %w", err)
		}
		var keys []string
		for i := range b.Items {
			if l := &b.Items[i].Link; l.Alias != "" {
				keys = append(keys, aliasLockKey(l.Domain, l.Alias), aliasLockKey("", l.Alias))
			}
		}
		if err := lockAliases(ctx, tx, keys...); err != nil {
			return err
		}
		im := importTx{s: s.links, tx: tx, wsID: workspaceID, source: b.Source, now: now, claimed: b.Claimed}
		for i := range b.Items {
			results[i] = b.Items[i]
			if err := im.importItem(ctx, &results[i]); err != nil {
				return err
			}
			if results[i].Status == link.ImportImported {
				claimed = append(claimed, &results[i])
			}
		}
		if err := db.writeImportedClicks(ctx, tx, workspaceID, im.clicks); err != nil {
			return err
		}
		if err := lowerDataSince(ctx, tx, workspaceID, im.earliest); err != nil {
			return err
		}
		if b.DryRun {
			return errDryRun
		}
		return nil
	}
	var err error
	if b.DryRun {
		// Not db.tx: the rollback is no failed write.
		if err = pgx.BeginFunc(ctx, db.pool, write); errors.Is(err, errDryRun) {
			err = nil
		}
	} else {
		err = db.tx(ctx, write)
	}
	if err != nil {
		return fmt.Errorf("import links: %w", err)
	}
	copy(b.Items, results)
	if !b.DryRun {
		db.linksAdded(len(claimed))
	}
	if b.DryRun && b.Claimed != nil {
		for _, it := range claimed {
			b.Claimed.Add(it.Link.Domain, "/", it.Alias)
		}
	}
	return nil
}

// importTx is one batch's transaction.
type importTx struct {
	s       *LinkService
	tx      pgx.Tx
	wsID    string
	source  string
	now     time.Time
	claimed *link.NameSet
	// clicks are the imported links' clicks, written at the end.
	clicks []importedClicks
	// earliest is the earliest time of the links and clicks imported.
	earliest time.Time
}

// seen lowers earliest to t.
func (im *importTx) seen(t time.Time) {
	if im.earliest.IsZero() || t.Before(im.earliest) {
		im.earliest = t
	}
}

// lowerDataSince sets the workspace's data_since to t when t is before
// both its creation and its data_since, so that range=all covers what an
// import dated before the workspace was made.
func lowerDataSince(ctx context.Context, tx pgx.Tx, wsID string, t time.Time) error {
	if t.IsZero() {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE workspaces SET data_since = $2
		WHERE id = $1 AND $2 < created_at AND (data_since IS NULL OR $2 < data_since)`, wsID, dbTime(t))
	if err != nil {
		return fmt.Errorf("lower data since: %w", err)
	}
	return nil
}

// remember notes that the item's source key is link id.
func (im *importTx) remember(ctx context.Context, key, id string) error {
	_, err := im.tx.Exec(ctx, `INSERT INTO imports (workspace_id, source, source_key, link_id) VALUES ($1, $2, $3, $4)`,
		im.wsID, im.source, key, id)
	if err != nil {
		return fmt.Errorf("remember imported link: %w", err)
	}
	return nil
}

// importItem creates one item's link (or finds why not) and gathers its
// clicks.
func (im *importTx) importItem(ctx context.Context, it *link.ImportItem) error {
	var before string
	var alias *string
	err := im.tx.QueryRow(ctx, `SELECT i.link_id, l.alias FROM imports i LEFT JOIN links l ON l.id = i.link_id
		WHERE i.workspace_id = $1 AND i.source = $2 AND i.source_key = $3`, im.wsID, im.source, it.Key).Scan(&before, &alias)
	switch {
	case err == nil:
		it.Status, it.Reason, it.LinkID = link.ImportExists, "imported before", before
		if alias != nil {
			it.Alias = *alias
		}
		return nil
	case !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("imported before: %w", err)
	}
	in := it.Link
	in.WorkspaceID = im.wsID
	created := im.now
	if !in.CreatedAt.IsZero() && in.CreatedAt.Before(im.now) {
		created = dbTime(in.CreatedAt) // never after the import
	}
	if in.Domain != "" {
		if err := domainForLink(ctx, im.tx, im.wsID, in.Domain); link.ErrorCode(err) == link.EINVALID {
			it.Reason = "domain " + in.Domain + " is not a verified domain of this workspace: the link is on the primary host"
			in.Domain = ""
		} else if err != nil {
			return err
		}
	}
	if in.Alias != "" {
		done, err := im.pickAlias(ctx, it, &in)
		if done || err != nil {
			return err
		}
	}
	l, err := im.s.addLink(ctx, im.tx, im.wsID, &in, im.now)
	if code := link.ErrorCode(err); code == link.ECONFLICT || code == link.EINVALID {
		it.Status, it.Reason = link.ImportSkipped, link.ErrorMessage(err)
		return nil
	} else if err != nil {
		return err
	}
	if !created.Equal(l.CreatedAt) {
		if _, err := im.tx.Exec(ctx, `UPDATE links SET created_at = $2 WHERE id = $1`, l.ID, created); err != nil {
			return fmt.Errorf("date imported link: %w", err)
		}
	}
	if err := im.remember(ctx, it.Key, l.ID); err != nil {
		return err
	}
	it.Status, it.LinkID, it.Alias = link.ImportImported, l.ID, l.Alias
	it.Link.Domain = l.Domain
	im.seen(created)
	ic := importedClicks{LinkID: l.ID}
	for i := range it.Clicks {
		c := it.Clicks[i]
		c.WorkspaceID, c.LinkID, c.CampaignID, c.Variant = im.wsID, l.ID, "", 0
		if c.Time.Unix() < 0 || !c.Time.Before(maxClickTime) || c.Time.After(im.now) {
			// A time out of range, or after the import, which no range
			// of analytics reads (the importer counts those undated):
			// counted nowhere.
			continue
		}
		im.seen(c.Time)
		ic.Clicks = append(ic.Clicks, c)
	}
	if it.Undated > 0 {
		// Counted at the hour of UndatedAt (never after the import).
		at := it.UndatedAt
		if at.After(im.now) {
			at = im.now
		}
		if at.Unix() >= 0 {
			ic.Undated, ic.UndatedAt = it.Undated, at
			im.seen(at)
		}
	}
	if len(ic.Clicks) > 0 || ic.Undated > 0 {
		im.clicks = append(im.clicks, ic)
	}
	return nil
}

// pickAlias decides the alias of an item whose source names one: kept
// when free, else renamed (Rename) or the item skipped. done says the
// item is decided (skipped, or found made by hand before).
func (im *importTx) pickAlias(ctx context.Context, it *link.ImportItem, in *link.Link) (done bool, err error) {
	free, err := im.aliasFree(ctx, in.Domain, in.Alias)
	if free || err != nil {
		return false, err
	}
	var id, wsID, dest string
	err = im.tx.QueryRow(ctx, `SELECT id, workspace_id, destination_url FROM links WHERE domain = $1 AND alias = $2`,
		in.Domain, in.Alias).Scan(&id, &wsID, &dest)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return true, fmt.Errorf("alias link: %w", err)
	}
	if err == nil && wsID == im.wsID && dest == in.DestinationURL {
		// The same link, made here by hand or by another tool: remember
		// it, add nothing.
		if err := im.remember(ctx, it.Key, id); err != nil {
			return true, err
		}
		it.Status, it.Reason = link.ImportExists, "alias already leads to the same URL"
		it.LinkID, it.Alias = id, in.Alias
		return true, nil
	}
	if !it.Rename {
		it.Status, it.Reason = link.ImportSkipped, fmt.Sprintf("alias %q is already taken", in.Alias)
		return true, nil
	}
	for n := 2; n <= maxRenames; n++ {
		suffix := "-" + strconv.Itoa(n)
		base := in.Alias
		if len(base)+len(suffix) > link.MaxAliasLength {
			base = base[:link.MaxAliasLength-len(suffix)]
		}
		alias := base + suffix
		if err := lockAliases(ctx, im.tx, aliasLockKey(in.Domain, alias)); err != nil {
			return true, err
		}
		free, err := im.aliasFree(ctx, in.Domain, alias)
		if err != nil {
			return true, err
		}
		if free {
			it.Reason = fmt.Sprintf("alias %q is taken: renamed to %q", in.Alias, alias)
			in.Alias = alias
			return false, nil
		}
	}
	it.Status, it.Reason = link.ImportSkipped, fmt.Sprintf("alias %q and %d renamings of it are taken", in.Alias, maxRenames-1)
	return true, nil
}

// aliasFree reports whether alias can be taken on domain by the
// workspace: no link has it, no other workspace holds it, and no earlier
// batch of a dry run claimed it. The caller holds the alias's lock.
func (im *importTx) aliasFree(ctx context.Context, domain, alias string) (bool, error) {
	if im.claimed != nil && im.claimed.Has(domain, "/", alias) {
		return false, nil
	}
	var used bool
	err := im.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM links WHERE domain = $1 AND alias = $2)
		OR EXISTS (SELECT 1 FROM link_alias_holds WHERE domain = $1 AND alias = $2 AND workspace_id <> $3 AND until > $4)`,
		domain, alias, im.wsID, im.now).Scan(&used)
	if err != nil {
		return false, fmt.Errorf("alias free: %w", err)
	}
	return !used, nil
}
