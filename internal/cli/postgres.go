package cli

import (
	"fmt"

	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/postgres"
)

// dumpFile is the file the PostgreSQL hints name for a dump.
const dumpFile = "linkbolt.dump"

// refuseOnPostgres returns, when cfg keeps its data in PostgreSQL, why the
// command name (backup, restore, compact), which works on the bbolt data
// file only, does nothing there and what does the job instead; nil on
// bbolt. file is the command's file flag (restore's --from), "" for none.
// The URL is shown with its password hidden.
func refuseOnPostgres(name string, cfg *config.Config, file string) error {
	if !cfg.Postgres() {
		return nil
	}
	url := postgres.Redacted(cfg.Storage.PostgresURL)
	const where = "this instance keeps its data in PostgreSQL (storage.postgres_url), not in a data file"
	switch name {
	case "backup":
		return fmt.Errorf("backup: %s: back it up with PostgreSQL's pg_dump instead, such as pg_dump --format=custom --file=%s '%s' (with the password of storage.postgres_url)", where, dumpFile, url)
	case "restore":
		if file == "" {
			file = dumpFile
		}
		return fmt.Errorf("restore: %s: restore a pg_dump backup with PostgreSQL's pg_restore instead, with every linkbolt stopped, such as pg_restore --clean --if-exists --dbname='%s' %s (with the password of storage.postgres_url)", where, url, file)
	case "compact":
		return fmt.Errorf("compact: %s: PostgreSQL reclaims the space of deleted rows itself (autovacuum); to return it to the operating system, run VACUUM FULL in psql '%s' (it locks each table while it rewrites it)", where, url)
	}
	return fmt.Errorf("%s: %s", name, where)
}
