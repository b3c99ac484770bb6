package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/dnscheck"
	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/webhook"
)

// env is a whole server over a real store (a bbolt file, or PostgreSQL
// with LINKBOLT_TEST_STORE=postgres), with an admin, a workspace
// and keys of both scopes, and a second workspace with its own key and link.
type env struct {
	t        testing.TB
	srv      *Server
	db       *testStore
	clock    *clocktest.Clock
	recorder *analytics.Recorder
	orphans  *analytics.OrphanRecorder // keeps testOrphansPerHour visits per domain and hour
	logs     *bytes.Buffer
	cfg      Config
	deps     Deps // what srv was built on, to build it again (restart)

	adminToken string // JWT of the instance admin (owner of ws)
	ws         string // workspace id of the admin's Default workspace
	writeKey   string
	readKey    string
	otherWS    string // a second workspace, owned by another user
	otherKey   string // read_write key of otherWS
	otherLink  string // id of a link in otherWS
}

// testOrphansPerHour is how many orphan visits the test server keeps per
// domain and hour.
const testOrphansPerHour = 5

var testStart = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func newEnv(t testing.TB, opts ...func(*Config)) *env {
	t.Helper()
	return newEnvWithClickStore(t, nil, opts...)
}

// newEnvWithClickStore is newEnv with the recorder writing clicks through
// wrap(the real click service), when wrap is not nil.
func newEnvWithClickStore(t testing.TB, wrap func(analytics.ClickStore) analytics.ClickStore, opts ...func(*Config)) *env {
	t.Helper()
	return newEnvDeps(t, wrap, nil, opts...)
}

// newEnvWith is newEnv with deps changing what the server is built on
// (the DNS checks of domains and webhook targets), as app.go would.
func newEnvWith(t testing.TB, deps func(*Deps), opts ...func(*Config)) *env {
	t.Helper()
	return newEnvDeps(t, nil, deps, opts...)
}

func newEnvDeps(t testing.TB, wrap func(analytics.ClickStore) analytics.ClickStore, deps func(*Deps), opts ...func(*Config)) *env {
	t.Helper()
	return newEnvOn(t, onPostgres(), wrap, deps, opts...)
}

// newBoltEnv is newEnv on a bbolt file whichever store the tests run on:
// for what only that store does (a backup downloaded from the server;
// PostgreSQL's is pg_dump's).
func newBoltEnv(t testing.TB, opts ...func(*Config)) *env {
	t.Helper()
	pgtest.SkipInSecondPass(t)
	return newEnvOn(t, false, nil, nil, opts...)
}

// newEnvOn builds an env on PostgreSQL when pg is true, else on bbolt.
func newEnvOn(t testing.TB, pg bool, wrap func(analytics.ClickStore) analytics.ClickStore, deps func(*Deps), opts ...func(*Config)) *env {
	t.Helper()
	clk := clocktest.New(testStart)
	logs := &bytes.Buffer{}
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := Config{
		BaseURL: &url.URL{Scheme: "http", Host: "lb.test"}, AltBaseURL: &url.URL{Scheme: "http", Host: "s.test"}, MaxBody: 1 << 20, KeyPrefix: "lb",
		TokenTTL: 24 * time.Hour, RotationGrace: 24 * time.Hour,
		Plans:       map[link.Plan]int{link.PlanFree: 100, link.PlanPro: 1000, link.PlanEnterprise: 0},
		DefaultPlan: link.PlanFree, LoginPerIP: 20, LoginPerAddress: 5, LoginWindow: 15 * time.Minute,
		LoginPerAccount: 10, LoginMaxDelay: 15 * time.Minute, MaxKeysPerWorkspace: link.DefaultMaxKeysPerWorkspace,
		// As server.costly_wait's default: concurrent logins and password
		// checks wait for the gate (slowHash) rather than being refused.
		CostlyWait: 2 * time.Second,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.OrphanRetention == 0 {
		cfg.OrphanRetention = 720 * time.Hour // analytics.orphan_retention's default
	}
	// Events are encoded as app.go wires them.
	events, err := webhook.NewEncoder(cfg.BaseURL, cfg.DomainScheme)
	if err != nil {
		t.Fatal(err)
	}
	db := openTestStore(t, pg, clk.Now, events, logger)
	clicks := liveClicks{db}
	var store analytics.ClickStore = clicks
	if wrap != nil {
		store = wrap(clicks)
	}
	rec := analytics.NewRecorder(store, time.Hour, 0, logger) // flushed by hand
	rec.SetClock(clk.Now)
	rec.SetEnrich(analytics.Enricher(analytics.NewClassifier(nil), clicks))
	if wrap == nil { // a click backlog, as a server has by default
		if err := rec.SetBacklog(context.Background(), clicks, 64<<20); err != nil {
			t.Fatal(err)
		}
	}
	setup := &auth.Setup{Users: db.Users, Passwords: auth.Passwords{Cost: bcrypt.MinCost},
		Plan: cfg.DefaultPlan, Now: clk.Now}
	sessions, err := auth.LoadSessions(context.Background(), db.Accounts, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	d := Deps{
		Recorder:       rec,
		DomainVerifier: dnscheck.NewDomains(""), WebhookTargets: webhook.TargetGuard{}, Setup: setup,
		JWT:       &auth.JWT{Secret: []byte("test-secret-test-secret-test-secret!"), TTL: 24 * time.Hour, Now: clk.Now},
		Sessions:  sessions,
		Passwords: auth.Passwords{Cost: bcrypt.MinCost},
		Logger:    logger, Now: clk.Now,
	}
	storeDeps(&d, db.Store)
	orphans := analytics.NewOrphanRecorder(db.Orphans, nil, testOrphansPerHour, time.Hour, logger) // flushed by hand
	d.Orphans = orphans
	if deps != nil {
		deps(&d)
	}
	srv, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		if err := rec.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if err := db.Data.Close(); err != nil {
			t.Error(err)
		}
	})
	e := &env{t: t, srv: srv, db: db, clock: clk, recorder: rec, orphans: orphans, logs: logs, cfg: cfg, deps: d}
	ctx := context.Background()
	if _, err := setup.Bootstrap(ctx, "admin@example.com", "correct horse battery", ""); err != nil {
		t.Fatal(err)
	}
	e.adminToken = e.login("admin@example.com", "correct horse battery")
	me := e.do("GET", "/v1/me", e.adminToken, "", 200)
	e.ws = me.path("workspaces", 0, "id").(string)
	e.writeKey = e.createKey(e.adminToken, "writer", "read_write")
	e.readKey = e.createKey(e.adminToken, "reader", "read")

	// A second user with a workspace of their own.
	hash, err := otherUserHash(srv.passwords)
	if err != nil {
		t.Fatal(err)
	}
	other := &link.User{Email: "other@example.com", PasswordHash: hash, CreatedAt: clk.Now()}
	if err := db.Users.CreateUser(ctx, other); err != nil {
		t.Fatal(err)
	}
	ows := &link.Workspace{Name: "Other", Plan: link.PlanFree, CreatedAt: clk.Now(), UpdatedAt: clk.Now()}
	if err := db.Workspaces.CreateWorkspace(ctx, ows, other.ID, 0); err != nil {
		t.Fatal(err)
	}
	e.otherWS = ows.ID
	otok := e.login("other@example.com", otherPassword)
	e.otherKey = e.createKey(otok, "other", "read_write")
	e.otherLink = e.do("POST", "/v1/links", e.otherKey, `{"destination_url":"https://other.example/"}`, 201).str("id")
	return e
}

