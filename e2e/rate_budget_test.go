package e2e

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/app"
	"github.com/linkbolt/linkbolt/internal/apptest"
)

// TestRateBudgetSharedByInstances: two whole servers on one PostgreSQL
// database give a free workspace its plan's 100 requests a minute between
// them, not 100 each, and the hourly upkeep deletes the budgets that are
// full again.
func TestRateBudgetSharedByInstances(t *testing.T) {
	t.Parallel()
	if !apptest.OnPostgres() {
		t.Skip("the shared rate budget is PostgreSQL's")
	}
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	// The second instance: the same database, a folder of its own.
	cfg2 := *cfg
	cfg2.Storage.Path = filepath.Join(t.TempDir(), "data", "linkbolt.db")
	base2, _ := startApp(t, &cfg2, nil)

	c1, c2 := client{t, "http://" + a.Addr()}, client{t, base2}
	tok := c1.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key := c2.must("POST", "/v1/keys", tok, `{"name":"k","scope":"read"}`, 201)["key"].(string)

	start := time.Now()
	allowed := 0
	for i := range 160 {
		c := []client{c1, c2}[i%2]
		switch status, _, _ := c.call("GET", "/v1/links?limit=1", key, ""); status {
		case 200:
			allowed++
		case 429:
		default:
			t.Fatalf("request %d: status %d", i, status)
		}
	}
	// The key's creation took one; the bucket refills 100 a minute
	// while the requests run.
	refill := int(time.Since(start).Seconds()*100/60) + 1
	if allowed < 99 || allowed > 99+refill {
		t.Fatalf("two instances allowed %d of 160 requests, want 99 (+%d refilled)", allowed, refill)
	}

	conn, err := pgx.Connect(ctx, cfg.Storage.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows := func() (n int) {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM rate_budgets`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := rows(); n == 0 {
		t.Fatal("no budget in the database")
	}
	a.Upkeep(ctx, time.Now())
	if n := rows(); n == 0 {
		t.Fatal("the upkeep deleted a budget in use")
	}
	// Two minutes on, every bucket is full again: as good as none.
	a.Upkeep(ctx, time.Now().Add(3*time.Minute))
	if n := rows(); n != 0 {
		t.Fatalf("%d budgets left after the upkeep", n)
	}
}
