package storage_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
	bolt "go.etcd.io/bbolt"
)

// searchIDs returns the IDs of every link of the workspace matching
// search, newest first, and the page's total, reading all pages.
func searchIDs(t *testing.T, s *Services, wsID, search string) ([]string, int) {
	t.Helper()
	var ids []string
	total := -1
	for page := 1; ; page++ {
		p, err := s.Links.FindLinkPage(context.Background(), link.LinkFilter{WorkspaceID: wsID, Search: search, Limit: 100, Page: page})
		if err != nil {
			t.Fatalf("search %q: %v", search, err)
		}
		if p.Truncated {
			t.Fatalf("search %q: truncated with no scan limit", search)
		}
		total = p.Total
		for _, l := range p.Links {
			ids = append(ids, l.ID)
		}
		if len(p.Links) < 100 {
			return ids, total
		}
	}
}

// TestSearch_Fields checks that a search finds a link by a part of each
// field the index covers (alias, destination host, path and query, tag),
// in any case, and only that link, in this workspace only.
func TestSearch_Fields(t *testing.T) {
	s, u, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", u.ID)
	a := mustLink(t, s, ws.ID, &link.Link{Alias: "Spring-Sale", DestinationURL: "https://shop.example.com/catalogue/shoes?ref=news"})
	b := mustLink(t, s, ws.ID, &link.Link{Alias: "winter", DestinationURL: "https://blog.example.org/posts/Holiday-Gifts", Tags: []string{"Newsletter", "q4"}})
	mustLink(t, s, other.ID, &link.Link{Alias: "spring-other", DestinationURL: "https://shop.example.com/catalogue/shoes", Tags: []string{"newsletter"}})
	for _, tt := range []struct {
		name, search string
		want         []string
	}{
		{"alias", "ng-sa", []string{a.ID}},
		{"alias any case", "SPRING", []string{a.ID}},
		{"host", "blog.exam", []string{b.ID}},
		{"path", "catalogue/sh", []string{a.ID}},
		{"path any case", "holiday-gifts", []string{b.ID}},
		{"query", "ref=news", []string{a.ID}},
		{"tag", "letter", []string{b.ID}},
		{"several fields", "example", []string{b.ID, a.ID}},
		{"across host and path", "example.com/cat", []string{a.ID}},
		{"short: scanned", "q4", []string{b.ID}},
		{"none", "nowhere", nil},
		{"no tag text across tags", "newsletterq4", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, total := searchIDs(t, s, ws.ID, tt.search)
			if !slices.Equal(got, tt.want) || total != len(tt.want) {
				t.Fatalf("search %q: %v (total %d), want %v", tt.search, got, total, tt.want)
			}
		})
	}
}

// TestSearch_AfterUpdateAndDelete checks that a search never returns a
// link by a text it no longer has, nor a deleted link.
func TestSearch_AfterUpdateAndDelete(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "first-name", DestinationURL: "https://old.example.com/before", Tags: []string{"alpha"}})
	dest, alias, tags := "https://new.example.com/after", "second-name", []string{"beta"}
	if _, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{DestinationURL: &dest, Alias: &alias, Tags: &tags}, nil); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"old.example", "before", "first-na", "alpha"} {
		if got, total := searchIDs(t, s, ws.ID, gone); len(got) != 0 || total != 0 {
			t.Errorf("search %q after update: %v (total %d)", gone, got, total)
		}
	}
	for _, now := range []string{"new.example", "after", "second-na", "beta"} {
		if got, _ := searchIDs(t, s, ws.ID, now); !slices.Equal(got, []string{l.ID}) {
			t.Errorf("search %q after update: %v, want %s", now, got, l.ID)
		}
	}
	// Text shared by the old and the new values stays found.
	if got, _ := searchIDs(t, s, ws.ID, "example.com"); !slices.Equal(got, []string{l.ID}) {
		t.Errorf("search for kept text: %v", got)
	}
	if err := s.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"new.example", "second", "beta", "example"} {
		if got, total := searchIDs(t, s, ws.ID, q); len(got) != 0 || total != 0 {
			t.Errorf("search %q after delete: %v (total %d)", q, got, total)
		}
	}
}

