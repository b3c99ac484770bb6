package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// TestImportLinks checks the imported links, their dated and undated
// clicks against every index and aggregate (MustOpenDB's cleanup runs
// CheckIndexes, which checks that each link's counter equals its hourly
// totals), a dry run that writes nothing, and a rerun that adds nothing.
func TestImportLinks(t *testing.T) {
	s, _, ws := mustSetup(t)
	imports := storage.NewImportService(s.DB)
	ctx := context.Background()
	created := time.Date(2021, 4, 1, 8, 30, 0, 0, time.UTC)
	clickAt := time.Date(2021, 4, 2, 9, 15, 0, 0, time.UTC)
	batch := func(dry bool) *link.ImportBatch {
		return &link.ImportBatch{Source: "test", DryRun: dry, Claimed: link.NewNameSet(), Items: []link.ImportItem{
			{Key: "a", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/a", Alias: "a", CreatedAt: created, Tags: []string{"old"}},
				Clicks:  []link.Click{{Time: clickAt, Browser: "Firefox", OS: "Linux", Device: "desktop", Country: "DE", Visitor: 1}},
				Undated: 1_000_000, UndatedAt: created},
			{Key: "b", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/b", Alias: "a"}, Rename: true},
			{Key: "c", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/c", Alias: "a"}},
		}}
	}
	dry := batch(true)
	if err := imports.ImportLinks(ctx, ws.ID, dry); err != nil {
		t.Fatal(err)
	}
	if got := [3]link.ImportStatus{dry.Items[0].Status, dry.Items[1].Status, dry.Items[2].Status}; got != [3]link.ImportStatus{link.ImportImported, link.ImportImported, link.ImportSkipped} {
		t.Fatalf("dry run: %v", got)
	}
	if !dry.Claimed.Has("/a") || !dry.Claimed.Has("/a-2") || dry.Claimed.Len() != 2 {
		t.Fatalf("claimed: %d aliases", dry.Claimed.Len())
	}
	if _, err := s.Links.FindLinkByAlias(ctx, "", "a"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a dry run wrote a link: %v", err)
	}

	b := batch(false)
	b.Claimed = nil
	if err := imports.ImportLinks(ctx, ws.ID, b); err != nil {
		t.Fatal(err)
	}
	if b.Items[1].Alias != "a-2" || b.Items[2].Status != link.ImportSkipped {
		t.Fatalf("items: %+v", b.Items)
	}
	l, err := s.Links.FindLinkByID(ctx, ws.ID, b.Items[0].LinkID)
	if err != nil {
		t.Fatal(err)
	}
	if l.Clicks != 1_000_001 || !l.CreatedAt.Equal(created) {
		t.Fatalf("link: %d clicks, created %v", l.Clicks, l.CreatedAt)
	}
	st, err := s.Clicks.Stats(ctx, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: l.ID,
		Start: time.Date(2021, 4, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2021, 4, 3, 0, 0, 0, 0, time.UTC), TopLimit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Hourly) != 2 || st.Hourly[0].Clicks != 1_000_000 || st.Hourly[1].Clicks != 1 || st.UniqueVisitors != 1 {
		t.Fatalf("stats: %+v", st)
	}

	again := batch(false)
	again.Claimed = nil
	if err := imports.ImportLinks(ctx, ws.ID, again); err != nil {
		t.Fatal(err)
	}
	for i, it := range again.Items[:2] {
		if it.Status != link.ImportExists || it.LinkID != b.Items[i].LinkID {
			t.Fatalf("rerun item %d: %+v", i, it)
		}
	}
	if l, _ := s.Links.FindLinkByID(ctx, ws.ID, l.ID); l.Clicks != 1_000_001 {
		t.Fatalf("rerun: %d clicks", l.Clicks)
	}
	// The raw click is exported like a live one; no link.clicked event.
	var exported int
	if err := s.Clicks.ExportClicks(ctx, ws.ID, time.Unix(0, 0), time.Now(), func(*link.Click) error { exported++; return nil }); err != nil || exported != 1 {
		t.Fatalf("export: %d, %v", exported, err)
	}
}
