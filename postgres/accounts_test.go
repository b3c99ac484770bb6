package postgres_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// instances opens n stores over one new database, as n instances of
// linkbolt behind a load balancer, each with a pool of its own, and a
// plain connection for reading what they wrote.
func instances(t *testing.T, n int) ([]*link.Store, *pgx.Conn, *clocktest.Clock) {
	t.Helper()
	u := pgtest.URL(t)
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	var out []*link.Store
	for range n {
		s, err := postgres.Open(ctx, postgres.Options{URL: u, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Data.Close() })
		out = append(out, s)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return out, conn, clock
}

// race runs fn(i, store) for i in [0, n) at once, the stores taken in
// turn, and returns how many succeeded; every error must have the code
// want.
func race(t *testing.T, stores []*link.Store, n int, want string, fn func(i int, s *link.Store) error) int {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(i, stores[i%len(stores)])
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch code := link.ErrorCode(err); code {
		case "":
			ok++
		case want:
		default:
			t.Errorf("error %v (code %q), want none or %q", err, code, want)
		}
	}
	return ok
}

func bootstrap(t *testing.T, s *link.Store) (*link.User, *link.Workspace) {
	t.Helper()
	u := &link.User{Email: "admin@example.com", PasswordHash: []byte("hash")}
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := s.Users.Bootstrap(context.Background(), u, ws); err != nil {
		t.Fatal(err)
	}
	return u, ws
}

func tokenHash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// join makes u a member of ws with role through an invitation by owner.
func join(t *testing.T, s *link.Store, clock *clocktest.Clock, ws *link.Workspace, owner, u *link.User, role link.Role) {
	t.Helper()
	ctx := context.Background()
	tok := tokenHash("join " + u.Email + ws.ID)
	inv := &link.Invitation{WorkspaceID: ws.ID, Email: u.Email, Role: role, TokenHash: tok, InvitedBy: owner.ID, ExpiresAt: clock.Now().Add(time.Hour)}
	if err := s.Invitations.CreateInvitation(ctx, inv); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Invitations.AcceptInvitation(ctx, tok, link.Acceptance{UserID: u.ID}); err != nil {
		t.Fatal(err)
	}
}

// TestEmailUniqueAcrossInstances: users created at once with one e-mail
// (in any case) on two instances make one user; the others are told the
// e-mail is taken.
func TestEmailUniqueAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, conn, _ := instances(t, 2)
	bootstrap(t, stores[0])
	const n = 8
	ok := race(t, stores, n, link.ECONFLICT, func(i int, s *link.Store) error {
		email := "bob@example.com"
		if i%2 == 1 {
			email = "Bob@Example.com"
		}
		return s.Users.CreateUser(context.Background(), &link.User{Email: email, PasswordHash: []byte("h")})
	})
	if ok != 1 {
		t.Fatalf("%d of %d creations succeeded, want 1", ok, n)
	}
	var users int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM users WHERE email_key = 'bob@example.com'`).Scan(&users); err != nil || users != 1 {
		t.Fatalf("%d users of the e-mail, %v; want 1", users, err)
	}
}

// TestBootstrapOnceAcrossInstances: set-ups at once on two instances make
// one admin and one workspace.
func TestBootstrapOnceAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, conn, _ := instances(t, 2)
	const n = 6
	ok := race(t, stores, n, link.ECONFLICT, func(i int, s *link.Store) error {
		return s.Users.Bootstrap(context.Background(), &link.User{Email: fmt.Sprintf("admin%d@example.com", i)},
			&link.Workspace{Name: "Default", Plan: link.PlanFree})
	})
	if ok != 1 {
		t.Fatalf("%d of %d set-ups succeeded, want 1", ok, n)
	}
	var users, workspaces int
	if err := conn.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM workspaces)`).Scan(&users, &workspaces); err != nil {
		t.Fatal(err)
	}
	if users != 1 || workspaces != 1 {
		t.Fatalf("%d users and %d workspaces after the set-ups, want 1 and 1", users, workspaces)
	}
}

// TestOwnerCapAcrossInstances: workspaces created at once by one owner on
// two instances stop at the cap.
func TestOwnerCapAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, _, _ := instances(t, 2)
	admin, _ := bootstrap(t, stores[0])
	const n, max = 8, 3
	ok := race(t, stores, n, link.ECONFLICT, func(i int, s *link.Store) error {
		return s.Workspaces.CreateWorkspace(context.Background(), &link.Workspace{Name: fmt.Sprintf("W%d", i), Plan: link.PlanFree}, admin.ID, max)
	})
	if ok != max-1 {
		t.Fatalf("%d of %d workspaces created, want %d (the admin owned one)", ok, n, max-1)
	}
	if ms, err := stores[1].Workspaces.FindMemberships(context.Background(), admin.ID); err != nil || len(ms) != max {
		t.Fatalf("the admin owns %d workspaces, %v; want %d", len(ms), err, max)
	}
}

