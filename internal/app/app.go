// Package app is a whole linkbolt server: it opens the store, wires the
// services into the HTTP server, serves until told to stop and stops
// without losing a click.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/dnscheck"
	"github.com/linkbolt/linkbolt/internal/clickspool"
	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/internal/version"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/linkcheck"
	"github.com/linkbolt/linkbolt/postgres"
	"github.com/linkbolt/linkbolt/server"
	"github.com/linkbolt/linkbolt/storage"
	"github.com/linkbolt/linkbolt/webhook"
)

// App is a whole linkbolt server: store, click recorder, webhook
// dispatcher and HTTP server. Tests boot it on 127.0.0.1:0 with a data file
// in t.TempDir() (see internal/apptest).
type App struct {
	cfg      *config.Config
	logger   *slog.Logger
	store    *link.Store
	recorder *analytics.Recorder
	orphans  *analytics.OrphanRecorder
	setup    *auth.Setup
	oidc     *auth.OIDC // nil: single sign-on is off
	dispatch *webhook.Dispatcher
	checker  *linkcheck.Checker
	geo      *geo
	server   *server.Server
	http     *http.Server
	listener net.Listener
	// plain serves server.http_listen when server.tls is on (the ACME
	// challenge, redirects to HTTPS); nil otherwise. See https.go.
	plain         *http.Server
	plainListener net.Listener
	https         *httpsSetup // nil: server.tls is off
	// spool is the click backlog on PostgreSQL: a file on this instance's
	// disk, next to storage.path (nil on bbolt).
	spool *clickspool.Spool
}

// New opens the store, wires the services, bootstraps the admin or
// prepares the setup link, and listens on server.listen. The store is
// opened before anything else: its events encoder needs server.base_url.
func New(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*App, error) {
	store, err := OpenStore(ctx, cfg, cfg.Storage.Path, logger)
	if err != nil {
		return nil, err
	}
	a := &App{cfg: cfg, logger: logger, store: store}
	// Start-up reads the store (the JWT secret, the admin): a damaged
	// page the open's inspection did not reach ends it with one line.
	if err := store.Data.CatchDamage(func() error { return a.wire(ctx) }); err != nil {
		if a.listener != nil {
			a.listener.Close()
		}
		if a.plainListener != nil {
			a.plainListener.Close()
		}
		if a.geo != nil {
			a.geo.db.Close()
		}
		if a.spool != nil {
			a.spool.Close()
		}
		store.Data.Close()
		return nil, err
	}
	return a, nil
}

// OpenStore opens the store cfg names, as a server and the commands use
// it: the PostgreSQL database of storage.postgres_url when it is set,
// else the bbolt file at path (storage.path, or a snapshot of it). One
// encoder writes every webhook event, in the transaction of its change:
// every service that writes events takes it here.
func OpenStore(ctx context.Context, cfg *config.Config, path string, logger *slog.Logger) (*link.Store, error) {
	events, err := webhook.NewEncoder(cfg.Server.BaseURL, cfg.Domains.Scheme)
	if err != nil {
		return nil, fmt.Errorf("server.base_url: %w", err)
	}
	if cfg.Postgres() {
		return postgres.Open(ctx, postgres.Options{URL: cfg.Storage.PostgresURL, Instance: cfg.Instance(), KeyUsageFlush: cfg.Clicks.FlushInterval,
			AliasHold: cfg.Links.AliasHold, Events: events, Logger: logger})
	}
	return storage.Open(storage.Options{Path: path, KeyUsageFlush: cfg.Clicks.FlushInterval,
		AliasHold: cfg.Links.AliasHold, Events: events, Logger: logger})
}

// SpoolPath is the click spool file of a server on PostgreSQL: in the
// folder of storage.path (which names no data file there), so each
// instance needs a storage.path of its own.
func SpoolPath(cfg *config.Config) string {
	return filepath.Join(filepath.Dir(cfg.Storage.Path), clickspool.FileName)
}

// dataName is where the data lives, for the log: the bbolt file, or the
// database with its password hidden.
func (a *App) dataName() string {
	if a.cfg.Postgres() {
		return postgres.Redacted(a.cfg.Storage.PostgresURL)
	}
	return a.cfg.Storage.Path
}

