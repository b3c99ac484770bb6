package storage

import (
	"log/slog"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// Options configure a bbolt store.
type Options struct {
	// Path is the data file (storage.path).
	Path string
	// KeyUsageFlush is how often API keys' last use and counts are written
	// (0: DB's default).
	KeyUsageFlush time.Duration
	// AliasHold is how long a freed alias stays held for its workspace
	// (links.alias_hold).
	AliasHold time.Duration
	// Events encodes the webhook events that changes write in their own
	// transaction; nil writes none.
	Events link.EventEncoder
	Logger *slog.Logger
	// Now is the store's clock; nil is time.Now.
	Now func() time.Time
}

// Open opens the bbolt data file of o and returns the store over it: its
// services and the file itself. Closing Data closes the file.
func Open(o Options) (*link.Store, error) {
	db := NewDB(o.Path)
	if o.KeyUsageFlush > 0 {
		db.KeyUsageFlush = o.KeyUsageFlush
	}
	if o.Logger != nil {
		db.Logger = o.Logger
	}
	if o.Now != nil {
		db.Now = o.Now
	}
	if err := db.Open(); err != nil {
		return nil, err
	}
	return db.Store(o), nil
}

// Store returns the services over the open db, configured by o (its Path,
// KeyUsageFlush, Logger and Now are the DB's own and not read here).
func (db *DB) Store(o Options) *link.Store {
	users := NewUserService(db)
	links := NewLinkService(db)
	if o.AliasHold != 0 {
		links.AliasHold = o.AliasHold
	}
	clicks, campaigns, webhooks := NewClickService(db), NewCampaignService(db), NewWebhookService(db)
	checks := NewLinkCheckService(db)
	if o.Events != nil {
		links.Events, clicks.Events, campaigns.Events, webhooks.Events = o.Events, o.Events, o.Events, o.Events
		checks.Events = o.Events
	}
	return &link.Store{
		Data:         db,
		Users:        users,
		Accounts:     users,
		Workspaces:   NewWorkspaceService(db),
		Members:      NewMemberService(db),
		Invitations:  NewInvitationService(db),
		Keys:         NewKeyService(db),
		Links:        links,
		Clicks:       clicks,
		Campaigns:    campaigns,
		QRCodes:      NewQRCodeService(db),
		UTMTemplates: NewUTMTemplateService(db),
		Tags:         NewTagService(db),
		AbuseReports: NewAbuseReportService(db),
		Orphans:      NewOrphanVisitService(db),
		Domains:      NewDomainService(db),
		Webhooks:     webhooks,
		Audit:        NewAuditService(db),
		Blocklist:    NewBlocklistService(db),
		Imports:      NewImportService(db),
		Certs:        NewCertCache(db),
		LinkChecks:   checks,
	}
}
