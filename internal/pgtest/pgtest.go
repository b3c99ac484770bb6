// Package pgtest starts a throwaway PostgreSQL server for tests: one
// cluster per test process, in a temporary folder, on a free loopback
// port, run as an unprivileged user when the tests run as root (PostgreSQL
// refuses root), with a fresh database for each caller. Without
// PostgreSQL's programs the tests that need it skip with a message, except
// with CI=true, where they fail (.ci/run installs PostgreSQL).
package pgtest

import (
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url("postgres"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	return c.url(name)
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

// asServerUser makes cmd run as nobody when the tests run as root.
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
	if err := c.cmd.Start(); err != nil {
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