// storeName names where the data lives in /healthz's reasons.
func (a *App) storeName() string {
	if a.cfg.Postgres() {
		return "the database"
	}
	return "the data file"
}

func (a *App) wire(ctx context.Context) error {
	cfg, store := a.cfg, a.store
	secret := []byte(cfg.Auth.JWTSecret)
	if len(secret) == 0 {
		var err error
		if secret, err = store.Data.JWTSecret(auth.NewSecret); err != nil {
			return fmt.Errorf("jwt secret: %w", err)
		}
	}
	a.dispatch = &webhook.Dispatcher{Store: store.Webhooks, Now: time.Now,
		Client: webhook.NewClient(cfg.Webhooks.AllowPrivate), Logger: a.logger}
	a.checker = &linkcheck.Checker{Store: store.LinkChecks, Client: webhook.NewClient(cfg.LinkChecks.AllowPrivate),
		Config: linkcheck.Config{Interval: cfg.LinkChecks.Interval, RetryInterval: cfg.LinkChecks.RetryInterval,
			Concurrency: cfg.LinkChecks.Concurrency, HostGap: cfg.LinkChecks.HostGap, Timeout: cfg.LinkChecks.Timeout,
			Poll: cfg.LinkChecks.Poll},
		UserAgent: "linkbolt/" + version.String() + " (destination check; +" + cfg.Server.BaseURL.String() + ")",
		Now:       time.Now, Logger: a.logger}
	countries, err := openGeo(cfg, a.logger)
	if err != nil {
		return err
	}
	a.geo = countries
	clicks := damageSafeClicks{store.Clicks, store.Data}
	a.recorder = analytics.NewRecorder(clicks, cfg.Clicks.FlushInterval, cfg.Clicks.QueueSize, a.logger)
	a.recorder.SetQueueBytes(cfg.Clicks.QueueBytes)
	a.recorder.SetEnrich(analytics.Enricher(analytics.NewClassifier(countries.db), store.Clicks))
	a.orphans = analytics.NewOrphanRecorder(store.Orphans, analytics.NewClassifier(countries.db),
		cfg.Analytics.OrphanVisitsPerHour, cfg.Clicks.FlushInterval, a.logger)
	// With clicks.backlog_bytes 0 the backlog takes no click, but what an
	// earlier run left there is still drained.
	var backlog analytics.Backlog = clicks
	if cfg.Postgres() {
		// On PostgreSQL the backlog is a spool file on this instance's
		// own disk, which takes clicks while the database is down and
		// keeps them over a kill; it drains the database's shared backlog
		// table first while that has clicks (see internal/clickspool).
		sink, ok := store.Clicks.(clickspool.Sink)
		if !ok {
			return fmt.Errorf("click spool: the store cannot replay spooled clicks")
		}
		spool, err := clickspool.Open(ctx, SpoolPath(cfg), sink, clicks)
		if err != nil {
			return err
		}
		a.spool, backlog = spool, spool
		a.recorder.SetBacklogApart(true)
	}
	if err := a.recorder.SetBacklog(ctx, backlog, cfg.Clicks.BacklogBytes); err != nil {
		return fmt.Errorf("click backlog: %w", err)
	}
	// Listening first tells the server its real port (server.listen may
	// say :0), which destinations must not point back into.
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Server.Listen, err)
	}
	if err := a.serve(ctx, ln, secret); err != nil {
		ln.Close()
		return err
	}
	return nil
}

