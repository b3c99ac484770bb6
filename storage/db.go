// Package storage keeps all of linkbolt's data in one bbolt file: the
// buckets, their keys and indexes, the transactions that keep indexes and
// counters in step with the records, the schema version, the batching of
// key usage, and the hot backup. It implements the service interfaces of
// package link.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the version of the bucket layout this code writes. A
// file recorded with a newer version is refused rather than misread.
//
// Version 2 bounded the period blobs (version 2 blobs), made raw clicks
// name their referrer host in clicks.hosts (version 1 raw clicks and blobs
// are read as they are), and made wire IDs opaque (see idCodec): it added
// the ID key and the legacy maxima to the meta bucket.
//
// Version 3 keeps the per-link click counters in blocks of 120 links
// (clicks.totals, see click_totals.go) instead of a key per link
// (clicks.link); Open moves them over (see moveLinkCounters).
//
// Version 4 stores link records in a binary form instead of JSON (see
// link_codec.go); Open rewrites them (see upgradeLinkRecords).
//
// Version 5 writes a period blob of one click in a short form (blob
// version 3, see click_blob_one.go) and the values of raw clicks as short
// values (rawFlagCodes), which older versions cannot read. Nothing is
// rewritten: what was written before stays as it is.
const SchemaVersion = 5

// DefaultBatchDelay is how long concurrent link creations are gathered
// into one commit when DB.BatchDelay is zero. bbolt's default (10 ms) suits
// spinning disks; on SSDs a commit takes about a millisecond, and 1 ms
// gives both a short lone creation and high concurrent throughput.
const DefaultBatchDelay = time.Millisecond

// DefaultKeyUsageFlush is how often key usage is written when
// DB.KeyUsageFlush is zero.
const DefaultKeyUsageFlush = time.Second

// ErrLocked matches (with errors.Is) the error Open returns when another
// process holds the data file.
var ErrLocked = errors.New("data file is locked")

// lockedError names the locked file; it matches ErrLocked.
type lockedError struct{ path string }

func (e *lockedError) Error() string {
	return fmt.Sprintf("data file %s is locked: another linkbolt process is using it", e.path)
}

func (e *lockedError) Is(target error) bool { return target == ErrLocked }

