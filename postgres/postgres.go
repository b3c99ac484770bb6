// Package postgres is linkbolt's store on PostgreSQL (13 or newer, and
// the engines that speak its protocol): the services of link.Store over a
// pgx connection pool, with the schema migrated at start from the SQL
// embedded in the binary.
package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/linkbolt/linkbolt/internal/faultlog"
	"github.com/linkbolt/linkbolt/link"
)

// Options configure a PostgreSQL store.
type Options struct {
	// URL is the database (storage.postgres_url): a libpq URL such as
	// postgres://linkbolt:secret@db.example:5432/linkbolt.
	URL string
	// Now is the store's clock; nil is time.Now.
	Now func() time.Time
	// AliasHold is how long a freed alias stays held for its workspace
	// (links.alias_hold).
	AliasHold time.Duration
	// Events encodes the webhook events that changes write in their own
	// transaction; nil writes none.
	Events link.EventEncoder
	// KeyUsageFlush is how often API keys' last use and counts are written
	// (0: DefaultKeyUsageFlush).
	KeyUsageFlush time.Duration
	Logger        *slog.Logger
	// Instance names this process among those on the database
	// (server.instance_id), where the database records who did
	// something; empty: "linkbolt".
	Instance string
}

// DB is an open PostgreSQL store: the pool and what the services share.
type DB struct {
	pool   *pgxpool.Pool
	now    func() time.Time
	logger *slog.Logger
	url    string // redacted, for messages
	ids    *link.IDCodec
	events link.EventEncoder // nil: no webhook events
	usage  *usageBuffer      // API key uses not written yet

	// links answers redirects from memory for up to a second (see
	// redirectCache); domains keeps the table of verified domains, under
	// the key "", as long, for request routing and the redirect loop
	// check, which ask for hosts that are not domains far more often
	// than for those that are.
	links   *redirectCache[*link.Link]
	domains *redirectCache[map[string]*link.Domain]
	// aliases reads the links the cache misses, many a statement under
	// load (see aliasLoader).
	aliases *aliasLoader
	// stall is what redirects know of a database that stopped answering
	// without refusing (see readStall).
	stall readStall
	// listener hears the changes other processes make (see cacheListener),
	// started by the first read of a cache (listenOnce): a process that
	// never serves a redirect (a command) holds no connection for it.
	// instance names this process in what it tells them: random, so
	// that two processes configured with one server.instance_id still
	// hear each other. name is server.instance_id, for people (the
	// connections' application_name says it too).
	listener   *cacheListener
	listenOnce sync.Once
	// clickWatch is what the other processes stream (click_feed.go).
	clickWatch clickWatch
	instance   string
	name       string
	// blocklistVersion moves with each change of the blocklist made or
	// heard here (see BlocklistService.BlocklistVersion).
	blocklistVersion atomic.Uint64
	// tookOver is set once the webhook claims of an earlier process of
	// this name are ended (takeOverClaims).
	tookOver atomic.Bool

	// analyze keeps the links table's planner statistics fresh after
	// bulk loads (see linksAdded).
	analyze analyzer

	mu           sync.Mutex
	failingSince time.Time // zero: writes work
	// writeLog logs an episode of failing writes once, not per write.
	writeLog *faultlog.Log
	secret   string // the URL's password, taken out of logged errors
}

// linksChanged makes the links redirects read from memory stale, those of
// keys (aliasLockKey): a link's update or deletion calls it once its
// transaction ended, committed or not (a commit cut off may have
// happened), and notifies the other processes in the transaction
// (notifyCache). A change that could alter any link (a campaign's UTM
// values) calls linksAllChanged.
func (db *DB) linksChanged(keys ...string) {
	for _, k := range keys {
		db.links.invalidateKey(k)
	}
}

// linksAllChanged makes every link redirects read from memory stale.
func (db *DB) linksAllChanged() { db.links.invalidate() }

// domainsChanged does the same for the table of verified domains.
func (db *DB) domainsChanged() { db.domains.invalidate() }

// Open connects to the database of o.URL, migrates its schema and returns
// the store over it. Errors never hold the URL's password.
func Open(ctx context.Context, o Options) (*link.Store, error) {
	db, err := OpenDB(ctx, o)
	if err != nil {
		return nil, err
	}
	return db.Store(o), nil
}

