package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
)

var (
	previousOnce sync.Once
	previousBin  string
	previousRev  string
	previousErr  error
)

// previousBuild builds linkbolt as it was before the newest schema
// migration (the first parent of the last commit of main that added a
// file to postgres/migrations), from the repository's history, once per test
// process: the release an upgrade starts from. Without git or the history
// (a source archive) the test skips with a message, except with CI=true.
func previousBuild(t *testing.T) (bin, rev string) {
	t.Helper()
	previousOnce.Do(func() {
		git := func(args ...string) (string, error) {
			out, err := exec.Command("git", append([]string{"-C", ".."}, args...)...).Output()
			return strings.TrimSpace(string(out)), err
		}
		// Along the first parents: the commits of main, each of which
		// a self-hoster may have run. A branch merged into it numbers its
		// migrations on its own until the merge renumbers them.
		last, err := git("log", "-1", "--first-parent", "--diff-filter=A", "--format=%H", "--", "postgres/migrations")
		if err != nil || last == "" {
			previousErr = fmt.Errorf("no history of postgres/migrations (git log: %v)", err)
			return
		}
		if previousRev, err = git("rev-parse", "--short", last+"^"); err != nil {
			previousErr = fmt.Errorf("the commit before %s: %v", last, err)
			return
		}
		dir, err := os.MkdirTemp("", "linkbolt-previous-")
		if err != nil {
			previousErr = err
			return
		}
		archive := exec.Command("git", "-C", "..", "archive", "--format=tar", previousRev)
		untar := exec.Command("tar", "-x", "-C", dir)
		var stderr, tarErr bytes.Buffer // one each: the two copy at once
		untar.Stdin, _ = archive.StdoutPipe()
		archive.Stderr, untar.Stderr = &stderr, &tarErr
		if err := untar.Start(); err != nil {
			previousErr = err
			return
		}
		if err := archive.Run(); err != nil {
			previousErr = fmt.Errorf("git archive %s: %v: %s", previousRev, err, stderr.String())
			return
		}
		if err := untar.Wait(); err != nil {
			previousErr = fmt.Errorf("tar: %v: %s", err, tarErr.String())
			return
		}
		previousBin = filepath.Join(dir, "linkbolt-previous")
		build := exec.Command("go", "build", "-o", previousBin, ".")
		build.Dir = dir
		if out, err := build.CombinedOutput(); err != nil {
			previousErr = fmt.Errorf("go build of %s: %v: %s", previousRev, err, out)
		}
	})
	if previousErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the build before the newest migration: %v", previousErr)
		}
		t.Skipf("the build before the newest migration: %v", previousErr)
	}
	return previousBin, previousRev
}

// TestInstancesRollingUpgrade: an instance of the build before the newest
// schema migration serves a database; an instance of this build starts on
// it and migrates the schema while the old one serves, and the old one
// keeps answering redirects and writes through the upgrade and after it,
// as an upgrade of one instance after the other behind a load balancer
// needs.
func TestInstancesRollingUpgrade(t *testing.T) {
	pgtest.SkipUnlessPostgres(t)
	t.Parallel()
	oldBin, rev := previousBuild(t)
	db := pgtest.URL(t) // empty: the old build makes its schema
	oldAddr, newAddr := freePort(t), freePort(t)
	state := t.TempDir()
	start := func(bin, addr string) *child {
		port := addr[strings.LastIndex(addr, ":")+1:]
		cmd := exec.Command(bin, "serve")
		cmd.Env = append(os.Environ(), unitEnvironment(t, port, state)...)
		cmd.Env = append(cmd.Env, "LINKBOLT_STORAGE_POSTGRES_URL="+db, "LINKBOLT_SERVER_BASE_URL=http://"+addr,
			"LINKBOLT_ADMIN_EMAIL=admin@example.com", "LINKBOLT_ADMIN_PASSWORD=a long password",
			"LINKBOLT_AUTH_PASSWORD_COST=4", "LINKBOLT_CLICKS_FLUSH_INTERVAL=100ms", "LINKBOLT_PLANS_FREE=0")
		return startProcess(t, cmd, addr)
	}
	old := start(oldBin, oldAddr)
	oldVersion := schemaVersion(t, db)
	oc := old.client()
	tok := oc.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key := oc.must("POST", "/v1/keys", tok, `{"name":"script","scope":"read_write"}`, 201)["key"].(string)
	before := oc.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/before"}`, 201)

	// The old instance serves while the new one starts and migrates.
	stop := make(chan struct{})
	served := make(chan error, 1)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				served <- nil
				return
			default:
			}
			// A redirect from memory, a read and a write of the database.
			status, _, _ := oc.call("GET", "/"+before["alias"].(string), "", "")
			if status != 302 {
				served <- fmt.Errorf("redirect %d on the old instance during the upgrade: %d", n, status)
				return
			}
			if status, body, _ := oc.call("GET", "/v1/links/"+before["id"].(string), key, ""); status != 200 {
				served <- fmt.Errorf("read %d on the old instance during the upgrade: %d %v", n, status, body)
				return
			}
			if n%10 == 0 {
				if status, body, _ := oc.call("POST", "/v1/links", key, fmt.Sprintf(`{"destination_url":"https://example.com/during/%d"}`, n)); status != 201 {
					served <- fmt.Errorf("create %d on the old instance during the upgrade: %d %v", n, status, body)
					return
				}
			}
			n++
		}
	}()
	nw := start(apptest.Binary(t), newAddr)
	nc := nw.client()
	nc.must("GET", "/v1/links/"+before["id"].(string), key, "", 200)
	close(stop)
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if v := schemaVersion(t, db); v <= oldVersion {
		t.Fatalf("schema version %d after the new instance started, %d before: nothing migrated", v, oldVersion)
	}

	// After the upgrade the old instance still reads and writes, and each
	// sees what the other wrote.
	fromOld := oc.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/old"}`, 201)
	fromNew := nc.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/new"}`, 201)
	nc.must("GET", "/v1/links/"+fromOld["id"].(string), key, "", 200)
	oc.must("GET", "/v1/links/"+fromNew["id"].(string), key, "", 200)
	for _, c := range []client{oc, nc} {
		for _, l := range []map[string]any{before, fromOld, fromNew} {
			if status, _, _ := c.call("GET", "/"+l["alias"].(string), "", ""); status != 302 {
				t.Fatalf("%s: redirect of %s: %d", c.base, l["alias"], status)
			}
		}
	}
	t.Logf("upgraded from %s (schema %d) while it served", rev, oldVersion)
}

// schemaVersion is the newest schema migration applied to the database.
func schemaVersion(t *testing.T, db string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var v int
	if err := conn.QueryRow(context.Background(), `SELECT max(version) FROM linkbolt_schema`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
