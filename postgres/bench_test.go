package postgres_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// benchSetting is the environment variable name as a positive number, or
// def when unset.
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

// benchStore opens a store on a new database with its first workspace,
// closed when the benchmark ends.
func benchStore(b *testing.B) (*link.Store, *link.Workspace) {
	ctx := context.Background()
	s, err := postgres.Open(ctx, postgres.Options{URL: pgtest.URL(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Data.Close() })
	ws := &link.Workspace{Name: "Bench", Plan: link.PlanFree}
	if err := s.Users.Bootstrap(ctx, &link.User{Email: "bench@example.com", PasswordHash: []byte("hash")}, ws); err != nil {
		b.Fatal(err)
	}
	return s, ws
}

// BenchmarkRecordClicksUniform measures the click writer's batches on
// PostgreSQL as the recorder sends them under uniform traffic: a database
// of LINKBOLT_BENCH_LINKS links (100,000 unless set) that already took
// one click each, then batches of LINKBOLT_BENCH_BATCH clicks (5,000
// unless set) spread uniformly over all links in one hour, by 5,000
// visitors; with LINKBOLT_BENCH_SKEWED=1, 90% of them on 1% of the links,
// as bench/scale's -skewed run. It reports ns/click: what the database
// spends on a click (bench/stores.sh measures the same under redirects at
// a million links).
//
//	go test ./postgres/ -run '^$' -bench RecordClicksUniform -benchtime 20x
func BenchmarkRecordClicksUniform(b *testing.B) {
	n := benchSetting(b, "LINKBOLT_BENCH_LINKS", 100_000)
	batch := benchSetting(b, "LINKBOLT_BENCH_BATCH", 5000)
	ctx := context.Background()
	s, ws := benchStore(b)
	ids := make([]string, 0, n)
	for start := 0; start < n; start += 1000 {
		ls := make([]*link.Link, 0, 1000)
		for i := start; i < min(n, start+1000); i++ {
			ls = append(ls, &link.Link{Alias: "m" + strconv.Itoa(i), DestinationURL: "https://example.com/" + strconv.Itoa(i), RedirectCode: 302})
		}
		errs, err := s.Links.CreateLinks(ctx, ws.ID, ls)
		if err != nil {
			b.Fatal(err)
		}
		for i, l := range ls {
			if errs[i] != nil {
				b.Fatal(errs[i])
			}
			ids = append(ids, l.ID)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	refs := []string{"", "t.co", "www.google.com", "news.ycombinator.com", "example.org"}
	countries := []string{"DE", "FR", "US", "GB", "NL", "IT"}
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	clicks := make([]link.Click, batch)
	record := func(pick func(i int) int) {
		for i := range clicks {
			at = at.Add(time.Millisecond)
			clicks[i] = link.Click{WorkspaceID: ws.ID, LinkID: ids[pick(i)], Time: at,
				Referrer: refs[rng.IntN(len(refs))], Country: countries[rng.IntN(len(countries))],
				Browser: "Chrome", OS: "Linux", Device: "desktop", Visitor: rng.Uint64N(5000)}
		}
		if skipped, err := s.Clicks.RecordClicks(ctx, clicks); skipped != 0 || err != nil {
			b.Fatalf("record: %d skipped, %v", skipped, err)
		}
	}
	perm := rng.Perm(n)
	for start := 0; start < n; start += batch {
		record(func(i int) int {
			if start+i < n {
				return perm[start+i]
			}
			return rng.IntN(n)
		})
	}
	b.ResetTimer()
	pick := func(int) int { return rng.IntN(n) }
	if os.Getenv("LINKBOLT_BENCH_SKEWED") == "1" {
		hot := max(n/100, 1)
		pick = func(int) int {
			if rng.IntN(10) < 9 {
				return rng.IntN(hot)
			}
			return rng.IntN(n)
		}
	}
	for range b.N {
		record(pick)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/click")
}

// BenchmarkCreateLinks measures the bulk route's store on PostgreSQL:
// batches of 1,000 links of bench/scale's shape (an alias, a destination
// and two tags each; LINKBOLT_BENCH_GENERATED=1 leaves the aliases to be
// generated), into a database that grows as it runs. It reports links/s.
//
//	go test ./postgres/ -run '^$' -bench CreateLinks -benchtime 50x
func BenchmarkCreateLinks(b *testing.B) {
	generated := os.Getenv("LINKBOLT_BENCH_GENERATED") == "1"
	// LINKBOLT_BENCH_NOTE=N gives each link a note of N characters of
	// words, varied per link, which its search text and the trigram index
	// take in.
	noteLen, _ := strconv.Atoi(os.Getenv("LINKBOLT_BENCH_NOTE"))
	ctx := context.Background()
	s, ws := benchStore(b)
	b.ResetTimer()
	for i := range b.N {
		ls := make([]*link.Link, 1000)
		for j := range ls {
			n := strconv.Itoa(i*1000 + j)
			ls[j] = &link.Link{DestinationURL: "https://example.com/articles/" + n, RedirectCode: 302, Tags: []string{"bench", "t" + n[len(n)-1:]}}
			if !generated {
				ls[j].Alias = "b" + n
			}
			if noteLen > 0 {
				ls[j].Note = benchNote(n, noteLen)
			}
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
	b.StopTimer()
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "links/s")
}

// benchNote is a note of n characters of words, the link's number among
// them so that notes differ.
func benchNote(num string, n int) string {
	words := []string{"printed", "flyer", "spring", "campaign", "ask", "before", "changing", "destination", num, "poster", "run"}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[(i*7+len(num))%len(words)])
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// BenchmarkCreateLink measures single creations on PostgreSQL from 32
// goroutines at once, as bench/scale's 32 clients send them, each with an
// alias of its own. It reports links/s.
//
//	go test ./postgres/ -run '^$' -bench 'CreateLink$' -benchtime 5000x
func BenchmarkCreateLink(b *testing.B) {
	s, ws := benchStore(b)
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(16) // 2 cores: 32 goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := strconv.FormatInt(next.Add(1), 10)
			l := &link.Link{WorkspaceID: ws.ID, Alias: "c" + n, DestinationURL: "https://example.com/" + n, RedirectCode: 302}
			if err := s.Links.CreateLink(ctx, l); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "links/s")
}

// BenchmarkReserveClick measures what a redirect of a link with
// max_clicks adds on PostgreSQL: the reservation of its click, one
// statement (ns/op is one reservation). With -cpu the reservations come
// from that many goroutines times 16 at once, all on the one link's row,
// as a hot limited link clicked through several instances.
//
//	go test ./postgres/ -run '^$' -bench ReserveClick -benchtime 20000x
func BenchmarkReserveClick(b *testing.B) {
	s, ws := benchStore(b)
	ctx := context.Background()
	l := &link.Link{WorkspaceID: ws.ID, Alias: "limited", DestinationURL: "https://example.com/", RedirectCode: 302}
	l.MaxClicks = 1 << 60
	if err := s.Links.CreateLink(ctx, l); err != nil {
		b.Fatal(err)
	}
	r := s.Clicks.(link.ClickReservations)
	if err := r.StartClickReservations(ctx, l.ID); err != nil {
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if ok, started, err := r.ReserveClick(ctx, l.ID, true); !ok || !started || err != nil {
				b.Fatal(ok, started, err)
			}
		}
	})
	b.Run("one-row-concurrent", func(b *testing.B) {
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if ok, started, err := r.ReserveClick(ctx, l.ID, true); !ok || !started || err != nil {
					b.Error(ok, started, err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "clicks/s")
	})
}

// BenchmarkRedirectLookupsUniform measures the reads of redirects under
// uniform traffic over LINKBOLT_BENCH_LINKS links (200,000 unless set),
// more than the redirect cache keeps, from 64 goroutines as wrk's
// connections send them: most lookups miss the cache and read the
// database. It reports lookups/s.
//
//	go test ./postgres/ -run '^$' -bench RedirectLookupsUniform -benchtime 200000x
func BenchmarkRedirectLookupsUniform(b *testing.B) {
	n := benchSetting(b, "LINKBOLT_BENCH_LINKS", 200_000)
	s, ws := benchStore(b)
	ctx := context.Background()
	for from := 0; from < n; from += 1000 {
		ls := make([]*link.Link, min(1000, n-from))
		for j := range ls {
			k := strconv.Itoa(from + j)
			ls[j] = &link.Link{Alias: "u" + k, DestinationURL: "https://example.com/" + k, RedirectCode: 302}
		}
		if _, err := s.Links.CreateLinks(ctx, ws.ID, ls); err != nil {
			b.Fatal(err)
		}
	}
	b.SetParallelism(32) // 2 cores: 64 goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			alias := "u" + strconv.Itoa(rand.IntN(n))
			l, err := s.Links.FindLinkByAlias(ctx, "", alias)
			if err != nil || l.Alias != alias {
				b.Errorf("%s: %v %v", alias, l, err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
}
