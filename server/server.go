// Package server is linkbolt's HTTP face: routing, the authentication
// pipeline, handlers for the JSON API and the simple API, public redirects,
// error answers and the embedded OpenAPI document. It is the only package
// that knows HTTP, and it does nothing but HTTP: the data file, DNS checks,
// the admin's setup and webhook events are the link interfaces of Deps,
// which internal/app wires to a store (link.Store), dnscheck, auth and webhook.
package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/dashboard"
	"github.com/linkbolt/linkbolt/internal/faultlog"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/webhook"
	"github.com/linkbolt/linkbolt/wire"
)

// Config is what the server needs from the configuration file.
type Config struct {
	// CompatKutt answers Kutt's API v2 under /api/v2 (compat.kutt).
	CompatKutt bool
	// Listen is the address the server listens on (server.listen): its
	// port on this machine's addresses is this service, which
	// destinations must not point back into. Empty when unknown.
	Listen string
	// BaseURL is the public URL of this server (server.base_url) and
	// AltBaseURL an alternate one, nil when there is none: http(s), a
	// host, no path, as the configuration checks them.
	BaseURL       *url.URL
	AltBaseURL    *url.URL
	MaxBody       int64
	KeyPrefix     string
	TokenTTL      time.Duration
	RotationGrace time.Duration
	// InvitationTTL is how long an invitation link works
	// (auth.invitation_ttl); 0 means DefaultInvitationTTL.
	InvitationTTL time.Duration
	// Plans maps each plan to its requests per minute; 0 means unlimited.
	Plans       map[link.Plan]int
	DefaultPlan link.Plan
	// MaxKeysPerWorkspace caps a workspace's keys that are active or in
	// grace (keys.max_per_workspace); 0 means no cap.
	MaxKeysPerWorkspace int
	// MaxWorkspacesPerUser bounds the workspaces a user may own and still
	// create one (workspaces.max_per_user; the instance admin is not
	// bound); 0 means no bound.
	MaxWorkspacesPerUser int
	// DomainUnverifiedTTL is how long an unverified claim of a hostname
	// keeps it from other workspaces (domains.unverified_ttl); 0 means for
	// ever, unless they prove control of the name.
	DomainUnverifiedTTL time.Duration
	// BehindProxy takes the client address from X-Real-IP or
	// X-Forwarded-For, set by a reverse proxy in front of linkbolt.
	BehindProxy bool
	// LoginPerIP bounds login attempts a minute from one address, to any
	// accounts.
	LoginPerIP int
	// LoginPerAddress bounds failed logins per (account, address) in
	// LoginWindow; LoginPerAccount is the failures in a row an account
	// takes, from anywhere, before addresses failing at it wait a delay that
	// doubles up to LoginMaxDelay. See auth.LoginGuard.
	LoginPerAddress int
	LoginWindow     time.Duration
	LoginPerAccount int
	LoginMaxDelay   time.Duration
	// DomainScheme is the scheme of short URLs on custom domains; empty
	// means https.
	DomainScheme string
	// CostlyConcurrency bounds the costly API requests (search, QR
	// rendering, export, analytics, backup) at work at once; 0 means half
	// the cores, at least one.
	CostlyConcurrency int
	// CostlyWait is how long a costly request waits for a free slot before
	// it is answered 503.
	CostlyWait time.Duration
	// SearchScanLimit bounds the links a filtered or click-sorted list
	// reads (search, campaign_id, domain, sort=clicks); 0 means no bound.
	SearchScanLimit int
	// MaxConnections bounds the connections open at once (see
	// Server.Listener); 0 means no bound.
	MaxConnections int
	// CORSOrigins are the origins whose browser applications may call the
	// API (server.cors_origins), as ParseCORSOrigins returns them; none
	// means no CORS headers at all.
	CORSOrigins []string

	// NoRobotsTxt answers /robots.txt 404, for a proxy in front that
	// serves its own (links.robots_txt: false).
	NoRobotsTxt bool

	// link controls: password, rules, variants, social card.
	// UnlockTTL is how long a right link password unlocks the link in a
	// browser (links.unlock_ttl); 0 means DefaultUnlockTTL.
	UnlockTTL time.Duration
	// link controls: BlocklistPath is the blocklist file
	// (links.blocklist_path; "" none) and BlocklistPoll how often its
	// modification time is checked (links.blocklist_poll; 0 is
	// DefaultBlocklistPoll).
	BlocklistPath string
	BlocklistPoll time.Duration

	// StoreName names where the data lives in /healthz's reasons: "the
	// data file" (the default, bbolt) or "the database" (PostgreSQL).
	StoreName string
	// Instance names this process among the instances on one database
	// (server.instance_id): /healthz says it, and with LabelMetrics its
	// metrics carry it as the label linkbolt_instance (on PostgreSQL, or
	// when the id is configured; one process alone keeps its series as
	// they were).
	Instance     string
	LabelMetrics bool
	// StreamHeartbeat is how often an idle live click stream sends a
	// comment and checks its credential (0: every 15 s).
	StreamHeartbeat time.Duration
	// UntrackedIPs are the client ranges whose visits are never counted,
	// UntrackedParam the query parameter that makes a visit uncounted
	// (analytics.untracked_ips, analytics.untracked_param).
	UntrackedIPs   []netip.Prefix
	UntrackedParam string
	// OrphanRetention is how long orphan visits are kept
	// (analytics.orphan_retention): the earliest the range "all" of their
	// analytics starts.
	OrphanRetention time.Duration
}

