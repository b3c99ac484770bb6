package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var domainTests = []test{
	{"CreateFindList", testDomainsFind},
	{"Verified", testDomainsVerified},
	{"Update", testDomainsUpdate},
	{"DeleteWithLinks", testDomainsDelete},
	{"TakeOverUnverified", testDomainsTakeOver},
}

func testDomainsFind(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	a := &link.Domain{WorkspaceID: ws.ID, Hostname: "go.example.com", RootRedirectURL: "https://example.com/", VerificationToken: link.NewVerificationToken()}
	if err := e.Domains.CreateDomain(e.ctx, a, 0); err != nil {
		t.Fatal(err)
	}
	if a.ID == "" || a.Verified || !a.CreatedAt.Equal(e.now()) {
		t.Fatalf("created domain = %+v", a)
	}
	e.clock.Add(time.Minute)
	b := e.domain(ws.ID, "b.example.com", false)
	e.domain(other.ID, "other.example.com", false)

	got, err := e.Domains.FindDomainByID(e.ctx, ws.ID, a.ID)
	if err != nil || got.Hostname != "go.example.com" || got.RootRedirectURL != "https://example.com/" || got.VerificationToken != a.VerificationToken ||
		got.WorkspaceID != ws.ID || got.Verified || got.VerifiedAt != nil || got.Links != 0 {
		t.Fatalf("FindDomainByID = %+v, %v", got, err)
	}
	for _, tt := range [][2]string{{other.ID, a.ID}, {ws.ID, "dom_unknown"}} {
		_, err := e.Domains.FindDomainByID(e.ctx, tt[0], tt[1])
		wantCode(t, err, link.ENOTFOUND)
	}
	if list, err := e.Domains.FindDomains(e.ctx, ws.ID); err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("FindDomains = %+v, %v; want b, go (newest first)", list, err)
	}
	_, err = e.Domains.FindDomains(e.ctx, "ws_unknown")
	wantCode(t, err, link.ENOTFOUND)
	// A hostname is one workspace's in the whole instance.
	for _, wsID := range []string{ws.ID, other.ID} {
		err := e.Domains.CreateDomain(e.ctx, &link.Domain{WorkspaceID: wsID, Hostname: "go.example.com", VerificationToken: link.NewVerificationToken()}, 0)
		wantCode(t, err, link.ECONFLICT)
	}
	wantCode(t, e.Domains.CreateDomain(e.ctx, &link.Domain{WorkspaceID: "ws_unknown", Hostname: "new.example.com", VerificationToken: link.NewVerificationToken()}, 0), link.ENOTFOUND)
	if got, err := e.Domains.FindDomainByHostname(e.ctx, "other.example.com"); err != nil || got.WorkspaceID != other.ID || got.Verified {
		t.Fatalf("FindDomainByHostname = %+v, %v", got, err)
	}
	_, err = e.Domains.FindDomainByHostname(e.ctx, "nothing.example.com")
	wantCode(t, err, link.ENOTFOUND)
	if es := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditDomainAdded}); len(es) != 2 {
		t.Fatalf("%d domain.added entries, want 2", len(es))
	}
}

