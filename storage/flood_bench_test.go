package storage_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// The referrer flood of issue 9: 300,000 clicks on a few links within a
// few minutes, recorded in batches of 1,000 (one flush a second at 1,000
// clicks a second), once all with one referrer and once each with its own
// random 240-byte host name (valid: lower case, labels of at most 63).
const (
	floodClicks = 300_000
	floodBatch  = 1_000
	floodLinks  = 10
)

// floodHost returns a random valid 240-byte host name.
func floodHost(r *rand.Rand) string {
	const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	label := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alnum[r.IntN(len(alnum))]
		}
		return string(b)
	}
	// 63 + 1 + 63 + 1 + 63 + 1 + 44 + 4 = 240
	return strings.Join([]string{label(63), label(63), label(63), label(44)}, ".") + ".com"
}

// floodRun is one recorded flood: its data file and its numbers.
type floodRun struct {
	s     *Services
	ws    *link.Workspace
	path  string
	file  int64
	sizes map[string]storage.BucketSize
}

// recordFlood records the flood into a new data file in dir; random picks
// a new host name for each click.
func recordFlood(tb testing.TB, dir string, random bool) *floodRun {
	tb.Helper()
	path := filepath.Join(dir, fmt.Sprintf("flood-%v.db", random))
	db, s, ws := openBenchWorkspace(tb, path, "Flood")
	var links []*link.Link
	for i := range floodLinks {
		links = append(links, mustLink(tb, s, ws.ID, &link.Link{Alias: fmt.Sprintf("f%d", i), DestinationURL: "https://example.com/"}))
	}
	r := rand.New(rand.NewPCG(9, 9))
	g := newClickGen(3)
	start := benchNow.Add(-2 * time.Hour)
	batch := make([]link.Click, 0, floodBatch)
	for i := range floodClicks {
		c := g.click(links[r.IntN(len(links))], start.Add(time.Duration(i)*time.Millisecond))
		c.Referrer = "news.example.com"
		if random {
			c.Referrer = floodHost(r)
		}
		batch = append(batch, c)
		if len(batch) == floodBatch {
			if _, err := s.Clicks.RecordClicks(context.Background(), batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	sizes, err := db.ClickBucketSizes()
	if err != nil {
		tb.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return &floodRun{s: s, ws: ws, path: path, file: fi.Size(), sizes: sizes}
}

// BenchmarkReferrerFlood records the flood with one referrer and with
// random ones, logs the size of the data file and of each click bucket,
// and times workspace analytics of the last 30 days and of all time over
// each. Run it with
//
//	go test ./storage/ -run '^$' -bench ReferrerFlood -benchtime 20x
func BenchmarkReferrerFlood(b *testing.B) {
	dir := b.TempDir()
	runs := map[string]*floodRun{}
	for _, name := range []string{"one-referrer", "random-referrers"} {
		run := recordFlood(b, dir, name == "random-referrers")
		runs[name] = run
		b.Logf("%s: data file %.1f MB", name, float64(run.file)/1e6)
		for bucket, sz := range run.sizes {
			b.Logf("%s: %-16s %8.1f MB in use, %8.1f MB allocated", name, bucket, float64(sz.Inuse)/1e6, float64(sz.Alloc)/1e6)
		}
	}
	b.Logf("random/one file size: %.2f×", float64(runs["random-referrers"].file)/float64(runs["one-referrer"].file))
	for _, name := range []string{"one-referrer", "random-referrers"} {
		run := runs[name]
		for _, rg := range []struct {
			name       string
			start, end time.Time
		}{{"30d", benchNow.Add(-30 * 24 * time.Hour), benchNow}, {"all", time.Time{}, benchNow}} {
			b.Run(name+"/"+rg.name, func(b *testing.B) {
				f := link.StatsFilter{WorkspaceID: run.ws.ID, Scope: link.ScopeWorkspace, Start: rg.start, End: rg.end, TopLimit: 100}
				var st *link.Stats
				for b.Loop() {
					var err error
					if st, err = run.s.Clicks.Stats(context.Background(), f); err != nil {
						b.Fatal(err)
					}
				}
				if st.Clicks != floodClicks {
					b.Fatalf("clicks %d, want %d", st.Clicks, floodClicks)
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
				b.ReportMetric(float64(run.file)/1e6, "file-MB")
			})
		}
	}
	for _, run := range runs {
		run.s.DB.Close()
	}
}
