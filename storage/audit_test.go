package storage_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// auditLog returns every entry f selects, newest first, paging with limit.
func auditLog(tb testing.TB, a *storage.AuditService, f link.AuditFilter) []*link.AuditEntry {
	tb.Helper()
	var out []*link.AuditEntry
	for {
		page, next, err := a.FindAuditEntries(context.Background(), f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, page...)
		if next == "" {
			return out
		}
		if f.Limit > 0 && len(page) != f.Limit {
			tb.Fatalf("a page of %d entries before the last, want %d", len(page), f.Limit)
		}
		f.Cursor = next
	}
}

func allAudit(tb testing.TB, a *storage.AuditService) []*link.AuditEntry {
	return auditLog(tb, a, link.AuditFilter{AllWorkspaces: true})
}

// actions returns the actions of entries, oldest first.
func actions(es []*link.AuditEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[len(es)-1-i] = e.Action
	}
	return out
}

func TestAudit_KeyLifeAndActors(t *testing.T) {
	s, u, ws := mustSetup(t)
	audit := storage.NewAuditService(s.DB)
	admin := link.Actor{Type: link.ActorUser, ID: u.ID, Name: u.Email}
	ctx := link.WithActor(context.Background(), admin, "203.0.113.9")

	t.Run("created", func(t *testing.T) {
		k := &link.APIKey{WorkspaceID: ws.ID, Name: "ci", Scope: link.ScopeRead, Hash: []byte("hash-1"), Start: "lb_live_ab"}
		if err := s.Keys.CreateKey(ctx, k, 0); err != nil {
			t.Fatal(err)
		}
		es := auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyCreated})
		if len(es) != 1 {
			t.Fatalf("%d key.created entries, want 1", len(es))
		}
		e := es[0]
		if e.Actor != admin || e.Address != "203.0.113.9" || e.Target != (link.AuditTarget{Type: "key", ID: k.ID}) ||
			!e.Time.Equal(t0) || len(e.WorkspaceIDs) != 1 || e.WorkspaceIDs[0] != ws.ID {
			t.Fatalf("entry = %+v", e)
		}
		if c := e.Changes["name"]; val(c.Before) != nil || val(c.After) != "ci" {
			t.Fatalf("name change = %+v", c)
		}
		if c := e.Changes["scope"]; val(c.Before) != nil || val(c.After) != "read" {
			t.Fatalf("scope change = %+v", c)
		}
	})

	t.Run("a change refused records nothing", func(t *testing.T) {
		before := len(allAudit(t, audit))
		err := s.Keys.CreateKey(ctx, &link.APIKey{WorkspaceID: ws.ID, Name: "two", Scope: link.ScopeRead, Hash: []byte("hash-2")}, 1)
		wantCode(t, err, link.ECONFLICT) // the cap
		err = s.Keys.CreateKey(ctx, &link.APIKey{WorkspaceID: ws.ID, Name: "dup", Scope: link.ScopeRead, Hash: []byte("hash-1")}, 0)
		wantCode(t, err, link.ECONFLICT) // the same token
		_, err = s.Workspaces.UpdateWorkspace(ctx, ws.ID, link.WorkspaceUpdate{Name: ptr("")})
		wantCode(t, err, link.EINVALID)
		wantCode(t, s.Keys.RevokeKey(ctx, ws.ID, "key_nothing"), link.ENOTFOUND)
		if got := len(allAudit(t, audit)); got != before {
			t.Fatalf("%d entries after refused changes, want %d", got, before)
		}
	})

	var rotated, next *link.APIKey
	t.Run("rotated, then the grace period ends", func(t *testing.T) {
		keys, err := s.Keys.FindKeys(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		rotated = keys[0]
		grace := t0.Add(24 * time.Hour)
		next, err = s.Keys.RotateKey(ctx, ws.ID, rotated.ID, &link.APIKey{Hash: []byte("hash-3"), Start: "lb_live_cd"}, grace, 0)
		if err != nil {
			t.Fatal(err)
		}
		e := auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Target: rotated.ID})[0]
		if e.Action != link.AuditKeyRotated || val(e.Changes["replaced_by"].After) != next.ID ||
			val(e.Changes["grace_ends_at"].After) != "2025-03-02T12:00:00Z" {
			t.Fatalf("rotation entry = %+v", e)
		}
		// Nothing is seen to end before the grace does.
		if n, err := s.Keys.RecordEndedKeys(context.Background(), s.Clock.Now()); err != nil || n != 0 {
			t.Fatalf("RecordEndedKeys before the end = %d, %v", n, err)
		}
		s.Clock.Add(30 * time.Hour)
		if n, err := s.Keys.RecordEndedKeys(context.Background(), s.Clock.Now()); err != nil || n != 1 {
			t.Fatalf("RecordEndedKeys = %d, %v; want 1", n, err)
		}
		es := auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyGraceEnded})
		if len(es) != 1 {
			t.Fatalf("%d key.grace_ended entries, want 1", len(es))
		}
		e = es[0]
		if e.Actor != link.SystemActor || e.Address != "" || e.Target.ID != rotated.ID || !e.Time.Equal(grace) ||
			val(e.Changes["state"].Before) != "grace" || val(e.Changes["state"].After) != "revoked" {
			t.Fatalf("grace entry = %+v", e)
		}
		// Seen once only.
		if n, err := s.Keys.RecordEndedKeys(context.Background(), s.Clock.Now()); err != nil || n != 0 {
			t.Fatalf("RecordEndedKeys again = %d, %v", n, err)
		}
	})

	t.Run("a grace end seen while counting keys", func(t *testing.T) {
		grace := s.Clock.Now().Add(time.Hour)
		if _, err := s.Keys.RotateKey(ctx, ws.ID, next.ID, &link.APIKey{Hash: []byte("hash-4")}, grace, 0); err != nil {
			t.Fatal(err)
		}
		s.Clock.Add(2 * time.Hour)
		if err := s.Keys.CreateKey(ctx, &link.APIKey{WorkspaceID: ws.ID, Name: "five", Scope: link.ScopeRead, Hash: []byte("hash-5")}, 10); err != nil {
			t.Fatal(err)
		}
		es := auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Target: next.ID})
		// The new key of a rotation has the old key's key.rotated entry,
		// not one of its own.
		if got := actions(es); strings.Join(got, " ") != "key.rotated key.grace_ended" {
			t.Fatalf("entries of the second key = %v", got)
		}
		if !es[0].Time.Equal(grace) {
			t.Fatalf("grace end recorded at %v, want %v", es[0].Time, grace)
		}
		if n, _ := s.Keys.RecordEndedKeys(context.Background(), s.Clock.Now()); n != 0 {
			t.Fatalf("the sweep recorded the end again: %d", n)
		}
	})

	t.Run("expired and revoked", func(t *testing.T) {
		exp := s.Clock.Now().Add(time.Hour)
		k := &link.APIKey{WorkspaceID: ws.ID, Name: "short", Scope: link.ScopeRead, Hash: []byte("hash-6"), ExpiresAt: &exp}
		if err := s.Keys.CreateKey(ctx, k, 0); err != nil {
			t.Fatal(err)
		}
		r := &link.APIKey{WorkspaceID: ws.ID, Name: "gone", Scope: link.ScopeRead, Hash: []byte("hash-7")}
		if err := s.Keys.CreateKey(ctx, r, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.Keys.RevokeKey(ctx, ws.ID, r.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.Keys.RevokeKey(ctx, ws.ID, r.ID); err != nil { // a no-op: no second entry
			t.Fatal(err)
		}
		s.Clock.Add(2 * time.Hour)
		if n, err := s.Keys.RecordEndedKeys(context.Background(), s.Clock.Now()); err != nil || n != 1 {
			t.Fatalf("RecordEndedKeys = %d, %v; want 1 (the revoked key ended when revoked)", n, err)
		}
		if got := actions(auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Target: k.ID})); strings.Join(got, " ") != "key.created key.expired" {
			t.Fatalf("entries of the expiring key = %v", got)
		}
		es := auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Target: r.ID})
		if got := actions(es); strings.Join(got, " ") != "key.created key.revoked" {
			t.Fatalf("entries of the revoked key = %v", got)
		}
		if es[0].Actor != admin || val(es[0].Changes["state"].Before) != "active" || val(es[0].Changes["state"].After) != "revoked" {
			t.Fatalf("revocation = %+v", es[0])
		}
	})
}

