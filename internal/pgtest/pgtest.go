// Package pgtest starts a throwaway PostgreSQL server for tests: one
// cluster per test process, in a temporary folder, on a free loopback
// port, run as an unprivileged user when the tests run as root (PostgreSQL
// refuses root), with a fresh database for each caller. Without
// PostgreSQL's programs the tests that need it skip with a message, except
// with CI=true, where they fail (.ci/run installs PostgreSQL).
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// nobody is the user the server runs as when the tests run as root.
const nobody = 65534

var (
	once    sync.Once
	cluster *Cluster
	errUp   error
	dbs     atomic.Int64
)

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	dir      string // the cluster's folder: data, socket, password file
	port     int
	password string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// binDir finds PostgreSQL's programs: on the PATH (initdb, postgres), else
// in Debian's /usr/lib/postgresql/<version>/bin, the newest first.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "postgres")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errors.New("PostgreSQL's initdb and postgres were not found (apt-get install postgresql)")
}

// URL returns the URL of a new, empty database of the test process's
// cluster, starting the cluster on first use.
func URL(t testing.TB) string {
	t.Helper()
	c := start(t)
	name := fmt.Sprintf("linkbolt_test_%d", dbs.Add(1))
	if err := c.createDatabase(name, ""); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return c.url(name)
}

// template is a database that new ones are copied from, and the
// databases of finished tests, emptied back to the template's rows, that
// the next tests take before a copy is made (a copy costs a fifth of a
// second, emptying a few milliseconds).
type template struct {
	once  sync.Once
	name  string
	err   error
	seeds *seeds // what a database of the template holds when new

	mu   sync.Mutex
	free []string // databases emptied, ready to be taken
}

// seeds is what a new database of a template holds: its tables' rows as
// COPY text, its sequences' last values, and the fingerprint of its
// objects (relations, extensions, settings), which a database must still
// have to be emptied back rather than left out.
type seeds struct {
	tables    []seed
	sequences []sequence
	objects   string
}

type seed struct {
	table string
	rows  []byte
}

type sequence struct {
	name string
	last *int64 // nil: never drawn from
}

// objectsSQL is the fingerprint of a database's objects.
const objectsSQL = `SELECT coalesce(string_agg(x, ',' ORDER BY x), '') FROM (
	SELECT c.relkind::text || ':' || c.relname AS x FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'
	UNION ALL SELECT 'ext:' || extname FROM pg_extension
	UNION ALL SELECT 'set:' || array_to_string(setconfig, ';') FROM pg_db_role_setting
		WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())) o`

var templates sync.Map // name → *template

// URLFrom returns the URL of a new database copied from the template
// database name, which prepare makes once per test process (for instance
// by migrating linkbolt's schema into it): a fresh database with what
// prepare left in it. When the test ends, and nothing is connected to the
// database any more, it is emptied back to the template's rows for the
// next test to take.
func URLFrom(t testing.TB, name string, prepare func(url string) error) string {
	t.Helper()
	c := start(t)
	v, _ := templates.LoadOrStore(name, &template{name: "linkbolt_template_" + name})
	tmpl := v.(*template)
	tmpl.once.Do(func() {
		if tmpl.err = c.createDatabase(tmpl.name, ""); tmpl.err == nil {
			if tmpl.err = prepare(c.url(tmpl.name)); tmpl.err == nil {
				tmpl.seeds, tmpl.err = c.readSeeds(tmpl.name)
			}
		}
	})
	if tmpl.err != nil {
		t.Fatalf("pgtest: template %s: %v", name, tmpl.err)
	}
	tmpl.mu.Lock()
	var db string
	if n := len(tmpl.free); n > 0 {
		db, tmpl.free = tmpl.free[n-1], tmpl.free[:n-1]
	}
	tmpl.mu.Unlock()
	if db == "" {
		db = fmt.Sprintf("linkbolt_test_%d", dbs.Add(1))
		if err := c.createDatabase(db, tmpl.name); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	// Cleanups run last first: this one after those the test registers
	// later, which close what it opened on the database.
	t.Cleanup(func() {
		if c.empty(db, tmpl.seeds) == nil {
			tmpl.mu.Lock()
			tmpl.free = append(tmpl.free, db)
			tmpl.mu.Unlock()
		}
	})
	return c.url(db)
}

// readSeeds reads what the database name holds.
func (c *Cluster) readSeeds(name string) (*seeds, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url(name))
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)
	if err != nil {
		return nil, err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	ss := &seeds{}
	for _, table := range tables {
		var buf bytes.Buffer
		if _, err := conn.PgConn().CopyTo(ctx, &buf, "COPY "+table+" TO STDOUT"); err != nil {
			return nil, err
		}
		ss.tables = append(ss.tables, seed{table: table, rows: buf.Bytes()})
	}
	rows, err = conn.Query(ctx, `SELECT quote_ident(sequencename), last_value FROM pg_sequences WHERE schemaname = 'public'`)
	if err != nil {
		return nil, err
	}
	if ss.sequences, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (sequence, error) {
		var q sequence
		return q, r.Scan(&q.name, &q.last)
	}); err != nil {
		return nil, err
	}
	if err := conn.QueryRow(ctx, objectsSQL).Scan(&ss.objects); err != nil {
		return nil, err
	}
	return ss, nil
}

