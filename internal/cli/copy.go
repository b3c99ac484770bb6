package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/linkbolt/linkbolt/internal/dump"
	"github.com/linkbolt/linkbolt/postgres"
	"github.com/linkbolt/linkbolt/storage"
)

var copyCommand = &command{
	name:     "copy",
	synopsis: "copy --from SRC --to DST",
	summary:  "move a whole instance between a data file and PostgreSQL",
	about: `Copy everything an instance keeps from the store SRC into the new store
DST: users and their sessions' state, workspaces, members, invitations,
API keys (every key keeps working), links, campaigns, domains, the
certificates of automatic HTTPS, webhooks and their pending deliveries,
QR designs, click analytics and raw clicks, the audit log, the blocklist,
imports, the JWT secret and the ID state, so that the same IDs name the
same records and new ones never collide with them. SRC and DST are each
a bbolt data file path or a postgres:// (postgresql://) URL, in either
direction.

SRC's records are only read: a PostgreSQL database's in one
repeatable-read snapshot, so servers may keep running on it; a data file needs its server stopped
(or copy a backup: linkbolt backup --out FILE, then --from FILE). DST must
be new: a data file that does not exist yet, or a PostgreSQL database
without linkbolt data (an empty one, or one a server only started on).

The copy is all or nothing: a data file is written beside DST and renamed
into place when complete, a database in one transaction. An interrupted
copy (Ctrl-C, kill, an error) leaves DST as it was. Progress goes to
stderr when it is a terminal; a summary line ends the copy.`,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		from := fs.String("from", "", "the store to copy, `SRC`: a data file or a postgres:// URL (required)")
		to := fs.String("to", "", "the new store to copy into, `DST`: a data file or a postgres:// URL\n(required)")
		return func(ctx context.Context, stdout, stderr io.Writer) error {
			return runCopy(ctx, *from, *to, stdout, stderr)
		}
	},
}

// isPostgresURL reports whether a store is named by a PostgreSQL URL
// rather than a data file's path.
func isPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// storeName is a store as messages show it: a URL without its password.
func storeName(s string) string {
	if isPostgresURL(s) {
		return postgres.Redacted(s)
	}
	return s
}

// runCopy copies the store from into the new store to.
func runCopy(ctx context.Context, from, to string, stdout, stderr io.Writer) error {
	if from == "" || to == "" {
		return usageError{"--from SRC and --to DST are both required"}
	}
	if err := refuseSameStore(from, to); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	// A copy is a batch: the collector's default keeps its heap small
	// (Main raises the goal for serving). GOGC in the environment wins.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(100))
	}
	start := time.Now()
	src, err := openCopySource(ctx, from, stderr)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	defer src.close()
	load, closeDst, err := openCopyDestination(ctx, to)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	defer closeDst()

	counts := newCopyCounts()
	stream := dump.Stream(ctx, func(ctx context.Context, emit dump.Emit) error {
		return src.dump(ctx, func(r dump.Record) error {
			counts.add(r.Kind())
			return emit(r)
		})
	})
	defer stream.Close()
	stop := showProgress(stderr, counts)
	dropped, err := load(ctx, stream)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("copy: interrupted; %s was left as it was", storeName(to))
		}
		return fmt.Errorf("copy: %w (%s was left as it was)", err, storeName(to))
	}
	fmt.Fprintf(stdout, "copied %s from %s to %s in %s\n", counts.summary(), storeName(from), storeName(to), seconds(time.Since(start)))
	for _, kind := range sortedKeys(dropped) {
		what, ok := droppedKinds[kind]
		if !ok {
			what = kind + " of deleted links or campaigns (PostgreSQL deletes them with the link)"
		}
		fmt.Fprintf(stdout, "left out %s %s\n", thousands(dropped[kind]), what)
	}
	return nil
}

// droppedKinds say what a Load left out, and why, by its table or kind.
var droppedKinds = map[string]string{
	"clicks":          "raw clicks of deleted links or campaigns (PostgreSQL deletes them with the link)",
	"click_visitors":  "visitor records of deleted links or campaigns (PostgreSQL deletes them with the link)",
	"click_hour_sums": "hourly aggregates of deleted links or campaigns (PostgreSQL deletes them with the link)",
	"click_day_sums":  "daily aggregates of deleted links or campaigns (PostgreSQL deletes them with the link)",
	"waiting clicks":  "clicks of the backlog that could not be read",
}

// refuseSameStore refuses a copy of a store onto itself.
func refuseSameStore(from, to string) error {
	same := false
	switch fromPG, toPG := isPostgresURL(from), isPostgresURL(to); {
	case fromPG && toPG:
		a, errA := pgconn.ParseConfig(from)
		b, errB := pgconn.ParseConfig(to)
		if errA != nil || errB != nil {
			return nil // opening says what is wrong with the URL
		}
		same = a.Host == b.Host && a.Port == b.Port && a.Database == b.Database
	case !fromPG && !toPG:
		fi, errA := os.Stat(from)
		ti, errB := os.Stat(to)
		if errA == nil && errB == nil {
			same = os.SameFile(fi, ti)
		} else {
			fa, _ := filepath.Abs(from)
			ta, _ := filepath.Abs(to)
			same = fa == ta
		}
	}
	if same {
		return fmt.Errorf("--from and --to name the same store (%s): copy into a new data file or another database", storeName(to))
	}
	return nil
}

// copySource is an open store to copy from.
type copySource struct {
	dump  func(context.Context, dump.Emit) error
	close func()
}

