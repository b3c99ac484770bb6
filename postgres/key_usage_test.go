package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
)

// TestKeyUsageExactWhileFlushing: a key's uses read back exactly as many
// as were counted, by hash and in the workspace's list, while flushes
// run without pause and every third of them fails (its uses go back for
// the next): a read never misses a batch being written nor counts one
// twice. All of them are in the database after Close.
func TestKeyUsageExactWhileFlushing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	o := Options{URL: pgtest.URL(t), Now: clock.Now, KeyUsageFlush: time.Hour}
	db, err := OpenDB(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var flushes atomic.Int64
	errFail := errors.New("the test fails this flush")
	db.usage.failWrite = func() error {
		if flushes.Add(1)%3 == 0 {
			return errFail
		}
		return nil
	}
	s := db.Store(o)
	closed := false
	defer func() {
		if !closed {
			s.Data.Close()
		}
	}()
	u := &link.User{Email: "admin@example.com", PasswordHash: []byte("h")}
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := s.Users.Bootstrap(ctx, u, ws); err != nil {
		t.Fatal(err)
	}
	k := &link.APIKey{WorkspaceID: ws.ID, Name: "k", Scope: link.ScopeRead, Hash: []byte("hash of lb_live_usage"), Start: "lb_liv"}
	if err := s.Keys.CreateKey(ctx, k, 0); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := db.flushKeyUsage(ctx); err != nil && !errors.Is(err, errFail) {
				t.Error(err)
				return
			}
		}
	})
	const uses = 400
	start := clock.Now()
	for i := 1; i <= uses; i++ {
		at := start.Add(time.Duration(i) * time.Second)
		s.Keys.TouchKey(k.ID, at)
		// Flushes between the uses too, whatever the flusher beside
		// manages on a busy machine: some of them fail.
		if i%7 == 0 {
			if err := db.flushKeyUsage(ctx); err != nil && !errors.Is(err, errFail) {
				t.Fatal(err)
			}
		}
		got, err := s.Keys.FindKeyByHash(ctx, k.Hash)
		if err != nil {
			t.Fatal(err)
		}
		if got.RequestCount != int64(i) || got.LastUsedAt == nil || !got.LastUsedAt.Equal(at) {
			t.Fatalf("use %d: the key counts %d, last %v; want %d, %v", i, got.RequestCount, got.LastUsedAt, i, at)
		}
		if i%10 == 0 {
			keys, err := s.Keys.FindKeys(ctx, ws.ID)
			if err != nil || len(keys) != 1 || keys[0].RequestCount != int64(i) {
				t.Fatalf("use %d: FindKeys = %+v, %v", i, keys, err)
			}
		}
	}
	close(stop)
	wg.Wait()
	if n := flushes.Load(); n < uses/7 {
		t.Fatalf("only %d flushes ran beside the reads", n)
	}
	db.usage.failWrite = nil
	if err := s.Data.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	db2, err := OpenDB(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var n int64
	if err := db2.pool.QueryRow(ctx, `SELECT request_count FROM key_usage WHERE key_id = $1`, k.ID).Scan(&n); err != nil || n != uses {
		t.Fatalf("%d uses written, %v; want %d", n, err, uses)
	}
}

// TestSnapshotSees: the snapshot's text tells which transactions had
// ended when it was taken.
func TestSnapshotSees(t *testing.T) {
	for _, tt := range []struct {
		snap string
		xid  uint64
		want bool
	}{
		{"10:20:", 9, true}, {"10:20:", 15, true}, {"10:20:", 20, false}, {"10:20:12,15", 15, false},
		{"10:20:12,15", 13, true}, {"10:20:12,15", 150, false}, {"bad", 1, false},
	} {
		if got := snapshotSees(tt.snap, tt.xid); got != tt.want {
			t.Errorf("snapshotSees(%q, %d) = %v, want %v", tt.snap, tt.xid, got, tt.want)
		}
	}
}
