// Package link is linkbolt's domain: the types every other package speaks
// (workspaces, users, API keys, links, clicks), their filters and updates,
// the rules that make them valid, the service interfaces the storage layer
// implements, the interfaces the HTTP face takes for work it does not do
// itself (EventEncoder, DataFile, DomainVerifier, WebhookTargetChecker,
// OutboxCounter, AdminSetup), and the error codes. It imports only the standard library.
package link

import (
	"context"
	"strings"
	"time"
)

// Limits on link fields. They are part of the wire contract and documented
// in the OpenAPI document.
const (
	MaxDestinationLength = 4096
	MaxAliasLength       = 64
	MaxTags              = 20
	MaxTagLength         = 50
	MaxUTMLength         = 200
	MaxExternalIDLength  = 128
	DefaultPageLimit     = 20
	MaxPageLimit         = 100
	GeneratedCodeLength  = 7
)

// Link is a short link: a code on a domain that redirects to a destination.
type Link struct {
	ID          string
	WorkspaceID string
	// Alias is the path of the short URL: a custom alias or a generated code.
	Alias string
	// Domain is the custom domain of the link; empty means the primary host.
	Domain         string
	DestinationURL string
	Tags           []string
	UTMSource      string
	UTMMedium      string
	UTMCampaign    string
	CampaignID     string
	// RedirectCode is the HTTP status of the redirect: 301, 302, 307 or 308.
	RedirectCode int
	// Clicks is the number of recorded clicks, filled in by the service.
	Clicks    int64
	CreatedAt time.Time
	UpdatedAt time.Time

	// link controls: password, rules, variants, social card (controls.go).
	// PasswordHash is the bcrypt hash of the link's password; "" means
	// none. Rules are tried in order before Variants split the rest.
	PasswordHash string
	Rules        []Rule
	Variants     []Variant
	OG           *OG
	// link controls: expiry and limits (see expiry.go)
	LinkLimits
	// ForwardPath and ForwardQuery pass what a visitor adds to the short
	// URL on to the destination: the path after the code
	// (/{code}/rest/of/path) and the query (see forward.go).
	ForwardPath  bool
	ForwardQuery bool
	// ExternalID is another system's ID of the link, unique in its
	// workspace; "" means none (see CheckExternalID).
	ExternalID string
	// IOSURL and AndroidURL are where visitors on iOS (and iPadOS) and on
	// Android go instead of the destination, before the rules; "" means
	// the destination (link controls, controls.go).
	IOSURL     string
	AndroidURL string
	// Crawlable lets search engines index the short URL: /robots.txt of
	// its domain allows it (every other short URL is disallowed).
	Crawlable bool
	// PublicStats makes the link's statistics public: a read-only page
	// at /{code}/stats and GET /v1/public/links/{domain}/{alias}/stats.
	PublicStats bool
	// Check is the last check of the destination (link_check.go), filled
	// in only where the API shows it, never on redirects; nil means none.
	Check *LinkCheck
	// EscapeInApp sends visitors in a social app's in-app browser
	// (Instagram, Facebook, TikTok, LinkedIn) on to their system browser
	// (see InAppBrowser).
	EscapeInApp bool
	// Retargeting serves a page firing the workspace's pixels
	// (Workspace.Pixels) before the redirect.
	Retargeting bool
}

// Normalize trims the input, drops duplicate tags and applies defaults.
// Validate needs a normalised link: the server (checkNewLink), the
// importer and Apply (a PATCH) normalise a link before they validate it,
// and storage normalises the links it is given to create, for callers that
// did not. It is idempotent.
func (l *Link) Normalize() {
	l.DestinationURL = strings.TrimSpace(l.DestinationURL)
	l.Alias = strings.TrimSpace(l.Alias)
	l.Domain = strings.ToLower(strings.TrimSpace(l.Domain))
	l.Tags = normalizeTags(l.Tags)
	l.ExternalID = strings.TrimSpace(l.ExternalID)
	if l.RedirectCode == 0 {
		l.RedirectCode = 302
	}
	l.normalizeControls()
}

// Validate checks a link against the rules of the service, with rules
// for its destination (nil: no IDNA, no own hosts), and puts the
// destination in the form to store (NormalizeDestination). The alias may
// be empty when a code is to be generated.
func (l *Link) Validate(rules *URLRules) error {
	var v validation
	if dest, msg := NormalizeDestination(l.DestinationURL, rules); msg != "" {
		v.add("destination_url", "%s", msg)
	} else {
		l.DestinationURL = dest
	}
	if l.Alias != "" {
		if msg := CheckAlias(l.Alias); msg != "" {
			v.add("alias", "%s", msg)
		}
	}
	checkTags(&v, l.Tags)
	if l.ExternalID != "" {
		if msg := CheckExternalID(l.ExternalID); msg != "" {
			v.add("external_id", "%s", msg)
		}
	}
	checkUTM(&v, "utm_source", l.UTMSource)
	checkUTM(&v, "utm_medium", l.UTMMedium)
	checkUTM(&v, "utm_campaign", l.UTMCampaign)
	if !ValidRedirectCode(l.RedirectCode) {
		v.add("redirect_code", "must be one of 301, 302, 307, 308")
	}
	l.validateControls(&v, rules)
	l.LinkLimits.validate(&v, rules)
	return v.err()
}