// Bucket names. Every bucket is created by Open in one transaction, so the
// helpers below may rely on tx.Bucket returning non-nil.
var (
	bucketMeta = []byte("meta")

	bucketUsers          = []byte("users")            // user id → userRecord
	bucketUsersEmail     = []byte("users.email")      // lower(email) → user id
	bucketUserWorkspaces = []byte("users.workspaces") // user id + workspace id → memberRecord
	bucketTokensRevoked  = []byte("tokens.revoked")   // JWT id (jti) → the token's expiry, unix nanos(8)
	bucketUsersReset     = []byte("users.reset")      // reset token hash → user id(8) + expiry unix nanos(8); see password_reset.go

	bucketWorkspaces       = []byte("workspaces")         // workspace id → workspaceRecord
	bucketWorkspaceMembers = []byte("workspaces.members") // workspace id + user id → memberRecord
	bucketWorkspaceFormer  = []byte("workspaces.former")  // workspace id + user id → formerRecord (removed members)

	// Invitations; see invitation.go.
	bucketInvitations          = []byte("invitations")           // invitation id → invitationRecord
	bucketInvitationsHash      = []byte("invitations.hash")      // token hash → invitation id
	bucketInvitationsWorkspace = []byte("invitations.workspace") // workspace id + invitation id → ""

	bucketKeys          = []byte("keys")           // key id → keyRecord
	bucketKeysHash      = []byte("keys.hash")      // token hash → key id
	bucketKeysWorkspace = []byte("keys.workspace") // workspace id + key id → ""
	bucketKeysUsage     = []byte("keys.usage")     // key id → count(8) + last used unix nano(8)
	bucketKeysLive      = []byte("keys.live")      // workspace id + key id → "" (keys not yet seen revoked or expired); workspace id → "" once built

	bucketLinks          = []byte("links")           // link id → linkRecord
	bucketLinksAlias     = []byte("links.alias")     // domain + "\x00" + alias → link id
	bucketLinksWorkspace = []byte("links.workspace") // workspace id + link id → ""
	bucketLinksTag       = []byte("links.tag")       // workspace id + tag + "\x00" + link id → ""
	bucketLinksCount     = []byte("links.count")     // workspace id → number of links
	bucketLinksTagCount  = []byte("links.tag_count") // workspace id + tag → number of links
	bucketLinksSearch    = []byte("links.search")    // workspace id + block(4) + trigram(3) → set of link ids (see link_search.go)
	bucketLinksExternal  = []byte("links.external")  // workspace id + external ID → link id (see link_external.go)
	bucketLinksCrawlable = []byte("links.crawlable") // domain + "\x00" + alias → link id, of the crawlable links

	// link controls: expiry and limits; see link_limits.go and blocklist.go.
	bucketLinksArchived = []byte("links.archived") // workspace id → number of archived links
	bucketBlocklist     = []byte("blocklist")      // entry → blocklistRecord (entries added through the admin API)

	// Clicks; see click_keys.go for the scope keys, click_blob.go, click_raw.go
	// and click_visitor.go for the encodings.
	bucketLinksCampaign = []byte("links.campaign") // workspace id + campaign id + link id → ""

	bucketCampaigns          = []byte("campaigns")           // campaign id → campaignRecord
	bucketCampaignsWorkspace = []byte("campaigns.workspace") // workspace id + campaign id → ""
	bucketEvents             = []byte("events")              // event sequence → eventRecord (the webhook outbox)

	// Webhooks and their deliveries; see webhook.go and delivery.go.
	bucketWebhooks          = []byte("webhooks")           // webhook id → webhookRecord
	bucketWebhooksWorkspace = []byte("webhooks.workspace") // workspace id + webhook id → ""
	bucketWebhooksEvent     = []byte("webhooks.event")     // workspace id + event type + 0 + webhook id → "" (enabled webhooks subscribed to the type)
	bucketDeliveries        = []byte("deliveries")         // delivery id → deliveryRecord
	bucketDeliveriesWebhook = []byte("deliveries.webhook") // webhook id + delivery id → ""
	bucketDeliveriesQueue   = []byte("deliveries.queue")   // webhook id + queue sequence → delivery id (pending deliveries, in order)

	bucketQRCodes          = []byte("qr_codes")           // qr code id → qrCodeRecord
	bucketQRCodesWorkspace = []byte("qr_codes.workspace") // workspace id + qr code id → ""
	bucketQRCodesLogo      = []byte("qr_codes.logo")      // qr code id → the logo's PNG

	bucketReports     = []byte("abuse_reports")      // report id → reportRecord
	bucketReportsOpen = []byte("abuse_reports.open") // link id + reason → report id (the open reports)

	bucketUTMTemplates          = []byte("utm_templates")           // template id → utmTemplateRecord
	bucketUTMTemplatesWorkspace = []byte("utm_templates.workspace") // workspace id + template id → ""

	bucketTags = []byte("tags") // workspace id + tag name → tagRecord (a tag's colour and description)

	bucketDomains          = []byte("domains")           // domain id → domainRecord
	bucketDomainsHostname  = []byte("domains.hostname")  // hostname → domain id (unique across the instance)
	bucketDomainsWorkspace = []byte("domains.workspace") // workspace id + domain id → ""

	bucketClicksTotals   = []byte("clicks.totals")   // link id / 120 → 120 × clicks(8); see click_totals.go
	bucketClicksRaw      = []byte("clicks.raw")      // workspace id + unix nanos(8) + sequence(4) → raw click
	bucketClicksHourly   = []byte("clicks.hourly")   // scope + unix hour(4), links time first → period blob: totals, dimensions
	bucketClicksDaily    = []byte("clicks.daily")    // scope + unix UTC day(4), links time first → period blob: totals, visitors, dimensions
	bucketClicksVisitors = []byte("clicks.visitors") // unix UTC day(4) + workspace id(8) + visitor(8) → visitor record
	bucketClicksSalts    = []byte("clicks.salts")    // unix UTC day(4) → salt(32)
	bucketClicksHosts    = []byte("clicks.hosts")    // unix UTC day(4) + workspace id(8) + 0 + id(4) → host, and + 1 + host → id
	bucketClicksBacklog  = []byte("clicks.backlog")  // sequence(8) → a classified click not yet in the aggregates (see click_backlog.go)

	// The audit log; see audit.go. scope is a workspace id, 0 for the
	// instance's own entries, or auditAllScope for every entry.
	bucketOrphanCounts = []byte("orphans.counts") // domain + 0 + unix hour(8) + type(1) → count(8)
	bucketOrphanVisits = []byte("orphans.visits") // domain + 0 + unix nanos(8) + sequence(8) → orphanRecord

	bucketImports = []byte("imports") // workspace id + source + 0 + source key → link id (see imports.go)

	bucketAudit       = []byte("audit")        // entry id → auditRecord
	bucketAuditTime   = []byte("audit.time")   // scope + unix nanos(8) + entry id → ""
	bucketAuditActor  = []byte("audit.actor")  // scope + actor id + 0 + unix nanos(8) + entry id → ""
	bucketAuditAction = []byte("audit.action") // scope + action + 0 + unix nanos(8) + entry id → ""
	bucketAuditTarget = []byte("audit.target") // scope + target id + 0 + unix nanos(8) + entry id → ""
)