func TestAudit_FiltersAndCursor(t *testing.T) {
	s, u, ws := mustSetup(t)
	audit := storage.NewAuditService(s.DB)
	other := mustWorkspace(t, s, "Other", u.ID)
	alice := link.Actor{Type: link.ActorUser, ID: "usr_alice", Name: "alice@example.com"}
	bob := link.Actor{Type: link.ActorKey, ID: "key_bob", Name: "bob's key"}
	bg := context.Background()
	record := func(a link.Actor, wss []string, action, target string) {
		t.Helper()
		s.Clock.Add(time.Minute)
		ctx := link.WithActor(bg, a, "198.51.100.7")
		if err := audit.RecordAudit(ctx, wss, action, link.AuditTarget{Type: "key", ID: target}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// 12 entries in ws, alternating actors, actions and targets; 3 in the
	// other workspace, 2 instance-level, 1 in both workspaces.
	for i := range 12 {
		a, action, target := alice, link.AuditKeyCreated, "key_1"
		if i%2 == 1 {
			a, action = bob, link.AuditKeyRevoked
		}
		if i%3 == 0 {
			target = "key_2"
		}
		record(a, []string{ws.ID}, action, target)
	}
	for range 3 {
		record(alice, []string{other.ID}, link.AuditKeyCreated, "key_1")
	}
	record(alice, nil, link.AuditLoginFailed, "")
	record(bob, nil, link.AuditBackupDownloaded, "")
	record(alice, []string{ws.ID, other.ID}, link.AuditLoginSucceeded, "usr_alice")
	// The system, after the rest.
	s.Clock.Add(time.Minute)
	if err := audit.RecordAudit(bg, []string{ws.ID}, link.AuditWebhookDisabled, link.AuditTarget{Type: "webhook", ID: "wh_1"}, nil); err != nil {
		t.Fatal(err)
	}
	// The first workspace was made by Bootstrap, which records the
	// system's user.created and workspace.created; the other one has its
	// workspace.created.
	base := len(auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditWorkspaceCreated})) +
		len(auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditUserCreated}))
	if base != 2 {
		t.Fatalf("the set-up recorded %d entries, want 2", base)
	}

	count := func(f link.AuditFilter) int { return len(auditLog(t, audit, f)) }
	for _, tt := range []struct {
		name string
		f    link.AuditFilter
		want int
	}{
		{"workspace", link.AuditFilter{WorkspaceID: ws.ID}, 12 + 1 + 1 + base},
		{"workspace, pages of 5", link.AuditFilter{WorkspaceID: ws.ID, Limit: 5}, 12 + 1 + 1 + base},
		{"other workspace", link.AuditFilter{WorkspaceID: other.ID}, 3 + 1 + 1}, // + its workspace.created
		{"instance only", link.AuditFilter{}, 2},
		{"everything", link.AuditFilter{AllWorkspaces: true, Limit: 3}, count(link.AuditFilter{AllWorkspaces: true})},
		{"actor", link.AuditFilter{WorkspaceID: ws.ID, Actor: "key_bob"}, 6},
		{"actor system", link.AuditFilter{WorkspaceID: ws.ID, Actor: "system", Limit: 1}, 1 + base},
		{"action", link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditKeyRevoked, Limit: 4}, 6},
		{"target", link.AuditFilter{WorkspaceID: ws.ID, Target: "key_2", Limit: 2}, 4},
		{"actor and action", link.AuditFilter{WorkspaceID: ws.ID, Actor: "usr_alice", Action: link.AuditKeyCreated, Limit: 2}, 6},
		{"actor, action and target", link.AuditFilter{WorkspaceID: ws.ID, Actor: "usr_alice", Action: link.AuditKeyCreated, Target: "key_2"}, 2},
		{"range: minutes 3 to 5", link.AuditFilter{WorkspaceID: ws.ID, Start: t0.Add(3 * time.Minute), End: t0.Add(6 * time.Minute)}, 3},
		{"range and actor", link.AuditFilter{WorkspaceID: ws.ID, Actor: "usr_alice", Start: t0.Add(3 * time.Minute), End: t0.Add(6 * time.Minute)}, 2},
		{"all workspaces by actor", link.AuditFilter{AllWorkspaces: true, Actor: "usr_alice"}, 6 + 3 + 1 + 1},
		{"unknown workspace", link.AuditFilter{WorkspaceID: "ws_nothing"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			es := auditLog(t, audit, tt.f)
			if len(es) != tt.want {
				t.Fatalf("%d entries, want %d", len(es), tt.want)
			}
			seen := map[string]bool{}
			for i, e := range es {
				if seen[e.ID] {
					t.Fatalf("entry %s twice", e.ID)
				}
				seen[e.ID] = true
				if i > 0 && e.Time.After(es[i-1].Time) {
					t.Fatalf("entry %d (%v) newer than the one before (%v)", i, e.Time, es[i-1].Time)
				}
				if tt.f.Actor != "" && e.Actor.ID != tt.f.Actor && !(tt.f.Actor == "system" && e.Actor.Type == link.ActorSystem) {
					t.Fatalf("actor filter %q let %+v through", tt.f.Actor, e.Actor)
				}
			}
		})
	}

	t.Run("a sign-in belongs to each workspace of the user", func(t *testing.T) {
		for _, id := range []string{ws.ID, other.ID} {
			es := auditLog(t, audit, link.AuditFilter{WorkspaceID: id, Action: link.AuditLoginSucceeded})
			if len(es) != 1 || len(es[0].WorkspaceIDs) != 2 || es[0].Address != "198.51.100.7" {
				t.Fatalf("sign-ins in %s: %+v", id, es)
			}
		}
	})
	t.Run("a cursor that was not given out", func(t *testing.T) {
		for _, c := range []string{"nope!", "AAAA", strings.Repeat("A", 40)} {
			_, _, err := audit.FindAuditEntries(bg, link.AuditFilter{WorkspaceID: ws.ID, Cursor: c})
			wantCode(t, err, link.EINVALIDREQUEST)
		}
	})
}

