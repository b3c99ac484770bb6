package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/internal/app"
	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/linkbolt/linkbolt/internal/cli"
	"github.com/linkbolt/linkbolt/internal/config"
)

// testConfig returns a configuration for a server on a free loopback port
// with its data under a temporary directory.
func testConfig(t testing.TB, yaml string) *config.Config { return apptest.Config(t, yaml) }

// boltConfig is testConfig on a bbolt data file whichever store the tests
// run on: for what only that store does (its file, hot backups, damage,
// compaction).
func boltConfig(t testing.TB, yaml string) *config.Config { return apptest.BoltConfig(t, yaml) }

// startApp boots a whole server and returns its base URL and a stop
// function that stops it gracefully and returns Run's error.
func startApp(t testing.TB, cfg *config.Config, logs io.Writer) (string, func() error) {
	return apptest.Start(t, cfg, logs)
}

// run runs linkbolt's command line in the test's process, with an empty
// stdin.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Run(ctx, args, strings.NewReader(""), stdout, stderr)
}

type client struct {
	t    testing.TB
	base string
}

func (c client) call(method, path, cred, body string) (int, map[string]any, http.Header) {
	c.t.Helper()
	var h map[string]string
	if cred != "" {
		h = map[string]string{"Authorization": "Bearer " + cred}
	}
	return c.callHeader(method, path, h, body)
}

// callHeader is call with the request headers header.
func (c client) callHeader(method, path string, header map[string]string, body string) (int, map[string]any, http.Header) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, resp.Header
}

func (c client) must(method, path, cred, body string, want int) map[string]any {
	c.t.Helper()
	status, out, _ := c.call(method, path, cred, body)
	if status != want {
		c.t.Fatalf("%s %s: %d, want %d: %v", method, path, status, want, out)
	}
	return out
}

func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\nclicks:\n  flush_interval: 1h\n")
	base, stop := startApp(t, cfg, nil)
	c := client{t, base}
	c.must("GET", "/healthz", "", "", 200)
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key := c.must("POST", "/v1/keys", tok, `{"name":"script","scope":"read_write"}`, 201)["key"].(string)
	l := c.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/x"}`, 201)
	code := l["alias"].(string)
	for i := 0; i < 7; i++ {
		status, _, h := c.call("GET", "/"+code, "", "")
		if status != 302 || h.Get("Location") != "https://example.com/x" {
			t.Fatalf("redirect: %d %q", status, h.Get("Location"))
		}
	}
	// The flush interval is an hour: only the graceful stop writes the
	// clicks and the key's counters.
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	base, _ = startApp(t, cfg, nil)
	c = client{t, base}
	got := c.must("GET", "/v1/links/"+l["id"].(string), key, "", 200)
	if got["clicks"] != float64(7) {
		t.Fatalf("clicks after restart = %v, want 7", got["clicks"])
	}
	keys := c.must("GET", "/v1/keys", key, "", 200)["data"].([]any)
	if rc := keys[0].(map[string]any)["request_count"]; rc != float64(3) {
		t.Fatalf("request_count after restart = %v, want 3", rc)
	}
	// The JWT secret was generated once and kept: the old token still works.
	c.must("GET", "/v1/me", tok, "", 200)
}

func TestSetupLink(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "")
	logs := &syncWriter{}
	base, _ := startApp(t, cfg, logs)
	c := client{t, base}
	i := strings.Index(logs.String(), "/setup?token=")
	if i < 0 {
		t.Fatalf("no setup link in the log: %s", logs.String())
	}
	token := strings.Fields(logs.String()[i+len("/setup?token="):])[0]
	token = strings.Trim(token, `"`)
	checkSetupPage(t, base+"/setup?token="+token, token)
	c.must("POST", "/v1/setup", "", `{"token":"wrong","email":"a@example.com","password":"a long password"}`, 403)
	c.must("POST", "/v1/setup", "", `{"token":"`+token+`","email":"a@example.com","password":"short"}`, 422)
	out := c.must("POST", "/v1/setup", "", `{"token":"`+token+`","email":"a@example.com","password":"a long password"}`, 201)
	me := c.must("GET", "/v1/me", out["token"].(string), "", 200)
	if me["admin"] != true || len(me["workspaces"].([]any)) != 1 {
		t.Fatalf("me: %v", me)
	}
	// It works once.
	c.must("POST", "/v1/setup", "", `{"token":"`+token+`","email":"b@example.com","password":"a long password"}`, 403)
}