func testDomainsVerified(t *testing.T, e *env) {
	_, ws := e.setup()
	d := e.domain(ws.ID, "go.example.com", false)
	_, err := e.Domains.FindVerifiedDomain(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)

	e.clock.Add(time.Hour)
	at := e.now()
	v, err := e.Domains.SetDomainVerified(e.ctx, ws.ID, d.ID, true)
	if err != nil || !v.Verified || v.VerifiedAt == nil || !v.VerifiedAt.Equal(at) {
		t.Fatalf("SetDomainVerified = %+v, %v", v, err)
	}
	if got, err := e.Domains.FindVerifiedDomain(e.ctx, "go.example.com"); err != nil || got.ID != d.ID {
		t.Fatalf("FindVerifiedDomain = %+v, %v", got, err)
	}
	// Verifying again keeps the first time.
	e.clock.Add(time.Hour)
	if v, err := e.Domains.SetDomainVerified(e.ctx, ws.ID, d.ID, true); err != nil || !v.VerifiedAt.Equal(at) {
		t.Fatalf("verified again: %+v, %v", v, err)
	}
	// A change is seen by the next lookup.
	nf := "https://example.com/404"
	if _, err := e.Domains.UpdateDomain(e.ctx, ws.ID, d.ID, link.DomainUpdate{NotFoundURL: &nf}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Domains.FindVerifiedDomain(e.ctx, "go.example.com"); err != nil || got.NotFoundURL != nf {
		t.Fatalf("FindVerifiedDomain after an update = %+v, %v", got, err)
	}
	e.restart()
	if got, err := e.Domains.FindVerifiedDomain(e.ctx, "go.example.com"); err != nil || !got.Verified || !got.VerifiedAt.Equal(at) {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
	v, err = e.Domains.SetDomainVerified(e.ctx, ws.ID, d.ID, false)
	if err != nil || v.Verified || v.VerifiedAt != nil {
		t.Fatalf("unverified = %+v, %v", v, err)
	}
	_, err = e.Domains.FindVerifiedDomain(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.Domains.SetDomainVerified(e.ctx, ws.ID, "dom_unknown", true)
	wantCode(t, err, link.ENOTFOUND)
	if got := actions(e.audit(link.AuditFilter{WorkspaceID: ws.ID, Target: d.ID})); !slices.Contains(got, link.AuditDomainVerified) || !slices.Contains(got, link.AuditDomainUnverified) {
		t.Fatalf("the domain's entries %v lack domain.verified or domain.unverified", got)
	}
}

func testDomainsUpdate(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	d := e.domain(ws.ID, "go.example.com", false)
	root := "https://example.com/"
	bad := errors.New("refused")
	var seen *link.Domain
	_, err := e.Domains.UpdateDomain(e.ctx, ws.ID, d.ID, link.DomainUpdate{RootRedirectURL: &root}, func(d *link.Domain) error { seen = d; return bad })
	if err != bad {
		t.Fatalf("UpdateDomain = %v, want validate's error unchanged", err)
	}
	if seen == nil || seen.RootRedirectURL != root {
		t.Fatalf("validate saw %+v, want the domain after the update", seen)
	}
	if got, _ := e.Domains.FindDomainByID(e.ctx, ws.ID, d.ID); got.RootRedirectURL != "" {
		t.Fatalf("an update validate refused was written: %+v", got)
	}
	e.clock.Add(time.Minute)
	got, err := e.Domains.UpdateDomain(e.ctx, ws.ID, d.ID, link.DomainUpdate{RootRedirectURL: &root, Verified: ptr(true)}, nil)
	if err != nil || got.RootRedirectURL != root || !got.Verified || got.VerifiedAt == nil || !got.UpdatedAt.Equal(e.now()) {
		t.Fatalf("UpdateDomain = %+v, %v", got, err)
	}
	if got, err := e.Domains.UpdateDomain(e.ctx, ws.ID, d.ID, link.DomainUpdate{RootRedirectURL: ptr("")}, nil); err != nil || got.RootRedirectURL != "" {
		t.Fatalf("cleared = %+v, %v", got, err)
	}
	_, err = e.Domains.UpdateDomain(e.ctx, other.ID, d.ID, link.DomainUpdate{RootRedirectURL: &root}, nil)
	wantCode(t, err, link.ENOTFOUND)
}

func testDomainsDelete(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	d := e.domain(ws.ID, "go.example.com", true)
	l1 := e.link(ws.ID, &link.Link{Alias: "x", Domain: "go.example.com"})
	l2 := e.link(ws.ID, &link.Link{Domain: "go.example.com"})
	e.link(ws.ID, &link.Link{Alias: "x"})
	if got, err := e.Domains.FindDomainByID(e.ctx, ws.ID, d.ID); err != nil || got.Links != 2 {
		t.Fatalf("the domain's links = %+v, %v; want 2", got, err)
	}
	if list, _ := e.Domains.FindDomains(e.ctx, ws.ID); len(list) != 1 || list[0].Links != 2 {
		t.Fatalf("FindDomains counts %+v", list)
	}
	wantCode(t, e.Domains.DeleteDomain(e.ctx, ws.ID, d.ID), link.ECONFLICT)
	wantCode(t, e.Domains.DeleteDomain(e.ctx, other.ID, d.ID), link.ENOTFOUND)
	for _, l := range []*link.Link{l1, l2} {
		if err := e.Links.DeleteLink(e.ctx, ws.ID, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := e.Domains.FindDomainByID(e.ctx, ws.ID, d.ID); got.Links != 0 {
		t.Fatalf("the domain counts %d links after their deletion", got.Links)
	}
	if err := e.Domains.DeleteDomain(e.ctx, ws.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	_, err := e.Domains.FindDomainByID(e.ctx, ws.ID, d.ID)
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.Domains.FindVerifiedDomain(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.Domains.FindDomainByHostname(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	wantCode(t, e.Domains.DeleteDomain(e.ctx, ws.ID, d.ID), link.ENOTFOUND)
	// The hostname is free again, for any workspace.
	e.domain(other.ID, "go.example.com", false)
}

func testDomainsTakeOver(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	held := e.domain(ws.ID, "go.example.com", false)
	const ttl = 24 * time.Hour
	claim := func() error {
		return e.Domains.CreateDomain(e.ctx, &link.Domain{WorkspaceID: other.ID, Hostname: "go.example.com", VerificationToken: link.NewVerificationToken()}, ttl)
	}
	e.clock.Add(ttl - time.Second)
	wantCode(t, claim(), link.ECONFLICT)
	e.clock.Add(time.Second)
	if err := claim(); err != nil {
		t.Fatalf("a claim past the unverified TTL: %v", err)
	}
	if got, err := e.Domains.FindDomainByHostname(e.ctx, "go.example.com"); err != nil || got.WorkspaceID != other.ID {
		t.Fatalf("the hostname after a take-over = %+v, %v; want the other workspace's", got, err)
	}
	_, err := e.Domains.FindDomainByID(e.ctx, ws.ID, held.ID)
	wantCode(t, err, link.ENOTFOUND)
	// A verified domain is never taken over.
	e.domain(ws.ID, "b.example.com", true)
	e.clock.Add(10 * ttl)
	err = e.Domains.CreateDomain(e.ctx, &link.Domain{WorkspaceID: other.ID, Hostname: "b.example.com", VerificationToken: link.NewVerificationToken()}, ttl)
	wantCode(t, err, link.ECONFLICT)
}
