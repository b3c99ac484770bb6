package storetest

import (
	"errors"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

var bulkEditTests = []test{
	{"UpdateLinks", testUpdateLinks},
	{"DeleteLinks", testDeleteLinks},
}

// testUpdateLinks: one patch applied to many links at once, each checked
// by validate; a link of another workspace, an unknown or repeated ID
// and a refused link fail alone; the tag counts and the alias index
// follow; an alias change is refused.
func testUpdateLinks(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	a := e.link(ws.ID, &link.Link{Alias: "a", Tags: []string{"old"}})
	b := e.link(ws.ID, &link.Link{Alias: "b"})
	c := e.link(ws.ID, &link.Link{Alias: "c"})
	theirs := e.link(other.ID, &link.Link{Alias: "theirs"})
	tags := []string{"new"}
	src := "bulk"
	refuse := link.Errorf(link.EINVALID, "refused")
	ids := []string{a.ID, theirs.ID, b.ID, "lnk_unknown", a.ID, c.ID}
	out, errs, err := e.Links.UpdateLinks(e.ctx, ws.ID, ids, link.LinkUpdate{Tags: &tags, UTMSource: &src},
		func(l *link.Link) error {
			if l.ID == c.ID {
				return refuse
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", link.ENOTFOUND, "", link.ENOTFOUND, link.ENOTFOUND, "refused"} {
		switch got := errs[i]; {
		case want == "" && (got != nil || out[i] == nil || out[i].UTMSource != "bulk" || len(out[i].Tags) != 1 || out[i].Tags[0] != "new"):
			t.Fatalf("item %d: %+v, %v", i, out[i], got)
		case want == "refused" && !errors.Is(got, refuse):
			t.Fatalf("item %d: %v, want validate's error", i, got)
		case want == link.ENOTFOUND && link.ErrorCode(got) != link.ENOTFOUND:
			t.Fatalf("item %d: %v, want not found", i, got)
		}
	}
	if got, _ := e.Links.FindLinkByID(e.ctx, ws.ID, c.ID); got.UTMSource == "bulk" {
		t.Fatal("the refused link changed")
	}
	if got, _ := e.Links.FindLinkByID(e.ctx, other.ID, theirs.ID); got.UTMSource == "bulk" {
		t.Fatal("another workspace's link changed")
	}
	if p, err := e.Links.FindLinkPage(e.ctx, link.LinkFilter{WorkspaceID: ws.ID, Tags: []string{"new"}, Limit: 10}); err != nil || p.Total != 2 {
		t.Fatalf("links tagged new: %+v, %v", p, err)
	}
	if p, _ := e.Links.FindLinkPage(e.ctx, link.LinkFilter{WorkspaceID: ws.ID, Tags: []string{"old"}, Limit: 10}); p.Total != 0 {
		t.Fatalf("links still tagged old: %d", p.Total)
	}
	alias := "x"
	_, _, err = e.Links.UpdateLinks(e.ctx, ws.ID, []string{a.ID}, link.LinkUpdate{Alias: &alias}, nil)
	wantCode(t, err, link.EINVALID)
	_, _, err = e.Links.UpdateLinks(e.ctx, "ws_unknown", []string{a.ID}, link.LinkUpdate{UTMSource: &src}, nil)
	wantCode(t, err, link.ENOTFOUND)
}

// testDeleteLinks: many links removed at once, their aliases held for the
// workspace; another workspace's, unknown and repeated IDs fail alone.
func testDeleteLinks(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	a := e.link(ws.ID, &link.Link{Alias: "a", Tags: []string{"t"}})
	b := e.link(ws.ID, &link.Link{Alias: "b"})
	keep := e.link(ws.ID, &link.Link{Alias: "keep"})
	theirs := e.link(other.ID, &link.Link{Alias: "theirs"})
	errs, err := e.Links.DeleteLinks(e.ctx, ws.ID, []string{a.ID, theirs.ID, b.ID, a.ID, "lnk_unknown"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", link.ENOTFOUND, "", link.ENOTFOUND, link.ENOTFOUND} {
		if got := link.ErrorCode(errs[i]); (want == "") != (errs[i] == nil) || want != "" && got != want {
			t.Fatalf("item %d: %v, want %q", i, errs[i], want)
		}
	}
	for _, id := range []string{a.ID, b.ID} {
		_, err := e.Links.FindLinkByID(e.ctx, ws.ID, id)
		wantCode(t, err, link.ENOTFOUND)
	}
	if _, err := e.Links.FindLinkByID(e.ctx, ws.ID, keep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Links.FindLinkByID(e.ctx, other.ID, theirs.ID); err != nil {
		t.Fatal(err)
	}
	if p, _ := e.Links.FindLinkPage(e.ctx, link.LinkFilter{WorkspaceID: ws.ID, Limit: 10}); p.Total != 1 {
		t.Fatalf("links left: %d", p.Total)
	}
	// The aliases are held for the workspace: another cannot take them.
	taken := &link.Link{WorkspaceID: other.ID, Alias: "a", DestinationURL: "https://example.com/"}
	taken.Normalize()
	wantCode(t, e.Links.CreateLink(e.ctx, taken), link.ECONFLICT)
}
