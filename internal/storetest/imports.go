package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var importTests = []test{
	{"DryRunRenameRerun", testImports},
}

func testImports(t *testing.T, e *env) {
	_, ws := e.setup()
	e.webhook(ws.ID, link.EventTypes...)
	created := time.Date(2021, 4, 1, 8, 30, 0, 0, time.UTC)
	clickAt := time.Date(2021, 4, 2, 9, 15, 0, 0, time.UTC)
	batch := func(dry bool) *link.ImportBatch {
		b := &link.ImportBatch{Source: "test", DryRun: dry, Items: []link.ImportItem{
			{Key: "a", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/a", Alias: "a", CreatedAt: created, Tags: []string{"old"}, RedirectCode: 302},
				Clicks:  []link.Click{{Time: clickAt, Referrer: "direct", Browser: "Firefox", OS: "Linux", Device: "desktop", Country: "DE", Visitor: 1}},
				Undated: 1000, UndatedAt: created},
			{Key: "b", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/b", Alias: "a", RedirectCode: 302}, Rename: true},
			{Key: "c", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/c", Alias: "a", RedirectCode: 302}},
		}}
		if dry {
			b.Claimed = link.NewNameSet()
		}
		return b
	}
	dry := batch(true)
	if err := e.Imports.ImportLinks(e.ctx, ws.ID, dry); err != nil {
		t.Fatal(err)
	}
	if got := []link.ImportStatus{dry.Items[0].Status, dry.Items[1].Status, dry.Items[2].Status}; !slices.Equal(got, []link.ImportStatus{link.ImportImported, link.ImportImported, link.ImportSkipped}) {
		t.Fatalf("dry run: %v", got)
	}
	if _, err := e.Links.FindLinkByAlias(e.ctx, "", "a"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a dry run stored a link: %v", err)
	}

	b := batch(false)
	if err := e.Imports.ImportLinks(e.ctx, ws.ID, b); err != nil {
		t.Fatal(err)
	}
	if b.Items[0].Status != link.ImportImported || b.Items[0].Alias != "a" || b.Items[0].LinkID == "" ||
		b.Items[1].Status != link.ImportImported || b.Items[1].Alias == "a" || b.Items[1].Alias == "" ||
		b.Items[2].Status != link.ImportSkipped || b.Items[2].Reason == "" {
		t.Fatalf("imported items: %+v", b.Items)
	}
	l, err := e.Links.FindLinkByID(e.ctx, ws.ID, b.Items[0].LinkID)
	if err != nil || l.Clicks != 1001 || !l.CreatedAt.Equal(created) || !slices.Equal(l.Tags, []string{"old"}) {
		t.Fatalf("imported link = %+v, %v; want 1001 clicks, created %v", l, err, created)
	}
	if got, err := e.Links.FindLinkByAlias(e.ctx, "", b.Items[1].Alias); err != nil || got.ID != b.Items[1].LinkID || got.DestinationURL != "https://example.com/b" {
		t.Fatalf("the renamed link = %+v, %v", got, err)
	}
	st := e.stats(link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: l.ID,
		Start: time.Date(2021, 4, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2021, 4, 3, 0, 0, 0, 0, time.UTC)})
	if st.Clicks != 1001 || len(st.Hourly) != 2 || st.Hourly[0].Clicks != 1000 || st.Hourly[1].Clicks != 1 {
		t.Fatalf("imported analytics = %+v", st)
	}
	if ws, err := e.Workspaces.FindWorkspaceByID(e.ctx, ws.ID); err != nil || !ws.AnalyticsSince().Equal(created) {
		t.Fatalf("the workspace's analytics start at %v, %v; want the imported link's creation %v", ws.AnalyticsSince(), err, created)
	}

	// A rerun adds nothing.
	again := batch(false)
	if err := e.Imports.ImportLinks(e.ctx, ws.ID, again); err != nil {
		t.Fatal(err)
	}
	for i, it := range again.Items[:2] {
		if it.Status != link.ImportExists || it.LinkID != b.Items[i].LinkID {
			t.Fatalf("rerun item %d: %+v", i, it)
		}
	}
	if got := e.clicksOf(l); got != 1001 {
		t.Fatalf("after a rerun the link counts %d clicks", got)
	}
	if p := e.page(link.LinkFilter{WorkspaceID: ws.ID}); p.Total != 2 {
		t.Fatalf("%d links after a rerun, want 2", p.Total)
	}
	// Imports send no webhook events.
	if evs := e.eventsOf(ws.ID); len(evs) != 0 {
		t.Fatalf("an import wrote events: %+v", evs)
	}
	wantCode(t, e.Imports.ImportLinks(e.ctx, "ws_unknown", batch(false)), link.ENOTFOUND)
}
