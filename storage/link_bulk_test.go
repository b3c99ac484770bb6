package storage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// TestCreateLinks checks a bulk creation: the links that can be stored
// are, in one transaction, each with its link.created event and search
// index entries; an alias taken before, an alias taken by an earlier link
// of the same call, and an unknown campaign refuse their link alone.
func TestCreateLinks(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	s.Links.Events = testEncoder(t)
	mustWebhook(t, storage.NewWebhookService(s.DB), ws.ID, true, link.EventLinkCreated)
	mustLink(t, s, ws.ID, &link.Link{Alias: "taken", DestinationURL: "https://example.com/taken"})
	before := len(events(t, s, ws.ID))
	in := []*link.Link{
		{DestinationURL: "https://bulk.example.com/0", Alias: "bulk-0", Tags: []string{"bulk"}},
		{DestinationURL: "https://bulk.example.com/1", Alias: "taken"},
		{DestinationURL: "https://bulk.example.com/2", Alias: "twice"},
		{DestinationURL: "https://bulk.example.com/3", Alias: "twice"},
		{DestinationURL: "https://bulk.example.com/4", CampaignID: "cmp_nothere"},
		{DestinationURL: "https://bulk.example.com/5"},
	}
	for _, l := range in {
		l.WorkspaceID = ws.ID
	}
	errs, err := s.Links.CreateLinks(ctx, ws.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	wantCodes := []string{"", link.ECONFLICT, "", link.ECONFLICT, link.EINVALID, ""}
	for i, want := range wantCodes {
		if got := link.ErrorCode(errs[i]); errs[i] != nil && got != want || errs[i] == nil && want != "" {
			t.Errorf("link %d: error %v, want code %q", i, errs[i], want)
		}
	}
	var created []string
	for i, l := range in {
		if errs[i] != nil {
			if l.ID != "" {
				t.Errorf("refused link %d got an ID %s", i, l.ID)
			}
			continue
		}
		got, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
		if err != nil || got.DestinationURL != fmt.Sprintf("https://bulk.example.com/%d", i) || got.Alias == "" {
			t.Fatalf("link %d: %+v, %v", i, got, err)
		}
		created = append(created, l.ID)
	}
	slices.Reverse(created)
	if got, total := searchIDs(t, s, ws.ID, "bulk.example"); !slices.Equal(got, created) || total != 3 {
		t.Fatalf("search after the bulk creation: %v (total %d), want %v", got, total, created)
	}
	evs := events(t, s, ws.ID)
	if n := len(evs) - before; n != 3 {
		t.Fatalf("%d events, want one link.created for each of the 3 links", n)
	}
	for _, e := range evs[before:] {
		if e.Type != link.EventLinkCreated {
			t.Fatalf("event %s, want %s", e.Type, link.EventLinkCreated)
		}
	}
	if _, err := s.Links.CreateLinks(ctx, "ws_nothere", in[:1]); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("unknown workspace: %v", err)
	}
}
