package storetest

import (
	"crypto/sha256"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// setup bootstraps the instance admin and a first workspace, as a fresh
// instance does.
func (e *env) setup() (*link.User, *link.Workspace) {
	e.t.Helper()
	u := &link.User{Email: "admin@example.com", Name: "Admin", PasswordHash: []byte("hash")}
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := e.Users.Bootstrap(e.ctx, u, ws); err != nil {
		e.t.Fatalf("bootstrap: %v", err)
	}
	return u, ws
}

// user creates a user who is not an admin.
func (e *env) user(email, name string) *link.User {
	e.t.Helper()
	u := &link.User{Email: email, Name: name, PasswordHash: []byte("hash")}
	if err := e.Users.CreateUser(e.ctx, u); err != nil {
		e.t.Fatalf("create user %s: %v", email, err)
	}
	return u
}

// workspace creates a further workspace owned by owner.
func (e *env) workspace(name string, owner *link.User) *link.Workspace {
	e.t.Helper()
	ws := &link.Workspace{Name: name, Plan: link.PlanFree}
	if err := ws.Validate(); err != nil {
		e.t.Fatal(err)
	}
	if err := e.Workspaces.CreateWorkspace(e.ctx, ws, owner.ID, 0); err != nil {
		e.t.Fatalf("create workspace %s: %v", name, err)
	}
	return ws
}

// join makes u a member of ws with role through an invitation by owner.
func (e *env) join(ws *link.Workspace, owner, u *link.User, role link.Role) {
	e.t.Helper()
	tok := hash("join " + ws.ID + " " + u.Email + " " + string(role) + e.now().String())
	inv := &link.Invitation{WorkspaceID: ws.ID, Email: u.Email, Role: role, TokenHash: tok, InvitedBy: owner.ID, ExpiresAt: e.now().Add(time.Hour)}
	if err := inv.Validate(); err != nil {
		e.t.Fatal(err)
	}
	if err := e.Invitations.CreateInvitation(e.ctx, inv); err != nil {
		e.t.Fatalf("invite %s: %v", u.Email, err)
	}
	if _, _, err := e.Invitations.AcceptInvitation(e.ctx, tok, link.Acceptance{UserID: u.ID}); err != nil {
		e.t.Fatalf("accept as %s: %v", u.Email, err)
	}
}

// seq numbers what the fixtures make, so that names and URLs differ.
var seq atomic.Int64

// link creates l in the workspace, normalised and validated as the server
// does; a destination is made up when l has none.
func (e *env) link(wsID string, l *link.Link) *link.Link {
	e.t.Helper()
	l.WorkspaceID = wsID
	if l.DestinationURL == "" {
		l.DestinationURL = fmt.Sprintf("https://example.com/%d", seq.Add(1))
	}
	l.Normalize()
	if err := l.Validate(nil); err != nil {
		e.t.Fatalf("link: %v", err)
	}
	if err := e.Links.CreateLink(e.ctx, l); err != nil {
		e.t.Fatalf("create link %q: %v", l.Alias, err)
	}
	return l
}

// campaign creates a campaign of the workspace, normalised and validated.
func (e *env) campaign(wsID string, c *link.Campaign) *link.Campaign {
	e.t.Helper()
	c.WorkspaceID = wsID
	if c.Name == "" {
		c.Name = fmt.Sprintf("Campaign %d", seq.Add(1))
	}
	c.Normalize()
	if err := c.Validate(); err != nil {
		e.t.Fatalf("campaign: %v", err)
	}
	if err := e.Campaigns.CreateCampaign(e.ctx, c); err != nil {
		e.t.Fatalf("create campaign: %v", err)
	}
	return c
}

// domain creates the domain host of the workspace, verified or not.
func (e *env) domain(wsID, host string, verified bool) *link.Domain {
	e.t.Helper()
	d := &link.Domain{WorkspaceID: wsID, Hostname: host, VerificationToken: link.NewVerificationToken()}
	if err := d.Validate(nil); err != nil {
		e.t.Fatal(err)
	}
	if err := e.Domains.CreateDomain(e.ctx, d, 0); err != nil {
		e.t.Fatalf("create domain %s: %v", host, err)
	}
	if !verified {
		return d
	}
	v, err := e.Domains.SetDomainVerified(e.ctx, wsID, d.ID, true)
	if err != nil {
		e.t.Fatalf("verify domain %s: %v", host, err)
	}
	return v
}

// webhook creates an enabled webhook of the workspace for events.
func (e *env) webhook(wsID string, events ...string) *link.Webhook {
	e.t.Helper()
	n := seq.Add(1)
	w := &link.Webhook{WorkspaceID: wsID, URL: fmt.Sprintf("https://hooks.example.com/%d", n), Events: events,
		Enabled: true, Secret: fmt.Sprintf("whsec_%d", n)}
	w.Normalize()
	if err := w.Validate(); err != nil {
		e.t.Fatalf("webhook: %v", err)
	}
	if err := e.Webhooks.CreateWebhook(e.ctx, w); err != nil {
		e.t.Fatalf("create webhook: %v", err)
	}
	return w
}

// newKey returns a key of the workspace for token, to create.
func newKey(wsID, token string) *link.APIKey {
	return &link.APIKey{WorkspaceID: wsID, Name: "key " + token, Scope: link.ScopeReadWrite, Hash: hash(token), Start: token[:6]}
}

// key creates the key of token in the workspace, without a cap.
func (e *env) key(wsID, token string) *link.APIKey {
	e.t.Helper()
	k := newKey(wsID, token)
	if err := k.Validate(e.now()); err != nil {
		e.t.Fatal(err)
	}
	if err := e.Keys.CreateKey(e.ctx, k, 0); err != nil {
		e.t.Fatalf("create key: %v", err)
	}
	return k
}

// record writes clicks, none of which may be skipped.
func (e *env) record(clicks ...link.Click) {
	e.t.Helper()
	skipped, err := e.Clicks.RecordClicks(e.ctx, clicks)
	if err != nil {
		e.t.Fatalf("record clicks: %v", err)
	}
	if skipped != 0 {
		e.t.Fatalf("record clicks: %d of %d skipped", skipped, len(clicks))
	}
}

// stats returns the analytics of f with every top entry.
func (e *env) stats(f link.StatsFilter) *link.Stats {
	e.t.Helper()
	if f.TopLimit == 0 {
		f.TopLimit = 100
	}
	st, err := e.Clicks.Stats(e.ctx, f)
	if err != nil {
		e.t.Fatalf("stats %+v: %v", f, err)
	}
	return st
}

// clicksOf returns the link's Clicks as FindLinkByID fills it in.
func (e *env) clicksOf(l *link.Link) int64 {
	e.t.Helper()
	got, err := e.Links.FindLinkByID(e.ctx, l.WorkspaceID, l.ID)
	if err != nil {
		e.t.Fatalf("find link %s: %v", l.ID, err)
	}
	return got.Clicks
}

// eventsOf returns the workspace's events in the outbox, oldest first.
func (e *env) eventsOf(wsID string) []*link.Event {
	e.t.Helper()
	evs, err := e.Campaigns.FindEvents(e.ctx, wsID, "", 1000)
	if err != nil {
		e.t.Fatalf("find events: %v", err)
	}
	return evs
}

// deliveries returns a webhook's deliveries, newest first.
func (e *env) deliveries(w *link.Webhook) []*link.Delivery {
	e.t.Helper()
	ds, err := e.Webhooks.FindDeliveries(e.ctx, w.WorkspaceID, w.ID, 1000)
	if err != nil {
		e.t.Fatalf("find deliveries: %v", err)
	}
	return ds
}

// audit returns every entry f selects, newest first, page by page.
func (e *env) audit(f link.AuditFilter) []*link.AuditEntry {
	e.t.Helper()
	var out []*link.AuditEntry
	for range 1000 {
		page, next, err := e.Audit.FindAuditEntries(e.ctx, f)
		if err != nil {
			e.t.Fatalf("find audit entries: %v", err)
		}
		out = append(out, page...)
		if next == "" {
			return out
		}
		f.Cursor = next
	}
	e.t.Fatal("the audit log does not end")
	return nil
}

// actions returns the actions of entries, in their order.
func actions(es []*link.AuditEntry) []string {
	out := make([]string, len(es))
	for i, en := range es {
		out[i] = en.Action
	}
	return out
}

func hash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
