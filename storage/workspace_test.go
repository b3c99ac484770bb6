package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

func TestWorkspaces(t *testing.T) {
	s, admin, first := mustSetup(t)
	ctx := context.Background()

	s.Clock.Add(time.Hour)
	second := mustWorkspace(t, s, "  Second  ", admin.ID)
	if second.Name != "Second" || !second.CreatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("workspace = %+v", second)
	}
	wantCode(t, s.Workspaces.CreateWorkspace(ctx, &link.Workspace{Name: "X", Plan: link.PlanFree}, "usr_zzz", 0), link.ENOTFOUND)
	wantCode(t, s.Workspaces.CreateWorkspace(ctx, &link.Workspace{Name: "", Plan: link.PlanFree}, admin.ID, 0), link.EINVALID)

	for _, tt := range []struct{ name, id, code string }{
		{"found", second.ID, ""},
		{"unknown", "ws_zzz", link.ENOTFOUND},
		{"malformed", "ws_", link.ENOTFOUND},
		{"other prefix", "usr_1", link.ENOTFOUND},
	} {
		t.Run("find/"+tt.name, func(t *testing.T) {
			w, err := s.Workspaces.FindWorkspaceByID(ctx, tt.id)
			wantCode(t, err, tt.code)
			if err == nil && w.Name != "Second" {
				t.Fatalf("workspace = %+v", w)
			}
		})
	}

	ms, err := s.Workspaces.FindMemberships(ctx, admin.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Workspace.ID != first.ID || ms[1].Workspace.ID != second.ID || ms[1].Role != link.RoleOwner {
		t.Fatalf("memberships = %+v", ms)
	}

	bob := &link.User{Email: "bob@example.com"}
	if err := s.Users.CreateUser(ctx, bob); err != nil {
		t.Fatal(err)
	}
	_, err = s.Workspaces.FindMembership(ctx, first.ID, bob.ID)
	wantCode(t, err, link.ENOTFOUND)
	if ms, err := s.Workspaces.FindMemberships(ctx, bob.ID); err != nil || len(ms) != 0 {
		t.Fatalf("bob's memberships = %v, %v", ms, err)
	}
	_, err = s.Workspaces.FindMembership(ctx, "ws_!", admin.ID)
	wantCode(t, err, link.ENOTFOUND)
}

func TestUpdateWorkspace(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	s.Clock.Add(time.Minute)

	for _, tt := range []struct {
		name  string
		id    string
		upd   link.WorkspaceUpdate
		code  string
		field string
	}{
		{"rename", ws.ID, link.WorkspaceUpdate{Name: ptr(" Renamed ")}, "", ""},
		{"plan", ws.ID, link.WorkspaceUpdate{Plan: ptr(link.PlanPro)}, "", ""},
		{"empty name", ws.ID, link.WorkspaceUpdate{Name: ptr("  ")}, link.EINVALID, "name"},
		{"bad plan", ws.ID, link.WorkspaceUpdate{Plan: ptr(link.Plan("gold"))}, link.EINVALID, "plan"},
		{"unknown", "ws_zz", link.WorkspaceUpdate{Name: ptr("x")}, link.ENOTFOUND, ""},
		{"malformed", "nope", link.WorkspaceUpdate{Name: ptr("x")}, link.ENOTFOUND, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Workspaces.UpdateWorkspace(ctx, tt.id, tt.upd)
			wantCode(t, err, tt.code)
			if tt.field != "" {
				if f := link.ErrorFields(err); len(f) != 1 || f[0].Field != tt.field {
					t.Fatalf("fields = %+v, want %s", f, tt.field)
				}
			}
		})
	}
	got, err := s.Workspaces.FindWorkspaceByID(ctx, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Renamed" || got.Plan != link.PlanPro || !got.UpdatedAt.Equal(t0.Add(time.Minute)) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("workspace = %+v", got)
	}
}