var allBuckets = [][]byte{
	bucketMeta,
	bucketUsers, bucketUsersEmail, bucketUserWorkspaces, bucketTokensRevoked, bucketUsersReset,
	bucketWorkspaces, bucketWorkspaceMembers, bucketWorkspaceFormer,
	bucketInvitations, bucketInvitationsHash, bucketInvitationsWorkspace,
	bucketKeys, bucketKeysHash, bucketKeysWorkspace, bucketKeysUsage, bucketKeysLive,
	bucketLinks, bucketLinksAlias, bucketLinksAliasHold, bucketLinksWorkspace, bucketLinksTag, bucketLinksCount, bucketLinksTagCount,
	bucketLinksCampaign, bucketCampaigns, bucketCampaignsWorkspace, bucketEvents,
	bucketWebhooks, bucketWebhooksWorkspace, bucketWebhooksEvent, bucketDeliveries, bucketDeliveriesWebhook, bucketDeliveriesQueue,
	bucketQRCodes, bucketQRCodesWorkspace, bucketQRCodesLogo,
	bucketUTMTemplates, bucketUTMTemplatesWorkspace, bucketTags,
	bucketReports, bucketReportsOpen,
	bucketDomains, bucketDomainsHostname, bucketDomainsWorkspace,
	bucketClicksTotals, bucketClicksRaw, bucketClicksHourly, bucketClicksDaily, bucketClicksVisitors, bucketClicksSalts, bucketClicksHosts, bucketClicksBacklog,
	bucketAudit, bucketAuditTime, bucketAuditActor, bucketAuditAction, bucketAuditTarget,
	bucketLinksSearch, bucketLinksExternal, bucketLinksCrawlable,
	bucketLinksArchived, bucketBlocklist,
	bucketImports,
	bucketOrphanCounts, bucketOrphanVisits,
	bucketACME,
	bucketLinkChecks, bucketLinkChecksDue, bucketLinkChecksBroken, bucketLinkChecksEnroll,
}

// bucketClicksLinkV2 held the per-link click counters up to schema
// version 2 (link id → clicks(8)); moveLinkCounters empties and drops it.
var bucketClicksLinkV2 = []byte("clicks.link")

