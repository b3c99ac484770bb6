package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var accountTests = []test{
	{"BootstrapOnce", testBootstrapOnce},
	{"UsersByIDAndEmail", testUsersByIDAndEmail},
	{"Workspaces", testWorkspaces},
	{"WorkspaceOwnerCap", testWorkspaceOwnerCap},
	{"UpdateUser", testUpdateUser},
	{"RevokedTokens", testRevokedTokens},
	{"UpdateUserRecordsEachChange", testUpdateUserAudit},
}

func testBootstrapOnce(t *testing.T, e *env) {
	if n, err := e.Users.CountUsers(e.ctx); err != nil || n != 0 {
		t.Fatalf("CountUsers of a new store = %d, %v; want 0", n, err)
	}
	admin, ws := e.setup()
	if admin.ID == "" || !admin.Admin || ws.ID == "" {
		t.Fatalf("bootstrap set user %+v, workspace %+v", admin, ws)
	}
	if n, err := e.Users.CountUsers(e.ctx); err != nil || n != 1 {
		t.Fatalf("CountUsers = %d, %v; want 1", n, err)
	}
	m, err := e.Workspaces.FindMembership(e.ctx, ws.ID, admin.ID)
	if err != nil || m.Role != link.RoleOwner || m.Workspace.ID != ws.ID || m.Workspace.Name != "Default" {
		t.Fatalf("admin's membership = %+v, %v", m, err)
	}
	again := &link.User{Email: "second@example.com", PasswordHash: []byte("hash")}
	wantCode(t, e.Users.Bootstrap(e.ctx, again, &link.Workspace{Name: "Second", Plan: link.PlanFree}), link.ECONFLICT)
	if _, err := e.Users.FindUserByEmail(e.ctx, "second@example.com"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a refused bootstrap stored its user: %v", err)
	}
	if n, _ := e.Users.CountUsers(e.ctx); n != 1 {
		t.Fatalf("CountUsers after a refused bootstrap = %d, want 1", n)
	}
}

