package storage_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// mustDomain creates a domain of the workspace wsID.
func mustDomain(tb testing.TB, ds *storage.DomainService, wsID, hostname string) *link.Domain {
	tb.Helper()
	d := &link.Domain{WorkspaceID: wsID, Hostname: hostname}
	if err := ds.CreateDomain(context.Background(), d, 0); err != nil {
		tb.Fatalf("create domain %s: %v", hostname, err)
	}
	return d
}

func TestDomains_CreateFindList(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ds := storage.NewDomainService(s.DB)
	ctx := context.Background()

	a := &link.Domain{WorkspaceID: ws.ID, Hostname: "go.example.com", RootRedirectURL: "https://example.com/"}
	if err := ds.CreateDomain(ctx, a, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.ID, "dom_") || len(a.VerificationToken) != link.VerificationTokenLength || a.Verified ||
		!a.CreatedAt.Equal(t0) || !a.UpdatedAt.Equal(t0) {
		t.Fatalf("created: %+v", a)
	}
	s.Clock.Add(time.Minute)
	b := mustDomain(t, ds, ws.ID, "b.example.com")
	if b.VerificationToken == a.VerificationToken {
		t.Fatal("two domains with the same token")
	}
	mustDomain(t, ds, other.ID, "other.example.com")

	got, err := ds.FindDomainByID(ctx, ws.ID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hostname != "go.example.com" || got.RootRedirectURL != "https://example.com/" || got.VerificationToken != a.VerificationToken ||
		got.WorkspaceID != ws.ID || got.VerifiedAt != nil || got.Links != 0 {
		t.Fatalf("found: %+v", got)
	}
	list, err := ds.FindDomains(ctx, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("list (newest first): %+v", list)
	}

	// Another workspace's domain is not found; the hostname is unique
	// across the instance.
	_, err = ds.FindDomainByID(ctx, other.ID, a.ID)
	wantCode(t, err, link.ENOTFOUND)
	for _, id := range []string{"", "dom_", "dom_0", "lnk_1", "dom_zzzzzzzzzzzzzz"} {
		_, err = ds.FindDomainByID(ctx, ws.ID, id)
		wantCode(t, err, link.ENOTFOUND)
	}
	err = ds.CreateDomain(ctx, &link.Domain{WorkspaceID: other.ID, Hostname: "go.example.com"}, 0)
	wantCode(t, err, link.ECONFLICT)
	err = ds.CreateDomain(ctx, &link.Domain{WorkspaceID: ws.ID, Hostname: "go.example.com"}, 0)
	wantCode(t, err, link.ECONFLICT)
	err = ds.CreateDomain(ctx, &link.Domain{WorkspaceID: "ws_zz", Hostname: "new.example.com"}, 0)
	wantCode(t, err, link.ENOTFOUND)

	byName, err := ds.FindDomainByHostname(ctx, "other.example.com")
	if err != nil || byName.WorkspaceID != other.ID {
		t.Fatalf("by hostname: %+v, %v", byName, err)
	}
	_, err = ds.FindDomainByHostname(ctx, "nothing.example.com")
	wantCode(t, err, link.ENOTFOUND)
	if list, err := ds.FindDomains(ctx, other.ID); err != nil || len(list) != 1 {
		t.Fatalf("other's list: %v, %v", list, err)
	}
}

func TestDomains_Verified(t *testing.T) {
	s, _, ws := mustSetup(t)
	ds := storage.NewDomainService(s.DB)
	ctx := context.Background()
	d := mustDomain(t, ds, ws.ID, "go.example.com")

	// Unverified domains do not route.
	_, err := ds.FindVerifiedDomain(ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)

	s.Clock.Add(time.Hour)
	v, err := ds.SetDomainVerified(ctx, ws.ID, d.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Hour)
	if !v.Verified || v.VerifiedAt == nil || !v.VerifiedAt.Equal(at) || !v.UpdatedAt.Equal(at) {
		t.Fatalf("verified: %+v", v)
	}
	got, err := ds.FindVerifiedDomain(ctx, "go.example.com")
	if err != nil || got.ID != d.ID {
		t.Fatalf("verified lookup: %+v, %v", got, err)
	}
	// Verifying again keeps the first time.
	s.Clock.Add(time.Hour)
	if v, err = ds.SetDomainVerified(ctx, ws.ID, d.ID, true); err != nil || !v.VerifiedAt.Equal(at) {
		t.Fatalf("verified again: %+v, %v", v, err)
	}

	// A change is seen by the next lookup (the table is reloaded).
	nf := "https://example.com/404"
	if _, err := ds.UpdateDomain(ctx, ws.ID, d.ID, link.DomainUpdate{NotFoundURL: &nf}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ds.FindVerifiedDomain(ctx, "go.example.com"); err != nil || got.NotFoundURL != nf {
		t.Fatalf("after update: %+v, %v", got, err)
	}

	// It survives a restart.
	db := MustReopen(t, s.DB, s.Clock)
	ds = storage.NewDomainService(db)
	if got, err := ds.FindVerifiedDomain(ctx, "go.example.com"); err != nil || !got.Verified || !got.VerifiedAt.Equal(at) {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}

	// Unverified again: not routed, VerifiedAt cleared.
	v, err = ds.SetDomainVerified(ctx, ws.ID, d.ID, false)
	if err != nil || v.Verified || v.VerifiedAt != nil {
		t.Fatalf("unverified: %+v, %v", v, err)
	}
	_, err = ds.FindVerifiedDomain(ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	_, err = ds.SetDomainVerified(ctx, ws.ID, "dom_99", true)
	wantCode(t, err, link.ENOTFOUND)
}

func TestUpdateDomain(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ds := storage.NewDomainService(s.DB)
	ctx := context.Background()
	d := mustDomain(t, ds, ws.ID, "go.example.com")

	// validate's error comes back unchanged and nothing is written.
	root := "https://example.com/"
	bad := link.Errorf(link.EINVALID, "no")
	_, err := ds.UpdateDomain(ctx, ws.ID, d.ID, link.DomainUpdate{RootRedirectURL: &root},
		func(*link.Domain) error { return bad })
	if err != bad {
		t.Fatalf("err %v, want the validator's", err)
	}
	if got, _ := ds.FindDomainByID(ctx, ws.ID, d.ID); got.RootRedirectURL != "" {
		t.Fatalf("written despite the validator: %+v", got)
	}

	// An update that changes nothing keeps UpdatedAt.
	s.Clock.Add(time.Minute)
	got, err := ds.UpdateDomain(ctx, ws.ID, d.ID, link.DomainUpdate{}, nil)
	if err != nil || !got.UpdatedAt.Equal(t0) {
		t.Fatalf("no-op update: %+v, %v", got, err)
	}
	got, err = ds.UpdateDomain(ctx, ws.ID, d.ID, link.DomainUpdate{RootRedirectURL: &root}, nil)
	if err != nil || got.RootRedirectURL != root || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("update: %+v, %v", got, err)
	}
	empty := ""
	if got, err = ds.UpdateDomain(ctx, ws.ID, d.ID, link.DomainUpdate{RootRedirectURL: &empty}, nil); err != nil || got.RootRedirectURL != "" {
		t.Fatalf("clear: %+v, %v", got, err)
	}

	// Another workspace cannot touch it.
	_, err = ds.UpdateDomain(ctx, other.ID, d.ID, link.DomainUpdate{RootRedirectURL: &root}, nil)
	wantCode(t, err, link.ENOTFOUND)
	wantCode(t, ds.DeleteDomain(ctx, other.ID, d.ID), link.ENOTFOUND)
}

func TestDeleteDomain_Links(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ds := storage.NewDomainService(s.DB)
	ctx := context.Background()
	d := mustVerifiedDomain(t, s, ws.ID, "go.example.com")
	b := mustVerifiedDomain(t, s, ws.ID, "b.example.com")

	// The same alias on two domains and on the primary host.
	l1 := mustLink(t, s, ws.ID, &link.Link{Alias: "x", Domain: "go.example.com"})
	mustLink(t, s, ws.ID, &link.Link{Domain: "go.example.com"})
	mustLink(t, s, ws.ID, &link.Link{Alias: "x", Domain: "b.example.com"})
	mustLink(t, s, ws.ID, &link.Link{Alias: "x"})

	got, err := ds.FindDomainByID(ctx, ws.ID, d.ID)
	if err != nil || got.Links != 2 {
		t.Fatalf("links: %+v, %v", got, err)
	}
	list, _ := ds.FindDomains(ctx, ws.ID)
	if len(list) != 2 || list[0].Links != 1 || list[1].Links != 2 {
		t.Fatalf("list counts: %+v %+v", list[0], list[1])
	}

	err = ds.DeleteDomain(ctx, ws.ID, d.ID)
	wantCode(t, err, link.ECONFLICT)
	if msg := link.ErrorMessage(err); !strings.Contains(msg, "2 links") || !strings.Contains(msg, "delete them") {
		t.Fatalf("conflict message %q", msg)
	}

	// Un-verified, the domain keeps its links (counted, and still refusing
	// the delete) but takes no new one; verified again, it does.
	if _, err := ds.SetDomainVerified(ctx, ws.ID, d.ID, false); err != nil {
		t.Fatal(err)
	}
	err = s.Links.CreateLink(ctx, &link.Link{WorkspaceID: ws.ID, Domain: "go.example.com", DestinationURL: "https://example.com/late"})
	wantCode(t, err, link.EINVALID)
	if got, err := ds.FindDomainByID(ctx, ws.ID, d.ID); err != nil || got.Links != 2 || got.Verified {
		t.Fatalf("unverified with links: %+v, %v", got, err)
	}
	wantCode(t, ds.DeleteDomain(ctx, ws.ID, d.ID), link.ECONFLICT)
	if _, err := ds.SetDomainVerified(ctx, ws.ID, d.ID, true); err != nil {
		t.Fatal(err)
	}
	late := mustLink(t, s, ws.ID, &link.Link{Domain: "go.example.com"})
	if err := s.Links.DeleteLink(ctx, ws.ID, late.ID); err != nil {
		t.Fatal(err)
	}

	if err := s.Links.DeleteLink(ctx, ws.ID, l1.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := ds.FindDomainByID(ctx, ws.ID, d.ID); got.Links != 1 {
		t.Fatalf("links after a delete: %d", got.Links)
	}
	links, _, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: ws.ID, Domain: &d.Hostname, Limit: 10})
	if err != nil || len(links) != 1 {
		t.Fatalf("links of the domain: %v, %v", links, err)
	}
	if err := s.Links.DeleteLink(ctx, ws.ID, links[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.SetDomainVerified(ctx, ws.ID, d.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := ds.DeleteDomain(ctx, ws.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	_, err = ds.FindDomainByID(ctx, ws.ID, d.ID)
	wantCode(t, err, link.ENOTFOUND)
	_, err = ds.FindVerifiedDomain(ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	wantCode(t, ds.DeleteDomain(ctx, ws.ID, d.ID), link.ENOTFOUND)

	// The hostname is free again, for any workspace.
	mustDomain(t, ds, other.ID, "go.example.com")
	if list, _ := ds.FindDomains(ctx, ws.ID); len(list) != 1 || list[0].ID != b.ID {
		t.Fatalf("list after delete: %+v", list)
	}
}

// TestCreateLink_DomainNotVerified checks, at the storage level, that a
// link is created only on a verified domain of its own workspace: not on
// an unverified one, another workspace's, an unknown or a deleted one.
func TestCreateLink_DomainNotVerified(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ds := storage.NewDomainService(s.DB)
	ctx := context.Background()
	mustDomain(t, ds, ws.ID, "pending.example.com")
	mustVerifiedDomain(t, s, ws.ID, "mine.example.com")
	mustVerifiedDomain(t, s, other.ID, "theirs.example.com")
	gone := mustVerifiedDomain(t, s, ws.ID, "gone.example.com")
	if err := ds.DeleteDomain(ctx, ws.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	camp := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})

	for _, tt := range []struct {
		name, ws, host string
	}{
		{"unverified", ws.ID, "pending.example.com"},
		{"another workspace's", ws.ID, "theirs.example.com"},
		{"own domain of the other workspace, asked by this one", other.ID, "mine.example.com"},
		{"deleted", ws.ID, "gone.example.com"},
		{"unknown", ws.ID, "nothing.example.com"},
		{"any case", ws.ID, "PENDING.example.com"},
	} {
		for _, alias := range []string{"fixed", ""} { // given, and generated
			t.Run(tt.name+"/alias "+alias, func(t *testing.T) {
				l := &link.Link{WorkspaceID: tt.ws, Alias: alias, Domain: tt.host, DestinationURL: "https://example.com/x",
					Tags: []string{"t"}, CampaignID: camp.ID}
				if tt.ws != ws.ID {
					l.CampaignID = ""
				}
				err := s.Links.CreateLink(ctx, l)
				wantCode(t, err, link.EINVALID)
				host := strings.ToLower(tt.host)
				if got, want := link.ErrorMessage(err), "domain: "+host+" is not a verified domain of this workspace"; got != want {
					t.Fatalf("message %q, want %q", got, want)
				}
				if got, want := fmt.Sprint(link.ErrorFields(err)), fmt.Sprint([]link.FieldError{{Field: "domain", Message: "is not a verified domain of this workspace"}}); got != want {
					t.Fatalf("fields %s, want %s", got, want)
				}
				if l.ID != "" || l.Alias != alias {
					t.Fatalf("link changed on failure: %+v", l)
				}
			})
		}
	}

	// Nothing was written: no link, no tag, no campaign member, no alias.
	for _, wsID := range []string{ws.ID, other.ID} {
		links, total, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: wsID, Limit: 100})
		if err != nil || total != 0 || len(links) != 0 {
			t.Fatalf("links of %s: %v (total %d), %v", wsID, links, total, err)
		}
		if _, total, _ := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: wsID, Tags: []string{"t"}}); total != 0 {
			t.Fatalf("tag count of %s: %d", wsID, total)
		}
	}
	if got, err := s.Campaigns.FindCampaignByID(ctx, ws.ID, camp.ID); err != nil || got.Links != 0 {
		t.Fatalf("campaign: %+v, %v", got, err)
	}
	if _, err := s.Links.FindLinkByAlias(ctx, "pending.example.com", "fixed"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("alias on the unverified domain: %v", err)
	}
	if d, err := ds.FindDomainByHostname(ctx, "pending.example.com"); err != nil || d.Verified {
		t.Fatalf("pending: %+v, %v", d, err)
	} else if d, err = ds.FindDomainByID(ctx, ws.ID, d.ID); err != nil || d.Links != 0 {
		t.Fatalf("pending links: %+v, %v", d, err)
	}

	// The verified domain of each workspace takes its links, with the
	// same alias; the primary host takes any workspace's.
	for _, c := range []struct{ ws, host string }{{ws.ID, "mine.example.com"}, {other.ID, "theirs.example.com"}, {other.ID, ""}} {
		l := mustLink(t, s, c.ws, &link.Link{Alias: "fixed", Domain: c.host})
		if l.Domain != c.host {
			t.Fatalf("domain %q, want %q", l.Domain, c.host)
		}
	}
	// The deleted hostname, re-created (by the other workspace), takes no
	// link until it is verified again.
	again := mustDomain(t, ds, other.ID, "gone.example.com")
	err := s.Links.CreateLink(ctx, &link.Link{WorkspaceID: other.ID, Domain: "gone.example.com", DestinationURL: "https://example.com/y"})
	wantCode(t, err, link.EINVALID)
	if _, err := ds.SetDomainVerified(ctx, other.ID, again.ID, true); err != nil {
		t.Fatal(err)
	}
	mustLink(t, s, other.ID, &link.Link{Domain: "gone.example.com"})
}

// TestCreateLink_DomainDeletedConcurrently races link creations on a
// domain against its deletion and its un-verifying: a link is created
// exactly when the domain, verified and of its workspace, is still there
// in the link's own transaction, so either the link exists and the delete
// failed, or the delete succeeded and the link was refused.
func TestCreateLink_DomainDeletedConcurrently(t *testing.T) {
	s, _, ws := mustSetup(t)
	ds := storage.NewDomainService(s.DB)
	ctx := context.Background()
	for round := range 30 {
		host := fmt.Sprintf("r%d.example.com", round)
		d := mustVerifiedDomain(t, s, ws.ID, host)
		const n = 4
		var wg sync.WaitGroup
		errs := make([]error, n)
		var delErr, unverifyErr error
		for i := range n {
			wg.Go(func() {
				errs[i] = s.Links.CreateLink(ctx, &link.Link{WorkspaceID: ws.ID, Domain: host, DestinationURL: fmt.Sprintf("https://example.com/%d", i)})
			})
		}
		wg.Go(func() {
			// Late by 0 to 3 ms, around the batch delay of the creations,
			// so that both the delete and the creations win some rounds.
			time.Sleep(time.Duration(round%7) * time.Millisecond / 2)
			if round%2 == 0 {
				_, unverifyErr = ds.SetDomainVerified(ctx, ws.ID, d.ID, false)
			}
			delErr = ds.DeleteDomain(ctx, ws.ID, d.ID)
		})
		wg.Wait()
		if unverifyErr != nil {
			t.Fatal(unverifyErr)
		}
		created := 0
		for _, err := range errs {
			switch link.ErrorCode(err) {
			case "":
				created++
			case link.EINVALID:
			default:
				t.Fatalf("round %d: create: %v", round, err)
			}
		}
		_, total, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: ws.ID, Domain: &host})
		if err != nil || total != created {
			t.Fatalf("round %d: %d links on the domain, %d created (%v)", round, total, created, err)
		}
		if delErr == nil {
			if created != 0 {
				t.Fatalf("round %d: domain deleted with %d links created on it", round, created)
			}
			if _, err := ds.FindDomainByHostname(ctx, host); link.ErrorCode(err) != link.ENOTFOUND {
				t.Fatalf("round %d: deleted domain found: %v", round, err)
			}
			continue
		}
		wantCode(t, delErr, link.ECONFLICT)
		if created == 0 {
			t.Fatalf("round %d: delete refused with no link: %v", round, delErr)
		}
		got, err := ds.FindDomainByID(ctx, ws.ID, d.ID)
		if err != nil || got.Links != created {
			t.Fatalf("round %d: domain %+v, %v; %d created", round, got, err, created)
		}
	}
}

