package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var memberTests = []test{
	{"ListAndRoles", testMemberRoles},
	{"LastOwner", testLastOwner},
	{"Removal", testMemberRemoval},
	{"RemovalEndsWhatTheyMade", testRemovalEndsWhatTheyMade},
}

func testMemberRoles(t *testing.T, e *env) {
	admin, ws := e.setup()
	bob := e.user("bob@example.com", "Bob")
	e.clock.Add(time.Minute)
	e.join(ws, admin, bob, link.RoleRead)

	ms, err := e.Members.FindMembers(e.ctx, ws.ID)
	if err != nil || len(ms) != 2 {
		t.Fatalf("FindMembers = %+v, %v", ms, err)
	}
	if ms[0].UserID != admin.ID || ms[0].Role != link.RoleOwner || ms[1].UserID != bob.ID || ms[1].Email != "bob@example.com" ||
		ms[1].Name != "Bob" || ms[1].Role != link.RoleRead || !ms[1].JoinedAt.Equal(e.now()) {
		t.Fatalf("members = %+v, %+v; want the admin (owner), then bob (read)", ms[0], ms[1])
	}
	_, err = e.Members.FindMembers(e.ctx, "ws_unknown")
	wantCode(t, err, link.ENOTFOUND)

	m, err := e.Members.UpdateMemberRole(e.ctx, ws.ID, bob.ID, link.RoleReadWrite)
	if err != nil || m.Role != link.RoleReadWrite || m.UserID != bob.ID {
		t.Fatalf("UpdateMemberRole = %+v, %v", m, err)
	}
	// Both ways of reading a membership see the change.
	if got, err := e.Workspaces.FindMembership(e.ctx, ws.ID, bob.ID); err != nil || got.Role != link.RoleReadWrite {
		t.Fatalf("FindMembership = %+v, %v", got, err)
	}
	if got, err := e.Workspaces.FindMemberships(e.ctx, bob.ID); err != nil || len(got) != 1 || got[0].Role != link.RoleReadWrite {
		t.Fatalf("FindMemberships = %+v, %v", got, err)
	}
	_, err = e.Members.UpdateMemberRole(e.ctx, ws.ID, bob.ID, "god")
	wantCode(t, err, link.EINVALID)
	_, err = e.Members.UpdateMemberRole(e.ctx, ws.ID, "usr_unknown", link.RoleRead)
	wantCode(t, err, link.ENOTFOUND)
	carol := e.user("carol@example.com", "")
	_, err = e.Members.UpdateMemberRole(e.ctx, ws.ID, carol.ID, link.RoleRead)
	wantCode(t, err, link.ENOTFOUND)
	if es := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditMemberRoleChanged}); len(es) != 1 || es[0].Target.ID != bob.ID {
		t.Fatalf("member.role_changed entries = %+v; want one, of bob", es)
	}

	e.restart()
	if got, err := e.Workspaces.FindMembership(e.ctx, ws.ID, bob.ID); err != nil || got.Role != link.RoleReadWrite {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
}

