package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// CampaignService keeps campaigns in PostgreSQL, and lists the outbox's
// events. Creating, updating and deleting a campaign writes its
// campaign.updated event in its transaction (appendEvent).
type CampaignService struct{ db *DB }

var _ link.CampaignService = (*CampaignService)(nil)

// campaignColumns are the columns scanCampaign reads, in its order.
const campaignColumns = `id, workspace_id, name, status, utm_source, utm_medium, utm_campaign, created_at, updated_at`

// scanCampaign reads a row of campaignColumns.
func scanCampaign(row pgx.Row) (*link.Campaign, error) {
	var c link.Campaign
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.Status, &c.UTMSource, &c.UTMMedium, &c.UTMCampaign,
		&c.CreatedAt, &c.UpdatedAt); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return &c, nil
}

// findCampaign returns a campaign of the workspace read in tx, with lock
// appended to the query ("" for none), without its links counted.
// ENOTFOUND.
func findCampaign(ctx context.Context, tx pgx.Tx, wsID, id, lock string) (*link.Campaign, error) {
	c, err := scanCampaign(tx.QueryRow(ctx, `SELECT `+campaignColumns+` FROM campaigns WHERE id = $1 AND workspace_id = $2 `+lock, id, wsID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "campaign %q not found", id)
	} else if err != nil {
		return nil, fmt.Errorf("campaign %s: %w", id, err)
	}
	return c, nil
}

// emitCampaign writes the campaign.updated event of a change of c,
// created at c.UpdatedAt.
func (db *DB) emitCampaign(ctx context.Context, tx pgx.Tx, c *link.Campaign, changes map[string][2]string) error {
	return db.appendEvent(ctx, tx, c.WorkspaceID, link.EventCampaignUpdated, c.UpdatedAt, func() ([]byte, error) {
		return db.events.CampaignData(c, changes)
	})
}

// CreateCampaign stores a validated campaign and sets its ID (and
// CreatedAt, UpdatedAt when zero); its creation is the change from
// nothing to the campaign, a campaign.updated event. ENOTFOUND for an
// unknown workspace.
func (s *CampaignService) CreateCampaign(ctx context.Context, c *link.Campaign) error {
	if !s.db.validID(link.PrefixWorkspace, c.WorkspaceID) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", c.WorkspaceID)
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.db.now()
	}
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	var id string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findWorkspace(ctx, tx, c.WorkspaceID, false); err != nil {
			return err
		}
		var seq int64
		var err error
		if id, seq, err = s.db.newID(ctx, tx, link.PrefixCampaign); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO campaigns (id, seq, workspace_id, name, status, utm_source, utm_medium, utm_campaign, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			id, seq, c.WorkspaceID, c.Name, c.Status, c.UTMSource, c.UTMMedium, c.UTMCampaign, c.CreatedAt.UTC(), c.UpdatedAt.UTC()); err != nil {
			return fmt.Errorf("insert campaign: %w", err)
		}
		created := *c
		created.ID, created.Links = id, 0
		created.CreatedAt, created.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
		return s.db.emitCampaign(ctx, tx, &created, created.Changes(&link.Campaign{}))
	})
	if err != nil {
		return err
	}
	c.ID = id
	return nil
}

// FindCampaignByID returns a campaign of the workspace with its number of
// links. ENOTFOUND.
func (s *CampaignService) FindCampaignByID(ctx context.Context, workspaceID, id string) (*link.Campaign, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixCampaign, id) {
		return nil, link.Errorf(link.ENOTFOUND, "campaign %q not found", id)
	}
	var out *link.Campaign
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		c, err := findCampaign(ctx, tx, workspaceID, id, "")
		if err != nil {
			return err
		}
		if err := countCampaignLinks(ctx, tx, workspaceID, []*link.Campaign{c}); err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}

// FindCampaigns returns the workspace's campaigns, newest first, with
// their numbers of links. ENOTFOUND for a malformed workspace ID.
func (s *CampaignService) FindCampaigns(ctx context.Context, workspaceID string) ([]*link.Campaign, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.Campaign{}
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+campaignColumns+` FROM campaigns WHERE workspace_id = $1 ORDER BY seq DESC`, workspaceID)
		if err != nil {
			return fmt.Errorf("campaigns: %w", err)
		}
		cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Campaign, error) { return scanCampaign(r) })
		if err != nil {
			return fmt.Errorf("campaigns: %w", err)
		}
		if err := countCampaignLinks(ctx, tx, workspaceID, cs); err != nil {
			return err
		}
		out = append(out, cs...)
		return nil
	})
	return out, err
}