// openDatabase connects to the database of a URL given as flag, with
// errors on one line and without the URL's password.
func openDatabase(ctx context.Context, flag, u string) (*postgres.DB, error) {
	if _, err := pgconn.ParseConfig(u); err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
		return nil, fmt.Errorf("%s is not a PostgreSQL URL linkbolt can use (postgres://USER:PASSWORD@HOST:PORT/DATABASE): %s", flag, msg)
	}
	db, err := postgres.OpenDB(ctx, postgres.Options{URL: u, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		// The driver's message may hold a line per address it tried.
		var lines []string
		for _, line := range strings.Split(err.Error(), "\n") {
			if line = strings.TrimSpace(line); line != "" && !slices.Contains(lines, line) {
				lines = append(lines, line)
			}
		}
		return nil, fmt.Errorf("%s: %s", flag, strings.Join(lines, " "))
	}
	return db, nil
}

func openCopySource(ctx context.Context, from string, stderr io.Writer) (*copySource, error) {
	if isPostgresURL(from) {
		db, err := openDatabase(ctx, "--from", from)
		if err != nil {
			return nil, err
		}
		return &copySource{dump: db.Dump, close: func() { _ = db.Close() }}, nil
	}
	if _, err := os.Stat(from); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("--from %s: no such data file", from)
	} else if err != nil {
		return nil, fmt.Errorf("--from %s: %w", from, err)
	}
	db := quietDB(from, stderr)
	if err := db.Open(); errors.Is(err, storage.ErrLocked) {
		return nil, fmt.Errorf("--from %s is in use by a running linkbolt: stop it first, or copy a backup (linkbolt backup --out FILE, then linkbolt copy --from FILE)", from)
	} else if err != nil {
		return nil, fmt.Errorf("--from %s: %w", from, err)
	}
	return &copySource{dump: db.Dump, close: func() { _ = db.Close() }}, nil
}

// openCopyDestination checks that to is a new store and returns what
// loads a stream into it.
func openCopyDestination(ctx context.Context, to string) (load func(context.Context, *dump.Source) (map[string]int64, error), closeFn func(), err error) {
	if isPostgresURL(to) {
		db, err := openDatabase(ctx, "--to", to)
		if err != nil {
			return nil, nil, err
		}
		if ok, err := db.Empty(ctx); err != nil {
			_ = db.Close()
			return nil, nil, err
		} else if !ok {
			_ = db.Close()
			return nil, nil, fmt.Errorf("--to %s holds linkbolt data already: copy into an empty database", postgres.Redacted(to))
		}
		return func(ctx context.Context, src *dump.Source) (map[string]int64, error) {
			r, err := db.Load(ctx, src)
			if errors.Is(err, postgres.ErrNotEmpty) {
				return nil, fmt.Errorf("--to %s holds linkbolt data already: copy into an empty database", postgres.Redacted(to))
			}
			if err != nil {
				return nil, err
			}
			return r.Dropped, nil
		}, func() { _ = db.Close() }, nil
	}
	if info, err := os.Stat(to); err == nil {
		if info.IsDir() {
			return nil, nil, fmt.Errorf("--to %s is a directory: name a new data file", to)
		}
		return nil, nil, fmt.Errorf("--to %s exists already: copy into a new data file (move the old one away first)", to)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("--to %s: %w", to, err)
	}
	return func(ctx context.Context, src *dump.Source) (map[string]int64, error) {
		r, err := storage.LoadFile(ctx, to, src)
		if err != nil {
			return nil, err
		}
		return r.Dropped, nil
	}, func() {}, nil
}

// copyCounts counts the records read, by kind.
type copyCounts struct {
	n map[string]*atomic.Int64
}

func newCopyCounts() *copyCounts {
	c := &copyCounts{n: map[string]*atomic.Int64{}}
	for _, k := range dump.Kinds {
		c.n[k] = new(atomic.Int64)
	}
	return c
}

func (c *copyCounts) add(kind string) {
	if n, ok := c.n[kind]; ok {
		n.Add(1)
	}
}

// copySummaryKinds are always named in the summary; the other kinds when
// there were any.
var copySummaryKinds = map[string]bool{"users": true, "workspaces": true, "links": true, "clicks": true}

// summary is the counts as a list: "2 users, 1 workspaces, ...".
func (c *copyCounts) summary() string {
	var parts []string
	for _, k := range dump.Kinds {
		if k == "settings" || k == "ids" {
			continue
		}
		if n := c.n[k].Load(); n > 0 || copySummaryKinds[k] {
			parts = append(parts, thousands(n)+" "+k)
		}
	}
	return strings.Join(parts, ", ")
}

// showProgress writes the counts to stderr every half second while the
// copy runs, when stderr is a terminal; the returned func stops it.
func showProgress(stderr io.Writer, c *copyCounts) func() {
	f, ok := stderr.(*os.File)
	if !ok {
		return func() {}
	}
	if info, err := f.Stat(); err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(f, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(f, "\r\033[Kcopying: %s", c.summary())
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// thousands is n with commas: 1,000,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// seconds is d for the summary: "0.4 s", "42 s".
func seconds(d time.Duration) string {
	if d < 10*time.Second {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	}
	return strconv.FormatInt(int64(d.Round(time.Second)/time.Second), 10) + " s"
}

func sortedKeys(m map[string]int64) []string {
	return slices.Sorted(maps.Keys(m))
}

// quietDB returns the storage of the data file at path, logging only
// warnings (a damaged header page) to stderr.
func quietDB(path string, stderr io.Writer) *storage.DB {
	db := storage.NewDB(path)
	db.Logger = warnLogger(stderr)
	return db
}
