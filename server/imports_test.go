package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/importer"
	"github.com/linkbolt/linkbolt/webhook"
)

func importBody(t *testing.T, fields map[string]any) string {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const importCSV = "url,alias,tags,title,created_at,clicks\n" +
	"https://example.com/docs,docs-page,docs|help,The docs,2024-01-15T10:00:00Z,42\n" +
	"not a url,bad,,,,\n" +
	"https://example.com/taken,taken,,,2024-02-01,3\n" +
	"https://example.com/x,x1,,,someday,1\n"

// TestImport checks POST /v1/imports with a CSV file: a dry run writes
// nothing, a real run imports, skips and fails rows as it says, the
// clicks show in the link's analytics on the right day, a second run adds
// nothing, and the import is in the audit log.
func TestImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://other.example/","alias":"taken"}`, 201)

	dry := e.do("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "csv", "dry_run": true, "data": importCSV}), 200)
	if dry.path("dry_run") != true || dry.path("imported") != 1.0 || dry.path("skipped") != 2.0 || dry.path("failed") != 1.0 || dry.path("clicks") != 42.0 {
		t.Fatalf("dry run: %s", dry.raw)
	}
	e.do("GET", "/v1/links/docs-page", e.writeKey, "", 404)
	if r := e.do("GET", "/v1/links?search=docs", e.writeKey, "", 200); r.path("meta", "total") != 0.0 {
		t.Fatalf("a dry run created links: %s", r.raw)
	}

	r := e.do("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "csv", "data": importCSV}), 200)
	if r.path("dry_run") != false || r.path("imported") != 1.0 || r.path("complete") != true {
		t.Fatalf("import: %s", r.raw)
	}
	for i, want := range []struct{ where, status, reason string }{
		{"line 2", "imported", ""},
		{"line 3", "skipped", "bad URL"},
		{"line 4", "skipped", `alias "taken" is already taken`},
		{"line 5", "failed", `created_at "someday" is not a date`},
	} {
		if r.path("items", i, "where") != want.where || r.path("items", i, "status") != want.status ||
			!strings.HasPrefix(r.path("items", i, "reason").(string), want.reason) {
			t.Fatalf("item %d: want %v: %s", i, want, r.raw)
		}
	}
	id := r.path("items", 0, "link_id").(string)
	l := e.do("GET", "/v1/links/"+id, e.writeKey, "", 200)
	if l.path("alias") != "docs-page" || l.path("clicks") != 42.0 || l.path("created_at") != "2024-01-15T10:00:00Z" || l.path("title") != "The docs" {
		t.Fatalf("imported link: %s", l.raw)
	}
	a := e.do("GET", "/v1/analytics/links/"+id+"?start=2024-01-15T00:00:00Z&end=2024-01-16T00:00:00Z&interval=day", e.writeKey, "", 200)
	if a.path("totals", "clicks") != 42.0 {
		t.Fatalf("analytics on the creation day: %s", a.raw)
	}

	again := e.do("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "csv", "data": importCSV}), 200)
	if again.path("imported") != 0.0 || again.path("items", 0, "status") != "exists" || again.path("items", 0, "link_id") != id {
		t.Fatalf("second run: %s", again.raw)
	}
	if l := e.do("GET", "/v1/links/"+id, e.writeKey, "", 200); l.path("clicks") != 42.0 {
		t.Fatalf("second run added clicks: %s", l.raw)
	}

	log := e.do("GET", "/v1/audit-log?action=links.imported", e.adminToken, "", 200)
	if n := len(log.path("data").([]any)); n != 2 {
		t.Fatalf("audit entries: %d: %s", n, log.raw)
	}
	if log.path("data", 1, "changes", "imported", 1) != "1" || log.path("data", 1, "actor", "name") != "writer" {
		t.Fatalf("audit entry: %s", log.raw)
	}
}

// TestImport_BadInput checks that every mistake gets a problem answer.
func TestImport_BadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	readKey := e.createKey(e.adminToken, "reader2", "read")
	for _, c := range []struct {
		name   string
		cred   string
		body   string
		status int
		code   string
	}{
		{"unknown source", e.writeKey, `{"from":"tinyurl","data":"url\nhttps://a.example/\n"}`, 422, "validation_failed"},
		{"no source", e.writeKey, `{"data":"url\n"}`, 422, "validation_failed"},
		{"data and url", e.writeKey, `{"from":"csv","data":"url\n","url":"https://s.example/"}`, 400, "invalid_request"},
		{"neither", e.writeKey, `{"from":"csv"}`, 400, "invalid_request"},
		{"a file source with a url", e.writeKey, `{"from":"bitly","url":"https://s.example/"}`, 400, "invalid_request"},
		{"bad on_conflict", e.writeKey, `{"from":"csv","data":"url\n","on_conflict":"merge"}`, 422, "validation_failed"},
		{"no url column", e.writeKey, `{"from":"csv","data":"link,name\nx,y\n"}`, 422, "validation_failed"},
		{"unknown field", e.writeKey, `{"from":"csv","data":"url\n","colour":"red"}`, 400, "invalid_request"},
		{"read key", readKey, `{"from":"csv","data":"url\n"}`, 403, "forbidden"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantProblem(t, e.request(newRequest("POST", "/v1/imports", c.cred, c.body)), c.status, c.code)
		})
	}
}

// apiSource is a source registered as the API sources register
// themselves: it pages through a JSON API (?page=N) with the key in a
// header, as Shlink's does.
type apiSource struct{ cfg importer.SourceConfig }

func init() {
	importer.Register("testapi", func(cfg importer.SourceConfig) (importer.Source, error) { return &apiSource{cfg}, nil })
}

func (*apiSource) Name() string { return "testapi" }

func (s *apiSource) Each(ctx context.Context, fn func(importer.Link, *importer.RowError) error) error {
	for page := 1; ; page++ {
		req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/links?page=%d", s.cfg.URL, page), nil)
		if err != nil {
			return err
		}
		req.Header.Set("X-Api-Key", s.cfg.APIKey)
		resp, err := s.cfg.HTTPClient.Do(req)
		if err != nil {
			return err
		}
		var body struct {
			Links []struct{ Code, URL string }
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("page %d: %s answered %s", page, s.cfg.URL, resp.Status)
		}
		if err != nil {
			return err
		}
		if len(body.Links) == 0 {
			return nil
		}
		for _, l := range body.Links {
			v := importer.Visit{At: time.Date(2023, 3, 3, 3, 0, 0, 0, time.UTC), Referrer: "https://t.co/x", UserAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:100.0) Gecko/20100101 Firefox/100.0"}
			if err := fn(importer.Link{Key: l.Code, Alias: l.Code, URL: l.URL, Clicks: 1, Visits: []importer.Visit{v}, Where: "short URL " + l.Code}, nil); err != nil {
				return err
			}
		}
	}
}

// TestImport_API checks an API source through the route: the server
// fetches the API with the key, a source answering 500 half-way leaves a
// resumable import (complete false, nothing duplicated on the rerun), the
// key never appears in the answer or the logs, and a private address is
// refused unless webhooks.allow_private.
func TestImport_API(t *testing.T) {
	t.Parallel()
	const apiKey = "s3cret-api-key-0123"
	var mu sync.Mutex
	failPage2 := true
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != apiKey {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Query().Get("page") {
		case "1":
			fmt.Fprint(w, `{"links":[{"code":"a1","url":"https://example.com/a1"},{"code":"a2","url":"https://example.com/a2"}]}`)
		case "2":
			if failPage2 {
				failPage2 = false
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			}
			fmt.Fprint(w, `{"links":[{"code":"b1","url":"https://example.com/b1"}]}`)
		default:
			fmt.Fprint(w, `{"links":[]}`)
		}
	}))
	defer api.Close()

	guarded := newEnv(t)
	r := guarded.request(newRequest("POST", "/v1/imports", guarded.writeKey, importBody(t, map[string]any{"from": "testapi", "url": api.URL, "api_key": apiKey})))
	wantProblem(t, r, 422, "validation_failed")
	if r.path("errors", 0, "field") != "url" || strings.Contains(string(r.raw), apiKey) {
		t.Fatalf("private target: %s", r.raw)
	}

	e := newEnvWith(t, func(d *Deps) {
		d.WebhookTargets = webhook.TargetGuard{AllowPrivate: true}
		d.ImportClient = webhook.NewClient(true)
	})
	body := importBody(t, map[string]any{"from": "testapi", "url": api.URL, "api_key": apiKey})
	first := e.do("POST", "/v1/imports", e.writeKey, body, 200)
	if first.path("complete") != false || first.path("imported") != 2.0 || !strings.Contains(first.str("error"), "500") {
		t.Fatalf("first run: %s", first.raw)
	}
	second := e.do("POST", "/v1/imports", e.writeKey, body, 200)
	if second.path("complete") != true || second.path("imported") != 1.0 || second.path("skipped") != 2.0 || second.path("clicks") != 1.0 {
		t.Fatalf("second run: %s", second.raw)
	}
	if r := e.do("GET", "/v1/links", e.writeKey, "", 200); r.path("meta", "total") != 3.0 {
		t.Fatalf("links: %s", r.raw)
	}
	a := e.do("GET", "/v1/analytics/workspace?start=2023-03-03T00:00:00Z&end=2023-03-04T00:00:00Z", e.writeKey, "", 200)
	if a.path("totals", "clicks") != 3.0 || a.path("top", "referrers", 0, "value") != "t.co" {
		t.Fatalf("workspace analytics: %s", a.raw)
	}
	for _, raw := range []string{string(first.raw), string(second.raw), e.logs.String()} {
		if strings.Contains(raw, apiKey) {
			t.Fatalf("the API key leaked: %s", raw)
		}
	}
}