// Keys of the meta bucket.
var (
	metaSchemaVersion = []byte("schema_version") // decimal ASCII
	metaJWTSecret     = []byte("jwt_secret")
	metaIDKey         = []byte("id_key")        // 16 random bytes, the AES key of wire IDs
	metaIDLegacyMax   = []byte("id_legacy_max") // JSON: prefix → highest sequence with a legacy ID
	metaHostsFrom     = []byte("hosts_from")    // unix UTC day(4): raw clicks of earlier days keep their referrer inline (see hostTable)
)

// DB is the bbolt data file and what is kept in memory beside it (key usage
// not yet written).
type DB struct {
	// Path is the data file; its directory is created by Open.
	Path string
	// Now is the clock; tests replace it.
	Now func() time.Time
	// KeyUsageFlush is how often key usage counted in memory is written;
	// zero means DefaultKeyUsageFlush.
	KeyUsageFlush time.Duration
	// BatchDelay is how long concurrent link creations are gathered into
	// one commit (see creationBatch); zero means DefaultBatchDelay.
	BatchDelay time.Duration
	// Logger receives errors of the background key usage flush; nil means
	// slog.Default().
	Logger *slog.Logger

	db *bolt.DB
	// writes says whether write transactions fail; see WriteFailing.
	writes writeHealth
	// ids turns sequences into wire IDs and back; set by Open.
	ids *idCodec

	// aliases caches the links redirects look up; see aliasCache.
	aliases aliasCache
	// creations gathers concurrent link creations into shared commits;
	// see creationBatch.
	creations creationBatch
	// domains holds the verified custom domains requests are routed by;
	// see domainCache.
	domains domainCache

	// usageMu guards pending and flushing. pending holds key uses counted
	// since the last flush began; flushing holds the uses a running flush
	// is writing (never mutated once set), and flushTxID the id of the
	// flush's write transaction once it is known (0 before).
	usageMu   sync.Mutex
	pending   map[uint64]keyUsage
	flushing  map[uint64]keyUsage
	flushTxID atomic.Uint64
	// flushMu lets one flush run at a time.
	flushMu sync.Mutex

	stop chan struct{}
	done chan struct{}

	// failUsageWrite, when set by a test, makes the usage write fail.
	failUsageWrite func() error
	// afterBackgroundFlush, when set by a test before Open, is called after
	// each flush of the background loop.
	afterBackgroundFlush func(error)
}

// NewDB returns a DB for the data file at path; call Open next.
func NewDB(path string) *DB {
	return &DB{Path: path, Now: time.Now}
}