// checkSetupPage gets the setup page and checks that it carries the form
// and that its text wraps anywhere, so the long address it shows when done
// stays on a narrow screen; it never shows the login token.
func checkSetupPage(t *testing.T, url, token string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	page := string(b)
	if res.StatusCode != 200 || !strings.Contains(page, `name="token" value="`+token+`"`) || strings.Contains(page, "token: ") || !strings.Contains(page, "sign in with this e-mail and password") {
		t.Fatalf("setup page: %d\n%s", res.StatusCode, page)
	}
	_, style, _ := strings.Cut(page, "<style>")
	style, _, _ = strings.Cut(style, "</style>")
	_, body, _ := strings.Cut(style, "body{")
	body, _, _ = strings.Cut(body, "}")
	if !strings.Contains(strings.ReplaceAll(body, " ", ""), "overflow-wrap:anywhere") {
		t.Fatalf("the setup page's text does not wrap anywhere: body{%s}", body)
	}
}

// syncWriter is a log sink the server writes to while the test reads it.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLockedDataFile(t *testing.T) {
	t.Parallel()
	cfg := boltConfig(t, "")
	startApp(t, cfg, nil)
	cfg2 := *cfg
	cfg2.Server.Listen = "127.0.0.1:0"
	start := time.Now()
	_, err := app.New(context.Background(), &cfg2, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("second open: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %s to fail", d)
	}
}

func TestBackup(t *testing.T) {
	t.Parallel()
	cfg := boltConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	cfgPath := filepath.Join(filepath.Dir(filepath.Dir(cfg.Storage.Path)), "config.yaml")
	base, stop := startApp(t, cfg, nil)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key := c.must("POST", "/v1/keys", tok, `{"name":"k","scope":"read_write"}`, 201)["key"].(string)
	c.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/","alias":"kept"}`, 201)

	// While the server runs, the backup goes through its admin API.
	cfgWithURL := cfgPath + ".live"
	raw, _ := os.ReadFile(cfgPath)
	live := strings.Replace(string(raw), "listen: 127.0.0.1:0", "listen: 127.0.0.1:0\n  base_url: "+base, 1)
	os.WriteFile(cfgWithURL, []byte(live), 0o600)
	out1 := filepath.Join(t.TempDir(), "live.db")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"backup", "--config", cfgWithURL, "--out", out1}, &stdout, &stderr); code != 0 {
		t.Fatalf("live backup: exit %d: %s", code, stderr.String())
	}
	checkBackup(t, out1)

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// Offline, the backup only reads: the data file stays byte for byte as
	// it was (no schema upgrade, no commit).
	before, err := os.ReadFile(cfg.Storage.Path)
	if err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "cold.db")
	if code := run(context.Background(), []string{"backup", "--config", cfgPath, "--out", out2}, &stdout, &stderr); code != 0 {
		t.Fatalf("cold backup: exit %d: %s", code, stderr.String())
	}
	checkBackup(t, out2)
	if after, err := os.ReadFile(cfg.Storage.Path); err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the offline backup changed the data file (err %v)", err)
	}
	if code := run(context.Background(), []string{"backup", "--config", cfgPath}, &stdout, &stderr); code == 0 {
		t.Fatal("backup without --out succeeded")
	}
}

// checkBackup opens a backup with bbolt, checks it and finds the link.
func checkBackup(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		b := tx.Bucket([]byte("links.alias"))
		if b == nil || b.Get([]byte("\x00kept")) == nil {
			return fmt.Errorf("the link is not in the backup")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCORSEndToEnd: server.cors_origins reaches the running server, and a
// browser application's preflight and request over a real connection get
// their answers.
func TestCORSEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	cfg.Server.CORSOrigins = []string{"https://app.example.com"} // as loadConfig leaves it
	base, _ := startApp(t, cfg, nil)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key := c.must("POST", "/v1/keys", tok, `{"name":"browser app","scope":"read"}`, 201)["key"].(string)

	req, _ := http.NewRequest("OPTIONS", base+"/v1/links", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "x-api-key")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")), "x-api-key") {
		t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
	}
	req, _ = http.NewRequest("GET", base+"/v1/links", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("X-API-Key", key)
	if res, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "X-RateLimit-Remaining") {
		t.Fatalf("request: %d %v", res.StatusCode, res.Header)
	}
}

