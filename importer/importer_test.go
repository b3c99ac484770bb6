package importer_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/importer"
	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// env is a real data file with one workspace.
type env struct {
	db      *storage.DB
	clock   *clocktest.Clock
	ws      string
	links   *storage.LinkService
	clicks  *storage.ClickService
	imports *storage.ImportService
}

func newEnv(t testing.TB) *env {
	t.Helper()
	clock := clocktest.New(t0)
	db := storage.NewDB(filepath.Join(t.TempDir(), "linkbolt.db"))
	db.Now = clock.Now
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	u := &link.User{Email: "owner@example.com", Name: "Owner"}
	if err := storage.NewUserService(db).CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	w := &link.Workspace{Name: "Main", Plan: link.PlanFree}
	if err := storage.NewWorkspaceService(db).CreateWorkspace(ctx, w, u.ID, 0); err != nil {
		t.Fatal(err)
	}
	return &env{db: db, clock: clock, ws: w.ID, links: storage.NewLinkService(db),
		clicks: storage.NewClickService(db), imports: storage.NewImportService(db)}
}

func (e *env) run(t *testing.T, src importer.Source, opts importer.Options) *importer.Report {
	t.Helper()
	opts.WorkspaceID, opts.Now = e.ws, e.clock.Now
	r, err := importer.Run(context.Background(), e.imports, src, opts)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return r
}

func (e *env) link(t *testing.T, domain, alias string) *link.Link {
	t.Helper()
	l, err := e.links.FindLinkByAlias(context.Background(), domain, alias)
	if err != nil {
		t.Fatalf("link %s/%s: %v", domain, alias, err)
	}
	if l, err = e.links.FindLinkByID(context.Background(), e.ws, l.ID); err != nil { // with its clicks
		t.Fatal(err)
	}
	return l
}

