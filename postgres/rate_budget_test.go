package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// openStores opens n stores on one new database, as n processes would.
func openStores(t testing.TB, n int) (string, []*link.Store) {
	t.Helper()
	u := pgtest.URL(t)
	var stores []*link.Store
	for range n {
		s, err := postgres.Open(context.Background(), postgres.Options{URL: u})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Data.Close() })
		stores = append(stores, s)
	}
	return u, stores
}

// TestRateBudgetConcurrent: concurrent takes of one key from three stores
// on one database never spend more than its bucket holds, and time refills
// it at its rate.
func TestRateBudgetConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, stores := openStores(t, 3)
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	takes := func(n int, at time.Time) int {
		var ok atomic.Int64
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				allowed, _, err := stores[i%3].RateBudget.TakeRate(ctx, "ws:a", 100, at)
				if err != nil {
					t.Error(err)
				}
				if allowed {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		return int(ok.Load())
	}
	if got := takes(300, now); got != 100 {
		t.Fatalf("300 takes of a full bucket of 100 allowed %d", got)
	}
	// 0.6 s is one request at 100 a minute.
	if got := takes(30, now.Add(3*time.Second)); got != 5 {
		t.Fatalf("3 s later: %d allowed, want 5", got)
	}
	allowed, full, err := stores[0].RateBudget.TakeRate(ctx, "ws:a", 100, now.Add(3*time.Second))
	if err != nil || allowed || !full.Equal(now.Add(63*time.Second)) {
		t.Fatalf("refused take: %v, full at %v (want %v), %v", allowed, full, now.Add(63*time.Second), err)
	}
	// Another key has its own bucket.
	if got := takes(0, now); got != 0 {
		t.Fatal(got)
	}
	if allowed, full, err := stores[1].RateBudget.TakeRate(ctx, "ws:b", 100, now); err != nil || !allowed || !full.Equal(now.Add(600*time.Millisecond)) {
		t.Fatalf("first take of another key: %v, %v, %v", allowed, full, err)
	}
}

// TestRateBudgetPlanChange: a bucket keeps the requests it holds when its
// rate changes, at most the new rate, and refills at the new rate.
func TestRateBudgetPlanChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, stores := openStores(t, 1)
	b := stores[0].RateBudget
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	take := func(perMinute int) (bool, time.Duration) {
		t.Helper()
		allowed, full, err := b.TakeRate(ctx, "ws:a", perMinute, now)
		if err != nil {
			t.Fatal(err)
		}
		return allowed, full.Sub(now)
	}
	for range 60 {
		take(100) // 40 left
	}
	// At 1000 a minute 40 held are 960 missing: full in 57.6 s; one more
	// taken, 57.66 s.
	if allowed, left := take(1000); !allowed || left != 57660*time.Millisecond {
		t.Fatalf("upgraded: %v, full in %v", allowed, left)
	}
	for range 39 {
		take(1000)
	}
	if allowed, left := take(1000); allowed || left != time.Minute {
		t.Fatalf("upgraded bucket spent: %v, full in %v", allowed, left)
	}
	now = now.Add(30 * time.Second) // 500 back at 1000 a minute
	// Down to 100 a minute: 500 held are at most 100, a full bucket.
	if allowed, left := take(100); !allowed || left != 600*time.Millisecond {
		t.Fatalf("downgraded: %v, full in %v", allowed, left)
	}
	// A refused take at a new rate keeps the new rate too: spent at 100,
	// then refused at 1000 a minute, 6 s later it holds 100, not 10.
	for range 99 {
		take(100)
	}
	if allowed, left := take(1000); allowed || left != time.Minute {
		t.Fatalf("refused at the new rate: %v, full in %v", allowed, left)
	}
	now = now.Add(6 * time.Second)
	if allowed, left := take(1000); !allowed || left != 54060*time.Millisecond {
		t.Fatalf("6 s after: %v, full in %v", allowed, left)
	}
}

// TestPruneRateBudgets: the full buckets are deleted, in chunks, the
// others kept.
func TestPruneRateBudgets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, stores := openStores(t, 1)
	b := stores[0].RateBudget
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO rate_budgets (key, per_minute, full_ns)
		SELECT 'ws:' || i, 100, $1 FROM generate_series(1, 2500) i`, now.Add(-time.Second).UnixNano()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, _, err := b.TakeRate(ctx, fmt.Sprintf("user:%d", i), 100, now); err != nil {
			t.Fatal(err)
		}
	}
	n, err := b.PruneRateBudgets(ctx, now)
	if err != nil || n != 2500 {
		t.Fatalf("pruned %d, %v; want 2500", n, err)
	}
	var left int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM rate_budgets`).Scan(&left); err != nil || left != 3 {
		t.Fatalf("%d rows left, %v; want 3", left, err)
	}
	if n, err := b.PruneRateBudgets(ctx, now); err != nil || n != 0 {
		t.Fatalf("pruned again %d, %v", n, err)
	}
}

// BenchmarkTakeRate measures one allowed take of the shared rate budget:
// the statement every rated API request runs on PostgreSQL. Each
// iteration moves its key's time on by one request's interval, so every
// take is allowed and rewrites the row: one after the other on one key
// (the latency a request adds), and from parallel goroutines on keys of
// their own (the throughput of the pool).
//
//	go test ./postgres/ -run '^$' -bench TakeRate -benchmem
func BenchmarkTakeRate(b *testing.B) {
	ctx := context.Background()
	_, stores := openStores(b, 1)
	rb := stores[0].RateBudget
	var keys atomic.Int64
	start := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	takes := func(b *testing.B, key string, next func() bool) {
		now := start
		for next() {
			allowed, _, err := rb.TakeRate(ctx, key, 100, now)
			if err != nil || !allowed {
				b.Fatalf("take: %v, %v", allowed, err)
			}
			now = now.Add(600 * time.Millisecond)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		takes(b, fmt.Sprintf("ws:%d", keys.Add(1)), b.Loop)
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) { takes(b, fmt.Sprintf("ws:%d", keys.Add(1)), pb.Next) })
	})
}
