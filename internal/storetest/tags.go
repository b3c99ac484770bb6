package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var tagTests = []test{
	{"ColoursAndCounts", testTags},
	{"Bound", testTagBound},
}

// tagView is what a test compares of a tag.
func tagView(t *link.Tag) string {
	return fmt.Sprintf("%s/%s/%s/%d", t.Name, t.Color, t.Description, t.Links)
}

// testTags: the workspace's tags are those its links carry (counted,
// archived links too) and those with a colour or description, by name;
// a colour survives the last link dropping the tag; clearing and deleting
// forget it; another workspace sees none of it; a restart keeps it.
func testTags(t *testing.T, e *env) {
	owner, ws := e.setup()
	other := e.workspace("Other", owner)
	a := e.link(ws.ID, &link.Link{Alias: "t1", Tags: []string{"promo", "Spring sale"}})
	e.link(ws.ID, &link.Link{Alias: "t2", Tags: []string{"promo"}, LinkLimits: link.LinkLimits{Archived: true}})
	e.link(other.ID, &link.Link{Alias: "t3", Tags: []string{"promo"}})
	list := func(wsID string) string {
		t.Helper()
		ts, err := e.Tags.FindTags(e.ctx, wsID)
		if err != nil {
			t.Fatalf("FindTags: %v", err)
		}
		s := ""
		for _, x := range ts {
			s += tagView(x) + " "
		}
		return s
	}
	if got, want := list(ws.ID), "promo///2 Spring sale///1 "; got != want {
		t.Fatalf("tags of links: %q, want %q", got, want)
	}
	put := func(tag *link.Tag) *link.Tag {
		t.Helper()
		tag.Normalize()
		if err := tag.Validate(); err != nil {
			t.Fatal(err)
		}
		if err := e.Tags.PutTag(e.ctx, tag); err != nil {
			t.Fatalf("PutTag %+v: %v", tag, err)
		}
		return tag
	}
	p := put(&link.Tag{WorkspaceID: ws.ID, Name: "promo", Color: "Red", Description: "Paid promotion"})
	if tagView(p) != "promo/red/Paid promotion/2" || !p.UpdatedAt.Equal(e.now()) {
		t.Fatalf("put: %s at %v", tagView(p), p.UpdatedAt)
	}
	put(&link.Tag{WorkspaceID: ws.ID, Name: "unused", Color: "blue"})
	if got, want := list(ws.ID), "promo/red/Paid promotion/2 Spring sale///1 unused/blue//0 "; got != want {
		t.Fatalf("with colours: %q, want %q", got, want)
	}
	if got, want := list(other.ID), "promo///1 "; got != want {
		t.Fatalf("the other workspace: %q, want %q", got, want)
	}
	if got, err := e.Tags.FindTag(e.ctx, ws.ID, "promo"); err != nil || tagView(got) != "promo/red/Paid promotion/2" {
		t.Fatalf("FindTag: %+v, %v", got, err)
	}
	if got, err := e.Tags.FindTag(e.ctx, ws.ID, "Spring sale"); err != nil || tagView(got) != "Spring sale///1" || !got.UpdatedAt.IsZero() {
		t.Fatalf("FindTag of a plain tag: %+v, %v", got, err)
	}
	for _, name := range []string{"PROMO", "nothing"} {
		if _, err := e.Tags.FindTag(e.ctx, ws.ID, name); link.ErrorCode(err) != link.ENOTFOUND {
			t.Fatalf("FindTag %q: %v, want ENOTFOUND", name, err)
		}
	}
	if _, err := e.Tags.FindTag(e.ctx, other.ID, "unused"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("another workspace's colour: %v, want ENOTFOUND", err)
	}

	// The last link dropping a tag leaves its colour; a restart keeps all.
	e.clock.Add(time.Minute)
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, a.ID, link.LinkUpdate{Tags: &[]string{"promo"}}, nil); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if got, want := list(ws.ID), "promo/red/Paid promotion/2 unused/blue//0 "; got != want {
		t.Fatalf("after a restart: %q, want %q", got, want)
	}
	// Both empty clears; delete forgets; deleting again is ENOTFOUND.
	if c := put(&link.Tag{WorkspaceID: ws.ID, Name: "unused"}); c.HasInfo() || !c.UpdatedAt.IsZero() {
		t.Fatalf("cleared: %+v", c)
	}
	if err := e.Tags.DeleteTag(e.ctx, ws.ID, "promo"); err != nil {
		t.Fatal(err)
	}
	if err := e.Tags.DeleteTag(e.ctx, ws.ID, "promo"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("deleted twice: %v", err)
	}
	if err := e.Tags.DeleteTag(e.ctx, other.ID, "unused"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("delete in another workspace: %v", err)
	}
	if got, want := list(ws.ID), "promo///2 "; got != want {
		t.Fatalf("after clearing: %q, want %q", got, want)
	}
	if _, err := e.Tags.FindTags(e.ctx, "ws_nope"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("unknown workspace: %v", err)
	}
}

// testTagBound: a workspace keeps at most link.MaxTagInfos tags with a
// colour or description; changing one of them is still allowed.
func testTagBound(t *testing.T, e *env) {
	_, ws := e.setup()
	for i := range link.MaxTagInfos {
		if err := e.Tags.PutTag(e.ctx, &link.Tag{WorkspaceID: ws.ID, Name: fmt.Sprintf("t%04d", i), Color: "gray"}); err != nil {
			t.Fatal(err)
		}
	}
	err := e.Tags.PutTag(e.ctx, &link.Tag{WorkspaceID: ws.ID, Name: "one-more", Color: "red"})
	if !errors.Is(err, link.ErrTooManyTagInfos) && link.ErrorCode(err) != link.ECONFLICT {
		t.Fatalf("past the bound: %v", err)
	}
	if err := e.Tags.PutTag(e.ctx, &link.Tag{WorkspaceID: ws.ID, Name: "t0001", Color: "red"}); err != nil {
		t.Fatalf("changing one at the bound: %v", err)
	}
}