// Open opens (or creates) the data file, creates every bucket, records the
// schema version of a new file, refuses a file of a newer schema, and
// starts the background flush of key usage. A file held by another process
// fails after one second with an error matching ErrLocked; a damaged file
// (empty, truncated, overwritten; see inspectDataFile) fails with an error
// matching ErrDamaged, before anything is written to it.
func (db *DB) Open() error {
	if db.Path == "" {
		return errors.New("storage: data file path required")
	}
	if db.db != nil {
		return errors.New("storage: data file already open")
	}
	if db.Now == nil {
		db.Now = time.Now
	}
	if err := os.MkdirAll(filepath.Dir(db.Path), 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	if err := db.inspect(); err != nil {
		return err
	}
	bdb, ids, err := openBolt(db.Path, db.logger())
	if err != nil {
		return err
	}
	db.db, db.ids = bdb, ids
	db.creations.mu.Lock()
	db.creations.closed = false // a DB closed before opens again
	db.creations.mu.Unlock()
	codecs.Store(bdb, ids)
	db.removeBackupLeftovers()
	bdb.MaxBatchDelay = DefaultBatchDelay
	if db.BatchDelay > 0 {
		bdb.MaxBatchDelay = db.BatchDelay
	}
	db.startKeyUsageFlush()
	return nil
}

// inspect runs the start-up check of the data file: a damaged file is an
// error, a damaged header page a warning.
func (db *DB) inspect() error {
	warning, err := inspectDataFile(db.Path)
	if err != nil {
		return err
	}
	if warning != "" {
		// Start all the same: the other header page is whole, a backup is
		// older still, and after a crash in the middle of a commit this
		// is the designed way back (see docs/operations.md, "A damaged data
		// file").
		db.logger().Warn("data file " + db.Path + ": " + warning +
			"; restore a backup only if it is newer than that transaction; `linkbolt check` says more")
	}
	return nil
}

// openBolt opens the bbolt file at path, creates or upgrades its schema
// (the click counters and the search index of an older file included),
// loads its ID codec and counts its webhook outbox. A fault on a damaged
// file is an error matching ErrDamaged, a file held by another process
// one matching ErrLocked.
func openBolt(path string, log *slog.Logger) (*bolt.DB, *idCodec, error) {
	var bdb *bolt.DB
	var ids *idCodec
	err := catchDamage(path, func() error {
		var err error
		bdb, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if errors.Is(err, berrors.ErrTimeout) {
			return &lockedError{path: path}
		} else if err != nil {
			return fmt.Errorf("open data file %s: %w", path, err)
		}
		if err := bdb.Update(func(tx *bolt.Tx) error {
			if err := initSchema(tx, path); err != nil {
				return err
			}
			var err error
			ids, err = loadIDCodec(tx)
			return err
		}); err != nil {
			_ = bdb.Close() // the schema error is the one worth reporting
			return err
		}
		if _, err := moveLinkCounters(bdb); err != nil {
			_ = bdb.Close()
			return err
		}
		if _, err := upgradeLinkRecords(bdb, log); err != nil {
			_ = bdb.Close()
			return err
		}
		if err := buildSearchIndex(bdb, log); err != nil {
			_ = bdb.Close()
			return err
		}
		if err := countOutbox(bdb); err != nil {
			_ = bdb.Close()
			return fmt.Errorf("count webhook outbox: %w", err)
		}
		return nil
	})
	if err != nil {
		if bdb != nil && errors.Is(err, ErrDamaged) {
			_ = bdb.Close() // a fault after bolt.Open must not keep the lock and the map
		}
		return nil, nil, err
	}
	return bdb, ids, nil
}

// removeBackupLeftovers removes the spool files of a crashed backup and
// the copies of a crashed restore. Holding the file, this process is the
// only one that could be spooling a backup beside it, and no restore is
// under way (it would hold the file): what is there was left by a crash.
func (db *DB) removeBackupLeftovers() {
	if removed, err := RemoveBackupLeftovers(filepath.Dir(db.Path)); err != nil {
		db.logger().Warn("could not remove a crashed backup's spool file", "err", err)
	} else if len(removed) > 0 {
		db.logger().Info("removed the spool files a crashed backup left behind", "files", removed)
	}
	if removed, err := RemoveRestoreLeftovers(db.Path); err != nil {
		db.logger().Warn("could not remove a crashed restore's copy", "err", err)
	} else if len(removed) > 0 {
		db.logger().Info("removed the copies a crashed restore left behind", "files", removed)
	}
}

// startKeyUsageFlush starts the goroutine that writes API key usage every
// KeyUsageFlush; Close stops it.
func (db *DB) startKeyUsageFlush() {
	db.usageMu.Lock()
	if db.pending == nil {
		db.pending = make(map[uint64]keyUsage)
	}
	db.usageMu.Unlock()

	interval := db.KeyUsageFlush
	if interval <= 0 {
		interval = DefaultKeyUsageFlush
	}
	db.stop, db.done = make(chan struct{}), make(chan struct{})
	go db.flushLoop(interval, db.stop, db.done)
}

// initSchema checks the recorded schema version and creates every bucket.
func initSchema(tx *bolt.Tx, path string) error {
	var version uint64
	if meta := tx.Bucket(bucketMeta); meta != nil {
		if v := meta.Get(metaSchemaVersion); v != nil {
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return fmt.Errorf("data file %s: unreadable schema version %q", path, v)
			}
			version = n
		}
	}
	if version > SchemaVersion {
		return fmt.Errorf("data file %s has schema version %d, newer than this linkbolt supports (%d): upgrade linkbolt to open it", path, version, SchemaVersion)
	}
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	// Migrations from older versions go here, one step at a time. Version 1
	// is the first, so a file without a version is new.
	if version == 1 {
		if err := recordLegacyIDs(tx); err != nil {
			return err
		}
	}
	if version < SchemaVersion {
		v := []byte(strconv.Itoa(SchemaVersion))
		if err := tx.Bucket(bucketMeta).Put(metaSchemaVersion, v); err != nil {
			return fmt.Errorf("record schema version: %w", err)
		}
	}
	return nil
}