func testUsersByIDAndEmail(t *testing.T, e *env) {
	admin, _ := e.setup()
	e.clock.Add(time.Minute)
	bob := e.user("bob@example.com", "Bob")
	if bob.ID == "" || bob.ID == admin.ID || bob.Admin || !bob.CreatedAt.Equal(e.now()) {
		t.Fatalf("created user = %+v", bob)
	}
	for _, email := range []string{"bob@example.com", "BOB@Example.COM"} {
		got, err := e.Users.FindUserByEmail(e.ctx, email)
		if err != nil || got.ID != bob.ID || got.Name != "Bob" {
			t.Fatalf("FindUserByEmail(%q) = %+v, %v", email, got, err)
		}
	}
	got, err := e.Users.FindUserByID(e.ctx, bob.ID)
	if err != nil || got.Email != "bob@example.com" || got.Name != "Bob" || got.Admin || string(got.PasswordHash) != "hash" {
		t.Fatalf("FindUserByID = %+v, %v", got, err)
	}
	_, err = e.Users.FindUserByEmail(e.ctx, "carol@example.com")
	wantCode(t, err, link.ENOTFOUND)
	for _, id := range []string{"usr_unknown", "", "nope"} {
		_, err = e.Users.FindUserByID(e.ctx, id)
		wantCode(t, err, link.ENOTFOUND)
	}

	// The e-mail is unique in its normal form.
	wantCode(t, e.Users.CreateUser(e.ctx, &link.User{Email: "Bob@EXAMPLE.com", PasswordHash: []byte("h")}), link.ECONFLICT)
	wantCode(t, e.Accounts.CreateUser(e.ctx, &link.User{Email: "bob@example.com", PasswordHash: []byte("h")}), link.ECONFLICT)
	wantCode(t, e.Users.CreateUser(e.ctx, &link.User{Email: "not an address", PasswordHash: []byte("h")}), link.EINVALID)
	wantCode(t, e.Accounts.CreateUser(e.ctx, &link.User{Email: "long@example.com", Name: strings.Repeat("n", link.MaxUserNameLength+1)}), link.EINVALID)

	// A user without a password signs in with single sign-on only.
	sso := &link.User{Email: "sso@example.com"}
	if err := e.Accounts.CreateUser(e.ctx, sso); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Users.FindUserByID(e.ctx, sso.ID); err != nil || len(got.PasswordHash) != 0 {
		t.Fatalf("user without a password = %+v, %v", got, err)
	}

	if n, err := e.Users.CountUsers(e.ctx); err != nil || n != 3 {
		t.Fatalf("CountUsers = %d, %v; want 3", n, err)
	}
	list, err := e.Accounts.ListUsers(e.ctx)
	if err != nil || len(list) != 3 || list[0].ID != admin.ID || list[1].ID != bob.ID || list[2].ID != sso.ID {
		t.Fatalf("ListUsers = %v, %v; want admin, bob, sso (oldest first)", userIDs(list), err)
	}

	e.restart()
	if got, err := e.Users.FindUserByEmail(e.ctx, "Bob@example.com"); err != nil || got.ID != bob.ID {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
}

func userIDs(us []*link.User) []string {
	var ids []string
	for _, u := range us {
		ids = append(ids, u.ID)
	}
	return ids
}

func testWorkspaces(t *testing.T, e *env) {
	admin, first := e.setup()
	bob := e.user("bob@example.com", "Bob")
	e.clock.Add(time.Minute)
	second := e.workspace("Second", admin)
	if second.ID == "" || second.ID == first.ID || !second.CreatedAt.Equal(e.now()) {
		t.Fatalf("created workspace = %+v", second)
	}
	got, err := e.Workspaces.FindWorkspaceByID(e.ctx, second.ID)
	if err != nil || got.Name != "Second" || got.Plan != link.PlanFree {
		t.Fatalf("FindWorkspaceByID = %+v, %v", got, err)
	}
	_, err = e.Workspaces.FindWorkspaceByID(e.ctx, "ws_unknown")
	wantCode(t, err, link.ENOTFOUND)

	ms, err := e.Workspaces.FindMemberships(e.ctx, admin.ID)
	if err != nil || len(ms) != 2 || ms[0].Workspace.ID != first.ID || ms[1].Workspace.ID != second.ID ||
		ms[0].Role != link.RoleOwner || ms[1].Role != link.RoleOwner {
		t.Fatalf("FindMemberships = %+v, %v; want both workspaces as owner, oldest first", ms, err)
	}
	if ms, err := e.Workspaces.FindMemberships(e.ctx, bob.ID); err != nil || len(ms) != 0 {
		t.Fatalf("a user of no workspace has memberships %+v, %v", ms, err)
	}
	_, err = e.Workspaces.FindMembership(e.ctx, second.ID, bob.ID)
	wantCode(t, err, link.ENOTFOUND)

	e.clock.Add(time.Minute)
	upd, err := e.Workspaces.UpdateWorkspace(e.ctx, second.ID, link.WorkspaceUpdate{Name: ptr("Renamed"), Plan: ptr(link.PlanPro)})
	if err != nil || upd.Name != "Renamed" || upd.Plan != link.PlanPro || !upd.UpdatedAt.Equal(e.now()) {
		t.Fatalf("UpdateWorkspace = %+v, %v", upd, err)
	}
	upd, err = e.Workspaces.UpdateWorkspace(e.ctx, second.ID, link.WorkspaceUpdate{Plan: ptr(link.PlanEnterprise)})
	if err != nil || upd.Name != "Renamed" || upd.Plan != link.PlanEnterprise {
		t.Fatalf("an update of the plan alone = %+v, %v", upd, err)
	}
	_, err = e.Workspaces.UpdateWorkspace(e.ctx, second.ID, link.WorkspaceUpdate{Name: ptr(" ")})
	wantCode(t, err, link.EINVALID)
	_, err = e.Workspaces.UpdateWorkspace(e.ctx, second.ID, link.WorkspaceUpdate{Plan: ptr(link.Plan("gold"))})
	wantCode(t, err, link.EINVALID)
	_, err = e.Workspaces.UpdateWorkspace(e.ctx, "ws_unknown", link.WorkspaceUpdate{Name: ptr("X")})
	wantCode(t, err, link.ENOTFOUND)

	e.restart()
	got, err = e.Workspaces.FindWorkspaceByID(e.ctx, second.ID)
	if err != nil || got.Name != "Renamed" || got.Plan != link.PlanEnterprise {
		t.Fatalf("after refused updates and a restart: %+v, %v", got, err)
	}
}

func testWorkspaceOwnerCap(t *testing.T, e *env) {
	admin, _ := e.setup()
	bob := e.user("bob@example.com", "")
	// The admin owns one workspace: a cap of 2 lets one more in.
	if err := e.Workspaces.CreateWorkspace(e.ctx, &link.Workspace{Name: "Two", Plan: link.PlanFree}, admin.ID, 2); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Workspaces.CreateWorkspace(e.ctx, &link.Workspace{Name: "Three", Plan: link.PlanFree}, admin.ID, 2), link.ECONFLICT)
	// The cap counts the owner's workspaces only; 0 is no cap.
	if err := e.Workspaces.CreateWorkspace(e.ctx, &link.Workspace{Name: "Bob's", Plan: link.PlanFree}, bob.ID, 2); err != nil {
		t.Fatal(err)
	}
	if err := e.Workspaces.CreateWorkspace(e.ctx, &link.Workspace{Name: "Three", Plan: link.PlanFree}, admin.ID, 0); err != nil {
		t.Fatal(err)
	}
	if ms, _ := e.Workspaces.FindMemberships(e.ctx, admin.ID); len(ms) != 3 {
		t.Fatalf("admin owns %d workspaces, want 3", len(ms))
	}
}