func (e *env) linkCount(t *testing.T) int {
	t.Helper()
	p, err := e.links.FindLinkPage(context.Background(), link.LinkFilter{WorkspaceID: e.ws, Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return p.Total
}

func fixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// items maps each report row's where to "status: reason".
func items(r *importer.Report) map[string]string {
	m := map[string]string{}
	for _, it := range r.Items {
		m[it.Where] = string(it.Status) + ": " + it.Reason
	}
	return m
}

func wantCounts(t *testing.T, r *importer.Report, imported, skipped, failed int, clicks int64) {
	t.Helper()
	if r.Imported != imported || r.Skipped != skipped || r.Failed != failed || r.Clicks != clicks {
		t.Fatalf("report: imported %d skipped %d failed %d clicks %d, want %d %d %d %d\nitems: %v",
			r.Imported, r.Skipped, r.Failed, r.Clicks, imported, skipped, failed, clicks, items(r))
	}
}

func TestRun_CSV(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	taken := &link.Link{WorkspaceID: e.ws, DestinationURL: "https://other.example/", Alias: "taken"}
	if err := e.links.CreateLink(ctx, taken); err != nil {
		t.Fatal(err)
	}

	// A dry run says what would happen and writes nothing.
	dry := e.run(t, importer.NewCSV(fixture(t, "links.csv")), importer.Options{DryRun: true})
	wantCounts(t, dry, 3, 2, 2, 42+7+0)
	if got, want := e.linkCount(t), 1; got != want {
		t.Fatalf("links after a dry run: %d, want %d", got, want)
	}

	r := e.run(t, importer.NewCSV(fixture(t, "links.csv")), importer.Options{})
	wantCounts(t, r, 3, 2, 2, 49)
	got := items(r)
	for where, want := range map[string]string{
		"line 2": "imported: ",
		"line 3": "imported: ",
		"line 4": "skipped: bad URL",
		"line 5": `skipped: alias "taken" is already taken`,
		"line 6": "imported: ",
		"line 7": `failed: created_at "yesterday-ish" is not a date`,
		"line 8": "failed: not valid CSV",
	} {
		if !strings.HasPrefix(got[where], want) {
			t.Errorf("%s: %q, want %q…", where, got[where], want)
		}
	}
	if dry.Items[0] != (importer.Item{Where: "line 2", Key: "manual", Alias: "manual", Status: link.ImportImported, LinkID: dry.Items[0].LinkID}) {
		t.Errorf("dry run item: %+v", dry.Items[0])
	}

	docs := e.link(t, "", "manual")
	if docs.DestinationURL != "https://example.com/docs" || docs.Title != "The docs" || strings.Join(docs.Tags, ",") != "docs,help" ||
		!docs.CreatedAt.Equal(time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)) || docs.Clicks != 42 {
		t.Fatalf("docs: %+v", docs)
	}
	if blog := e.link(t, "", "blog"); strings.Join(blog.Tags, ",") != "blog,news" && strings.Join(blog.Tags, ",") != "news,blog" {
		t.Fatalf("blog tags: %v", blog.Tags)
	}
	if other := e.link(t, "", "taken"); other.DestinationURL != "https://other.example/" {
		t.Fatalf("the taken alias' link was changed: %+v", other)
	}
	// The generated code of the row without an alias is in the report.
	noAlias := e.link(t, "", r.Items[4].Alias)
	if noAlias.DestinationURL != "https://example.com/no-alias" || len(noAlias.Alias) != link.GeneratedCodeLength {
		t.Fatalf("no-alias link: %+v", noAlias)
	}

	// The clicks count on the link's creation day, in the link's and the
	// workspace's analytics.
	st := stats(t, e, link.ScopeLink, docs.ID, time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC), time.Date(2024, 1, 16, 0, 0, 0, 0, time.UTC))
	if st.Clicks != 42 || len(st.Hourly) != 1 || !st.Hourly[0].Start.Equal(time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("docs analytics: %d clicks, hours %+v", st.Clicks, st.Hourly)
	}
	if ws := stats(t, e, link.ScopeWorkspace, "", time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC)); ws.Clicks != 49 {
		t.Fatalf("workspace analytics: %d clicks, want 49", ws.Clicks)
	}

	// Running it again adds nothing.
	again := e.run(t, importer.NewCSV(fixture(t, "links.csv")), importer.Options{})
	wantCounts(t, again, 0, 5, 2, 0)
	for _, it := range again.Items[:2] {
		if it.Status != link.ImportExists || it.LinkID == "" {
			t.Fatalf("rerun item: %+v", it)
		}
	}
	if got, want := e.linkCount(t), 4; got != want {
		t.Fatalf("links after a second run: %d, want %d", got, want)
	}
	if docs := e.link(t, "", "manual"); docs.Clicks != 42 {
		t.Fatalf("docs clicks after a second run: %d", docs.Clicks)
	}
}

func TestRun_RenameOnConflict(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, a := range []string{"taken", "taken-2"} {
		if err := e.links.CreateLink(ctx, &link.Link{WorkspaceID: e.ws, DestinationURL: "https://other.example/" + a, Alias: a}); err != nil {
			t.Fatal(err)
		}
	}
	// The same URL under the same alias is the same link, made by hand.
	if err := e.links.CreateLink(ctx, &link.Link{WorkspaceID: e.ws, DestinationURL: "https://example.com/blog", Alias: "blog"}); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, importer.NewCSV(fixture(t, "links.csv")), importer.Options{OnConflict: importer.ConflictRename})
	got := items(r)
	if want := `imported: alias "taken" is taken: renamed to "taken-3"`; got["line 5"] != want {
		t.Fatalf("line 5: %q, want %q", got["line 5"], want)
	}
	if want := "exists: alias already leads to the same URL"; got["line 3"] != want {
		t.Fatalf("line 3: %q, want %q", got["line 3"], want)
	}
	if l := e.link(t, "", "taken-3"); l.DestinationURL != "https://example.com/taken" || l.Clicks != 3 {
		t.Fatalf("renamed link: %+v", l)
	}
	if l := e.link(t, "", "blog"); l.Clicks != 0 {
		t.Fatalf("the link made by hand took %d imported clicks", l.Clicks)
	}
}

