package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/linkbolt/linkbolt/link"
)

// errDrawnCodeTaken fails a transaction whose drawn code was taken
// between its check and its insert: CreateLink runs it again.
var errDrawnCodeTaken = link.Errorf(link.ECONFLICT, "the drawn code was taken meanwhile")

// createLink stores the new link in of workspace in.WorkspaceID at now in
// tx, as CreateLink's transaction did statement by statement, in three
// round trips: the reads that decide it (the workspace, the alias's lock
// and hold or a drawn code's use, the domain, the campaign, an ID, the
// webhooks subscribed to link.created) go in one batch, then the insert,
// then the event. handled is false for a link that needs addLink's way: a
// drawn code found taken (addLink draws again). ENOTFOUND for an unknown
// workspace; EINVALID, ECONFLICT as addLink.
func (s *LinkService) createLink(ctx context.Context, tx pgx.Tx, in *link.Link, now time.Time) (l *link.Link, handled bool, err error) {
	wsID := in.WorkspaceID
	b := &pgx.Batch{}
	b.Queue(`SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = $1)`, wsID)
	code := in.Alias
	if in.Alias != "" {
		b.Queue(lockAliasesQuery, aliasLockClass, []string{aliasLockKey(in.Domain, in.Alias)})
	} else {
		for code == "" || link.IsReserved(code) {
			code = newCode()
		}
	}
	if in.Domain != "" {
		b.Queue(domainForLinkQuery, in.Domain, wsID)
	}
	campaign := in.CampaignID != "" && s.db.validID(link.PrefixCampaign, in.CampaignID)
	if campaign {
		b.Queue(campaignForLinkQuery, in.CampaignID, wsID)
	}
	if in.Alias != "" {
		b.Queue(holdQuery, in.Domain, in.Alias)
	} else {
		b.Queue(codeUsedQuery, in.Domain, code, now)
	}
	if in.ExternalID != "" {
		b.Queue(`SELECT coalesce((SELECT id FROM links WHERE workspace_id = $1 AND external_id = $2), '')`, wsID, in.ExternalID)
	}
	b.Queue(`SELECT nextval('ids_lnk')`)
	subscribers := s.db.events != nil
	if subscribers {
		b.Queue(subscribersQuery, wsID, link.EventLinkCreated, link.WebhookCreatorRemoved)
	}

	br := tx.SendBatch(ctx, b)
	var refused error // the first reason the link is refused, in addLink's order
	refuse := func(e error) {
		if refused == nil {
			refused = e
		}
	}
	var wsOK, domainOK, campaignOK, used bool
	var holder string
	var until time.Time
	var seq int64
	err = br.QueryRow().Scan(&wsOK)
	if err == nil && !wsOK {
		refuse(link.Errorf(link.ENOTFOUND, "workspace %q not found", wsID))
	}
	if err == nil && in.Alias != "" {
		_, err = br.Exec()
	}
	if err == nil && in.Domain != "" {
		if err = br.QueryRow().Scan(&domainOK); err == nil && !domainOK {
			refuse(domainForLinkError(in.Domain))
		}
	}
	if err == nil && in.CampaignID != "" {
		if campaign {
			err = br.QueryRow().Scan(&campaignOK)
		}
		if err == nil && !campaignOK {
			refuse(campaignForLinkError(in.CampaignID))
		}
	}
	held := false
	if err == nil && in.Alias != "" {
		err = br.QueryRow().Scan(&holder, &until)
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
		} else if err == nil {
			held = true
			if heldForOther(holder, wsID, until, now) {
				refuse(takenError(in.Alias))
			}
		}
	} else if err == nil {
		err = br.QueryRow().Scan(&used)
	}
	if err == nil && in.ExternalID != "" {
		var by string
		if err = br.QueryRow().Scan(&by); err == nil && by != "" {
			refuse(externalTakenError(in.ExternalID, by))
		}
	}
	if err == nil {
		err = br.QueryRow().Scan(&seq)
	}
	if err == nil && subscribers {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			_, err = collectSubscribers(tx, wsID, link.EventLinkCreated, rows)
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, true, fmt.Errorf("create link: %w", err)
	}
	if refused != nil {
		return nil, true, refused
	}
	if used {
		return nil, false, nil
	}
	if held {
		if _, err := tx.Exec(ctx, releaseHold, in.Domain, in.Alias); err != nil {
			return nil, true, fmt.Errorf("release alias hold: %w", err)
		}
	}
	c := *in
	c.Alias, c.Clicks, c.CreatedAt, c.UpdatedAt = code, 0, now, now
	if c.ExpiresAt != nil {
		t := dbTime(*c.ExpiresAt)
		c.ExpiresAt = &t
	}
	c.ID = s.db.ids.FormatID(link.PrefixLink, uint64(seq))
	if w, last := tx.(*writeTx); last {
		// The insert goes out with the commit: an alias or code taken
		// meanwhile makes it fail, and the transaction with it.
		args, err := linkInsertArgs(&c, seq)
		if err != nil {
			return nil, true, err
		}
		err = w.execAtCommit(ctx, func(err error) error {
			switch {
			case isUnique(err, "links_external_key"):
				return externalTakenError(in.ExternalID, "")
			case !isUnique(err, "links_alias_key"):
				return fmt.Errorf("insert link: %w", err)
			case in.Alias != "":
				return takenError(in.Alias)
			}
			return errDrawnCodeTaken
		}, insertLinkQuery, args...)
		return &c, true, err
	}
	ok, err := s.insertLink(ctx, tx, &c, seq)
	switch {
	case err != nil:
		return nil, true, err
	case !ok && in.Alias != "":
		return nil, true, takenError(in.Alias)
	case !ok:
		return nil, false, nil // a code taken meanwhile
	}
	return &c, true, nil
}
