package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// TestImportsWithoutClicks: the import conformance test's links without
// their clicks: a dry run writes nothing and claims its aliases for the
// next batch, a taken alias is skipped or renamed, an alias already
// leading to the same URL is that link, a rerun adds nothing, the
// workspace's analytics start at the oldest imported link, and no event
// is written.
func TestImportsWithoutClicks(t *testing.T) {
	t.Parallel()
	stores, _, clock, ws, other := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	w := &link.Webhook{WorkspaceID: ws.ID, URL: "https://hooks.example.com/all", Events: link.EventTypes, Enabled: true, Secret: "whsec_x"}
	if err := s.Webhooks.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := s.Links.CreateLink(ctx, newLink(ws.ID, "same")); err != nil {
		t.Fatal(err)
	}
	if err := s.Links.CreateLink(ctx, newLink(other.ID, "theirs")); err != nil {
		t.Fatal(err)
	}
	baseEvents, err := s.Campaigns.FindEvents(ctx, ws.ID, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Hour)
	created := time.Date(2021, 4, 1, 8, 30, 0, 0, time.UTC)
	batch := func(dry bool) *link.ImportBatch {
		b := &link.ImportBatch{Source: "test", DryRun: dry, Items: []link.ImportItem{
			{Key: "a", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/a", Alias: "a", CreatedAt: created, Tags: []string{"old"}, RedirectCode: 302}},
			{Key: "b", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/b", Alias: "a", RedirectCode: 302}, Rename: true},
			{Key: "c", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/c", Alias: "a", RedirectCode: 302}},
			{Key: "d", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/same", Alias: "same", RedirectCode: 302}},
			{Key: "e", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/e", Alias: "theirs", RedirectCode: 302}},
			{Key: "f", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/f", Domain: "go.example.com", RedirectCode: 302}},
		}}
		if dry {
			b.Claimed = link.NewNameSet()
		}
		return b
	}
	statuses := func(b *link.ImportBatch) []link.ImportStatus {
		var out []link.ImportStatus
		for _, it := range b.Items {
			out = append(out, it.Status)
		}
		return out
	}
	want := []link.ImportStatus{link.ImportImported, link.ImportImported, link.ImportSkipped, link.ImportExists, link.ImportSkipped, link.ImportImported}

	dry := batch(true)
	if err := s.Imports.ImportLinks(ctx, ws.ID, dry); err != nil {
		t.Fatal(err)
	}
	if got := statuses(dry); !slices.Equal(got, want) {
		t.Fatalf("dry run: %v, want %v", got, want)
	}
	if _, err := s.Links.FindLinkByAlias(ctx, "", "a"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a dry run stored a link: %v", err)
	}
	// A later batch of the same dry run finds "a" taken.
	later := &link.ImportBatch{Source: "test", DryRun: true, Claimed: dry.Claimed, Items: []link.ImportItem{
		{Key: "g", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/g", Alias: "a", RedirectCode: 302}}}}
	if err := s.Imports.ImportLinks(ctx, ws.ID, later); err != nil || later.Items[0].Status != link.ImportSkipped {
		t.Fatalf("a later batch of a dry run: %+v, %v", later.Items[0], err)
	}

	b := batch(false)
	if err := s.Imports.ImportLinks(ctx, ws.ID, b); err != nil {
		t.Fatal(err)
	}
	if got := statuses(b); !slices.Equal(got, want) {
		t.Fatalf("import: %v, want %v", got, want)
	}
	if b.Items[0].Alias != "a" || b.Items[1].Alias != "a-2" || b.Items[2].Reason == "" || b.Items[3].Alias != "same" ||
		b.Items[5].Alias == "" || b.Items[5].Reason == "" || b.Items[5].Link.Domain != "" {
		t.Fatalf("imported items: %+v", b.Items)
	}
	l, err := s.Links.FindLinkByID(ctx, ws.ID, b.Items[0].LinkID)
	if err != nil || !l.CreatedAt.Equal(created) || !l.UpdatedAt.Equal(clock.Now().UTC().Truncate(time.Microsecond)) || !slices.Equal(l.Tags, []string{"old"}) {
		t.Fatalf("imported link = %+v, %v; want created %v", l, err, created)
	}
	if got, err := s.Links.FindLinkByAlias(ctx, "", "a-2"); err != nil || got.ID != b.Items[1].LinkID || got.DestinationURL != "https://example.com/b" {
		t.Fatalf("the renamed link = %+v, %v", got, err)
	}
	if got, err := s.Workspaces.FindWorkspaceByID(ctx, ws.ID); err != nil || !got.AnalyticsSince().Equal(created) {
		t.Fatalf("the workspace's analytics start at %v, %v; want %v", got.AnalyticsSince(), err, created)
	}

	again := batch(false)
	if err := s.Imports.ImportLinks(ctx, ws.ID, again); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, 3, 5} {
		if it := again.Items[i]; it.Status != link.ImportExists || it.LinkID != b.Items[i].LinkID || it.Alias != b.Items[i].Alias {
			t.Fatalf("rerun item %d: %+v", i, it)
		}
	}
	p, err := s.Links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: ws.ID, Page: 1, Limit: 100})
	if err != nil || p.Total != 4 {
		t.Fatalf("%d links after a rerun (%v), want 4", p.Total, err)
	}
	if evs, err := s.Campaigns.FindEvents(ctx, ws.ID, "", 1000); err != nil || len(evs) != len(baseEvents) {
		t.Fatalf("an import wrote events: %d, %v; want %d", len(evs), err, len(baseEvents))
	}
	err = s.Imports.ImportLinks(ctx, "ws_unknown", batch(false))
	if link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("an unknown workspace: %v", err)
	}
}

// TestImportsAtOnce: one batch of links with generated codes (no alias
// to take turns on) imported at once by two instances creates each link
// once; the run that came second finds them imported.
func TestImportsAtOnce(t *testing.T) {
	t.Parallel()
	stores, _, _, ws, _ := linkInstances(t, 2)
	ctx := context.Background()
	batch := func() *link.ImportBatch {
		b := &link.ImportBatch{Source: "csv"}
		for _, k := range []string{"x", "y", "z"} {
			b.Items = append(b.Items, link.ImportItem{Key: k, Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/" + k, RedirectCode: 302}})
		}
		return b
	}
	b1, b2 := batch(), batch()
	err1, err2 := both(func() error { return stores[0].Imports.ImportLinks(ctx, ws.ID, b1) },
		func() error { return stores[1].Imports.ImportLinks(ctx, ws.ID, b2) })
	if err1 != nil || err2 != nil {
		t.Fatalf("imports: %v, %v", err1, err2)
	}
	for i := range b1.Items {
		s1, s2 := b1.Items[i].Status, b2.Items[i].Status
		if !(s1 == link.ImportImported && s2 == link.ImportExists || s1 == link.ImportExists && s2 == link.ImportImported) ||
			b1.Items[i].LinkID != b2.Items[i].LinkID {
			t.Fatalf("item %d: %+v and %+v", i, b1.Items[i], b2.Items[i])
		}
	}
	p, err := stores[0].Links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: ws.ID, Page: 1, Limit: 100})
	if err != nil || p.Total != 3 {
		t.Fatalf("%d links (%v), want 3", p.Total, err)
	}
}

// TestImportedUndatedClicks: a link's undated clicks count in its total
// and in the aggregates at the hour of UndatedAt, as direct clicks of
// unknown clients, with no raw click and no visitor; its dated clicks are
// stored whole.
func TestImportedUndatedClicks(t *testing.T) {
	t.Parallel()
	stores, conn, _, ws, _ := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	at := time.Date(2021, 4, 1, 8, 30, 0, 0, time.UTC)
	b := &link.ImportBatch{Source: "test", Items: []link.ImportItem{{Key: "a",
		Link:    link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/a", Alias: "a", CreatedAt: at, RedirectCode: 302},
		Clicks:  []link.Click{{Time: at.Add(25 * time.Hour), Referrer: "t.co", Country: "DE", Visitor: 7}},
		Undated: 500, UndatedAt: at}}}
	if err := s.Imports.ImportLinks(ctx, ws.ID, b); err != nil || b.Items[0].Status != link.ImportImported {
		t.Fatalf("import: %+v, %v", b.Items[0], err)
	}
	id := b.Items[0].LinkID
	if got := count(t, conn, `SELECT clicks FROM links WHERE id = $1`, id); got != 501 {
		t.Fatalf("the link counts %d clicks, want 501", got)
	}
	if got := count(t, conn, `SELECT count(*) FROM clicks WHERE link_id = $1`, id); got != 1 {
		t.Fatalf("%d raw clicks, want the dated one", got)
	}
	if got := count(t, conn, `SELECT count(*) FROM click_visitors WHERE link_id = $1`, id); got != 1 {
		t.Fatalf("%d visitors of the link, want the dated click's", got)
	}
	st, err := s.Clicks.Stats(ctx, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: id,
		Start: at.Truncate(time.Hour), End: at.Truncate(time.Hour).Add(time.Hour), TopLimit: 10})
	if err != nil || st.Clicks != 500 || st.UniqueVisitors != 0 {
		t.Fatalf("stats of the undated hour: %+v, %v; want 500 clicks, no visitor", st, err)
	}
	only := func(dim, value string) bool {
		es := st.Top[dim]
		return len(es) == 1 && es[0] == link.TopEntry{Value: value, Clicks: 500}
	}
	if !only(link.DimReferrers, "direct") || !only(link.DimCountries, "unknown") || !only(link.DimBrowsers, "unknown") {
		t.Fatalf("the undated clicks are not direct clicks of unknown clients: %+v", st)
	}
}
