package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/postgres"
	"github.com/linkbolt/linkbolt/storage"
)

// errDamaged makes run exit 1 after runCheck has printed its report.
var errDamaged = errors.New("damaged")

var checkCommand = &command{
	name:     "check",
	synopsis: "check [--file FILE] [--config FILE] [--token TOKEN]",
	summary:  "check the data file (or a backup), or the PostgreSQL database, for damage",
	about: `Read every page of the data file (storage.path), or of FILE such as a
backup, run bbolt's consistency check, and then linkbolt's own: every
index entry (aliases, tags, campaigns, custom domains, workspaces' links,
key hashes, user e-mails, members, the search index, the audit log) names
a record that names it back, and every counter equals its records (links
and archived links per workspace, links per tag, clicks per link against
the hourly and daily aggregates). Print "... is OK" and exit 0, or each
problem found and exit 1. It never writes to the file. While a
running server holds the data file, the check reads a hot backup taken
through that server's admin API, signed in as for linkbolt backup.

On PostgreSQL (storage.postgres_url), without --file, it checks the
database directly, while linkbolt keeps running, in one read-only
transaction: the schema version is this linkbolt's, and linkbolt's own
invariants that the schema's constraints do not enforce hold (each link's
clicks against the hourly and daily aggregates, the aggregates against
each other and the raw clicks, the click backlog's and the webhook
outbox's counts, a link's campaign and custom domain in its workspace,
every workspace with an owner, one pending invitation per e-mail, ...).
PostgreSQL keeps its own pages sound. It prints "<URL> is OK" (the password
hidden) with what the database holds, or each problem found and exits 1.`,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		configPath := configFlag(fs)
		file := fs.String("file", "", "the `FILE` to check (default: the data file, storage.path)")
		token := tokenFlag(fs)
		return func(ctx context.Context, stdout, stderr io.Writer) error {
			return runCheck(ctx, *configPath, *file, *token, stdout, stderr)
		}
	},
}

// runCheck checks the data file (or file, e.g. a backup) and prints what
// it found. When a running server holds the data file it cannot be read
// safely beside the server's writes, so the check takes a hot backup
// through the admin API (as linkbolt backup does) into a temporary file
// beside the data file and checks that: a backup copies every page of the
// file as it is.
func runCheck(ctx context.Context, configPath, file, token string, stdout, stderr io.Writer) error {
	path := file
	cfg, err := config.Load(configPath)
	if err != nil {
		return err
	}
	if path == "" && cfg.Postgres() {
		return checkPostgres(ctx, cfg, stdout)
	}
	if path == "" {
		path = cfg.Storage.Path
		if err := statDataFile(cfg); err != nil {
			return fmt.Errorf("check: %w", err)
		}
	}
	r, err := storage.CheckFile(path)
	if errors.Is(err, storage.ErrLocked) {
		if !sameFile(path, cfg.Storage.Path) {
			return fmt.Errorf("check: %s is in use by a running linkbolt; check a backup of it instead (linkbolt backup --out FILE)", path)
		}
		fmt.Fprintln(stderr, "the data file is in use; checking a hot backup from the running server at", cfg.Server.BaseURL)
		r, err = checkLiveCopy(ctx, cfg, token)
	}
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if r.OK() {
		fmt.Fprintf(stdout, "%s is OK: %d bytes, %d pages of %d bytes (%d free), %d buckets, %d keys\n",
			path, r.Size, r.Pages, r.PageSize, r.Free, r.Buckets, r.Keys)
		return nil
	}
	fmt.Fprintf(stdout, "%s is damaged:\n", path)
	for _, p := range r.Problems {
		fmt.Fprintln(stdout, "  -", p)
	}
	if len(r.Problems) == 1 && r.HeaderDamage != "" {
		// The server starts on such a file (see docs/operations.md, "A damaged data file").
		fmt.Fprintln(stdout, "The rest of the file is whole, and the server opens it from the other header page; its next write rewrites the damaged one.",
			"Restore a backup instead only if it holds writes made after that transaction.")
		return errDamaged
	}
	if file != "" && !sameFile(path, cfg.Storage.Path) {
		fmt.Fprintln(stdout, "Do not restore from this file: check another backup.")
		return errDamaged
	}
	fmt.Fprintln(stdout, "Restore it from a backup: stop the server and run linkbolt restore --from BACKUP.")
	return errDamaged
}

// sameFile reports whether a and b name the same existing file.
func sameFile(a, b string) bool {
	ai, err1 := os.Stat(a)
	bi, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}

// checkLiveCopy checks a hot backup of the data file a server holds.
func checkLiveCopy(ctx context.Context, cfg *config.Config, token string) (*storage.CheckReport, error) {
	f, err := storage.CreateBackupTemp(filepath.Dir(cfg.Storage.Path))
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = backupOverHTTP(ctx, cfg, token, f)
	if cerr := f.Close(); err == nil {
		err = cerr // and the lock is released: CheckFile takes its own
	}
	if err != nil {
		return nil, err
	}
	return storage.CheckFile(f.Name())
}

// checkPostgres checks the PostgreSQL database of cfg (postgres.Check) and
// prints what it found; it never writes.
func checkPostgres(ctx context.Context, cfg *config.Config, stdout io.Writer) error {
	r, err := postgres.Check(ctx, cfg.Storage.PostgresURL)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if r.OK() {
		fmt.Fprintf(stdout, "%s is OK: schema version %d, %d users, %d workspaces, %d links, %d raw clicks, %d API keys, %d webhooks\n",
			r.URL, r.Schema, r.Users, r.Workspaces, r.Links, r.Clicks, r.Keys, r.Webhooks)
		return nil
	}
	fmt.Fprintf(stdout, "%s has problems:\n", r.URL)
	for _, p := range r.Problems {
		fmt.Fprintln(stdout, "  -", p)
	}
	fmt.Fprintln(stdout, "Nothing was changed. Look into each with psql, or restore a pg_dump backup taken before they began (see docs/operations.md).")
	return errDamaged
}
