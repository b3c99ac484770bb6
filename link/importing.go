package link

import (
	"context"
	"time"
)

// ImportStatus is what an import did with one link of its source.
type ImportStatus string

// The outcomes of an imported link.
const (
	// ImportImported: the link was created (or, in a dry run, would be).
	ImportImported ImportStatus = "imported"
	// ImportSkipped: the link was left out (its alias taken, its URL bad).
	ImportSkipped ImportStatus = "skipped"
	// ImportFailed: the source could not be read for this link.
	ImportFailed ImportStatus = "failed"
	// ImportExists: an earlier run imported the link already; nothing was
	// added.
	ImportExists ImportStatus = "exists"
)

// ImportItem is one link an import hands to storage: the link to create,
// its dated clicks and its clicks known only as a total. Storage fills in
// Status, Reason and the created link's ID and Alias.
type ImportItem struct {
	// Key identifies the link at its source; with the source's name it is
	// remembered so that the same link is never imported twice.
	Key string
	// Link is the link to create, normalised and validated: WorkspaceID
	// and DestinationURL set, Alias "" for a generated code, CreatedAt
	// zero for the time of the import.
	Link Link
	// Rename asks for a free alias (Alias-2, Alias-3, …) when Alias is
	// taken by another link, instead of skipping the link.
	Rename bool
	// Clicks are the link's dated clicks, classified; storage sets their
	// WorkspaceID and LinkID. Their Visitor is set by the importer.
	Clicks []Click
	// Undated is the number of clicks the source counts without dates;
	// they are counted at UndatedAt, as direct clicks of unknown clients.
	Undated   int64
	UndatedAt time.Time

	// Filled in by ImportLinks.
	Status ImportStatus
	Reason string
	LinkID string
	Alias  string
}

// ImportBatch is one write of an import: a few hundred links at most.
type ImportBatch struct {
	// Source names the shortener ("yourls", "csv", …): with an item's Key,
	// what makes an import idempotent.
	Source string
	// DryRun checks everything and writes nothing.
	DryRun bool
	// Claimed holds the aliases (domain + "/" + alias) that earlier batches
	// of a dry run would have taken, which a dry run's later batches treat
	// as taken; ImportLinks adds its batch's to it. Nil outside dry runs.
	Claimed *NameSet
	Items   []ImportItem
}

// ImportService stores imported links.
type ImportService interface {
	// ImportLinks creates the batch's links in the workspace in one
	// transaction, each with its clicks, and remembers each item's source
	// key, so that an item imported before (by any earlier batch or run)
	// is ImportExists and adds nothing. An item whose alias is taken on its
	// domain is ImportSkipped, or gets a free alias when Rename is set.
	// Imported links and clicks send no webhook events. ENOTFOUND for an
	// unknown workspace.
	ImportLinks(ctx context.Context, workspaceID string, b *ImportBatch) error
}