// empty puts the database name back to what ss says a new one holds
// (rows and sequences), when nothing else is connected to it and its
// objects are the template's; an error leaves it out of further use.
func (c *Cluster) empty(name string, ss *seeds) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url(name))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	// A pool just closed may take a moment to leave.
	for tries := 0; ; tries++ {
		var others int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&others); err != nil {
			return err
		}
		if others == 0 {
			break
		}
		if tries == 20 {
			return fmt.Errorf("%d connections are still open", others)
		}
		time.Sleep(25 * time.Millisecond)
	}
	var objects string
	if err := conn.QueryRow(ctx, objectsSQL).Scan(&objects); err != nil {
		return err
	}
	if objects != ss.objects {
		return errors.New("the test changed the database's objects")
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// No foreign key is checked while every table is emptied.
		if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
			return err
		}
		for _, s := range ss.tables {
			if _, err := tx.Exec(ctx, "DELETE FROM "+s.table); err != nil {
				return err
			}
			if len(s.rows) > 0 {
				if _, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(s.rows), "COPY "+s.table+" FROM STDIN"); err != nil {
					return err
				}
			}
		}
		for _, q := range ss.sequences {
			var err error
			if q.last != nil {
				_, err = tx.Exec(ctx, `SELECT setval($1::regclass, $2, true)`, q.name, *q.last)
			} else {
				_, err = tx.Exec(ctx, `SELECT setval($1::regclass, s.start_value, false) FROM pg_sequences s
					WHERE s.schemaname = 'public' AND quote_ident(s.sequencename) = $2`, q.name, q.name)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// createDatabase creates the database name, a copy of template when it
// is not "" (which nobody may be connected to).
func (c *Cluster) createDatabase(name, template string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	sql := "CREATE DATABASE " + name
	if template != "" {
		sql += " TEMPLATE " + template
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	return nil
}

func start(t testing.TB) *Cluster {
	t.Helper()
	if _, err := binDir(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: %v: the PostgreSQL tests need it", err)
		}
		t.Skipf("PostgreSQL tests skipped: %v", err)
	}
	once.Do(func() { cluster, errUp = startCluster() })
	if errUp != nil {
		t.Fatalf("pgtest: starting PostgreSQL: %v", errUp)
	}
	return cluster
}

// starter runs what it is given on one OS thread that lives as long as the
// test process: the server is killed when the thread that started it
// exits (Pdeathsig is the thread's, not the process's), and the Go
// runtime ends the threads of goroutines that lock one and return, as the
// server's niced workers do.
var starter = sync.OnceValue(func() chan func() {
	ch := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: the thread stays
		for f := range ch {
			f()
		}
	}()
	return ch
})

// startServer starts cmd on the starter's thread.
func startServer(cmd *exec.Cmd) error {
	done := make(chan error)
	starter() <- func() { done <- cmd.Start() }
	return <-done
}

// asServerUser makes cmd run as nobody when the tests run as root, and
// be killed when the test process ends (start it with startServer).
func asServerUser(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
}

func startCluster() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "linkbolt-pg-")
	if err != nil {
		return nil, err
	}
	pw := make([]byte, 12)
	_, _ = rand.Read(pw)
	c := &Cluster{dir: dir, password: hex.EncodeToString(pw), exited: make(chan struct{})}
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(c.password+"\n"), 0o600); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Chown(p, nobody, nobody)
		}); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "linkbolt", "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")
	asServerUser(initdb)
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// Durability is not what these tests are about: no fsync makes a
	// cluster of throwaway databases fast.
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(c.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=64MB")
	asServerUser(c.cmd)
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if err := startServer(c.cmd); err != nil {
		return nil, err
	}
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.url("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return c, nil
		}
		select {
		case <-c.exited:
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			return nil, fmt.Errorf("postgres exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("postgres did not accept connections in 30 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// url is the URL of database name on the cluster, over TCP with the
// password.
func (c *Cluster) url(name string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword("linkbolt", c.password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)), Path: "/" + name, RawQuery: "sslmode=disable"}
	return u.String()
}

// Main runs the tests of a package and then stops the cluster they
// started (if any) and removes its folder: call it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	if cluster != nil {
		_ = cluster.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-cluster.exited:
		case <-time.After(10 * time.Second):
			_ = cluster.cmd.Process.Kill()
			<-cluster.exited
		}
		os.RemoveAll(cluster.dir)
	}
	return code
}
