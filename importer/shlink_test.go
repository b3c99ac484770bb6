package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const shlinkKey = "d5b6fa3a-4b2c-4a0e-9a6b-shlink-secret"

// fakeShlink answers like Shlink's REST API v3 (docs/swagger in Shlink's
// repository): short URLs and their visits, paged, behind X-Api-Key.
type fakeShlink struct {
	shortURLs []map[string]any           // as listed, in order
	visits    map[string][]any           // by "domain/shortCode" ("" domain for the default)
	fail      func(r *http.Request) bool // answer 500 when true
	log       requestLog
}

func (f *fakeShlink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.log.add(r.URL.Path + "?" + r.URL.RawQuery)
	if r.Header.Get("X-Api-Key") != shlinkKey {
		problem(w, 401, map[string]any{"type": "https://shlink.io/api/error/invalid-api-key", "title": "Invalid API key", "detail": "Provided API key does not exist or is invalid.", "status": 401})
		return
	}
	if f.fail != nil && f.fail(r) {
		problem(w, 500, map[string]any{"type": "https://shlink.io/api/error/internal", "title": "Internal Server Error", "detail": "An unexpected error occurred", "status": 500})
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	per, _ := strconv.Atoi(r.URL.Query().Get("itemsPerPage"))
	if page < 1 {
		page = 1
	}
	switch {
	case r.URL.Path == "/rest/v3/short-urls":
		if per < 1 {
			per = 10
		}
		data, pagination := shlinkPage(f.shortURLs, page, per)
		writeJSON(w, map[string]any{"shortUrls": map[string]any{"data": data, "pagination": pagination}})
	case strings.HasPrefix(r.URL.Path, "/rest/v3/short-urls/") && strings.HasSuffix(r.URL.Path, "/visits"):
		code := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/rest/v3/short-urls/"), "/visits")
		all, ok := f.visits[r.URL.Query().Get("domain")+"/"+code]
		if !ok {
			problem(w, 404, map[string]any{"type": "https://shlink.io/api/error/short-url-not-found", "title": "Short URL not found", "detail": "No URL found with short code \"" + code + "\"", "status": 404, "shortCode": code})
			return
		}
		if per < 1 {
			per = len(all) // every visit by default
		}
		data, pagination := shlinkPage(all, page, per)
		writeJSON(w, map[string]any{"visits": map[string]any{"data": data, "pagination": pagination}})
	default:
		problem(w, 404, map[string]any{"type": "https://shlink.io/api/error/not-found", "title": "Not found", "detail": "Requested route does not exist.", "status": 404})
	}
}

// shlinkPage cuts one page out of items with Shlink's pagination block.
func shlinkPage[T any](items []T, page, per int) ([]T, map[string]any) {
	pages := (len(items) + per - 1) / per
	from := min((page-1)*per, len(items))
	to := min(from+per, len(items))
	return items[from:to], map[string]any{"currentPage": page, "pagesCount": pages, "itemsPerPage": per, "itemsInCurrentPage": to - from, "totalItems": len(items)}
}

func problem(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func writeJSON(w http.ResponseWriter, body any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// shlinkShort is a short URL as Shlink lists it, every documented field.
func shlinkShort(code, long string, domain, title any, tags []string, created string, total int) map[string]any {
	host := "s.test"
	if d, ok := domain.(string); ok {
		host = d
	}
	return map[string]any{
		"shortCode": code, "shortUrl": "https://" + host + "/" + code, "longUrl": long, "dateCreated": created,
		"visitsSummary": map[string]any{"total": total, "nonBots": total, "bots": 0},
		"tags":          tags, "meta": map[string]any{"validSince": nil, "validUntil": nil, "maxVisits": nil},
		"domain": domain, "title": title, "crawlable": false, "forwardQuery": true, "hasRedirectRules": false,
	}
}

func shlinkVisitJSON(date string, referer any, ua string, country any) map[string]any {
	var loc any
	if country != nil {
		loc = map[string]any{"cityName": "Cupertino", "countryCode": country, "countryName": "United States", "latitude": 37.3042, "longitude": -122.0946, "regionName": "California", "timezone": "America/Los_Angeles"}
	}
	return map[string]any{"referer": referer, "date": date, "userAgent": ua, "visitLocation": loc, "potentialBot": false, "visitedUrl": "https://s.test"}
}

func newFakeShlink() *fakeShlink {
	return &fakeShlink{
		shortURLs: []map[string]any{
			shlinkShort("12C18", "https://store.steampowered.com", nil, "Welcome to Steam", []string{"games", "tech"}, "2016-08-21T20:34:16+02:00", 3),
			shlinkShort("12Kb3", "https://shlink.io", nil, nil, []string{"shlink"}, "2016-05-01T20:34:16+02:00", 0),
			{"shortCode": "broken", "shortUrl": "https://s.test/broken", "dateCreated": "2016-05-01T20:34:16+02:00", "visitsSummary": map[string]any{"total": 0, "nonBots": 0, "bots": 0}, "tags": []string{}, "domain": nil, "title": nil},
			shlinkShort("123bA", "https://www.google.com", "example.com", nil, []string{}, "2015-10-01T20:34:16+02:00", 5),
		},
		visits: map[string][]any{
			"/12C18": {
				shlinkVisitJSON("2015-08-20T05:05:03+04:00", "https://twitter.com", "Mozilla/5.0 (Windows NT 6.1; Win64; x64; rv:47.0) Gecko/20100101 Firefox/47.0", nil),
				shlinkVisitJSON("2015-08-21T05:05:03+04:00", "https://t.co", "Mozilla/5.0 (X11; Linux x86_64) Chrome/51.0.2704.103 Safari/537.36", "US"),
				shlinkVisitJSON("2015-08-22T05:05:03+04:00", nil, "some_web_crawler/1.4", nil),
			},
			"/12Kb3": {},
			// Three of the five visits were deleted at the source: two dated
			// clicks, five in the total.
			"example.com/123bA": {
				shlinkVisitJSON("2020-01-02T03:04:05+00:00", "", "curl/8.0", "Unknown"),
				shlinkVisitJSON("2020-01-03T03:04:05+00:00", "https://example.org/", "Mozilla/5.0", "de"),
			},
		},
	}
}

func openShlink(t *testing.T, srv *httptest.Server, key string) *Shlink {
	t.Helper()
	src, err := Open("shlink", SourceConfig{URL: srv.URL, APIKey: key, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*Shlink)
	s.Backoff = 0
	s.PageSize = 2
	s.VisitPageSize = 2
	return s
}

func TestShlinkEach(t *testing.T) {
	fake := newFakeShlink()
	srv := httptest.NewServer(fake)
	defer srv.Close()

	got, err := collect(t, openShlink(t, srv, shlinkKey))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := got.keys(), "12C18 12Kb3 example.com/123bA"; got != want {
		t.Fatalf("keys = %q, want %q", got, want)
	}
	if len(got.errors) != 1 || got.errors[0].Where != "short URL broken" || got.errors[0].Reason != "no longUrl" {
		t.Fatalf("row errors = %+v, want short URL broken: no longUrl", got.errors)
	}

	steam := got.links[0]
	if steam.Alias != "12C18" || steam.Domain != "" || steam.URL != "https://store.steampowered.com" || steam.Title != "Welcome to Steam" ||
		strings.Join(steam.Tags, ",") != "games,tech" || steam.Clicks != 3 || steam.Where != "short URL 12C18" {
		t.Fatalf("first link = %+v", steam)
	}
	if want := time.Date(2016, 8, 21, 18, 34, 16, 0, time.UTC); !steam.CreatedAt.Equal(want) {
		t.Fatalf("CreatedAt = %v, want %v", steam.CreatedAt, want)
	}
	wantVisits := []Visit{
		{At: time.Date(2015, 8, 20, 1, 5, 3, 0, time.UTC), Referrer: "https://twitter.com", UserAgent: "Mozilla/5.0 (Windows NT 6.1; Win64; x64; rv:47.0) Gecko/20100101 Firefox/47.0"},
		{At: time.Date(2015, 8, 21, 1, 5, 3, 0, time.UTC), Referrer: "https://t.co", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Chrome/51.0.2704.103 Safari/537.36", Country: "US"},
		{At: time.Date(2015, 8, 22, 1, 5, 3, 0, time.UTC), UserAgent: "some_web_crawler/1.4"},
	}
	checkVisits(t, steam.Visits, wantVisits)

	if l := got.links[1]; l.Title != "" || l.Clicks != 0 || l.Visits != nil {
		t.Fatalf("link without visits = %+v", l)
	}
	if fake.log.count("/rest/v3/short-urls/12Kb3/visits?itemsPerPage=2&page=1") != 0 {
		t.Fatal("the visits of a short URL without any were asked for")
	}

	google := got.links[2]
	if google.Alias != "123bA" || google.Domain != "example.com" || google.Clicks != 5 || google.Where != "short URL example.com/123bA" {
		t.Fatalf("link on a domain = %+v", google)
	}
	checkVisits(t, google.Visits, []Visit{
		{At: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), UserAgent: "curl/8.0"},
		{At: time.Date(2020, 1, 3, 3, 4, 5, 0, time.UTC), Referrer: "https://example.org/", UserAgent: "Mozilla/5.0", Country: "DE"},
	})
	for _, req := range []string{
		"/rest/v3/short-urls?itemsPerPage=2&page=1",
		"/rest/v3/short-urls?itemsPerPage=2&page=2",
		"/rest/v3/short-urls/12C18/visits?itemsPerPage=2&page=1",
		"/rest/v3/short-urls/12C18/visits?itemsPerPage=2&page=2",
		"/rest/v3/short-urls/123bA/visits?domain=example.com&itemsPerPage=2&page=1",
	} {
		if n := fake.log.count(req); n != 1 {
			t.Errorf("GET %s asked %d times, want once", req, n)
		}
	}
}

func checkVisits(t *testing.T, got, want []Visit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("visits = %+v, want %+v", got, want)
	}
	for i := range want {
		if !got[i].At.Equal(want[i].At) || got[i].Referrer != want[i].Referrer || got[i].UserAgent != want[i].UserAgent || got[i].Country != want[i].Country {
			t.Fatalf("visit %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestShlinkRefusedKey(t *testing.T) {
	srv := httptest.NewServer(newFakeShlink())
	defer srv.Close()
	got, err := collect(t, openShlink(t, srv, "wrong-key-1234"))
	checkSourceError(t, err, "api_key", "401", "wrong-key-1234")
	if len(got.links) != 0 {
		t.Fatalf("links handed over with a refused key: %v", got.keys())
	}
}

// TestShlinkFailsHalfWay: a Shlink that answers 500 from the second page
// on, retries and all, ends Each with an error after the first page's
// links, each whole; once it answers again, a second run hands everything
// over (the engine skips what the first run imported).
func TestShlinkFailsHalfWay(t *testing.T) {
	fake := newFakeShlink()
	down := true
	fake.fail = func(r *http.Request) bool {
		return down && r.URL.Query().Get("page") == "2" && r.URL.Path == "/rest/v3/short-urls"
	}
	srv := httptest.NewServer(fake)
	defer srv.Close()

	got, err := collect(t, openShlink(t, srv, shlinkKey))
	checkStopped(t, err, "answered 500 Internal Server Error", shlinkKey)
	if !strings.Contains(err.Error(), "after 4 tries") {
		t.Fatalf("error = %v, want it to say it tried 4 times", err)
	}
	if got, want := got.keys(), "12C18 12Kb3"; got != want {
		t.Fatalf("keys before the failure = %q, want %q", got, want)
	}
	if len(got.links[0].Visits) != 3 {
		t.Fatalf("a link was handed over without all of its visits: %+v", got.links[0].Visits)
	}
	if n := fake.log.count("/rest/v3/short-urls?itemsPerPage=2&page=2"); n != 4 {
		t.Fatalf("page 2 asked %d times, want 4 (a first try and 3 retries)", n)
	}

	down = false
	got, err = collect(t, openShlink(t, srv, shlinkKey))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := got.keys(), "12C18 12Kb3 example.com/123bA"; got != want {
		t.Fatalf("keys on the second run = %q, want %q", got, want)
	}
}

// TestShlinkRetries: a 500 that passes costs a retry, nothing twice.
func TestShlinkRetries(t *testing.T) {
	fake := newFakeShlink()
	failures := 2
	fake.fail = func(r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/12C18/visits") && r.URL.Query().Get("page") == "2" && failures > 0 {
			failures--
			return true
		}
		return false
	}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	got, err := collect(t, openShlink(t, srv, shlinkKey))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := got.keys(), "12C18 12Kb3 example.com/123bA"; got != want {
		t.Fatalf("keys = %q, want %q", got, want)
	}
	if n := len(got.links[0].Visits); n != 3 {
		t.Fatalf("visits after retries = %d, want 3", n)
	}
}

func TestShlinkNotShlink(t *testing.T) {
	for name, answer := range map[string]string{
		"HTML":       "<!doctype html><title>Hello</title>",
		"other JSON": `{"hello":"world"}`,
		"bad shape":  `{"shortUrls":{"data":"none"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, answer) }))
			defer srv.Close()
			_, err := collect(t, openShlink(t, srv, shlinkKey))
			checkSourceError(t, err, "url", "GET /rest/v3/short-urls page 1", shlinkKey)
		})
	}
}

func TestShlinkOpenChecksFields(t *testing.T) {
	_, err := Open("shlink", SourceConfig{URL: "ftp://s.test", APIKey: ""})
	if err == nil {
		t.Fatal("no error")
	}
	if got, want := strings.Join(linkFields(err), ","), "url,api_key"; got != want {
		t.Fatalf("fields = %s, want %s", got, want)
	}
}

// TestShlinkRedirectElsewhere: an address that redirects to another host
// is refused before the key is sent there.
func TestShlinkRedirectElsewhere(t *testing.T) {
	var keysSeen []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keysSeen = append(keysSeen, r.Header.Get("X-Api-Key"))
	}))
	defer elsewhere.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()
	s := openShlink(t, srv, shlinkKey)
	_, err := collect(t, s)
	checkSourceError(t, err, "url", "another address", shlinkKey)
	if len(keysSeen) != 0 {
		t.Fatalf("the key was sent to the other host: %v", keysSeen)
	}
	if strings.Contains(err.Error(), "tries") {
		t.Fatalf("a redirect elsewhere was retried: %v", err)
	}
}

// TestShlinkReadsLazily: pages are read as the import asks for links, so
// an import that stops reads no further.
func TestShlinkReadsLazily(t *testing.T) {
	fake := newFakeShlink()
	srv := httptest.NewServer(fake)
	defer srv.Close()
	stop := errors.New("stop")
	err := openShlink(t, srv, shlinkKey).Each(context.Background(), func(Link, *RowError) error { return stop })
	if err != stop {
		t.Fatalf("Each = %v, want the function's error", err)
	}
	if n := fake.log.count("/rest/v3/short-urls?itemsPerPage=2&page=2"); n != 0 {
		t.Fatalf("page 2 read %d times after the import stopped on page 1", n)
	}
}

// TestShlinkUnreachable: no answer at all is retried, then the source
// stops (the import says so beside what it read).
func TestShlinkUnreachable(t *testing.T) {
	srv := httptest.NewServer(newFakeShlink())
	s := openShlink(t, srv, shlinkKey)
	srv.Close()
	_, err := collect(t, s)
	checkStopped(t, err, "after 4 tries", shlinkKey)
}

// A Shlink (or something answering as one) whose visits' pagination never
// ends, with dated visits or undated ones: a link's visits stop at
// MaxLinkVisits read, rather than memory and time without end.
func TestShlinkEndlessVisits(t *testing.T) {
	t.Parallel()
	for name, date := range map[string]string{"dated": "2020-01-02T03:04:05+00:00", "undated": "not a date"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// Every page holds the same 5,000 visits: encoded once, not
			// once a page.
			visits := make([]any, 5000)
			for i := range visits {
				visits[i] = map[string]any{"date": date}
			}
			data, err := json.Marshal(visits)
			if err != nil {
				t.Fatal(err)
			}
			var pages atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				page, _ := strconv.Atoi(r.URL.Query().Get("page"))
				if r.URL.Path == "/rest/v3/short-urls" {
					writeJSON(w, map[string]any{"shortUrls": map[string]any{
						"data":       []any{shlinkShort("lies", "https://example.com/", nil, nil, nil, "2020-01-01T00:00:00+00:00", 1)},
						"pagination": map[string]any{"currentPage": page, "pagesCount": 1}}})
					return
				}
				pages.Add(1)
				// Always one page more, and the current page never moves.
				writeJSON(w, map[string]any{"visits": map[string]any{"data": json.RawMessage(data),
					"pagination": map[string]any{"currentPage": 1, "pagesCount": page + 1}}})
			}))
			defer srv.Close()
			s := openShlink(t, srv, shlinkKey)
			s.VisitPageSize = 5000
			got, err := collect(t, s)
			if err != nil {
				t.Fatal(err)
			}
			want := MaxLinkVisits
			if name == "undated" {
				want = 0
			}
			if len(got.links) != 1 || len(got.links[0].Visits) != want || pages.Load() != MaxLinkVisits/5000 {
				t.Fatalf("%d links, %d visits after %d pages", len(got.links), len(got.links[0].Visits), pages.Load())
			}
		})
	}
}