// ValidRedirectCode reports whether code is a redirect status a link may use.
func ValidRedirectCode(code int) bool {
	switch code {
	case 301, 302, 307, 308:
		return true
	}
	return false
}

// LinkUpdate holds the fields of a PATCH; nil means "not given".
type LinkUpdate struct {
	DestinationURL *string
	Alias          *string
	Tags           *[]string
	UTMSource      *string
	UTMMedium      *string
	UTMCampaign    *string
	CampaignID     *string
	RedirectCode   *int

	// link controls: password, rules, variants, social card. A pointer to
	// "" removes the password, to an empty list the rules or variants, to
	// a zero OG the social card.
	PasswordHash *string
	Rules        *[]Rule
	Variants     *[]Variant
	OG           *OG
	// link controls: expiry and limits (see expiry.go)
	Limits LinkLimitsUpdate
	// ForwardPath and ForwardQuery switch the forwarding of the visitor's
	// path and query.
	ForwardPath  *bool
	ForwardQuery *bool
	// ExternalID sets the link's external ID; a pointer to "" removes it.
	ExternalID *string
	// IOSURL and AndroidURL set the app destinations; "" removes one.
	IOSURL     *string
	AndroidURL *string
	Crawlable  *bool
	// PublicStats switches the link's public statistics.
	PublicStats *bool
	// EscapeInApp and Retargeting switch the link's interstitials.
	EscapeInApp *bool
	Retargeting *bool
}

// Apply copies the given fields onto l, normalised.
func (u LinkUpdate) Apply(l *Link) {
	if u.DestinationURL != nil {
		l.DestinationURL = *u.DestinationURL
	}
	if u.Alias != nil {
		l.Alias = *u.Alias
	}
	if u.Tags != nil {
		l.Tags = *u.Tags
	}
	if u.UTMSource != nil {
		l.UTMSource = *u.UTMSource
	}
	if u.UTMMedium != nil {
		l.UTMMedium = *u.UTMMedium
	}
	if u.UTMCampaign != nil {
		l.UTMCampaign = *u.UTMCampaign
	}
	if u.CampaignID != nil {
		l.CampaignID = *u.CampaignID
	}
	if u.RedirectCode != nil {
		l.RedirectCode = *u.RedirectCode
	}
	// link controls: password, rules, variants, social card
	if u.PasswordHash != nil {
		l.PasswordHash = *u.PasswordHash
	}
	if u.Rules != nil {
		l.Rules = *u.Rules
	}
	if u.Variants != nil {
		l.Variants = *u.Variants
	}
	if u.OG != nil {
		og := *u.OG
		l.OG = &og
	}
	u.Limits.apply(&l.LinkLimits)
	if u.ForwardPath != nil {
		l.ForwardPath = *u.ForwardPath
	}
	if u.ForwardQuery != nil {
		l.ForwardQuery = *u.ForwardQuery
	}
	if u.ExternalID != nil {
		l.ExternalID = *u.ExternalID
	}
	if u.IOSURL != nil {
		l.IOSURL = *u.IOSURL
	}
	if u.AndroidURL != nil {
		l.AndroidURL = *u.AndroidURL
	}
	if u.Crawlable != nil {
		l.Crawlable = *u.Crawlable
	}
	if u.PublicStats != nil {
		l.PublicStats = *u.PublicStats
	}
	if u.EscapeInApp != nil {
		l.EscapeInApp = *u.EscapeInApp
	}
	if u.Retargeting != nil {
		l.Retargeting = *u.Retargeting
	}
	l.Normalize()
}

// LinkSort orders a page of links.
type LinkSort string

const (
	// SortCreated lists the newest links first (the default).
	SortCreated LinkSort = "created"
	// SortClicks lists the most clicked links first, the newest first among
	// links with as many clicks.
	SortClicks LinkSort = "clicks"
)