// serve builds the HTTP server over the wired services on ln, with the
// JWT secret, puts HTTPS on it when server.tls is on, and bootstraps the
// admin.
func (a *App) serve(ctx context.Context, ln net.Listener, secret []byte) error {
	cfg, store := a.cfg, a.store
	a.oidc = newOIDC(cfg)
	a.setup = &auth.Setup{Users: store.Users, Passwords: auth.Passwords{Cost: cfg.Auth.PasswordCost},
		Plan: link.Plan(cfg.Workspaces.DefaultPlan), Now: time.Now}
	sessions, err := auth.LoadSessions(ctx, store.Accounts, time.Now)
	if err != nil {
		return fmt.Errorf("load sessions: %w", err)
	}
	srv, err := server.New(server.Config{
		Listen: ln.Addr().String(), BaseURL: cfg.Server.BaseURL, AltBaseURL: cfg.Server.AltBaseURL, MaxBody: cfg.Server.MaxBody,
		KeyPrefix: cfg.Auth.KeyPrefix, TokenTTL: cfg.Auth.TokenTTL, RotationGrace: cfg.Auth.RotationGrace,
		InvitationTTL: cfg.Auth.InvitationTTL,
		Plans: map[link.Plan]int{
			link.PlanFree: cfg.Plans.Free, link.PlanPro: cfg.Plans.Pro, link.PlanEnterprise: cfg.Plans.Enterprise,
		},
		DefaultPlan: link.Plan(cfg.Workspaces.DefaultPlan), BehindProxy: cfg.Server.BehindProxy,
		LoginPerIP: cfg.Auth.LoginPerIP, LoginPerAddress: cfg.Auth.LoginPerAddress, LoginWindow: cfg.Auth.LoginWindow,
		LoginPerAccount: cfg.Auth.LoginPerAccount, LoginMaxDelay: cfg.Auth.LoginMaxDelay,
		MaxKeysPerWorkspace: cfg.Keys.MaxPerWorkspace, MaxWorkspacesPerUser: cfg.Workspaces.MaxPerUser,
		DomainScheme: cfg.Domains.Scheme, DomainUnverifiedTTL: cfg.Domains.UnverifiedTTL,
		CostlyConcurrency: server.ReserveCostlyProcs(cfg.Server.CostlyConcurrency), CostlyWait: cfg.Server.CostlyWait,
		SearchScanLimit: cfg.Server.SearchScanLimit, MaxConnections: cfg.Server.MaxConnections,
		CORSOrigins: cfg.Server.CORSOrigins,
		UnlockTTL:   cfg.Links.UnlockTTL, NoRobotsTxt: !cfg.Links.RobotsTxt,
		BlocklistPath: cfg.Links.BlocklistPath, BlocklistPoll: cfg.Links.BlocklistPoll,
		StoreName:  a.storeName(),
		CompatKutt: cfg.Compat.Kutt,
		Instance:   a.cfg.Instance(), LabelMetrics: a.cfg.NamesInstance(),
		UntrackedIPs: cfg.UntrackedRanges(), UntrackedParam: cfg.Analytics.UntrackedParam,
		OrphanRetention: cfg.Analytics.OrphanRetention,
	}, server.Deps{
		DB: store.Data, Links: store.Links, Keys: store.Keys,
		Users: store.Users, Workspaces: store.Workspaces,
		Clicks: store.Clicks, Campaigns: store.Campaigns, QRCodes: store.QRCodes, UTMTemplates: store.UTMTemplates, Tags: store.Tags, AbuseReports: store.AbuseReports,
		Webhooks: store.Webhooks, Outbox: store.Webhooks, Dispatcher: a.dispatch, Recorder: a.recorder,
		Orphans: a.orphans, OrphanStore: store.Orphans,
		DomainVerifier: dnscheck.NewDomains(cfg.Domains.Resolver),
		WebhookTargets: webhook.TargetGuard{AllowPrivate: cfg.Webhooks.AllowPrivate}, Setup: a.setup,
		Members: store.Members, Invitations: store.Invitations,
		Domains: store.Domains, Audit: store.Audit, RateBudget: store.RateBudget, ClickFeed: store.ClickFeed,
		LinkChecks: store.LinkChecks,
		Blocklist:  store.Blocklist,
		Imports:    store.Imports, ImportClient: webhook.NewClient(cfg.Webhooks.AllowPrivate),
		Accounts: store.Accounts, Callers: store.Callers,
		Sessions:  sessions,
		JWT:       &auth.JWT{Secret: secret, TTL: cfg.Auth.TokenTTL, Now: time.Now},
		Passwords: auth.Passwords{Cost: cfg.Auth.PasswordCost},
		Logger:    a.logger, Now: time.Now,
		OIDC: a.oidc,
		Geo:  a.geo.db,
	})
	if err != nil {
		return err
	}
	a.server = srv
	// HTTPS before the bootstrap: a pair that does not load or a taken
	// server.http_listen ends start-up before the file gets an admin or
	// a setup link is logged.
	if err := a.listenHTTPS(&ln); err != nil {
		return err
	}
	if err := a.bootstrap(ctx); err != nil {
		return err
	}
	a.listener = srv.Listener(ln)
	a.http = srv.HTTPServer(cfg.Server.Listen)
	return nil
}

