package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/storage"
)

var restoreCommand = &command{
	name:     "restore",
	synopsis: "restore --from FILE [--config FILE]",
	summary:  "put a backup in place of the data file (server stopped)",
	about: `Put a copy of the backup FILE in place of the data file (storage.path).
It needs the server stopped: while a running linkbolt holds the data file
it refuses and changes nothing. The backup is copied beside the data file
and checked there as linkbolt check does (bbolt's structure and linkbolt's
own invariants) and must be a linkbolt data file of a schema version this
linkbolt knows (an older one is upgraded when the server next starts); a
damaged backup is refused before the data file is touched. The replaced
data file is kept beside it as FILE.replaced-<UTC time>, and the copy
renamed into place in one step. The backup itself is only read.

On PostgreSQL (storage.postgres_url) it refuses, changing nothing, and
names pg_restore, which puts a pg_dump backup back into the database
(with every linkbolt stopped; see docs/operations.md).`,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		configPath := configFlag(fs)
		from := fs.String("from", "", "the backup `FILE` to restore (required)")
		return func(_ context.Context, stdout, _ io.Writer) error {
			return runRestore(*configPath, *from, stdout)
		}
	},
}

// runRestore restores the backup from over the data file.
func runRestore(configPath, from string, stdout io.Writer) error {
	why := "a restore never replaces the data file under a running server"
	return runOffline("restore", configPath, from, "--from FILE", why, func(cfg *config.Config) error {
		r, err := storage.RestoreFile(from, cfg.Storage.Path, time.Now())
		if refused := (*storage.RefusedBackupError)(nil); errors.As(err, &refused) {
			fmt.Fprintf(stdout, "%s is refused:\n", from)
			for _, p := range refused.Problems {
				fmt.Fprintln(stdout, "  -", p)
			}
			fmt.Fprintf(stdout, "The data file %s was not touched. Restore another backup.\n", cfg.Storage.Path)
			return errDamaged
		}
		if err != nil {
			return err
		}
		if len(r.Removed) > 0 {
			fmt.Fprintln(stdout, "removed what an interrupted restore left behind:", strings.Join(r.Removed, ", "))
		}
		fmt.Fprintf(stdout, "restored %s (%d bytes, schema version %d) into %s\n", r.From, r.Size, r.Schema, r.To)
		if r.Replaced != "" {
			fmt.Fprintf(stdout, "the replaced data file is kept as %s\n", r.Replaced)
		}
		return nil
	})
}
