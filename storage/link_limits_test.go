package storage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// TestLinkLimits_StoredAndArchivedLists: the controls are stored and read
// back, and the archived filter lists with the right totals, alone and
// with a tag or a search, as links are archived, unarchived and deleted.
func TestLinkLimits_StoredAndArchivedLists(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	exp := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	var ids []string
	for i := range 6 {
		l := &link.Link{WorkspaceID: ws.ID, Alias: fmt.Sprintf("a%d", i), DestinationURL: fmt.Sprintf("https://example.com/%d", i),
			Tags: []string{"t"}}
		l.Archived = i%2 == 0
		if i == 0 {
			l.ExpiresAt, l.MaxClicks, l.ExpiredURL, l.Title = &exp, 7, "https://example.com/over", "Zero"
		}
		if err := s.Links.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	got, err := s.Links.FindLinkByID(ctx, ws.ID, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) || got.MaxClicks != 7 || got.ExpiredURL != "https://example.com/over" || got.Title != "Zero" || !got.Archived {
		t.Fatalf("read back %+v", got.LinkLimits)
	}
	total := func(f link.LinkFilter) string {
		f.WorkspaceID = ws.ID
		p, err := s.Links.FindLinkPage(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range p.Links {
			out = append(out, l.Alias)
		}
		return fmt.Sprintf("%v %d", out, p.Total)
	}
	check := func(when string, want map[link.ArchivedFilter]string) {
		t.Helper()
		for f, w := range want {
			if got := total(link.LinkFilter{Archived: f}); got != w {
				t.Errorf("%s, archived=%q: %s, want %s", when, f, got, w)
			}
			if got := total(link.LinkFilter{Archived: f, Tags: []string{"t"}}); got != w {
				t.Errorf("%s, archived=%q with a tag: %s, want %s", when, f, got, w)
			}
			if got := total(link.LinkFilter{Archived: f, Search: "example.com"}); got != w {
				t.Errorf("%s, archived=%q with a search: %s, want %s", when, f, got, w)
			}
		}
	}
	check("created", map[link.ArchivedFilter]string{
		"": "[a5 a3 a1] 3", link.ArchivedExclude: "[a5 a3 a1] 3",
		link.ArchivedOnly: "[a4 a2 a0] 3", link.ArchivedAll: "[a5 a4 a3 a2 a1 a0] 6",
	})
	no, yes := false, true
	if _, err := s.Links.UpdateLink(ctx, ws.ID, ids[0], link.LinkUpdate{Limits: link.LinkLimitsUpdate{Archived: &no}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Links.UpdateLink(ctx, ws.ID, ids[1], link.LinkUpdate{Limits: link.LinkLimitsUpdate{Archived: &yes}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Links.DeleteLink(ctx, ws.ID, ids[2]); err != nil {
		t.Fatal(err)
	}
	check("changed", map[link.ArchivedFilter]string{
		"": "[a5 a3 a0] 3", link.ArchivedOnly: "[a4 a1] 2", link.ArchivedAll: "[a5 a4 a3 a1 a0] 5",
	})
	for _, id := range []string{ids[1], ids[4]} {
		if err := s.Links.DeleteLink(ctx, ws.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	check("none archived", map[link.ArchivedFilter]string{
		"": "[a5 a3 a0] 3", link.ArchivedOnly: "[] 0", link.ArchivedAll: "[a5 a3 a0] 3",
	})
}