// bootstrap creates the admin from the configuration on a fresh data file,
// or logs the one-time setup link when no admin is configured.
func (a *App) bootstrap(ctx context.Context) error {
	if a.cfg.Admin.Email != "" {
		_, err := a.setup.Bootstrap(ctx, a.cfg.Admin.Email, a.cfg.Admin.Password, "Default")
		switch link.ErrorCode(err) {
		case "":
			a.logger.Info("created the instance admin and the Default workspace", "email", a.cfg.Admin.Email)
			return nil
		case link.ECONFLICT:
			// Set up already: the configured admin changes nothing, and
			// says so (a changed password would otherwise seem ignored).
			a.logger.Info("admin.email and admin.password are ignored: the instance has its admin already (change a password on the dashboard's Account page or with `linkbolt users reset-password`)",
				"email", a.cfg.Admin.Email)
			return nil
		}
		return fmt.Errorf("creating the admin: %w", err)
	}
	setup, err := a.server.PrepareSetup(ctx)
	if err != nil {
		return err
	}
	if setup != "" {
		a.logger.Warn("no admin yet: open the one-time setup link to create one", "url", setup)
	}
	return nil
}

// Addr returns the address the server listens on.
func (a *App) Addr() string { return a.listener.Addr().String() }

// Run serves until ctx ends, then stops gracefully: no new connections,
// requests in flight finish, clicks and key counters are written, the
// data file is closed.
func (a *App) Run(ctx context.Context) error {
	a.recorder.Start()
	a.orphans.Start()
	pruneCtx, stopPrune := context.WithCancel(context.Background())
	pruned := make(chan struct{})
	go func() { defer close(pruned); a.pruneLoop(pruneCtx) }()
	dispatched := make(chan struct{})
	go func() { defer close(dispatched); a.dispatch.Run(pruneCtx) }()
	checked := make(chan struct{})
	go func() { defer close(checked); a.checker.Run(pruneCtx) }()
	discovered := make(chan struct{})
	go func() { defer close(discovered); a.discoverOIDC(pruneCtx) }()
	geoWatched := make(chan struct{})
	go func() { defer close(geoWatched); a.geo.run(pruneCtx) }()
	errc := make(chan error, 2)
	go func() { errc <- a.http.Serve(a.listener) }()
	if a.plain != nil {
		go func() { errc <- a.plain.Serve(a.plainListener) }()
		a.logger.Info("serving HTTPS; plain HTTP redirects to it (and answers the ACME challenge with tls: acme)", "tls", a.cfg.Server.TLS,
			"http_listen", a.plainListener.Addr().String())
	}
	attrs := []any{"version", version.String(), "listen", a.Addr(), "base_url", a.cfg.Server.BaseURL.String(), "data", a.dataName()}
	if h, ok := a.store.Data.(interface{ Holder() string }); ok {
		// The name this process holds leases and webhook claims under.
		attrs = append(attrs, "holder", h.Holder())
	}
	a.logger.Info("linkbolt is serving", attrs...)
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	a.logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), a.cfg.Server.ShutdownTimeout)
	defer cancel()
	// Both servers drain at once, within the one timeout; what is still
	// running after it is cut off before the data file closes.
	plainDone := make(chan struct{})
	go func() {
		defer close(plainDone)
		if a.plain != nil && a.plain.Shutdown(sctx) != nil {
			a.plain.Close()
		}
	}()
	if err := a.http.Shutdown(sctx); err != nil {
		a.logger.Error("shutdown: requests still running after server.shutdown_timeout are cut off", "err", err)
		a.http.Close()
	}
	<-plainDone
	stopPrune()
	<-pruned
	<-dispatched // a delivery cut off here is sent again after a restart
	<-checked    // a check cut off here is made again after its lease
	<-discovered
	<-geoWatched
	errs := []error{}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		errs = append(errs, serveErr)
	}
	// The last clicks are written whatever the shutdown timeout left: a
	// graceful stop loses none.
	if err := a.recorder.Close(context.WithoutCancel(sctx)); err != nil {
		errs = append(errs, fmt.Errorf("writing the last clicks: %w", err))
	}
	if err := a.orphans.Close(context.WithoutCancel(sctx)); err != nil {
		errs = append(errs, fmt.Errorf("writing the last orphan visits: %w", err))
	}
	if a.spool != nil { // after the recorder, which spills into it
		if err := a.spool.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the click spool: %w", err))
		}
	}
	a.geo.db.Close()
	a.https.close() // before the data file: autocert writes from goroutines of its own
	if err := a.store.Data.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the data file: %w", err))
	}
	if len(errs) == 0 {
		a.logger.Info("stopped cleanly", "clicks_written", a.recorder.Written())
	}
	return errors.Join(errs...)
}

