package storage_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

func TestFindLinkByID(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "mine"})
	deleted := mustLink(t, s, ws.ID, &link.Link{Alias: "gone"})
	if err := s.Links.DeleteLink(context.Background(), ws.ID, deleted.ID); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, ws, id, code string }{
		{"found", ws.ID, l.ID, ""},
		{"other workspace", other.ID, l.ID, link.ENOTFOUND},
		{"unknown", ws.ID, "lnk_zzzz", link.ENOTFOUND},
		{"deleted", ws.ID, deleted.ID, link.ENOTFOUND},
		{"malformed", ws.ID, "lnk_ZZ", link.ENOTFOUND},
		{"key id", ws.ID, strings.Replace(l.ID, "lnk_", "key_", 1), link.ENOTFOUND},
		{"malformed workspace", "", l.ID, link.ENOTFOUND},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Links.FindLinkByID(context.Background(), tt.ws, tt.id)
			wantCode(t, err, tt.code)
			if err == nil && got.Alias != "mine" {
				t.Fatalf("link = %+v", got)
			}
		})
	}
}

// TestFindLinkByAlias_Cache checks that the redirect cache never answers
// with a link older than the file: after an update (destination, alias),
// a delete, and under concurrent updates and lookups.
func TestFindLinkByAlias_Cache(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	l := &link.Link{WorkspaceID: ws.ID, Alias: "hot", DestinationURL: "https://example.com/1"}
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	dest := func(alias string) string {
		t.Helper()
		got, err := s.Links.FindLinkByAlias(ctx, "", alias)
		if link.ErrorCode(err) == link.ENOTFOUND {
			return "<none>"
		} else if err != nil {
			t.Fatal(err)
		}
		return got.DestinationURL
	}
	if got := dest("hot"); got != "https://example.com/1" {
		t.Fatalf("dest = %q", got)
	}
	d2 := "https://example.com/2"
	if _, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{DestinationURL: &d2}, nil); err != nil {
		t.Fatal(err)
	}
	if got := dest("hot"); got != d2 {
		t.Fatalf("after update dest = %q, want %q", got, d2)
	}
	// Via another LinkService over the same file: the cache is the file's.
	other := storage.NewLinkService(s.DB)
	cold := "cold"
	if _, err := other.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{Alias: &cold}, nil); err != nil {
		t.Fatal(err)
	}
	if got := dest("hot"); got != "<none>" {
		t.Fatalf("old alias still answers %q", got)
	}
	if got := dest("cold"); got != d2 {
		t.Fatalf("new alias answers %q", got)
	}
	if err := s.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	if got := dest("cold"); got != "<none>" {
		t.Fatalf("deleted link answers %q", got)
	}

	// Concurrent lookups while the destination changes: once the updates
	// are done, the lookup must see the last one.
	l = &link.Link{WorkspaceID: ws.ID, Alias: "race", DestinationURL: "https://example.com/0"}
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					s.Links.FindLinkByAlias(ctx, "", "race")
				}
			}
		}()
	}
	var last string
	for i := range 200 {
		last = fmt.Sprintf("https://example.com/%d", i+1)
		if _, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{DestinationURL: &last}, nil); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if got := dest("race"); got != last {
		t.Fatalf("after concurrent updates dest = %q, want %q", got, last)
	}
}
