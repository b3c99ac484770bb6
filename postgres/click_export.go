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
