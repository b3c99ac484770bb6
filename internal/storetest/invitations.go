package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var invitationTests = []test{
	{"CreateAndList", testInvitationCreate},
	{"NewPersonAcceptsOnce", testInvitationNewPerson},
	{"SignedInUserAcceptsOwnOnly", testInvitationSignedIn},
	{"RevokedAndExpired", testInvitationEnded},
	{"MakerNoLongerOwner", testInvitationMaker},
}

// invite creates an invitation of ws for email with role by owner,
// validated as the server does, with a token hash made of tok.
func (e *env) invite(ws *link.Workspace, owner *link.User, email string, role link.Role, tok string) (*link.Invitation, error) {
	inv := &link.Invitation{WorkspaceID: ws.ID, Email: email, Role: role, TokenHash: hash(tok), InvitedBy: owner.ID,
		ExpiresAt: e.now().Add(24 * time.Hour)}
	return inv, e.Invitations.CreateInvitation(e.ctx, inv)
}

func testInvitationCreate(t *testing.T, e *env) {
	admin, ws := e.setup()
	_, err := e.invite(ws, admin, "not an address", link.RoleRead, "t1")
	wantCode(t, err, link.EINVALID)
	_, err = e.invite(ws, admin, "x@example.com", "god", "t1")
	wantCode(t, err, link.EINVALID)
	// The admin is a member already.
	_, err = e.invite(ws, admin, "Admin@Example.com", link.RoleRead, "t1")
	wantCode(t, err, link.ECONFLICT)

	inv, err := e.invite(ws, admin, " New@Example.com ", link.RoleReadWrite, "new")
	if err != nil {
		t.Fatal(err)
	}
	if inv.ID == "" || inv.Email != "new@example.com" || !inv.CreatedAt.Equal(e.now()) {
		t.Fatalf("created invitation = %+v", inv)
	}
	// One pending invitation per e-mail, in any case.
	_, err = e.invite(ws, admin, "NEW@example.com", link.RoleRead, "another")
	wantCode(t, err, link.ECONFLICT)

	e.clock.Add(time.Minute)
	second, err := e.invite(ws, admin, "second@example.com", link.RoleRead, "second")
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.Invitations.FindInvitations(e.ctx, ws.ID)
	if err != nil || len(list) != 2 || list[0].ID != inv.ID || list[1].ID != second.ID {
		t.Fatalf("FindInvitations = %+v, %v; want both, oldest first", list, err)
	}
	if got := list[0]; got.InvitedBy != admin.ID || got.Role != link.RoleReadWrite || got.WorkspaceID != ws.ID {
		t.Fatalf("listed invitation = %+v", got)
	}
	got, err := e.Invitations.FindInvitationByToken(e.ctx, hash("new"))
	if err != nil || got.ID != inv.ID || got.Email != "new@example.com" {
		t.Fatalf("FindInvitationByToken = %+v, %v", got, err)
	}
	_, err = e.Invitations.FindInvitationByToken(e.ctx, hash("wrong"))
	wantCode(t, err, link.ENOTFOUND)
	if es := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditMemberInvited}); len(es) != 2 {
		t.Fatalf("%d member.invited entries, want 2", len(es))
	}

	e.restart()
	if list, err := e.Invitations.FindInvitations(e.ctx, ws.ID); err != nil || len(list) != 2 {
		t.Fatalf("after a restart: %+v, %v", list, err)
	}
}

