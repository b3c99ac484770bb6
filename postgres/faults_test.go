package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
)

// TestPoolConfigDefaults: connections get a 5 s connect timeout and a
// 30 s statement timeout, unless the URL sets its own (either way libpq
// spells them).
func TestPoolConfigDefaults(t *testing.T) {
	t.Setenv("PGCONNECT_TIMEOUT", "")
	t.Setenv("PGOPTIONS", "")
	const base = "postgres://u:pw@db.example:5432/linkbolt?sslmode=disable"
	tests := []struct {
		url       string
		connect   time.Duration
		statement string // RuntimeParams["statement_timeout"]
	}{
		{base, DefaultConnectTimeout, "30s"},
		{base + "&connect_timeout=2", 2 * time.Second, "30s"},
		{base + "&statement_timeout=250", DefaultConnectTimeout, "250"},
		{base + "&options=-c%20statement_timeout%3D1min", DefaultConnectTimeout, ""},
	}
	for _, tc := range tests {
		cfg, err := poolConfig(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.ConnConfig.ConnectTimeout; got != tc.connect {
			t.Errorf("%s: connect timeout %v, want %v", tc.url, got, tc.connect)
		}
		if got := cfg.ConnConfig.RuntimeParams["statement_timeout"]; got != tc.statement {
			t.Errorf("%s: statement_timeout %q, want %q", tc.url, got, tc.statement)
		}
	}
}

// TestStatementTimeoutOnServer: the server applies the default, and the
// URL's own value wins over it.
func TestStatementTimeoutOnServer(t *testing.T) {
	ctx := context.Background()
	u := pgtest.URL(t)
	for _, tc := range []struct{ url, want string }{{u, "30s"}, {u + "&statement_timeout=1500", "1500ms"}} {
		db, err := OpenDB(ctx, Options{URL: tc.url})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&got); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if got != tc.want {
			t.Errorf("statement_timeout with %s = %q, want %q", Redacted(tc.url), got, tc.want)
		}
	}
}

// TestUnavailable: the errors of a database that cannot serve for now
// are told apart from the request's faults and from bugs.
func TestUnavailable(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("create link: %w", &pgconn.PgError{Code: code}) }
	tests := []struct {
		name string
		err  error
		want string // "" not unavailable
	}{
		{"nil", nil, ""},
		{"domain", link.Errorf(link.ECONFLICT, "alias taken"), ""},
		{"unique", pg("23505"), ""},
		{"syntax", pg("42601"), ""},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), ""},
		{"disk full", pg("53100"), reasonDiskFull},
		{"too many connections", pg("53300"), reasonResources},
		{"statement timeout", pg("57014"), reasonTimeout},
		{"read only", pg("25006"), reasonReadOnly},
		{"lock timeout", pg("55P03"), reasonLock},
		{"admin shutdown", pg("57P01"), reasonUnreachable},
		{"connection failure", pg("08006"), reasonUnreachable},
		{"refused", fmt.Errorf("q: %w", &net.OpError{Op: "dial", Err: errors.New("connection refused")}), reasonUnreachable},
		{"eof", fmt.Errorf("q: %w", io.ErrUnexpectedEOF), reasonUnreachable},
		{"deadline", fmt.Errorf("q: %w", context.DeadlineExceeded), reasonUnreachable},
	}
	for _, tc := range tests {
		got, ok := unavailable(tc.err)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("%s: unavailable = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
}

// TestOpenErrorOneLine: a start-up error is one line, without the
// password, with what to do.
func TestOpenErrorOneLine(t *testing.T) {
	const u = "postgres://linkbolt:hunter2@localhost:1/x"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := OpenDB(ctx, Options{URL: u}) // localhost: two addresses, two lines from pgconn
	if err == nil {
		t.Fatal("open of a closed port succeeded")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || strings.Contains(msg, "hunter2") || !strings.Contains(msg, "does not retry") {
		t.Fatalf("start-up error %q: want one line, no password, and what linkbolt does", msg)
	}
}
