package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/linkbolt/linkbolt/link"
)

// RecordSpooled writes clicks replayed from the local click spool spool
// (see internal/clickspool), whose sequence numbers are seqs (increasing,
// one per click), in one transaction that also raises the spool's mark in
// click_spools to the last of seqs. Clicks at or below the mark were
// written by an earlier replay and are skipped: a batch replayed twice is
// counted once. It returns the clicks written now (applied) and, of
// those, the malformed ones skipped (see RecordClicks).
func (s *ClickService) RecordSpooled(ctx context.Context, spool string, seqs []uint64, clicks []link.Click) (applied, skipped int, err error) {
	if len(seqs) != len(clicks) {
		return 0, 0, link.Errorf(link.EINVALID, "%d sequence numbers for %d clicks", len(seqs), len(clicks))
	}
	if len(clicks) == 0 {
		return 0, 0, nil
	}
	if len(clicks) > maxClickBatch {
		return 0, 0, link.Errorf(link.EINVALID, "batch of %d clicks: at most %d", len(clicks), maxClickBatch)
	}
	last := seqs[len(seqs)-1]
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		applied, skipped = 0, 0
		if _, err := tx.Exec(ctx, `INSERT INTO click_spools (id, applied) VALUES ($1, 0) ON CONFLICT (id) DO NOTHING`, spool); err != nil {
			return err
		}
		var mark int64
		if err := tx.QueryRow(ctx, `SELECT applied FROM click_spools WHERE id = $1 FOR UPDATE`, spool).Scan(&mark); err != nil {
			return err
		}
		first := 0
		for first < len(seqs) && seqs[first] <= uint64(mark) {
			first++
		}
		if first == len(seqs) {
			return nil
		}
		batch, sk := s.parseClicks(clicks[first:])
		applied, skipped = len(clicks)-first, sk
		if len(batch) > 0 {
			if err := s.write(ctx, tx, batch); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE click_spools SET applied = greatest(applied, $2), updated_at = now() WHERE id = $1`, spool, int64(last))
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("record spooled clicks: %w", err)
	}
	return applied, skipped, nil
}
