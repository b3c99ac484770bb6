package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

func apiKey(wsID, token string) *link.APIKey {
	return &link.APIKey{WorkspaceID: wsID, Name: "key " + token, Scope: link.ScopeReadWrite, Hash: tokenHash(token), Start: token[:6]}
}

// TestKeyCapAcrossInstances: keys created at once on two instances never
// pass the workspace's cap, counted under the workspace's row lock.
func TestKeyCapAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, conn, clock := instances(t, 2)
	_, ws := bootstrap(t, stores[0])
	const max, tries = 5, 16
	ok := race(t, stores, tries, link.ECONFLICT, func(i int, s *link.Store) error {
		return s.Keys.CreateKey(context.Background(), apiKey(ws.ID, fmt.Sprint("lb_live_race", i)), max)
	})
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM keys WHERE workspace_id = $1`, ws.ID).Scan(&n); err != nil || ok != max || n != max {
		t.Fatalf("%d keys created, %d stored (%v); want %d", ok, n, err, max)
	}
	// A rotation may pass the cap up to twice it, no further, at once too.
	keys, err := stores[1].Keys.FindKeys(context.Background(), ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	ok = race(t, stores, 2*len(keys), link.ECONFLICT, func(i int, s *link.Store) error {
		k := keys[i%len(keys)]
		_, err := s.Keys.RotateKey(context.Background(), ws.ID, k.ID, &link.APIKey{Hash: tokenHash(fmt.Sprint("lb_live_next", i))}, clock.Now().Add(time.Hour), max)
		return err
	})
	if ok != max {
		t.Fatalf("%d rotations of %d keys went through, want one each", ok, max)
	}
}

// TestKeyHashUniqueAcrossInstances: one token stored at once on two
// instances is one key; the others are told it exists, which is no
// failing write; and the table refuses a second row of a hash however it
// is written.
func TestKeyHashUniqueAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, conn, clock := instances(t, 2)
	_, ws := bootstrap(t, stores[0])
	ok := race(t, stores, 8, link.ECONFLICT, func(i int, s *link.Store) error {
		return s.Keys.CreateKey(context.Background(), apiKey(ws.ID, "lb_live_same"), 0)
	})
	if ok != 1 {
		t.Fatalf("%d keys made of one token, want 1", ok)
	}
	for i, s := range stores {
		if _, failing := s.Data.WriteFailing(); failing {
			t.Fatalf("instance %d: a token stored already marked writes failing", i)
		}
	}
	_, err := conn.Exec(context.Background(), `INSERT INTO keys (id, seq, workspace_id, hash, created_at) VALUES ('key_x', 1000, $1, $2, $3)`,
		ws.ID, tokenHash("lb_live_same"), clock.Now())
	if err == nil {
		t.Fatal("a second row of one hash was stored")
	}
}

// TestEndedKeysRecordedOnceAcrossInstances: instances recording ended
// keys at once record each end once between them.
func TestEndedKeysRecordedOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, conn, clock := instances(t, 2)
	_, ws := bootstrap(t, stores[0])
	ctx := context.Background()
	const keys = 10
	for i := range keys {
		k := apiKey(ws.ID, fmt.Sprint("lb_live_ends", i))
		k.ExpiresAt = new(clock.Now().Add(time.Minute))
		if err := stores[0].Keys.CreateKey(ctx, k, 0); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(time.Hour)
	counts := make([]int, 4)
	race(t, stores, len(counts), "", func(i int, s *link.Store) error {
		n, err := s.Keys.RecordEndedKeys(ctx, clock.Now())
		counts[i] = n
		return err
	})
	total := 0
	for _, n := range counts {
		total += n
	}
	var entries int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM audit_entries WHERE action = $1`, link.AuditKeyExpired).Scan(&entries); err != nil {
		t.Fatal(err)
	}
	if total != keys || entries != keys {
		t.Fatalf("%d ends counted (%v), %d entries; want %d of each", total, counts, entries, keys)
	}
}

// TestKeyCreatedWhileItsMemberIsRemoved: a member creating a key on one
// instance while an owner removes them on another either is refused or
// makes a key the removal revokes; no key of theirs is left working.
func TestKeyCreatedWhileItsMemberIsRemoved(t *testing.T) {
	t.Parallel()
	stores, _, clock := instances(t, 2)
	admin, ws := bootstrap(t, stores[0])
	ctx := context.Background()
	for i := range 6 {
		u := &link.User{Email: fmt.Sprintf("member%d@example.com", i), PasswordHash: []byte("h")}
		if err := stores[0].Users.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		join(t, stores[0], clock, ws, admin, u, link.RoleReadWrite)
		as := link.WithActor(ctx, link.Actor{Type: link.ActorUser, ID: u.ID, Name: u.Email}, "")
		race(t, stores, 2, link.EFORBIDDEN, func(j int, s *link.Store) error {
			if j == 0 {
				return s.Members.RemoveMember(ctx, ws.ID, u.ID)
			}
			k := apiKey(ws.ID, fmt.Sprint("lb_live_member", i))
			k.CreatedBy = link.KeyCreator{Type: link.CreatorUser, ID: u.ID}
			return s.Keys.CreateKey(as, k, 0)
		})
		keys, err := stores[0].Keys.FindKeys(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.CreatedBy.ID == u.ID && k.State(clock.Now()).Authenticates() {
				t.Fatalf("member %d: their key %s works after their removal", i, k.ID)
			}
		}
	}
}