// LinkFilter selects a page of a workspace's links, newest first unless
// Sort says otherwise.
type LinkFilter struct {
	WorkspaceID string
	// Tags matches links with any of the tags.
	Tags []string
	// Search matches a case-insensitive substring of the alias, the
	// destination (its first 512 bytes), a tag or a line of the note.
	Search     string
	CampaignID string
	// Domain matches the links of a custom domain; nil means any domain and
	// a pointer to "" means the primary host only.
	Domain *string
	Page   int // 1-based
	Limit  int
	// ScanLimit bounds the links read to test Search, CampaignID and
	// Domain, newest first; 0 means no bound. Past it the page says
	// Truncated.
	ScanLimit int
	// Sort orders the links; "" is SortCreated. SortClicks reads the click
	// count of every link of the walk, at most ScanLimit of them.
	Sort LinkSort

	// link controls: expiry and limits
	// Archived selects by the archived flag; "" is ArchivedExclude.
	Archived ArchivedFilter
	// Broken selects the links whose destination check says broken.
	Broken bool
}

// LinkPage is a page of links and how many links match the filter.
type LinkPage struct {
	Links []*Link
	// Total counts the links that match; when Truncated, only those among
	// the links scanned.
	Total int
	// Truncated says that the filter's ScanLimit stopped the scan before
	// the workspace's oldest link: older matches are neither counted nor
	// listed.
	Truncated bool
}

// Offset returns the number of links before the filter's page.
func (f LinkFilter) Offset() int { return (f.Page - 1) * f.Limit }

// LinkService keeps links.
type LinkService interface {
	// FindLinkByID returns a link of the workspace. ENOTFOUND if there is none
	// (also when the link belongs to another workspace).
	FindLinkByID(ctx context.Context, workspaceID, id string) (*Link, error)
	// FindLinkByExternalID returns the link of the workspace with the
	// external ID. ENOTFOUND if there is none.
	FindLinkByExternalID(ctx context.Context, workspaceID, externalID string) (*Link, error)
	// CrawlableAliases returns the aliases of the crawlable links on the
	// domain ("" the primary host), in order, at most limit of them.
	CrawlableAliases(ctx context.Context, domain string, limit int) ([]string, error)
	// FindLinkByAlias returns the link for a redirect, without its Clicks
	// and with its campaign's UTM values where it has none of its own; the
	// link may be shared and must not be modified. ENOTFOUND if none.
	FindLinkByAlias(ctx context.Context, domain, alias string) (*Link, error)
	// FindLinkPage returns a page of links and the total matching the
	// filter. ENOTFOUND for an unknown workspace.
	FindLinkPage(ctx context.Context, f LinkFilter) (*LinkPage, error)
	// CreateLink stores a validated link, generating a code when the alias
	// is empty; sets ID, Alias, CreatedAt and UpdatedAt. ECONFLICT if the
	// alias is taken on the domain, or held for another workspace after
	// its link was deleted or renamed. Returns once the link is durable.
	CreateLink(ctx context.Context, l *Link) error
	// CreateLinks stores validated links of one workspace in one
	// transaction, each as CreateLink would, and returns one error for
	// each (nil for a link stored, whose fields are set as CreateLink
	// sets them): ECONFLICT (alias taken, also by an earlier link of the
	// same call), EINVALID (domain, campaign). A refused link
	// does not keep the others from being stored. The error returned
	// apart stores nothing: ENOTFOUND for an unknown workspace, or a
	// failure of the write.
	CreateLinks(ctx context.Context, workspaceID string, links []*Link) ([]error, error)
	// UpdateLink applies a validated update; an alias it frees is held for
	// the workspace. ENOTFOUND, ECONFLICT (alias taken or held, external
	// ID another link's).
	UpdateLink(ctx context.Context, workspaceID, id string, upd LinkUpdate, validate func(*Link) error) (*Link, error)
	// DeleteLink removes a link; its alias stays held for the workspace for
	// a while (links.alias_hold), redirecting nowhere. ENOTFOUND.
	DeleteLink(ctx context.Context, workspaceID, id string) error
	// DeleteLinks removes links of the workspace in one transaction, each
	// as DeleteLink does, and returns one error for each id: ENOTFOUND for
	// one that is not a link of the workspace (or was named before in the
	// call), nil for one removed. The error apart removes none: ENOTFOUND
	// for an unknown workspace, or a failure of the write.
	DeleteLinks(ctx context.Context, workspaceID string, ids []string) ([]error, error)
	// UpdateLinks applies upd (which must not change the alias, EINVALID)
	// to links of the workspace in one transaction, each as UpdateLink
	// does, validated by validate, and returns for each id the link as
	// updated or why it was not (ENOTFOUND, also for an id named twice,
	// validate's error). The error apart updates none.
	UpdateLinks(ctx context.Context, workspaceID string, ids []string, upd LinkUpdate, validate func(*Link) error) ([]*Link, []error, error)
}