// TestFindVerifiedDomain_Concurrent looks domains up while they change,
// for the race detector and the generation check of the table.
func TestFindVerifiedDomain_Concurrent(t *testing.T) {
	s, _, ws := mustSetup(t)
	ds := storage.NewDomainService(s.DB)
	ctx := context.Background()
	d := mustDomain(t, ds, ws.ID, "go.example.com")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := ds.FindVerifiedDomain(ctx, "go.example.com")
				if c := link.ErrorCode(err); c != "" && c != link.ENOTFOUND {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := range 50 {
		if _, err := ds.SetDomainVerified(ctx, ws.ID, d.ID, i%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	// The last write left it unverified; the table must say so.
	_, err := ds.FindVerifiedDomain(ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	if _, err := ds.SetDomainVerified(ctx, ws.ID, d.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.FindVerifiedDomain(ctx, "go.example.com"); err != nil {
		t.Fatal(err)
	}
}

// TestDeleteDomain_ConflictMessage checks that the refusal counts the
// domain's links in words: "1 link", "2 links".
func TestDeleteDomain_ConflictMessage(t *testing.T) {
	s, _, ws := mustSetup(t)
	ds := storage.NewDomainService(s.DB)
	ctx := context.Background()
	d := mustVerifiedDomain(t, s, ws.ID, "go.example.com")
	for _, want := range []string{"still has 1 link:", "still has 2 links:"} {
		mustLink(t, s, ws.ID, &link.Link{Domain: "go.example.com"})
		err := ds.DeleteDomain(ctx, ws.ID, d.ID)
		wantCode(t, err, link.ECONFLICT)
		if msg := link.ErrorMessage(err); !strings.Contains(msg, want) {
			t.Fatalf("conflict message %q, want it to say %q", msg, want)
		}
	}
}
