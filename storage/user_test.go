package storage_test

import (
	"context"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

func TestBootstrap(t *testing.T) {
	s, u, ws := mustSetup(t)
	ctx := context.Background()

	if !u.Admin || u.ID == "" || !u.CreatedAt.Equal(t0) {
		t.Fatalf("user = %+v", u)
	}
	if ws.ID == "" || ws.Name != "Default" || !ws.CreatedAt.Equal(t0) {
		t.Fatalf("workspace = %+v", ws)
	}
	m, err := s.Workspaces.FindMembership(ctx, ws.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Role != link.RoleOwner || m.Workspace.ID != ws.ID {
		t.Fatalf("membership = %+v", m)
	}

	err = s.Users.Bootstrap(ctx, &link.User{Email: "other@example.com"}, &link.Workspace{Name: "Other", Plan: link.PlanFree})
	wantCode(t, err, link.ECONFLICT)
	if n, err := s.Users.CountUsers(ctx); err != nil || n != 1 {
		t.Fatalf("CountUsers = %d, %v; want 1", n, err)
	}
}

func TestBootstrap_Invalid(t *testing.T) {
	db, clock := MustOpenDB(t)
	s := newServices(db, clock)
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		u    link.User
		ws   link.Workspace
	}{
		{"bad email", link.User{Email: "nope"}, link.Workspace{Name: "W", Plan: link.PlanFree}},
		{"no workspace name", link.User{Email: "a@example.com"}, link.Workspace{Plan: link.PlanFree}},
		{"bad plan", link.User{Email: "a@example.com"}, link.Workspace{Name: "W", Plan: "gold"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantCode(t, s.Users.Bootstrap(ctx, &tt.u, &tt.ws), link.EINVALID)
			if tt.u.ID != "" || tt.ws.ID != "" {
				t.Fatal("IDs set on failure")
			}
		})
	}
	if n, err := s.Users.CountUsers(ctx); err != nil || n != 0 {
		t.Fatalf("CountUsers = %d, %v; want 0", n, err)
	}
}

func TestUsers_Find(t *testing.T) {
	s, admin, _ := mustSetup(t)
	ctx := context.Background()
	other := &link.User{Email: "Bob@Example.com", PasswordHash: []byte("h2")}
	if err := s.Users.CreateUser(ctx, other); err != nil {
		t.Fatal(err)
	}
	if other.Admin {
		t.Fatal("second user became admin")
	}
	wantCode(t, s.Users.CreateUser(ctx, &link.User{Email: "bob@example.COM"}), link.ECONFLICT)

	for _, tt := range []struct {
		name, email, wantID, code string
	}{
		{"exact", "admin@example.com", admin.ID, ""},
		{"other case", "ADMIN@example.com", admin.ID, ""},
		{"stored mixed case", "bob@example.com", other.ID, ""},
		{"unknown", "carol@example.com", "", link.ENOTFOUND},
		{"empty", "", "", link.ENOTFOUND},
	} {
		t.Run("email/"+tt.name, func(t *testing.T) {
			u, err := s.Users.FindUserByEmail(ctx, tt.email)
			wantCode(t, err, tt.code)
			if err == nil && u.ID != tt.wantID {
				t.Fatalf("ID = %q, want %q", u.ID, tt.wantID)
			}
		})
	}
	for _, tt := range []struct {
		name, id, code string
	}{
		{"found", admin.ID, ""},
		{"unknown", "usr_zz", link.ENOTFOUND},
		{"malformed", "usr_!", link.ENOTFOUND},
		{"wrong prefix", "lnk_1", link.ENOTFOUND},
		{"empty", "", link.ENOTFOUND},
	} {
		t.Run("id/"+tt.name, func(t *testing.T) {
			u, err := s.Users.FindUserByID(ctx, tt.id)
			wantCode(t, err, tt.code)
			if err == nil && (u.Email != "admin@example.com" || string(u.PasswordHash) != "hash" || !u.Admin) {
				t.Fatalf("user = %+v", u)
			}
		})
	}
	if n, err := s.Users.CountUsers(ctx); err != nil || n != 2 {
		t.Fatalf("CountUsers = %d, %v; want 2", n, err)
	}
}
