package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one step of the schema: the version it brings the
// database to and its statements.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded steps in order. A file is named
// NNNN_what.sql; its number is the version it brings the schema to.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: the name must start with its version, like 0001_", e.Name())
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: version %d, want %d (no gaps, no repeats)", m.name, m.version, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the newest schema this linkbolt knows.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// migrateLock is the advisory lock under which one instance migrates
// while the others starting at the same time wait ("linkbolt" in ASCII).
const migrateLock = 0x6c696e6b626f6c74

// errNotLinkbolt is returned for a database that holds tables but not
// linkbolt's schema table.
var errNotLinkbolt = errors.New("the database holds tables that are not linkbolt's: give linkbolt a database of its own")

// migrateAttempts bounds the tries of a migration that PostgreSQL chose
// as the victim of a deadlock: a step that alters tables an older
// instance still serving reads in another order (a rolling upgrade) may
// be; the transaction was rolled back whole, and the next try finds the
// tables as they were.
const migrateAttempts = 5

// migrate brings the database's schema to the newest version this
// linkbolt knows, in one transaction under migrateLock, and refuses a
// database written by a newer linkbolt or one that is not linkbolt's.
// A try ended by a deadlock is tried again (migrateAttempts).
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		err := migrateOnce(ctx, pool, ms)
		var pe *pgconn.PgError
		if attempt == migrateAttempts || !errors.As(err, &pe) || pe.Code != "40P01" {
			return err
		}
	}
}

// migrateOnce is one try of migrate.
func migrateOnce(ctx context.Context, pool *pgxpool.Pool, ms []migration) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// A migration takes as long as it takes: statement_timeout
		// guards requests, not the schema's steps.
		if _, err := tx.Exec(ctx, "SET LOCAL statement_timeout = 0"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLock)); err != nil {
			return err
		}
		var has bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('linkbolt_schema') IS NOT NULL`).Scan(&has); err != nil {
			return err
		}
		current := 0
		if has {
			if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM linkbolt_schema`).Scan(&current); err != nil {
				return err
			}
		} else {
			var others int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&others); err != nil {
				return err
			}
			if others > 0 {
				return errNotLinkbolt
			}
			if _, err := tx.Exec(ctx, `CREATE TABLE linkbolt_schema (
				version    integer PRIMARY KEY,
				applied_at timestamptz NOT NULL DEFAULT now()
			)`); err != nil {
				return err
			}
		}
		if current > len(ms) {
			return fmt.Errorf("the database was written by a newer linkbolt (schema version %d; this linkbolt knows up to %d): run that version or newer", current, len(ms))
		}
		for _, m := range ms[current:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO linkbolt_schema (version) VALUES ($1)`, m.version); err != nil {
				return err
			}
		}
		return nil
	})
}