// TestLastOwnerAcrossInstances: two owners stepping down at once on two
// instances leave one owner.
func TestLastOwnerAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, _, clock := instances(t, 2)
	ctx := context.Background()
	admin, ws := bootstrap(t, stores[0])
	bob := &link.User{Email: "bob@example.com", PasswordHash: []byte("h")}
	if err := stores[0].Users.CreateUser(ctx, bob); err != nil {
		t.Fatal(err)
	}
	join(t, stores[0], clock, ws, admin, bob, link.RoleOwner)
	owners := []*link.User{admin, bob}
	ok := race(t, stores, 2, link.ECONFLICT, func(i int, s *link.Store) error {
		if i == 0 {
			_, err := s.Members.UpdateMemberRole(ctx, ws.ID, owners[i].ID, link.RoleRead)
			return err
		}
		return s.Members.RemoveMember(ctx, ws.ID, owners[i].ID)
	})
	if ok != 1 {
		t.Fatalf("%d of 2 owners stepped down, want 1", ok)
	}
	ms, err := stores[1].Members.FindMembers(ctx, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range ms {
		if m.Role == link.RoleOwner {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d owners left, want 1: %+v", n, ms)
	}
}

// TestOnePendingInvitationAcrossInstances: invitations of one e-mail made
// at once on two instances leave one pending.
func TestOnePendingInvitationAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, _, clock := instances(t, 2)
	admin, ws := bootstrap(t, stores[0])
	const n = 8
	ok := race(t, stores, n, link.ECONFLICT, func(i int, s *link.Store) error {
		inv := &link.Invitation{WorkspaceID: ws.ID, Email: "carol@example.com", Role: link.RoleRead, TokenHash: tokenHash(fmt.Sprint(i)),
			InvitedBy: admin.ID, ExpiresAt: clock.Now().Add(time.Hour)}
		return s.Invitations.CreateInvitation(context.Background(), inv)
	})
	if ok != 1 {
		t.Fatalf("%d of %d invitations made, want 1", ok, n)
	}
	if list, err := stores[0].Invitations.FindInvitations(context.Background(), ws.ID); err != nil || len(list) != 1 {
		t.Fatalf("pending invitations %+v, %v; want 1", list, err)
	}
}

// TestIDsHaveTheDataFileForm: IDs are the bbolt store's (link.IDCodec):
// the sequence of their row under the ID key in settings, so that a copy
// between the stores keeps them.
func TestIDsHaveTheDataFileForm(t *testing.T) {
	t.Parallel()
	stores, conn, _ := instances(t, 2)
	ctx := context.Background()
	admin, ws := bootstrap(t, stores[0])
	bob := &link.User{Email: "bob@example.com"}
	if err := stores[1].Users.CreateUser(ctx, bob); err != nil {
		t.Fatal(err)
	}
	var key []byte
	if err := conn.QueryRow(ctx, `SELECT value FROM settings WHERE name = 'id_key'`).Scan(&key); err != nil {
		t.Fatal(err)
	}
	codec, err := link.NewIDCodec(key, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ prefix, id, table string }{
		{link.PrefixUser, admin.ID, "users"}, {link.PrefixUser, bob.ID, "users"}, {link.PrefixWorkspace, ws.ID, "workspaces"},
	} {
		if len(tt.id) != len(tt.prefix)+link.IDOpaqueLen || !strings.HasPrefix(tt.id, tt.prefix) {
			t.Fatalf("ID %q is not of the opaque form", tt.id)
		}
		var seq int64
		if err := conn.QueryRow(ctx, `SELECT seq FROM `+tt.table+` WHERE id = $1`, tt.id).Scan(&seq); err != nil {
			t.Fatal(err)
		}
		if got, ok := codec.ParseID(tt.prefix, tt.id); !ok || got != uint64(seq) {
			t.Fatalf("ParseID(%q) = %d, %v; want the row's sequence %d", tt.id, got, ok, seq)
		}
	}
	es, _, err := stores[0].Audit.FindAuditEntries(ctx, link.AuditFilter{AllWorkspaces: true})
	if err != nil || len(es) == 0 {
		t.Fatalf("audit entries %v, %v", es, err)
	}
	if _, ok := codec.ParseID(link.PrefixAudit, es[0].ID); !ok {
		t.Fatalf("audit entry ID %q does not parse", es[0].ID)
	}
}