func TestRun_YOURLSWithLog(t *testing.T) {
	e := newEnv(t)
	r := e.run(t, importer.NewYOURLS(fixture(t, "yourls_url.csv"), fixture(t, "yourls_log.csv")), importer.Options{})
	// 2 imported; "bad url" skipped (a space in its keyword); the row
	// without a URL and the log row without a time failed.
	wantCounts(t, r, 2, 1, 2, 5+2)
	got := items(r)
	if want := "failed: click_time \"not a time\" is not a date"; got["log line 6"] != want {
		t.Fatalf("log line 6: %q", got["log line 6"])
	}
	if !strings.HasPrefix(got["line 4 (bad url)"], `skipped: alias "bad url" may contain only`) {
		t.Fatalf("line 4: %q (%v)", got["line 4 (bad url)"], got)
	}

	gh := e.link(t, "", "gh")
	if gh.Clicks != 5 || gh.Title != "linkbolt on GitHub" || !gh.CreatedAt.Equal(time.Date(2022, 5, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("gh: %+v", gh)
	}
	// Three dated clicks on the days of the log, two undated ones on the
	// day the link was made.
	day := func(d int) time.Time { return time.Date(2022, 5, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		start, end  time.Time
		clicks, bot int64
	}{
		{day(1), day(2), 2, 0},
		{day(2), day(3), 2, 0},
		{day(3), day(4), 1, 1},
		{day(4), day(31), 0, 0},
	} {
		st := stats(t, e, link.ScopeLink, gh.ID, c.start, c.end)
		if st.Clicks != c.clicks || st.BotClicks != c.bot {
			t.Errorf("gh %s: %d clicks (%d bots), want %d (%d)", c.start.Format(time.DateOnly), st.Clicks, st.BotClicks, c.clicks, c.bot)
		}
	}
	st := stats(t, e, link.ScopeLink, gh.ID, day(2), day(3))
	if len(st.Hourly) != 1 || !st.Hourly[0].Start.Equal(time.Date(2022, 5, 2, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("gh on May 2: %+v", st.Hourly)
	}
	if top := fmt.Sprint(st.Top[link.DimCountries]); top != "[{DE 1} {US 1}]" {
		t.Errorf("countries: %s", top)
	}
	if top := fmt.Sprint(st.Top[link.DimReferrers]); top != "[{direct 1} {news.ycombinator.com 1}]" {
		t.Errorf("referrers: %s", top)
	}
	if top := fmt.Sprint(st.Top[link.DimBrowsers]); top != "[{Chrome 1} {Safari 1}]" {
		t.Errorf("browsers: %s", top)
	}
	if st.UniqueVisitors != 2 {
		t.Errorf("visitors: %d", st.UniqueVisitors)
	}
	ws := stats(t, e, link.ScopeWorkspace, "", day(1), time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC))
	if ws.Clicks != 7 {
		t.Fatalf("workspace: %d clicks, want 7", ws.Clicks)
	}

	// A second run adds no click.
	again := e.run(t, importer.NewYOURLS(fixture(t, "yourls_url.csv"), fixture(t, "yourls_log.csv")), importer.Options{})
	wantCounts(t, again, 0, 3, 2, 0)
	if ws := stats(t, e, link.ScopeWorkspace, "", day(1), time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC)); ws.Clicks != 7 {
		t.Fatalf("workspace after a second run: %d clicks, want 7", ws.Clicks)
	}
}

func TestRun_Bitly(t *testing.T) {
	e := newEnv(t)
	r := e.run(t, importer.NewBitly(fixture(t, "bitly.csv")), importer.Options{})
	wantCounts(t, r, 3, 0, 1, 128+55+9)
	if got := items(r)["line 5"]; got != "failed: no long_url" {
		t.Fatalf("line 5: %q", got)
	}
	l := e.link(t, "", "3xYzAbC")
	if l.DestinationURL != "https://example.org/launch" || l.Clicks != 128 || l.Title != "Launch post" ||
		!l.CreatedAt.Equal(time.Date(2023, 6, 1, 9, 15, 0, 0, time.UTC)) || strings.Join(l.Tags, ",") != "launch" {
		t.Fatalf("bitlink: %+v", l)
	}
	// A branded domain that is not a verified domain here: the primary host.
	press := e.link(t, "", "press")
	if press.Domain != "" || !strings.Contains(items(r)["line 4 (go.example.net/press)"], "not a verified domain") {
		t.Fatalf("press: %+v %v", press, items(r))
	}
}

// failingSource hands over n links, then fails at failAt (once, the
// first time), like an API answering 500 half-way.
type failingSource struct {
	n, failAt int
	failed    bool
}

func (*failingSource) Name() string { return "flaky" }

func (s *failingSource) Each(ctx context.Context, fn func(importer.Link, *importer.RowError) error) error {
	for i := range s.n {
		if i == s.failAt && !s.failed {
			s.failed = true
			return errors.New("the source answered 500 Internal Server Error")
		}
		l := importer.Link{Key: fmt.Sprint("k", i), Alias: fmt.Sprint("l", i), URL: fmt.Sprintf("https://example.com/%d", i),
			Clicks: 3, Where: fmt.Sprint("item ", i),
			Visits: []importer.Visit{{At: time.Date(2024, 1, 1+i%28, 12, 0, 0, 0, time.UTC), UserAgent: "Mozilla/5.0 Firefox/120.0"}}}
		if err := fn(l, nil); err != nil {
			return err
		}
	}
	return nil
}

func TestRun_SourceFailsHalfWay(t *testing.T) {
	e := newEnv(t)
	src := &failingSource{n: 25, failAt: 13}
	opts := importer.Options{WorkspaceID: e.ws, Now: e.clock.Now, BatchSize: 4}
	r, err := importer.Run(context.Background(), e.imports, src, opts)
	if err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("first run: %v", err)
	}
	// What was read before the failure is imported, in every batch.
	wantCounts(t, r, 13, 0, 0, 13*3)
	if got := e.linkCount(t); got != 13 {
		t.Fatalf("links after the failure: %d", got)
	}

	r, err = importer.Run(context.Background(), e.imports, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, r, 12, 13, 0, 12*3)
	if got := e.linkCount(t); got != 25 {
		t.Fatalf("links after the rerun: %d", got)
	}
	ws := stats(t, e, link.ScopeWorkspace, "", time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC), t0.Truncate(time.Hour).Add(time.Hour))
	if ws.Clicks != 25*3 {
		t.Fatalf("workspace clicks: %d, want %d", ws.Clicks, 25*3)
	}
	for i := range 25 {
		if l := e.link(t, "", fmt.Sprint("l", i)); l.Clicks != 3 {
			t.Fatalf("l%d: %d clicks", i, l.Clicks)
		}
	}
}

