package storage_test

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// mustUser creates a user who is not an admin.
func mustUser(tb testing.TB, s *Services, email, name string) *link.User {
	tb.Helper()
	u := &link.User{Email: email, Name: name, PasswordHash: []byte("hash")}
	if err := s.Users.CreateUser(context.Background(), u); err != nil {
		tb.Fatalf("create user: %v", err)
	}
	return u
}

// mustJoin makes u a member of ws with role through an invitation.
func mustJoin(tb testing.TB, s *Services, ws *link.Workspace, by, u *link.User, role link.Role) {
	tb.Helper()
	ctx := context.Background()
	invs := storage.NewInvitationService(s.DB)
	hash := sha256.Sum256([]byte("token for " + u.Email + string(role) + ws.ID))
	inv := &link.Invitation{WorkspaceID: ws.ID, Email: u.Email, Role: role, TokenHash: hash[:], InvitedBy: by.ID, ExpiresAt: s.Clock.Now().Add(time.Hour)}
	if err := invs.CreateInvitation(ctx, inv); err != nil {
		tb.Fatalf("invite: %v", err)
	}
	if _, _, err := invs.AcceptInvitation(ctx, hash[:], link.Acceptance{UserID: u.ID}); err != nil {
		tb.Fatalf("accept: %v", err)
	}
}

func TestMembers(t *testing.T) {
	s, admin, ws := mustSetup(t)
	ctx := context.Background()
	members := storage.NewMemberService(s.DB)
	bob := mustUser(t, s, "bob@example.com", "Bob")
	s.Clock.Add(time.Minute)
	mustJoin(t, s, ws, admin, bob, link.RoleRead)

	t.Run("list, longest-standing first", func(t *testing.T) {
		ms, err := members.FindMembers(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 2 || ms[0].UserID != admin.ID || ms[0].Role != link.RoleOwner || ms[1].UserID != bob.ID ||
			ms[1].Email != "bob@example.com" || ms[1].Name != "Bob" || ms[1].Role != link.RoleRead || !ms[1].JoinedAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("members = %+v %+v", ms[0], ms[1])
		}
		_, err = members.FindMembers(ctx, "ws_zzz")
		wantCode(t, err, link.ENOTFOUND)
	})

	t.Run("the last owner is neither demoted nor removed", func(t *testing.T) {
		_, err := members.UpdateMemberRole(ctx, ws.ID, admin.ID, link.RoleReadWrite)
		wantCode(t, err, link.ECONFLICT)
		wantCode(t, members.RemoveMember(ctx, ws.ID, admin.ID), link.ECONFLICT)
		m, err := s.Workspaces.FindMembership(ctx, ws.ID, admin.ID)
		if err != nil || m.Role != link.RoleOwner {
			t.Fatalf("admin's membership = %+v, %v", m, err)
		}
	})

	t.Run("role changes", func(t *testing.T) {
		m, err := members.UpdateMemberRole(ctx, ws.ID, bob.ID, link.RoleOwner)
		if err != nil || m.Role != link.RoleOwner || m.Email != "bob@example.com" {
			t.Fatalf("update = %+v, %v", m, err)
		}
		// Two owners: either may now step down.
		if _, err := members.UpdateMemberRole(ctx, ws.ID, admin.ID, link.RoleRead); err != nil {
			t.Fatal(err)
		}
		// Bob is the last owner now.
		_, err = members.UpdateMemberRole(ctx, ws.ID, bob.ID, link.RoleRead)
		wantCode(t, err, link.ECONFLICT)
		_, err = members.UpdateMemberRole(ctx, ws.ID, bob.ID, "god")
		wantCode(t, err, link.EINVALID)
		_, err = members.UpdateMemberRole(ctx, ws.ID, "usr_zzz", link.RoleRead)
		wantCode(t, err, link.ENOTFOUND)
		if _, err := members.UpdateMemberRole(ctx, ws.ID, admin.ID, link.RoleOwner); err != nil {
			t.Fatal(err)
		}
		// Both directions of the membership changed.
		ms, err := s.Workspaces.FindMemberships(ctx, bob.ID)
		if err != nil || len(ms) != 1 || ms[0].Role != link.RoleOwner {
			t.Fatalf("bob's memberships = %+v, %v", ms, err)
		}
	})

	t.Run("removal ends the membership in both directions and is remembered", func(t *testing.T) {
		if err := members.RemoveMember(ctx, ws.ID, bob.ID); err != nil {
			t.Fatal(err)
		}
		_, err := s.Workspaces.FindMembership(ctx, ws.ID, bob.ID)
		wantCode(t, err, link.ENOTFOUND)
		if at, err := members.FindRemoval(ctx, ws.ID, bob.ID); err != nil || !at.Equal(s.Clock.Now()) {
			t.Fatalf("removal = %v, %v", at, err)
		}
		if ms, err := s.Workspaces.FindMemberships(ctx, bob.ID); err != nil || len(ms) != 0 {
			t.Fatalf("bob's memberships = %+v, %v", ms, err)
		}
		if ms, err := members.FindMembers(ctx, ws.ID); err != nil || len(ms) != 1 {
			t.Fatalf("members = %+v, %v", ms, err)
		}
		wantCode(t, members.RemoveMember(ctx, ws.ID, bob.ID), link.ENOTFOUND)
		// A stranger is not a former member, nor is a member.
		carol := mustUser(t, s, "carol@example.com", "")
		_, err = members.FindRemoval(ctx, ws.ID, carol.ID)
		wantCode(t, err, link.ENOTFOUND)
		_, err = members.FindRemoval(ctx, ws.ID, admin.ID)
		wantCode(t, err, link.ENOTFOUND)
		// Invited again, bob is a member like any other.
		mustJoin(t, s, ws, admin, bob, link.RoleReadWrite)
		if m, err := s.Workspaces.FindMembership(ctx, ws.ID, bob.ID); err != nil || m.Role != link.RoleReadWrite {
			t.Fatalf("bob's membership = %+v, %v", m, err)
		}
		_, err = members.FindRemoval(ctx, ws.ID, bob.ID)
		wantCode(t, err, link.ENOTFOUND)
	})
}
