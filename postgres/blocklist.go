package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// BlocklistService keeps the destination blocklist entries added through
// the admin API in the blocklist table.
type BlocklistService struct{ db *DB }

var (
	_ link.BlocklistService = (*BlocklistService)(nil)
	_ link.BlocklistChanges = (*BlocklistService)(nil)
)

// BlocklistVersion moves when the entries may have changed: a change made
// here or heard of (the "b" notification), the listener connecting again
// (changes may have gone unheard), every minute (a change made past
// linkbolt, or through a proxy that drops notifications, as links are
// read again) and, while it does not listen, every second.
func (s *BlocklistService) BlocklistVersion() uint64 {
	s.db.listening()
	v := s.db.blocklistVersion.Load()
	period := int64(redirectCacheTTLListening)
	if !s.db.links.listening.Load() {
		period = int64(redirectCacheTTL)
	}
	return v + uint64(s.db.now().UnixNano()/period)<<32
}

// ListBlockEntries returns every stored entry, in entry order (bytes, as
// the column's collation "C" orders them).
func (s *BlocklistService) ListBlockEntries(ctx context.Context) ([]*link.BlockEntry, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT entry, created_at, created_by FROM blocklist ORDER BY entry`)
	if err != nil {
		return nil, fmt.Errorf("blocklist: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.BlockEntry, error) {
		var e link.BlockEntry
		err := r.Scan(&e.Entry, &e.CreatedAt, &e.CreatedBy)
		e.CreatedAt = e.CreatedAt.UTC()
		return &e, err
	})
	if err != nil {
		return nil, fmt.Errorf("blocklist: %w", err)
	}
	return out, nil
}

// AddBlockEntry stores an entry and sets its CreatedAt. ECONFLICT when it
// is stored already.
func (s *BlocklistService) AddBlockEntry(ctx context.Context, e *link.BlockEntry) error {
	now := s.db.now().UTC()
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO blocklist (entry, created_at, created_by) VALUES ($1, $2, $3) ON CONFLICT (entry) DO NOTHING`,
			e.Entry, now, e.CreatedBy)
		if err != nil {
			return fmt.Errorf("add blocklist entry: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return link.Errorf(link.ECONFLICT, "%q is on the blocklist already", e.Entry)
		}
		return s.db.notifyCache(ctx, tx, "b")
	})
	s.db.blocklistVersion.Add(1)
	if err == nil {
		e.CreatedAt = now
	}
	return err
}

// DeleteBlockEntry removes a stored entry. ENOTFOUND.
func (s *BlocklistService) DeleteBlockEntry(ctx context.Context, entry string) error {
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM blocklist WHERE entry = $1`, entry)
		if err != nil {
			return fmt.Errorf("delete blocklist entry: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return link.Errorf(link.ENOTFOUND, "%q is not an entry added through the API", entry)
		}
		return s.db.notifyCache(ctx, tx, "b")
	})
	s.db.blocklistVersion.Add(1)
	return err
}
