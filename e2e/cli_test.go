package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/linkbolt/linkbolt/internal/cli"
	"github.com/linkbolt/linkbolt/internal/config"
)

// adminInstance is a data file set up by a real server with its admin
// (admin@example.com), a read_write key and a link, the server stopped.
type adminInstance struct {
	t       *testing.T
	cfg     *config.Config
	cfgPath string
	key     string // the read_write key's token
}

// viaServer reports whether a command that ran beside a server did NOT
// do as the store wants: on bbolt it goes through the server that holds
// the data file and says so on stderr (said); on PostgreSQL it works on
// the database itself, beside the server, and says nothing of it.
func viaServer(stderr, said string) bool {
	return strings.Contains(stderr, said) == apptest.OnPostgres()
}

const adminYAML = "admin:\n  email: admin@example.com\n  password: a long password\n"

func newAdminInstance(t *testing.T) *adminInstance {
	t.Helper()
	return newAdminInstanceOf(t, testConfig(t, adminYAML))
}

// newBoltAdminInstance is newAdminInstance on a bbolt data file whichever
// store the tests run on.
func newBoltAdminInstance(t *testing.T) *adminInstance {
	t.Helper()
	return newAdminInstanceOf(t, boltConfig(t, adminYAML))
}

func newAdminInstanceOf(t *testing.T, cfg *config.Config) *adminInstance {
	t.Helper()
	in := &adminInstance{t: t, cfg: cfg, cfgPath: filepath.Join(filepath.Dir(filepath.Dir(cfg.Storage.Path)), "config.yaml")}
	in.serve(func(c client) {
		tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
		in.key = c.must("POST", "/v1/keys", tok, `{"name":"deploy","scope":"read_write"}`, 201)["key"].(string)
		c.must("POST", "/v1/links", in.key, `{"destination_url":"https://example.com/","alias":"kept"}`, 201)
	})
	return in
}

// serve starts a server on the data file, runs f against it and stops it.
func (in *adminInstance) serve(f func(c client)) {
	in.t.Helper()
	cfg, err := config.Load(in.cfgPath)
	if err != nil {
		in.t.Fatal(err)
	}
	base, stop := startApp(in.t, cfg, nil)
	f(client{in.t, base})
	if err := stop(); err != nil {
		in.t.Fatal(err)
	}
}