// Close writes the key usage still in memory and closes the file. Closing
// a closed DB does nothing.
func (db *DB) Close() error {
	if db.db == nil {
		return nil
	}
	db.closeCreations()
	close(db.stop)
	<-db.done
	flushErr := db.FlushKeyUsage()
	codecs.Delete(db.db)
	forgetOutbox(db.db)
	closeErr := db.db.Close()
	db.db = nil
	if flushErr != nil {
		flushErr = fmt.Errorf("flush key usage: %w", flushErr)
	}
	return errors.Join(flushErr, closeErr)
}

func (db *DB) flushLoop(interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			// A damaged page is logged, not a crash of the server.
			err := catchDamage(db.Path, db.FlushKeyUsage)
			if err != nil {
				// The uses were put back and are written by the next flush.
				db.logger().Error("flush key usage", "err", err)
			}
			if db.afterBackgroundFlush != nil {
				db.afterBackgroundFlush(err)
			}
		}
	}
}

func (db *DB) logger() *slog.Logger {
	if db.Logger != nil {
		return db.Logger
	}
	return slog.Default()
}

func (db *DB) now() time.Time { return db.Now().UTC() }

// Ping reads the meta bucket, proving the file is open and readable.
func (db *DB) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if db.db == nil {
		return errors.New("storage: data file not open")
	}
	return db.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta).Get(metaSchemaVersion) == nil {
			return errors.New("storage: schema version missing")
		}
		return nil
	})
}

// WriteBackup writes a consistent copy of the whole data file to w while
// the database stays in use, and returns the number of bytes written.
func (db *DB) WriteBackup(w io.Writer) (int64, error) {
	return db.StreamBackup(func(int64) (io.Writer, error) { return w, nil })
}

// StreamBackup is WriteBackup for callers that must announce the size
// first (an HTTP Content-Length): start is called with the exact number of
// bytes that will be written and returns the writer.
func (db *DB) StreamBackup(start func(size int64) (io.Writer, error)) (int64, error) {
	var n int64
	err := db.db.View(func(tx *bolt.Tx) error {
		w, err := start(tx.Size())
		if err != nil {
			return err
		}
		n, err = tx.WriteTo(w)
		if err != nil {
			return fmt.Errorf("write backup: %w", err)
		}
		return nil
	})
	return n, err
}

// JWTSecret returns the secret stored in the file, or stores generate()
// the first time and returns it, so tokens survive restarts.
func (db *DB) JWTSecret(generate func() []byte) ([]byte, error) {
	var secret []byte
	err := db.db.View(func(tx *bolt.Tx) error {
		secret = cloneBytes(tx.Bucket(bucketMeta).Get(metaJWTSecret))
		return nil
	})
	if err != nil || secret != nil {
		return secret, err
	}
	err = db.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(metaJWTSecret); v != nil { // stored since the View
			secret = cloneBytes(v)
			return nil
		}
		s := generate()
		if len(s) == 0 {
			return errors.New("storage: generated JWT secret is empty")
		}
		secret = cloneBytes(s)
		return meta.Put(metaJWTSecret, secret)
	})
	if err != nil {
		return nil, err
	}
	return secret, nil
}
