// Package dump is the neutral form of a whole linkbolt instance that
// `linkbolt copy` moves between stores: one record type per kind of row,
// as neither store keeps it on disk, and the stream that carries them from
// one store's Dump to the other's Load without holding them all.
//
// A record names other records by their wire IDs and carries its own wire
// ID and sequence: the stores share the ID key (the first record), so an
// ID means the same record on both sides. A Dump emits the kinds in the
// order of Kinds, which is the order a Load can write them in (a record
// comes after those it names).
package dump

import (
	"context"
	"errors"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// Record is one item of the stream: a pointer to one of the types below.
// Kind names its kind, as progress and summaries count them.
type Record interface{ Kind() string }

// Kinds are the kinds of record in the order a Dump emits them.
var Kinds = []string{
	"settings", "ids", "certificates", "blocklist entries", "users", "revoked tokens", "password resets",
	"workspaces", "members", "former members", "invitations", "keys", "campaigns", "domains",
	"links", "alias holds", "imports", "QR codes", "UTM templates", "tags", "abuse reports", "webhooks", "events", "deliveries",
	"audit entries", "salts", "aggregates", "visitors", "clicks", "waiting clicks",
}

// Setting is a value of the store's own: the JWT secret ("jwt_secret"),
// the ID key ("id_key") and the legacy ID maxima ("id_legacy_max", JSON).
type Setting struct {
	Name  string
	Value []byte
}

// IDState is how far the sequence of one kind of ID (its prefix, "lnk_")
// has gone: the destination gives out only higher ones.
type IDState struct {
	Prefix string
	Last   uint64
}

// Cert is what automatic HTTPS keeps under a name (link.CertStore).
type Cert struct {
	Name string
	Data []byte
}

// BlockEntry is a blocklist entry added through the admin API.
type BlockEntry struct {
	Entry     string
	CreatedAt time.Time
	CreatedBy string
}

// User is an account with its password hash and session state.
type User struct {
	ID              string
	Seq             uint64
	Email           string
	PasswordHash    []byte
	Admin           bool
	Name            string
	Disabled        bool
	TokenGeneration uint64
	CreatedAt       time.Time
}

// RevokedToken is a logged-out login token, by its JWT ID.
type RevokedToken struct {
	ID        string
	ExpiresAt time.Time
}

// PasswordReset is a pending one-time password link.
type PasswordReset struct {
	TokenHash []byte
	UserID    string
	ExpiresAt time.Time
}

// Workspace is a workspace.
type Workspace struct {
	ID                   string
	Seq                  uint64
	Name                 string
	Plan                 string
	CreatedAt, UpdatedAt time.Time
	DataSince            *time.Time
	// ForwardPath and ForwardQuery are the defaults of its new links.
	ForwardPath, ForwardQuery bool
	// DestinationChecks turns on the check of its links' destinations
	// (their checks are not copied: the new store checks them anew).
	DestinationChecks bool
	// Pixels are its retargeting pixels.
	Pixels link.Pixels
}

// Member is a user's membership of a workspace.
type Member struct {
	WorkspaceID, UserID string
	Role                string
	CreatedAt           time.Time
}

// FormerMember is a user removed from a workspace (or who left it).
type FormerMember struct {
	WorkspaceID, UserID string
	RemovedAt           time.Time
}

// Invitation is an invitation, pending or ended.
type Invitation struct {
	ID          string
	Seq         uint64
	WorkspaceID string
	Email       string
	Role        string
	TokenHash   []byte
	InvitedBy   string // user ID
	CreatedAt   time.Time
	ExpiresAt   time.Time
	AcceptedAt  *time.Time
	AcceptedBy  string // user ID, "" for none
	RevokedAt   *time.Time
}

// Key is an API key with its usage.
type Key struct {
	ID          string
	Seq         uint64
	WorkspaceID string
	Name        string
	Scope       string
	Hash        []byte
	Start       string
	CreatedAt   time.Time
	ExpiresAt   *time.Time
	RevokedAt   *time.Time
	GraceEndsAt *time.Time
	ReplacedBy  string // key ID, "" for none
	CreatorType string
	CreatorID   string
	Keep        bool
	// EndRecorded says the key's expiry or grace end is in the audit log.
	EndRecorded  bool
	RequestCount int64
	LastUsedAt   *time.Time
	// Resources limits the key; nil: every resource.
	Resources []string
}

// Campaign is a campaign.
type Campaign struct {
	ID                                string
	Seq                               uint64
	WorkspaceID                       string
	Name, Status                      string
	UTMSource, UTMMedium, UTMCampaign string
	CreatedAt, UpdatedAt              time.Time
}

// Domain is a custom domain.
type Domain struct {
	ID              string
	Seq             uint64
	WorkspaceID     string
	Hostname        string
	Verified        bool
	VerifiedAt      *time.Time
	Token           string
	RootRedirectURL string
	NotFoundURL     string
	// AASA and AssetLinks are the app files it serves ("" for none).
	AASA, AssetLinks     string
	CreatedAt, UpdatedAt time.Time
}

// Link is a link with every field and its click total.
type Link struct {
	ID                                string
	Seq                               uint64
	WorkspaceID                       string
	Domain, Alias                     string
	DestinationURL                    string
	Tags                              []string
	UTMSource, UTMMedium, UTMCampaign string
	CampaignID                        string
	RedirectCode                      int
	Clicks                            int64
	CreatedAt, UpdatedAt              time.Time
	PasswordHash                      string
	Rules                             []link.Rule
	Variants                          []link.Variant
	OG                                *link.OG
	ExpiresAt                         *time.Time
	MaxClicks                         int64
	ExpiredURL                        string
	Archived                          bool
	Title                             string
	Note                              string
	ForwardPath, ForwardQuery         bool
	ExternalID                        string
	IOSURL, AndroidURL                string
	Crawlable                         bool
	PublicStats                       bool
	EscapeInApp, Retargeting          bool
	// ClicksReserved is how many of its max_clicks the link has used, as
	// a store that counts them in its database keeps it (PostgreSQL): it
	// may be ahead of Clicks (clicks reserved and not yet written, or
	// dropped). 0 when not kept: the destination counts from Clicks.
	ClicksReserved int64
}

// AliasHold is an alias held for the workspace that freed it.
type AliasHold struct {
	Domain, Alias string
	WorkspaceID   string
	Until         time.Time
}

// Import is a link an import brought in, by its source and key there.
type Import struct {
	WorkspaceID, Source, SourceKey, LinkID string
}

// QRCode is a saved QR code design.
type QRCode struct {
	ID                     string
	Seq                    uint64
	WorkspaceID, LinkID    string
	Name, Format           string
	Size, Margin           int
	Level                  string
	Foreground, Background string
	CreatedAt, UpdatedAt   time.Time
	// Logo is the design's logo, a PNG; nil when it has none.
	Logo []byte
}

// UTMTemplate is a saved set of UTM values.
type UTMTemplate struct {
	ID                                string
	Seq                               uint64
	WorkspaceID, Name                 string
	UTMSource, UTMMedium, UTMCampaign string
	CreatedAt, UpdatedAt              time.Time
}

// Tag is the colour and description of a workspace's tag.
type Tag struct {
	WorkspaceID, Name, Color, Description string
	UpdatedAt                             time.Time
}

// AbuseReport is a visitor's report of a link to the instance admin.
type AbuseReport struct {
	ID                         string
	Seq                        uint64
	WorkspaceID, LinkID        string
	Domain, Alias, Destination string
	Reason, Details, Contact   string
	Count                      int64
	Status                     string
	CreatedAt, UpdatedAt       time.Time
}

// Webhook is a webhook with its secrets.
type Webhook struct {
	ID                      string
	Seq                     uint64
	WorkspaceID             string
	URL                     string
	Events                  []string
	Enabled                 bool
	Description             string
	Secret                  string
	PreviousSecret          string
	PreviousSecretExpiresAt *time.Time
	DisabledReason          string
	Failures                int
	CreatorType, CreatorID  string
	Deleting                bool
	CreatedAt, UpdatedAt    time.Time
}

// Event is an event of the webhook outbox.
type Event struct {
	ID          string
	Seq         uint64
	WorkspaceID string
	Type        string
	CreatedAt   time.Time
	Data        []byte
}

// Delivery is one event on its way to one webhook, and its log.
type Delivery struct {
	ID            string
	Seq           uint64
	WebhookID     string
	WorkspaceID   string
	EventID       string // "" for none
	EventType     string
	Payload       []byte
	Status        string
	Attempts      int
	ResponseCode  int
	Duration      time.Duration
	LastError     string
	NextAttemptAt *time.Time
	// Queue orders a webhook's pending deliveries; 0 when not pending.
	Queue                          uint64
	QueuedAt, CreatedAt, UpdatedAt time.Time
}

// AuditEntry is an entry of the audit log.
type AuditEntry struct {
	ID                            string
	Seq                           uint64
	At                            time.Time
	WorkspaceIDs                  []string
	ActorType, ActorID, ActorName string
	Action                        string
	TargetType, TargetID          string
	Address                       string
	Changes                       map[string][2]*string
}

// Salt is the salt of a UTC day's visitor hashes.
type Salt struct {
	Day  int32
	Salt []byte
}

// Scope is what an aggregate counts: a workspace (LinkID and CampaignID
// empty), a link of it, or a campaign of it.
type Scope struct {
	WorkspaceID, LinkID, CampaignID string
}

// Dimensions of an aggregate, in link.Dimensions' order.
const (
	DimLinks = iota
	DimReferrers
	DimCountries
	DimDevices
	DimBrowsers
	DimOS
	DimVariants
	NumDims
)

// Aggregate is what one scope counted in one hour or one UTC day: its
// totals and its top list of each dimension.
type Aggregate struct {
	Scope  Scope
	Daily  bool
	Period int32 // hours or days since the epoch
	Clicks int64 // bots included
	Bots   int64
	// Daily only: distinct visitors, and those of them that are bots.
	Visitors, BotVisitors int64
	Dims                  [NumDims][]Entry
}

// Entry is a value of a top list: the links dimension's values are link
// IDs, the variants' "1" to "10".
type Entry struct {
	Value                   string
	Clicks, Bots, Inherited int64
}

// Visitor is a visitor seen in a scope on a UTC day.
type Visitor struct {
	Scope   Scope
	Day     int32
	Visitor uint64
	Bot     bool
}

// Click is a raw click as the stores keep them: the values are the stored
// ones ("direct", "unknown").
type Click struct {
	WorkspaceID, LinkID, CampaignID string
	At                              time.Time
	Referrer, Country, Device       string
	Browser, OS                     string
	Bot                             bool
	Visitor                         uint64
	Variant                         int
}

// WaitingClick is a click of the backlog, not yet in the aggregates.
type WaitingClick struct{ Click link.Click }

func (*Setting) Kind() string       { return "settings" }
func (*IDState) Kind() string       { return "ids" }
func (*Cert) Kind() string          { return "certificates" }
func (*BlockEntry) Kind() string    { return "blocklist entries" }
func (*User) Kind() string          { return "users" }
func (*RevokedToken) Kind() string  { return "revoked tokens" }
func (*PasswordReset) Kind() string { return "password resets" }
func (*Workspace) Kind() string     { return "workspaces" }
func (*Member) Kind() string        { return "members" }
func (*FormerMember) Kind() string  { return "former members" }
func (*Invitation) Kind() string    { return "invitations" }
func (*Key) Kind() string           { return "keys" }
func (*Campaign) Kind() string      { return "campaigns" }
func (*Domain) Kind() string        { return "domains" }
func (*Link) Kind() string          { return "links" }
func (*AliasHold) Kind() string     { return "alias holds" }
func (*Import) Kind() string        { return "imports" }
func (*QRCode) Kind() string        { return "QR codes" }
func (*UTMTemplate) Kind() string   { return "UTM templates" }
func (*Tag) Kind() string           { return "tags" }
func (*AbuseReport) Kind() string   { return "abuse reports" }
func (*Webhook) Kind() string       { return "webhooks" }
func (*Event) Kind() string         { return "events" }
func (*Delivery) Kind() string      { return "deliveries" }
func (*AuditEntry) Kind() string    { return "audit entries" }
func (*Salt) Kind() string          { return "salts" }
func (*Aggregate) Kind() string     { return "aggregates" }
func (*Visitor) Kind() string       { return "visitors" }
func (*Click) Kind() string         { return "clicks" }
func (*WaitingClick) Kind() string  { return "waiting clicks" }

// Emit is how a Dump hands over its records, in the order of Kinds. A
// record is the receiver's once emitted: the Dump must not change it.
type Emit func(Record) error

// Source is the stream a Load reads: Next returns the next record, or
// nil at the end; Peek returns it without taking it.
type Source struct {
	ch     chan Record
	done   chan struct{}
	err    error // the Dump's, set before done closes
	next   Record
	peeked bool
	cancel context.CancelFunc
	closed bool
}

// streamBuffer is how many records the stream holds between the Dump and
// the Load: enough to keep both busy, few enough to hold little memory.
const streamBuffer = 4096

// Stream runs dump in a goroutine and returns the stream of what it
// emits. A Load that stops early must call Close so that the Dump ends.
func Stream(ctx context.Context, dump func(ctx context.Context, emit Emit) error) *Source {
	s := &Source{ch: make(chan Record, streamBuffer), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(s.done)
		defer close(s.ch)
		defer cancel()
		s.err = dump(ctx, func(r Record) error {
			select {
			case s.ch <- r:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	s.cancel = cancel
	return s
}

// Peek returns the next record without taking it; nil at the end (then
// Err says whether the Dump failed).
func (s *Source) Peek() Record {
	if !s.peeked {
		s.next, s.peeked = <-s.ch, true
	}
	return s.next
}

// Next takes the next record; nil at the end.
func (s *Source) Next() Record {
	r := s.Peek()
	s.peeked = r == nil // the end stays the end
	return r
}

// Err returns the Dump's error once the stream has ended (Next returned
// nil): a Load must check it before it commits what it read.
func (s *Source) Err() error {
	<-s.done
	if s.err == nil && s.closed {
		return errors.New("dump: stream closed")
	}
	return s.err
}

// Close stops the Dump and waits for it.
func (s *Source) Close() {
	s.closed = true
	s.cancel()
	for range s.ch {
	}
	<-s.done
}

// Ended reports whether the stream ended with every record read and no
// error: the Load may commit.
func (s *Source) Ended() error {
	if s.Peek() != nil {
		return errors.New("dump: records left unread")
	}
	return s.Err()
}

// NextOf takes the next record when it is of kind: ok is false at the
// first record of another kind or at the end.
func (s *Source) NextOf(kind string) (Record, bool) {
	r := s.Peek()
	if r == nil || r.Kind() != kind {
		return nil, false
	}
	return s.Next(), true
}