// TestSearch_AgreesWithBruteForce checks the index against reading every
// link, for random links and random searches: every match is found, in
// order, and the total counts exactly the links that contain the text
// (candidates holding every trigram but not the text are not counted).
func TestSearch_AgreesWithBruteForce(t *testing.T) {
	s, _, ws := mustSetup(t, soloCreations)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	const letters = "abcab"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		return string(b)
	}
	type made struct{ id, text string }
	var links []made
	for i := range 300 {
		l := mustLink(t, s, ws.ID, &link.Link{Alias: fmt.Sprintf("x%d-%s", i, word(5)),
			DestinationURL: "https://" + word(4) + ".example.com/" + word(8), Tags: []string{word(4)}})
		links = append(links, made{l.ID, strings.ToLower(l.Alias + "\n" + l.DestinationURL + "\n" + strings.Join(l.Tags, "\n"))})
	}
	for i, l := range links {
		if i%7 == 0 { // some updates and deletions on the way
			if err := s.Links.DeleteLink(ctx, ws.ID, l.id); err != nil {
				t.Fatal(err)
			}
			links[i].text = ""
		}
	}
	for range 60 {
		q := word(3 + rng.IntN(3))
		var want []string
		for i := len(links) - 1; i >= 0; i-- {
			if links[i].text != "" && strings.Contains(links[i].text, q) {
				want = append(want, links[i].id)
			}
		}
		got, total := searchIDs(t, s, ws.ID, q)
		if !slices.Equal(got, want) || total != len(want) {
			t.Fatalf("search %q: %d links (total %d), want %d: %v, want %v", q, len(got), total, len(want), got, want)
		}
	}
}

