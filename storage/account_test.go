package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

func TestUpdateUser(t *testing.T) {
	s, admin, _ := mustSetup(t)
	ctx := context.Background()
	ada := &link.User{Email: "ada@example.com", Name: " Ada ", PasswordHash: []byte("h1")}
	if err := s.Users.CreateUser(ctx, ada); err != nil {
		t.Fatal(err)
	}
	if ada.Name != "Ada" {
		t.Fatalf("name %q, want it trimmed", ada.Name)
	}
	u, err := s.Users.UpdateUser(ctx, ada.ID, link.UserUpdate{Name: ptr("Ada Lovelace"), PasswordHash: []byte("h2"), EndTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	if u.Name != "Ada Lovelace" || string(u.PasswordHash) != "h2" || u.TokenGeneration != 1 || u.Disabled {
		t.Fatalf("updated = %+v", u)
	}
	u, err = s.Users.UpdateUser(ctx, ada.ID, link.UserUpdate{Disabled: ptr(true), EndTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Disabled || u.TokenGeneration != 2 || u.Name != "Ada Lovelace" {
		t.Fatalf("disabled = %+v", u)
	}
	got, err := s.Users.FindUserByID(ctx, ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Disabled || got.TokenGeneration != 2 || string(got.PasswordHash) != "h2" {
		t.Fatalf("stored = %+v", got)
	}

	wantCode(t, s.Users.CreateUser(ctx, &link.User{Email: "b@example.com", Name: "a\x00b"}), link.EINVALID)
	_, err = s.Users.UpdateUser(ctx, ada.ID, link.UserUpdate{Name: ptr("  ")})
	wantCode(t, err, link.EINVALID)
	_, err = s.Users.UpdateUser(ctx, "usr_nope", link.UserUpdate{Disabled: ptr(true)})
	wantCode(t, err, link.ENOTFOUND)

	users, err := s.Users.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users[0].ID != admin.ID || users[1].ID != ada.ID {
		t.Fatalf("ListUsers = %+v", users)
	}
}

func TestSessionsPersist(t *testing.T) {
	db, clock := MustOpenDB(t)
	s := newServices(db, clock)
	ctx := context.Background()
	u := &link.User{Email: "ada@example.com", Name: "Ada"}
	if err := s.Users.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	idle := &link.User{Email: "idle@example.com", Name: "Idle"}
	if err := s.Users.CreateUser(ctx, idle); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Users.UpdateUser(ctx, u.ID, link.UserUpdate{EndTokens: true}); err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	for _, r := range []link.RevokedToken{
		{ID: "soon", ExpiresAt: now.Add(time.Hour)},
		{ID: "later", ExpiresAt: now.Add(24 * time.Hour)},
	} {
		if err := s.Users.RevokeToken(ctx, r, now); err != nil {
			t.Fatal(err)
		}
	}

	db = MustReopen(t, db, clock)
	users := storage.NewUserService(db)
	sessions, revoked, err := users.LoadSessions(ctx, now.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// Users with nothing to remember are left out; expired tokens too.
	if len(sessions) != 1 || sessions[0].UserID != u.ID || sessions[0].TokenGeneration != 1 || sessions[0].Disabled {
		t.Fatalf("sessions = %+v", sessions)
	}
	if len(revoked) != 1 || revoked[0].ID != "later" || !revoked[0].ExpiresAt.Equal(now.Add(24*time.Hour)) {
		t.Fatalf("revoked = %+v", revoked)
	}

	// A later revocation forgets the expired entries on disk.
	if err := users.RevokeToken(ctx, link.RevokedToken{ID: "next", ExpiresAt: now.Add(48 * time.Hour)}, now.Add(30*time.Hour)); err != nil {
		t.Fatal(err)
	}
	_, revoked, err = users.LoadSessions(ctx, time.Time{}) // every entry still on disk
	if err != nil {
		t.Fatal(err)
	}
	if len(revoked) != 1 || revoked[0].ID != "next" {
		t.Fatalf("revoked on disk = %+v", revoked)
	}
}

func TestKeepWhenCreatorDisabled(t *testing.T) {
	s, admin, ws := mustSetup(t)
	ctx := context.Background()
	k := &link.APIKey{WorkspaceID: ws.ID, Name: "ci", Scope: link.ScopeRead, Hash: []byte("0123456789abcdef0123456789abcdef"),
		Start: "lb_live_Ab3x", CreatedAt: t0, CreatedBy: link.KeyCreator{Type: link.CreatorUser, ID: admin.ID}}
	if err := s.Keys.CreateKey(ctx, k, 0); err != nil {
		t.Fatal(err)
	}
	got, err := s.Keys.SetKeepWhenCreatorDisabled(ctx, ws.ID, k.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if !got.KeepWhenCreatorDisabled || got.Name != "ci" {
		t.Fatalf("kept = %+v", got)
	}
	got, err = s.Keys.FindKeyByHash(ctx, k.Hash)
	if err != nil || !got.KeepWhenCreatorDisabled {
		t.Fatalf("FindKeyByHash = %+v, %v", got, err)
	}
	if got, err = s.Keys.SetKeepWhenCreatorDisabled(ctx, ws.ID, k.ID, false); err != nil || got.KeepWhenCreatorDisabled {
		t.Fatalf("undone = %+v, %v", got, err)
	}
	other := mustWorkspace(t, s, "Other", admin.ID)
	_, err = s.Keys.SetKeepWhenCreatorDisabled(ctx, other.ID, k.ID, true)
	wantCode(t, err, link.ENOTFOUND)
}
