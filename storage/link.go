package storage

import (
	"slices"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.LinkService = (*LinkService)(nil)

// LinkService keeps links in bbolt with their indexes: alias (unique per
// domain), workspace and workspace+tag (newest first by reverse cursor),
// and the per-workspace and per-tag link counters that give list totals
// without counting.
type LinkService struct {
	db *DB
	// AliasHold is how long an alias freed by a deletion or a change of
	// alias stays held for its workspace (links.alias_hold); zero or less
	// holds nothing. NewLinkService sets DefaultAliasHold.
	AliasHold time.Duration
	// Events encodes the link.created, link.updated and link.deleted
	// events that every change of a link writes in its transaction; nil
	// writes none.
	Events link.EventEncoder
}

// emit writes the event of a change of l, when events are encoded.
func (s *LinkService) emit(tx *bolt.Tx, wid uint64, eventType string, l *link.Link) error {
	return appendLinkEvent(tx, s.Events, wid, eventType, l, s.db.now())
}

// NewLinkService returns the link service of db.
func NewLinkService(db *DB) *LinkService { return &LinkService{db: db, AliasHold: DefaultAliasHold} }

type linkRecord struct {
	Workspace    uint64    `json:"ws"`
	Alias        string    `json:"alias"`
	Domain       string    `json:"domain,omitempty"`
	Destination  string    `json:"dest"`
	Tags         []string  `json:"tags,omitempty"`
	UTMSource    string    `json:"utm_source,omitempty"`
	UTMMedium    string    `json:"utm_medium,omitempty"`
	UTMCampaign  string    `json:"utm_campaign,omitempty"`
	CampaignID   string    `json:"campaign_id,omitempty"`
	RedirectCode int       `json:"redirect_code"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	ForwardPath  bool      `json:"forward_path,omitempty"`
	ForwardQuery bool      `json:"forward_query,omitempty"`
	ExternalID   string    `json:"external_id,omitempty"`
	Crawlable    bool      `json:"crawlable,omitempty"`
	PublicStats  bool      `json:"public_stats,omitempty"`
	EscapeInApp  bool      `json:"escape_in_app_browser,omitempty"`
	Retargeting  bool      `json:"retargeting,omitempty"`
	// link controls: password, rules, variants, social card
	linkControls

	linkLimitsRecord
}

func (r *linkRecord) link(ids *idCodec, id uint64, clicks uint64) *link.Link {
	l := &link.Link{
		ID:             ids.formatID(prefixLink, id),
		WorkspaceID:    ids.formatID(prefixWorkspace, r.Workspace),
		Alias:          r.Alias,
		Domain:         r.Domain,
		DestinationURL: r.Destination,
		Tags:           slices.Clone(r.Tags),
		UTMSource:      r.UTMSource,
		UTMMedium:      r.UTMMedium,
		UTMCampaign:    r.UTMCampaign,
		CampaignID:     r.CampaignID,
		RedirectCode:   r.RedirectCode,
		Clicks:         int64(clicks),
		CreatedAt:      r.CreatedAt,
		UpdatedAt:      r.UpdatedAt,
		ForwardPath:    r.ForwardPath,
		ForwardQuery:   r.ForwardQuery,
		ExternalID:     r.ExternalID,
		Crawlable:      r.Crawlable,
		PublicStats:    r.PublicStats,
		EscapeInApp:    r.EscapeInApp,
		Retargeting:    r.Retargeting,
	}
	r.controls(l)
	l.LinkLimits = r.limits()
	return l
}

// findLink returns a link record of workspace wid (any workspace when wid
// is 0). ENOTFOUND.
func findLink(tx *bolt.Tx, wid, lid uint64) (*linkRecord, error) {
	var rec linkRecord
	ok, err := getLink(tx.Bucket(bucketLinks), itob(lid), &rec)
	if err != nil {
		return nil, err
	}
	if !ok || wid != 0 && rec.Workspace != wid {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", idsOf(tx).formatID(prefixLink, lid))
	}
	return &rec, nil
}

func linkWithClicks(tx *bolt.Tx, lid uint64, rec *linkRecord) (*link.Link, error) {
	n, err := linkClicks(tx, lid)
	if err != nil {
		return nil, err
	}
	return rec.link(idsOf(tx), lid, n), nil
}
