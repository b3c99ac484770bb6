package app_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/internal/app"
	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// logBuffer collects log lines written from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// count returns the lines that hold s.
func (b *logBuffer) count(s string) int { return strings.Count(b.String(), s) }

// answer is one HTTP answer, its JSON body decoded.
type answer struct {
	status int
	header http.Header
	body   map[string]any
}

// call makes one request to base, with cred as a bearer credential.
func call(t *testing.T, base, method, path, cred, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	// The primary host (server.base_url's default): another host is looked
	// up as a custom domain, which needs the database.
	req.Host = "localhost:8080"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func must(t *testing.T, base, method, path, cred, body string, want int) map[string]any {
	t.Helper()
	a := call(t, base, method, path, cred, body)
	if a.status != want {
		t.Fatalf("%s %s: %d, want %d: %v", method, path, a.status, want, a.body)
	}
	return a.body
}

// waitFor polls path until it answers want, for 20 s at most.
func waitFor(t *testing.T, base, path, cred string, want int) answer {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a := call(t, base, "GET", path, cred, "")
		if a.status == want {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s = %d %v, want %d", path, a.status, a.body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantUnavailable checks a 503 store_unavailable answer with Retry-After
// and a reason holding reason.
func wantUnavailable(t *testing.T, what string, a answer, reason string) {
	t.Helper()
	if a.status != http.StatusServiceUnavailable || a.body["code"] != "store_unavailable" ||
		a.header.Get("Retry-After") == "" || a.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%s: %d %v (Retry-After %q, Content-Type %q), want 503 store_unavailable with Retry-After",
			what, a.status, a.body, a.header.Get("Retry-After"), a.header.Get("Content-Type"))
	}
	if d, _ := a.body["detail"].(string); !strings.Contains(d, reason) {
		t.Fatalf("%s: detail %q does not say %q", what, d, reason)
	}
}

const adminYAML = "admin:\n  email: admin@example.com\n  password: a long password\n"

// startPG boots linkbolt on the database u, its clicks written every
// 20 ms, logging to logs.
func startPG(t *testing.T, u string, logs io.Writer) (string, func() error) {
	t.Helper()
	t.Setenv("LINKBOLT_STORAGE_POSTGRES_URL", u)
	cfg := apptest.Config(t, adminYAML+"clicks:\n  flush_interval: 20ms\n")
	return apptest.Start(t, cfg, logs)
}

// setupLink logs in as the admin and makes a key and a link.
func setupLink(t *testing.T, base string) (tok, key, id, alias string) {
	t.Helper()
	tok = must(t, base, "POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key = must(t, base, "POST", "/v1/keys", tok, `{"name":"k","scope":"read_write"}`, 201)["key"].(string)
	l := must(t, base, "POST", "/v1/links", key, `{"destination_url":"https://example.com/"}`, 201)
	return tok, key, l["id"].(string), l["alias"].(string)
}

// waitClicks polls the link until it counts want clicks.
func waitClicks(t *testing.T, base, key, id string, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := must(t, base, "GET", "/v1/links/"+id, key, "", 200)["clicks"]
		if got == float64(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("link clicks = %v, want %d", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPostgresLostAndBack stops PostgreSQL under a running linkbolt: health
// answers 503 with the reason, every request that needs the database 503
// store_unavailable with Retry-After, links clicked before keep
// redirecting from memory (their clicks queued), an unknown code is 503,
// not 404, one log line says so for the whole outage, and when PostgreSQL
// is back every route works again without a restart and the queued clicks
// are written.
func TestPostgresLostAndBack(t *testing.T) {
	c := pgtest.NewCluster(t)
	u := c.URL(t)
	logs := &logBuffer{}
	base, stop := startPG(t, u, logs)
	_, key, id, alias := setupLink(t, base)
	for range 3 {
		must(t, base, "GET", "/"+alias, "", "", http.StatusFound)
	}
	waitClicks(t, base, key, id, 3)

	c.Stop(t)
	h := waitFor(t, base, "/healthz", "", http.StatusServiceUnavailable)
	if got, want := h.body["reason"], "the database cannot be reached"; got != want {
		t.Fatalf("health reason %q, want %q: %v %v", got, want, h.header, h.body)
	}
	// A probe by address (not the primary host, so a possible custom
	// domain, which cannot be looked up now) gets the health answer too.
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	var byAddr map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&byAddr)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || byAddr["reason"] != "the database cannot be reached" {
		t.Fatalf("/healthz by address during the outage: %d %v", resp.StatusCode, byAddr)
	}
	// A link clicked before keeps redirecting from memory, and its clicks
	// wait in the recorder's queue.
	const outageClicks = 5
	for range outageClicks {
		if a := call(t, base, "GET", "/"+alias, "", ""); a.status != http.StatusFound {
			t.Fatalf("a redirect of a link clicked before the outage: %d %v", a.status, a.body)
		}
	}
	wantUnavailable(t, "a read", call(t, base, "GET", "/v1/links/"+id, key, ""), "the database cannot be reached")
	wantUnavailable(t, "a change", call(t, base, "POST", "/v1/links", key, `{"destination_url":"https://example.com/b"}`), "cannot be reached")
	wantUnavailable(t, "an unknown code (never 404 while the database is away)", call(t, base, "GET", "/nosuchcode", "", ""), "cannot be reached")
	if a := call(t, base, "GET", "/"+alias, "", ""); a.status != http.StatusFound {
		t.Fatalf("a redirect after a change failed: %d %v", a.status, a.body)
	}
	for range 50 {
		if a := call(t, base, "GET", "/v1/links", key, ""); a.status != http.StatusServiceUnavailable {
			t.Fatalf("list during the outage: %d %v", a.status, a.body)
		}
	}
	if n := logs.count("the store is unavailable"); n != 1 {
		t.Fatalf("%d lines about the unavailable store for one outage, want 1:\n%s", n, logs)
	}

	c.Start(t)
	waitFor(t, base, "/healthz", "", http.StatusOK)
	must(t, base, "GET", "/v1/links/"+id, key, "", 200)
	must(t, base, "POST", "/v1/links", key, `{"destination_url":"https://example.com/c"}`, 201)
	must(t, base, "GET", "/"+alias, "", "", http.StatusFound)
	waitClicks(t, base, key, id, 3+outageClicks+1+1)
	if logs.count("the store answers again") != 1 {
		t.Fatalf("no line for the end of the outage:\n%s", logs)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if pw := password(t, u); strings.Contains(logs.String(), pw) {
		t.Fatalf("the database password is in the log:\n%s", logs)
	}
}

// password is the password of the URL u.
func password(t *testing.T, u string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(u)
	if err != nil || cfg.Password == "" {
		t.Fatalf("no password in the test URL: %v", err)
	}
	return cfg.Password
}

// TestClicksKeptThroughOutage: the click recorder over the PostgreSQL
// store keeps the clicks it cannot write while the database is away in
// memory, up to its queue's bytes, counts the rest as dropped (the
// backlog is in the database too), and writes every kept click once the
// database is back.
func TestClicksKeptThroughOutage(t *testing.T) {
	c := pgtest.NewCluster(t)
	u := c.URL(t)
	base, stop := startPG(t, u, nil)
	tok, _, id, _ := setupLink(t, base)
	ws := must(t, base, "GET", "/v1/workspaces", tok, "", 200)
	wsID := ws["data"].([]any)[0].(map[string]any)["id"].(string)
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	store, err := postgres.Open(ctx, postgres.Options{URL: u, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Data.Close()
	// As internal/app wires it: the backlog on (its least size), a queue
	// of 64 KiB so that the outage fills it.
	r := analytics.NewRecorder(store.Clicks, 20*time.Millisecond, 0, logger)
	r.SetQueueBytes(64 << 10)
	r.SetEnrich(analytics.Enricher(analytics.NewClassifier(nil), store.Clicks))
	if err := r.SetBacklog(ctx, store.Clicks, 1<<20); err != nil {
		t.Fatal(err)
	}
	r.Start()
	click := func() {
		r.Record(link.Click{LinkID: id, WorkspaceID: wsID, Time: time.Now(), UserAgent: "curl/8"})
	}

	c.Stop(t)
	recorded := 0
	for r.Dropped() == 0 && recorded < 1_000_000 {
		click()
		recorded++
	}
	deadline := time.Now().Add(20 * time.Second)
	for r.FailedWrites() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no write failed while the database was away")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r.Written() != 0 || int64(r.Pending()) != int64(recorded)-r.Dropped() || r.PendingBytes() > r.QueueBytes() {
		t.Fatalf("during the outage: written %d, pending %d (%d bytes of %d), dropped %d of %d",
			r.Written(), r.Pending(), r.PendingBytes(), r.QueueBytes(), r.Dropped(), recorded)
	}
	kept := int64(recorded) - r.Dropped()
	t.Logf("%d clicks recorded during the outage, %d kept in memory, %d dropped", recorded, kept, r.Dropped())

	c.Start(t)
	for r.Pending() > 0 {
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatalf("%d clicks still pending 20 s after the database came back", r.Pending())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	backlog, _ := r.Backlogged()
	var counted int64
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, "SELECT clicks FROM links WHERE id = $1", id).Scan(&counted); err != nil {
		t.Fatal(err)
	}
	if counted+backlog != kept {
		t.Fatalf("after the outage: %d clicks counted and %d in the backlog, want the %d kept", counted, backlog, kept)
	}
	if n := logs.count("writing clicks failed"); n != 1 {
		t.Fatalf("%d lines of failed click writes in one outage, want 1:\n%s", n, logs)
	}
	if logs.count("writing clicks works again") != 1 {
		t.Fatalf("no line for the end of the outage:\n%s", logs)
	}
}

// TestStatementTimeout: a statement that waits past statement_timeout
// (set small in the URL; here behind a lock another session holds) is
// cancelled by PostgreSQL and answered 503 store_unavailable saying so, a
// change that fails so turns health to 503, and all is well once the lock
// goes.
func TestStatementTimeout(t *testing.T) {
	u := pgtest.URL(t) + "&statement_timeout=200"
	logs := &logBuffer{}
	base, _ := startPG(t, u, logs)
	_, key, id, _ := setupLink(t, base)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE links IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	wantUnavailable(t, "a read behind the lock", call(t, base, "GET", "/v1/links/"+id, key, ""), "statement_timeout")
	wantUnavailable(t, "a change behind the lock", call(t, base, "PATCH", "/v1/links/"+id, key, `{"tags":["a"]}`), "statement_timeout")
	h := waitFor(t, base, "/healthz", "", http.StatusServiceUnavailable)
	if r, _ := h.body["reason"].(string); !strings.Contains(r, "writes to the database are failing") {
		t.Fatalf("health during the timeouts: %v", h.body)
	}
	for _, line := range []string{"the store is unavailable", "postgres: writes are failing", "canceling statement due to statement timeout"} {
		if !strings.Contains(logs.String(), line) {
			t.Fatalf("no %q in the log:\n%s", line, logs)
		}
	}

	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	must(t, base, "GET", "/v1/links/"+id, key, "", 200)
	must(t, base, "PATCH", "/v1/links/"+id, key, `{"tags":["a"]}`, 200)
	waitFor(t, base, "/healthz", "", http.StatusOK)
	if !strings.Contains(logs.String(), "postgres: writes work again") {
		t.Fatalf("no line for writes working again:\n%s", logs)
	}
	if strings.Contains(logs.String(), password(t, u)) {
		t.Fatalf("the database password is in the log:\n%s", logs)
	}
}

// TestPostgresDiskFull fills the disk under the database, for real: the
// database lives in a tablespace on a small tmpfs (mounting one needs
// root; the test skips without it), and a file fills what is left. Changes
// that need a new page fail in PostgreSQL with "No space left on device"
// and are answered 503 store_unavailable, health says writes fail, reads
// and redirects go on, one line logs the episode, and when the file goes
// every change works again and the clicks held meanwhile are written.
func TestPostgresDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		lacking(t, "mounting a tmpfs for the database's tablespace needs root")
	}
	c := pgtest.NewCluster(t)
	mnt, err := os.MkdirTemp("", "linkbolt-tiny-")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=32m,mode=0755", "tmpfs", mnt).CombinedOutput(); err != nil {
		os.Remove(mnt)
		lacking(t, fmt.Sprintf("cannot mount a tmpfs here: %v: %s", err, out))
	}
	t.Cleanup(func() {
		c.Stop(t) // before the unmount: PostgreSQL holds its files
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
			return
		}
		os.Remove(mnt)
	})
	ts := filepath.Join(mnt, "ts")
	if err := os.Mkdir(ts, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ts, 65534, 65534); err != nil { // PostgreSQL runs as nobody
		t.Fatal(err)
	}
	c.Exec(t, "CREATE TABLESPACE tiny LOCATION '"+ts+"'")
	c.Exec(t, "CREATE DATABASE diskfull TABLESPACE tiny")
	logs := &logBuffer{}
	u := c.DatabaseURL("diskfull")
	base, _ := startPG(t, u, logs)
	_, key, id, alias := setupLink(t, base)

	filler := filepath.Join(mnt, "filler")
	fill(t, filler)
	var a answer
	for i := 0; i < 1000; i++ {
		a = call(t, base, "POST", "/v1/links", key, `{"destination_url":"https://example.com/`+randomPath(t, 4000)+`"}`)
		if a.status != http.StatusCreated {
			break
		}
	}
	wantUnavailable(t, "a change on a full disk", a, "out of disk space")
	must(t, base, "GET", "/v1/links/"+id, key, "", 200)
	must(t, base, "GET", "/"+alias, "", "", http.StatusFound)
	h := waitFor(t, base, "/healthz", "", http.StatusServiceUnavailable)
	if r, _ := h.body["reason"].(string); !strings.Contains(r, "writes to the database are failing") {
		t.Fatalf("health on a full disk: %v", h.body)
	}
	for range 20 {
		call(t, base, "POST", "/v1/links", key, `{"destination_url":"https://example.com/`+randomPath(t, 4000)+`"}`)
	}
	if n := logs.count("postgres: writes are failing"); n != 1 {
		t.Fatalf("%d lines of failing writes for one full disk, want 1:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "No space left on device") {
		t.Fatalf("the log does not say the disk is full:\n%s", logs)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	must(t, base, "POST", "/v1/links", key, `{"destination_url":"https://example.com/back"}`, 201)
	waitFor(t, base, "/healthz", "", http.StatusOK)
	waitClicks(t, base, key, id, 1)
	if !strings.Contains(logs.String(), "postgres: writes work again") {
		t.Fatalf("no line for writes working again:\n%s", logs)
	}
	if strings.Contains(logs.String(), password(t, u)) {
		t.Fatalf("the database password is in the log:\n%s", logs)
	}
}

// fill writes path until its file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); errors.Is(err, syscall.ENOSPC) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// randomPath is n characters of random letters and digits, which
// PostgreSQL cannot compress much.
func randomPath(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n*3/4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

// lacking skips a test this machine cannot run, except with CI=true,
// where the machine is made to have what the tests need (.ci/run runs
// as root) and the test fails instead.
func lacking(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// TestSpoolFolderShared: two instances on one PostgreSQL database whose
// storage.path is in one folder would share a click spool: the second
// fails at start with one line saying what to change.
func TestSpoolFolderShared(t *testing.T) {
	u := pgtest.URL(t)
	t.Setenv("LINKBOLT_STORAGE_POSTGRES_URL", u)
	cfg := apptest.Config(t, adminYAML)
	_, stop := apptest.Start(t, cfg, nil)
	defer stop()
	second := *cfg
	second.Server.Listen = "127.0.0.1:0"
	_, err := app.New(context.Background(), &second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "give each instance its own storage.path") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("second instance on one folder: %v", err)
	}
	if _, err := os.Stat(app.SpoolPath(cfg)); err != nil {
		t.Fatalf("no spool next to storage.path: %v", err)
	}
}
