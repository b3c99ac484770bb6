package storage_test

import (
	"context"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// TestIDsStableAcrossRestart: the ID key lives in the data file, so a
// record has the same ID after a restart and is found by it.
func TestIDsStableAcrossRestart(t *testing.T) {
	s, admin, ws := mustSetup(t)
	ctx := context.Background()
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "stay"})
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Stay"})
	db := MustReopen(t, s.DB, s.Clock)
	s = newServices(db, s.Clock)
	got, err := s.Links.FindLinkByAlias(ctx, "", "stay")
	if err != nil || got.ID != l.ID || got.WorkspaceID != ws.ID {
		t.Fatalf("after restart: %+v, %v; want id %s", got, err, l.ID)
	}
	if got, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID); err != nil || got.Alias != "stay" {
		t.Fatalf("by id after restart: %+v, %v", got, err)
	}
	if got, err := s.Campaigns.FindCampaignByID(ctx, ws.ID, c.ID); err != nil || got.Name != "Stay" {
		t.Fatalf("campaign after restart: %+v, %v", got, err)
	}
	if got, err := s.Users.FindUserByID(ctx, admin.ID); err != nil || got.Email != admin.Email {
		t.Fatalf("user after restart: %+v, %v", got, err)
	}
}
