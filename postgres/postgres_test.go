package postgres_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestOpenMigratesOnceAndKeepsTheSecret(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	db, err := postgres.OpenDB(ctx, postgres.Options{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	first, err := db.JWTSecret(func() []byte { return []byte("first secret") })
	if err != nil || string(first) != "first secret" {
		t.Fatalf("JWTSecret = %q, %v", first, err)
	}
	db.Close()
	// Opened again: nothing to migrate, the same secret.
	db, err = postgres.OpenDB(ctx, postgres.Options{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	again, err := db.JWTSecret(func() []byte { return []byte("second secret") })
	if err != nil || string(again) != "first secret" {
		t.Fatalf("JWTSecret after a reopen = %q, %v; want the first", again, err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, failing := db.WriteFailing(); failing {
		t.Fatal("WriteFailing on a working database")
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n, max int
	if err := conn.QueryRow(ctx, `SELECT count(*), max(version) FROM linkbolt_schema`).Scan(&n, &max); err != nil {
		t.Fatal(err)
	}
	if n != postgres.SchemaVersion() || max != postgres.SchemaVersion() {
		t.Fatalf("linkbolt_schema holds %d versions up to %d, want %d", n, max, postgres.SchemaVersion())
	}
}

// TestOpenConcurrently: instances starting at once migrate once; the
// others wait for it and start on the migrated schema.
func TestOpenConcurrently(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			db, err := postgres.OpenDB(context.Background(), postgres.Options{URL: u})
			if err == nil {
				db.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("a newer schema", func(t *testing.T) {
		u := pgtest.URL(t)
		db, err := postgres.OpenDB(ctx, postgres.Options{URL: u})
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `INSERT INTO linkbolt_schema (version) VALUES ($1)`, postgres.SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		_, err = postgres.OpenDB(ctx, postgres.Options{URL: u})
		if err == nil || !strings.Contains(err.Error(), "newer linkbolt") {
			t.Fatalf("open of a newer schema: %v", err)
		}
	})
	t.Run("a database that is not linkbolt's", func(t *testing.T) {
		u := pgtest.URL(t)
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `CREATE TABLE orders (id int)`); err != nil {
			t.Fatal(err)
		}
		_, err = postgres.OpenDB(ctx, postgres.Options{URL: u})
		if err == nil || !strings.Contains(err.Error(), "not linkbolt's") {
			t.Fatalf("open of another application's database: %v", err)
		}
	})
	t.Run("wrong credentials, password never shown", func(t *testing.T) {
		u := pgtest.URL(t)
		bad := strings.Replace(u, ":", ":", 1)
		i := strings.Index(bad, "@")
		j := strings.LastIndex(bad[:i], ":")
		bad = bad[:j+1] + "wrong-password-123" + bad[i:]
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := postgres.OpenDB(cctx, postgres.Options{URL: bad})
		if err == nil || strings.Contains(err.Error(), "wrong-password-123") {
			t.Fatalf("open with a wrong password: %v", err)
		}
		if !strings.Contains(err.Error(), "xxxxx") {
			t.Fatalf("the error does not name the (redacted) URL: %v", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := postgres.OpenDB(cctx, postgres.Options{URL: "postgres://linkbolt:s3cret-pw@127.0.0.1:1/linkbolt?sslmode=disable&connect_timeout=2"})
		if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
			t.Fatalf("open of an unreachable server: %v", err)
		}
	})
}

// TestSetupTokenShared: instances starting at once on a database without
// an admin all get the one setup token the first stored.
func TestSetupTokenShared(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	const n = 4
	toks := make(chan string, n)
	for i := range n {
		go func() {
			db, err := postgres.OpenDB(ctx, postgres.Options{URL: u})
			if err != nil {
				t.Error(err)
				toks <- ""
				return
			}
			defer db.Close()
			tok, err := db.SetupToken(func() string { return "token of instance " + string(rune('a'+i)) })
			if err != nil {
				t.Error(err)
			}
			toks <- tok
		}()
	}
	first := <-toks
	for range n - 1 {
		if got := <-toks; got != first || !strings.HasPrefix(got, "token of instance ") {
			t.Fatalf("setup tokens %q and %q: want one for all", first, got)
		}
	}
}
