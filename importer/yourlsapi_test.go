package importer

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"testing"
	"time"
)

const yourlsSignature = "1002a612b4"

// yourlsRow is a row of YOURLS's yourls_url table.
type yourlsRow struct {
	keyword, url, title, timestamp string
	clicks                         int
}

// fakeYOURLS answers like YOURLS's yourls-api.php (includes/functions.php
// yourls_get_stats and includes/auth.php in YOURLS's repository):
// action=stats with filter=last orders by timestamp, newest first, LIMIT
// start, limit, numbers as PHP's database driver gives them (strings).
type fakeYOURLS struct {
	rows []yourlsRow
	fail func(r *http.Request) bool
	log  requestLog
}

func (f *fakeYOURLS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.log.add(r.URL.Path + "?start=" + q.Get("start"))
	if r.URL.Path != "/yourls-api.php" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	okUser := q.Get("username") == "admin" && q.Get("password") == "s3cret"
	if q.Get("signature") != yourlsSignature && !okUser {
		w.WriteHeader(403)
		writeJSON(w, map[string]any{"message": "Invalid username or password", "errorCode": "403", "callback": ""})
		return
	}
	if f.fail != nil && f.fail(r) {
		w.WriteHeader(500)
		fmt.Fprint(w, "<b>Fatal error</b>: Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused")
		return
	}
	if q.Get("action") != "stats" || q.Get("filter") != "last" || q.Get("format") != "json" {
		w.WriteHeader(400)
		writeJSON(w, map[string]any{"errorCode": "400", "message": "Unknown or missing \"action\" parameter"})
		return
	}
	rows := append([]yourlsRow(nil), f.rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].timestamp > rows[j].timestamp })
	limit, _ := strconv.Atoi(q.Get("limit"))
	start, _ := strconv.Atoi(q.Get("start"))
	out := map[string]any{}
	if limit > 0 {
		links := map[string]any{}
		for i, row := range rows[min(start, len(rows)):min(start+limit, len(rows))] {
			links["link_"+strconv.Itoa(i+1)] = map[string]any{
				"shorturl": "https://sho.rt/" + row.keyword, "url": row.url, "title": row.title,
				"timestamp": row.timestamp, "ip": "203.0.113.9", "clicks": strconv.Itoa(row.clicks),
			}
		}
		if len(links) > 0 {
			out["links"] = links
		}
	}
	clicks := 0
	for _, row := range f.rows {
		clicks += row.clicks
	}
	out["stats"] = map[string]any{"total_links": len(f.rows), "total_clicks": clicks}
	out["statusCode"] = "200"
	out["message"] = "success"
	json.NewEncoder(w).Encode(out)
}

func newFakeYOURLS() *fakeYOURLS {
	f := &fakeYOURLS{}
	for i := range 12 {
		f.rows = append(f.rows, yourlsRow{
			keyword: fmt.Sprintf("k%02d", i), url: fmt.Sprintf("https://example.com/%d", i), title: fmt.Sprintf("Page %d", i),
			timestamp: fmt.Sprintf("2023-05-%02d 08:09:10", i+1), clicks: i * 10,
		})
	}
	f.rows[3].url = ""
	return f
}

func openYOURLS(t *testing.T, srv *httptest.Server, key string) *YOURLSAPI {
	t.Helper()
	src, err := Open("yourls-api", SourceConfig{URL: srv.URL, APIKey: key, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	y := src.(*YOURLSAPI)
	y.Backoff = 0
	y.PageSize = 5
	return y
}

func TestYOURLSAPIEach(t *testing.T) {
	for _, key := range []string{yourlsSignature, "admin:s3cret"} {
		t.Run(key, func(t *testing.T) {
			fake := newFakeYOURLS()
			srv := httptest.NewServer(fake)
			defer srv.Close()
			got, err := collect(t, openYOURLS(t, srv, key))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := got.keys(), "k11 k10 k09 k08 k07 k06 k05 k04 k02 k01 k00"; got != want {
				t.Fatalf("keys = %q, want %q", got, want)
			}
			if len(got.errors) != 1 || got.errors[0].Where != "short URL k03" || got.errors[0].Reason != "no url" {
				t.Fatalf("row errors = %+v", got.errors)
			}
			l := got.links[0]
			if l.Alias != "k11" || l.URL != "https://example.com/11" || l.Title != "Page 11" || l.Clicks != 110 || l.Visits != nil ||
				!l.CreatedAt.Equal(time.Date(2023, 5, 12, 8, 9, 10, 0, time.UTC)) || l.Where != "short URL k11" {
				t.Fatalf("first link = %+v", l)
			}
			for _, start := range []string{"0", "5", "10"} {
				if n := fake.log.count("/yourls-api.php?start=" + start); n != 1 {
					t.Errorf("start=%s asked %d times, want once", start, n)
				}
			}
		})
	}
}

func TestYOURLSAPIRefusedKey(t *testing.T) {
	srv := httptest.NewServer(newFakeYOURLS())
	defer srv.Close()
	_, err := collect(t, openYOURLS(t, srv, "badsignature77"))
	checkSourceError(t, err, "api_key", "403", "badsignature77")
	_, err = collect(t, openYOURLS(t, srv, "admin:wrongpassword"))
	checkSourceError(t, err, "api_key", "403", "wrongpassword")
}

func TestYOURLSAPIFailsHalfWay(t *testing.T) {
	fake := newFakeYOURLS()
	fake.fail = func(r *http.Request) bool { return r.URL.Query().Get("start") == "5" }
	srv := httptest.NewServer(fake)
	defer srv.Close()
	got, err := collect(t, openYOURLS(t, srv, yourlsSignature))
	checkStopped(t, err, "answered 500 Internal Server Error", yourlsSignature)
	if got, want := got.keys(), "k11 k10 k09 k08 k07"; got != want {
		t.Fatalf("keys before the failure = %q, want %q", got, want)
	}
	if n := fake.log.count("/yourls-api.php?start=5"); n != 4 {
		t.Fatalf("start=5 asked %d times, want 4", n)
	}
}

// TestYOURLSAPISameSecond: links made in the same second may come twice or
// not at all across pages; twice is handed over once, a missing one is
// reported.
func TestYOURLSAPISameSecond(t *testing.T) {
	fake := newFakeYOURLS()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("start") == "5" {
			// The database ordered the tie differently this time: k07
			// again, k06 never.
			fake.rows[6].timestamp, fake.rows[7].timestamp = fake.rows[7].timestamp, fake.rows[6].timestamp
			defer func() {
				fake.rows[6].timestamp, fake.rows[7].timestamp = fake.rows[7].timestamp, fake.rows[6].timestamp
			}()
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	got, err := collect(t, openYOURLS(t, srv, yourlsSignature))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := got.keys(), "k11 k10 k09 k08 k07 k05 k04 k02 k01 k00"; got != want {
		t.Fatalf("keys = %q, want %q", got, want)
	}
	if n := len(got.errors); n != 2 || got.errors[1].Where != "YOURLS's API" {
		t.Fatalf("row errors = %+v, want k03's and the missing link's", got.errors)
	}
}

func TestYOURLSAPINotYOURLS(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `<html>Welcome</html>`) }))
	defer srv.Close()
	_, err := collect(t, openYOURLS(t, srv, yourlsSignature))
	checkSourceError(t, err, "url", "not the JSON", yourlsSignature)
}
