package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var auditTests = []test{
	{"RecordAndFilter", testAuditFilters},
	{"Pages", testAuditPages},
	{"UserEntriesInTheirWorkspaces", testAuditUser},
	{"ChangesRecordTheirEntries", testAuditChanges},
	{"RefusedChangesRecordNothing", testAuditRefused},
	{"Prune", testAuditPrune},
}

func testAuditFilters(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	alice := link.Actor{Type: link.ActorUser, ID: "usr_alice", Name: "alice@example.com"}
	key := link.Actor{Type: link.ActorKey, ID: "key_ci", Name: "ci"}
	before := len(e.audit(link.AuditFilter{AllWorkspaces: true}))
	start := e.now().Add(time.Hour)
	e.clock.Set(start)
	record := func(actor link.Actor, wsIDs []string, action, target string) {
		t.Helper()
		ctx := link.WithActor(e.ctx, actor, "203.0.113.9")
		after := "x"
		if err := e.Audit.RecordAudit(ctx, wsIDs, action, link.AuditTarget{Type: "key", ID: target}, map[string]link.Change{"name": {After: &after}}); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(time.Minute)
	}
	record(alice, []string{ws.ID}, link.AuditKeyCreated, "key_1")
	record(key, []string{ws.ID}, link.AuditKeyRevoked, "key_1")
	record(alice, []string{other.ID}, link.AuditKeyCreated, "key_2")
	record(alice, nil, link.AuditLoginFailed, "")
	record(alice, []string{ws.ID, other.ID}, link.AuditLoginSucceeded, "")

	all := e.audit(link.AuditFilter{AllWorkspaces: true})
	if len(all) != before+5 {
		t.Fatalf("%d entries, want %d", len(all), before+5)
	}
	newest := all[0]
	if newest.Action != link.AuditLoginSucceeded || newest.Actor != alice || newest.Address != "203.0.113.9" ||
		!newest.Time.Equal(start.Add(4*time.Minute)) || len(newest.WorkspaceIDs) != 2 {
		t.Fatalf("newest entry = %+v", newest)
	}
	if c := all[1]; c.Action != link.AuditLoginFailed || len(c.WorkspaceIDs) != 0 {
		t.Fatalf("second newest entry = %+v", c)
	}
	first := all[4]
	if first.Target != (link.AuditTarget{Type: "key", ID: "key_1"}) || first.Changes["name"].After == nil || *first.Changes["name"].After != "x" || first.Changes["name"].Before != nil {
		t.Fatalf("oldest recorded entry = %+v", first)
	}
	for _, tt := range []struct {
		name string
		f    link.AuditFilter
		want []string
	}{
		{"a workspace", link.AuditFilter{WorkspaceID: ws.ID, Start: start}, []string{link.AuditLoginSucceeded, link.AuditKeyRevoked, link.AuditKeyCreated}},
		{"the other workspace", link.AuditFilter{WorkspaceID: other.ID, Start: start}, []string{link.AuditLoginSucceeded, link.AuditKeyCreated}},
		{"the instance", link.AuditFilter{Start: start}, []string{link.AuditLoginFailed}},
		{"an actor", link.AuditFilter{AllWorkspaces: true, Actor: key.ID}, []string{link.AuditKeyRevoked}},
		{"an action", link.AuditFilter{AllWorkspaces: true, Action: link.AuditKeyCreated, Start: start}, []string{link.AuditKeyCreated, link.AuditKeyCreated}},
		{"a target", link.AuditFilter{WorkspaceID: ws.ID, Target: "key_1"}, []string{link.AuditKeyRevoked, link.AuditKeyCreated}},
		{"a time range", link.AuditFilter{AllWorkspaces: true, Start: start.Add(time.Minute), End: start.Add(3 * time.Minute)}, []string{link.AuditKeyCreated, link.AuditKeyRevoked}},
		{"an actor in a workspace", link.AuditFilter{WorkspaceID: other.ID, Actor: alice.ID}, []string{link.AuditLoginSucceeded, link.AuditKeyCreated}},
	} {
		if got := actions(e.audit(tt.f)); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func testAuditPages(t *testing.T, e *env) {
	_, ws := e.setup()
	for range 7 {
		if err := e.Audit.RecordAudit(e.ctx, []string{ws.ID}, link.AuditKeyCreated, link.AuditTarget{Type: "key", ID: "key_1"}, nil); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(time.Second)
	}
	f := link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyCreated, Limit: 3}
	var ids []string
	var sizes []int
	for range 10 {
		page, next, err := e.Audit.FindAuditEntries(e.ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page))
		for _, en := range page {
			ids = append(ids, en.ID)
		}
		if next == "" {
			break
		}
		f.Cursor = next
	}
	if !slices.Equal(sizes, []int{3, 3, 1}) && !slices.Equal(sizes, []int{3, 3, 1, 0}) {
		t.Fatalf("pages of %v entries, want 3, 3, 1", sizes)
	}
	all := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyCreated})
	var want []string
	for _, en := range all {
		want = append(want, en.ID)
	}
	if !slices.Equal(ids, want) || len(ids) != 7 {
		t.Fatalf("paged %v, want %v (each once, newest first)", ids, want)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Time.After(all[i-1].Time) {
			t.Fatalf("entry %d is newer than the one before", i)
		}
	}
	_, _, err := e.Audit.FindAuditEntries(e.ctx, link.AuditFilter{WorkspaceID: ws.ID, Cursor: "not a cursor!"})
	wantCode(t, err, link.EINVALIDREQUEST)
}