// Server serves the API, the redirects and the setup page on one handler.
type Server struct {
	cfg    Config
	logger *slog.Logger
	now    func() time.Time
	// streams hands recorded clicks to the live click streams.
	streams *clickHub
	// robots keeps each host's robots.txt for a minute (robots.go).
	robots robotsCache
	// keyRoutes are the paths of the routes an API key can reach (see
	// keyResourcePaths).
	keyRoutes []string
	// keyedPublic is set while public routes that authorize an API key
	// themselves (Kutt's, YOURLS's) are registered, so that they count
	// among keyRoutes.
	keyedPublic bool

	db link.DataFile
	// unavailable logs the requests answered 503 because the store cannot
	// serve: once when it begins, then at most once a minute.
	unavailable *faultlog.Log
	// backingUp is held by the one backup being made: each spools a full
	// copy beside the data file, so two at once would double the disk it
	// takes (a slow download gives its gate slot back, not this).
	backingUp    chan struct{}
	links        link.LinkService
	linkChecks   link.LinkCheckService
	keys         link.KeyService
	users        link.UserService
	workspaces   link.WorkspaceService
	clicks       link.ClickService
	campaigns    link.CampaignService
	qrCodes      link.QRCodeService
	utmTemplates link.UTMTemplateService
	tags         link.TagService
	abuseReports link.AbuseReportService
	domains      link.DomainService
	// domainVerifier proves domains (DNS); webhookTargets checks where a
	// webhook's URL leads; setup creates the instance admin.
	domainVerifier link.DomainVerifier
	webhookTargets link.WebhookTargetChecker
	setup          link.AdminSetup
	webhooks       link.WebhookService
	outbox         link.OutboxCounter
	members        link.MemberService
	invitations    link.InvitationService
	audit          link.AuditService
	// imports stores imported links; importClient fetches other
	// shorteners' APIs for them.
	imports      link.ImportService
	importClient *http.Client
	apiImports   chan struct{} // a slot per import from an API under way (see handleImport)
	dispatcher   *webhook.Dispatcher
	recorder     *analytics.Recorder
	orphans      *analytics.OrphanRecorder
	orphanStore  link.OrphanVisitStore

	tokens    auth.Tokens
	jwt       *auth.JWT
	verified  *auth.TokenCache // of jwt's tokens
	passwords auth.Passwords
	limiters  *auth.Limiters
	logins    *auth.LoginGuard
	// budgets rates workspaces (and users outside any) against the
	// store's budget shared by every process on it; nil: limiters do.
	// budgetFaults logs the store failing it.
	budgets      *auth.SharedLimiters
	budgetFaults *faultlog.Log

	// oidc signs in with the OpenID Connect provider (nil: off); flows
	// keeps each sign-in's state in a sealed cookie.
	oidc  *auth.OIDC
	flows *auth.FlowSealer
	// devices names the browsers users logged in from; their logins check
	// the password in deviceLane, not behind the shared gate (handleLogin).
	devices    *auth.DeviceCookies
	deviceLane *admission
	// inDeviceLane holds the IDs of the users with a login in deviceLane
	// (one each: loginLane).
	inDeviceLane sync.Map
	// costly admits the costly API work; redirects never pass it.
	costly *admission
	// bodies admits large request bodies by their size before they are
	// read (see bodyGate).
	bodies *bodyGate
	// conns is the listener of Listener, which bounds the connections.
	conns *problemListener

	// accounts and sessions keep users and what ends their tokens early;
	// accountMu orders each stored change with its copy in sessions.
	accounts  link.AccountService
	sessions  *auth.Sessions
	callers   link.CallerFinder // nil: sessions is the authority (one process)
	accountMu sync.Mutex

	// setupToken is the one-time secret of the setup link, held only in
	// memory; empty once an admin exists.
	setupToken atomic.Pointer[string]

	primary, alt *url.URL
	// urls makes short URLs and the API's views of links (package wire).
	urls wire.ShortURLs
	// rules know this service's own hosts, addresses and ports, for the
	// checks inside a write transaction; servedRules add the verified
	// custom domains (held in memory) and check the URLs redirects go to
	// (destinations, domain redirects) when they are saved and again when
	// they are served (see loops).
	rules, servedRules *link.URLRules
	router             *httprouter.Router
	// cors answers cross-origin API requests; nil when none are allowed.
	cors *corsPolicy
	// dashboard is the web app served under /app/.
	dashboard *dashboard.Dashboard
	// pages holds the one-segment paths of pages (e.g. /healthz); every
	// other one-segment GET is a short code.
	pages map[string]bool

	// link controls: password, rules, variants, social card. uas and geo
	// classify visitors for rules; keys sign unlock cookies and key the
	// variant hash.
	uas         *analytics.UACache
	geo         *analytics.GeoIP
	controlKeys controlKeys
	// claimKey derives the verification token of a claim on a hostname
	// another workspace holds unverified (see claimToken).
	claimKey []byte
	// link controls: expiry and limits; clickLimits counts the clicks of
	// links with max_clicks, blocklist refuses and turns off destinations.
	clickLimits clickLimits
	blocklist   *blocklist
}

