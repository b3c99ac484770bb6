package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// pgInstance is an instance kept in a PostgreSQL database of the test
// cluster: its configuration file, the database's URL, a store open on it
// as a running server would keep one (so the commands work beside it),
// the admin and workspace it was set up with, and a connection for SQL.
type pgInstance struct {
	config, url string
	store       *link.Store
	admin       *link.User
	ws          *link.Workspace
	conn        *pgx.Conn
	dataPath    string // storage.path, which nothing may create
}

func newPGInstance(t *testing.T) *pgInstance {
	t.Helper()
	p := &pgInstance{url: pgtest.URL(t)}
	dir := t.TempDir()
	p.dataPath = filepath.Join(dir, "data", "linkbolt.db")
	p.config = filepath.Join(dir, "config.yaml")
	yaml := fmt.Sprintf("server:\n  base_url: https://sho.rt\nstorage:\n  path: %s\n  postgres_url: %q\nauth:\n  password_cost: 4\n", p.dataPath, p.url)
	if err := os.WriteFile(p.config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := postgres.Open(ctx, postgres.Options{URL: p.url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Data.Close() })
	p.store = s
	p.admin = &link.User{Email: "admin@example.com", PasswordHash: []byte("hash")}
	p.ws = &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := s.Users.Bootstrap(ctx, p.admin, p.ws); err != nil {
		t.Fatal(err)
	}
	if p.conn, err = pgx.Connect(ctx, p.url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.conn.Close(context.Background()) })
	return p
}

// run runs linkbolt with the instance's configuration.
func (p *pgInstance) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, append(args, "--config", p.config)...)
	if pw, _ := mustURL(t, p.url).User.Password(); strings.Contains(stdout+stderr, pw) {
		t.Fatalf("linkbolt %s shows the database's password:\n%s%s", strings.Join(args, " "), stdout, stderr)
	}
	return code, stdout, stderr
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// row returns the fields of the line of a table that starts with id.
func row(table, id string) []string {
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == id {
			return f
		}
	}
	return nil
}

