package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// A deleted or renamed link's alias stays its workspace's for AliasHold:
// another workspace cannot take it (and so its traffic), the same one can,
// and nobody is redirected meanwhile.
func TestAliasHold(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	if got, want := s.Links.AliasHold, storage.DefaultAliasHold; got != want {
		t.Fatalf("AliasHold = %v, want %v", got, want)
	}

	deleted := mustLink(t, s, ws.ID, &link.Link{Alias: "promo", DestinationURL: "https://example.com/a"})
	if err := s.Links.DeleteLink(ctx, ws.ID, deleted.ID); err != nil {
		t.Fatal(err)
	}
	renamed := mustLink(t, s, ws.ID, &link.Link{Alias: "sale", DestinationURL: "https://example.com/b"})
	if _, err := s.Links.UpdateLink(ctx, ws.ID, renamed.ID, link.LinkUpdate{Alias: ptr("sale2")}, nil); err != nil {
		t.Fatal(err)
	}
	for _, alias := range []string{"promo", "sale"} {
		// Held: no redirect, and another workspace is refused, on create and
		// on a rename.
		_, err := s.Links.FindLinkByAlias(ctx, "", alias)
		wantCode(t, err, link.ENOTFOUND)
		err = s.Links.CreateLink(ctx, &link.Link{WorkspaceID: other.ID, Alias: alias, DestinationURL: "https://evil.example/"})
		wantCode(t, err, link.ECONFLICT)
		theirs := mustLink(t, s, other.ID, &link.Link{DestinationURL: "https://evil.example/"})
		_, err = s.Links.UpdateLink(ctx, other.ID, theirs.ID, link.LinkUpdate{Alias: ptr(alias)}, nil)
		wantCode(t, err, link.ECONFLICT)
	}

	// The workspace that held "promo" takes it back; the hold is gone, so
	// deleting again starts a new one.
	back := mustLink(t, s, ws.ID, &link.Link{Alias: "promo", DestinationURL: "https://example.com/again"})
	if l, err := s.Links.FindLinkByAlias(ctx, "", "promo"); err != nil || l.ID != back.ID {
		t.Fatalf("promo after taking it back: %v, %v", l, err)
	}
	// Renaming back onto a held alias of the same workspace works too.
	if _, err := s.Links.UpdateLink(ctx, ws.ID, renamed.ID, link.LinkUpdate{Alias: ptr("sale")}, nil); err != nil {
		t.Fatal(err)
	}
	// Now "sale2" is held. A moment before the end of the hold it still is.
	s.Clock.Add(storage.DefaultAliasHold - time.Second)
	err := s.Links.CreateLink(ctx, &link.Link{WorkspaceID: other.ID, Alias: "sale2", DestinationURL: "https://evil.example/"})
	wantCode(t, err, link.ECONFLICT)
	// Once it ends, the alias is anyone's.
	s.Clock.Add(time.Second)
	mustLink(t, s, other.ID, &link.Link{Alias: "sale2", DestinationURL: "https://example.org/"})

	// Holds survive a restart (they are in the file).
	if err := s.Links.DeleteLink(ctx, ws.ID, back.ID); err != nil {
		t.Fatal(err)
	}
	s = newServices(MustReopen(t, s.DB, s.Clock), s.Clock)
	err = s.Links.CreateLink(ctx, &link.Link{WorkspaceID: other.ID, Alias: "promo", DestinationURL: "https://evil.example/"})
	wantCode(t, err, link.ECONFLICT)
}

// An alias hold is per domain like the alias, and a hold of 0 frees an
// alias at once.
func TestAliasHoldDomainsAndOff(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	mustVerifiedDomain(t, s, ws.ID, "go.example.com")
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "x", Domain: "go.example.com", DestinationURL: "https://example.com/"})
	if err := s.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	// The primary host's "x" is another alias.
	mustLink(t, s, other.ID, &link.Link{Alias: "x", DestinationURL: "https://example.com/"})

	s.Links.AliasHold = 0
	l = mustLink(t, s, ws.ID, &link.Link{Alias: "free", DestinationURL: "https://example.com/"})
	if err := s.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	mustLink(t, s, other.ID, &link.Link{Alias: "free", DestinationURL: "https://example.com/"})
}

// PruneAliasHolds drops the holds that ended, and only those.
func TestPruneAliasHolds(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	for _, alias := range []string{"a1", "a2"} {
		l := mustLink(t, s, ws.ID, &link.Link{Alias: alias, DestinationURL: "https://example.com/"})
		if err := s.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
			t.Fatal(err)
		}
		s.Clock.Add(time.Hour)
	}
	// At the end of a1's hold, a2's runs for another hour.
	n, err := s.Links.PruneAliasHolds(ctx, t0.Add(storage.DefaultAliasHold))
	if err != nil || n != 1 {
		t.Fatalf("PruneAliasHolds = %d, %v; want 1", n, err)
	}
	s.Clock.Add(-2 * time.Hour)
	wantCode(t, s.Links.CreateLink(ctx, &link.Link{WorkspaceID: other.ID, Alias: "a2", DestinationURL: "https://e.example/"}), link.ECONFLICT)
	n, err = s.Links.PruneAliasHolds(ctx, t0.Add(storage.DefaultAliasHold+time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("second PruneAliasHolds = %d, %v; want 1", n, err)
	}
	mustLink(t, s, other.ID, &link.Link{Alias: "a2", DestinationURL: "https://e.example/"})
}
