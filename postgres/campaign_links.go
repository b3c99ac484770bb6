package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// The campaign service reads and changes the links of its campaigns,
// which the link service keeps: these two functions are where they meet.
//
// Until the link service's table exists they count and detach nothing
// (every campaign reads as empty): the store is not offered as
// storage.postgres_url before every conformance group passes on it (see
// conformance_test.go), and Campaigns/CreateFindList and Campaigns/Delete
// wait for them.

// countCampaignLinks sets the Links of each of cs, campaigns of workspace
// wsID, read in tx: the number of links in each.
func countCampaignLinks(ctx context.Context, tx pgx.Tx, wsID string, cs []*link.Campaign) error {
	for _, c := range cs {
		c.Links = 0
	}
	return nil
}

// detachCampaignLinks takes every link of campaign cmpID of workspace
// wsID out of it in tx, their UpdatedAt set to at, and writes each one's
// link.updated event (appendEvent, the link as the API shows it after the
// change, clicks counted).
func (db *DB) detachCampaignLinks(ctx context.Context, tx pgx.Tx, wsID, cmpID string, at time.Time) error {
	return nil
}
