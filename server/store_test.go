package server

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
	"github.com/linkbolt/linkbolt/storage"
)

func TestMain(m *testing.M) { os.Exit(pgtest.MainBothStores(m)) }

// onPostgres reports whether the tests run on the PostgreSQL store
// (LINKBOLT_TEST_STORE=postgres) rather than on a bbolt file.
func onPostgres() bool { return os.Getenv(pgtest.StoreEnv) == "postgres" }

// testStore is the store an env runs on: a bbolt file in t.TempDir(), or
// with LINKBOLT_TEST_STORE=postgres a fresh database of the tests'
// PostgreSQL cluster. reopen closes it and opens the same data again, as a
// restarted process would.
type testStore struct {
	*link.Store
	open func() (*link.Store, error)
	url  string // the PostgreSQL database's; "" on bbolt
}

func openTestStore(t testing.TB, pg bool, now func() time.Time, events link.EventEncoder, logger *slog.Logger) *testStore {
	t.Helper()
	var open func() (*link.Store, error)
	var dbURL string
	if pg {
		url := pgtest.URLFrom(t, "migrated", func(u string) error { return postgres.Migrate(context.Background(), u) })
		dbURL = url
		open = func() (*link.Store, error) {
			return postgres.Open(context.Background(), postgres.Options{URL: url, Now: now, Events: events, Logger: logger})
		}
	} else {
		path := filepath.Join(t.TempDir(), "linkbolt.db")
		open = func() (*link.Store, error) {
			return storage.Open(storage.Options{Path: path, Now: now, Events: events, Logger: logger})
		}
	}
	s, err := open()
	if err != nil {
		t.Fatal(err)
	}
	return &testStore{Store: s, open: open, url: dbURL}
}

func (s *testStore) reopen() error {
	if err := s.Data.Close(); err != nil {
		return err
	}
	st, err := s.open()
	if err != nil {
		return err
	}
	s.Store = st
	return nil
}

// liveClicks is the click store of the env's current store, through
// restarts: the recorder outlives them.
type liveClicks struct{ s *testStore }

func (c liveClicks) RecordClicks(ctx context.Context, clicks []link.Click) (int, error) {
	return c.s.Clicks.RecordClicks(ctx, clicks)
}

func (c liveClicks) SpillClicks(ctx context.Context, clicks []link.Click, limit int64) (int, int, error) {
	return c.s.Clicks.SpillClicks(ctx, clicks, limit)
}

func (c liveClicks) DrainClicks(ctx context.Context, max int) (int, int, error) {
	return c.s.Clicks.DrainClicks(ctx, max)
}

func (c liveClicks) Backlog(ctx context.Context) (int64, int64, error) {
	return c.s.Clicks.Backlog(ctx)
}

func (c liveClicks) DailySalt(ctx context.Context, day time.Time) ([]byte, error) {
	return c.s.Clicks.DailySalt(ctx, day)
}

// storeDeps points d's services at s.
func storeDeps(d *Deps, s *link.Store) {
	d.DB, d.Links, d.Keys, d.Users, d.Workspaces = s.Data, s.Links, s.Keys, s.Users, s.Workspaces
	d.Clicks, d.Campaigns, d.QRCodes, d.Webhooks, d.Outbox = s.Clicks, s.Campaigns, s.QRCodes, s.Webhooks, s.Webhooks
	d.Members, d.Invitations, d.Domains, d.Audit, d.Blocklist = s.Members, s.Invitations, s.Domains, s.Audit, s.Blocklist
	d.Imports, d.Accounts, d.Callers, d.RateBudget = s.Imports, s.Accounts, s.Callers, s.RateBudget
	d.ClickFeed, d.UTMTemplates, d.AbuseReports, d.LinkChecks = s.ClickFeed, s.UTMTemplates, s.AbuseReports, s.LinkChecks
	d.Tags = s.Tags
	d.OrphanStore = s.Orphans
}