// TestStopWithRequestInFlight: a request that outlives the shutdown
// timeout is cut off, but every click is still written.
func TestStopWithRequestInFlight(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\nclicks:\n  flush_interval: 1h\n")
	cfg.Server.ShutdownTimeout = 500 * time.Millisecond
	base, stop := startApp(t, cfg, nil)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	l := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/"}`, 201)
	for i := 0; i < 20; i++ {
		c.call("GET", "/"+l["alias"].(string), "", "")
	}
	// A POST whose body never ends holds a request open.
	pr, pw := io.Pipe()
	defer pw.Close()
	req, _ := http.NewRequest("POST", base+"/v1/links", pr)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	go http.DefaultClient.Do(req)
	pw.Write([]byte(`{"destination_url":`))
	time.Sleep(50 * time.Millisecond) // let the request reach the handler

	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	base, _ = startApp(t, cfg, nil)
	c = client{t, base}
	if got := c.must("GET", "/v1/links/"+l["id"].(string), tok, "", 200)["clicks"]; got != float64(20) {
		t.Fatalf("clicks after a stop that cut a request off = %v, want 20", got)
	}
}

// The running server answers the requests net/http refuses itself with
// problem+json, and knows its real listen port (server.listen is :0 here)
// as this service: a destination on it in another spelling is refused.
func TestMalformedRequestsAndOwnPortEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	base, _ := startApp(t, cfg, nil)
	c := client{t, base}
	addr := strings.TrimPrefix(base, "http://")

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /% HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 400 || res.Header.Get("Content-Type") != "application/problem+json" || p["code"] != "invalid_request" {
		t.Fatalf("GET /%%: %d %q %v", res.StatusCode, res.Header.Get("Content-Type"), p)
	}

	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	_, port, _ := net.SplitHostPort(addr)
	for _, dest := range []string{"http://127.1:" + port + "/x", "http://localhost:" + port + "/x", "http://2130706433:" + port + "/x"} {
		status, out, _ := c.call("POST", "/v1/links", tok, `{"destination_url":"`+dest+`"}`)
		if status != 422 {
			t.Fatalf("%s: %d %v", dest, status, out)
		}
	}
}

