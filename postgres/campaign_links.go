package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// The campaign service reads and changes the links of its campaigns,
// which the link service keeps: these two functions are where they meet,
// through links_campaign.

// countCampaignLinks sets the Links of each of cs, campaigns of workspace
// wsID, read in tx: the number of links in each.
func countCampaignLinks(ctx context.Context, tx pgx.Tx, wsID string, cs []*link.Campaign) error {
	ids := make([]string, len(cs))
	for i, c := range cs {
		c.Links = 0
		ids[i] = c.ID
	}
	if len(cs) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT campaign_id, count(*) FROM links
		WHERE campaign_id = ANY ($1::text[]) AND workspace_id = $2 GROUP BY campaign_id`, ids, wsID)
	if err != nil {
		return fmt.Errorf("count campaign links: %w", err)
	}
	n := map[string]int{}
	var id string
	var count int
	if _, err := pgx.ForEachRow(rows, []any{&id, &count}, func() error { n[id] = count; return nil }); err != nil {
		return fmt.Errorf("count campaign links: %w", err)
	}
	for _, c := range cs {
		c.Links = n[c.ID]
	}
	return nil
}

// detachCampaignLinks takes every link of campaign cmpID of workspace
// wsID out of it in tx, their UpdatedAt set to at, and writes each one's
// link.updated event (appendEvent, the link as the API shows it after the
// change, clicks counted).
func (db *DB) detachCampaignLinks(ctx context.Context, tx pgx.Tx, wsID, cmpID string, at time.Time) error {
	rows, err := tx.Query(ctx, `WITH u AS (UPDATE links l SET campaign_id = '', updated_at = $3
		WHERE l.campaign_id = $2 AND l.workspace_id = $1 RETURNING `+linkColumns+`, l.seq AS s)
		SELECT * FROM u ORDER BY s`, wsID, cmpID, at)
	if err != nil {
		return fmt.Errorf("detach campaign links: %w", err)
	}
	var seq int64
	links, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Link, error) { return scanLink(r, &seq) })
	if err != nil {
		return fmt.Errorf("detach campaign links: %w", err)
	}
	for _, l := range links {
		if err := db.appendEvent(ctx, tx, wsID, link.EventLinkUpdated, at, func() ([]byte, error) { return db.events.LinkData(l) }); err != nil {
			return err
		}
	}
	return nil
}