func testUpdateUser(t *testing.T, e *env) {
	e.setup()
	bob := e.user("bob@example.com", "Bob")
	gen := func(id string) (uint64, bool) {
		t.Helper()
		ss, _, err := e.Accounts.LoadSessions(e.ctx, e.now())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			if s.UserID == id {
				return s.TokenGeneration, s.Disabled
			}
		}
		// A user with no session state (generation 0, enabled) may be
		// left out.
		return 0, false
	}
	g0, disabled := gen(bob.ID)
	if disabled {
		t.Fatal("a new user is disabled")
	}

	u, err := e.Accounts.UpdateUser(e.ctx, bob.ID, link.UserUpdate{Name: ptr("Robert")})
	if err != nil || u.Name != "Robert" || u.Email != "bob@example.com" {
		t.Fatalf("rename = %+v, %v", u, err)
	}
	if g, _ := gen(bob.ID); g != g0 {
		t.Fatalf("a rename moved the token generation from %d to %d", g0, g)
	}
	u, err = e.Accounts.UpdateUser(e.ctx, bob.ID, link.UserUpdate{PasswordHash: []byte("new hash"), EndTokens: true})
	if err != nil || string(u.PasswordHash) != "new hash" || u.TokenGeneration <= g0 {
		t.Fatalf("password change = %+v, %v", u, err)
	}
	g1, _ := gen(bob.ID)
	if g1 <= g0 {
		t.Fatalf("token generation after EndTokens = %d, want above %d", g1, g0)
	}
	u, err = e.Accounts.UpdateUser(e.ctx, bob.ID, link.UserUpdate{Disabled: ptr(true)})
	if err != nil || !u.Disabled {
		t.Fatalf("disable = %+v, %v", u, err)
	}
	if _, disabled := gen(bob.ID); !disabled {
		t.Fatal("LoadSessions does not say the user is disabled")
	}
	_, err = e.Accounts.UpdateUser(e.ctx, bob.ID, link.UserUpdate{Name: ptr(strings.Repeat("n", link.MaxUserNameLength+1))})
	wantCode(t, err, link.EINVALID)
	_, err = e.Accounts.UpdateUser(e.ctx, "usr_unknown", link.UserUpdate{Name: ptr("X")})
	wantCode(t, err, link.ENOTFOUND)

	e.restart()
	got, err := e.Users.FindUserByID(e.ctx, bob.ID)
	if err != nil || got.Name != "Robert" || !got.Disabled || got.TokenGeneration != g1 || string(got.PasswordHash) != "new hash" {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
	if g, disabled := gen(bob.ID); g != g1 || !disabled {
		t.Fatalf("sessions after a restart: generation %d, disabled %v", g, disabled)
	}
}