// newOIDC returns single sign-on as auth.oidc configures it, or nil when
// auth.oidc.issuer is empty.
func newOIDC(cfg *config.Config) *auth.OIDC {
	o := cfg.Auth.OIDC
	if o.Issuer == "" {
		return nil
	}
	return &auth.OIDC{Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		RedirectURL:    cfg.Server.BaseURL.String() + "/v1/auth/oidc/callback",
		AllowedDomains: o.AllowedDomains, AutoCreate: o.AutoCreate, Now: time.Now}
}

// discoverOIDC reads the provider's discovery document once at start, in
// the background: a provider that is down never stops linkbolt from
// starting. Until it is read, each sign-in tries again (at most every 5 s)
// and answers 503 while it fails.
func (a *App) discoverOIDC(ctx context.Context) {
	if a.oidc == nil {
		return
	}
	if err := a.oidc.Discover(ctx); err != nil {
		if ctx.Err() == nil {
			a.logger.Warn("single sign-on: the OpenID Connect provider cannot be reached; sign-ins through it answer 503 and retry discovery until it can",
				"issuer", a.oidc.Issuer, "err", err)
		}
		return
	}
	a.logger.Info("single sign-on: found the OpenID Connect provider", "issuer", a.oidc.Issuer,
		"redirect_uri", a.oidc.RedirectURL)
}

// deliveryRetention is how long finished webhook deliveries stay in the
// delivery log.
const deliveryRetention = 30 * 24 * time.Hour

// upkeepPeriod is how often pruneLoop runs Upkeep.
const upkeepPeriod = time.Hour

