package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// PruneClicks deletes the raw clicks before before, clickChunk at a time
// so that clicks keep being recorded meanwhile; the visitor records of UTC
// days more than two days before today and the salts of days before
// yesterday. Aggregates, visitor counts included, are kept. It returns
// the number of raw clicks deleted, also when it stops early on an error.
func (s *ClickService) PruneClicks(ctx context.Context, before time.Time) (int, error) {
	deleted, err := s.deleteChunks(ctx, `DELETE FROM clicks WHERE id IN (
		SELECT id FROM clicks WHERE at_ns < $1 ORDER BY at_ns LIMIT $2)`, clickNanos(before))
	if err != nil {
		return deleted, fmt.Errorf("prune clicks: %w", err)
	}
	today := int32(max(s.db.now().Unix(), 0) / 86400)
	if _, err := s.deleteChunks(ctx, `DELETE FROM click_visitors WHERE ctid IN (
		SELECT ctid FROM click_visitors WHERE day < $1 LIMIT $2)`, today-min(today, 2)); err != nil {
		return deleted, fmt.Errorf("prune visitor records: %w", err)
	}
	if err := s.db.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM click_salts WHERE day < $1`, today-min(today, 1))
		return err
	}); err != nil {
		return deleted, fmt.Errorf("prune salts: %w", err)
	}
	return deleted, nil
}

// RollUpLinkHours deletes the link scopes' hourly aggregates of the UTC
// days before the day of before, clickChunk rows at a time, and returns
// how many it deleted.
func (s *ClickService) RollUpLinkHours(ctx context.Context, before time.Time) (int, error) {
	day := hourOf(before, false) / 24
	n, err := s.deleteChunks(ctx, `DELETE FROM click_hour_sums WHERE ctid IN (
		SELECT ctid FROM click_hour_sums WHERE link_id IS NOT NULL AND hour < $1 LIMIT $2)`, day*24)
	if err != nil {
		return n, fmt.Errorf("roll up link hours: %w", err)
	}
	return n, nil
}

// deleteChunks runs a DELETE of at most $2 rows, given $1, until it
// deletes fewer, each in a transaction of its own.
func (s *ClickService) deleteChunks(ctx context.Context, q string, arg any) (int, error) {
	deleted := 0
	for {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		var n int64
		err := s.db.tx(ctx, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, q, arg, clickChunk)
			n = tag.RowsAffected()
			return err
		})
		if err != nil {
			return deleted, err
		}
		deleted += int(n)
		if n < clickChunk {
			return deleted, nil
		}
	}
}