// UpdateCampaign applies an update, validates the result and, when a field
// changed, stores it and writes its campaign.updated event in the same
// transaction. ENOTFOUND, EINVALID.
func (s *CampaignService) UpdateCampaign(ctx context.Context, workspaceID, id string, upd link.CampaignUpdate) (*link.Campaign, error) {
	defer s.db.linksAllChanged()
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixCampaign, id) {
		return nil, link.Errorf(link.ENOTFOUND, "campaign %q not found", id)
	}
	now := s.db.now().UTC()
	var out *link.Campaign
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		before, err := findCampaign(ctx, tx, workspaceID, id, "FOR NO KEY UPDATE")
		if err != nil {
			return err
		}
		if err := s.db.notifyCache(ctx, tx, "L"); err != nil {
			return err
		}
		if err := countCampaignLinks(ctx, tx, workspaceID, []*link.Campaign{before}); err != nil {
			return err
		}
		after := *before
		upd.Apply(&after)
		if err := after.Validate(); err != nil {
			return err
		}
		changes := after.Changes(before)
		if len(changes) == 0 {
			out = before
			return nil
		}
		after.UpdatedAt = now
		if _, err := tx.Exec(ctx, `UPDATE campaigns SET name = $2, status = $3, utm_source = $4, utm_medium = $5, utm_campaign = $6,
			updated_at = $7 WHERE id = $1`, id, after.Name, after.Status, after.UTMSource, after.UTMMedium, after.UTMCampaign, now); err != nil {
			return fmt.Errorf("update campaign: %w", err)
		}
		if err := s.db.emitCampaign(ctx, tx, &after, changes); err != nil {
			return err
		}
		out = &after
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteCampaign deletes a campaign. ECONFLICT when it still has links,
// unless detach, which first takes every link out of it (each link's
// link.updated event written in the same transaction). Its deletion is
// the change of its status to "deleted", a campaign.updated event.
// ENOTFOUND.
func (s *CampaignService) DeleteCampaign(ctx context.Context, workspaceID, id string, detach bool) error {
	defer s.db.linksAllChanged()
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixCampaign, id) {
		return link.Errorf(link.ENOTFOUND, "campaign %q not found", id)
	}
	now := s.db.now().UTC()
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		c, err := findCampaign(ctx, tx, workspaceID, id, "FOR UPDATE")
		if err != nil {
			return err
		}
		if err := s.db.notifyCache(ctx, tx, "L"); err != nil {
			return err
		}
		if err := countCampaignLinks(ctx, tx, workspaceID, []*link.Campaign{c}); err != nil {
			return err
		}
		if c.Links > 0 && !detach {
			return link.CampaignHasLinksError(id, c.Links)
		}
		if c.Links > 0 {
			if err := s.db.detachCampaignLinks(ctx, tx, workspaceID, id, now); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM campaigns WHERE id = $1`, id); err != nil {
			return fmt.Errorf("delete campaign: %w", err)
		}
		gone := *c
		gone.Links, gone.UpdatedAt = 0, now
		changes := map[string][2]string{"status": {string(gone.Status), "deleted"}}
		gone.Status = "deleted"
		return s.db.emitCampaign(ctx, tx, &gone, changes)
	})
}

// FindEvents returns the workspace's events after the event id after (""
// for the first), oldest first, at most limit (0 means 100). ENOTFOUND
// for a malformed workspace ID, EINVALIDREQUEST for a malformed after.
func (s *CampaignService) FindEvents(ctx context.Context, workspaceID, after string, limit int) ([]*link.Event, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	if limit <= 0 {
		limit = 100
	}
	var from int64
	if after != "" {
		seq, ok := s.db.ids.ParseID(link.PrefixEvent, after)
		if !ok {
			return nil, link.Errorf(link.EINVALIDREQUEST, "after: %q is not an event id", after)
		}
		if seq >= math.MaxInt64 {
			return []*link.Event{}, nil
		}
		from = int64(seq)
	}
	rows, err := s.db.pool.Query(ctx, `SELECT id, type, workspace_id, created_at, data FROM events
		WHERE workspace_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, workspaceID, from, limit)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Event, error) {
		var ev link.Event
		err := r.Scan(&ev.ID, &ev.Type, &ev.WorkspaceID, &ev.CreatedAt, &ev.Data)
		ev.CreatedAt = ev.CreatedAt.UTC()
		return &ev, err
	})
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	if out == nil {
		out = []*link.Event{}
	}
	return out, nil
}
