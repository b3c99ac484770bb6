package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// NewCluster starts a PostgreSQL server of the test's own, for tests that
// stop and start it (a lost database, a restart): Stop and Start keep its
// port and data, so clients reconnect to the same databases. It runs as
// nobody when the tests run as root, and is stopped and removed when the
// test ends. It skips or fails as URL does without PostgreSQL.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	if _, err := binDir(); err != nil {
		start(t) // skips, or fails with CI=true
	}
	c, err := startCluster()
	if err != nil {
		t.Fatalf("pgtest: starting PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		c.stop()
		os.RemoveAll(c.dir)
	})
	return c
}

// URL returns the URL of a new, empty database on c, as the user
// linkbolt, who is the cluster's superuser.
func (c *Cluster) URL(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("linkbolt_own_%d", dbs.Add(1))
	c.Exec(t, "CREATE DATABASE "+name)
	return c.url(name)
}

// Exec runs sql on c's maintenance database as the superuser, for the
// faults a test causes (ALTER DATABASE, CREATE TABLESPACE, ...).
func (c *Cluster) Exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.url("postgres"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// Dir is c's folder (its data, socket and log), owned by the user the
// server runs as.
func (c *Cluster) Dir() string { return c.dir }

// Stop shuts c down (a fast shutdown: sessions are ended) and waits until
// it has exited.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	if !c.stop() {
		t.Fatal("pgtest: PostgreSQL did not stop in 10 s")
	}
}

// stop ends the server, and reports whether it ended in time.
func (c *Cluster) stop() bool {
	select {
	case <-c.exited:
		return true
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
		return true
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
		return false
	}
}

// Freeze stops every process of c (SIGSTOP to the server, then to each
// of its backends and workers, which PostgreSQL puts in sessions of
// their own) without ending a connection: a database that no longer
// answers, as a host frozen or cut off by a firewall that drops packets
// looks to its clients, rather than one that refuses them. Thaw, or the
// end of the test, lets it go on.
func (c *Cluster) Freeze(t testing.TB) {
	t.Helper()
	t.Cleanup(func() { c.signalAll(syscall.SIGCONT) })
	if err := c.signalAll(syscall.SIGSTOP); err != nil {
		t.Fatalf("pgtest: freezing PostgreSQL: %v", err)
	}
}

// Thaw lets c go on after Freeze.
func (c *Cluster) Thaw(t testing.TB) {
	t.Helper()
	if err := c.signalAll(syscall.SIGCONT); err != nil {
		t.Fatalf("pgtest: thawing PostgreSQL: %v", err)
	}
}

// signalAll sends sig to the server, then to its children.
func (c *Cluster) signalAll(sig syscall.Signal) error {
	pid := c.cmd.Process.Pid
	if err := syscall.Kill(pid, sig); err != nil {
		return err
	}
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return err
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		var state byte
		var ppid int
		if _, err := fmt.Sscanf(string(b[i+1:]), " %c %d", &state, &ppid); err != nil || ppid != pid {
			continue
		}
		child, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err != nil {
			continue
		}
		if err := syscall.Kill(child, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
	}
	return nil
}

// Start starts c again after Stop, on the same port with the same data,
// and waits until it accepts connections.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	select {
	case <-c.exited:
	default:
		t.Fatal("pgtest: Start while PostgreSQL runs")
	}
	cmd := exec.Command(c.cmd.Path, c.cmd.Args[1:]...)
	asServerUser(cmd)
	logf, err := os.OpenFile(filepath.Join(c.dir, "postgres.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := startServer(cmd); err != nil {
		t.Fatalf("pgtest: restarting PostgreSQL: %v", err)
	}
	c.cmd, c.exited = cmd, make(chan struct{})
	exited := c.exited
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.url("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
			t.Fatalf("pgtest: PostgreSQL exited on restart: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: PostgreSQL did not accept connections in 30 s after a restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// DatabaseURL is the URL of the database name on c (made with Exec, for
// one that needs options of its own, such as a tablespace).
func (c *Cluster) DatabaseURL(name string) string { return c.url(name) }
