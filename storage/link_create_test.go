package storage_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

func TestCreateLink(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	camp := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	otherCamp := mustCampaign(t, s, other.ID, &link.Campaign{Name: "Foreign"})
	mustVerifiedDomain(t, s, ws.ID, "go.example.com")
	mustVerifiedDomain(t, s, ws.ID, "b.example.com")

	l := &link.Link{WorkspaceID: ws.ID, Alias: " promo ", Domain: "Go.Example.COM", DestinationURL: "https://example.com/a",
		Tags: []string{"a", "b", "a"}, UTMSource: "news", CampaignID: camp.ID}
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	if l.ID == "" || l.Alias != "promo" || l.Domain != "go.example.com" || l.RedirectCode != 302 ||
		!slices.Equal(l.Tags, []string{"a", "b"}) || !l.CreatedAt.Equal(t0) || !l.UpdatedAt.Equal(t0) {
		t.Fatalf("created = %+v", l)
	}

	for _, tt := range []struct {
		name string
		l    link.Link
		code string
		msg  string
	}{
		{"alias taken on domain", link.Link{WorkspaceID: ws.ID, Alias: "promo", Domain: "go.example.com"}, link.ECONFLICT, `alias "promo" is already taken`},
		{"same alias, primary host", link.Link{WorkspaceID: ws.ID, Alias: "promo"}, "", ""},
		// A custom domain is one workspace's, so only the primary host's
		// aliases are shared across workspaces.
		{"alias taken across workspaces", link.Link{WorkspaceID: other.ID, Alias: "promo"}, link.ECONFLICT, `alias "promo" is already taken`},
		{"domain of another workspace", link.Link{WorkspaceID: other.ID, Alias: "promo", Domain: "go.example.com"}, link.EINVALID,
			"domain: go.example.com is not a verified domain of this workspace"},
		{"same alias, other domain", link.Link{WorkspaceID: ws.ID, Alias: "promo", Domain: "b.example.com"}, "", ""},
		{"aliases are case-sensitive", link.Link{WorkspaceID: ws.ID, Alias: "Promo", Domain: "go.example.com"}, "", ""},
		{"unknown workspace", link.Link{WorkspaceID: "ws_zzz", Alias: "x1"}, link.ENOTFOUND, ""},
		{"malformed workspace", link.Link{WorkspaceID: "zzz", Alias: "x2"}, link.ENOTFOUND, ""},
		{"campaign of another workspace", link.Link{WorkspaceID: ws.ID, Alias: "x3", CampaignID: otherCamp.ID}, link.EINVALID, ""},
		{"unknown campaign", link.Link{WorkspaceID: ws.ID, Alias: "x4", CampaignID: s.DB.FormatID("cmp_", 1<<40)}, link.EINVALID, ""},
		{"malformed campaign", link.Link{WorkspaceID: ws.ID, Alias: "x5", CampaignID: "c&<x>"}, link.EINVALID, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.l
			in.DestinationURL = "https://example.com/" + tt.name
			err := s.Links.CreateLink(ctx, &in)
			wantCode(t, err, tt.code)
			if tt.msg != "" && link.ErrorMessage(err) != tt.msg {
				t.Fatalf("message = %q, want %q", link.ErrorMessage(err), tt.msg)
			}
			if err != nil && in.ID != "" {
				t.Fatal("ID set on failure")
			}
		})
	}

	got, err := s.Links.FindLinkByAlias(ctx, "GO.example.com", "promo")
	if err != nil || got.ID != l.ID || got.UTMSource != "news" || got.CampaignID != camp.ID {
		t.Fatalf("by alias = %+v, %v", got, err)
	}
	_, err = s.Links.FindLinkByAlias(ctx, "", "nope")
	wantCode(t, err, link.ENOTFOUND)
	_, err = s.Links.FindLinkByAlias(ctx, "other.example.com", "promo")
	wantCode(t, err, link.ENOTFOUND)
}

func TestCreateLink_GeneratedCodes(t *testing.T) {
	s, _, ws := mustSetup(t, soloCreations)
	seen := map[string]bool{}
	for i := range 200 {
		l := mustLink(t, s, ws.ID, &link.Link{DestinationURL: fmt.Sprintf("https://example.com/%d", i)})
		if len(l.Alias) != link.GeneratedCodeLength || !link.ValidCodeSyntax(l.Alias) || strings.ContainsAny(l.Alias, "-_") || link.IsReserved(l.Alias) {
			t.Fatalf("generated code %q", l.Alias)
		}
		if seen[l.Alias] {
			t.Fatalf("code %q generated twice", l.Alias)
		}
		seen[l.Alias] = true
		got, err := s.Links.FindLinkByAlias(context.Background(), "", l.Alias)
		if err != nil || got.ID != l.ID {
			t.Fatalf("by generated alias: %+v, %v", got, err)
		}
	}
	// Every base62 character turns up.
	chars := map[rune]bool{}
	for range 2000 {
		for _, c := range storage.NewCode() {
			chars[c] = true
		}
	}
	if len(chars) != 62 {
		t.Fatalf("%d distinct characters in codes, want 62", len(chars))
	}
}

func TestCreateLink_Concurrent(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	links := make([]*link.Link, n)
	for i := range n {
		wg.Go(func() {
			l := &link.Link{WorkspaceID: ws.ID, DestinationURL: fmt.Sprintf("https://example.com/%d", i), Tags: []string{"t" + fmt.Sprint(i%3)}}
			if i%8 == 0 {
				l.Alias = "same" // one wins, the others conflict
			}
			errs[i] = s.Links.CreateLink(ctx, l)
			links[i] = l
		})
	}
	wg.Wait()
	won, ids := 0, map[string]bool{}
	for i, err := range errs {
		if i%8 == 0 {
			if err == nil {
				won++
			} else {
				wantCode(t, err, link.ECONFLICT)
				continue
			}
		} else if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if ids[links[i].ID] {
			t.Fatalf("ID %s given twice", links[i].ID)
		}
		ids[links[i].ID] = true
		got, err := s.Links.FindLinkByID(ctx, ws.ID, links[i].ID)
		if err != nil || got.Alias != links[i].Alias || got.DestinationURL != links[i].DestinationURL {
			t.Fatalf("link %d: %+v, %v; created %+v", i, got, err, links[i])
		}
	}
	if won != 1 {
		t.Fatalf("%d creations of alias \"same\" succeeded, want 1", won)
	}
	_, total, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: ws.ID})
	if err != nil || total != len(ids) {
		t.Fatalf("total = %d, %v; want %d", total, err, len(ids))
	}
}