// TestImport_ItemsCapped: the answer lists at most 1,000 items and counts
// the rest.
func TestImport_ItemsCapped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var b strings.Builder
	b.WriteString("url,alias\n")
	for i := range 1005 {
		fmt.Fprintf(&b, "https://example.com/%d,c%d\n", i, i)
	}
	r := e.do("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "csv", "dry_run": true, "data": b.String()}), 200)
	if r.path("imported") != 1005.0 || len(r.path("items").([]any)) != 1000 || r.path("items_truncated") != true || r.path("more_items") != 5.0 {
		t.Fatalf("imported %v, items %d, truncated %v, more %v", r.path("imported"), len(r.path("items").([]any)), r.path("items_truncated"), r.path("more_items"))
	}
	// The count of links imported before covers those past the list too.
	e.do("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "csv", "data": b.String()}), 200)
	r = e.do("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "csv", "data": b.String()}), 200)
	if r.path("imported") != 0.0 || r.path("skipped") != 1005.0 || r.path("exists") != 1005.0 || len(r.path("items").([]any)) != 1000 {
		t.Fatalf("again: imported %v, skipped %v, exists %v, items %d", r.path("imported"), r.path("skipped"), r.path("exists"), len(r.path("items").([]any)))
	}
}

// TestImport_APIWaitHoldsNoSlot: while an import waits for a slow (or
// hostile, never-ending) source's API, it holds no slot of the costly-work
// gate, so other workspaces' searches and analytics are served; the links
// are written all the same.
func TestImport_APIWaitHoldsNoSlot(t *testing.T) {
	const apiKey = "s3cret-api-key-0123"
	asked, answer := make(chan struct{}), make(chan struct{})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("page") {
		case "1":
			fmt.Fprint(w, `{"links":[{"code":"s1","url":"https://example.com/s1"}]}`)
		case "2":
			close(asked)
			<-answer // a source taking its time
			fmt.Fprint(w, `{"links":[{"code":"s2","url":"https://example.com/s2"}]}`)
		default:
			fmt.Fprint(w, `{"links":[]}`)
		}
	}))
	defer api.Close()
	var once sync.Once
	letGo := func() { once.Do(func() { close(answer) }) }
	defer letGo() // before api.Close, should the test fail first
	e := newEnvWith(t, func(d *Deps) {
		d.WebhookTargets = webhook.TargetGuard{AllowPrivate: true}
		d.ImportClient = webhook.NewClient(true)
	}, func(c *Config) { c.CostlyConcurrency = 1; c.CostlyWait = 0 })

	done := make(chan *response, 1)
	go func() {
		done <- e.request(newRequest("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "testapi", "url": api.URL, "api_key": apiKey})))
	}()
	<-asked
	e.do("GET", "/v1/links?search=example", e.readKey, "", http.StatusOK)
	e.do("GET", "/v1/analytics/workspace", e.readKey, "", http.StatusOK)
	// But no more API imports run at once than the gate has slots (each
	// holds up to a page of 64 MB).
	second := e.request(newRequest("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "testapi", "url": api.URL, "api_key": apiKey})))
	wantProblem(t, second, http.StatusServiceUnavailable, "server_busy")
	letGo()
	r := <-done
	if r.status != 200 || r.path("imported") != 2.0 || r.path("complete") != true {
		t.Fatalf("import: %d %s", r.status, r.raw)
	}
	e.do("GET", "/v1/links?search=example", e.readKey, "", http.StatusOK) // the slot was given back
}

// TestImport_MillionColumns: a CSV line of 30 million commas (gigabytes
// as encoding/csv's fields) is refused as bad input, not read.
func TestImport_MillionColumns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	data := "url,alias\nhttps://example.com/a,a\nhttps://example.com/b,b" + strings.Repeat(",", 30<<20) + "\n"
	r := e.request(newRequest("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "csv", "data": data})))
	wantProblem(t, r, 422, "validation_failed")
	if !strings.Contains(r.str("detail"), "line 3 has more than 1000 columns") {
		t.Fatalf("%s", r.raw)
	}
}

// TestImportedClicksInYOURLSTotals: clicks an import dates before the
// workspace was made count in the YOURLS API's total_clicks, which are the
// workspace's clicks of all time (a WordPress plugin shows them).
func TestImportedClicksInYOURLSTotals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "csv", "data": importCSV}), 200)
	e.flush()
	r := e.yourlsGet(url.Values{"signature": {e.writeKey}, "action": {"db-stats"}, "format": {"json"}})
	wantYOURLS(t, r, 200, "application/json; charset=utf-8")
	if got := string(r.raw); got != `{"db-stats":{"total_links":2,"total_clicks":45},"statusCode":"200","message":"success"}` {
		t.Fatalf("db-stats: %s", got)
	}
}

// TestImport_SourceFieldErrors: a source that refuses its input says at
// which field (the key a Shlink refused, an unknown source), and the
// answer never quotes the key.
func TestImport_SourceFieldErrors(t *testing.T) {
	t.Parallel()
	const apiKey = "wrong-shlink-key-0123"
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"type":"https://shlink.io/api/error/invalid-api-key","title":"Invalid API key","status":401}`)
	}))
	defer api.Close()
	e := newEnvWith(t, func(d *Deps) {
		d.WebhookTargets = webhook.TargetGuard{AllowPrivate: true}
		d.ImportClient = webhook.NewClient(true)
	})
	r := e.request(newRequest("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "shlink", "url": api.URL, "api_key": apiKey})))
	wantFieldError(t, r, "api_key", "refused this key")
	if strings.Contains(string(r.raw), apiKey) {
		t.Fatalf("the answer quotes the key: %s", r.raw)
	}
	r = e.request(newRequest("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "nosuch", "data": "url\n"})))
	wantFieldError(t, r, "from", "unknown source")
}