// OpenDB connects and migrates, and returns the database without its
// services (Store builds them).
func OpenDB(ctx context.Context, o Options) (*DB, error) {
	redacted := Redacted(o.URL)
	cfg, err := poolConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("storage.postgres_url %s: %s", redacted, redactErr(err, o.URL))
	}
	// Each instance's connections say whose they are in pg_stat_activity,
	// unless the URL names them.
	if _, set := cfg.ConnConfig.RuntimeParams["application_name"]; !set && o.Instance != "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "linkbolt " + o.Instance
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, openError(redacted, err, o.URL)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, openError(redacted, err, o.URL)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, openError(redacted, err, o.URL)
	}
	ids, err := loadIDCodec(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, openError(redacted, err, o.URL)
	}
	db := &DB{pool: pool, now: o.Now, logger: o.Logger, url: redacted, ids: ids, events: o.Events, usage: newUsageBuffer()}
	if db.now == nil {
		db.now = time.Now
	}
	db.links, db.domains = newRedirectCache[*link.Link](db.now), newRedirectCache[map[string]*link.Domain](db.now)
	// Half the pool's connections read links at most, the rest are left
	// to the API and the click writer.
	db.aliases = newAliasLoader(db, int(pool.Config().MaxConns)/2)
	if db.logger == nil {
		db.logger = slog.Default()
	}
	db.secret = password(o.URL)
	db.instance = rand.Text()[:12]
	db.name = o.Instance
	if db.name == "" {
		db.name = "linkbolt"
	}
	db.writeLog = &faultlog.Log{Logger: db.logger, Now: db.now}
	return db, nil
}

// Migrate brings the schema of the database at url up to this linkbolt's
// and leaves it, as a start would: for a database made ahead of its first
// server (the tests' template database).
func Migrate(ctx context.Context, url string) error {
	db, err := OpenDB(ctx, Options{URL: url})
	if err != nil {
		return err
	}
	return db.Close()
}

// Store returns the services over db, configured by o (its URL is not
// read here).
func (db *DB) Store(o Options) *link.Store {
	users := &UserService{db}
	links := newLinkService(db, o.AliasHold)
	db.startKeyUsageFlush(o.KeyUsageFlush)
	return &link.Store{
		Data:         db,
		Users:        users,
		Accounts:     users,
		Workspaces:   &WorkspaceService{db},
		Members:      &MemberService{db},
		Invitations:  &InvitationService{db},
		Keys:         &KeyService{db},
		Audit:        &AuditService{db},
		Blocklist:    &BlocklistService{db},
		Certs:        &CertStore{db},
		Webhooks:     &WebhookService{db},
		Campaigns:    &CampaignService{db},
		Links:        links,
		Domains:      &DomainService{db},
		Clicks:       &ClickService{db},
		QRCodes:      &QRCodeService{db},
		UTMTemplates: &UTMTemplateService{db},
		Tags:         &TagService{db},
		AbuseReports: &AbuseReportService{db},
		Orphans:      &OrphanVisitService{db},
		Imports:      &ImportService{links: links},
		Callers:      &callerFinder{keys: &KeyService{db}},
		RateBudget:   &RateBudget{db},
		ClickFeed:    db,
		LinkChecks:   &LinkCheckService{db},
	}
}

// Redacted is the URL u with its password hidden, for logs and errors.
func Redacted(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(a storage.postgres_url that does not parse as a URL)"
	}
	return p.Redacted()
}

// redactErr is err's message with the URL's password taken out, should
// the driver have quoted it.
func redactErr(err error, u string) string { return withoutPassword(err, password(u)) }

// password is the password of the URL u, "" for none.
func password(u string) string {
	if p, err := url.Parse(u); err == nil {
		pw, _ := p.User.Password()
		return pw
	}
	return ""
}

// withoutPassword is err's message with pw taken out.
func withoutPassword(err error, pw string) string {
	msg := err.Error()
	if pw != "" {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
	}
	return msg
}

// tx runs fn in a transaction and notes whether writes work: an error
// that is not the domain's (a lost connection, a full disk, a timeout)
// marks them failing until a transaction commits again. fn's transaction
// is a *writeTx, which writes what it gathered (the outbox's depth) just
// before the commit.
func (db *DB) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	err := runTx(ctx, db.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		w := &writeTx{Tx: tx}
		if err := fn(w); err != nil {
			return err
		}
		if err := w.beforeCommit(ctx); err != nil {
			return err
		}
		return w.commit(ctx)
	})
	db.noteWrite(err)
	return err
}

