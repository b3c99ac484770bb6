package storage

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// BenchmarkFlushUniform measures the click writer's flush at scale: a
// file of LINKBOLT_BENCH_LINKS links (1,000,000 unless set) that already
// took one click per link, then flushes of 20,000 clicks (the recorder's
// batch size) spread uniformly over all links, an hour's worth of them
// in the same hour, by LINKBOLT_BENCH_VISITORS visitors (5,000 unless
// set; bench/scale.sh's wrk is 1), LINKBOLT_BENCH_BATCH a flush (20,000
// unless set). It reports per flush the pages bolt allocated and
// wrote (pages/flush, MB/flush), ns/click, the file's size after, and
// the most heap in use during the flushes (peak-heap-MB, sampled every
// millisecond: what a flush of that size costs in memory, the clicks of
// the batch included).
// It uses only what every schema version has, so the same file run
// against an older tree compares the layouts:
//
//	go test ./storage/ -run '^$' -bench FlushUniform -benchtime 20x
func BenchmarkFlushUniform(b *testing.B) {
	n := benchSetting(b, "LINKBOLT_BENCH_LINKS", 1_000_000)
	visitors := uint64(benchSetting(b, "LINKBOLT_BENCH_VISITORS", 5000))
	batch := benchSetting(b, "LINKBOLT_BENCH_BATCH", 20_000)
	db := flushBenchDB(b, n)
	ws := db.ids.formatID(prefixWorkspace, 1)
	ids := make([]string, n+1)
	for i := 1; i <= n; i++ {
		ids[i] = db.ids.formatID(prefixLink, uint64(i))
	}
	cs := NewClickService(db)
	rng := rand.New(rand.NewPCG(1, 2))
	refs := []string{"", "t.co", "www.google.com", "news.ycombinator.com", "example.org"}
	countries := []string{"DE", "FR", "US", "GB", "NL", "IT"}
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	clicks := make([]link.Click, batch)
	flush := func(pick func(i int) int) {
		for i := range clicks {
			at = at.Add(time.Millisecond)
			clicks[i] = link.Click{WorkspaceID: ws, LinkID: ids[pick(i)], Time: at,
				Referrer: refs[rng.IntN(len(refs))], Country: countries[rng.IntN(len(countries))],
				Browser: "Chrome", OS: "Linux", Device: "desktop", Visitor: rng.Uint64N(visitors)}
		}
		if skipped, err := cs.RecordClicks(context.Background(), clicks); skipped != 0 || err != nil {
			b.Fatalf("record: %d skipped, %v", skipped, err)
		}
	}
	// One click per link, in random order, so every counter and blob exists.
	perm := rng.Perm(n)
	for start := 0; start < n; start += batch {
		flush(func(i int) int {
			if start+i < n {
				return perm[start+i] + 1
			}
			return rng.IntN(n) + 1
		})
	}

	before := db.db.Stats().TxStats
	runtime.GC()
	stopPeak := sampleHeapPeak()
	b.ResetTimer()
	for range b.N {
		flush(func(int) int { return rng.IntN(n) + 1 })
	}
	b.StopTimer()
	b.ReportMetric(float64(stopPeak())/1e6, "peak-heap-MB")
	st := db.db.Stats().TxStats
	pages := float64(st.GetPageAlloc()-before.GetPageAlloc()) / float64(os.Getpagesize()) / float64(b.N)
	b.ReportMetric(pages, "pages/flush")
	b.ReportMetric(pages*float64(os.Getpagesize())/1e6, "MB/flush")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/click")
	if fi, err := os.Stat(db.Path); err == nil {
		b.ReportMetric(float64(fi.Size())/1e6, "file-MB")
	}
}

