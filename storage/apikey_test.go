package storage_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

func newKey(wsID, token string) *link.APIKey {
	h := sha256.Sum256([]byte(token))
	return &link.APIKey{WorkspaceID: wsID, Name: "key " + token, Scope: link.ScopeReadWrite, Hash: h[:], Start: token[:6]}
}

func mustKey(tb testing.TB, s *Services, k *link.APIKey) *link.APIKey {
	tb.Helper()
	if err := s.Keys.CreateKey(context.Background(), k, 0); err != nil {
		tb.Fatalf("create key: %v", err)
	}
	return k
}

func TestKeys_Find(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()

	k1 := mustKey(t, s, newKey(ws.ID, "lb_live_one"))
	s.Clock.Add(time.Second)
	k2 := mustKey(t, s, newKey(ws.ID, "lb_live_two"))
	k3 := mustKey(t, s, newKey(other.ID, "lb_live_three"))
	if !k1.CreatedAt.Equal(t0) || k1.ID == k2.ID {
		t.Fatalf("k1 = %+v, k2 = %+v", k1, k2)
	}
	wantCode(t, s.Keys.CreateKey(ctx, newKey(ws.ID, "lb_live_one"), 0), link.ECONFLICT)
	wantCode(t, s.Keys.CreateKey(ctx, newKey("ws_zzz", "lb_live_four"), 0), link.ENOTFOUND)

	for _, tt := range []struct{ name, ws, id, code string }{
		{"found", ws.ID, k1.ID, ""},
		{"other workspace", other.ID, k1.ID, link.ENOTFOUND},
		{"other workspace's key", ws.ID, k3.ID, link.ENOTFOUND},
		{"unknown", ws.ID, "key_zzz", link.ENOTFOUND},
		{"malformed", ws.ID, "key_?", link.ENOTFOUND},
		{"malformed workspace", "ws", k1.ID, link.ENOTFOUND},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k, err := s.Keys.FindKeyByID(ctx, tt.ws, tt.id)
			wantCode(t, err, tt.code)
			if err == nil && (k.Name != k1.Name || string(k.Hash) != string(k1.Hash) || k.Start != "lb_liv" || k.WorkspaceID != ws.ID) {
				t.Fatalf("key = %+v", k)
			}
		})
	}

	h := sha256.Sum256([]byte("lb_live_three"))
	if k, err := s.Keys.FindKeyByHash(ctx, h[:]); err != nil || k.ID != k3.ID || k.WorkspaceID != other.ID {
		t.Fatalf("by hash = %+v, %v", k, err)
	}
	h = sha256.Sum256([]byte("lb_live_nope"))
	_, err := s.Keys.FindKeyByHash(ctx, h[:])
	wantCode(t, err, link.ENOTFOUND)
	_, err = s.Keys.FindKeyByHash(ctx, nil)
	wantCode(t, err, link.ENOTFOUND)

	keys, err := s.Keys.FindKeys(ctx, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].ID != k2.ID || keys[1].ID != k1.ID {
		t.Fatalf("FindKeys = %v, want k2, k1", keyIDs(keys))
	}
	_, err = s.Keys.FindKeys(ctx, "ws_zzz")
	wantCode(t, err, link.ENOTFOUND)
}

func keyIDs(keys []*link.APIKey) []string {
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.ID)
	}
	return ids
}