// audited reports how many audit entries of action on target by the
// system the database holds.
func (p *pgInstance) audited(t *testing.T, action, target string) int {
	t.Helper()
	var n int
	if err := p.conn.QueryRow(context.Background(), `SELECT count(*) FROM audit_entries WHERE action = $1 AND target_id = $2 AND actor_type = $3`,
		action, target, link.SystemActor.Type).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAdminCommandsOnPostgres: the admin commands work on the database
// directly while another instance has it open, their changes are audited
// as the system's, and no data file is made.
func TestAdminCommandsOnPostgres(t *testing.T) {
	t.Parallel()
	p := newPGInstance(t)
	ctx := context.Background()

	code, out, errOut := p.run(t, "users", "create", "--email", "Bea@Example.com", "--name", "Bea")
	if code != 0 || !strings.Contains(out, "created user bea@example.com (usr_") || !strings.Contains(out, "password: ") {
		t.Fatalf("users create: %d %q %q", code, out, errOut)
	}
	bea, err := p.store.Users.FindUserByEmail(ctx, "bea@example.com")
	if err != nil || bea.Name != "Bea" || bea.Admin {
		t.Fatalf("the other instance finds %+v, %v", bea, err)
	}
	if p.audited(t, link.AuditUserCreated, bea.ID) != 1 {
		t.Fatal("users create wrote no user.created entry of the system")
	}
	if code, out, errOut := p.run(t, "users", "create", "--email", "bea@example.com"); code != 1 || out != "" || !strings.Contains(errOut, "bea@example.com") {
		t.Fatalf("users create of a taken e-mail: %d %q %q", code, out, errOut)
	}
	code, out, errOut = p.run(t, "users", "list")
	if r := row(out, bea.ID); code != 0 || !strings.Contains(out, "admin@example.com") || strings.Join(r[:min(5, len(r))], " ") != bea.ID+" bea@example.com Bea no no" {
		t.Fatalf("users list: %d %q %q", code, out, errOut)
	}

	code, out, errOut = p.run(t, "users", "reset-password", "--user", bea.ID, "--setup-link")
	if code != 0 || !strings.Contains(out, "https://sho.rt/auth/reset-password?token=") {
		t.Fatalf("users reset-password --setup-link: %d %q %q", code, out, errOut)
	}
	code, out, errOut = p.run(t, "users", "disable", "--user", "bea@example.com")
	if code != 0 || !strings.Contains(out, "disabled bea@example.com") {
		t.Fatalf("users disable: %d %q %q", code, out, errOut)
	}
	if u, _ := p.store.Users.FindUserByID(ctx, bea.ID); !u.Disabled || p.audited(t, link.AuditUserDisabled, bea.ID) != 1 {
		t.Fatalf("after users disable: %+v, %d user.disabled entries", u, p.audited(t, link.AuditUserDisabled, bea.ID))
	}
	if code, _, errOut := p.run(t, "users", "disable", "--user", "admin@example.com"); code != 1 || !strings.Contains(errOut, "only enabled instance admin") {
		t.Fatalf("users disable of the only admin: %d %q", code, errOut)
	}

	// A key made by another instance: listed, then revoked.
	h := sha256.Sum256([]byte("lb_live_cli_key"))
	k := &link.APIKey{WorkspaceID: p.ws.ID, Name: "deploy", Scope: link.ScopeReadWrite, Hash: h[:], Start: "lb_liv"}
	if err := p.store.Keys.CreateKey(ctx, k, 0); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = p.run(t, "keys", "list")
	if code != 0 || !strings.Contains(out, k.ID) || !strings.Contains(out, "deploy") || !strings.Contains(out, "active") {
		t.Fatalf("keys list: %d %q %q", code, out, errOut)
	}
	code, out, errOut = p.run(t, "keys", "revoke", "--key", k.ID)
	if code != 0 || !strings.Contains(out, "revoked key "+k.ID) {
		t.Fatalf("keys revoke: %d %q %q", code, out, errOut)
	}
	if code, out, _ := p.run(t, "keys", "list", "--workspace", p.ws.ID); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("keys list after the revocation: %d %q", code, out)
	}
	if p.audited(t, link.AuditKeyRevoked, k.ID) != 1 {
		t.Fatal("keys revoke wrote no key.revoked entry of the system")
	}

	l := &link.Link{WorkspaceID: p.ws.ID, Alias: "docs", DestinationURL: "https://example.com/docs", RedirectCode: 302}
	if err := p.store.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = p.run(t, "workspaces", "list")
	if r := row(out, p.ws.ID); code != 0 || strings.Join(r[:min(4, len(r))], " ") != p.ws.ID+" Default free 1" {
		t.Fatalf("workspaces list: %d %q %q", code, out, errOut)
	}
	code, out, errOut = p.run(t, "workspaces", "set-plan", "--workspace", p.ws.ID, "--plan", "pro")
	if code != 0 || !strings.Contains(out, "plan pro, was free") {
		t.Fatalf("workspaces set-plan: %d %q %q", code, out, errOut)
	}
	if ws, _ := p.store.Workspaces.FindWorkspaceByID(ctx, p.ws.ID); ws.Plan != link.PlanPro {
		t.Fatalf("the plan is %s after set-plan", ws.Plan)
	}

	exported := filepath.Join(t.TempDir(), "export.jsonl")
	code, _, errOut = p.run(t, "export", "--workspace", p.ws.ID, "--out", exported)
	if code != 0 || !strings.Contains(errOut, "wrote ") {
		t.Fatalf("export: %d %q", code, errOut)
	}
	b, _ := os.ReadFile(exported)
	for _, want := range []string{`{"type":"workspace","data":{`, `"alias":"docs"`, `"type":"key"`, `"state":"revoked"`, `"type":"member"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the export does not hold %s:\n%s", want, b)
		}
	}

	csv := filepath.Join(t.TempDir(), "links.csv")
	if err := os.WriteFile(csv, []byte("url,alias\nhttps://example.com/a,imported\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = p.run(t, "import", "--from", "csv", "--file", csv, "--workspace", p.ws.ID)
	if code != 0 || !strings.Contains(out, "imported 1,") {
		t.Fatalf("import: %d %q %q", code, out, errOut)
	}
	if _, err := p.store.Links.FindLinkByAlias(ctx, "", "imported"); err != nil {
		t.Fatalf("the imported link: %v", err)
	}

	if _, err := os.Stat(filepath.Dir(p.dataPath)); !os.IsNotExist(err) {
		t.Fatalf("the commands made the data directory of storage.path: %v", err)
	}
}

// TestCheckOnPostgres: check reads the database while another instance
// has it open, says it is OK with what it holds, then reports a broken
// counter and exits 1; it never writes.
func TestCheckOnPostgres(t *testing.T) {
	t.Parallel()
	p := newPGInstance(t)
	ctx := context.Background()
	l := &link.Link{WorkspaceID: p.ws.ID, Alias: "docs", DestinationURL: "https://example.com/docs", RedirectCode: 302}
	if err := p.store.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	redacted := postgres.Redacted(p.url)
	code, out, errOut := p.run(t, "check")
	want := redacted + " is OK: schema version " + fmt.Sprint(postgres.SchemaVersion()) + ", 1 users, 1 workspaces, 1 links, 0 raw clicks, 0 API keys, 0 webhooks\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("check: %d %q %q, want %q", code, out, errOut, want)
	}
	if _, err := p.conn.Exec(ctx, `UPDATE links SET clicks = 5 WHERE id = $1`, l.ID); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = p.run(t, "check")
	if code != 1 || !strings.HasPrefix(out, redacted+" has problems:\n  - link clicks: link "+l.ID+": its counter says 5 clicks, its daily aggregates 0\n") ||
		!strings.Contains(out, "Nothing was changed.") || errOut != "" {
		t.Fatalf("check of a broken counter: %d %q %q", code, out, errOut)
	}
	var clicks int
	if err := p.conn.QueryRow(ctx, `SELECT clicks FROM links WHERE id = $1`, l.ID).Scan(&clicks); err != nil || clicks != 5 {
		t.Fatalf("after check the counter is %d, %v", clicks, err)
	}
	// A bbolt file named with --file is checked as before, on any store.
	if code, _, errOut := p.run(t, "check", "--file", filepath.Join(t.TempDir(), "none.db")); code != 1 || !strings.Contains(errOut, "linkbolt: check: ") {
		t.Fatalf("check --file of a missing file: %d %q", code, errOut)
	}
}

// TestFileCommandsRefuseOnPostgres: backup, restore and compact, which
// work on the bbolt data file, refuse on PostgreSQL with one line naming
// the tool that does the job, the URL's password hidden, and write
// nothing.
func TestFileCommandsRefuseOnPostgres(t *testing.T) {
	t.Parallel()
	p := newPGInstance(t)
	dir := t.TempDir()
	redacted := postgres.Redacted(p.url)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--out", filepath.Join(dir, "b.db")}, "linkbolt: backup: this instance keeps its data in PostgreSQL (storage.postgres_url), not in a data file: back it up with PostgreSQL's pg_dump instead, such as pg_dump --format=custom --file=linkbolt.dump '" + redacted + "'"},
		{[]string{"restore", "--from", filepath.Join(dir, "b.dump")}, "linkbolt: restore: this instance keeps its data in PostgreSQL (storage.postgres_url), not in a data file: restore a pg_dump backup with PostgreSQL's pg_restore instead, with every linkbolt stopped, such as pg_restore --clean --if-exists --dbname='" + redacted + "' " + filepath.Join(dir, "b.dump")},
		{[]string{"compact", "--out", filepath.Join(dir, "c.db")}, "linkbolt: compact: this instance keeps its data in PostgreSQL (storage.postgres_url), not in a data file: PostgreSQL reclaims the space of deleted rows itself (autovacuum); to return it to the operating system, run VACUUM FULL in psql '" + redacted + "'"},
	} {
		code, out, errOut := p.run(t, tc.args...)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("linkbolt %s: %d %q %q, want one line starting %q", tc.args[0], code, out, errOut, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the refused commands left files: %v", entries)
	}
	// Each command's help says what it does on PostgreSQL.
	for _, name := range []string{"backup", "restore", "compact", "check", "users create", "keys revoke", "export", "import"} {
		code, out, _ := runCLI(t, append(strings.Fields(name), "--help")...)
		if code != 0 || !strings.Contains(out, "On PostgreSQL (storage.postgres_url)") {
			t.Errorf("linkbolt %s --help does not say what it does on PostgreSQL:\n%s", name, out)
		}
	}
}

// TestCommandStoreEncodesEvents: a change made through a command's store
// on PostgreSQL writes its webhook event with the server's encoder (the
// short URL on server.base_url), as the server would.
func TestCommandStoreEncodesEvents(t *testing.T) {
	t.Parallel()
	p := newPGInstance(t)
	ctx := context.Background()
	cfg, err := config.Load(p.config)
	if err != nil {
		t.Fatal(err)
	}
	s, err := openStore(ctx, cfg, "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Data.Close()
	w := &link.Webhook{WorkspaceID: p.ws.ID, URL: "https://hooks.example.com/in", Events: []string{link.EventLinkCreated}, Enabled: true, Secret: "whsec_x"}
	if err := s.Webhooks.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := s.Links.CreateLink(ctx, &link.Link{WorkspaceID: p.ws.ID, Alias: "evented", DestinationURL: "https://example.com/e", RedirectCode: 302}); err != nil {
		t.Fatal(err)
	}
	ds, err := s.Webhooks.FindDeliveries(ctx, p.ws.ID, w.ID, 10)
	if err != nil || len(ds) != 1 || !strings.Contains(string(ds[0].Payload), `"short_url":"https://sho.rt/evented"`) {
		t.Fatalf("deliveries %v, %v; want one of link.created with the short URL", ds, err)
	}
}

// startPGServer boots a whole server on a new PostgreSQL database with
// the instance admin admin@example.com and returns its base URL, its
// configuration file (for commands beside it) and the database's URL.
func startPGServer(t *testing.T) (base, configPath, dbURL string) {
	t.Helper()
	dbURL = pgtest.URL(t)
	configPath = filepath.Join(t.TempDir(), "config.yaml")
	yaml := fmt.Sprintf("server:\n  listen: 127.0.0.1:0\nstorage:\n  path: %s\n  postgres_url: %q\nauth:\n  password_cost: 4\n"+
		"admin:\n  email: admin@example.com\n  password: a-long-admin-password\n", filepath.Join(filepath.Dir(configPath), "data", "linkbolt.db"), dbURL)
	if err := os.WriteFile(configPath, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(configPath)
	if err != nil {
		t.Fatal(err)
	}
	base, _ = apptest.Start(t, cfg, nil)
	return base, configPath, dbURL
}

// getMe answers GET /v1/me with token's status.
func getMe(t *testing.T, base, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestUserCommandsBesideServerOnPostgres: on PostgreSQL the user commands
// change the database beside a running server, which refuses the tokens
// they end at once: a disabled user's and those of a user whose password
// was reset.
func TestUserCommandsBesideServerOnPostgres(t *testing.T) {
	t.Parallel()
	base, configPath, _ := startPGServer(t)
	ctx := context.Background()
	code, out, errOut := runCLI(t, "users", "create", "--email", "bea@example.com", "--config", configPath)
	_, pw, _ := strings.Cut(out, "password: ")
	pw, _, _ = strings.Cut(pw, "\n")
	if code != 0 || pw == "" {
		t.Fatalf("users create: %d %q %q", code, out, errOut)
	}
	bea, err := login(ctx, base, "bea@example.com", pw)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := login(ctx, base, "admin@example.com", "a-long-admin-password")
	if err != nil {
		t.Fatal(err)
	}
	if getMe(t, base, bea) != 200 || getMe(t, base, admin) != 200 {
		t.Fatal("the new tokens do not work")
	}
	if code, out, errOut := runCLI(t, "users", "disable", "--user", "bea@example.com", "--config", configPath); code != 0 {
		t.Fatalf("users disable: %d %q %q", code, out, errOut)
	}
	if got := getMe(t, base, bea); got != 401 {
		t.Fatalf("a disabled user's token answers %d, want 401", got)
	}
	if code, out, errOut := runCLI(t, "users", "reset-password", "--user", "admin@example.com", "--config", configPath); code != 0 {
		t.Fatalf("users reset-password: %d %q %q", code, out, errOut)
	}
	if got := getMe(t, base, admin); got != 401 {
		t.Fatalf("a token ended by a password reset answers %d, want 401", got)
	}
}

// TestServerBackupRouteOnPostgres: a whole server on PostgreSQL answers
// the admin's backup request (GET and HEAD /v1/admin/backup) with a 409
// problem saying to back the database up with pg_dump, and records no
// download.
func TestServerBackupRouteOnPostgres(t *testing.T) {
	t.Parallel()
	base, _, u := startPGServer(t)
	ctx := context.Background()
	token, err := login(ctx, base, "admin@example.com", "a-long-admin-password")
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		req, _ := http.NewRequestWithContext(ctx, method, base+"/v1/admin/backup", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s /v1/admin/backup: %s %s %s", method, resp.Status, resp.Header.Get("Content-Type"), body)
		}
		if method == http.MethodGet {
			var p struct {
				Status int    `json:"status"`
				Detail string `json:"detail"`
			}
			if err := json.Unmarshal(body, &p); err != nil || p.Status != 409 || !strings.Contains(p.Detail, "PostgreSQL") || !strings.Contains(p.Detail, "pg_dump") {
				t.Fatalf("the problem %s (%v) does not say to use pg_dump", body, err)
			}
		}
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM audit_entries WHERE action = $1`, link.AuditBackupDownloaded).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d backup.downloaded entries, %v; want none", n, err)
	}
}
