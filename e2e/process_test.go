package e2e

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
)

// binary builds linkbolt once for the tests that run it as a child process.
func binary(t *testing.T) string { return apptest.Binary(t) }

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// childDatabases holds the PostgreSQL database of each data folder of
// the children, so that a child started again on dir finds its data.
var childDatabases sync.Map

// childDatabase is the database of the children with their data in dir,
// made on first use.
func childDatabase(t *testing.T, dir string) string {
	t.Helper()
	if u, ok := childDatabases.Load(dir); ok {
		return u.(string)
	}
	u, _ := childDatabases.LoadOrStore(dir, apptest.PostgresURL(t))
	return u.(string)
}

// child is a linkbolt process with its data in dir (in a database of its
// own with LINKBOLT_TEST_STORE=postgres).
type child struct {
	t    *testing.T
	cmd  *exec.Cmd
	logs *syncWriter
	addr string
}

func startChild(t *testing.T, dir, flush string, env ...string) *child {
	t.Helper()
	return startChildOn(t, apptest.OnPostgres(), dir, flush, env...)
}

// startBoltChild is startChild on a bbolt data file whichever store the
// tests run on.
func startBoltChild(t *testing.T, dir, flush string, env ...string) *child {
	t.Helper()
	pgtest.SkipInSecondPass(t)
	return startChildOn(t, false, dir, flush, env...)
}

// startChildOn starts a child on PostgreSQL when pg is true, else on the
// bbolt file in dir.
func startChildOn(t *testing.T, pg bool, dir, flush string, env ...string) *child {
	t.Helper()
	addr := freePort(t)
	cmd := exec.Command(binary(t))
	cmd.Env = append(os.Environ(),
		"LINKBOLT_SERVER_LISTEN="+addr, "LINKBOLT_SERVER_BASE_URL=http://"+addr,
		"LINKBOLT_STORAGE_PATH="+filepath.Join(dir, "linkbolt.db"),
		"LINKBOLT_ADMIN_EMAIL=admin@example.com", "LINKBOLT_ADMIN_PASSWORD=a long password",
		"LINKBOLT_AUTH_PASSWORD_COST=4", "LINKBOLT_CLICKS_FLUSH_INTERVAL="+flush, "LINKBOLT_PLANS_FREE=0")
	if pg {
		cmd.Env = append(cmd.Env, "LINKBOLT_STORAGE_POSTGRES_URL="+childDatabase(t, dir))
	}
	cmd.Env = append(cmd.Env, env...)
	return startProcess(t, cmd, addr)
}

// startProcess starts cmd, a linkbolt serving on addr, and waits until it
// accepts connections; the test's end kills it.
func startProcess(t *testing.T, cmd *exec.Cmd, addr string) *child {
	t.Helper()
	c := &child{t: t, cmd: cmd, logs: &syncWriter{}, addr: addr}
	cmd.Stdout, cmd.Stderr = c.logs, c.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start: %s", c.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *child) client() client { return client{c.t, "http://" + c.addr} }

// setupLink logs in, makes a key and a link, and returns the key and the link's id and alias.
func setupLink(c client) (key, id, alias string) {
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key = c.must("POST", "/v1/keys", tok, `{"name":"k","scope":"read_write"}`, 201)["key"].(string)
	l := c.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/"}`, 201)
	return key, l["id"].(string), l["alias"].(string)
}

func TestProcessGracefulStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startChild(t, dir, "1h") // only the stop writes the clicks
	c := p.client()
	key, id, alias := setupLink(c)
	for i := 0; i < 50; i++ {
		if status, _, _ := c.call("GET", "/"+alias, "", ""); status != 302 {
			t.Fatalf("redirect %d", status)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.logs.String())
	}
	if !strings.Contains(p.logs.String(), "stopped cleanly") {
		t.Fatalf("no clean stop in the log:\n%s", p.logs.String())
	}
	c = startChild(t, dir, "1h").client()
	if got := c.must("GET", "/v1/links/"+id, key, "", 200)["clicks"]; got != float64(50) {
		t.Fatalf("clicks after a graceful stop = %v, want 50", got)
	}
}

func TestProcessCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startChild(t, dir, "50ms")
	c := p.client()
	key, id, alias := setupLink(c)
	for i := 0; i < 40; i++ {
		c.call("GET", "/"+alias, "", "")
	}
	// Wait for one flush to pass, then click more and kill -9 at once.
	deadline := time.Now().Add(10 * time.Second)
	for c.must("GET", "/v1/links/"+id, key, "", 200)["clicks"] != float64(40) {
		if time.Now().After(deadline) {
			t.Fatal("the first 40 clicks were not written")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 10; i++ {
		c.call("GET", "/"+alias, "", "")
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()

	// The data file opens clean (on PostgreSQL, the database's own
	// crash safety keeps its pages).
	if !apptest.OnPostgres() {
		checkBoltFile(t, filepath.Join(dir, "linkbolt.db"))
	}
	// At most the clicks of one flush interval are lost: the 40 written
	// before stay, and none is counted twice.
	c = startChild(t, dir, "50ms").client()
	got := c.must("GET", "/v1/links/"+id, key, "", 200)["clicks"].(float64)
	if got < 40 || got > 50 {
		t.Fatalf("clicks after kill -9 = %v, want 40..50", got)
	}
	t.Logf("clicks after kill -9: %v of 50", got)
}

// TestProcessCrashMidDelivery kills the server with -9 while webhook
// deliveries are under way and restarts it: the receiver ends up with
// every event at least once (exactly once after de-duplicating by
// Linkbolt-Delivery).
func TestProcessCrashMidDelivery(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	events := map[string]int{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ID string `json:"id"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		time.Sleep(50 * time.Millisecond) // a slow receiver, so the kill lands mid-delivery
		mu.Lock()
		events[body.ID]++
		mu.Unlock()
	}))
	defer recv.Close()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(events)
	}
	dir := t.TempDir()
	// Started again under the same server.instance_id, a process on
	// PostgreSQL takes its predecessor's webhook claims over at once.
	env := []string{"LINKBOLT_WEBHOOKS_ALLOW_PRIVATE=true", "LINKBOLT_SERVER_INSTANCE_ID=crash-mid-delivery"}
	p := startChild(t, dir, "50ms", env...)
	c := p.client()
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	c.must("POST", "/v1/webhooks", tok, `{"url":"`+recv.URL+`/hook","events":["link.created"]}`, 201)
	const n = 30
	for i := 0; i < n; i++ {
		c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/"}`, 201)
	}
	deadline := time.Now().Add(20 * time.Second)
	for count() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no delivery arrived: %s", p.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	before := count()
	startChild(t, dir, "50ms", env...)
	for count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("after the restart %d of %d events arrived", count(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d events before kill -9, all %d after the restart", before, n)
}

// checkBoltFile opens the bbolt file at path read-only and runs bbolt's
// consistency check over it.
func checkBoltFile(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatalf("data file after kill -9: %v", err)
	}
}
