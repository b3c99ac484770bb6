package storage_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

func tokenHash(tok string) []byte {
	h := sha256.Sum256([]byte(tok))
	return h[:]
}

func TestInvitations(t *testing.T) {
	s, admin, ws := mustSetup(t)
	ctx := context.Background()
	invs := storage.NewInvitationService(s.DB)
	invite := func(email string, role link.Role, tok string) (*link.Invitation, error) {
		inv := &link.Invitation{WorkspaceID: ws.ID, Email: email, Role: role, TokenHash: tokenHash(tok),
			InvitedBy: admin.ID, ExpiresAt: s.Clock.Now().Add(24 * time.Hour)}
		return inv, invs.CreateInvitation(ctx, inv)
	}

	t.Run("create validates and normalizes", func(t *testing.T) {
		_, err := invite("not an address", link.RoleRead, "t0")
		wantCode(t, err, link.EINVALID)
		_, err = invite("x@example.com", "god", "t0")
		wantCode(t, err, link.EINVALID)
		// The admin is a member already.
		_, err = invite("Admin@Example.com", link.RoleRead, "t0")
		wantCode(t, err, link.ECONFLICT)
	})

	newcomer, err := invite("  New@Example.com ", link.RoleReadWrite, "new token")
	if err != nil {
		t.Fatal(err)
	}
	if newcomer.Email != "new@example.com" || newcomer.ID == "" || !newcomer.CreatedAt.Equal(t0) {
		t.Fatalf("invitation = %+v", newcomer)
	}
	t.Run("one pending invitation per e-mail", func(t *testing.T) {
		_, err := invite("new@example.com", link.RoleRead, "another")
		wantCode(t, err, link.ECONFLICT)
	})

	t.Run("list shows pending ones", func(t *testing.T) {
		list, err := invs.FindInvitations(ctx, ws.ID)
		if err != nil || len(list) != 1 || list[0].ID != newcomer.ID || list[0].InvitedBy != admin.ID || list[0].Role != link.RoleReadWrite {
			t.Fatalf("list = %+v, %v", list, err)
		}
	})

	t.Run("a new person accepts once, in one transaction", func(t *testing.T) {
		_, _, err := invs.AcceptInvitation(ctx, tokenHash("wrong"), link.Acceptance{Name: "N", PasswordHash: []byte("h")})
		wantCode(t, err, link.ENOTFOUND)
		_, _, err = invs.AcceptInvitation(ctx, tokenHash("new token"), link.Acceptance{Name: " ", PasswordHash: []byte("h")})
		wantCode(t, err, link.EINVALID)
		u, m, err := invs.AcceptInvitation(ctx, tokenHash("new token"), link.Acceptance{Name: "Nina", PasswordHash: []byte("h")})
		if err != nil {
			t.Fatal(err)
		}
		if u.Email != "new@example.com" || u.Name != "Nina" || u.Admin || m.Role != link.RoleReadWrite || m.Workspace.ID != ws.ID {
			t.Fatalf("user %+v, membership %+v", u, m)
		}
		found, err := s.Users.FindUserByEmail(ctx, "new@example.com")
		if err != nil || found.ID != u.ID || found.Name != "Nina" {
			t.Fatalf("user = %+v, %v", found, err)
		}
		_, _, err = invs.AcceptInvitation(ctx, tokenHash("new token"), link.Acceptance{Name: "Nina", PasswordHash: []byte("h")})
		wantCode(t, err, link.EGONE)
		_, _, err = invs.AcceptInvitation(ctx, tokenHash("new token"), link.Acceptance{UserID: u.ID})
		wantCode(t, err, link.EGONE)
		if list, _ := invs.FindInvitations(ctx, ws.ID); len(list) != 0 {
			t.Fatalf("used invitation still listed: %+v", list)
		}
	})

	bob := mustUser(t, s, "bob@example.com", "Bob")
	t.Run("a signed-in user accepts only their own", func(t *testing.T) {
		if _, err := invite("bob@example.com", link.RoleRead, "bob token"); err != nil {
			t.Fatal(err)
		}
		_, _, err := invs.AcceptInvitation(ctx, tokenHash("bob token"), link.Acceptance{UserID: admin.ID})
		wantCode(t, err, link.EFORBIDDEN)
		// A new person cannot take a registered e-mail.
		_, _, err = invs.AcceptInvitation(ctx, tokenHash("bob token"), link.Acceptance{Name: "Mallory", PasswordHash: []byte("h")})
		wantCode(t, err, link.ECONFLICT)
		if u, err := s.Users.FindUserByEmail(ctx, "bob@example.com"); err != nil || u.ID != bob.ID || u.Name != "Bob" {
			t.Fatalf("bob = %+v, %v", u, err)
		}
		_, m, err := invs.AcceptInvitation(ctx, tokenHash("bob token"), link.Acceptance{UserID: bob.ID})
		if err != nil || m.Role != link.RoleRead {
			t.Fatalf("accept = %+v, %v", m, err)
		}
	})

	t.Run("revoked and expired invitations are gone", func(t *testing.T) {
		carol, err := invite("carol@example.com", link.RoleRead, "carol token")
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, invs.RevokeInvitation(ctx, ws.ID, "inv_zzz"), link.ENOTFOUND)
		other := mustWorkspace(t, s, "Other", admin.ID)
		wantCode(t, invs.RevokeInvitation(ctx, other.ID, carol.ID), link.ENOTFOUND)
		if err := invs.RevokeInvitation(ctx, ws.ID, carol.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, invs.RevokeInvitation(ctx, ws.ID, carol.ID), link.ENOTFOUND)
		_, _, err = invs.AcceptInvitation(ctx, tokenHash("carol token"), link.Acceptance{Name: "Carol", PasswordHash: []byte("h")})
		wantCode(t, err, link.EGONE)
		// A fresh invitation for the same e-mail may be made once revoked.
		if _, err := invite("carol@example.com", link.RoleRead, "carol again"); err != nil {
			t.Fatal(err)
		}
		s.Clock.Add(24 * time.Hour)
		_, _, err = invs.AcceptInvitation(ctx, tokenHash("carol again"), link.Acceptance{Name: "Carol", PasswordHash: []byte("h")})
		wantCode(t, err, link.EGONE)
		if _, err := s.Users.FindUserByEmail(ctx, "carol@example.com"); link.ErrorCode(err) != link.ENOTFOUND {
			t.Fatalf("a user was made from an expired invitation: %v", err)
		}
		if list, _ := invs.FindInvitations(ctx, ws.ID); len(list) != 0 {
			t.Fatalf("expired invitation still listed: %+v", list)
		}
		wantCode(t, invs.RevokeInvitation(ctx, ws.ID, carol.ID), link.ENOTFOUND)
	})

	t.Run("a member accepting again is a conflict", func(t *testing.T) {
		dave := mustUser(t, s, "dave@example.com", "")
		if _, err := invite("dave@example.com", link.RoleRead, "dave 1"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := invs.AcceptInvitation(ctx, tokenHash("dave 1"), link.Acceptance{UserID: dave.ID}); err != nil {
			t.Fatal(err)
		}
		_, err := invite("dave@example.com", link.RoleRead, "dave 2")
		wantCode(t, err, link.ECONFLICT)
	})

	t.Run("ended invitations are kept for a while, then deleted", func(t *testing.T) {
		old, err := invite("old@example.com", link.RoleRead, "old token")
		if err != nil {
			t.Fatal(err)
		}
		if err := invs.RevokeInvitation(ctx, ws.ID, old.ID); err != nil {
			t.Fatal(err)
		}
		s.Clock.Add(storage.InvitationKeep)
		if _, err := invite("kept@example.com", link.RoleRead, "kept token"); err != nil {
			t.Fatal(err)
		}
		_, _, err = invs.AcceptInvitation(ctx, tokenHash("old token"), link.Acceptance{Name: "Old", PasswordHash: []byte("h")})
		wantCode(t, err, link.EGONE) // kept exactly InvitationKeep: still says why
		s.Clock.Add(time.Second)
		if _, err := invite("next@example.com", link.RoleRead, "next token"); err != nil {
			t.Fatal(err)
		}
		_, _, err = invs.AcceptInvitation(ctx, tokenHash("old token"), link.Acceptance{Name: "Old", PasswordHash: []byte("h")})
		wantCode(t, err, link.ENOTFOUND)
		// The pending ones are untouched.
		if _, _, err := invs.AcceptInvitation(ctx, tokenHash("next token"), link.Acceptance{Name: "Next", PasswordHash: []byte("h")}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("pending invitations are bounded", func(t *testing.T) {
		other := mustWorkspace(t, s, "Many", admin.ID)
		for i := range storage.MaxPendingInvitations {
			inv := &link.Invitation{WorkspaceID: other.ID, Email: fmt.Sprintf("p%d@example.com", i), Role: link.RoleRead,
				TokenHash: tokenHash(fmt.Sprint("many", i)), InvitedBy: admin.ID, ExpiresAt: s.Clock.Now().Add(time.Hour)}
			if err := invs.CreateInvitation(ctx, inv); err != nil {
				t.Fatal(err)
			}
		}
		inv := &link.Invitation{WorkspaceID: other.ID, Email: "last@example.com", Role: link.RoleRead,
			TokenHash: tokenHash("many last"), InvitedBy: admin.ID, ExpiresAt: s.Clock.Now().Add(time.Hour)}
		wantCode(t, invs.CreateInvitation(ctx, inv), link.ECONFLICT)
	})
}
