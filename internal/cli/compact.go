package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/storage"
)

var compactCommand = &command{
	name:     "compact",
	synopsis: "compact --out FILE [--config FILE]",
	summary:  "write a compacted copy of the data file (server stopped)",
	about: `Copy the data file (storage.path) into the new file FILE, every bucket's
keys in order onto filled pages, leaving out the free space that deleted
links and pruned clicks leave behind; the copy is checked like linkbolt
check does. The data file is only read. It needs the server stopped
(a running server holds the data file) and refuses an existing FILE. To
use the copy, keep the server stopped and run linkbolt restore --from FILE.

On PostgreSQL (storage.postgres_url) it refuses, writing nothing:
PostgreSQL reclaims the space of deleted rows itself (autovacuum), and
VACUUM FULL returns it to the operating system (see docs/operations.md).`,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		configPath := configFlag(fs)
		out := fs.String("out", "", "the new `FILE` to write the compacted copy to (required)")
		return func(_ context.Context, stdout, _ io.Writer) error {
			return runCompact(*configPath, *out, stdout)
		}
	},
}

// runCompact writes a compacted copy of the data file to out.
func runCompact(configPath, out string, stdout io.Writer) error {
	return runOffline("compact", configPath, out, "--out FILE", "compact runs offline", func(cfg *config.Config) error {
		r, err := storage.CompactFile(cfg.Storage.Path, out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "compacted %s (%d bytes) into %s (%d bytes, %.0f%%): %d buckets, %d keys\n",
			r.From, r.FromSize, r.To, r.ToSize, 100*float64(r.ToSize)/float64(max(r.FromSize, 1)), r.Buckets, r.Keys)
		return nil
	})
}