// cli runs linkbolt with the instance's configuration and stdin.
func (in *adminInstance) cli(input string, args ...string) (int, string, string) {
	in.t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Run(context.Background(), append(args, "--config", in.cfgPath), strings.NewReader(input), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// mustCLI runs linkbolt and fails unless it exits 0.
func (in *adminInstance) mustCLI(args ...string) string {
	in.t.Helper()
	code, stdout, stderr := in.cli("", args...)
	if code != 0 {
		in.t.Fatalf("linkbolt %v: exit %d: %s%s", args, code, stdout, stderr)
	}
	return stdout
}

var printedPassword = regexp.MustCompile(`(?m)^password: (\S+)$`)

// password returns the password a command printed once.
func password(t *testing.T, out string) string {
	t.Helper()
	m := printedPassword.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no password printed: %s", out)
	}
	return m[1]
}

func loginAs(c client, email, pw string, want int) string {
	out := c.must("POST", "/v1/auth/login", "", `{"email":"`+email+`","password":"`+pw+`"}`, want)
	tok, _ := out["token"].(string)
	return tok
}

// TestAdminCommandsOffline runs users, workspaces and keys on the data file
// of a stopped server, and checks their effect through the server started
// again.
func TestAdminCommandsOffline(t *testing.T) {
	t.Parallel()
	in := newAdminInstance(t)

	out := in.mustCLI("users", "create", "--email", "Bea@Example.com", "--name", "Bea")
	beaPassword := password(t, out)
	if !strings.Contains(out, "created user bea@example.com") {
		t.Fatalf("create said %q", out)
	}
	code, out, _ := in.cli("a chosen long password\n", "users", "create", "--email", "ops@example.com", "--admin", "--password-stdin")
	if code != 0 || printedPassword.MatchString(out) || !strings.Contains(out, "instance admin ops@example.com") {
		t.Fatalf("create --admin --password-stdin: exit %d, %q", code, out)
	}
	if code, _, stderr := in.cli("", "users", "create", "--email", "bea@example.com"); code != 1 || !strings.Contains(stderr, "exists already") {
		t.Fatalf("a taken e-mail: exit %d, %q", code, stderr)
	}
	if code, _, stderr := in.cli("password\n", "users", "create", "--email", "weak@example.com", "--password-stdin"); code != 1 || !strings.Contains(stderr, "password") {
		t.Fatalf("a weak password: exit %d, %q", code, stderr)
	}

	list := in.mustCLI("users", "list")
	for _, want := range []string{"admin@example.com", "bea@example.com    Bea", "ops@example.com"} {
		if !strings.Contains(list, want) {
			t.Errorf("users list does not show %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "$2") || strings.Contains(list, "hash") {
		t.Errorf("users list shows a password hash:\n%s", list)
	}

	in.mustCLI("users", "disable", "--user", "bea@example.com")
	out = in.mustCLI("users", "reset-password", "--user", "admin@example.com")
	adminPassword := password(t, out)

	wsList := in.mustCLI("workspaces", "list")
	wsID := regexp.MustCompile(`(?m)^(ws_\S+)\s+Default\s+free\s+1\s`).FindStringSubmatch(wsList)
	if wsID == nil {
		t.Fatalf("workspaces list:\n%s", wsList)
	}
	in.mustCLI("workspaces", "set-plan", "--workspace", wsID[1], "--plan", "pro")
	if !regexp.MustCompile(`Default\s+pro`).MatchString(in.mustCLI("workspaces", "list")) {
		t.Fatal("the plan did not change")
	}
	if code, _, stderr := in.cli("", "workspaces", "set-plan", "--workspace", wsID[1], "--plan", "gold"); code != 2 || !strings.Contains(stderr, "free, pro or enterprise") {
		t.Fatalf("an unknown plan: exit %d, %q", code, stderr)
	}

	keys := in.mustCLI("keys", "list")
	keyID := regexp.MustCompile(`(?m)^(key_\S+)\s+` + wsID[1] + `\s+deploy\s+read_write\s+(\S+)…\s+active`).FindStringSubmatch(keys)
	if keyID == nil || !strings.HasPrefix(in.key, keyID[2]) {
		t.Fatalf("keys list:\n%s", keys)
	}
	if strings.Contains(keys, in.key) {
		t.Fatalf("keys list shows the token:\n%s", keys)
	}
	in.mustCLI("keys", "revoke", "--key", keyID[1])
	if !regexp.MustCompile(`deploy\s+read_write\s+\S+…\s+revoked`).MatchString(in.mustCLI("keys", "list", "--workspace", wsID[1])) {
		t.Fatal("the key is not listed as revoked")
	}
	if code, _, stderr := in.cli("", "keys", "revoke", "--key", "key_nope"); code != 1 || !strings.Contains(stderr, "not found") {
		t.Fatalf("an unknown key: exit %d, %q", code, stderr)
	}
	// A wrong ID says what is wrong in words, without the codes meant for programs.
	for _, args := range [][]string{
		{"workspaces", "set-plan", "--workspace", "ws_nope", "--plan", "pro"},
		{"keys", "list", "--workspace", "ws_nope"},
		{"export", "--workspace", "ws_nope"},
	} {
		if code, _, stderr := in.cli("", args...); code != 1 || stderr != "linkbolt: workspace \"ws_nope\" not found\n" {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}

	// The server started again sees every change.
	in.serve(func(c client) {
		loginAs(c, "admin@example.com", "a long password", 401)
		tok := loginAs(c, "admin@example.com", adminPassword, 200)
		loginAs(c, "ops@example.com", "a chosen long password", 200)
		loginAs(c, "bea@example.com", beaPassword, 403) // disabled
		if got := c.must("GET", "/v1/workspaces/"+wsID[1], tok, "", 200)["plan"]; got != "pro" {
			t.Errorf("plan %v, want pro", got)
		}
		c.must("GET", "/v1/links", in.key, "", 401)
	})

	// Neither admin may leave the instance without one.
	in.mustCLI("users", "disable", "--user", "ops@example.com")
	if code, _, stderr := in.cli("", "users", "disable", "--user", "admin@example.com"); code != 1 || !strings.Contains(stderr, "only enabled instance admin") {
		t.Fatalf("disabling the last admin: exit %d, %q", code, stderr)
	}
}

// TestAdminCommandsLive runs the same commands while a server holds the
// data file: they read a hot backup and change through the admin API.
func TestAdminCommandsLive(t *testing.T) {
	t.Parallel()
	in := newAdminInstance(t)
	cfg, err := config.Load(in.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := startApp(t, cfg, nil)
	c := client{t, base}
	raw, _ := os.ReadFile(in.cfgPath)
	live := strings.Replace(string(raw), "listen: 127.0.0.1:0", "listen: 127.0.0.1:0\n  base_url: "+base, 1)
	in.cfgPath += ".live"
	if err := os.WriteFile(in.cfgPath, []byte(live), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, stderr := in.cli("", "users", "create", "--email", "ops@example.com", "--admin")
	if code != 0 || viaServer(stderr, "running server") {
		t.Fatalf("create: exit %d, %s%s", code, out, stderr)
	}
	opsTok := loginAs(c, "ops@example.com", password(t, out), 200)
	c.must("GET", "/v1/users", opsTok, "", 200) // an instance admin
	if !strings.Contains(in.mustCLI("users", "list"), "ops@example.com") {
		t.Fatal("users list does not show the new admin")
	}

	adminTok := loginAs(c, "admin@example.com", "a long password", 200)
	// With --token (the ops admin's), the config's admin is changed.
	code, out, stderr = runCLI(t, "users", "reset-password", "--user", "admin@example.com", "--token", opsTok, "--config", in.cfgPath)
	if code != 0 {
		t.Fatalf("reset-password: exit %d, %s%s", code, out, stderr)
	}
	c.must("GET", "/v1/me", adminTok, "", 401) // its tokens ended
	newAdmin := password(t, out)
	adminTok = loginAs(c, "admin@example.com", newAdmin, 200)

	wsID := regexp.MustCompile(`(?m)^(ws_\S+)\s+Default`).FindStringSubmatch(runOK(t, "workspaces", "list", "--token", opsTok, "--config", in.cfgPath))
	if wsID == nil {
		t.Fatal("no workspace listed")
	}
	runOK(t, "workspaces", "set-plan", "--workspace", wsID[1], "--plan", "enterprise", "--token", opsTok, "--config", in.cfgPath)
	if got := c.must("GET", "/v1/workspaces/"+wsID[1], adminTok, "", 200)["plan"]; got != "enterprise" {
		t.Fatalf("plan %v", got)
	}

	keyID := regexp.MustCompile(`(?m)^(key_\S+)\s+.*deploy`).FindStringSubmatch(runOK(t, "keys", "list", "--token", opsTok, "--config", in.cfgPath))
	if keyID == nil {
		t.Fatal("no key listed")
	}
	c.must("GET", "/v1/links", in.key, "", 200)
	runOK(t, "keys", "revoke", "--key", keyID[1], "--token", opsTok, "--config", in.cfgPath)
	c.must("GET", "/v1/links", in.key, "", 401)

	runOK(t, "users", "disable", "--user", "ops@example.com", "--token", adminTok, "--config", in.cfgPath)
	c.must("GET", "/v1/me", opsTok, "", 401)
	loginAs(c, "ops@example.com", "whatever it was", 401)

	// The audit log names the admin who made each change.
	log := c.must("GET", "/v1/admin/audit-log?limit=100", adminTok, "", 200)["data"].([]any)
	actions := map[string]bool{}
	for _, e := range log {
		actions[e.(map[string]any)["action"].(string)] = true
	}
	for _, want := range []string{"user.created", "user.password_changed", "key.revoked", "user.disabled"} {
		if !actions[want] {
			t.Errorf("the audit log has no %s: %v", want, actions)
		}
	}
}

func runOK(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("linkbolt %v: exit %d: %s%s", args, code, stdout, stderr)
	}
	return stdout
}

// TestAdminCommandsHelp: the list names every admin command, each one's
// help shows its flags by either spelling, a group without a subcommand
// names its subcommands, and a missing required flag is a usage error.
func TestAdminCommandsHelp(t *testing.T) {
	code, list, _ := runCLI(t, "help")
	if code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for _, tc := range []struct {
		cmd   []string
		flags []string
	}{
		{[]string{"restore"}, []string{"--config FILE", "--from FILE"}},
		{[]string{"users", "list"}, []string{"--config FILE", "--token TOKEN"}},
		{[]string{"users", "create"}, []string{"--config FILE", "--token TOKEN", "--email EMAIL", "--name NAME", "--admin", "--password-stdin"}},
		{[]string{"users", "disable"}, []string{"--config FILE", "--token TOKEN", "--user EMAIL or ID"}},
		{[]string{"users", "reset-password"}, []string{"--config FILE", "--token TOKEN", "--user EMAIL or ID", "--password-stdin", "--setup-link"}},
		{[]string{"workspaces", "list"}, []string{"--config FILE", "--token TOKEN"}},
		{[]string{"workspaces", "set-plan"}, []string{"--config FILE", "--token TOKEN", "--workspace ID", "--plan PLAN"}},
		{[]string{"keys", "list"}, []string{"--config FILE", "--token TOKEN", "--workspace ID"}},
		{[]string{"keys", "revoke"}, []string{"--config FILE", "--token TOKEN", "--key ID"}},
		{[]string{"export"}, []string{"--config FILE", "--token TOKEN", "--workspace ID", "--out FILE"}},
		{[]string{"geoip", "update"}, []string{"--config FILE", "--from FILE"}},
	} {
		name := strings.Join(tc.cmd, " ")
		if !strings.Contains(list, "\n  linkbolt "+name+" ") {
			t.Errorf("the list does not name %s", name)
		}
		var first string
		for _, args := range [][]string{append([]string{"help"}, tc.cmd...), append(append([]string{}, tc.cmd...), "--help")} {
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 || stderr != "" || !strings.Contains(stdout, "Usage:\n  linkbolt "+name+" ") {
				t.Fatalf("%v: exit %d, stderr %q:\n%s", args, code, stderr, stdout)
			}
			if first == "" {
				first = stdout
			} else if stdout != first {
				t.Errorf("%s: help differs by spelling", name)
			}
			for _, f := range tc.flags {
				if !strings.Contains(stdout, "\n  "+f+"\n") {
					t.Errorf("%v: no flag %q:\n%s", args, f, stdout)
				}
			}
			if got := strings.Count(stdout, "\n  --"); got != len(tc.flags) {
				t.Errorf("%v: %d flags, want %d", args, got, len(tc.flags))
			}
		}
	}
	// A command group's help lists its commands, as the list does.
	for _, group := range []string{"users", "workspaces", "keys", "geoip"} {
		var first string
		for _, args := range [][]string{{"help", group}, {group, "--help"}, {group, "-h"}} {
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage:\n  linkbolt "+group+" COMMAND [FLAGS]\n") {
				t.Fatalf("%v: exit %d, stderr %q:\n%s", args, code, stderr, stdout)
			}
			if first == "" {
				first = stdout
			} else if stdout != first {
				t.Errorf("%v: group help differs by spelling", args)
			}
			for _, name := range cli.CommandNames() {
				if strings.HasPrefix(name, group+" ") && !strings.Contains(stdout, "\n  linkbolt "+name+" ") {
					t.Errorf("%v does not name %s:\n%s", args, name, stdout)
				}
			}
		}
	}
	for _, tc := range []struct {
		args []string
		say  string
	}{
		{[]string{"users"}, "linkbolt users: name one of list, create, disable, reset-password"},
		{[]string{"keys", "rotate"}, "linkbolt keys: name one of list, revoke"},
		{[]string{"users", "create"}, "linkbolt users create: --email EMAIL is required"},
		{[]string{"users", "disable"}, "linkbolt users disable: --user EMAIL|ID is required"},
		{[]string{"users", "reset-password"}, "linkbolt users reset-password: --user EMAIL|ID is required"},
		{[]string{"users", "create", "--password", "x"}, "linkbolt users create: unknown flag --password"},
		{[]string{"workspaces", "set-plan", "--plan", "pro"}, "linkbolt workspaces set-plan: --workspace ID is required"},
		{[]string{"keys", "revoke"}, "linkbolt keys revoke: --key ID is required"},
		{[]string{"keys", "list", "extra"}, `linkbolt keys list: unexpected argument "extra"`},
		{[]string{"restore"}, "linkbolt restore: --from FILE is required"},
		{[]string{"export"}, "linkbolt export: --workspace ID is required"},
		{[]string{"geoip"}, "linkbolt geoip: name one of update"},
		{[]string{"geoip", "update"}, "linkbolt geoip update: --from FILE is required"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.say) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q, want 2 and one line starting %q", code, stdout, stderr, tc.say)
			}
			if entries, _ := os.ReadDir("."); len(entries) != 0 {
				t.Fatalf("a usage error left files behind: %v", entries)
			}
		})
	}
}

var printedLink = regexp.MustCompile(`(?m)^\S+/auth/reset-password\?token=(\S+)$`)

// TestResetPasswordSetupLink: reset-password --setup-link prints a
// one-time link, offline and through a running server; the user chooses a
// password with its token once, and the old password works until then.
func TestResetPasswordSetupLink(t *testing.T) {
	t.Parallel()
	in := newAdminInstance(t)
	if code, _, stderr := in.cli("x\n", "users", "reset-password", "--user", "admin@example.com", "--setup-link", "--password-stdin"); code != 2 || !strings.Contains(stderr, "not both") {
		t.Fatalf("both: exit %d, %q", code, stderr)
	}
	out := in.mustCLI("users", "reset-password", "--user", "admin@example.com", "--setup-link")
	m := printedLink.FindStringSubmatch(out)
	if m == nil || printedPassword.MatchString(out) {
		t.Fatalf("no link printed: %q", out)
	}
	in.serve(func(c client) {
		loginAs(c, "admin@example.com", "a long password", 200) // until the link is used
		c.must("POST", "/v1/auth/password-reset", "", `{"token":"`+m[1]+`","password":"chosen by the admin 1"}`, 200)
		c.must("POST", "/v1/auth/password-reset", "", `{"token":"`+m[1]+`","password":"chosen by the admin 2"}`, 403)
		loginAs(c, "admin@example.com", "a long password", 401)
		loginAs(c, "admin@example.com", "chosen by the admin 1", 200)
	})

	cfg, err := config.Load(in.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := startApp(t, cfg, nil)
	c := client{t, base}
	raw, _ := os.ReadFile(in.cfgPath)
	live := in.cfgPath + ".live"
	os.WriteFile(live, []byte(strings.Replace(string(raw), "listen: 127.0.0.1:0", "listen: 127.0.0.1:0\n  base_url: "+base, 1)), 0o600)
	tok := loginAs(c, "admin@example.com", "chosen by the admin 1", 200)
	out = runOK(t, "users", "reset-password", "--user", "admin@example.com", "--setup-link", "--token", tok, "--config", live)
	m = printedLink.FindStringSubmatch(out)
	// On bbolt the server makes the link, with its base_url; on PostgreSQL
	// the command does, with the base_url of its own configuration.
	linkBase := cfg.Server.BaseURL.String()
	if apptest.OnPostgres() {
		linkBase = base
	}
	if m == nil || !strings.Contains(out, linkBase+"/auth/reset-password?token=") {
		t.Fatalf("no link printed: %q", out)
	}
	if status, _, _ := c.call("GET", "/auth/reset-password?token="+m[1], "", ""); status != 200 {
		t.Fatalf("the link's page: %d", status)
	}
	c.must("POST", "/v1/auth/password-reset", "", `{"token":"`+m[1]+`","password":"chosen by the admin 3"}`, 200)
	c.must("GET", "/v1/me", tok, "", 401)
	loginAs(c, "admin@example.com", "chosen by the admin 3", 200)
}

// TestCommandsWithoutDataFile: a command run where there is no data file
// says so and how a new instance gets one, and creates nothing.
func TestCommandsWithoutDataFile(t *testing.T) {
	for _, args := range [][]string{
		{"users", "list"},
		{"workspaces", "list"},
		{"keys", "list"},
		{"export", "--workspace", "ws_x"},
		{"backup", "--out", "b.db"},
		{"check"},
		{"import", "--from", "csv", "--workspace", "ws_x", "--file", "links.csv"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, stdout, stderr := runCLI(t, args...)
			want := "no data file at ./data/linkbolt.db (storage.path): start linkbolt serve once to make one"
			if code != 1 || stdout != "" || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q, want 1 and %q", code, stdout, stderr, want)
			}
			if entries, _ := os.ReadDir("."); len(entries) != 0 {
				t.Fatalf("left files behind: %v", entries)
			}
		})
	}
}