// Deps are the services a Server is built on; internal/app wires them.
// A Clicks that provides link.ClickReservations (the PostgreSQL store)
// also counts the clicks of links with max_clicks, for every instance on
// its database; otherwise the server counts them in memory.
type Deps struct {
	// DB is the data file, for health and backups.
	DB         link.DataFile
	Links      link.LinkService
	Keys       link.KeyService
	Users      link.UserService
	Workspaces link.WorkspaceService
	Clicks     link.ClickService
	Campaigns  link.CampaignService
	QRCodes    link.QRCodeService
	// UTMTemplates keeps the workspaces' UTM templates.
	UTMTemplates link.UTMTemplateService
	// Tags keeps the colours and descriptions of the workspaces' tags.
	Tags link.TagService
	// AbuseReports keeps visitors' reports of links to the admin.
	AbuseReports link.AbuseReportService
	Domains      link.DomainService
	// DomainVerifier proves custom domains (POST /v1/domains/{id}/verify).
	DomainVerifier link.DomainVerifier
	// WebhookTargets checks webhook URLs when webhooks are saved.
	WebhookTargets link.WebhookTargetChecker
	// Setup creates the instance admin from the setup page.
	Setup    link.AdminSetup
	Webhooks link.WebhookService
	// Outbox, when set, counts the pending deliveries for the metrics
	// (linkbolt_webhook_outbox_pending; 0 without it).
	Outbox link.OutboxCounter
	// Members and Invitations keep the people of each workspace.
	Members     link.MemberService
	Invitations link.InvitationService
	// Accounts keeps users for the admin and for each user's own account;
	// Sessions (auth.LoadSessions over it) ends tokens early.
	Accounts link.AccountService
	Sessions *auth.Sessions
	// Callers, set for a store other processes share (link.Store's
	// Callers), is read on each request instead of Sessions.
	Callers link.CallerFinder
	// Audit keeps the audit log: sign-ins and backups are recorded through
	// it, changes by their own services.
	Audit link.AuditService
	// Dispatcher, when set, is woken when a test or a retry is queued.
	Dispatcher *webhook.Dispatcher
	Recorder   *analytics.Recorder
	// Orphans, when set, records the visits that find no link.
	Orphans *analytics.OrphanRecorder
	// OrphanStore answers the orphan visits' analytics.
	OrphanStore link.OrphanVisitStore
	JWT         *auth.JWT
	Passwords   auth.Passwords
	Logger      *slog.Logger
	Now         func() time.Time

	// OIDC, when set, signs users in with an OpenID Connect provider
	// (/v1/auth/oidc/*); nil means single sign-on is off.
	OIDC *auth.OIDC

	// Geo, when set, gives the country of a visitor for the country
	// condition of link rules (link controls); nil: every country is unknown.
	Geo *analytics.GeoIP
	// link controls: Blocklist keeps the blocklist entries added through
	// the admin API; nil keeps them in memory only.
	Blocklist link.BlocklistService
	// Imports stores links imported from other shorteners (POST
	// /v1/imports); ImportClient fetches their APIs (nil: one refusing
	// private addresses, as webhook deliveries do by default).
	Imports      link.ImportService
	ImportClient *http.Client
	// RateBudget, when set (PostgreSQL's), keeps the workspaces' request
	// budgets shared by every process on the store; nil keeps them in
	// this process's memory (bbolt: one process).
	RateBudget link.RateBudget
	// ClickFeed, when set (PostgreSQL's), carries the clicks of the live
	// click streams between the processes on the store; nil: a stream
	// shows this process's clicks (bbolt: the only process).
	ClickFeed link.ClickFeed
	// LinkChecks keeps the destination checks of links, shown with the
	// links of the workspaces that turn them on; nil shows none.
	LinkChecks link.LinkCheckService
}

