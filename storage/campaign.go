package storage

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// CampaignService keeps campaigns, the index of their links, and the
// outbox of events their changes write.
type CampaignService struct {
	db *DB
	// Events encodes the events that creating, updating and deleting a
	// campaign write in its transaction (campaign.updated, and
	// link.updated for each link a delete takes out of it); nil writes
	// none.
	Events link.EventEncoder
}

// emit writes the campaign.updated event of a change, when events are
// encoded.
func (s *CampaignService) emit(tx *bolt.Tx, wid uint64, c *link.Campaign, changes map[string][2]string) error {
	return appendCampaignEvent(tx, s.Events, wid, c, changes)
}

var _ link.CampaignService = (*CampaignService)(nil)

// NewCampaignService returns the campaign service of db.
func NewCampaignService(db *DB) *CampaignService { return &CampaignService{db: db} }

type campaignRecord struct {
	Workspace   uint64    `json:"ws"`
	Name        string    `json:"name"`
	Status      string    `json:"status"`
	UTMSource   string    `json:"utm_source,omitempty"`
	UTMMedium   string    `json:"utm_medium,omitempty"`
	UTMCampaign string    `json:"utm_campaign,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func (r *campaignRecord) campaign(ids *idCodec, id uint64, links int) *link.Campaign {
	return &link.Campaign{
		ID: ids.formatID(prefixCampaign, id), WorkspaceID: ids.formatID(prefixWorkspace, r.Workspace),
		Name: r.Name, Status: link.CampaignStatus(r.Status),
		UTMSource: r.UTMSource, UTMMedium: r.UTMMedium, UTMCampaign: r.UTMCampaign,
		Links: links, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

func (r *campaignRecord) set(c *link.Campaign) {
	r.Name, r.Status = c.Name, string(c.Status)
	r.UTMSource, r.UTMMedium, r.UTMCampaign = c.UTMSource, c.UTMMedium, c.UTMCampaign
}

// findCampaign returns a campaign record of workspace wid. ENOTFOUND.
func findCampaign(tx *bolt.Tx, wid, cid uint64) (*campaignRecord, error) {
	var rec campaignRecord
	ok, err := getJSON(tx.Bucket(bucketCampaigns), itob(cid), &rec)
	if err != nil {
		return nil, err
	}
	if !ok || rec.Workspace != wid {
		return nil, link.Errorf(link.ENOTFOUND, "campaign %q not found", idsOf(tx).formatID(prefixCampaign, cid))
	}
	return &rec, nil
}

// campaignForLink checks that a link may join the campaign of the wire id:
// one of its own workspace. EINVALID (a field error) otherwise.
func campaignForLink(tx *bolt.Tx, wid uint64, id string) (uint64, error) {
	cid, ok := idsOf(tx).parseID(prefixCampaign, id)
	if ok {
		if _, err := findCampaign(tx, wid, cid); err == nil {
			return cid, nil
		} else if link.ErrorCode(err) != link.ENOTFOUND {
			return 0, err
		}
	}
	return 0, &link.Error{Code: link.EINVALID, Message: fmt.Sprintf("campaign_id: campaign %q not found in this workspace", id),
		Fields: []link.FieldError{{Field: "campaign_id", Message: "not found in this workspace"}}}
}

func campaignLinkKey(wid, cid, lid uint64) []byte { return concat(itob(wid), itob(cid), itob(lid)) }

// countCampaignLinks counts the links of a campaign from its index.
func countCampaignLinks(tx *bolt.Tx, wid, cid uint64) int {
	prefix := concat(itob(wid), itob(cid))
	n := 0
	c := tx.Bucket(bucketLinksCampaign).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	return n
}

// CreateCampaign stores a validated campaign and sets its ID. ENOTFOUND
// for an unknown workspace.
func (s *CampaignService) CreateCampaign(ctx context.Context, c *link.Campaign) error {
	wid, ok := s.db.ids.parseID(prefixWorkspace, c.WorkspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", c.WorkspaceID)
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.db.now()
	}
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	rec := campaignRecord{Workspace: wid, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	rec.set(c)
	var id uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		b := tx.Bucket(bucketCampaigns)
		var err error
		if id, err = nextID(b); err != nil {
			return err
		}
		if err := putJSON(b, itob(id), &rec); err != nil {
			return err
		}
		if err := tx.Bucket(bucketCampaignsWorkspace).Put(concat(itob(wid), itob(id)), []byte{}); err != nil {
			return err
		}
		// Creation is recorded as the change from nothing to the campaign.
		return s.emit(tx, wid, rec.campaign(s.db.ids, id, 0), rec.campaign(s.db.ids, id, 0).Changes(&link.Campaign{}))
	})
	if err != nil {
		return err
	}
	c.ID = s.db.ids.formatID(prefixCampaign, id)
	return nil
}

// FindCampaignByID returns a campaign of the workspace with its number of
// links. ENOTFOUND.
func (s *CampaignService) FindCampaignByID(ctx context.Context, workspaceID, id string) (*link.Campaign, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	cid, ok2 := s.db.ids.parseID(prefixCampaign, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "campaign %q not found", id)
	}
	var out *link.Campaign
	err := s.db.db.View(func(tx *bolt.Tx) error {
		rec, err := findCampaign(tx, wid, cid)
		if err != nil {
			return err
		}
		out = rec.campaign(s.db.ids, cid, countCampaignLinks(tx, wid, cid))
		return nil
	})
	return out, err
}

// FindCampaigns returns the workspace's campaigns, newest first.
func (s *CampaignService) FindCampaigns(ctx context.Context, workspaceID string) ([]*link.Campaign, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.Campaign{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		prefix := itob(wid)
		c := tx.Bucket(bucketCampaignsWorkspace).Cursor()
		for k := lastWithPrefix(c, prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			cid := btoi(k[8:])
			rec, err := findCampaign(tx, wid, cid)
			if err != nil {
				return fmt.Errorf("campaign index: %w", err)
			}
			out = append(out, rec.campaign(s.db.ids, cid, countCampaignLinks(tx, wid, cid)))
		}
		return nil
	})
	return out, err
}

// UpdateCampaign applies an update, validates the result and, when a field
// changed, writes its campaign.updated event in the same transaction. The
// redirect cache is emptied, since the links of the campaign may take new
// UTM values. ENOTFOUND, EINVALID.
func (s *CampaignService) UpdateCampaign(ctx context.Context, workspaceID, id string, upd link.CampaignUpdate) (*link.Campaign, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	cid, ok2 := s.db.ids.parseID(prefixCampaign, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "campaign %q not found", id)
	}
	now := s.db.now()
	var out *link.Campaign
	changed := false
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findCampaign(tx, wid, cid)
		if err != nil {
			return err
		}
		before := rec.campaign(s.db.ids, cid, countCampaignLinks(tx, wid, cid))
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
		changed = true
		after.UpdatedAt = now
		rec.set(&after)
		rec.UpdatedAt = now
		if err := putJSON(tx.Bucket(bucketCampaigns), itob(cid), rec); err != nil {
			return err
		}
		if err := s.emit(tx, wid, &after, changes); err != nil {
			return err
		}
		out = &after
		return nil
	})
	if changed {
		s.db.aliases.clear()
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteCampaign deletes a campaign and its analytics. ECONFLICT when it
// still has links, unless detach, which first takes every link out of it.
// ENOTFOUND.
func (s *CampaignService) DeleteCampaign(ctx context.Context, workspaceID, id string, detach bool) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	cid, ok2 := s.db.ids.parseID(prefixCampaign, id)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "campaign %q not found", id)
	}
	now := s.db.now()
	err := s.db.update(func(tx *bolt.Tx) error {
		crec, err := findCampaign(tx, wid, cid)
		if err != nil {
			return err
		}
		if n := countCampaignLinks(tx, wid, cid); n > 0 && !detach {
			return link.CampaignHasLinksError(id, n)
		}
		prefix := concat(itob(wid), itob(cid))
		idx := tx.Bucket(bucketLinksCampaign)
		var keys [][]byte
		c := idx.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			keys = append(keys, cloneBytes(k))
		}
		links := tx.Bucket(bucketLinks)
		for _, k := range keys {
			lid := btoi(k[16:])
			rec, err := findLink(tx, wid, lid)
			if err != nil {
				return fmt.Errorf("campaign link index: %w", err)
			}
			rec.CampaignID, rec.UpdatedAt = "", now
			if err := putLink(links, itob(lid), rec); err != nil {
				return err
			}
			if s.Events != nil {
				clicks, err := linkClicks(tx, lid)
				if err != nil {
					return err
				}
				if err := appendLinkEvent(tx, s.Events, wid, link.EventLinkUpdated, rec.link(s.db.ids, lid, clicks), now); err != nil {
					return err
				}
			}
			if err := idx.Delete(k); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketCampaigns).Delete(itob(cid)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketCampaignsWorkspace).Delete(concat(itob(wid), itob(cid))); err != nil {
			return err
		}
		if err := deleteCampaignStats(tx, wid, id); err != nil {
			return err
		}
		// Deletion is recorded as the change of status to "deleted".
		gone := crec.campaign(s.db.ids, cid, 0)
		gone.UpdatedAt = now
		changes := map[string][2]string{"status": {string(gone.Status), "deleted"}}
		gone.Status = "deleted"
		return s.emit(tx, wid, gone, changes)
	})
	if err == nil && detach {
		s.db.aliases.clear()
	}
	return err
}

// FindEvents returns the workspace's events after the event id after (""
// for the first), oldest first, at most limit (0 means 100).
func (s *CampaignService) FindEvents(ctx context.Context, workspaceID, after string, limit int) ([]*link.Event, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	if limit <= 0 {
		limit = 100
	}
	var from uint64 = 1
	if after != "" {
		seq, ok := s.db.ids.parseID(prefixEvent, after)
		if !ok {
			return nil, link.Errorf(link.EINVALIDREQUEST, "after: %q is not an event id", after)
		}
		if seq == math.MaxUint64 {
			return []*link.Event{}, nil
		}
		from = seq + 1
	}
	out := []*link.Event{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEvents).Cursor()
		for k, v := c.Seek(itob(from)); k != nil && len(out) < limit; k, v = c.Next() {
			var rec eventRecord
			if err := decodeJSON(v, &rec); err != nil {
				return fmt.Errorf("event %x: %w", k, err)
			}
			if rec.Workspace != wid {
				continue
			}
			out = append(out, &link.Event{ID: s.db.ids.formatID(prefixEvent, btoi(k)), Type: rec.Type,
				WorkspaceID: s.db.ids.formatID(prefixWorkspace, rec.Workspace), CreatedAt: rec.CreatedAt, Data: bytes.Clone(rec.Data)})
		}
		return nil
	})
	return out, err
}
