package link

import (
	"context"
	"time"
)

// Store is one whole store: every service linkbolt keeps its data in and
// what the server does with the data as a whole. A store package builds it
// (storage.Open over a bbolt file); the application wires nothing else, so
// a second store comes in behind this type without a handler changing.
// The services of one Store share its data: a link created through Links
// is counted by Clicks and listed by Workspaces' owners at once.
type Store struct {
	Data        StoreData
	Users       UserService
	Accounts    AccountStore
	Workspaces  WorkspaceStore
	Members     MemberService
	Invitations InvitationService
	Keys        KeyStore
	Links       LinkStore
	Clicks      ClickStore
	// Orphans keeps the visits to short-link hosts that found no link.
	Orphans      OrphanVisitStore
	Campaigns    CampaignService
	QRCodes      QRCodeService
	UTMTemplates UTMTemplateService
	Tags         TagService
	AbuseReports AbuseReportService
	Domains      DomainService
	Webhooks     WebhookStore
	Audit        AuditService
	Blocklist    BlocklistService
	Imports      ImportService
	// Certs keeps the automatic HTTPS certificates and the ACME account.
	Certs CertStore
	// Callers is set by a store that several processes share
	// (PostgreSQL): authentication then reads all that ends a session or
	// an API key from the store on each request. Nil for a store one
	// process holds (bbolt), whose changes all pass through that
	// process's memory (auth.Sessions).
	Callers CallerFinder
	// RateBudget keeps the workspaces' request budgets where every process
	// on the store shares them (PostgreSQL); nil (bbolt) keeps them in
	// each process's memory.
	RateBudget RateBudget
	// ClickFeed carries the live click streams between the processes on
	// the store; nil where one process holds it (bbolt).
	ClickFeed ClickFeed
	// LinkChecks keeps the destination checks of links (link_check.go).
	LinkChecks LinkCheckService
}

// SetupTokens is implemented by the data of a store that several
// processes share (PostgreSQL): the instances starting on it without an
// admin all log one setup link, which works on any of them.
type SetupTokens interface {
	// SetupToken returns the stored token, made with generate when none
	// is.
	SetupToken(generate func() string) (string, error)
	// SetupPending reports whether a token is stored: no instance has
	// been set up with it yet.
	SetupPending() (bool, error)
	// EndSetup forgets the token: an instance is set up.
	EndSetup() error
}

// CallerFinder reads, in one round trip each, what authenticating a
// request needs from a store that other processes change too: a logout,
// a password change, a disabled user or a removed member made through
// another instance ends a token or a key on the very next request.
type CallerFinder interface {
	// FindTokenUser returns the user of a token and whether the token
	// (its id) was logged out and has not expired by now. ENOTFOUND when
	// the user is gone.
	FindTokenUser(ctx context.Context, userID, tokenID string, now time.Time) (*User, bool, error)
	// FindKeyCaller returns the API key with the token hash, in any
	// state, with its usage and its workspace, and, when a user made it,
	// that user's state. ENOTFOUND.
	FindKeyCaller(ctx context.Context, hash []byte) (*KeyCaller, error)
}

// KeyCaller is an API key as authentication reads it.
type KeyCaller struct {
	Key       *APIKey
	Workspace *Workspace
	// For a key a user made (Key.CreatedBy.Type CreatorUser): whether
	// that user is disabled, and their role in the key's workspace (""
	// when they are no longer a member, or the user is gone).
	CreatorDisabled bool
	CreatorRole     Role
}

// StoreData is what the application does with a store's data as a whole.
type StoreData interface {
	DataFile
	// JWTSecret returns the store's JWT secret, made once with generate
	// and kept.
	JWTSecret(generate func() []byte) ([]byte, error)
	// CatchDamage runs fn and turns damage to the data met on the way
	// into an error instead of a crash.
	CatchDamage(fn func() error) error
	// Close writes what is buffered and releases the data.
	Close() error
}

// AccountStore is the account service with the one-time password links
// the commands make.
type AccountStore interface {
	AccountService
	PasswordResets
}

// WorkspaceStore is the workspace service with what the commands list.
type WorkspaceStore interface {
	WorkspaceService
	// ListWorkspaces returns every workspace of the instance, oldest first.
	ListWorkspaces(ctx context.Context) ([]*Workspace, error)
	// CountLinks returns the number of links of the workspace id.
	CountLinks(ctx context.Context, id string) (int, error)
}

// KeyStore is the key service with the store's hourly upkeep.
type KeyStore interface {
	KeyService
	// RecordEndedKeys records the keys whose grace period or expiry ended
	// by now in the audit log and returns how many ended.
	RecordEndedKeys(ctx context.Context, now time.Time) (int, error)
}

// LinkStore is the link service with the store's hourly upkeep.
type LinkStore interface {
	LinkService
	// PruneAliasHolds deletes the alias holds that ended before now.
	PruneAliasHolds(ctx context.Context, now time.Time) (int, error)
}

// ClickStore is the click service with the click backlog: the clicks
// spilled to the store while the aggregates cannot keep up.
type ClickStore interface {
	ClickService
	// SpillClicks appends clicks while the backlog holds at most limit
	// bytes; spilled is how many it took, in order.
	SpillClicks(ctx context.Context, clicks []Click, limit int64) (spilled, skipped int, err error)
	// DrainClicks writes the oldest at most max clicks into the
	// aggregates and takes them out of the backlog, in one transaction.
	DrainClicks(ctx context.Context, max int) (taken, skipped int, err error)
	// Backlog returns the clicks the backlog holds and their bytes.
	Backlog(ctx context.Context) (clicks, bytes int64, err error)
}

// WebhookStore is the webhook service with its outbox's count.
type WebhookStore interface {
	WebhookService
	OutboxCounter
}

// CertStore keeps certificates and keys by name, for automatic HTTPS.
// Get answers ENOTFOUND for a name it does not hold.
type CertStore interface {
	Get(ctx context.Context, name string) ([]byte, error)
	Put(ctx context.Context, name string, data []byte) error
	Delete(ctx context.Context, name string) error
}