func testAuditUser(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	loner := e.user("loner@example.com", "")
	ctx := link.WithActor(e.ctx, link.Actor{Type: link.ActorUser, ID: admin.ID, Name: admin.Email}, "192.0.2.1")
	if err := e.Audit.RecordUserAudit(ctx, admin.ID, link.AuditLoginSucceeded, link.AuditTarget{Type: "user", ID: admin.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Audit.RecordUserAudit(ctx, loner.ID, link.AuditLoginSucceeded, link.AuditTarget{Type: "user", ID: loner.ID}, nil); err != nil {
		t.Fatal(err)
	}
	for _, wsID := range []string{ws.ID, other.ID} {
		es := e.audit(link.AuditFilter{WorkspaceID: wsID, Action: link.AuditLoginSucceeded})
		if len(es) != 1 || es[0].Target.ID != admin.ID {
			t.Fatalf("workspace %s: sign-ins %+v; want the admin's", wsID, es)
		}
	}
	es := e.audit(link.AuditFilter{Action: link.AuditLoginSucceeded})
	if len(es) != 1 || es[0].Target.ID != loner.ID || len(es[0].WorkspaceIDs) != 0 {
		t.Fatalf("instance sign-ins %+v; want the loner's", es)
	}
}

func testAuditChanges(t *testing.T, e *env) {
	admin, ws := e.setup()
	ctx := e.as(admin, "198.51.100.7")
	if _, err := e.Workspaces.UpdateWorkspace(ctx, ws.ID, link.WorkspaceUpdate{Name: ptr("Renamed"), Plan: ptr(link.PlanPro)}); err != nil {
		t.Fatal(err)
	}
	k := newKey(ws.ID, "lb_live_audit")
	if err := e.Keys.CreateKey(ctx, k, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.Keys.RevokeKey(ctx, ws.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	bob := e.user("bob@example.com", "Bob")
	if _, err := e.Accounts.UpdateUser(ctx, bob.ID, link.UserUpdate{Disabled: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	got := actions(e.audit(link.AuditFilter{WorkspaceID: ws.ID, Actor: admin.ID}))
	for _, want := range []string{link.AuditWorkspaceRenamed, link.AuditWorkspacePlan, link.AuditKeyCreated, link.AuditKeyRevoked} {
		if !slices.Contains(got, want) {
			t.Errorf("the admin's entries %v lack %s", got, want)
		}
	}
	es := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyRevoked})
	if len(es) != 1 || es[0].Actor.ID != admin.ID || es[0].Address != "198.51.100.7" || es[0].Target.ID != k.ID || !es[0].Time.Equal(e.now()) {
		t.Fatalf("key.revoked entries = %+v", es)
	}
	if es := e.audit(link.AuditFilter{AllWorkspaces: true, Target: bob.ID}); !slices.Contains(actions(es), link.AuditUserDisabled) || !slices.Contains(actions(es), link.AuditUserCreated) {
		t.Fatalf("bob's entries %v lack user.created or user.disabled", actions(es))
	}
	if got := actions(e.audit(link.AuditFilter{WorkspaceID: ws.ID})); !slices.Contains(got, link.AuditWorkspaceCreated) {
		t.Fatalf("the workspace's entries %v lack workspace.created", got)
	}
}

func testAuditRefused(t *testing.T, e *env) {
	admin, ws := e.setup()
	ctx := e.as(admin, "")
	k := newKey(ws.ID, "lb_live_one")
	if err := e.Keys.CreateKey(ctx, k, 0); err != nil {
		t.Fatal(err)
	}
	before := len(e.audit(link.AuditFilter{AllWorkspaces: true}))
	wantCode(t, e.Keys.CreateKey(ctx, newKey(ws.ID, "lb_live_two"), 1), link.ECONFLICT)
	wantCode(t, e.Keys.CreateKey(ctx, newKey(ws.ID, "lb_live_one"), 0), link.ECONFLICT)
	_, err := e.Workspaces.UpdateWorkspace(ctx, ws.ID, link.WorkspaceUpdate{Name: ptr("")})
	wantCode(t, err, link.EINVALID)
	wantCode(t, e.Keys.RevokeKey(ctx, ws.ID, "key_unknown"), link.ENOTFOUND)
	_, err = e.Members.UpdateMemberRole(ctx, ws.ID, admin.ID, link.RoleRead)
	wantCode(t, err, link.ECONFLICT)
	wantCode(t, e.Users.CreateUser(ctx, &link.User{Email: "Admin@example.com"}), link.ECONFLICT)
	if got := len(e.audit(link.AuditFilter{AllWorkspaces: true})); got != before {
		t.Fatalf("%d entries after refused changes, want %d", got, before)
	}
}

func testAuditPrune(t *testing.T, e *env) {
	_, ws := e.setup()
	setup := len(e.audit(link.AuditFilter{AllWorkspaces: true}))
	for _, d := range []int{10, 100, 300, 366, 400} {
		e.clock.Set(t0.AddDate(0, 0, d))
		if err := e.Audit.RecordAudit(e.ctx, []string{ws.ID}, link.AuditKeyCreated, link.AuditTarget{Type: "key", ID: "key_1"}, nil); err != nil {
			t.Fatal(err)
		}
		if err := e.Audit.RecordAudit(e.ctx, nil, link.AuditLoginFailed, link.AuditTarget{Type: "user"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := e.Audit.PruneAudit(e.ctx, t0); err != nil || n != 0 {
		t.Fatalf("PruneAudit before every entry = %d, %v; want 0", n, err)
	}
	cut := t0.AddDate(0, 0, 365)
	n, err := e.Audit.PruneAudit(e.ctx, cut)
	if err != nil || n != setup+6 {
		t.Fatalf("PruneAudit = %d, %v; want %d (the set-up's and days 10, 100, 300)", n, err, setup+6)
	}
	left := e.audit(link.AuditFilter{AllWorkspaces: true})
	if len(left) != 4 {
		t.Fatalf("%d entries left, want 4", len(left))
	}
	for _, en := range left {
		if en.Time.Before(cut) {
			t.Fatalf("an entry of %v is left", en.Time)
		}
	}
	if es := e.audit(link.AuditFilter{WorkspaceID: ws.ID}); len(es) != 2 {
		t.Fatalf("%d workspace entries left, want 2", len(es))
	}
	if es := e.audit(link.AuditFilter{}); len(es) != 2 {
		t.Fatalf("%d instance entries left, want 2", len(es))
	}
}
