package link

import (
	"context"
	"time"
)

// MaxBlockEntryLength bounds a blocklist entry.
const MaxBlockEntryLength = 2048

// BlockEntry is an entry of the destination blocklist added through the
// admin API (entries of the blocklist file are not stored).
type BlockEntry struct {
	// Entry is a host ("example.com": the host and its subdomains) or a
	// pattern (with a path or "*"), in the canonical form the server
	// gives it.
	Entry     string
	CreatedAt time.Time
	// CreatedBy is the ID of the admin who added it.
	CreatedBy string
}

// BlocklistService keeps the blocklist entries added through the admin API.
type BlocklistService interface {
	// ListBlockEntries returns every stored entry, in entry order.
	ListBlockEntries(ctx context.Context) ([]*BlockEntry, error)
	// AddBlockEntry stores an entry; sets CreatedAt. ECONFLICT when the
	// entry is stored already.
	AddBlockEntry(ctx context.Context, e *BlockEntry) error
	// DeleteBlockEntry removes an entry. ENOTFOUND.
	DeleteBlockEntry(ctx context.Context, entry string) error
}

// BlocklistChanges is implemented by a blocklist service whose entries
// other processes change too (PostgreSQL): a server reads the entries
// again when BlocklistVersion moves. It moves after every change made
// anywhere, within the time the store needs to hear of it, and, while the
// store cannot hear of changes, at least every second.
type BlocklistChanges interface {
	BlocklistVersion() uint64
}