func TestAudit_Prune(t *testing.T) {
	s, _, ws := mustSetup(t)
	audit := storage.NewAuditService(s.DB)
	ctx := link.WithActor(context.Background(), link.Actor{Type: link.ActorUser, ID: "usr_x", Name: "x@example.com"}, "192.0.2.4")
	days := []int{0, 100, 300, 364, 366, 400}
	for _, d := range days {
		s.Clock.Set(t0.AddDate(0, 0, d))
		if err := audit.RecordAudit(ctx, []string{ws.ID}, link.AuditKeyCreated, link.AuditTarget{Type: "key", ID: "key_1"}, nil); err != nil {
			t.Fatal(err)
		}
		if err := audit.RecordAudit(ctx, nil, link.AuditLoginFailed, link.AuditTarget{Type: "user"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := len(allAudit(t, audit))
	// Two years after the first entry, with a retention of a year: what is
	// older than day 365 goes.
	now := t0.AddDate(0, 0, 730)
	retention := 365 * 24 * time.Hour
	n, err := audit.PruneAudit(context.Background(), now.Add(-2*retention))
	if err != nil || n != 0 {
		t.Fatalf("pruning two years back = %d, %v; want nothing", n, err)
	}
	cut := now.Add(-retention)
	n, err = audit.PruneAudit(context.Background(), cut)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2*4+2 {
		t.Fatalf("pruned %d, want 10 (the entries of days 0, 100, 300 and 364, and the set-up's two)", n)
	}
	left := allAudit(t, audit)
	if len(left) != before-n {
		t.Fatalf("%d entries left, want %d", len(left), before-n)
	}
	for _, e := range left {
		if e.Time.Before(cut) {
			t.Fatalf("entry of %v kept", e.Time)
		}
	}
	// The filters find nothing of the pruned (the index check at cleanup
	// proves every index key went with its entry).
	if es := auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Actor: "usr_x"}); len(es) != 2 {
		t.Fatalf("%d entries by actor after pruning, want 2", len(es))
	}
	if es := auditLog(t, audit, link.AuditFilter{}); len(es) != 2 {
		t.Fatalf("%d instance entries after pruning, want 2", len(es))
	}
}

func TestAudit_Webhooks(t *testing.T) {
	s, u, ws := mustSetup(t)
	audit := storage.NewAuditService(s.DB)
	hooks := storage.NewWebhookService(s.DB)
	ctx := link.WithActor(context.Background(), link.Actor{Type: link.ActorUser, ID: u.ID, Name: u.Email}, "192.0.2.8")
	w := &link.Webhook{WorkspaceID: ws.ID, URL: "https://hooks.example.com/services/T000/B000/Bsecretpath?token=querysecret",
		Events: []string{link.EventCampaignUpdated}, Enabled: true, Secret: "whsec_first-secret"}
	if err := hooks.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	if _, err := hooks.RollSecret(ctx, ws.ID, w.ID, "whsec_second-secret", s.Clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The dispatcher gives up on the webhook: the system disables it.
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	campaignEvents(t, s, c, 1)
	d := due(t, hooks, s.Clock.Now())[w.ID]
	at := s.Clock.Now().Add(time.Minute)
	if err := recordAttempt(context.Background(), hooks, d, link.Attempt{At: at, ResponseCode: 500, Error: "HTTP 500"}, nil, "disabled after 20 consecutive failed deliveries: HTTP 500"); err != nil {
		t.Fatal(err)
	}
	s.Clock.Set(at.Add(time.Minute))
	if _, err := hooks.UpdateWebhook(ctx, ws.ID, w.ID, link.WebhookUpdate{Enabled: ptr(true)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := hooks.UpdateWebhook(ctx, ws.ID, w.ID, link.WebhookUpdate{Enabled: ptr(false)}, nil); err != nil {
		t.Fatal(err)
	}
	if err := hooks.DeleteWebhook(ctx, ws.ID, w.ID); err != nil {
		t.Fatal(err)
	}
	es := auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Target: w.ID})
	want := "webhook.created webhook.secret_rolled webhook.disabled webhook.enabled webhook.disabled webhook.deleted"
	if got := strings.Join(actions(es), " "); got != want {
		t.Fatalf("webhook entries = %s\nwant %s", got, want)
	}
	created, system := es[5], es[3]
	if val(created.Changes["url_host"].After) != "https://hooks.example.com" || created.Address != "192.0.2.8" {
		t.Fatalf("created = %+v", created)
	}
	if system.Actor != link.SystemActor || system.Address != "" || !system.Time.Equal(at) ||
		val(system.Changes["enabled"].Before) != "true" || val(system.Changes["enabled"].After) != "false" ||
		val(system.Changes["disabled_reason"].After) != "disabled after 20 consecutive failed deliveries: HTTP 500" {
		t.Fatalf("disabled by the dispatcher = %+v", system)
	}
	if es[1].Actor.ID != u.ID || es[1].Actor.Type != link.ActorUser {
		t.Fatalf("disabled by a person = %+v", es[1])
	}
	wantNoSecrets(t, es, "whsec_first-secret", "whsec_second-secret", "Bsecretpath", "querysecret")
}

func TestAudit_DomainsAndWorkspaces(t *testing.T) {
	s, u, ws := mustSetup(t)
	audit := storage.NewAuditService(s.DB)
	domains := storage.NewDomainService(s.DB)
	ctx := link.WithActor(context.Background(), link.Actor{Type: link.ActorUser, ID: u.ID, Name: u.Email}, "2001:db8::1")
	d := &link.Domain{WorkspaceID: ws.ID, Hostname: "go.example.com"}
	if err := domains.CreateDomain(ctx, d, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := domains.SetDomainVerified(ctx, ws.ID, d.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := domains.SetDomainVerified(ctx, ws.ID, d.ID, true); err != nil { // no change: no entry
		t.Fatal(err)
	}
	l := mustLink(t, s, ws.ID, &link.Link{DestinationURL: "https://example.com/", Domain: "go.example.com"})
	wantCode(t, domains.DeleteDomain(ctx, ws.ID, d.ID), link.ECONFLICT) // refused: no entry
	if err := s.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	if err := domains.DeleteDomain(ctx, ws.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	es := auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Target: d.ID})
	if got := strings.Join(actions(es), " "); got != "domain.added domain.verified domain.removed" {
		t.Fatalf("domain entries = %s", got)
	}
	if es[2].Address != "2001:db8::1" || val(es[2].Changes["hostname"].After) != "go.example.com" || val(es[0].Changes["hostname"].Before) != "go.example.com" {
		t.Fatalf("domain entries = %+v", es)
	}
	wantNoSecrets(t, es, d.VerificationToken)

	if _, err := s.Workspaces.UpdateWorkspace(ctx, ws.ID, link.WorkspaceUpdate{Name: ptr("Renamed"), Plan: ptr(link.PlanPro)}); err != nil {
		t.Fatal(err)
	}
	es = auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Target: ws.ID})
	if got := strings.Join(actions(es), " "); got != "workspace.created workspace.renamed workspace.plan_changed" {
		t.Fatalf("workspace entries = %s", got)
	}
	if c := es[1].Changes["name"]; val(c.Before) != "Default" || val(c.After) != "Renamed" {
		t.Fatalf("rename = %+v", c)
	}
	if c := es[0].Changes["plan"]; val(c.Before) != "free" || val(c.After) != "pro" {
		t.Fatalf("plan change = %+v", c)
	}

	// A member joins: the recording helper serves the team actions too.
	other := &link.User{Email: "member@example.com", PasswordHash: []byte("secret-hash")}
	if err := s.Users.CreateUser(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := s.Workspaces.AddMember(ctx, ws.ID, other.ID, link.RoleRead); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Workspaces.AddMember(ctx, ws.ID, other.ID, link.RoleOwner), link.ECONFLICT)
	es = auditLog(t, audit, link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditMemberJoined})
	if len(es) != 1 || es[0].Target.ID != other.ID || val(es[0].Changes["role"].After) != "read" {
		t.Fatalf("member.joined = %+v", es)
	}
}