func testInvitationNewPerson(t *testing.T, e *env) {
	admin, ws := e.setup()
	if _, err := e.invite(ws, admin, "nina@example.com", link.RoleReadWrite, "nina"); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.Invitations.AcceptInvitation(e.ctx, hash("wrong"), link.Acceptance{Name: "Nina", PasswordHash: []byte("h")})
	wantCode(t, err, link.ENOTFOUND)
	u, m, err := e.Invitations.AcceptInvitation(e.ctx, hash("nina"), link.Acceptance{Name: "Nina", PasswordHash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID == "" || u.Email != "nina@example.com" || u.Name != "Nina" || u.Admin || m.Role != link.RoleReadWrite || m.Workspace.ID != ws.ID {
		t.Fatalf("accepted: user %+v, membership %+v", u, m)
	}
	if found, err := e.Users.FindUserByEmail(e.ctx, "nina@example.com"); err != nil || found.ID != u.ID {
		t.Fatalf("the new user = %+v, %v", found, err)
	}
	if got, err := e.Workspaces.FindMembership(e.ctx, ws.ID, u.ID); err != nil || got.Role != link.RoleReadWrite {
		t.Fatalf("the new membership = %+v, %v", got, err)
	}
	// Once only.
	_, _, err = e.Invitations.AcceptInvitation(e.ctx, hash("nina"), link.Acceptance{Name: "Nina", PasswordHash: []byte("h")})
	wantCode(t, err, link.EGONE)
	_, _, err = e.Invitations.AcceptInvitation(e.ctx, hash("nina"), link.Acceptance{UserID: u.ID})
	wantCode(t, err, link.EGONE)
	_, err = e.Invitations.FindInvitationByToken(e.ctx, hash("nina"))
	wantCode(t, err, link.EGONE)
	if list, _ := e.Invitations.FindInvitations(e.ctx, ws.ID); len(list) != 0 {
		t.Fatalf("a used invitation is still listed: %+v", list)
	}
	got := actions(e.audit(link.AuditFilter{WorkspaceID: ws.ID, Actor: u.ID}))
	if !slices.Contains(got, link.AuditMemberJoined) {
		t.Fatalf("entries by the new member %v lack member.joined", got)
	}
	// A member invited again is a conflict.
	_, err = e.invite(ws, admin, "nina@example.com", link.RoleRead, "nina again")
	wantCode(t, err, link.ECONFLICT)
}

func testInvitationSignedIn(t *testing.T, e *env) {
	admin, ws := e.setup()
	bob := e.user("bob@example.com", "Bob")
	if _, err := e.invite(ws, admin, "bob@example.com", link.RoleRead, "bob"); err != nil {
		t.Fatal(err)
	}
	// Someone else signed in cannot take bob's invitation.
	carol := e.user("carol@example.com", "Carol")
	_, _, err := e.Invitations.AcceptInvitation(e.ctx, hash("bob"), link.Acceptance{UserID: carol.ID})
	wantCode(t, err, link.EFORBIDDEN)
	// A new person cannot take a registered e-mail.
	_, _, err = e.Invitations.AcceptInvitation(e.ctx, hash("bob"), link.Acceptance{Name: "Mallory", PasswordHash: []byte("h")})
	wantCode(t, err, link.ECONFLICT)
	if u, err := e.Users.FindUserByEmail(e.ctx, "bob@example.com"); err != nil || u.ID != bob.ID || u.Name != "Bob" {
		t.Fatalf("bob after refused acceptances = %+v, %v", u, err)
	}
	if _, err := e.Workspaces.FindMembership(e.ctx, ws.ID, carol.ID); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("carol became a member: %v", err)
	}
	u, m, err := e.Invitations.AcceptInvitation(e.ctx, hash("bob"), link.Acceptance{UserID: bob.ID})
	if err != nil || u.ID != bob.ID || m.Role != link.RoleRead || m.Workspace.ID != ws.ID {
		t.Fatalf("bob accepts: %+v, %+v, %v", u, m, err)
	}
}

func testInvitationEnded(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	carol, err := e.invite(ws, admin, "carol@example.com", link.RoleRead, "carol")
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Invitations.RevokeInvitation(e.ctx, other.ID, carol.ID), link.ENOTFOUND)
	wantCode(t, e.Invitations.RevokeInvitation(e.ctx, ws.ID, "inv_unknown"), link.ENOTFOUND)
	if err := e.Invitations.RevokeInvitation(e.ctx, ws.ID, carol.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Invitations.RevokeInvitation(e.ctx, ws.ID, carol.ID), link.ENOTFOUND)
	_, _, err = e.Invitations.AcceptInvitation(e.ctx, hash("carol"), link.Acceptance{Name: "Carol", PasswordHash: []byte("h")})
	wantCode(t, err, link.EGONE)
	_, err = e.Invitations.FindInvitationByToken(e.ctx, hash("carol"))
	wantCode(t, err, link.EGONE)
	if es := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditInvitationRevoked}); len(es) != 1 {
		t.Fatalf("%d invitation.revoked entries, want 1", len(es))
	}

	// Revoked, the e-mail may be invited again; that one expires.
	if _, err := e.invite(ws, admin, "carol@example.com", link.RoleRead, "carol again"); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(24*time.Hour - time.Second)
	if _, err := e.Invitations.FindInvitationByToken(e.ctx, hash("carol again")); err != nil {
		t.Fatalf("a second before its expiry: %v", err)
	}
	e.clock.Add(time.Second)
	_, _, err = e.Invitations.AcceptInvitation(e.ctx, hash("carol again"), link.Acceptance{Name: "Carol", PasswordHash: []byte("h")})
	wantCode(t, err, link.EGONE)
	if _, err := e.Users.FindUserByEmail(e.ctx, "carol@example.com"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("an expired invitation made a user: %v", err)
	}
	if list, _ := e.Invitations.FindInvitations(e.ctx, ws.ID); len(list) != 0 {
		t.Fatalf("an expired invitation is still listed: %+v", list)
	}
	// Expired, the e-mail may be invited again too.
	if _, err := e.invite(ws, admin, "carol@example.com", link.RoleRead, "carol third"); err != nil {
		t.Fatal(err)
	}
}

func testInvitationMaker(t *testing.T, e *env) {
	admin, ws := e.setup()
	bob := e.user("bob@example.com", "Bob")
	e.join(ws, admin, bob, link.RoleOwner)
	if _, err := e.invite(ws, bob, "carol@example.com", link.RoleOwner, "by bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.invite(ws, bob, "dave@example.com", link.RoleRead, "by bob, disabled"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Invitations.FindInvitationByToken(e.ctx, hash("by bob")); err != nil {
		t.Fatalf("an owner's invitation: %v", err)
	}
	// Demoted, bob lets nobody in through the invitations he made.
	if _, err := e.Members.UpdateMemberRole(e.ctx, ws.ID, bob.ID, link.RoleRead); err != nil {
		t.Fatal(err)
	}
	_, err := e.Invitations.FindInvitationByToken(e.ctx, hash("by bob"))
	wantCode(t, err, link.EGONE)
	_, _, err = e.Invitations.AcceptInvitation(e.ctx, hash("by bob"), link.Acceptance{Name: "Carol", PasswordHash: []byte("h")})
	wantCode(t, err, link.EGONE)
	// An owner again, but disabled: the same.
	if _, err := e.Members.UpdateMemberRole(e.ctx, ws.ID, bob.ID, link.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Invitations.FindInvitationByToken(e.ctx, hash("by bob, disabled")); err != nil {
		t.Fatalf("an owner's invitation once more: %v", err)
	}
	if _, err := e.Accounts.UpdateUser(e.ctx, bob.ID, link.UserUpdate{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	_, err = e.Invitations.FindInvitationByToken(e.ctx, hash("by bob, disabled"))
	wantCode(t, err, link.EGONE)
}
