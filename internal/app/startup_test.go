package app_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/apptest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/postgres"
)

// serveOn runs `linkbolt serve` of the real binary on the database u and
// returns its exit code and what it wrote to stderr.
func serveOn(t *testing.T, u string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  listen: 127.0.0.1:0\nstorage:\n  path: "+filepath.Join(dir, "linkbolt.db")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, apptest.Binary(t), "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "LINKBOLT_STORAGE_POSTGRES_URL="+u)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("linkbolt serve on %s: %v (want it to exit 1)\n%s", postgres.Redacted(u), err, stderr.String())
	}
	return ee.ExitCode(), stderr.String()
}

// withPassword is u with the password pw.
func withPassword(t *testing.T, u, pw string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.User = url.UserPassword(p.User.Username(), pw)
	return p.String()
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// silentHost listens on loopback and takes connections without ever
// answering, like a host behind a firewall that drops packets.
func silentHost(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for _, c := range held {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// TestServeDatabaseFaultsAtStart: `linkbolt serve` on a database it cannot
// use exits 1 with one line that says why and what to do, never with the
// password: none answers at the address, one that takes the connection
// but never answers (the URL's connect_timeout bounds the wait), wrong
// credentials, a database holding tables that are not linkbolt's, and one
// written by a newer linkbolt.
func TestServeDatabaseFaultsAtStart(t *testing.T) {
	const secret = "s3cret-Pa55"
	own := pgtest.URL(t)
	foreign := pgtest.URL(t)
	newer := pgtest.URL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE invoices (id int)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	db, err := postgres.Open(ctx, postgres.Options{URL: newer})
	if err != nil {
		t.Fatal(err)
	}
	db.Data.Close()
	if conn, err = pgx.Connect(ctx, newer); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO linkbolt_schema (version) VALUES (9999)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	tests := []struct {
		name string
		url  string
		want []string
	}{
		{"nothing listens", "postgres://linkbolt:" + secret + "@127.0.0.1:" + strconv.Itoa(freePort(t)) + "/linkbolt?sslmode=disable",
			[]string{"connection refused", "does not retry"}},
		{"no answer", "postgres://linkbolt:" + secret + "@" + silentHost(t) + "/linkbolt?sslmode=disable&connect_timeout=1",
			[]string{"timeout", "does not retry"}},
		{"wrong password", withPassword(t, own, secret),
			[]string{"password authentication failed", "check the user and password"}},
		{"foreign tables", foreign, []string{"tables that are not linkbolt's"}},
		{"newer schema", newer, []string{"newer linkbolt", "schema version 9999"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, out := serveOn(t, tc.url)
			if code != 1 {
				t.Fatalf("exit code %d, want 1:\n%s", code, out)
			}
			line := strings.TrimSuffix(out, "\n")
			if strings.Contains(line, "\n") || line == "" {
				t.Fatalf("want one line, got:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Fatalf("the line does not say %q:\n%s", w, line)
				}
			}
			for _, pw := range []string{secret, password(t, own)} {
				if strings.Contains(line, pw) {
					t.Fatalf("the line holds the password:\n%s", line)
				}
			}
			t.Logf("%s, after %v", line, time.Since(start).Round(time.Millisecond))
		})
	}
}
