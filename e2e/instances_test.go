package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
)

// nginxBinary finds nginx: on the PATH or in Debian's /usr/sbin. Without
// it the test skips with a message, except with CI=true (.ci/run installs
// it), where it fails.
func nginxBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("nginx is not installed (apt-get install nginx): the tests behind a load balancer need it")
	}
	t.Skip("nginx is not installed (apt-get install nginx): the tests behind a load balancer need it")
	return ""
}

// startNginx runs nginx with deploy/nginx-linkbolt.conf as it is, but for
// its upstream servers (the instances at upstreams) and its listening
// address (a free loopback port, returned), with its pid, logs and
// temporary files in a folder of the test.
func startNginx(t *testing.T, upstreams []string) string {
	t.Helper()
	bin := nginxBinary(t)
	conf, err := os.ReadFile(filepath.Join("..", "deploy", "nginx-linkbolt.conf"))
	if err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	var out strings.Builder
	servers := 0
	sc := bufio.NewScanner(strings.NewReader(string(conf)))
	for sc.Scan() {
		line := sc.Text()
		switch trimmed := strings.TrimSpace(line); {
		case strings.HasPrefix(trimmed, "server 127.0.0.1:"):
			if servers == 0 {
				_, opts, _ := strings.Cut(strings.TrimSuffix(trimmed, ";"), " max_fails")
				for _, u := range upstreams {
					fmt.Fprintf(&out, "\tserver %s max_fails%s;\n", u, opts)
				}
			}
			servers++
			continue
		case trimmed == "listen 80;":
			line = "\tlisten " + addr + ";"
		case trimmed == "listen [::]:80;":
			continue
		}
		out.WriteString(line + "\n")
	}
	if servers == 0 || !strings.Contains(out.String(), "listen "+addr) {
		t.Fatalf("deploy/nginx-linkbolt.conf has no upstream servers or no listen 80 line to point at the test's:\n%s", conf)
	}
	dir := t.TempDir()
	user := ""
	if os.Getuid() == 0 {
		user = "user root;" // the workers read the test's folder
	}
	main := fmt.Sprintf(`%s
daemon off;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path %[2]s/body;
	proxy_temp_path %[2]s/proxy;
	fastcgi_temp_path %[2]s/fastcgi;
	uwsgi_temp_path %[2]s/uwsgi;
	scgi_temp_path %[2]s/scgi;
	include %[2]s/linkbolt.conf;
}
`, user, dir)
	if err := os.WriteFile(filepath.Join(dir, "linkbolt.conf"), []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	startProcess(t, cmd, addr)
	t.Cleanup(func() {
		// Stopped, not killed: the master stops its workers, which a
		// killed master would leave behind.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "error.log")); err == nil {
				t.Logf("nginx's error log:\n%s", b)
			}
		}
	})
	return addr
}

// unitEnvironment returns the Environment lines of the systemd template
// unit deploy/linkbolt@.service for the instance on port, its state under
// state instead of /var/lib/linkbolt, on host "e2e".
func unitEnvironment(t *testing.T, port, state string) []string {
	t.Helper()
	unit, err := os.ReadFile(filepath.Join("..", "deploy", "linkbolt@.service"))
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for line := range strings.SplitSeq(string(unit), "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "Environment=")
		if !ok {
			continue
		}
		v = strings.NewReplacer("%i", port, "%l", "e2e", "/var/lib/linkbolt", state).Replace(v)
		env = append(env, v)
	}
	if len(env) == 0 {
		t.Fatal("deploy/linkbolt@.service sets no Environment")
	}
	return env
}

// instance is a linkbolt process started as deploy/linkbolt@.service
// starts it, on the database db, behind front.
func startInstance(t *testing.T, addr, db, front, state string, env ...string) *child {
	t.Helper()
	port := addr[strings.LastIndex(addr, ":")+1:]
	cmd := exec.Command(binary(t), "serve")
	cmd.Env = append(os.Environ(), unitEnvironment(t, port, state)...)
	cmd.Env = append(cmd.Env, "LINKBOLT_STORAGE_POSTGRES_URL="+db, "LINKBOLT_SERVER_BASE_URL=http://"+front,
		"LINKBOLT_ADMIN_EMAIL=admin@example.com", "LINKBOLT_ADMIN_PASSWORD=a long password",
		"LINKBOLT_AUTH_PASSWORD_COST=4", "LINKBOLT_CLICKS_FLUSH_INTERVAL=100ms", "LINKBOLT_PLANS_FREE=0",
		"LINKBOLT_WEBHOOKS_ALLOW_PRIVATE=true")
	cmd.Env = append(cmd.Env, env...)
	return startProcess(t, cmd, addr)
}

