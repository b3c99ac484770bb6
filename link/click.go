package link

import (
	"context"
	"net/netip"
	"time"
)

// Click is one followed short link (a GET redirect; HEAD is not a click).
// The redirect fills in what it knows; the click recorder classifies the
// rest before the batch is written. The address and the user agent are
// held in memory only and are never stored.
type Click struct {
	LinkID      string
	WorkspaceID string
	CampaignID  string
	Time        time.Time
	// Referrer is the lower-case host of the Referer header, or "" for
	// direct visits (stored as "direct").
	Referrer  string
	UserAgent string
	Addr      netip.Addr
	// Variant is which of the link's A/B variants the visitor was sent
	// to, counted from 1; 0 when the link has none or a rule matched.
	Variant uint8

	// Filled in by the recorder.
	Browser string // e.g. "Chrome", "Firefox", "curl"; "unknown"
	OS      string // e.g. "Windows", "iOS", "Android"; "unknown"
	Device  string // desktop, mobile, tablet, bot or unknown
	Country string // ISO 3166-1 alpha-2 code, or "unknown"
	Bot     bool
	// Visitor is a hash of address and user agent under a salt that
	// changes every UTC day: it counts unique visitors per day and cannot
	// be turned back into an address.
	Visitor uint64
}

// The dimensions of click analytics, as named in the answers' top lists.
const (
	DimLinks     = "links"
	DimReferrers = "referrers"
	DimCountries = "countries"
	DimDevices   = "devices"
	DimBrowsers  = "browsers"
	DimOS        = "os"
	// DimVariants counts a link's clicks by A/B variant (values "1", "2",
	// …): only a link's analytics have it, so it is not in Dimensions.
	DimVariants = "variants"
)

// Dimensions lists the dimensions in the order answers show them.
var Dimensions = []string{DimLinks, DimReferrers, DimCountries, DimDevices, DimBrowsers, DimOS}

// Bucket is the click count of one time bucket starting at Start.
type Bucket struct {
	Start     time.Time
	Clicks    int64 // all clicks, bots included
	BotClicks int64
}

// StatsScope is what analytics are asked about.
type StatsScope string

// The scopes of analytics.
const (
	ScopeWorkspace StatsScope = "workspace"
	ScopeLink      StatsScope = "link"
	ScopeCampaign  StatsScope = "campaign"
)

// StatsFilter selects the clicks of one workspace, link or campaign in the
// half-open range [Start, End). Start and End are whole UTC hours.
type StatsFilter struct {
	WorkspaceID string
	Scope       StatsScope
	// ID is the link or campaign id; empty for the workspace scope.
	ID          string
	Start, End  time.Time
	ExcludeBots bool
	// TopLimit is the length of each top list.
	TopLimit int
}

// TopEntry is one value of a dimension and its clicks.
type TopEntry struct {
	Value  string
	Clicks int64
}

// Stats is the answer of analytics: read from aggregates, never from a
// scan of raw clicks.
type Stats struct {
	Clicks    int64 // without bots when the filter excludes them
	BotClicks int64
	// UniqueVisitors sums the distinct visitors of each UTC day the range
	// touches (the salt changes daily, so a visitor on two days counts twice).
	UniqueVisitors int64
	// Hourly holds the non-empty hours of the range, in order.
	Hourly []Bucket
	// Top maps each of Dimensions to its entries, most clicks first
	// (ties by value), at most TopLimit of them.
	Top map[string][]TopEntry
}

// ClickService stores clicks and answers from their aggregates.
type ClickService interface {
	// RecordClicks writes a batch of classified clicks, their raw events,
	// counters and aggregates in one transaction. A click that cannot be
	// stored (a malformed workspace, link or campaign ID, a time out of
	// range) is skipped and counted in skipped; the others are written, so
	// one bad click never holds the rest back.
	RecordClicks(ctx context.Context, clicks []Click) (skipped int, err error)
	// Stats answers analytics for a filter. ENOTFOUND when the link is not
	// in the workspace; a campaign of another workspace counts none of its
	// clicks (the server checks the campaign before it asks).
	Stats(ctx context.Context, f StatsFilter) (*Stats, error)
	// ExportClicks calls fn for each raw click of the workspace in
	// [start, end), oldest first. It reads in chunks of short transactions
	// and calls fn outside them, so a slow reader never stalls writes and
	// the export is never held in memory whole; clicks written meanwhile at
	// the end of the range may be included.
	ExportClicks(ctx context.Context, workspaceID string, start, end time.Time, fn func(*Click) error) error
	// PruneClicks deletes the raw clicks (and daily visitor sets) older
	// than before; aggregates are kept. It returns how many clicks it deleted.
	PruneClicks(ctx context.Context, before time.Time) (int, error)
	// RollUpLinkHours deletes the per-link hourly aggregates of the UTC
	// days before the one holding before: a link's analytics then answer
	// those days from its daily aggregates (whole days, one point a day
	// in the time series). It returns how many it deleted.
	RollUpLinkHours(ctx context.Context, before time.Time) (int, error)
	// DailySalt returns the secret salt of the UTC day of t, creating it
	// once; salts of past days are deleted by PruneClicks.
	DailySalt(ctx context.Context, day time.Time) ([]byte, error)
	// LinkClicks returns what the link has been clicked of the clicks on
	// disk: its stored total and its clicks waiting in the click backlog
	// (not yet in the aggregates, see analytics.Backlog), read at one
	// moment. ENOTFOUND for a link not of the workspace.
	LinkClicks(ctx context.Context, workspaceID, linkID string) (int64, error)
}

// ClickFeed carries the clicks of the live click streams between the
// processes on one store (PostgreSQL): a stream connected to any process
// shows the clicks every process records. A process announces the
// workspaces it streams; the others send it the clicks of those only, so
// a feed nobody streams from costs nothing per click.
type ClickFeed interface {
	// WatchClicks announces that this process streams the clicks of the
	// workspaces: the others send them for ClickWatchTTL, and the
	// announcement is renewed while the streams stay open.
	WatchClicks(ctx context.Context, workspaceIDs []string) error
	// AnyClickWatched reports whether another process streams any
	// workspace's clicks; ClickWatched whether it streams this one's.
	AnyClickWatched() bool
	ClickWatched(workspaceID string) bool
	// PublishClicks sends clicks of the workspace to the processes that
	// stream it, and how many more it left out.
	PublishClicks(ctx context.Context, workspaceID string, clicks []StreamedClick, skipped int) error
	// OnClicks sets the function given the clicks other processes send.
	OnClicks(fn func(workspaceID string, clicks []StreamedClick, skipped int))
	// OnWatchAsked sets the function called when another process asks
	// which workspaces are streamed (it has just begun to listen, and
	// would otherwise learn of the streams open only at their next
	// announcement): it announces them again.
	OnWatchAsked(fn func())
}

// ClickWatchTTL is how long an announcement of WatchClicks holds.
const ClickWatchTTL = 30 * time.Second

// StreamedClick is a click as the live click stream sends it: the data of
// its link.clicked event, and its link (for streams of one link).
type StreamedClick struct {
	LinkID string
	Data   []byte
}