// BenchmarkFlushCrawler measures flushes of 5,000 clicks of one visitor
// walking LINKBOLT_BENCH_LINKS links (1,000,000 unless set) in a random
// order within one day, a crawler: its visitor record grows by each
// flush's links. With -benchtime 200x it walks a million links; ms/flush
// is the mean of the last tenth of the flushes, when the record is
// largest.
//
//	go test ./storage/ -run '^$' -bench FlushCrawler -benchtime 200x
func BenchmarkFlushCrawler(b *testing.B) {
	const batch = 5000
	n := benchSetting(b, "LINKBOLT_BENCH_LINKS", 1_000_000)
	db := flushBenchDB(b, n)
	ws := db.ids.formatID(prefixWorkspace, 1)
	cs := NewClickService(db)
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2026, 11, 20, 1, 0, 0, 0, time.UTC)
	perm := rng.Perm(n)
	clicks := make([]link.Click, batch)
	var last time.Duration
	next := 0
	for i := range b.N {
		b.StopTimer()
		for j := range clicks {
			at = at.Add(time.Millisecond)
			clicks[j] = link.Click{WorkspaceID: ws, LinkID: db.ids.formatID(prefixLink, uint64(perm[next%n]+1)), Time: at,
				Browser: "Chrome", OS: "Linux", Device: "desktop", Visitor: 1}
			next++
		}
		b.StartTimer()
		t0 := time.Now()
		if skipped, err := cs.RecordClicks(context.Background(), clicks); skipped != 0 || err != nil {
			b.Fatalf("record: %d skipped, %v", skipped, err)
		}
		if i >= b.N-max(b.N/10, 1) {
			last += time.Since(t0)
		}
	}
	b.ReportMetric(float64(last.Microseconds())/1e3/float64(max(b.N/10, 1)), "ms/flush")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/click")
}

// flushBenchDB returns a data file in b.TempDir() with n link records,
// closed when b ends: the click writer only asks whether a link exists.
func flushBenchDB(b *testing.B, n int) *DB {
	db := NewDB(filepath.Join(b.TempDir(), "flush.db"))
	if err := db.Open(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	for start := 1; start <= n; start += 100_000 {
		err := db.db.Update(func(tx *bolt.Tx) error {
			links := tx.Bucket(bucketLinks)
			links.FillPercent = 1
			for id := start; id < start+100_000 && id <= n; id++ {
				if err := links.Put(itob(uint64(id)), []byte(`{}`)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// benchSetting is the positive number in the environment variable name,
// def when it is not set.
func benchSetting(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n
}

// sampleHeapPeak samples the heap in use every millisecond until the
// returned function is called, which returns the most it saw.
func sampleHeapPeak() func() uint64 {
	stop, done := make(chan struct{}), make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}

// BenchmarkSpillClicks measures what the writer pays to append a click to
// the click backlog during a flood (see click_backlog.go): batches of
// 20,000 classified clicks over a million link IDs, appended to a backlog
// that grows to b.N batches. Compare its ns/click with
// BenchmarkFlushUniform's, which writes the same clicks into the
// aggregates.
//
//	go test ./storage/ -run '^$' -bench SpillClicks -benchtime 50x
func BenchmarkSpillClicks(b *testing.B) {
	const batch, links = 20_000, 1_000_000
	db := NewDB(filepath.Join(b.TempDir(), "spill.db"))
	if err := db.Open(); err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ws := db.ids.formatID(prefixWorkspace, 1)
	cs := NewClickService(db)
	rng := rand.New(rand.NewPCG(1, 2))
	refs := []string{"", "t.co", "www.google.com", "news.ycombinator.com", "example.org"}
	countries := []string{"DE", "FR", "US", "GB", "NL", "IT"}
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	clicks := make([]link.Click, batch)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i := range clicks {
			at = at.Add(time.Millisecond)
			clicks[i] = link.Click{WorkspaceID: ws, LinkID: db.ids.formatID(prefixLink, uint64(rng.IntN(links)+1)), Time: at,
				Referrer: refs[rng.IntN(len(refs))], Country: countries[rng.IntN(len(countries))],
				Browser: "Chrome", OS: "Linux", Device: "desktop", Visitor: rng.Uint64()}
		}
		b.StartTimer()
		if n, skipped, err := cs.SpillClicks(context.Background(), clicks, 0); n != batch || skipped != 0 || err != nil {
			b.Fatalf("spill: %d, %d skipped, %v", n, skipped, err)
		}
	}
	b.StopTimer()
	n, size, _ := cs.Backlog(context.Background())
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/click")
	b.ReportMetric(float64(size)/float64(n), "bytes/click")
	if fi, err := os.Stat(db.Path); err == nil {
		b.ReportMetric(float64(fi.Size())/float64(n), "file-bytes/click")
	}
}