// TestInstancesBehindNginx runs three instances on one PostgreSQL database
// as deploy/linkbolt@.service starts them, behind nginx configured by
// deploy/nginx-linkbolt.conf, and uses them as one service: writes read
// back at once through any instance, a revoked key refused everywhere,
// clicks counted exactly, each webhook event delivered once, and an
// instance killed under load losing no acknowledged write and no
// redirect.
func TestInstancesBehindNginx(t *testing.T) {
	pgtest.SkipUnlessPostgres(t)
	t.Parallel()
	db := apptest.PostgresURL(t)
	addrs := []string{freePort(t), freePort(t), freePort(t)}
	front := startNginx(t, addrs)
	state := t.TempDir()
	kids := make([]*child, len(addrs))
	for i, a := range addrs {
		kids[i] = startInstance(t, a, db, front, state)
	}
	c := client{t, "http://" + front}

	// Each request may go to another instance: all three answer, each
	// with its id.
	seen := map[string]bool{}
	for range 12 {
		_, health, _ := c.call("GET", "/healthz", "", "")
		seen[fmt.Sprint(health["instance"])] = true
	}
	for _, a := range addrs {
		if id := "e2e-" + a[strings.LastIndex(a, ":")+1:]; !seen[id] {
			t.Fatalf("/healthz through nginx named %v, not %s", seen, id)
		}
	}

	// Webhook deliveries, counted by event id.
	var mu sync.Mutex
	deliveries := map[string]int{}
	created := map[string]string{} // link id → event id
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Errorf("webhook body %s: %v", b, err)
		}
		mu.Lock()
		deliveries[ev.ID]++
		if ev.Type == "link.created" {
			created[ev.Data.ID] = ev.ID
		}
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)

	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key := c.must("POST", "/v1/keys", tok, `{"name":"script","scope":"read_write"}`, 201)["key"].(string)
	c.must("POST", "/v1/webhooks", key, `{"url":"`+hook.URL+`","events":["link.created"]}`, 201)

	// Read your own writes: each link read back at once, most likely from
	// another instance than the one that made it.
	var ids []string
	for i := range 30 {
		l := c.must("POST", "/v1/links", key, fmt.Sprintf(`{"destination_url":"https://example.com/%d"}`, i), 201)
		id := l["id"].(string)
		c.must("GET", "/v1/links/"+id, key, "", 200)
		ids = append(ids, id)
	}
	first := c.must("GET", "/v1/links/"+ids[0], key, "", 200)["alias"].(string)

	// Clicks counted exactly, whichever instance served them.
	const clicks = 300
	for range clicks {
		if status, _, h := c.call("GET", "/"+first, "", ""); status != 302 || h.Get("Location") != "https://example.com/0" {
			t.Fatalf("redirect through nginx: %d %q", status, h.Get("Location"))
		}
	}
	waitFor(t, "the clicks counted", func() bool { return counted(c, key, ids[:1]) >= clicks })
	if n := counted(c, key, ids[:1]); n != clicks {
		t.Fatalf("%d clicks counted, want exactly %d", n, clicks)
	}

	// A click limit holds across the instances: of 60 visitors at once,
	// exactly max_clicks are redirected.
	limited := c.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/limited","max_clicks":25}`, 201)["alias"].(string)
	var through, refused atomic.Int64
	var lg sync.WaitGroup
	for range 60 {
		lg.Go(func() {
			switch status, _, _ := c.call("GET", "/"+limited, "", ""); status {
			case 302:
				through.Add(1)
			case 410:
				refused.Add(1)
			}
		})
	}
	lg.Wait()
	if through.Load() != 25 || refused.Load() != 35 {
		t.Fatalf("60 visitors at once through three instances, max_clicks 25: %d redirected, %d refused", through.Load(), refused.Load())
	}

	// A revoked key is refused by every instance at once.
	short := c.must("POST", "/v1/keys", tok, `{"name":"short-lived","scope":"read"}`, 201)
	for range 3 {
		c.must("GET", "/v1/links?limit=1", short["key"].(string), "", 200)
	}
	c.must("DELETE", "/v1/keys/"+short["id"].(string), tok, "", 204)
	for range 6 {
		c.must("GET", "/v1/links?limit=1", short["key"].(string), "", 401)
	}

	// Each link.created event delivered once.
	waitFor(t, "the link.created deliveries", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(created) >= len(ids)
	})
	mu.Lock()
	for _, id := range ids {
		if ev, ok := created[id]; !ok || deliveries[ev] != 1 {
			t.Errorf("link %s: link.created event %q delivered %d times, want once", id, ev, deliveries[ev])
		}
	}
	mu.Unlock()

	// An instance killed under creation and redirect load: every link
	// acknowledged is there, and every redirect answered.
	var acked sync.Map
	var redirects, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if w%2 == 0 {
					req, _ := http.NewRequest("POST", c.base+"/v1/links", strings.NewReader(fmt.Sprintf(`{"destination_url":"https://example.com/w%d/%d"}`, w, i)))
					req.Header.Set("Authorization", "Bearer "+key)
					req.Header.Set("Content-Type", "application/json")
					resp, err := hc.Do(req)
					if err != nil {
						continue // not acknowledged
					}
					var l struct{ ID string }
					_ = json.NewDecoder(resp.Body).Decode(&l)
					resp.Body.Close()
					if resp.StatusCode == 201 {
						acked.Store(l.ID, true)
					}
					continue
				}
				resp, err := hc.Get(c.base + "/" + first)
				if err != nil {
					failed.Add(1)
					continue
				}
				resp.Body.Close()
				redirects.Add(1)
				if resp.StatusCode != 302 {
					failed.Add(1)
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	if err := kids[1].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = kids[1].cmd.Wait()
	time.Sleep(700 * time.Millisecond)
	close(stop)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d redirects through nginx failed while an instance was killed", n, redirects.Load())
	}
	n := 0
	acked.Range(func(id, _ any) bool {
		n++
		c.must("GET", "/v1/links/"+id.(string), key, "", 200)
		return true
	})
	if n == 0 {
		t.Fatal("no link was acknowledged under load")
	}
	t.Logf("%d redirects and %d links created while instance %s was killed", redirects.Load(), n, addrs[1])
}

