package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// skipCounter counts the log lines of upkeep jobs skipped because
// another instance holds their lease.
type skipCounter struct{ n atomic.Int64 }

func (c *skipCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *skipCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "another instance runs it") {
		c.n.Add(1)
	}
	return nil
}
func (c *skipCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *skipCounter) WithGroup(string) slog.Handler      { return c }

// upkeepJobs is the number of jobs Upkeep runs on PostgreSQL with
// analytics.link_hours_retention off (pruning the rate budgets among
// them).
const upkeepJobs = 7

// TestUpkeepOnceAcrossInstances: two instances on one database running
// their hourly upkeep at the same moment run each job once between them,
// and record each ended API key's end once in the audit log; an hour later
// each job runs once again; when the holder of the leases dies, the other
// instance skips the jobs until the hour ends and then takes them over.
func TestUpkeepOnceAcrossInstances(t *testing.T) {
	u := pgtest.URL(t)
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	cfg := &config.Config{}
	cfg.Analytics.Retention = 90 * 24 * time.Hour
	cfg.Audit.Retention = 365 * 24 * time.Hour
	var apps []*App
	var skips []*skipCounter
	for i := range 2 {
		s, err := postgres.Open(ctx, postgres.Options{URL: u, Now: clock.Now, Instance: fmt.Sprintf("node%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Data.Close() })
		c := &skipCounter{}
		apps = append(apps, &App{cfg: cfg, logger: slog.New(c), store: s})
		skips = append(skips, c)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })

	store := apps[0].store
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := store.Users.Bootstrap(ctx, &link.User{Email: "admin@example.com", PasswordHash: []byte("hash")}, ws); err != nil {
		t.Fatal(err)
	}
	const keys = 8
	for i := range keys {
		h := sha256.Sum256(fmt.Appendf(nil, "lb_live_end%d", i))
		k := &link.APIKey{WorkspaceID: ws.ID, Name: fmt.Sprint("key ", i), Scope: link.ScopeReadWrite, Hash: h[:], Start: "lb_liv",
			ExpiresAt: new(clock.Now().Add(time.Minute))}
		if err := store.Keys.CreateKey(ctx, k, 0); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(time.Hour)

	// run runs the upkeep of the instances at once as of now and returns
	// how many jobs they skipped between them.
	run := func(now time.Time, which ...int) int64 {
		var before int64
		for _, c := range skips {
			before += c.n.Load()
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, i := range which {
			wg.Add(1)
			go func() { defer wg.Done(); <-start; apps[i].Upkeep(ctx, now) }()
		}
		close(start)
		wg.Wait()
		var after int64
		for _, c := range skips {
			after += c.n.Load()
		}
		return after - before
	}
	both := []int{0, 1}
	for round := range 3 {
		now := clock.Now()
		if got := run(now, both...); got != upkeepJobs {
			t.Fatalf("round %d: %d jobs skipped, want each of the %d jobs run by one instance", round, got, upkeepJobs)
		}
		var entries int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM audit_entries WHERE action = $1`, link.AuditKeyExpired).Scan(&entries); err != nil {
			t.Fatal(err)
		}
		if entries != keys {
			t.Fatalf("round %d: %d key.expired entries, want %d", round, entries, keys)
		}
		clock.Add(time.Hour)
	}

	// Whoever holds the lease of record-ended-keys dies: the other skips it
	// until the hour ends, then runs it.
	now := clock.Now()
	run(now, both...)
	var holder string
	if err := conn.QueryRow(ctx, `SELECT holder FROM leases WHERE name = 'record-ended-keys'`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	alive := 1
	if strings.HasPrefix(holder, "node1/") {
		alive = 0
	}
	if got := run(now.Add(30*time.Minute), alive); got < 1 {
		t.Fatalf("half an hour after the dead instance took the lease: %d jobs skipped, want record-ended-keys skipped", got)
	}
	if got := run(now.Add(time.Hour), alive); got != 0 {
		t.Fatalf("an hour later: %d jobs skipped, want every job run by the instance left", got)
	}
	if err := conn.QueryRow(ctx, `SELECT holder FROM leases WHERE name = 'record-ended-keys'`).Scan(&holder); err != nil ||
		!strings.HasPrefix(holder, fmt.Sprintf("node%d/", alive)) {
		t.Fatalf("the lease's holder is %q (%v), want node%d", holder, err, alive)
	}
}