// New returns a server for cfg over deps.
func New(cfg Config, d Deps) (*Server, error) {
	primary, alt := cfg.BaseURL, cfg.AltBaseURL
	if primary == nil {
		return nil, fmt.Errorf("server: no base URL")
	}
	if alt == nil {
		alt = primary
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.DB == nil || d.Setup == nil || d.DomainVerifier == nil || d.WebhookTargets == nil || d.Accounts == nil || d.Sessions == nil || d.JWT == nil || d.Audit == nil {
		return nil, errors.New("server: Deps.DB, Setup, DomainVerifier, WebhookTargets, Accounts, Sessions, JWT and Audit are required")
	}
	// Every token the server issues carries the user's token generation.
	jwt := *d.JWT
	jwt.Generation = d.Sessions.Generation
	d.JWT = &jwt
	s := &Server{
		cfg: cfg, logger: d.Logger, now: d.Now,
		db: d.DB, unavailable: &faultlog.Log{Logger: d.Logger, Now: d.Now}, links: d.Links, linkChecks: d.LinkChecks, keys: d.Keys, users: d.Users, workspaces: d.Workspaces,
		clicks: d.Clicks, campaigns: d.Campaigns, qrCodes: d.QRCodes, utmTemplates: d.UTMTemplates, tags: d.Tags, abuseReports: d.AbuseReports, webhooks: d.Webhooks, outbox: d.Outbox, dispatcher: d.Dispatcher, recorder: d.Recorder, orphans: d.Orphans, orphanStore: d.OrphanStore,
		tokens: auth.Tokens{Prefix: cfg.KeyPrefix}, jwt: d.JWT, verified: auth.NewTokenCache(d.JWT), passwords: d.Passwords,
		limiters:  auth.NewLimiters(d.Now),
		logins:    auth.NewLoginGuard(cfg.LoginPerAddress, cfg.LoginWindow, cfg.LoginPerAccount, cfg.LoginMaxDelay, d.Now),
		costly:    newAdmission(cfg.CostlyConcurrency, cfg.CostlyWait),
		bodies:    newBodyGate(cfg.CostlyWait),
		backingUp: make(chan struct{}, 1),
		primary:   primary, alt: alt,
		urls: wire.ShortURLs{Base: primary, DomainScheme: cfg.DomainScheme},
	}
	s.domains, s.domainVerifier, s.webhookTargets, s.setup = d.Domains, d.DomainVerifier, d.WebhookTargets, d.Setup
	if r, ok := d.Clicks.(link.ClickReservations); ok {
		s.clickLimits.store = r
	}
	if d.RateBudget != nil {
		s.budgets = auth.NewSharedLimiters(d.RateBudget, s.limiters, d.Now)
		s.budgetFaults = &faultlog.Log{Logger: d.Logger, Now: d.Now}
	}
	if d.OIDC != nil {
		if d.JWT == nil {
			return nil, errors.New("server: Deps.OIDC needs Deps.JWT")
		}
		flows, err := auth.NewFlowSealer(d.JWT.Secret, d.Now)
		if err != nil {
			return nil, err
		}
		s.oidc, s.flows = d.OIDC, flows
	}
	devices, err := auth.NewDeviceCookies(d.JWT.Secret, d.Now)
	if err != nil {
		return nil, err
	}
	s.devices, s.deviceLane = devices, newAdmission(knownDeviceLane, cfg.CostlyWait)
	s.members, s.invitations = d.Members, d.Invitations
	s.accounts, s.sessions, s.callers = d.Accounts, d.Sessions, d.Callers
	s.audit = d.Audit
	s.imports, s.importClient = d.Imports, d.ImportClient
	if s.importClient == nil {
		s.importClient = webhook.NewClient(false)
	}
	s.apiImports = make(chan struct{}, cap(s.costly.slots))
	// link controls: password, rules, variants, social card
	s.uas, s.geo, s.controlKeys = analytics.NewUACache(analytics.DefaultUACacheSize), d.Geo, newControlKeys(d.JWT.Secret)
	s.claimKey = newClaimKey(d.JWT.Secret)
	s.cors = newCORSPolicy(cfg.CORSOrigins)
	dash, err := dashboard.New()
	if err != nil {
		return nil, err
	}
	s.dashboard = dash
	s.rules = newURLRules(primary, alt, cfg.Listen)
	s.servedRules = s.servedURLRules()
	if s.blocklist, err = newBlocklist(context.Background(), cfg.BlocklistPath, cfg.BlocklistPoll, d.Blocklist, d.Now, d.Logger); err != nil {
		return nil, err
	}
	s.streams = newClickHub(d.ClickFeed)
	if d.Recorder != nil {
		d.Recorder.SetTap(s.streams.tap)
	}
	s.routes()
	return s, nil
}

// PrepareSetup makes the one-time setup token when no user exists yet and
// returns the setup link, or "" when the instance is set up already.
func (s *Server) PrepareSetup(ctx context.Context) (string, error) {
	n, err := s.users.CountUsers(ctx)
	if err != nil || n > 0 {
		return "", err
	}
	tok := rand.Text()
	if shared, ok := s.db.(link.SetupTokens); ok {
		if tok, err = shared.SetupToken(rand.Text); err != nil {
			return "", err
		}
	}
	s.setupToken.Store(&tok)
	return s.primary.String() + "/setup?token=" + tok, nil
}

// pendingSetup returns the setup token while the instance is not set up,
// else nil. On a store other instances share, setup may have been done
// through another, which deleted the stored token: while a token is held
// here, the store is asked (on a visit to the home or setup page, rare
// before setup), and the token goes once the store has none.
func (s *Server) pendingSetup() *string {
	tok := s.setupToken.Load()
	shared, ok := s.db.(link.SetupTokens)
	if tok == nil || !ok {
		return tok
	}
	if pending, err := shared.SetupPending(); err != nil || pending {
		return tok
	}
	s.setupToken.Store(nil)
	return nil
}

// ServeHTTP recovers from panics so that one bad request never takes the
// server down, and hands the request to the router.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A damaged page of the memory-mapped data file faults instead of
	// panicking; on this goroutine the fault panics too, and is recovered
	// below into a 500 like any other.
	debug.SetPanicOnFault(true)
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.Error("panic serving request", "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			s.writeError(w, r, fmt.Errorf("panic: %v", v))
		}
	}()
	if r.Method == http.MethodHead {
		w = headWriter{w}
	}
	// A verified custom domain serves only its short links (one map
	// lookup for any host but the primary one).
	if r.Host != s.primary.Host && s.serveCustomHost(w, r) {
		return
	}
	if s.cors != nil && s.cors.serveCORS(w, r) {
		return // a preflight
	}
	// The redirect is the hot path: a one-segment GET or HEAD that is not a
	// page goes straight to it rather than through the router's search and
	// its check of other methods.
	if p := r.URL.Path; (r.Method == http.MethodGet || r.Method == http.MethodHead) && len(p) > 1 &&
		strings.IndexByte(p[1:], '/') < 0 && !s.pages[p] {
		s.serveRedirect(w, r, p[1:])
		return
	}
	// link controls: the password form of a short link posts back to it.
	if p := r.URL.Path; r.Method == http.MethodPost && len(p) > 1 && strings.IndexByte(p[1:], '/') < 0 && !s.pages[p] {
		if h, _, _ := s.router.Lookup(http.MethodPost, p); h == nil && s.servePasswordPost(w, r, nil, p[1:]) {
			return
		}
	}
	// The tracking pixel of a link (pixel.go).
	if code := pixelCode(r.URL.Path); code != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && !link.IsReserved(code) {
		if h, _, _ := s.router.Lookup(http.MethodGet, r.URL.Path); h == nil {
			s.servePixel(w, r, nil, code)
			return
		}
	}
	// The public statistics of a link (public_stats.go).
	if code := statsCode(r.URL.Path); code != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && !link.IsReserved(code) {
		if h, _, _ := s.router.Lookup(http.MethodGet, r.URL.Path); h == nil {
			s.servePublicStatsPage(w, r, nil, code)
			return
		}
	}
	// A link that forwards the path answers /{code}/rest/of/path where no
	// route does (forward.go); anything else is answered as before.
	if s.forwardCandidate(r) && s.serveForwarded(w, r, nil) {
		return
	}
	s.router.ServeHTTP(w, r)
}

