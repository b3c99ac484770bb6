package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// testLinksNotes checks that a link's note is stored (one by one and in
// bulk), read back, changed, cleared, and found by a search line by line:
// a search never matches across the note's line breaks, on either store.
func testLinksNotes(t *testing.T, e *env) {
	_, ws := e.setup()
	long := strings.Repeat("é", link.MaxNoteLength-len("zebra")) + "zebra"
	e.link(ws.ID, &link.Link{Alias: "n1", LinkLimits: link.LinkLimits{Note: "Printed on the Spring flyer\nask Dana first"}})
	e.clock.Add(time.Minute)
	e.link(ws.ID, &link.Link{Alias: "n2", LinkLimits: link.LinkLimits{Note: long}})
	e.clock.Add(time.Minute)
	e.link(ws.ID, &link.Link{Alias: "n3"})
	e.clock.Add(time.Minute)
	bulk := []*link.Link{
		{WorkspaceID: ws.ID, Alias: "b1", DestinationURL: "https://example.com/b1", LinkLimits: link.LinkLimits{Note: "bulk note\twith a tab"}},
		{WorkspaceID: ws.ID, Alias: "b2", DestinationURL: "https://example.com/b2"},
	}
	for _, l := range bulk {
		l.Normalize()
		if err := l.Validate(nil); err != nil {
			t.Fatal(err)
		}
	}
	if errs, err := e.Links.CreateLinks(e.ctx, ws.ID, bulk); err != nil || errs[0] != nil || errs[1] != nil {
		t.Fatalf("CreateLinks: %v, %v", errs, err)
	}
	search := func(when, q string, want ...string) {
		t.Helper()
		p := e.page(link.LinkFilter{WorkspaceID: ws.ID, Search: q})
		if got := aliases(p.Links); !slices.Equal(got, want) || p.Total != len(want) {
			t.Errorf("%s: search %q = %v (total %d), want %v", when, q, got, p.Total, want)
		}
	}
	check := func(when string) {
		t.Helper()
		if got, err := e.Links.FindLinkByID(e.ctx, ws.ID, bulk[0].ID); err != nil || got.Note != "bulk note\twith a tab" {
			t.Fatalf("%s: bulk link's note = %q, %v", when, got.Note, err)
		}
		search(when, "SPRING FLYER", "n1")
		search(when, "dana", "n1")
		search(when, "zebra", "n2")
		search(when, "ra", "n2") // too short for an index: the newest links are read
		search(when, "note", "b1")
		search(when, "flyer\nask", []string{}...)
		search(when, "flyer ask", []string{}...)
		search(when, "flyerask", []string{}...)
	}
	check("created")
	got, err := e.Links.FindLinkByAlias(e.ctx, "", "n2")
	if err != nil || got.Note != long {
		t.Fatalf("note by alias: %d characters, %v", len([]rune(got.Note)), err)
	}
	e.restart()
	check("after a restart")

	// A change forgets the old words and finds the new; "" clears.
	n1 := e.page(link.LinkFilter{WorkspaceID: ws.ID, Search: "dana"}).Links[0]
	upd, err := e.Links.UpdateLink(e.ctx, ws.ID, n1.ID, link.LinkUpdate{Limits: link.LinkLimitsUpdate{Note: ptr("Reprinted\r\nfor autumn")}}, nil)
	if err != nil || upd.Note != "Reprinted\nfor autumn" {
		t.Fatalf("note changed: %q, %v", upd.Note, err)
	}
	search("changed", "dana", []string{}...)
	search("changed", "autumn", "n1")
	ids := []string{n1.ID, bulk[1].ID}
	if _, errs, err := e.Links.UpdateLinks(e.ctx, ws.ID, ids, link.LinkUpdate{Limits: link.LinkLimitsUpdate{Note: ptr("both of these")}}, nil); err != nil || errs[0] != nil || errs[1] != nil {
		t.Fatalf("UpdateLinks: %v, %v", errs, err)
	}
	search("bulk changed", "both", "b2", "n1")
	search("bulk changed", "autumn", []string{}...)
	if upd, err := e.Links.UpdateLink(e.ctx, ws.ID, n1.ID, link.LinkUpdate{Limits: link.LinkLimitsUpdate{Note: ptr("")}}, nil); err != nil || upd.Note != "" {
		t.Fatalf("note cleared: %q, %v", upd.Note, err)
	}
	search("cleared", "both", "b2")
	e.restart()
	search("cleared, after a restart", "both", "b2")
	if got, err := e.Links.FindLinkByID(e.ctx, ws.ID, n1.ID); err != nil || got.Note != "" {
		t.Fatalf("cleared note read back: %q, %v", got.Note, err)
	}
}