// view runs fn in a read-only transaction, for reads of several
// statements that must see one state; it leaves the write health alone.
func (db *DB) view(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return runTx(ctx, db.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, fn)
}

// noteWrite records the outcome of a write for WriteFailing, and logs
// the first failure of an episode, then at most once a minute, and the
// write that ends it.
func (db *DB) noteWrite(err error) {
	infra := err != nil && link.ErrorCode(err) == link.EINTERNAL && !errors.Is(err, context.Canceled)
	db.mu.Lock()
	switch {
	case infra && db.failingSince.IsZero():
		db.failingSince = db.now()
	case err == nil:
		db.failingSince = time.Time{}
	}
	db.mu.Unlock()
	if reason, ok := unavailable(err); ok {
		db.writeLog.Fail("postgres: writes are failing; changes are answered 503 and clicks stay queued in memory",
			errors.New(db.redact(err)), "database", db.url, "reason", reason)
	} else if err == nil {
		db.writeLog.OK("postgres: writes work again", "database", db.url)
	}
}

// redact is err's message without the URL's password.
func (db *DB) redact(err error) string { return withoutPassword(err, db.secret) }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres %s: %w", db.url, err)
	}
	return nil
}

// WriteFailing reports whether writes are failing, and since when.
func (db *DB) WriteFailing() (time.Time, bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.failingSince, !db.failingSince.IsZero()
}

// errBackup answers a backup of the data file: a PostgreSQL store is
// backed up with the database's own tools.
var errBackup = link.Errorf(link.ECONFLICT, "this instance keeps its data in PostgreSQL: back it up with pg_dump (see docs/postgres.md)")

// SpoolBackup is refused: see errBackup.
func (db *DB) SpoolBackup() (io.ReadCloser, int64, error) { return nil, 0, errBackup }

// JWTSecret returns the secret stored in the database. When there is
// none it is made with generate and stored; of instances starting at once
// the first to store one wins, and every one returns that.
func (db *DB) JWTSecret(generate func() []byte) ([]byte, error) {
	secret, err := db.setting("jwt_secret", generate)
	if err != nil {
		return nil, fmt.Errorf("jwt secret: %w", err)
	}
	return secret, nil
}

// SetupToken returns the one-time token of the setup link, made with
// generate and stored by the first instance to ask, so that the link any
// instance logs works on every one behind a load balancer.
func (db *DB) SetupToken(generate func() string) (string, error) {
	tok, err := db.setting("setup_token", func() []byte { return []byte(generate()) })
	if err != nil {
		return "", fmt.Errorf("setup token: %w", err)
	}
	return string(tok), nil
}

// SetupPending reports whether a setup token is stored.
func (db *DB) SetupPending() (bool, error) {
	var pending bool
	err := db.pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM settings WHERE name = 'setup_token')`).Scan(&pending)
	if err != nil {
		return false, fmt.Errorf("setup token: %w", err)
	}
	return pending, nil
}

// EndSetup deletes the setup token: the instance is set up.
func (db *DB) EndSetup() error {
	_, err := db.pool.Exec(context.Background(), `DELETE FROM settings WHERE name = 'setup_token'`)
	if err != nil {
		return fmt.Errorf("setup token: %w", err)
	}
	return nil
}

// setting returns the value of the setting name, made with generate and
// stored when there is none (the first of instances asking at once wins).
func (db *DB) setting(name string, generate func() []byte) ([]byte, error) {
	ctx := context.Background()
	var value []byte
	err := db.tx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&value)
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, generate()); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&value)
	})
	return value, err
}

// CatchDamage runs fn: a database server keeps its own pages sound.
func (db *DB) CatchDamage(fn func() error) error { return fn() }

// Close writes the key usage still in memory and closes the pool.
func (db *DB) Close() error {
	db.stopListening()
	db.stopAnalyze()
	err := db.closeKeyUsage()
	db.pool.Close()
	return err
}

// isUnique reports whether err is a unique violation (of constraint name,
// when name is not "").
func isUnique(err error, name string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && (name == "" || pe.ConstraintName == name)
}
