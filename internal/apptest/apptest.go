// Package apptest boots whole linkbolt servers for tests: the real
// configuration loader, the real store in a temporary folder and the real
// HTTP server on a free loopback port, in the test's process or as a
// child process of the built binary.
package apptest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/linkbolt/linkbolt/internal/app"
	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/postgres"
)

// Config writes yaml after a base configuration (a free loopback port,
// the data file under t.TempDir(), the fastest password hash) to a file in
// t.TempDir() and loads it as linkbolt does. Keys in yaml win over the base
// where both name them. With LINKBOLT_TEST_STORE=postgres the base names a
// fresh database of the tests' PostgreSQL cluster (storage.postgres_url):
// the package's TestMain calls pgtest.Main.
func Config(t testing.TB, yaml string) *config.Config {
	t.Helper()
	return load(t, OnPostgres(), yaml)
}

// BoltConfig is Config on a bbolt data file whichever store the tests run
// on: for what only that store does (its file, backups, compaction).
func BoltConfig(t testing.TB, yaml string) *config.Config {
	t.Helper()
	pgtest.SkipInSecondPass(t)
	return load(t, false, yaml)
}

// OnPostgres reports whether the tests run on the PostgreSQL store
// (LINKBOLT_TEST_STORE=postgres) rather than on bbolt files.
func OnPostgres() bool { return os.Getenv(pgtest.StoreEnv) == "postgres" }

// PostgresURL returns a new database of the tests' PostgreSQL cluster
// with linkbolt's schema migrated (a copy of a template migrated once).
func PostgresURL(t testing.TB) string {
	t.Helper()
	return pgtest.URLFrom(t, "migrated", func(u string) error { return postgres.Migrate(context.Background(), u) })
}

func load(t testing.TB, pg bool, yaml string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	storage := fmt.Sprintf("  path: %s\n", filepath.Join(dir, "data", "linkbolt.db"))
	if pg {
		storage += fmt.Sprintf("  postgres_url: %q\n", PostgresURL(t))
	}
	base := "server:\n  listen: 127.0.0.1:0\nstorage:\n" + storage + "auth:\n  password_cost: 4\n"
	if err := os.WriteFile(path, []byte(base+yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Start boots a whole server with cfg, logging to logs (nil: nowhere), and
// returns its base URL and a stop function that stops it gracefully and
// returns Run's error. The server is stopped when the test ends if stop
// was not called.
func Start(t testing.TB, cfg *config.Config, logs io.Writer) (string, func() error) {
	t.Helper()
	if logs == nil {
		logs = io.Discard
	}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, logger)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	base := "http://" + a.Addr()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return base, stop
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds the linkbolt binary once per test process and returns its
// path, for the tests that run it as a child process.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "linkbolt-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "linkbolt")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/linkbolt/linkbolt").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}