// headWriter answers HEAD requests with the headers of GET and no body
// (net/http drops it too; this keeps every handler honest under httptest).
type headWriter struct{ http.ResponseWriter }

func (headWriter) Write(b []byte) (int, error) { return len(b), nil }

// Unwrap lets http.ResponseController reach the connection.
func (w headWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Limits of the HTTP server. A client gets readHeaderTimeout to send its
// request line and headers, whatever their size: a request's headers
// travel in one or two packets, so 5 s is plenty even on a poor mobile
// link, and a client that takes longer holds a connection for nothing.
// maxHeaderBytes bounds them (net/http allows 4 KiB more for the request
// line); more is answered 431. linkbolt sets one small cookie, only during
// a single sign-on, and the largest
// headers it needs are a Referer (Chrome caps it at 4 KiB), a User-Agent,
// an Authorization token of under 1 KiB and cookies a parent domain may
// set: 16 KiB leaves room for all of them, half of nginx's 32 KiB,
// and a quarter of what a connection held before.
const (
	readHeaderTimeout = 5 * time.Second
	maxHeaderBytes    = 16 << 10
)

// HTTPServer returns an http.Server for addr with timeouts set, so that a
// slow client cannot hold a connection for ever. Serve it on Listener.
func (s *Server) HTTPServer(addr string) *http.Server {
	hs := &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      5 * time.Minute, // backups stream for a while
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(s.Close) // Shutdown does not wait for streams
	hs.ConnState = func(c net.Conn, state http.ConnState) {
		if s.conns != nil { // set by Listener, before serving
			s.conns.connState(c, state)
		}
	}
	return hs
}

// Close ends the live click streams and what feeds them; the server
// answers no new stream after it. The http.Server of HTTPServer calls it
// when it shuts down.
func (s *Server) Close() { s.streams.close() }

// shortURL returns the short URL of a link: on its custom domain with
// domains.scheme, or on the primary host.
func (s *Server) shortURL(l *link.Link) string { return s.urls.ShortURL(l) }

// clientAddr returns the address of the client: the peer's, or behind a
// reverse proxy (server.behind_proxy) the one the proxy saw, from
// X-Real-IP or the last entry of X-Forwarded-For. The invalid Addr when
// there is none.
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	if s.cfg.BehindProxy {
		if v := r.Header.Get("X-Real-IP"); v != "" {
			if a, err := netip.ParseAddr(strings.TrimSpace(v)); err == nil {
				return a.Unmap()
			}
		}
		if v := r.Header.Values("X-Forwarded-For"); len(v) > 0 {
			last := v[len(v)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if a, err := netip.ParseAddr(strings.TrimSpace(last)); err == nil {
				return a.Unmap()
			}
		}
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// clientIP returns the client as the limits of guesses count it (logins,
// invitations, single sign-on, link passwords): its address as text, an
// IPv6 client named by its /64, the block one host or one customer
// usually holds, so that walking through a block's addresses gets no fresh
// limits. It is the one place that groups addresses for a limit.
func (s *Server) clientIP(r *http.Request) string {
	a := s.clientAddr(r)
	if !a.IsValid() {
		return r.RemoteAddr
	}
	if a.Is6() {
		return netip.PrefixFrom(a, 64).Masked().String()
	}
	return a.String()
}

// handlerFunc is an API handler: it returns an error instead of writing one,
// so that every error goes through writeError.
type handlerFunc func(w http.ResponseWriter, r *http.Request, c *caller) error

// access says who may call a route.
type access int

const (
	accessPublic access = iota // no credential
	accessUser                 // a logged-in user (JWT), no workspace
	accessAdmin                // the instance admin (JWT)
	accessRead                 // read scope in a workspace
	accessWrite                // read_write scope in a workspace
)

func (s *Server) handle(method, path string, a access, h handlerFunc) {
	if (a == accessRead || a == accessWrite || s.keyedPublic) && method != http.MethodHead {
		s.keyRoutes = append(s.keyRoutes, path)
	}
	if method == http.MethodGet {
		defer s.handle(http.MethodHead, path, a, h)
	}
	byLinkID := strings.Contains(path, "/links/:id")
	s.router.Handle(method, path, func(rw http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		start := time.Now()
		w := &statusWriter{ResponseWriter: rw}
		c := &caller{params: ps}
		var err error
		if a != accessPublic {
			if c, err = s.authorize(w, r, a); err == nil {
				c.params = ps
				r = s.withActor(r, c)
				if byLinkID {
					c.params, err = s.byExternalID(r, c)
				}
			}
		}
		if err == nil {
			err = h(w, r, c)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
		// The path only: the query may hold an api_key or a YOURLS signature
		// (yourls.go), and neither ever reaches a log.
		attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", w.status), slog.Duration("took", time.Since(start))}
		if c != nil && c.key != nil {
			attrs = append(attrs, slog.String("key", c.key.ID))
		} else if c != nil && c.user != nil {
			attrs = append(attrs, slog.String("user", c.user.ID))
		}
		s.logger.LogAttrs(r.Context(), slog.LevelInfo, "api", attrs...)
	})
}

// page registers a public GET (and HEAD) route that is not part of the
// JSON API, and remembers a one-segment path so that the redirect fast
// path in ServeHTTP leaves it to the router.
func (s *Server) page(path string, h httprouter.Handle) {
	s.router.GET(path, h)
	s.router.HEAD(path, h)
	if len(path) > 1 && strings.IndexByte(path[1:], '/') < 0 {
		s.pages[path] = true
	}
}

func (s *Server) routes() {
	s.pages = map[string]bool{}
	r := httprouter.New()
	r.RedirectFixedPath = false
	r.RedirectTrailingSlash = false
	r.HandleMethodNotAllowed = true
	r.NotFound = http.HandlerFunc(s.serveFallback)
	r.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.writeError(w, req, errHTTP(codeMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s; allowed: %s", req.Method, req.URL.Path, w.Header().Get("Allow"))))
	})
	s.router = r

	s.page("/healthz", s.serveHealth)
	s.page("/robots.txt", s.serveRobots)
	s.page("/v1/openapi.json", serveOpenAPI)
	s.page("/metrics", s.metricsHandler())
	s.page("/", s.serveHome)
	s.page("/setup", s.serveSetupPage)
	s.page("/app", s.serveDashboard)
	s.page("/app/*path", s.serveDashboard)

	s.handle("POST", "/v1/auth/login", accessPublic, s.handleLogin)
	s.handle("POST", "/v1/setup", accessPublic, s.handleSetup)
	s.handle("GET", "/v1/auth/oidc/start", accessPublic, s.handleOIDCStart)
	s.handle("GET", "/v1/auth/oidc/callback", accessPublic, s.handleOIDCCallback)
	s.handle("GET", "/v1/me", accessUser, s.handleMe)
	s.handle("GET", "/v1/workspaces", accessUser, s.handleListWorkspaces)
	s.handle("POST", "/v1/workspaces", accessUser, s.handleCreateWorkspace)
	s.handle("GET", "/v1/workspaces/:id", accessUser, s.handleGetWorkspace)
	s.handle("PATCH", "/v1/workspaces/:id", accessUser, s.handleUpdateWorkspace)
	s.handle("GET", "/v1/admin/backup", accessAdmin, s.handleBackup)
	s.accountRoutes()
	s.adminRoutes()        // the command line's rescue routes (admin_accounts.go)
	s.passwordLinkRoutes() // one-time password links (admin_password_link.go)
	s.handle("GET", "/v1/audit-log", accessRead, s.handleAuditLog)
	s.handle("GET", "/v1/admin/audit-log", accessAdmin, s.handleAdminAuditLog)
	s.handle("GET", "/v1/admin/geoip", accessAdmin, s.handleAdminGeoIP)
	s.handle("GET", "/v1/admin/orphan-visits", accessAdmin, s.handleAdminOrphanVisits)

	s.handle("GET", "/v1/keys", accessRead, s.handleListKeys)
	s.handle("POST", "/v1/keys", accessWrite, s.handleCreateKey)
	s.handle("GET", "/v1/keys/:id", accessRead, s.handleGetKey)
	s.handle("POST", "/v1/keys/:id/rotate", accessWrite, s.handleRotateKey)
	s.handle("DELETE", "/v1/keys/:id", accessWrite, s.handleRevokeKey)

	s.handle("GET", "/v1/links", accessRead, s.handleListLinks)
	s.handle("POST", "/v1/links", accessWrite, s.handleCreateLink)
	s.handle("POST", "/v1/links/bulk", accessWrite, s.handleBulkCreateLinks)
	s.handle("POST", "/v1/links/bulk-update", accessWrite, s.handleBulkUpdateLinks)
	s.handle("POST", "/v1/links/bulk-delete", accessWrite, s.handleBulkDeleteLinks)
	s.handle("GET", "/v1/links/:id", accessRead, s.handleGetLink)
	s.handle("PATCH", "/v1/links/:id", accessWrite, s.handleUpdateLink)
	s.handle("DELETE", "/v1/links/:id", accessWrite, s.handleDeleteLink)

	s.handle("GET", "/v1/analytics/workspace", accessRead, s.handleWorkspaceAnalytics)
	s.handle("GET", "/v1/analytics/links/:id", accessRead, s.handleLinkAnalytics)
	s.handle("GET", "/v1/analytics/export", accessRead, s.handleExport)
	s.handle("GET", "/v1/analytics/orphan-visits", accessRead, s.handleOrphanVisits)
	s.handle("GET", "/v1/events/stream", accessRead, s.handleClickStream)
	s.handle("GET", "/v1/public/links/:domain/:alias/stats", accessPublic, s.handlePublicLinkStats)

	s.handle("GET", "/v1/campaigns", accessRead, s.handleListCampaigns)
	s.handle("POST", "/v1/campaigns", accessWrite, s.handleCreateCampaign)
	s.handle("GET", "/v1/campaigns/:id", accessRead, s.handleGetCampaign)
	s.handle("PATCH", "/v1/campaigns/:id", accessWrite, s.handleUpdateCampaign)
	s.handle("DELETE", "/v1/campaigns/:id", accessWrite, s.handleDeleteCampaign)
	s.handle("GET", "/v1/analytics/campaigns/:id", accessRead, s.handleCampaignAnalytics)

	s.qrRoutes()
	s.utmTemplateRoutes()
	s.tagRoutes()
	s.abuseRoutes()
	s.domainRoutes()
	s.webhookRoutes()
	s.memberRoutes()

	s.handle("POST", "/api/urls", accessWrite, s.handleSimpleCreate)
	s.blocklistRoutes()
	s.importRoutes()

	s.yourlsRoutes() // the YOURLS-compatible API (yourls.go)
	if s.cfg.CompatKutt {
		s.kuttRoutes() // the Kutt-compatible API (kutt.go)
	}
}

// serveHealth answers 200 while the store can be read and written, and
// 503 with the reason while it cannot: unreadable or unreachable, or
// writes (of clicks, or of the API and background jobs) failing, until
// one succeeds again.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	store := s.cfg.StoreName
	if store == "" {
		store = "the data file"
	}
	if err := s.db.Ping(ctx); err != nil {
		reason, ok := s.db.Unavailable(err)
		if !ok {
			reason = store + " cannot be read"
		}
		s.unavailable.Fail(unavailableLine, err, "reason", reason, "path", r.URL.Path)
		writeJSON(w, http.StatusServiceUnavailable, health{Status: "unavailable", Instance: s.cfg.Instance, Reason: reason})
		return
	}
	// The reason names what fails, never the error itself (a path, a
	// device, a host): the log has that.
	if since, failing := s.recorder.WriteFailing(); failing {
		writeJSON(w, http.StatusServiceUnavailable, health{Status: "unavailable", Instance: s.cfg.Instance,
			Reason:       "writes to " + store + " are failing: clicks are held in memory and retried",
			FailingSince: since.UTC().Format(time.RFC3339)})
		return
	}
	if since, failing := s.db.WriteFailing(); failing {
		writeJSON(w, http.StatusServiceUnavailable, health{Status: "unavailable", Instance: s.cfg.Instance,
			Reason:       "writes to " + store + " are failing: the last change made through the API or a background job could not be saved",
			FailingSince: since.UTC().Format(time.RFC3339)})
		return
	}
	s.unavailable.OK("the store answers again")
	writeJSON(w, http.StatusOK, health{Status: "ok", Instance: s.cfg.Instance})
}

// health is the answer of /healthz.
type health struct {
	Status       string `json:"status"`
	Instance     string `json:"instance,omitempty"`
	Reason       string `json:"reason,omitempty"`
	FailingSince string `json:"failing_since,omitempty"`
}

// serveFallback answers every path the router does not know with a 404
// (one-segment GETs, the short codes, never reach the router).
func (s *Server) serveFallback(w http.ResponseWriter, r *http.Request) {
	s.recordOrphan(r, nil, link.OrphanRegular404)
	s.writeError(w, r, link.Errorf(link.ENOTFOUND, "no route for %s %s", r.Method, r.URL.Path))
}

// statusWriter remembers the status of an answer for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