// otherPassword is the password of the env's second user.
const otherPassword = "other password 123"

// cheapOtherHash is the hash of otherPassword at the envs' cost, made once
// for all of them: each env stores it as is, as a bcrypt hash of its own
// would differ only by its salt.
var cheapOtherHash = sync.OnceValues(func() ([]byte, error) {
	return auth.Passwords{Cost: bcrypt.MinCost}.Hash(otherPassword)
})

// otherUserHash returns the hash of otherPassword for a server hashing
// with p.
func otherUserHash(p auth.Passwords) ([]byte, error) {
	if p == (auth.Passwords{Cost: bcrypt.MinCost}) {
		return cheapOtherHash()
	}
	return p.Hash(otherPassword)
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (e *env) login(email, password string) string {
	e.t.Helper()
	return e.do("POST", "/v1/auth/login", "", `{"email":"`+email+`","password":"`+password+`"}`, 200).str("token")
}

func (e *env) createKey(cred, name, scope string) string {
	e.t.Helper()
	return e.do("POST", "/v1/keys", cred, `{"name":"`+name+`","scope":"`+scope+`"}`, 201).str("key")
}

// response is a decoded answer.
type response struct {
	t      testing.TB
	status int
	header http.Header
	raw    []byte
	body   any
}

func (r *response) str(key string) string {
	r.t.Helper()
	s, ok := r.path(key).(string)
	if !ok {
		r.t.Fatalf("field %q is not a string in %s", key, r.raw)
	}
	return s
}

// path walks the decoded body by object keys and array indexes.
func (r *response) path(steps ...any) any {
	r.t.Helper()
	v := r.body
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				r.t.Fatalf("no object at %v in %s", steps, r.raw)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				r.t.Fatalf("no element %d at %v in %s", k, steps, r.raw)
			}
			v = a[k]
		}
	}
	return v
}

// request sends a request through the real handler and checks the answer
// against the OpenAPI document.
func (e *env) request(req *http.Request) *response {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	res := rec.Result()
	raw, _ := io.ReadAll(res.Body)
	checkOpenAPI(e.t, req, res.StatusCode, res.Header, raw)
	out := &response{t: e.t, status: res.StatusCode, header: res.Header, raw: raw}
	if ct := res.Header.Get("Content-Type"); len(raw) > 0 && strings.Contains(ct, "json") && !strings.Contains(ct, "ndjson") {
		if err := json.Unmarshal(raw, &out.body); err != nil {
			e.t.Fatalf("%s %s: answer is not JSON: %v: %s", req.Method, req.URL, err, raw)
		}
	}
	return out
}

func newRequest(method, path, cred, body string) *http.Request {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://lb.test"+path, rd)
	req.RemoteAddr = "192.0.2.1:1234"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	return req
}

// do sends a request with a bearer credential and wants the given status.
func (e *env) do(method, path, cred, body string, want int) *response {
	e.t.Helper()
	r := e.request(newRequest(method, path, cred, body))
	if r.status != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.raw)
	}
	return r
}

// wantProblem checks that r is a problem+json answer with status and code.
func wantProblem(t *testing.T, r *response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	if got, want := r.header.Get("Content-Type"), "application/problem+json"; got != want {
		t.Fatalf("Content-Type %q, want %q", got, want)
	}
	if got := r.path("code"); got != code {
		t.Fatalf("code %v, want %q: %s", got, code, r.raw)
	}
	if d, _ := r.path("detail").(string); d == "" {
		t.Fatalf("problem without detail: %s", r.raw)
	}
	if status == 401 && r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("401 without WWW-Authenticate")
	}
}

// flush writes the queued clicks.
func (e *env) flush() {
	e.t.Helper()
	if err := e.recorder.Flush(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}