func testRevokedTokens(t *testing.T, e *env) {
	admin, _ := e.setup()
	ctx := e.as(admin, "192.0.2.1")
	soon := link.RevokedToken{ID: "jti-soon", ExpiresAt: e.now().Add(time.Hour)}
	late := link.RevokedToken{ID: "jti-late", ExpiresAt: e.now().Add(3 * time.Hour)}
	for _, tok := range []link.RevokedToken{soon, late} {
		if err := e.Accounts.RevokeToken(ctx, tok, e.now()); err != nil {
			t.Fatal(err)
		}
	}
	revoked := func(at time.Time) []string {
		t.Helper()
		_, rs, err := e.Accounts.LoadSessions(e.ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		slices.Sort(ids)
		return ids
	}
	if got := revoked(e.now()); !slices.Equal(got, []string{"jti-late", "jti-soon"}) {
		t.Fatalf("revoked tokens = %v", got)
	}
	if got := revoked(e.now().Add(2 * time.Hour)); !slices.Equal(got, []string{"jti-late"}) {
		t.Fatalf("revoked tokens not yet expired in 2 h = %v, want jti-late", got)
	}
	if es := e.audit(link.AuditFilter{AllWorkspaces: true, Action: link.AuditLogout}); len(es) != 2 || es[0].Actor.ID != admin.ID {
		t.Fatalf("auth.logout entries = %+v", es)
	}
	e.restart()
	if got := revoked(e.now()); !slices.Equal(got, []string{"jti-late", "jti-soon"}) {
		t.Fatalf("revoked tokens after a restart = %v", got)
	}
}

func testUpdateUserAudit(t *testing.T, e *env) {
	admin, _ := e.setup()
	bob := e.user("bob@example.com", "Bob")
	ctx := e.as(admin, "")
	steps := []struct {
		upd  link.UserUpdate
		want []string
	}{
		{link.UserUpdate{Name: ptr("Robert")}, []string{link.AuditUserRenamed}},
		{link.UserUpdate{PasswordHash: []byte("new"), EndTokens: true}, []string{link.AuditPasswordChanged}},
		{link.UserUpdate{EndTokens: true}, []string{link.AuditLogoutAll}},
		{link.UserUpdate{Disabled: ptr(true)}, []string{link.AuditUserDisabled}},
		{link.UserUpdate{Disabled: ptr(false)}, []string{link.AuditUserEnabled}},
	}
	for _, st := range steps {
		before := len(e.audit(link.AuditFilter{AllWorkspaces: true, Target: bob.ID}))
		if _, err := e.Accounts.UpdateUser(ctx, bob.ID, st.upd); err != nil {
			t.Fatal(err)
		}
		es := e.audit(link.AuditFilter{AllWorkspaces: true, Target: bob.ID})
		if got := actions(es[:len(es)-before]); !slices.Equal(got, st.want) {
			t.Errorf("UpdateUser(%+v) recorded %v, want %v", st.upd, got, st.want)
		}
	}
}