// TestMaxConnectionsWired: server.max_connections reaches the listener.
// With one connection allowed, a second client finds it taken by the
// first client's idle keep-alive connection, which is closed to let it in.
func TestMaxConnectionsWired(t *testing.T) {
	t.Setenv("LINKBOLT_SERVER_MAX_CONNECTIONS", "1")
	base, _ := startApp(t, testConfig(t, ""), nil)
	for i := 0; i < 2; i++ {
		c := &http.Client{Transport: &http.Transport{}}
		defer c.CloseIdleConnections()
		res, err := c.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	if open, closed := metricValue(t, base, "linkbolt_connections_open"), metricValue(t, base, "linkbolt_connections_idle_closed_total"); open != 1 || closed == 0 {
		t.Fatalf("one connection allowed, but %d open and %d idle ones closed", open, closed)
	}
}

// TestWebhookEventsWired: the app hands the one event encoder to every
// service that writes events, so a workspace's webhook receives each kind
// (a service wired without it would drop its events without a word).
func TestWebhookEventsWired(t *testing.T) {
	t.Parallel()
	type received struct{ ID, Type, WorkspaceID string }
	var mu sync.Mutex
	var got []received
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ID          string          `json:"id"`
			Type        string          `json:"type"`
			CreatedAt   string          `json:"created_at"`
			WorkspaceID string          `json:"workspace_id"`
			Data        json.RawMessage `json:"data"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Data) == 0 {
			t.Errorf("delivery body: %+v, %v", body, err)
		}
		if _, err := time.Parse(time.RFC3339, body.CreatedAt); err != nil || strings.Contains(body.CreatedAt, ".") {
			t.Errorf("%s created_at %q: not whole seconds (%v)", body.Type, body.CreatedAt, err)
		}
		mu.Lock()
		got = append(got, received{body.ID, body.Type, body.WorkspaceID})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n"+
		"webhooks:\n  allow_private: true\nclicks:\n  flush_interval: 10ms\n")
	base, _ := startApp(t, cfg, nil)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	ws := c.must("GET", "/v1/me", tok, "", 200)["workspaces"].([]any)[0].(map[string]any)["id"].(string)
	hook := c.must("POST", "/v1/webhooks", tok, `{"url":"`+recv.URL+`/hook","events":["link.created","link.updated","link.deleted","link.clicked","campaign.updated"]}`, 201)["id"].(string)

	cmp := c.must("POST", "/v1/campaigns", tok, `{"name":"Spring"}`, 201)["id"].(string)
	l := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/x","campaign_id":"`+cmp+`"}`, 201)
	c.must("PATCH", "/v1/links/"+l["id"].(string), tok, `{"tags":["a"]}`, 200)
	if status, _, _ := c.call("GET", "/"+l["alias"].(string), "", ""); status != 302 {
		t.Fatalf("redirect: %d", status)
	}
	c.must("PATCH", "/v1/campaigns/"+cmp, tok, `{"name":"Summer"}`, 200)
	c.must("POST", "/v1/webhooks/"+hook+"/test", tok, "", 202)
	c.must("DELETE", "/v1/links/"+l["id"].(string), tok, "", 204)

	want := []string{"campaign.updated", "link.clicked", "link.created", "link.deleted", "link.updated", "ping"}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		types := map[string]bool{}
		for _, r := range got {
			types[r.Type] = true
			if !strings.HasPrefix(r.ID, "evt_") || r.WorkspaceID != ws {
				t.Errorf("%s: id %q, workspace %q (want %s)", r.Type, r.ID, r.WorkspaceID, ws)
			}
		}
		mu.Unlock()
		missing := []string{}
		for _, typ := range want {
			if !types[typ] {
				missing = append(missing, typ)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %v event arrived; got %+v", missing, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runCLI runs linkbolt's command line in the test's process and returns
// the exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestBaseURLNormalised: a base URL is kept as browsers read it, so short
// URLs, the simple API's shortUrl and the loop check use the host people
// and browsers send: an internationalised name in its xn-- form (not
// percent-encoded), lower case, IPv4 in dotted decimal, no trailing dot,
// no default port. A port outside 1-65535 or a host browsers refuse
// stops the start, naming the key.
func TestBaseURLNormalised(t *testing.T) {
	for in, want := range map[string]string{
		"http://bücher.example:8080":   "http://xn--bcher-kva.example:8080",
		"HTTPS://Sho.RT./":             "https://sho.rt",
		"http://localhost:80":          "http://localhost",
		"https://sho.rt:443":           "https://sho.rt",
		"https://sho.rt:8443":          "https://sho.rt:8443",
		"http://127.1:008080":          "http://127.0.0.1:8080",
		"http://[::FFFF:127.0.0.1]:81": "http://[::ffff:127.0.0.1]:81",
		"http://my_host:8080":          "http://my_host:8080",
	} {
		t.Run(in, func(t *testing.T) {
			t.Chdir(t.TempDir())
			t.Setenv("LINKBOLT_SERVER_BASE_URL", in)
			t.Setenv("LINKBOLT_SERVER_ALT_BASE_URL", in)
			cfg, err := config.Load("")
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Server.BaseURL.String(); got != want {
				t.Errorf("server.base_url = %s, want %s", got, want)
			}
			if got := cfg.Server.AltBaseURL.String(); got != want {
				t.Errorf("server.alt_base_url = %s, want %s", got, want)
			}
		})
	}
	for _, bad := range []string{"http://x.test:0", "http://x.test:99999", "http://[fe80::1%25eth0]:8080",
		"http://xn--zz.example", "http://1.2.3.4.5"} {
		t.Run(bad, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.yaml")
			os.WriteFile(p, []byte("server:\n  base_url: \""+bad+"\"\n"), 0o600)
			if _, err := config.Load(p); err == nil || !strings.Contains(err.Error(), "server.base_url") {
				t.Fatalf("err = %v, want one naming server.base_url", err)
			}
		})
	}

	t.Run("short URLs of a running server", func(t *testing.T) {
		t.Setenv("LINKBOLT_SERVER_BASE_URL", "http://Bücher.example:80")
		cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
		base, _ := startApp(t, cfg, nil)
		c := client{t, base}
		tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
		l := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/x","alias":"spring"}`, 201)
		if got, want := l["short_url"], "http://xn--bcher-kva.example/spring"; got != want {
			t.Fatalf("short_url = %v, want %v", got, want)
		}
		s := c.must("POST", "/api/urls", tok, `{"originalUrl":"https://example.com/y"}`, 201)
		if got := s["shortUrl"].(string); !strings.HasPrefix(got, "http://xn--bcher-kva.example/") {
			t.Fatalf("shortUrl = %v", got)
		}
		// The base URL's host in any spelling is this service: no loop.
		for _, dest := range []string{"http://xn--bcher-kva.example/spring", "http://bücher.example/spring"} {
			status, out, _ := c.call("POST", "/v1/links", tok, `{"destination_url":"`+dest+`"}`)
			if status != 422 {
				t.Fatalf("a link to %s: %d %v, want 422", dest, status, out)
			}
		}
	})
}
