package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/linkbolt/linkbolt/link"
)

// clickNanos is t in Unix nanoseconds, clamped to the range clicks are
// kept in.
func clickNanos(t time.Time) int64 {
	if t.Unix() < 0 {
		return 0
	}
	if !t.Before(maxClickTime) {
		return maxClickTime.UnixNano()
	}
	return t.UnixNano()
}

// ExportClicks calls fn for each raw click of the workspace in [start,
// end), oldest first. Each chunk is read by one statement and handed to fn
// outside any transaction. It stops at fn's first error and returns it.
// ENOTFOUND for an unknown workspace.
func (s *ClickService) ExportClicks(ctx context.Context, workspaceID string, start, end time.Time, fn func(*link.Click) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	if err := s.db.view(ctx, func(tx pgx.Tx) error { return workspaceExists(ctx, tx, workspaceID) }); err != nil {
		return err
	}
	at, id, to := clickNanos(start), int64(0), clickNanos(end)
	chunk := make([]link.Click, 0, clickChunk)
	for {
		rows, err := s.db.pool.Query(ctx, `SELECT id, link_id, campaign_id, at_ns, referrer, country, device, browser, os, bot, visitor, variant
			FROM clicks WHERE workspace_id = $1 AND (at_ns, id) > ($2, $3) AND at_ns < $4
			ORDER BY at_ns, id LIMIT $5`, workspaceID, at, id, to, clickChunk)
		if err != nil {
			return fmt.Errorf("export clicks: %w", err)
		}
		chunk = chunk[:0]
		var c link.Click
		var ns, visitor int64
		var variant int16
		if _, err := pgx.ForEachRow(rows, []any{&id, &c.LinkID, &c.CampaignID, &ns, &c.Referrer, &c.Country, &c.Device, &c.Browser, &c.OS, &c.Bot, &visitor, &variant}, func() error {
			c.WorkspaceID, c.Time, c.Visitor, c.Variant = workspaceID, time.Unix(0, ns).UTC(), uint64(visitor), uint8(variant)
			at = ns
			chunk = append(chunk, c)
			return nil
		}); err != nil {
			return fmt.Errorf("export clicks: %w", err)
		}
		for i := range chunk {
			if err := fn(&chunk[i]); err != nil {
				return err
			}
		}
		if len(chunk) < clickChunk {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

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
	n, err := s.deleteChunks(ctx, `DELETE FROM click_hours WHERE ctid IN (
		SELECT ctid FROM click_hours WHERE link_id IS NOT NULL AND hour < $1 LIMIT $2)`, day*24)
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
