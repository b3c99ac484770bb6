package storage_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// searchBenchLinks is the size of the workspace BenchmarkSearch reads:
// LINKBOLT_BENCH_SEARCH_LINKS, 1,000,000 by default.
func searchBenchLinks(b *testing.B) int {
	if v := os.Getenv("LINKBOLT_BENCH_SEARCH_LINKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			b.Fatalf("LINKBOLT_BENCH_SEARCH_LINKS=%q: want a number of at least 1000", v)
		}
		return n
	}
	return 1_000_000
}

// searchBenchLink is link i of the search benchmark's workspace: one of
// 1,000 hosts, one of 50 sections, a slug of its own, one of 20 tags.
func searchBenchLink(i int) *link.Link {
	return &link.Link{
		DestinationURL: fmt.Sprintf("https://shop-%d.example.com/section-%d/post-%07d?utm_source=news", i%1000, i%50, i),
		Tags:           []string{fmt.Sprintf("tag-%d", i%20)},
	}
}

// BenchmarkSearch creates a workspace of searchBenchLinks links in a data
// file through CreateLinks (1,000 a call, as POST /v1/links/bulk does;
// the rate is reported on the log) and then reads the first page of 20
// of searches as GET /v1/links does (scan limit 10,000): a search that
// one link matches, one that 1,000 links match (a host), one that every
// link matches (bounded by the scan limit), a tag, and a short search
// that is scanned.
func BenchmarkSearch(b *testing.B) {
	n := searchBenchLinks(b)
	s, _, ws := mustSetup(b)
	ctx := context.Background()
	start, cpu := time.Now(), cpuTime()
	for from := 0; from < n; from += 1000 {
		batch := make([]*link.Link, 0, 1000)
		for i := from; i < min(from+1000, n); i++ {
			l := searchBenchLink(i)
			l.WorkspaceID = ws.ID
			batch = append(batch, l)
		}
		errs, err := s.Links.CreateLinks(ctx, ws.ID, batch)
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	took := time.Since(start)
	info, err := os.Stat(s.DB.Path)
	if err != nil {
		b.Fatal(err)
	}
	cpuTook := time.Duration(cpuTime() - cpu)
	b.Logf("created %d links with CreateLinks in %v (%v of CPU): %.0f links/s, %.0f links per CPU second; data file %d MB",
		n, took.Round(time.Millisecond), cpuTook.Round(time.Millisecond), float64(n)/took.Seconds(), float64(n)/cpuTook.Seconds(), info.Size()>>20)
	for _, tt := range []struct {
		name, search string
		total        int
		truncated    bool
	}{
		{"one_link", fmt.Sprintf("post-%07d", n/2), 1, false},
		{"host_1000th", "shop-7.example", (n + 999 - 7) / 1000, false},
		{"every_link", "example.com", 10_000, true},
		{"tag", "tag-13", n / 20, n/20 > 10_000},
		{"short_scanned", "x", 0, true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			f := link.LinkFilter{WorkspaceID: ws.ID, Search: tt.search, Limit: 20, Page: 1, ScanLimit: 10_000}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				p, err := s.Links.FindLinkPage(ctx, f)
				if err != nil {
					b.Fatal(err)
				}
				if p.Truncated != tt.truncated || !tt.truncated && p.Total != tt.total {
					b.Fatalf("total %d truncated %v, want %d %v", p.Total, p.Truncated, tt.total, tt.truncated)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