func TestRun_DryRunAcrossBatches(t *testing.T) {
	e := newEnv(t)
	// The same alias twice in the file, in different batches: the dry run
	// sees the first one take it, as the real run would.
	data := "url,alias\nhttps://a.example/,same\nhttps://b.example/,x1\nhttps://c.example/,same\n"
	dry := e.run(t, importer.NewCSV(strings.NewReader(data)), importer.Options{DryRun: true, BatchSize: 1})
	real := e.run(t, importer.NewCSV(strings.NewReader(data)), importer.Options{BatchSize: 1})
	if fmt.Sprint(items(dry)) != fmt.Sprint(items(real)) {
		t.Fatalf("dry run %v, real run %v", items(dry), items(real))
	}
	wantCounts(t, real, 2, 1, 0, 0)
}

func TestRun_LongTitleAndTags(t *testing.T) {
	e := newEnv(t)
	var tags []string
	for i := range 25 {
		tags = append(tags, fmt.Sprint("tag", i, strings.Repeat("x", 60)))
	}
	data := "url,alias,title,tags\nhttps://a.example/,long," + strings.Repeat("t", 300) + ",\"" + strings.Join(tags, ",") + "\"\n"
	r := e.run(t, importer.NewCSV(strings.NewReader(data)), importer.Options{})
	wantCounts(t, r, 1, 0, 0, 0)
	l := e.link(t, "", "long")
	if len(l.Title) != link.MaxTitleLength || len(l.Tags) != link.MaxTags || len(l.Tags[0]) != link.MaxTagLength {
		t.Fatalf("title %d, tags %d: %v", len(l.Title), len(l.Tags), l.Tags)
	}
}

func TestRun_InputErrors(t *testing.T) {
	e := newEnv(t)
	_, err := importer.Run(context.Background(), e.imports, importer.NewCSV(strings.NewReader("link,name\nx,y\n")), importer.Options{WorkspaceID: e.ws})
	if !importer.IsInputError(err) || !strings.Contains(err.Error(), "no url column") {
		t.Fatalf("no url column: %v", err)
	}
}