func testLastOwner(t *testing.T, e *env) {
	admin, ws := e.setup()
	bob := e.user("bob@example.com", "Bob")
	e.join(ws, admin, bob, link.RoleRead)

	_, err := e.Members.UpdateMemberRole(e.ctx, ws.ID, admin.ID, link.RoleReadWrite)
	wantCode(t, err, link.ECONFLICT)
	wantCode(t, e.Members.RemoveMember(e.ctx, ws.ID, admin.ID), link.ECONFLICT)
	if m, err := e.Workspaces.FindMembership(e.ctx, ws.ID, admin.ID); err != nil || m.Role != link.RoleOwner {
		t.Fatalf("the last owner's membership = %+v, %v", m, err)
	}
	// With a second owner, either may step down.
	if _, err := e.Members.UpdateMemberRole(e.ctx, ws.ID, bob.ID, link.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Members.UpdateMemberRole(e.ctx, ws.ID, admin.ID, link.RoleRead); err != nil {
		t.Fatal(err)
	}
	// Now bob is the last owner.
	_, err = e.Members.UpdateMemberRole(e.ctx, ws.ID, bob.ID, link.RoleRead)
	wantCode(t, err, link.ECONFLICT)
	wantCode(t, e.Members.RemoveMember(e.ctx, ws.ID, bob.ID), link.ECONFLICT)
	if err := e.Members.RemoveMember(e.ctx, ws.ID, admin.ID); err != nil {
		t.Fatalf("removing a reader beside an owner: %v", err)
	}
}

func testMemberRemoval(t *testing.T, e *env) {
	admin, ws := e.setup()
	bob := e.user("bob@example.com", "Bob")
	carol := e.user("carol@example.com", "Carol")
	e.join(ws, admin, bob, link.RoleReadWrite)
	e.join(ws, admin, carol, link.RoleRead)

	e.clock.Add(time.Hour)
	if err := e.Members.RemoveMember(e.as(admin, ""), ws.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	removedAt := e.now()
	_, err := e.Workspaces.FindMembership(e.ctx, ws.ID, bob.ID)
	wantCode(t, err, link.ENOTFOUND)
	if ms, err := e.Workspaces.FindMemberships(e.ctx, bob.ID); err != nil || len(ms) != 0 {
		t.Fatalf("bob's memberships after removal = %+v, %v", ms, err)
	}
	if at, err := e.Members.FindRemoval(e.ctx, ws.ID, bob.ID); err != nil || !at.Equal(removedAt) {
		t.Fatalf("FindRemoval = %v, %v; want %v", at, err, removedAt)
	}
	wantCode(t, e.Members.RemoveMember(e.ctx, ws.ID, bob.ID), link.ENOTFOUND)
	// A member and a stranger are no former members.
	_, err = e.Members.FindRemoval(e.ctx, ws.ID, admin.ID)
	wantCode(t, err, link.ENOTFOUND)
	stranger := e.user("dave@example.com", "")
	_, err = e.Members.FindRemoval(e.ctx, ws.ID, stranger.ID)
	wantCode(t, err, link.ENOTFOUND)

	// Carol leaves on her own: member.left, not member.removed.
	if err := e.Members.RemoveMember(e.as(carol, ""), ws.ID, carol.ID); err != nil {
		t.Fatal(err)
	}
	if got := actions(e.audit(link.AuditFilter{WorkspaceID: ws.ID, Target: bob.ID})); !slices.Contains(got, link.AuditMemberRemoved) {
		t.Fatalf("bob's entries %v lack member.removed", got)
	}
	if got := actions(e.audit(link.AuditFilter{WorkspaceID: ws.ID, Target: carol.ID})); !slices.Contains(got, link.AuditMemberLeft) || slices.Contains(got, link.AuditMemberRemoved) {
		t.Fatalf("carol's entries %v: want member.left and no member.removed", got)
	}

	// Invited again, bob is a member and no longer a former one.
	e.join(ws, admin, bob, link.RoleRead)
	_, err = e.Members.FindRemoval(e.ctx, ws.ID, bob.ID)
	wantCode(t, err, link.ENOTFOUND)
	if ms, err := e.Members.FindMembers(e.ctx, ws.ID); err != nil || len(ms) != 2 {
		t.Fatalf("members = %+v, %v; want the admin and bob", ms, err)
	}
}

func testRemovalEndsWhatTheyMade(t *testing.T, e *env) {
	admin, ws := e.setup()
	bob := e.user("bob@example.com", "Bob")
	e.join(ws, admin, bob, link.RoleReadWrite)
	byBob := link.KeyCreator{Type: link.CreatorUser, ID: bob.ID}

	mk := func(token string, by link.KeyCreator) *link.APIKey {
		k := newKey(ws.ID, token)
		k.CreatedBy = by
		if err := e.Keys.CreateKey(e.ctx, k, 0); err != nil {
			t.Fatal(err)
		}
		return k
	}
	direct := mk("lb_live_bob_direct", byBob)
	indirect := mk("lb_live_bob_indirect", link.KeyCreator{Type: link.CreatorKey, ID: direct.ID})
	kept := mk("lb_live_bob_kept", byBob)
	if _, err := e.Keys.SetKeepWhenCreatorDisabled(e.ctx, ws.ID, kept.ID, true); err != nil {
		t.Fatal(err)
	}
	admins := mk("lb_live_admin", link.KeyCreator{Type: link.CreatorUser, ID: admin.ID})
	hook := &link.Webhook{WorkspaceID: ws.ID, URL: "https://hooks.example.com/bob", Events: []string{link.EventLinkCreated},
		Enabled: true, Secret: "whsec_bob", CreatedBy: byBob}
	if err := e.Webhooks.CreateWebhook(e.ctx, hook); err != nil {
		t.Fatal(err)
	}
	adminHook := e.webhook(ws.ID, link.EventLinkCreated)

	if err := e.Members.RemoveMember(e.ctx, ws.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		k    *link.APIKey
		want link.KeyState
	}{{direct, link.KeyRevoked}, {indirect, link.KeyRevoked}, {kept, link.KeyActive}, {admins, link.KeyActive}} {
		got, err := e.Keys.FindKeyByID(e.ctx, ws.ID, tt.k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s := got.State(e.now()); s != tt.want {
			t.Errorf("key %q is %s after bob's removal, want %s", tt.k.Name, s, tt.want)
		}
	}
	got, err := e.Webhooks.FindWebhookByID(e.ctx, ws.ID, hook.ID)
	if err != nil || got.Enabled || got.DisabledReason != link.WebhookCreatorRemoved {
		t.Fatalf("bob's webhook = %+v, %v; want disabled for its creator's removal", got, err)
	}
	if got, err := e.Webhooks.FindWebhookByID(e.ctx, ws.ID, adminHook.ID); err != nil || !got.Enabled {
		t.Fatalf("the admin's webhook = %+v, %v; want it enabled", got, err)
	}
}