// TestSearch_ScanLimitBoundsCandidates checks that an indexed search
// checks at most ScanLimit candidates, says so, and counts what it saw.
func TestSearch_ScanLimitBoundsCandidates(t *testing.T) {
	s, _, ws := mustSetup(t)
	var ids []string
	for i := range 8 {
		ids = append(ids, mustLink(t, s, ws.ID, &link.Link{Alias: fmt.Sprintf("page-%d", i), DestinationURL: "https://example.com/x"}).ID)
	}
	mustLink(t, s, ws.ID, &link.Link{Alias: "unrelated", DestinationURL: "https://other.test/"})
	p, err := s.Links.FindLinkPage(context.Background(), link.LinkFilter{WorkspaceID: ws.ID, Search: "page-", ScanLimit: 5, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 5 || !p.Truncated || len(p.Links) != 2 || p.Links[0].ID != ids[7] {
		t.Fatalf("total %d truncated %v links %d, want 5 true 2 starting %s", p.Total, p.Truncated, len(p.Links), ids[7])
	}
	p, err = s.Links.FindLinkPage(context.Background(), link.LinkFilter{WorkspaceID: ws.ID, Search: "page-", ScanLimit: 8})
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 8 || p.Truncated {
		t.Fatalf("total %d truncated %v, want 8 false: the unrelated link is never read", p.Total, p.Truncated)
	}
}

// TestSearch_ConcurrentCreate searches while links are created (run with
// -race): every answer holds only links that match, in order.
func TestSearch_ConcurrentCreate(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				l := &link.Link{WorkspaceID: ws.ID, Alias: fmt.Sprintf("w%d-n%d", w, i), DestinationURL: fmt.Sprintf("https://host%d.example.com/p%d", w, i)}
				if err := s.Links.CreateLink(ctx, l); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	var searches sync.WaitGroup
	for range 2 {
		searches.Add(1)
		go func() {
			defer searches.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				p, err := s.Links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: ws.ID, Search: "host2.example", Limit: 100})
				if err != nil {
					t.Error(err)
					return
				}
				if p.Total != len(p.Links) {
					t.Errorf("total %d, %d links", p.Total, len(p.Links))
					return
				}
				for i, l := range p.Links {
					if !strings.Contains(l.DestinationURL, "host2.example") || i > 0 && p.Links[i-1].CreatedAt.Before(l.CreatedAt) {
						t.Errorf("link %s (%s) out of place", l.ID, l.DestinationURL)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	searches.Wait()
	if got, total := searchIDs(t, s, ws.ID, "host2.example"); len(got) != 50 || total != 50 {
		t.Fatalf("after the creations: %d links (total %d), want 50", len(got), total)
	}
}

// TestSearchIndex_BuiltOnOpen checks that a data file without the search
// index (written before it existed) gets it built when opened, in
// batches, once, and that a build stopped halfway resumes.
func TestSearchIndex_BuiltOnOpen(t *testing.T) {
	s, _, ws := mustSetup(t)
	var want []string
	for i := range 25 {
		want = append(want, mustLink(t, s, ws.ID, &link.Link{Alias: fmt.Sprintf("old-%d", i), DestinationURL: "https://legacy.example.com/a"}).ID)
	}
	slices.Reverse(want)
	path := s.DB.Path
	if err := s.DB.Close(); err != nil {
		t.Fatal(err)
	}
	// As a file of the previous version: no index, no flag; and then as
	// one whose build stopped after the first 10 links.
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket([]byte("links.search")); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Delete([]byte("search_index_v1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	defer storage.SetSearchBuildBatch(10)()
	db := mustOpenPath(t, path, s.Clock)
	s2 := newServices(db, s.Clock)
	if got, total := searchIDs(t, s2, ws.ID, "legacy"); !slices.Equal(got, want) || total != 25 {
		t.Fatalf("after the build: %v (total %d), want %v", got, total, want)
	}
	if err := db.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
}

// TestCheck_DamagedSearchIndex checks that CheckIndexes and CheckFile
// (linkbolt check) notice an index that disagrees with the links: an
// entry missing, an entry for a link that does not hold the text, a
// value that does not decode.
func TestCheck_DamagedSearchIndex(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(b *bolt.Bucket) error
	}{
		{"entry missing", func(b *bolt.Bucket) error {
			k, _ := b.Cursor().First()
			return b.Delete(k)
		}},
		{"entry too many", func(b *bolt.Bucket) error {
			k, v := b.Cursor().First()
			k2 := append([]byte(nil), k...)
			k2[12], k2[13], k2[14] = 'z', 'z', 'q'
			return b.Put(k2, append([]byte(nil), v...))
		}},
		{"malformed value", func(b *bolt.Bucket) error {
			k, _ := b.Cursor().First()
			return b.Put(append([]byte(nil), k...), []byte{'L', 0})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, _, _ := mustDamagedSearchIndex(t, tt.damage)
			r, err := storage.CheckFile(db.Path)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() || !strings.Contains(strings.Join(r.Problems, "\n"), "links.search") {
				t.Fatalf("CheckFile problems %q, want one about links.search", r.Problems)
			}
			if err := db.Open(); err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.CheckIndexes(); err == nil || !strings.Contains(err.Error(), "links.search") {
				t.Fatalf("CheckIndexes: %v, want an error about links.search", err)
			}
		})
	}
}

// TestSearch_DamagedIndexIsAnError checks that a search whose index value
// does not decode answers an error, whichever order it lists in, rather
// than a page that silently leaves links out.
func TestSearch_DamagedIndexIsAnError(t *testing.T) {
	db, s, ws := mustDamagedSearchIndex(t, func(b *bolt.Bucket) error {
		return b.ForEach(func(k, _ []byte) error { return b.Put(append([]byte(nil), k...), []byte{'L', 0}) })
	})
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, sort := range []link.LinkSort{"", link.SortClicks} {
		p, err := s.Links.FindLinkPage(context.Background(), link.LinkFilter{WorkspaceID: ws.ID, Search: "damaged", Limit: 20, Page: 1, Sort: sort})
		if err == nil || !strings.Contains(err.Error(), "links.search") {
			t.Errorf("sort %q: page %+v, error %v; want an error about links.search", sort, p, err)
		}
	}
}

// mustDamagedSearchIndex writes a data file holding one link, "damaged",
// whose indexes check out, and applies damage to its links.search bucket
// with the file closed. It returns the closed DB, its services and the
// link's workspace.
func mustDamagedSearchIndex(t *testing.T, damage func(b *bolt.Bucket) error) (*storage.DB, *Services, *link.Workspace) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "linkbolt.db")
	db := storage.NewDB(path)
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	s := newServices(db, nil)
	u := &link.User{Email: "admin@example.com", PasswordHash: []byte("hash")}
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := s.Users.Bootstrap(context.Background(), u, ws); err != nil {
		t.Fatal(err)
	}
	mustLink(t, s, ws.ID, &link.Link{Alias: "damaged", DestinationURL: "https://example.com/x"})
	if err := db.CheckIndexes(); err != nil {
		t.Fatalf("before the damage: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(tx *bolt.Tx) error { return damage(tx.Bucket([]byte("links.search"))) }); err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	return db, s, ws
}
