package link

import (
	"context"
	"strings"
	"time"
)

// CampaignStatus is where a campaign is in its life. Links of a paused or
// archived campaign keep redirecting; the status is for people.
type CampaignStatus string

// The campaign statuses.
const (
	CampaignActive   CampaignStatus = "active"
	CampaignPaused   CampaignStatus = "paused"
	CampaignArchived CampaignStatus = "archived"
)

// Valid reports whether s is a known status.
func (s CampaignStatus) Valid() bool {
	return s == CampaignActive || s == CampaignPaused || s == CampaignArchived
}

// Campaign groups links: they take its UTM values unless they set their own,
// and its analytics sum theirs.
type Campaign struct {
	ID          string
	WorkspaceID string
	Name        string
	Status      CampaignStatus
	UTMSource   string
	UTMMedium   string
	UTMCampaign string
	// Links is the number of links in the campaign, filled in by the service.
	Links     int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Normalize trims the input and applies the default status.
func (c *Campaign) Normalize() {
	c.Name = strings.TrimSpace(c.Name)
	if c.Status == "" {
		c.Status = CampaignActive
	}
}

// Validate checks a campaign.
func (c *Campaign) Validate() error {
	var v validation
	checkName(&v, "name", c.Name, MaxNameLength)
	if !c.Status.Valid() {
		v.add("status", "must be one of active, paused, archived")
	}
	checkUTM(&v, "utm_source", c.UTMSource)
	checkUTM(&v, "utm_medium", c.UTMMedium)
	checkUTM(&v, "utm_campaign", c.UTMCampaign)
	return v.err()
}

// CampaignUpdate holds the fields of a PATCH; nil means "not given".
type CampaignUpdate struct {
	Name        *string
	Status      *CampaignStatus
	UTMSource   *string
	UTMMedium   *string
	UTMCampaign *string
}

// Apply copies the given fields onto c; an empty status stays empty, for
// Validate to refuse.
func (u CampaignUpdate) Apply(c *Campaign) {
	if u.Name != nil {
		c.Name = *u.Name
	}
	if u.Status != nil {
		c.Status = *u.Status
	}
	if u.UTMSource != nil {
		c.UTMSource = *u.UTMSource
	}
	if u.UTMMedium != nil {
		c.UTMMedium = *u.UTMMedium
	}
	if u.UTMCampaign != nil {
		c.UTMCampaign = *u.UTMCampaign
	}
	c.Name = strings.TrimSpace(c.Name)
}

// Changes lists the fields that differ between two versions of a campaign,
// each with its value before and after, for the campaign.updated event.
func (c *Campaign) Changes(before *Campaign) map[string][2]string {
	out := map[string][2]string{}
	add := func(field, a, b string) {
		if a != b {
			out[field] = [2]string{a, b}
		}
	}
	add("name", before.Name, c.Name)
	add("status", string(before.Status), string(c.Status))
	add("utm_source", before.UTMSource, c.UTMSource)
	add("utm_medium", before.UTMMedium, c.UTMMedium)
	add("utm_campaign", before.UTMCampaign, c.UTMCampaign)
	return out
}

// Event is something that happened in a workspace, kept in the outbox for
// webhook delivery. It is written in the same transaction as its change, so
// it exists if and only if the change was committed.
type Event struct {
	ID          string // evt_…
	Type        string // e.g. "campaign.updated"
	WorkspaceID string
	CreatedAt   time.Time
	// Data is the JSON of the object as the API shows it, with the change.
	Data []byte
}

// The event types.
const (
	EventCampaignUpdated = "campaign.updated"
)

// CampaignService keeps campaigns.
type CampaignService interface {
	// CreateCampaign stores a validated campaign; sets ID.
	CreateCampaign(ctx context.Context, c *Campaign) error
	// FindCampaignByID returns a campaign of the workspace. ENOTFOUND.
	FindCampaignByID(ctx context.Context, workspaceID, id string) (*Campaign, error)
	// FindCampaigns returns the workspace's campaigns, newest first.
	FindCampaigns(ctx context.Context, workspaceID string) ([]*Campaign, error)
	// UpdateCampaign applies a validated update and, when anything changed,
	// writes its campaign.updated event in the same transaction.
	// ENOTFOUND, EINVALID.
	UpdateCampaign(ctx context.Context, workspaceID, id string, upd CampaignUpdate) (*Campaign, error)
	// DeleteCampaign deletes a campaign. ECONFLICT when it still has links,
	// unless detach, which first takes every link out of it. ENOTFOUND.
	DeleteCampaign(ctx context.Context, workspaceID, id string, detach bool) error
	// FindEvents returns the workspace's events after the given event id
	// ("" for the first), oldest first, at most limit.
	FindEvents(ctx context.Context, workspaceID, after string, limit int) ([]*Event, error)
}