func TestKeys_RotateRevokeStates(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	state := func(id string) link.KeyState {
		t.Helper()
		k, err := s.Keys.FindKeyByID(ctx, ws.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return k.State(s.Clock.Now())
	}

	expiry := t0.Add(30 * 24 * time.Hour)
	oldKey := newKey(ws.ID, "lb_live_old")
	oldKey.ExpiresAt = &expiry
	oldKey.Scope = link.ScopeRead
	mustKey(t, s, oldKey)

	_, err := s.Keys.RotateKey(ctx, other.ID, oldKey.ID, newKey(ws.ID, "lb_live_x"), t0, 0)
	wantCode(t, err, link.ENOTFOUND)

	s.Clock.Add(time.Hour)
	grace := s.Clock.Now().Add(24 * time.Hour)
	next, err := s.Keys.RotateKey(ctx, ws.ID, oldKey.ID, &link.APIKey{Hash: []byte("new-hash"), Start: "lb_new"}, grace, 0)
	if err != nil {
		t.Fatal(err)
	}
	if next.ID == "" || next.Name != oldKey.Name || next.Scope != link.ScopeRead || next.ExpiresAt == nil ||
		!next.ExpiresAt.Equal(expiry) || next.WorkspaceID != ws.ID || !next.CreatedAt.Equal(s.Clock.Now()) {
		t.Fatalf("next = %+v", next)
	}
	old, err := s.Keys.FindKeyByID(ctx, ws.ID, oldKey.ID)
	if err != nil {
		t.Fatal(err)
	}
	if old.ReplacedBy != next.ID || old.GraceEndsAt == nil || !old.GraceEndsAt.Equal(grace) {
		t.Fatalf("old = %+v", old)
	}
	if got := state(oldKey.ID); got != link.KeyGrace {
		t.Fatalf("old state = %s, want grace", got)
	}
	if got := state(next.ID); got != link.KeyActive {
		t.Fatalf("new state = %s, want active", got)
	}

	_, err = s.Keys.RotateKey(ctx, ws.ID, oldKey.ID, &link.APIKey{Hash: []byte("h3")}, grace, 0)
	wantCode(t, err, link.ECONFLICT)
	if got, want := link.ErrorMessage(err), "only an active key can be rotated; this key is grace"; got != want {
		t.Fatalf("message = %q, want %q", got, want)
	}
	// A refused rotation stores nothing.
	if keys, _ := s.Keys.FindKeys(ctx, ws.ID); len(keys) != 2 {
		t.Fatalf("%d keys after refused rotation, want 2", len(keys))
	}

	s.Clock.Add(24 * time.Hour)
	if got := state(oldKey.ID); got != link.KeyRevoked {
		t.Fatalf("old state after grace = %s, want revoked", got)
	}

	if err := s.Keys.RevokeKey(ctx, ws.ID, next.ID); err != nil {
		t.Fatal(err)
	}
	revokedAt := s.Clock.Now()
	s.Clock.Add(time.Minute)
	if err := s.Keys.RevokeKey(ctx, ws.ID, next.ID); err != nil {
		t.Fatalf("second revoke: %v", err)
	}
	k, err := s.Keys.FindKeyByID(ctx, ws.ID, next.ID)
	if err != nil {
		t.Fatal(err)
	}
	if k.RevokedAt == nil || !k.RevokedAt.Equal(revokedAt) || k.State(s.Clock.Now()) != link.KeyRevoked {
		t.Fatalf("revoked key = %+v", k)
	}
	_, err = s.Keys.RotateKey(ctx, ws.ID, next.ID, &link.APIKey{Hash: []byte("h4")}, grace, 0)
	if link.ErrorCode(err) != link.ECONFLICT || !strings.HasSuffix(link.ErrorMessage(err), "this key is revoked") {
		t.Fatalf("rotate revoked: %v", err)
	}
	wantCode(t, s.Keys.RevokeKey(ctx, other.ID, next.ID), link.ENOTFOUND)
	wantCode(t, s.Keys.RevokeKey(ctx, ws.ID, "key_zzz"), link.ENOTFOUND)

	// Expiry.
	soon := s.Clock.Now().Add(time.Hour)
	exp := newKey(ws.ID, "lb_live_exp")
	exp.ExpiresAt = &soon
	mustKey(t, s, exp)
	if got := state(exp.ID); got != link.KeyActive {
		t.Fatalf("state = %s, want active", got)
	}
	s.Clock.Add(time.Hour)
	if got := state(exp.ID); got != link.KeyExpired {
		t.Fatalf("state = %s, want expired", got)
	}
	_, err = s.Keys.RotateKey(ctx, ws.ID, exp.ID, &link.APIKey{Hash: []byte("h5")}, soon, 0)
	if link.ErrorCode(err) != link.ECONFLICT || !strings.HasSuffix(link.ErrorMessage(err), "this key is expired") {
		t.Fatalf("rotate expired: %v", err)
	}
}

func TestKeys_Usage(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	k := mustKey(t, s, newKey(ws.ID, "lb_live_usage"))
	other := mustKey(t, s, newKey(ws.ID, "lb_live_other"))

	usage := func(id string) (int64, *time.Time) {
		t.Helper()
		k, err := s.Keys.FindKeyByID(ctx, ws.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return k.RequestCount, k.LastUsedAt
	}
	if n, last := usage(k.ID); n != 0 || last != nil {
		t.Fatalf("fresh key: %d, %v", n, last)
	}

	late := t0.Add(time.Hour)
	s.Keys.TouchKey(k.ID, t0.Add(time.Minute))
	s.Keys.TouchKey(k.ID, late)
	s.Keys.TouchKey(k.ID, t0) // out of order: last stays the latest
	s.Keys.TouchKey("key_zzzz", t0)
	s.Keys.TouchKey("garbage", t0)
	if n, last := usage(k.ID); n != 3 || last == nil || !last.Equal(late) {
		t.Fatalf("before flush: %d, %v", n, last)
	}
	if n, err := s.DB.DiskKeyUsage(k.ID); err != nil || n != 0 {
		t.Fatalf("on disk before flush: %d, %v", n, err)
	}

	if err := s.DB.FlushKeyUsage(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DB.DiskKeyUsage(k.ID); err != nil || n != 3 {
		t.Fatalf("on disk after flush: %d, %v", n, err)
	}
	if n, last := usage(k.ID); n != 3 || !last.Equal(late) {
		t.Fatalf("after flush: %d, %v", n, last)
	}

	// A failed flush puts the uses back: nothing lost, nothing doubled.
	s.Keys.TouchKey(k.ID, late)
	s.Keys.TouchKey(other.ID, late)
	s.DB.SetFailUsageWrite(func() error { return errors.New("disk full") })
	if err := s.DB.FlushKeyUsage(); err == nil {
		t.Fatal("flush did not fail")
	}
	s.Keys.TouchKey(k.ID, late)
	if n, _ := usage(k.ID); n != 5 {
		t.Fatalf("after failed flush: %d, want 5", n)
	}
	s.DB.SetFailUsageWrite(nil)
	if err := s.DB.FlushKeyUsage(); err != nil {
		t.Fatal(err)
	}
	if n, _ := usage(k.ID); n != 5 {
		t.Fatalf("after retried flush: %d, want 5", n)
	}
	if n, _ := usage(other.ID); n != 1 {
		t.Fatalf("other key: %d, want 1", n)
	}
	if got := s.DB.PendingKeyUsage(); got != 0 {
		t.Fatalf("pending after flush = %d", got)
	}

	// FindKeys and FindKeyByHash merge too.
	s.Keys.TouchKey(k.ID, late)
	keys, err := s.Keys.FindKeys(ctx, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range keys {
		if got.ID == k.ID && got.RequestCount != 6 {
			t.Fatalf("FindKeys count = %d, want 6", got.RequestCount)
		}
	}
	if got, err := s.Keys.FindKeyByHash(ctx, k.Hash); err != nil || got.RequestCount != 6 {
		t.Fatalf("FindKeyByHash = %+v, %v", got, err)
	}

	// Close writes what is left; a reopened file has it all.
	db := MustReopen(t, s.DB, s.Clock)
	if n, err := db.DiskKeyUsage(k.ID); err != nil || n != 6 {
		t.Fatalf("after reopen on disk: %d, %v", n, err)
	}
	s = newServices(db, s.Clock)
	if n, last := usage(k.ID); n != 6 || !last.Equal(late) {
		t.Fatalf("after reopen: %d, %v", n, last)
	}
}

// TestKeys_UsageConcurrent touches keys from many goroutines while others
// flush and read; every read must lie between the uses finished before it
// began and the uses started before it ended.
func TestKeys_UsageConcurrent(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	k := mustKey(t, s, newKey(ws.ID, "lb_live_conc"))

	const writers, perWriter = 8, 300
	var started, finished atomic.Int64
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range perWriter {
				started.Add(1)
				s.Keys.TouchKey(k.ID, t0)
				finished.Add(1)
			}
		})
	}
	done := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := s.DB.FlushKeyUsage(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 2 {
		bg.Go(func() {
			var prev int64
			for {
				select {
				case <-done:
					return
				default:
				}
				lo := finished.Load()
				got, err := s.Keys.FindKeyByID(ctx, ws.ID, k.ID)
				hi := started.Load()
				if err != nil {
					t.Error(err)
					return
				}
				if got.RequestCount < lo || got.RequestCount > hi || got.RequestCount < prev {
					t.Errorf("count %d outside [%d, %d] or below previous %d", got.RequestCount, lo, hi, prev)
					return
				}
				prev = got.RequestCount
			}
		})
	}
	wg.Wait()
	close(done)
	bg.Wait()

	if err := s.DB.FlushKeyUsage(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Keys.FindKeyByID(ctx, ws.ID, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.RequestCount != writers*perWriter {
		t.Fatalf("count = %d, want %d", got.RequestCount, writers*perWriter)
	}
	if n, err := s.DB.DiskKeyUsage(k.ID); err != nil || n != writers*perWriter {
		t.Fatalf("on disk = %d, %v", n, err)
	}
}

// TestKeys_BackgroundFlush checks that Open starts a loop that writes key
// usage every KeyUsageFlush. It waits for the loop's signal, not a timer.
func TestKeys_BackgroundFlush(t *testing.T) {
	db, clock := MustOpenDB(t)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	flushed := make(chan error, 100)
	db.KeyUsageFlush = time.Millisecond
	db.SetAfterBackgroundFlush(func(err error) {
		select {
		case flushed <- err:
		default:
		}
	})
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	s := newServices(db, clock)
	u := &link.User{Email: "admin@example.com"}
	ws := &link.Workspace{Name: "W", Plan: link.PlanFree}
	if err := s.Users.Bootstrap(context.Background(), u, ws); err != nil {
		t.Fatal(err)
	}
	k := mustKey(t, s, newKey(ws.ID, "lb_live_bg"))
	s.Keys.TouchKey(k.ID, t0)
	timeout := time.After(10 * time.Second)
	for {
		select {
		case err := <-flushed:
			if err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			t.Fatal("no background flush wrote the use")
		}
		if n, err := db.DiskKeyUsage(k.ID); err != nil {
			t.Fatal(err)
		} else if n == 1 {
			return
		}
	}
}

// TestKeys_Cap checks keys.max_per_workspace in the store: only active and
// grace keys count, per workspace, and concurrent creations never pass it.
func TestKeys_Cap(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	const max = 5

	expiring := newKey(ws.ID, "lb_live_exp")
	expiring.ExpiresAt = ptr(t0.Add(time.Minute))
	if err := s.Keys.CreateKey(ctx, expiring, max); err != nil {
		t.Fatal(err)
	}
	revoked := newKey(ws.ID, "lb_live_rev")
	if err := s.Keys.CreateKey(ctx, revoked, max); err != nil {
		t.Fatal(err)
	}
	if err := s.Keys.RevokeKey(ctx, ws.ID, revoked.ID); err != nil {
		t.Fatal(err)
	}
	s.Clock.Add(time.Minute) // expiring is now expired

	var wg sync.WaitGroup
	var ok, conflict atomic.Int32
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Keys.CreateKey(ctx, newKey(ws.ID, fmt.Sprint("lb_live_race", i)), max)
			switch link.ErrorCode(err) {
			case "":
				ok.Add(1)
			case link.ECONFLICT:
				conflict.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != max || conflict.Load() != 20-max {
		t.Fatalf("%d created, %d refused; want %d and %d", ok.Load(), conflict.Load(), max, 20-max)
	}
	// Another workspace has its own count; max <= 0 means no cap.
	mustKey(t, s, newKey(other.ID, "lb_live_other"))
	if err := s.Keys.CreateKey(ctx, newKey(ws.ID, "lb_live_nocap"), 0); err != nil {
		t.Fatal(err)
	}
}

// TestKeys_CapLiveIndex: the count reads an index of the live keys that
// drops keys once they are seen revoked or expired, and that is built for
// data files written before it.
func TestKeys_CapLiveIndex(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 6; i++ {
		k := newKey(ws.ID, fmt.Sprint("lb_live_idx", i))
		if i < 2 {
			k.ExpiresAt = ptr(t0.Add(time.Minute))
		}
		if err := s.Keys.CreateKey(ctx, k, 0); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, k.ID)
	}
	if err := s.Keys.RevokeKey(ctx, ws.ID, ids[5]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Keys.RotateKey(ctx, ws.ID, ids[4], &link.APIKey{Hash: []byte("r")}, t0.Add(time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	s.Clock.Add(time.Minute) // the two expiring keys expire
	if err := s.DB.DropLiveKeys(); err != nil {
		t.Fatal(err)
	}
	// Live: 2 active, 1 in grace, its replacement = 4. A cap of 5 takes one more.
	if err := s.Keys.CreateKey(ctx, newKey(ws.ID, "lb_live_fifth"), 5); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Keys.CreateKey(ctx, newKey(ws.ID, "lb_live_sixth"), 5), link.ECONFLICT)
	if got := s.DB.LiveKeyEntries(); got != 5 {
		t.Fatalf("%d live index entries, want 5", got)
	}
	// The grace period ends: that key leaves the count and the index.
	s.Clock.Add(time.Hour)
	if err := s.Keys.CreateKey(ctx, newKey(ws.ID, "lb_live_sixth"), 5); err != nil {
		t.Fatal(err)
	}
	if got := s.DB.LiveKeyEntries(); got != 5 {
		t.Fatalf("%d live index entries, want 5", got)
	}
}

func TestKeys_RotateCapAndCreator(t *testing.T) {
	s, admin, ws := mustSetup(t)
	ctx := context.Background()
	k := newKey(ws.ID, "lb_live_a")
	k.CreatedBy = link.KeyCreator{Type: link.CreatorUser, ID: admin.ID}
	if err := s.Keys.CreateKey(ctx, k, 1); err != nil {
		t.Fatal(err)
	}
	// At the cap of 1, rotation may reach 2 (twice the cap), not 3.
	next, err := s.Keys.RotateKey(ctx, ws.ID, k.ID, &link.APIKey{Hash: []byte("h2"), CreatedBy: link.KeyCreator{Type: link.CreatorKey, ID: k.ID}}, t0.Add(time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Keys.RotateKey(ctx, ws.ID, next.ID, &link.APIKey{Hash: []byte("h3")}, t0.Add(time.Hour), 1)
	wantCode(t, err, link.ECONFLICT)

	// created_by survives a reopen.
	s.DB = MustReopen(t, s.DB, s.Clock)
	s.Keys = storage.NewKeyService(s.DB)
	got, err := s.Keys.FindKeyByID(ctx, ws.ID, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedBy != (link.KeyCreator{Type: link.CreatorUser, ID: admin.ID}) {
		t.Fatalf("created_by = %+v", got.CreatedBy)
	}
	got, err = s.Keys.FindKeyByID(ctx, ws.ID, next.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedBy != (link.KeyCreator{Type: link.CreatorKey, ID: k.ID}) {
		t.Fatalf("rotated key's created_by = %+v", got.CreatedBy)
	}
}

// BenchmarkCreateKeyCapped measures a key creation under the cap in a
// workspace that holds 99 live keys and 2,000 revoked ones, against the
// same creation with no cap: the count reads the live keys only.
func BenchmarkCreateKeyCapped(b *testing.B) {
	for _, max := range []int{0, 1 << 30} {
		b.Run(fmt.Sprint("max=", max), func(b *testing.B) {
			s, _, ws := mustSetup(b)
			ctx := context.Background()
			for i := 0; i < 2099; i++ {
				k := mustKey(b, s, newKey(ws.ID, fmt.Sprint("lb_live_seed", i)))
				if i >= 99 {
					if err := s.Keys.RevokeKey(ctx, ws.ID, k.ID); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := newKey(ws.ID, fmt.Sprint("lb_live_b", i))
				if err := s.Keys.CreateKey(ctx, k, max); err != nil {
					b.Fatal(err)
				}
				b.StopTimer() // back to 99 live keys for the next one
				if err := s.Keys.RevokeKey(ctx, ws.ID, k.ID); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
