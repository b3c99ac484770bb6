package postgres_test

import (
	"context"
	"testing"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/internal/storetest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// storeGroups are the conformance groups the PostgreSQL store runs: all
// of them (an entry "Group/Test" would run one test of its group). The
// Data group runs the refusal of backups (Traits.BackupTool) where bbolt
// spools one.
var storeGroups = []string{
	"Accounts",
	"Invitations",
	"Members",
	"Keys",
	"Audit",
	"Blocklist",
	"Certs",
	"Webhooks",
	"Campaigns",
	"Links",
	"LinkChecks",
	"Domains",
	"Clicks",
	"QRCodes",
	"UTMTemplates",
	"Tags",
	"BulkEdits",
	"AbuseReports",
	"Imports",
	"Data",
}

// TestConformance runs the stores' conformance suite on PostgreSQL: each
// subtest on a database of its own in the test process's throwaway
// cluster, which Check finds sound when the subtest ends.
func TestConformance(t *testing.T) {
	storetest.RunStore(t, func(t *testing.T, c storetest.Config) (*link.Store, func() *link.Store) {
		u := pgtest.URL(t)
		// Whatever a test leaves behind keeps linkbolt's invariants
		// (cleanups run last first: this runs after the stores closed).
		t.Cleanup(func() {
			r, err := postgres.Check(context.Background(), u)
			if err != nil {
				t.Errorf("check: %v", err)
			} else if !r.OK() {
				t.Errorf("check: %q", r.Problems)
			}
		})
		open := func() *link.Store {
			t.Helper()
			o := postgres.Options{URL: u, Now: c.Now, Events: c.Events, AliasHold: c.AliasHold}
			s, err := postgres.Open(context.Background(), o)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			t.Cleanup(func() { s.Data.Close() })
			return s
		}
		return open(), open
	}, storetest.Traits{BackupTool: "pg_dump"}, storeGroups...)
}
