package storage

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// FindLinkByID returns a link of the workspace. ENOTFOUND, also for a link
// of another workspace.
func (s *LinkService) FindLinkByID(ctx context.Context, workspaceID, id string) (*link.Link, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	lid, ok2 := s.db.ids.parseID(prefixLink, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	var l *link.Link
	err := s.db.db.View(func(tx *bolt.Tx) error {
		rec, err := findLink(tx, wid, lid)
		if err != nil {
			return err
		}
		l, err = linkWithClicks(tx, lid, rec)
		return err
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// FindLinkByAlias returns the link for a redirect, from the redirect cache
// or one short read transaction. Its UTM fields are the ones a redirect
// uses: the link's own, or its campaign's where it has none. Its Clicks is
// not filled in, and the link is shared with other redirects: callers must
// not modify it.
// ENOTFOUND.
func (s *LinkService) FindLinkByAlias(ctx context.Context, domain, alias string) (*link.Link, error) {
	domain = strings.ToLower(domain)
	key := string(aliasKey(domain, alias))
	cache := &s.db.aliases
	if l, ok := cache.get(key); ok {
		return l, nil
	}
	gen := cache.generation()
	var l *link.Link
	err := s.db.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketLinksAlias).Get([]byte(key))
		if v == nil {
			return link.Errorf(link.ENOTFOUND, "no link %q", alias)
		}
		lid := btoi(v)
		rec, err := findLink(tx, 0, lid)
		if err != nil {
			return fmt.Errorf("alias index: %w", err)
		}
		l = rec.link(s.db.ids, lid, 0)
		// A redirect uses the campaign's UTM values where the link has none.
		if cid, ok := s.db.ids.parseID(prefixCampaign, rec.CampaignID); ok {
			if c, err := findCampaign(tx, rec.Workspace, cid); err == nil {
				l.UTMSource = cmp.Or(l.UTMSource, c.UTMSource)
				l.UTMMedium = cmp.Or(l.UTMMedium, c.UTMMedium)
				l.UTMCampaign = cmp.Or(l.UTMCampaign, c.UTMCampaign)
			} else if link.ErrorCode(err) != link.ENOTFOUND {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cache.put(key, l, gen)
	return l, nil
}