// val is a change's value as a string, or nil for none.
func val(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// wantNoSecrets fails if any entry, in any encoding, holds one of the
// secrets (or its hex).
func wantNoSecrets(tb testing.TB, es []*link.AuditEntry, secrets ...string) {
	tb.Helper()
	raw, err := json.Marshal(es)
	if err != nil {
		tb.Fatal(err)
	}
	for _, sec := range secrets {
		if sec == "" {
			tb.Fatal("an empty secret to look for")
		}
		if strings.Contains(string(raw), sec) || strings.Contains(string(raw), hex.EncodeToString([]byte(sec))) {
			tb.Fatalf("secret %q in an audit entry: %s", sec, raw)
		}
	}
}

func TestAudit_UserEntriesBelongToTheirWorkspaces(t *testing.T) {
	s, u, ws := mustSetup(t)
	audit := storage.NewAuditService(s.DB)
	other := mustWorkspace(t, s, "Other", u.ID)
	lone := &link.User{Email: "lone@example.com", PasswordHash: []byte("h")}
	if err := s.Users.CreateUser(context.Background(), lone); err != nil {
		t.Fatal(err)
	}
	ctx := link.WithActor(context.Background(), link.Actor{Type: link.ActorUser, ID: u.ID, Name: u.Email}, "192.0.2.5")
	for _, id := range []string{u.ID, lone.ID, "usr_nobody"} {
		if err := audit.RecordUserAudit(ctx, id, link.AuditPasswordChanged, link.AuditTarget{Type: "user", ID: id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []string{ws.ID, other.ID} {
		es := auditLog(t, audit, link.AuditFilter{WorkspaceID: w, Action: link.AuditPasswordChanged})
		if len(es) != 1 || es[0].Target.ID != u.ID || len(es[0].WorkspaceIDs) != 2 {
			t.Fatalf("entries of %s = %+v", w, es)
		}
	}
	// A user of no workspace, and an unknown one: the instance's.
	es := auditLog(t, audit, link.AuditFilter{Action: link.AuditPasswordChanged})
	if len(es) != 2 || es[0].Target.ID != "usr_nobody" || es[1].Target.ID != lone.ID {
		t.Fatalf("instance entries = %+v", es)
	}
}

// TestAudit_SetupIsRecorded: the set-up of a fresh instance records the
// admin's account and the first workspace, the system their actor.
func TestAudit_SetupIsRecorded(t *testing.T) {
	s, u, ws := mustSetup(t)
	es := auditLog(t, storage.NewAuditService(s.DB), link.AuditFilter{WorkspaceID: ws.ID})
	if got := strings.Join(actions(es), " "); got != "user.created workspace.created" {
		t.Fatalf("set-up entries = %s", got)
	}
	created := es[1]
	if created.Actor.Type != link.ActorSystem || created.Target.ID != u.ID ||
		val(created.Changes["via"].After) != "setup" || val(created.Changes["email"].After) != u.Email {
		t.Fatalf("user.created = %+v", created)
	}
	wantNoSecrets(t, es, string(u.PasswordHash))
}