// pruneLoop runs Upkeep at start and then every hour, until ctx ends.
func (a *App) pruneLoop(ctx context.Context) {
	t := time.NewTicker(upkeepPeriod)
	defer t.Stop()
	for {
		a.Upkeep(ctx, time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Upkeep does the store's hourly work as of now: it deletes raw clicks
// older than analytics.retention, per-link hourly analytics older than
// analytics.link_hours_retention, old webhook deliveries, ended alias
// holds, full rate budgets (PostgreSQL) and audit entries older than
// audit.retention, and records the API keys whose grace or expiry ended.
// Tests call it with a moved clock.
//
// On a database several instances share, each job runs on one of them an
// hour: the first to take the job's lease (see Leaser); the others skip
// it until the lease ends, and one of them takes it over then if its
// holder died.
func (a *App) Upkeep(ctx context.Context, now time.Time) {
	if n := a.upkeep(ctx, now, "prune-clicks", "pruning old clicks", func() (int, error) {
		return a.store.Clicks.PruneClicks(ctx, now.Add(-a.cfg.Analytics.Retention))
	}); n > 0 {
		a.logger.Info("pruned raw clicks past the retention", "clicks", n, "retention", a.cfg.Analytics.Retention)
	}
	if r := a.cfg.Analytics.LinkHoursRetention; r > 0 {
		if n := a.upkeep(ctx, now, "roll-up-link-hours", "rolling up link hours", func() (int, error) {
			return a.store.Clicks.RollUpLinkHours(ctx, now.Add(-r))
		}); n > 0 {
			a.logger.Info("rolled per-link hourly analytics up into days", "hours", n, "link_hours_retention", r)
		}
	}
	if n := a.upkeep(ctx, now, "prune-orphan-visits", "pruning old orphan visits", func() (int, error) {
		return a.store.Orphans.PruneOrphanVisits(ctx, now.Add(-a.cfg.Analytics.OrphanRetention))
	}); n > 0 {
		a.logger.Info("pruned orphan visits past their retention", "visits", n, "retention", a.cfg.Analytics.OrphanRetention)
	}
	a.upkeep(ctx, now, "prune-deliveries", "pruning old webhook deliveries", func() (int, error) {
		return a.store.Webhooks.PruneDeliveries(ctx, now.Add(-deliveryRetention))
	})
	a.upkeep(ctx, now, "prune-alias-holds", "pruning ended alias holds", func() (int, error) { return a.store.Links.PruneAliasHolds(ctx, now) })
	if b := a.store.RateBudget; b != nil {
		// A budget full for a minute is as good as none; the minute covers
		// instances whose clocks run behind this one's.
		a.upkeep(ctx, now, "prune-rate-budgets", "pruning full rate budgets", func() (int, error) { return b.PruneRateBudgets(ctx, now.Add(-time.Minute)) })
	}
	a.pruneAudit(ctx, now)
}

// pruneAudit records the API keys whose grace period or expiry ended by
// now (key.grace_ended, key.expired) and deletes the audit entries older
// than audit.retention; Upkeep runs it every hour.
func (a *App) pruneAudit(ctx context.Context, now time.Time) {
	a.upkeep(ctx, now, "record-ended-keys", "recording ended API keys in the audit log", func() (int, error) {
		return a.store.Keys.RecordEndedKeys(ctx, now)
	})
	if n := a.upkeep(ctx, now, "prune-audit", "pruning old audit entries", func() (int, error) {
		return a.store.Audit.PruneAudit(ctx, now.Add(-a.cfg.Audit.Retention))
	}); n > 0 {
		a.logger.Info("pruned audit entries past the retention", "entries", n, "retention", a.cfg.Audit.Retention)
	}
}

// Leaser is what a store shared by several instances (PostgreSQL) does
// for the periodic jobs: Lease takes the lease of the job name as of now
// for period and reports whether this process holds it, and who does.
// A store of one process (bbolt) has none: its jobs always run.
type Leaser interface {
	Lease(ctx context.Context, name string, now time.Time, period time.Duration) (ok bool, holder string, err error)
}

// upkeep runs one job of pruneLoop, named name, when this instance holds
// its lease for the hour (see Leaser), and returns how many records it
// touched. A damaged page met on the way is logged as an error, not a
// crash: the server keeps serving what is readable (see docs/operations.md,
// "A damaged data file").
func (a *App) upkeep(ctx context.Context, now time.Time, name, what string, job func() (int, error)) int {
	if l, ok := a.store.Data.(Leaser); ok {
		// The lease ends a minute before the next hour's run, so that
		// the instances' clocks and tickers need not agree to the second.
		mine, holder, err := l.Lease(ctx, name, now, upkeepPeriod-time.Minute)
		if err != nil {
			if ctx.Err() == nil {
				a.logger.Error(what+" failed: its lease cannot be taken", "job", name, "err", err)
			}
			return 0
		}
		if !mine {
			a.logger.Debug(what+": another instance runs it this hour", "job", name, "holder", holder)
			return 0
		}
	}
	var n int
	err := a.store.Data.CatchDamage(func() (err error) {
		n, err = job()
		return err
	})
	if err != nil && ctx.Err() == nil {
		a.logger.Error(what+" failed", "err", err)
		return 0
	}
	return n
}

// damageSafeClicks writes the recorder's batches so that a damaged page of
// the data file met on the way fails the write (the batch is held and
// retried, health says writes fail) instead of crashing the server.
type damageSafeClicks struct {
	link.ClickStore
	data link.StoreData
}

func (c damageSafeClicks) RecordClicks(ctx context.Context, clicks []link.Click) (skipped int, err error) {
	err = c.data.CatchDamage(func() (err error) {
		skipped, err = c.ClickStore.RecordClicks(ctx, clicks)
		return err
	})
	return skipped, err
}

func (c damageSafeClicks) SpillClicks(ctx context.Context, clicks []link.Click, limit int64) (spilled, skipped int, err error) {
	err = c.data.CatchDamage(func() (err error) {
		spilled, skipped, err = c.ClickStore.SpillClicks(ctx, clicks, limit)
		return err
	})
	return spilled, skipped, err
}

func (c damageSafeClicks) DrainClicks(ctx context.Context, max int) (taken, skipped int, err error) {
	err = c.data.CatchDamage(func() (err error) {
		taken, skipped, err = c.ClickStore.DrainClicks(ctx, max)
		return err
	})
	return taken, skipped, err
}