// waitFor polls check every 20 ms until it holds, failing the test after
// 20 s.
func waitFor(t *testing.T, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 20 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestInstancesThroughDatabaseOutage freezes, then stops the database
// under redirect load on two instances: links they served before keep
// redirecting, an
// unknown code answers 503 (never 404), the API 503 with Retry-After,
// /healthz 503 with the reason; when the database is back both answer
// again without a restart and every redirect answered is counted once.
func TestInstancesThroughDatabaseOutage(t *testing.T) {
	pgtest.SkipUnlessPostgres(t)
	t.Parallel()
	cluster := pgtest.NewCluster(t)
	db := cluster.URL(t)
	addrs := []string{freePort(t), freePort(t)}
	front := startNginx(t, addrs)
	state := t.TempDir()
	for _, a := range addrs {
		startInstance(t, a, db, front, state)
	}
	c := client{t, "http://" + front}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key := c.must("POST", "/v1/keys", tok, `{"name":"script","scope":"read_write"}`, 201)["key"].(string)
	var ids, aliases []string
	for i := range 5 {
		l := c.must("POST", "/v1/links", key, fmt.Sprintf(`{"destination_url":"https://example.com/%d"}`, i), 201)
		ids, aliases = append(ids, l["id"].(string)), append(aliases, l["alias"].(string))
	}
	// Each instance serves each link once, so it has it in memory.
	var answered atomic.Int64
	redirect := func(i int) int {
		status, _, _ := c.call("GET", "/"+aliases[i], "", "")
		if status == 302 {
			answered.Add(1)
		}
		return status
	}
	for range 4 {
		for i := range aliases {
			if s := redirect(i); s != 302 {
				t.Fatalf("redirect before the outage: %d", s)
			}
		}
	}

	// A database that stops answering without refusing (frozen): the
	// links keep redirecting, /healthz says so within its own bound.
	cluster.Freeze(t)
	for _, a := range addrs {
		waitFor(t, "/healthz of "+a+" says the frozen database is away", func() bool {
			status, h, _ := client{t, "http://" + a}.call("GET", "/healthz", "", "")
			return status == 503 && h["reason"] == "the database cannot be reached"
		})
	}
	for range 10 {
		for i := range aliases {
			if s := redirect(i); s != 302 {
				t.Fatalf("a link served before answered %d while the database was frozen", s)
			}
		}
	}
	cluster.Thaw(t)
	for _, a := range addrs {
		waitFor(t, "/healthz of "+a+" after the freeze", func() bool {
			status, _, _ := client{t, "http://" + a}.call("GET", "/healthz", "", "")
			return status == 200
		})
	}

	cluster.Stop(t)
	for _, a := range addrs {
		waitFor(t, "/healthz of "+a+" says the database is away", func() bool {
			status, h, _ := client{t, "http://" + a}.call("GET", "/healthz", "", "")
			return status == 503 && h["reason"] == "the database cannot be reached"
		})
	}
	for range 50 {
		for i := range aliases {
			if s := redirect(i); s != 302 {
				t.Fatalf("a link served before the outage answered %d during it", s)
			}
		}
	}
	if status, body, h := c.call("GET", "/nosuchcode", "", ""); status != 503 || h.Get("Retry-After") == "" {
		t.Fatalf("an unknown code during the outage: %d %v %v", status, h, body)
	}
	if status, body, h := c.call("POST", "/v1/links", key, `{"destination_url":"https://example.com/x"}`); status != 503 || h.Get("Retry-After") == "" || body["code"] != "store_unavailable" {
		t.Fatalf("a create during the outage: %d %v %v", status, h, body)
	}

	cluster.Start(t)
	for _, a := range addrs {
		waitFor(t, "/healthz of "+a+" after the outage", func() bool {
			status, _, _ := client{t, "http://" + a}.call("GET", "/healthz", "", "")
			return status == 200
		})
	}
	c.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/after"}`, 201)
	want := answered.Load()
	waitFor(t, "every redirect counted", func() bool { return counted(c, key, ids) >= want })
	if got := counted(c, key, ids); got != want {
		t.Fatalf("%d clicks counted, want the %d redirects answered", got, want)
	}
}

// TestInstancesShareTheSetup: two instances starting on one empty
// database log one setup link, which works through either; once setup is
// done through one, the other opens the dashboard rather than point to
// the setup link, and the link works no more anywhere.
func TestInstancesShareTheSetup(t *testing.T) {
	pgtest.SkipUnlessPostgres(t)
	t.Parallel()
	db := apptest.PostgresURL(t)
	state := t.TempDir()
	var kids []*child
	for range 2 {
		addr := freePort(t)
		port := addr[strings.LastIndex(addr, ":")+1:]
		cmd := exec.Command(binary(t), "serve")
		cmd.Env = append(os.Environ(), unitEnvironment(t, port, state)...)
		cmd.Env = append(cmd.Env, "LINKBOLT_STORAGE_POSTGRES_URL="+db, "LINKBOLT_SERVER_BASE_URL=http://"+addr,
			"LINKBOLT_AUTH_PASSWORD_COST=4")
		kids = append(kids, startProcess(t, cmd, addr))
	}
	token := func(c *child) string {
		var tok string
		waitFor(t, "the setup link in the log", func() bool {
			logs := c.logs.String()
			i := strings.Index(logs, "/setup?token=")
			if i < 0 {
				return false
			}
			tok = strings.Trim(strings.Fields(logs[i+len("/setup?token="):])[0], `"`)
			return true
		})
		return tok
	}
	tok := token(kids[0])
	if other := token(kids[1]); other != tok {
		t.Fatalf("two setup links: %q and %q", tok, other)
	}
	a, b := kids[0].client(), kids[1].client()
	home := func(c client) int {
		req, _ := http.NewRequest("GET", c.base+"/", nil)
		req.Header.Set("Accept", "text/html")
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if home(a) != 200 {
		t.Fatal("the home page before setup does not point to the setup link")
	}
	b.must("POST", "/v1/setup", "", `{"token":"`+tok+`","email":"a@example.com","password":"a long password"}`, 201)
	if s := home(a); s != 302 {
		t.Fatalf("a's home page after setup through b: %d, want 302 to the dashboard", s)
	}
	a.must("POST", "/v1/setup", "", `{"token":"`+tok+`","email":"b@example.com","password":"a long password"}`, 403)
}
