package storage_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// The analytics data set of the benchmarks: 1,000,000 clicks over the 90
// days before benchNow on 10,000 links of one workspace.
const (
	benchClicks    = 1_000_000
	benchClickDays = 90
	benchBatch     = 20_000
	benchCampaigns = 20
	benchVisitors  = 200_000
)

var benchNow = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// benchDir holds the data files the benchmarks build; TestMain removes it.
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// clickSet is the built data set, shared by the benchmarks of a process.
type clickSet struct {
	s         *Services
	ws        *link.Workspace
	links     []*link.Link
	build     time.Duration // recording the clicks
	sizes     map[string]storage.BucketSize
	buildErr  error
	campaigns []string
}

var (
	benchSetOnce sync.Once
	benchSet     clickSet
)

// clickGen draws clicks with spreads like real traffic: ~50 referrers
// (direct and a few search and social hosts most often), ~30 countries,
// 4 devices, ~10 browsers, ~8 operating systems, 10% bots, 200,000
// visitors; links uniformly (the most distinct links a day, the worst
// case for the links top list).
type clickGen struct {
	r                                  *rand.Rand
	refs, countries, browsers, systems []string
	refZipf, countryZipf               *rand.Zipf
}

func newClickGen(seed uint64) *clickGen {
	g := &clickGen{r: rand.New(rand.NewPCG(seed, 42))}
	g.refs = []string{"", "www.google.com", "t.co", "news.ycombinator.com", "www.reddit.com", "www.linkedin.com", "duckduckgo.com", "www.bing.com"}
	for i := len(g.refs); i < 50; i++ {
		g.refs = append(g.refs, fmt.Sprintf("blog%d.example.com", i))
	}
	g.countries = []string{"US", "DE", "GB", "FR", "IN", "BR", "CA", "NL", "ES", "IT", "JP", "PL", "SE", "AU", "CH",
		"AT", "BE", "DK", "FI", "NO", "IE", "PT", "CZ", "MX", "AR", "KR", "SG", "ZA", "TR", "unknown"}
	g.browsers = []string{"Chrome", "Safari", "Firefox", "Edge", "Samsung Internet", "Opera", "Chrome Mobile", "Mobile Safari", "curl", "unknown"}
	g.systems = []string{"Windows", "macOS", "iOS", "Android", "Linux", "ChromeOS", "iPadOS", "unknown"}
	g.refZipf = rand.NewZipf(g.r, 1.2, 2, uint64(len(g.refs)-1))
	g.countryZipf = rand.NewZipf(g.r, 1.1, 3, uint64(len(g.countries)-1))
	return g
}

func (g *clickGen) click(l *link.Link, at time.Time) link.Click {
	v := uint64(g.r.IntN(benchVisitors) + 1)
	c := link.Click{
		LinkID: l.ID, WorkspaceID: l.WorkspaceID, CampaignID: l.CampaignID, Time: at,
		Referrer: g.refs[g.refZipf.Uint64()], Country: g.countries[g.countryZipf.Uint64()],
		Device: [...]string{"desktop", "mobile", "mobile", "tablet"}[v%4], Browser: g.browsers[v%uint64(len(g.browsers))],
		OS: g.systems[(v/3)%uint64(len(g.systems))], Visitor: v * 0x9E3779B97F4A7C15,
	}
	if v%10 == 0 {
		c.Bot, c.Device, c.Browser = true, "bot", "Googlebot"
	}
	return c
}

// openBenchWorkspace opens a new data file at path, its clock at benchNow,
// with an admin and a workspace of that name.
func openBenchWorkspace(tb testing.TB, path, name string) (*storage.DB, *Services, *link.Workspace) {
	tb.Helper()
	db := storage.NewDB(path)
	clock := clocktest.New(benchNow)
	db.Now = clock.Now
	if err := db.Open(); err != nil {
		tb.Fatal(err)
	}
	s := newServices(db, clock)
	u := &link.User{Email: "admin@example.com", PasswordHash: []byte("hash")}
	ws := &link.Workspace{Name: name, Plan: link.PlanFree}
	if err := s.Users.Bootstrap(context.Background(), u, ws); err != nil {
		tb.Fatal(err)
	}
	return db, s, ws
}

