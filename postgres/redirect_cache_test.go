package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// A redirect reads a link from memory for up to a second: a change made
// through the same store is seen at once, one made through another
// instance on the same database within the second, and a deleted link
// stops redirecting at once where it was deleted.
func TestRedirectCache(t *testing.T) {
	stores, conn, clock, ws, _ := linkInstances(t, 2)
	a, b := stores[0], stores[1]
	ctx := link.WithActor(context.Background(), link.SystemActor, "")
	l := newLink(ws.ID, "hot")
	if err := a.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	dest := func(s *link.Store) string {
		t.Helper()
		got, err := s.Links.FindLinkByAlias(ctx, "", "hot")
		if err != nil {
			t.Fatal(err)
		}
		return got.DestinationURL
	}
	if got := dest(b); got != "https://example.com/hot" {
		t.Fatalf("b reads %q", got)
	}
	// Read once by b, the link is not read again within the second: a
	// change written past linkbolt is not seen yet.
	if _, err := conn.Exec(ctx, `UPDATE links SET destination_url = 'https://example.com/sql' WHERE alias = 'hot'`); err != nil {
		t.Fatal(err)
	}
	if got := dest(b); got != "https://example.com/hot" {
		t.Fatalf("b read the database again within the second: %q", got)
	}
	// A change through a: seen by a at once, by b within the second.
	u := "https://example.com/new"
	if _, err := a.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{DestinationURL: &u}, nil); err != nil {
		t.Fatal(err)
	}
	if got := dest(a); got != u {
		t.Fatalf("a after its own change reads %q", got)
	}
	if got := dest(b); got != "https://example.com/hot" {
		t.Fatalf("b within the second reads %q", got)
	}
	clock.Add(time.Second)
	if got := dest(b); got != u {
		t.Fatalf("b a second after the change reads %q", got)
	}
	// The campaign's UTM values are part of the redirect: changed through
	// b, seen by b at once.
	c := &link.Campaign{WorkspaceID: ws.ID, Name: "Spring", Status: link.CampaignActive, UTMSource: "news"}
	if err := b.Campaigns.CreateCampaign(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{CampaignID: &c.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Links.FindLinkByAlias(ctx, "", "hot"); got.UTMSource != "news" {
		t.Fatalf("utm_source %q", got.UTMSource)
	}
	src := "mail"
	if _, err := b.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{UTMSource: &src}); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Links.FindLinkByAlias(ctx, "", "hot"); got.UTMSource != "mail" {
		t.Fatalf("utm_source after the campaign's change %q", got.UTMSource)
	}
	// Deleted through b: gone on b at once, on a within the second.
	clock.Add(time.Second)
	dest(a)
	if err := b.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Links.FindLinkByAlias(ctx, "", "hot"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("b after the deletion: %v", err)
	}
	clock.Add(time.Second)
	if _, err := a.Links.FindLinkByAlias(ctx, "", "hot"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a a second after the deletion: %v", err)
	}
	// An unknown code is not kept: created through a, found by b at once.
	if _, err := b.Links.FindLinkByAlias(ctx, "", "later"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("unknown code: %v", err)
	}
	if err := a.Links.CreateLink(ctx, newLink(ws.ID, "later")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Links.FindLinkByAlias(ctx, "", "later"); err != nil {
		t.Fatalf("a new link on the other instance: %v", err)
	}
}