func stats(t *testing.T, e *env, scope link.StatsScope, id string, start, end time.Time) *link.Stats {
	t.Helper()
	st, err := e.clicks.Stats(context.Background(), link.StatsFilter{WorkspaceID: e.ws, Scope: scope, ID: id, Start: start, End: end, TopLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A hostile or broken source cannot overflow the click counts nor date a
// link outside of time: such rows are skipped with their reason, the
// others imported.
func TestRun_ImplausibleClicksAndDates(t *testing.T) {
	e := newEnv(t)
	now := e.clock.Now().UTC()
	data := "url,alias,created_at,clicks\n" +
		"https://a.example/,huge,,9000000000000000000\n" +
		"https://b.example/,huge2,,9000000000000000000\n" +
		"https://c.example/,most,," + fmt.Sprint(int64(importer.MaxLinkClicks)) + "\n" +
		"https://d.example/,future,2999-01-01,5\n" +
		"https://e.example/,old,1969-12-31,5\n" +
		"https://f.example/,negative,,-3\n" +
		"https://g.example/,tomorrow," + now.Add(12*time.Hour).Format(time.RFC3339) + ",1\n"
	r := e.run(t, importer.NewCSV(strings.NewReader(data)), importer.Options{})
	wantCounts(t, r, 2, 4, 1, importer.MaxLinkClicks+1)
	got := items(r)
	for where, want := range map[string]string{
		"line 2": "skipped: clicks 9000000000000000000 is more than linkbolt counts on one link (1000000000000)",
		"line 3": "skipped: clicks 9000000000000000000 is more than linkbolt counts on one link (1000000000000)",
		"line 4": "imported: ",
		"line 5": "skipped: created_at 2999-01-01T00:00:00Z is before 2000 or in the future",
		"line 6": "skipped: created_at 1969-12-31T00:00:00Z is before 2000 or in the future",
		"line 7": `failed: clicks "-3" is not a number of clicks`,
		"line 8": "imported: ",
	} {
		if got[where] != want {
			t.Errorf("%s: %q, want %q", where, got[where], want)
		}
	}
	if l := e.link(t, "", "most"); l.Clicks != importer.MaxLinkClicks {
		t.Fatalf("link with the most clicks: %d", l.Clicks)
	}
	st := stats(t, e, link.ScopeWorkspace, "", now.Add(-48*time.Hour), now.Add(48*time.Hour))
	if st.Clicks != importer.MaxLinkClicks+1 {
		t.Fatalf("workspace clicks %d, want %d", st.Clicks, int64(importer.MaxLinkClicks+1))
	}
}

// endlessSource hands over new links without end, as a source whose
// pagination lies would.
type endlessSource struct{}

func (endlessSource) Name() string { return "endless" }

func (endlessSource) Each(ctx context.Context, fn func(importer.Link, *importer.RowError) error) error {
	for i := 0; ; i++ {
		code := fmt.Sprint("e", i)
		if err := fn(importer.Link{Key: code, Alias: code, URL: "https://example.com/" + code, Where: "link " + code}, nil); err != nil {
			return err
		}
	}
}

// TestRun_EndlessSourceEnds: Options.MaxLinks stops an import from a
// source without end (with an error; what was read is imported), a dry
// run too, and running it again carries on past the links imported before.
func TestRun_EndlessSourceEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	opts := importer.Options{WorkspaceID: e.ws, Now: e.clock.Now, MaxLinks: 2500}
	for _, dry := range []bool{true, false, false} {
		opts.DryRun = dry
		r, err := importer.Run(context.Background(), e.imports, endlessSource{}, opts)
		if err == nil || importer.IsInputError(err) || !strings.Contains(err.Error(), "run it again to carry on") {
			t.Fatalf("dry %v: %v", dry, err)
		}
		if r.Imported != 3000 {
			t.Fatalf("dry %v: imported %d, want the 3 batches that reached the bound", dry, r.Imported)
		}
	}
	if got := e.linkCount(t); got != 6000 {
		t.Fatalf("%d links after two runs, want 6000", got)
	}
}

// TestRun_ControlCharacters: a title or tag with line breaks, tabs or
// other control characters (a page title often has them) is cleaned, not
// the link left out.
func TestRun_ControlCharacters(t *testing.T) {
	e := newEnv(t)
	data := "url,alias,tags,title\nhttps://a.example/,ctl,\"x\ty|a\x01b|\x00\",\"  The\r\n\tpage\x07 title\xff \"\n"
	r := e.run(t, importer.NewCSV(strings.NewReader(data)), importer.Options{})
	wantCounts(t, r, 1, 0, 0, 0)
	l := e.link(t, "", "ctl")
	if l.Title != "The page title" || strings.Join(l.Tags, ",") != "x y,ab" {
		t.Fatalf("title %q, tags %q", l.Title, l.Tags)
	}
}

// TestRun_TooManyColumns: a row of more than MaxCSVFields fields fails the
// file before the CSV reader holds them (a line of millions of commas
// would take gigabytes); commas inside quotes do not count.
func TestRun_TooManyColumns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	quoted := "\"" + strings.Repeat(",", 5000) + "\n" + strings.Repeat(",", 5000) + "\""
	data := "url,alias,title\nhttps://a.example/,wide," + quoted + strings.Repeat(",", importer.MaxCSVFields-4) + "\n" +
		"https://b.example/,b,\"x\"\"" + strings.Repeat(",", 10) + "\"\"\"\n" +
		"https://c.example/,c" + strings.Repeat(",", 30<<20) + "\nhttps://d.example/,d\n"
	r, err := importer.Run(context.Background(), e.imports, importer.NewCSV(strings.NewReader(data)), importer.Options{WorkspaceID: e.ws, Now: e.clock.Now})
	if !importer.IsInputError(err) || !strings.Contains(err.Error(), "line 5 has more than 1000 columns") {
		t.Fatalf("error %v", err)
	}
	wantCounts(t, r, 2, 0, 0, 0)
	if l := e.link(t, "", "b"); l.Title != `x"`+strings.Repeat(",", 10)+`"` {
		t.Fatalf("title %q", l.Title)
	}
	for _, alias := range []string{"c", "d"} {
		if _, err := e.links.FindLinkByAlias(context.Background(), "", alias); err == nil {
			t.Fatalf("link %s imported after the file failed", alias)
		}
	}
}

// repeatingSource hands over the same few links, or rows that fail,
// without end, as a source whose pagination lies on the same page would.
type repeatingSource struct{ fail bool }

func (repeatingSource) Name() string { return "repeating" }

func (s repeatingSource) Each(ctx context.Context, fn func(importer.Link, *importer.RowError) error) error {
	for i := 0; ; i++ {
		code := fmt.Sprint("r", i%3)
		var rowErr *importer.RowError
		if s.fail {
			rowErr = &importer.RowError{Where: "item " + fmt.Sprint(i), Reason: "not a link"}
		}
		if err := fn(importer.Link{Key: code, Alias: code, URL: "https://example.com/" + code, Where: "link " + code}, rowErr); err != nil {
			return err
		}
	}
}

// TestRun_RepeatingSourceEnds: a source repeating links imported before
// (or met before in a dry run), or rows that fail, without end ends too,
// its rows reported as it goes rather than held.
func TestRun_RepeatingSourceEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		dry, fail bool
		rows      int
	}{{true, false, 25000}, {false, false, 25000}, {false, true, 3000}} {
		opts := importer.Options{WorkspaceID: e.ws, Now: e.clock.Now, MaxLinks: 2500, MaxItems: 10, DryRun: c.dry}
		r, err := importer.Run(context.Background(), e.imports, repeatingSource{fail: c.fail}, opts)
		if err == nil || !strings.Contains(err.Error(), "run it again to carry on") {
			t.Fatalf("%+v: %v", c, err)
		}
		if rows := r.Imported + r.Skipped + r.Failed; rows != c.rows || len(r.Items) != 10 || r.MoreItems != rows-10 {
			t.Fatalf("%+v: %d rows, %d items, %d more", c, rows, len(r.Items), r.MoreItems)
		}
	}
	if got := e.linkCount(t); got != 3 {
		t.Fatalf("%d links, want 3", got)
	}
}