// openBenchDB opens a data file in benchDir with the clock at benchNow,
// and a workspace of 10,000 links, every 4th in one of 20 campaigns.
func openBenchDB(tb testing.TB, name string) (*Services, *link.Workspace, []*link.Link) {
	tb.Helper()
	if benchDir == "" {
		dir, err := os.MkdirTemp("", "linkbolt-clickbench-")
		if err != nil {
			tb.Fatal(err)
		}
		benchDir = dir
	}
	db, s, ws := openBenchWorkspace(tb, filepath.Join(benchDir, name+".db"), "Bench")
	campaigns := make([]string, benchCampaigns)
	for i := range campaigns {
		campaigns[i] = mustCampaign(tb, s, ws.ID, &link.Campaign{Name: fmt.Sprintf("Campaign %d", i+1)}).ID
	}
	mk := func(i int) *link.Link {
		l := &link.Link{Alias: fmt.Sprintf("c%05d", i), DestinationURL: fmt.Sprintf("https://example.com/%d", i)}
		if i%4 == 0 {
			l.CampaignID = campaigns[i/4%benchCampaigns]
		}
		return l
	}
	if err := storage.BulkCreateLinks(db, ws.ID, benchLinks10k, mk); err != nil {
		tb.Fatal(err)
	}
	links, err := allLinks(s, ws.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return s, ws, links
}

const benchLinks10k = 10_000

func allLinks(s *Services, wsID string) ([]*link.Link, error) {
	var out []*link.Link
	for page := 1; ; page++ {
		links, _, err := findLinks(context.Background(), s.Links, link.LinkFilter{WorkspaceID: wsID, Page: page, Limit: link.MaxPageLimit})
		if err != nil {
			return nil, err
		}
		out = append(out, links...)
		if len(links) < link.MaxPageLimit {
			return out, nil
		}
	}
}

// mustClickSet builds the data set once per process: the clicks are
// recorded in time order in batches of 20,000, as the recorder would
// (each batch covering about two hours of this traffic).
func mustClickSet(b *testing.B) *clickSet {
	b.Helper()
	benchSetOnce.Do(func() {
		s, ws, links := openBenchDB(b, "clicks")
		g := newClickGen(1)
		from := benchNow.Add(-benchClickDays * 24 * time.Hour)
		times := make([]time.Time, benchClicks)
		for i := range times {
			times[i] = from.Add(time.Duration(g.r.Int64N(int64(benchClickDays * 24 * time.Hour))))
		}
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		batch := make([]link.Click, 0, benchBatch)
		written := writtenBytes()
		var build time.Duration
		for i, at := range times {
			batch = append(batch, g.click(links[g.r.IntN(len(links))], at))
			if len(batch) == benchBatch || i == len(times)-1 {
				start := time.Now()
				if _, err := s.Clicks.RecordClicks(context.Background(), batch); err != nil {
					benchSet.buildErr = err
					return
				}
				build += time.Since(start)
				batch = batch[:0]
			}
		}
		sizes, err := s.DB.ClickBucketSizes()
		if err != nil {
			benchSet.buildErr = err
			return
		}
		list, err := s.Campaigns.FindCampaigns(context.Background(), ws.ID)
		if err != nil {
			benchSet.buildErr = err
			return
		}
		var campaigns []string // oldest first
		for _, c := range slices.Backward(list) {
			campaigns = append(campaigns, c.ID)
		}
		benchSet = clickSet{s: s, ws: ws, links: links, build: build, sizes: sizes, campaigns: campaigns}
		reportSizes(b, sizes, benchClicks)
		b.Logf("built %d clicks in batches of %d: %.0f clicks/s, %.0f bytes written a click (%.1f MB a batch)", benchClicks, benchBatch,
			benchClicks/build.Seconds(), float64(writtenBytes()-written)/benchClicks, float64(writtenBytes()-written)/(benchClicks/benchBatch)/1e6)
	})
	if benchSet.buildErr != nil {
		b.Fatal(benchSet.buildErr)
	}
	if benchSet.s == nil {
		b.Fatal("no data set")
	}
	return &benchSet
}

// writtenBytes returns the bytes the process has written to files so far
// (wchar of /proc/self/io), or 0 where there is no such file.
func writtenBytes() int64 {
	buf, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(buf), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// reportSizes logs the bytes per click of each click bucket.
func reportSizes(b *testing.B, sizes map[string]storage.BucketSize, clicks int) {
	var raw, agg, visitors storage.BucketSize
	for name, sz := range sizes {
		b.Logf("%-18s %7.1f bytes/click in use, %7.1f allocated", name, float64(sz.Inuse)/float64(clicks), float64(sz.Alloc)/float64(clicks))
		switch name {
		case "clicks.raw":
			raw = sz
		case "clicks.visitors":
			visitors = sz
		default:
			agg.Inuse += sz.Inuse
			agg.Alloc += sz.Alloc
		}
	}
	b.Logf("raw %.1f, aggregates %.1f, visitor sets (kept 3 days) %.1f bytes/click allocated",
		float64(raw.Alloc)/float64(clicks), float64(agg.Alloc)/float64(clicks), float64(visitors.Alloc)/float64(clicks))
}

func benchStats(b *testing.B, set *clickSet, f link.StatsFilter, wantTop bool) {
	b.Helper()
	ctx := context.Background()
	st, err := set.s.Clicks.Stats(ctx, f)
	if err != nil {
		b.Fatal(err)
	}
	if st.Clicks == 0 || wantTop && len(st.Top[link.DimLinks]) != 10 {
		b.Fatalf("stats: %d clicks, top links %v", st.Clicks, st.Top[link.DimLinks])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := set.s.Clicks.Stats(ctx, f); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

// BenchmarkStats30d answers the last 30 days with every top list.
func BenchmarkStats30d(b *testing.B) {
	set := mustClickSet(b)
	end := benchNow
	start := end.Add(-30 * 24 * time.Hour)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		b.Fatal(err)
	}
	bEnd := time.Date(2025, 5, 31, 0, 0, 0, 0, berlin)
	bStart := bEnd.AddDate(0, 0, -30)
	b.Run("workspace", func(b *testing.B) {
		benchStats(b, set, link.StatsFilter{WorkspaceID: set.ws.ID, Scope: link.ScopeWorkspace, Start: start, End: end}, true)
	})
	b.Run("workspace-berlin", func(b *testing.B) {
		benchStats(b, set, link.StatsFilter{WorkspaceID: set.ws.ID, Scope: link.ScopeWorkspace, Start: bStart, End: bEnd}, true)
	})
	b.Run("workspace-nobots", func(b *testing.B) {
		benchStats(b, set, link.StatsFilter{WorkspaceID: set.ws.ID, Scope: link.ScopeWorkspace, Start: start, End: end, ExcludeBots: true}, true)
	})
	b.Run("campaign", func(b *testing.B) {
		benchStats(b, set, link.StatsFilter{WorkspaceID: set.ws.ID, Scope: link.ScopeCampaign, ID: set.campaigns[0], Start: start, End: end}, true)
	})
	b.Run("link", func(b *testing.B) {
		benchStats(b, set, link.StatsFilter{WorkspaceID: set.ws.ID, Scope: link.ScopeLink, ID: set.links[0].ID, Start: start, End: end}, false)
	})
}

// BenchmarkStatsAll answers all time (the 90 days of clicks).
func BenchmarkStatsAll(b *testing.B) {
	set := mustClickSet(b)
	b.Run("workspace", func(b *testing.B) {
		benchStats(b, set, link.StatsFilter{WorkspaceID: set.ws.ID, Scope: link.ScopeWorkspace, End: benchNow}, true)
	})
	b.Run("workspace-berlin", func(b *testing.B) {
		berlin, _ := time.LoadLocation("Europe/Berlin")
		benchStats(b, set, link.StatsFilter{WorkspaceID: set.ws.ID, Scope: link.ScopeWorkspace, Start: time.Date(2025, 3, 1, 0, 0, 0, 0, berlin), End: time.Date(2025, 6, 1, 0, 0, 0, 0, berlin)}, true)
	})
}

// BenchmarkRecordClicks records batches of clicks, each one second of
// traffic on the 10,000 links, into a file that starts empty (batch=20000
// is 20,000 clicks a second, batch=100000 100,000); and reports the bytes
// per click the batches added.
func BenchmarkRecordClicks(b *testing.B) {
	for _, size := range []int{benchBatch, 100_000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) { benchRecordClicks(b, size) })
	}
}

func benchRecordClicks(b *testing.B, size int) {
	s, _, links := openBenchDB(b, fmt.Sprintf("record-%d", time.Now().UnixNano()))
	defer func() {
		s.DB.Close()
		os.Remove(s.DB.Path)
	}()
	g := newClickGen(2)
	ctx := context.Background()
	at := benchNow.Add(-12 * time.Hour)
	batch := make([]link.Click, size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := range batch {
			batch[j] = g.click(links[g.r.IntN(len(links))], at.Add(time.Duration(j)*time.Second/time.Duration(size)))
		}
		at = at.Add(time.Second)
		b.StartTimer()
		if _, err := s.Clicks.RecordClicks(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "clicks/s")
	sizes, err := s.DB.ClickBucketSizes()
	if err != nil {
		b.Fatal(err)
	}
	var raw, agg int
	for name, sz := range sizes {
		if name == "clicks.raw" {
			raw += sz.Alloc
		} else if name != "clicks.visitors" {
			agg += sz.Alloc
		}
	}
	b.ReportMetric(float64(raw)/float64(b.N*size), "raw-B/click")
	b.ReportMetric(float64(agg)/float64(b.N*size), "agg-B/click")
}

// BenchmarkExportClicks walks the last 30 days of raw clicks of the data
// set (about 333,000), as a CSV export would.
func BenchmarkExportClicks(b *testing.B) {
	set := mustClickSet(b)
	ctx := context.Background()
	start := benchNow.Add(-30 * 24 * time.Hour)
	var n int
	b.ResetTimer()
	for b.Loop() {
		n = 0
		if err := set.s.Clicks.ExportClicks(ctx, set.ws.ID, start, benchNow, func(*link.Click) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "clicks/s")
}
