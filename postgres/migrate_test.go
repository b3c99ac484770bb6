package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// TestMigrateFromEveryVersion: a database left at any older schema, with
// data in it, is brought to the newest by Open, keeps its data, and
// serves accounts.
func TestMigrateFromEveryVersion(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) != postgres.SchemaVersion() {
		t.Fatalf("migration files %v, %v; want %d", files, err, postgres.SchemaVersion())
	}
	sort.Strings(files)
	for v := 1; v < len(files); v++ {
		t.Run(filepath.Base(files[v-1]), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			u := pgtest.URL(t)
			conn, err := pgx.Connect(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, `CREATE TABLE linkbolt_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
				t.Fatal(err)
			}
			for i, f := range files[:v] {
				sql, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := conn.Exec(ctx, string(sql)); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if _, err := conn.Exec(ctx, `INSERT INTO linkbolt_schema (version) VALUES ($1)`, i+1); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := conn.Exec(ctx, `INSERT INTO settings (name, value) VALUES ('jwt_secret', 'kept')`); err != nil {
				t.Fatal(err)
			}
			if v >= 2 {
				if _, err := conn.Exec(ctx, `INSERT INTO certs (name, data) VALUES ('example.com', 'cert')`); err != nil {
					t.Fatal(err)
				}
			}

			if v == 3 {
				// A key of the minimal table (0003): 0004 gives it a hash.
				if _, err := conn.Exec(ctx, `INSERT INTO workspaces (id, seq, name, plan, created_at, updated_at) VALUES ('ws_old', 1000, 'Old', 'free', now(), now());
					INSERT INTO keys (id, seq, workspace_id, created_at) VALUES ('key_old', 1000, 'ws_old', now())`); err != nil {
					t.Fatal(err)
				}
			}

			s, err := postgres.Open(ctx, postgres.Options{URL: u})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Data.Close()
			var got int
			if err := conn.QueryRow(ctx, `SELECT max(version) FROM linkbolt_schema`).Scan(&got); err != nil || got != postgres.SchemaVersion() {
				t.Fatalf("schema version %d, %v; want %d", got, err, postgres.SchemaVersion())
			}
			if secret, err := s.Data.JWTSecret(func() []byte { return []byte("new") }); err != nil || string(secret) != "kept" {
				t.Fatalf("JWT secret %q, %v; want the one kept", secret, err)
			}
			if v >= 2 {
				if c, err := s.Certs.Get(ctx, "example.com"); err != nil || string(c) != "cert" {
					t.Fatalf("certificate %q, %v", c, err)
				}
			}
			if v == 3 {
				var n int
				if err := conn.QueryRow(ctx, `SELECT count(*) FROM keys WHERE id = 'key_old' AND length(hash) = 32`).Scan(&n); err != nil || n != 1 {
					t.Fatalf("the old key after the migration: %d rows with a hash, %v", n, err)
				}
			}
			u1 := &link.User{Email: "admin@example.com", PasswordHash: []byte("h")}
			if err := s.Users.Bootstrap(ctx, u1, &link.Workspace{Name: "Default", Plan: link.PlanFree}); err != nil {
				t.Fatalf("bootstrap after the migration: %v", err)
			}
		})
	}
}