// TestRemovalEndsWhatTheyMade: a member's removal revokes the live keys
// they made, directly or through their keys, and disables their webhooks
// that would send, each with its entry, in the removal's transaction;
// what an owner keeps, what ended already and what others made stay.
// (The conformance suite checks the same through the key and webhook
// services; the rows here are written as those services will.)
func TestRemovalEndsWhatTheyMade(t *testing.T) {
	t.Parallel()
	stores, conn, clock := instances(t, 1)
	s := stores[0]
	ctx := context.Background()
	admin, ws := bootstrap(t, s)
	bob := &link.User{Email: "bob@example.com", PasswordHash: []byte("h")}
	if err := s.Users.CreateUser(ctx, bob); err != nil {
		t.Fatal(err)
	}
	join(t, s, clock, ws, admin, bob, link.RoleReadWrite)
	now := clock.Now()
	seq := 0
	key := func(id, creatorType, creatorID string, keep bool, expires *time.Time) {
		t.Helper()
		seq++
		if _, err := conn.Exec(ctx, `INSERT INTO keys (id, seq, workspace_id, hash, created_at, expires_at, creator_type, creator_id, keep_when_creator_disabled)
			VALUES ($1, $2, $3, sha256(convert_to($1, 'UTF8')), $4, $5, $6, $7, $8)`, id, seq, ws.ID, now, expires, creatorType, creatorID, keep); err != nil {
			t.Fatal(err)
		}
	}
	past := now.Add(-time.Hour)
	key("key_direct", link.CreatorUser, bob.ID, false, nil)
	key("key_indirect", link.CreatorKey, "key_direct", false, nil)
	key("key_kept", link.CreatorUser, bob.ID, true, nil)
	key("key_via_kept", link.CreatorKey, "key_kept", false, nil)
	key("key_expired", link.CreatorUser, bob.ID, false, &past)
	key("key_admin", link.CreatorUser, admin.ID, false, nil)
	hook := func(id string, enabled bool, reason, creatorID string) {
		t.Helper()
		seq++
		if _, err := conn.Exec(ctx, `INSERT INTO webhooks (id, seq, workspace_id, url, events, enabled, disabled_reason, creator_type, creator_id, created_at, updated_at)
			VALUES ($1, $2, $3, 'https://hooks.example.com/x', '{link.created}', $4, $5, 'user', $6, $7, $7)`, id, seq, ws.ID, enabled, reason, creatorID, now); err != nil {
			t.Fatal(err)
		}
	}
	hook("wh_bob", true, "", bob.ID)
	hook("wh_bob_failing", false, "too many failed deliveries", bob.ID)
	hook("wh_bob_off", false, "", bob.ID)
	hook("wh_admin", true, "", admin.ID)

	clock.Add(time.Minute)
	if err := s.Members.RemoveMember(ctx, ws.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT id FROM keys WHERE revoked_at IS NOT NULL ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	revoked, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || strings.Join(revoked, ",") != "key_direct,key_indirect" {
		t.Fatalf("revoked keys %v, %v; want key_direct and key_indirect", revoked, err)
	}
	rows, err = conn.Query(ctx, `SELECT id FROM webhooks WHERE disabled_reason = $1 AND NOT enabled ORDER BY seq`, link.WebhookCreatorRemoved)
	if err != nil {
		t.Fatal(err)
	}
	disabled, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || strings.Join(disabled, ",") != "wh_bob,wh_bob_failing" {
		t.Fatalf("webhooks disabled for the removal %v, %v; want wh_bob and wh_bob_failing", disabled, err)
	}
	es, _, err := s.Audit.FindAuditEntries(ctx, link.AuditFilter{WorkspaceID: ws.ID, Start: clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Action+" "+e.Target.ID)
	}
	want := []string{link.AuditMemberRemoved + " " + bob.ID, link.AuditWebhookDisabled + " wh_bob_failing", link.AuditWebhookDisabled + " wh_bob",
		link.AuditKeyRevoked + " key_indirect", link.AuditKeyRevoked + " key_direct"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("entries of the removal, newest first:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ch := es[0].Changes
	if k, w := ch["keys_revoked"].After, ch["webhooks_disabled"].After; k == nil || *k != "key_direct,key_indirect" || w == nil || *w != "wh_bob,wh_bob_failing" {
		t.Fatalf("member.removed changes = %+v", ch)
	}
}
