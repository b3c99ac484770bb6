package storage_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// benchLinks is the size of the workspace the list benchmarks read.
const benchLinks = 100_000

var benchTags = []string{"alpha", "beta", "gamma", "delta", "epsilon"}

// mustBigWorkspace stores benchLinks links in one workspace: link i has
// tag benchTags[i%5], every 10th also "promo", every 7th is on a custom
// domain.
func mustBigWorkspace(b *testing.B) *Services {
	b.Helper()
	s, _, ws := mustSetup(b)
	mustVerifiedDomain(b, s, ws.ID, "go.example.com")
	err := storage.BulkCreateLinks(s.DB, ws.ID, benchLinks, func(i int) *link.Link {
		l := &link.Link{
			Alias:          fmt.Sprintf("bench%06d", i),
			DestinationURL: fmt.Sprintf("https://example.com/articles/%d?ref=bench", i),
			Tags:           []string{benchTags[i%len(benchTags)]},
		}
		if i%10 == 0 {
			l.Tags = append(l.Tags, "promo")
		}
		if i%7 == 0 {
			l.Domain = "go.example.com"
		}
		return l
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchFindLinks(b *testing.B, s *Services, f link.LinkFilter, wantLen, wantTotal int) {
	b.Helper()
	ws, err := s.Workspaces.FindMemberships(context.Background(), mustAdminID(b, s))
	if err != nil {
		b.Fatal(err)
	}
	f.WorkspaceID = ws[0].Workspace.ID
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		links, total, err := findLinks(context.Background(), s.Links, f)
		if err != nil {
			b.Fatal(err)
		}
		if len(links) != wantLen || total != wantTotal {
			b.Fatalf("got %d links of %d, want %d of %d", len(links), total, wantLen, wantTotal)
		}
	}
}

func mustAdminID(b *testing.B, s *Services) string {
	u, err := s.Users.FindUserByEmail(context.Background(), "admin@example.com")
	if err != nil {
		b.Fatal(err)
	}
	return u.ID
}

// BenchmarkFindLinksByTag reads the first page of 20 links of one tag in a
// workspace of 100,000 links.
func BenchmarkFindLinksByTag(b *testing.B) {
	s := mustBigWorkspace(b)
	benchFindLinks(b, s, link.LinkFilter{Tags: []string{"gamma"}, Page: 1, Limit: 20}, 20, benchLinks/5)
}

// BenchmarkFindLinksVariants measures the other shapes of list queries on
// the same workspace.
func BenchmarkFindLinksVariants(b *testing.B) {
	s := mustBigWorkspace(b)
	b.Run("all/page1", func(b *testing.B) {
		benchFindLinks(b, s, link.LinkFilter{Page: 1, Limit: 20}, 20, benchLinks)
	})
	b.Run("tag/page50", func(b *testing.B) {
		benchFindLinks(b, s, link.LinkFilter{Tags: []string{"gamma"}, Page: 50, Limit: 20}, 20, benchLinks/5)
	})
	b.Run("two-tags/page1", func(b *testing.B) {
		n := 0
		for i := range benchLinks {
			if i%5 == 2 || i%10 == 0 {
				n++
			}
		}
		benchFindLinks(b, s, link.LinkFilter{Tags: []string{"gamma", "promo"}, Page: 1, Limit: 20}, 20, n)
	})
	b.Run("tag+domain/page1", func(b *testing.B) {
		n := 0
		for i := range benchLinks {
			if i%5 == 2 && i%7 == 0 {
				n++
			}
		}
		benchFindLinks(b, s, link.LinkFilter{Tags: []string{"gamma"}, Domain: ptr("go.example.com"), Page: 1, Limit: 20}, 20, n)
	})
	b.Run("search/page1", func(b *testing.B) {
		benchFindLinks(b, s, link.LinkFilter{Search: "articles/9999", Page: 1, Limit: 20}, 11, 11)
	})
	// sort=clicks as the server asks it (the default scan limit), and with
	// no bound.
	b.Run("clicks/page1", func(b *testing.B) {
		benchFindLinks(b, s, link.LinkFilter{Sort: link.SortClicks, ScanLimit: 10_000, Page: 1, Limit: 20}, 20, 10_000)
	})
	b.Run("clicks-unbounded/page1", func(b *testing.B) {
		benchFindLinks(b, s, link.LinkFilter{Sort: link.SortClicks, Page: 1, Limit: 20}, 20, benchLinks)
	})
}

// BenchmarkFindLinkByAlias is the redirect's lookup.
func BenchmarkFindLinkByAlias(b *testing.B) {
	s := mustBigWorkspace(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i = (i + 7919) % benchLinks
		if _, err := s.Links.FindLinkByAlias(ctx, "", fmt.Sprintf("bench%06d", i-i%7+1)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindLinkByAliasMiss is the redirect's lookup of a link the
// redirect cache does not hold: what most redirects spread over a million
// links cost.
func BenchmarkFindLinkByAliasMiss(b *testing.B) {
	s := mustBigWorkspace(b)
	s.DB.SetAliasCacheBytes(1)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i = (i + 7919) % benchLinks
		if _, err := s.Links.FindLinkByAlias(ctx, "", fmt.Sprintf("bench%06d", i-i%7+1)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateLinkParallel creates links from 32 goroutines; bolt's
// Batch gives them shared commits.
func BenchmarkCreateLinkParallel(b *testing.B) {
	s, _, ws := mustSetup(b)
	ctx := context.Background()
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((32 + procs - 1) / procs)
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			l := &link.Link{WorkspaceID: ws.ID, DestinationURL: fmt.Sprintf("https://example.com/%d", i), Tags: []string{benchTags[i%5]}}
			if err := s.Links.CreateLink(ctx, l); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "links/s")
}

// BenchmarkCreateLinkSerial is one creation at a time, for comparison.
func BenchmarkCreateLinkSerial(b *testing.B) {
	s, _, ws := mustSetup(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		l := &link.Link{WorkspaceID: ws.ID, DestinationURL: fmt.Sprintf("https://example.com/%d", i)}
		if err := s.Links.CreateLink(ctx, l); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "links/s")
}

// BenchmarkUpdateLink changes the destination, tags and alias of links in
// the workspace of 100,000 links, one update at a time.
func BenchmarkUpdateLink(b *testing.B) {
	s := mustBigWorkspace(b)
	ctx := context.Background()
	links, _, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: mustWorkspaceID(b, s), Page: 1, Limit: 100})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		l := links[i%len(links)]
		dest := fmt.Sprintf("https://example.com/updated/%d", i)
		tags := []string{benchTags[i%len(benchTags)], "updated"}
		alias := fmt.Sprintf("upd%08d", i)
		upd := link.LinkUpdate{DestinationURL: &dest, Tags: &tags, Alias: &alias}
		if _, err := s.Links.UpdateLink(ctx, l.WorkspaceID, l.ID, upd, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func mustWorkspaceID(b *testing.B, s *Services) string {
	ws, err := s.Workspaces.FindMemberships(context.Background(), mustAdminID(b, s))
	if err != nil {
		b.Fatal(err)
	}
	return ws[0].Workspace.ID
}

// BenchmarkCreateLinks is the bulk route's storage: 1,000 links of one
// workspace in one transaction, with the aliases, destinations and tags
// of bench/scale's bulk links.
//
//	go test ./storage -run '^$' -bench 'CreateLinks$' -benchtime 100x
func BenchmarkCreateLinks(b *testing.B) {
	s, _, ws := mustSetup(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		ls := make([]*link.Link, 1000)
		for j := range ls {
			ls[j] = &link.Link{WorkspaceID: ws.ID, Alias: fmt.Sprintf("b%d", i), DestinationURL: fmt.Sprintf("https://w%d.example.com/item/%d", i%1000, i)}
			if i%100 == 0 {
				ls[j].Tags = []string{fmt.Sprintf("team-%02d", (i/100)%100)}
			}
			i++
		}
		errs, err := s.Links.CreateLinks(ctx, ws.ID, ls)
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "links/s")
}
