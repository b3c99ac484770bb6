package importer

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

const kuttKey = "kuttSecretKey0123456789abcdefghijklmnopq"

// fakeKutt answers like Kutt's API v2 (server/handlers/links.handler.js,
// docs/api/api.js in Kutt's repository): links paged with skip and limit
// (at most 50), stats per link, behind X-API-KEY.
type fakeKutt struct {
	links []map[string]any
	stats map[string]map[string]any // by link id
	fail  func(r *http.Request) bool
	log   requestLog
}

func (f *fakeKutt) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.log.add(r.URL.Path + "?" + r.URL.RawQuery)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if r.Header.Get("X-API-KEY") != kuttKey {
		w.WriteHeader(401)
		fmt.Fprint(w, `{"error":"API key is not correct."}`)
		return
	}
	if f.fail != nil && f.fail(r) {
		w.WriteHeader(500)
		fmt.Fprint(w, `{"error":"An error occurred."}`)
		return
	}
	switch {
	case r.URL.Path == "/api/v2/links":
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		if limit == 0 {
			limit = 10
		}
		limit = min(limit, 50)
		skip, _ := strconv.Atoi(r.URL.Query().Get("skip"))
		from := min(skip, len(f.links))
		to := min(from+limit, len(f.links))
		writeJSON(w, map[string]any{"total": len(f.links), "limit": limit, "skip": skip, "data": f.links[from:to]})
	case strings.HasPrefix(r.URL.Path, "/api/v2/links/") && strings.HasSuffix(r.URL.Path, "/stats"):
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v2/links/"), "/stats")
		st, ok := f.stats[id]
		if !ok {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":"Link could not be found."}`)
			return
		}
		writeJSON(w, st)
	default:
		w.WriteHeader(404)
		fmt.Fprint(w, `{"error":"Not found."}`)
	}
}

// kuttLinkJSON is a link as Kutt's API sanitizes it.
func kuttLinkJSON(id, address, target string, description, domain any, visits int, password bool) map[string]any {
	host := "kutt.test"
	if d, ok := domain.(string); ok {
		host = d
	}
	return map[string]any{
		"id": id, "address": address, "banned": false, "created_at": "2024-03-01T10:20:30.000Z", "updated_at": "2024-03-02T10:20:30.000Z",
		"password": password, "description": description, "expire_in": nil, "target": target, "visit_count": visits,
		"domain": domain, "link": "https://" + host + "/" + address,
	}
}

// kuttStatsJSON is a link's stats as Kutt answers them, with the given
// hourly and daily views.
func kuttStatsJSON(link map[string]any, day, month []int, updated string) map[string]any {
	period := func(views []int) map[string]any {
		total := 0
		for _, v := range views {
			total += v
		}
		return map[string]any{
			"stats": map[string]any{
				"browser":  []map[string]any{{"name": "chrome", "value": total}},
				"os":       []map[string]any{{"name": "linux", "value": total}},
				"country":  []map[string]any{{"name": "DE", "value": total}},
				"referrer": []map[string]any{{"name": "example.org", "value": total}},
			},
			"views": views, "total": total,
		}
	}
	out := map[string]any{
		"lastYear": period(make([]int, 12)), "lastDay": period(day), "lastMonth": period(month), "lastWeek": period(make([]int, 7)),
		"updatedAt": updated,
	}
	for k, v := range link {
		out[k] = v
	}
	return out
}

func newFakeKutt() *fakeKutt {
	f := &fakeKutt{stats: map[string]map[string]any{}}
	for i := range 60 {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		var l map[string]any
		switch i {
		case 0:
			l = kuttLinkJSON(id, "spring", "https://example.com/spring", "Spring sale", nil, 100, false)
		case 1:
			l = kuttLinkJSON(id, "locked", "https://example.com/secret", nil, nil, 0, true)
		case 2:
			l = kuttLinkJSON(id, "shop", "https://example.com/shop", nil, "go.example.com", 0, false)
		default:
			l = kuttLinkJSON(id, fmt.Sprintf("l%d", i), fmt.Sprintf("https://example.com/%d", i), "", nil, 0, false)
		}
		f.links = append(f.links, l)
	}
	day := make([]int, 24)
	day[0], day[23] = 1, 2
	month := make([]int, 30)
	month[0], month[28], month[29] = 1, 3, 3 // month[29] is the last 24 hours
	f.stats[f.links[0]["id"].(string)] = kuttStatsJSON(f.links[0], day, month, "2024-04-10T12:00:00.000Z")
	return f
}

func openKutt(t *testing.T, srv *httptest.Server, key string) *Kutt {
	t.Helper()
	src, err := Open("kutt", SourceConfig{URL: srv.URL + "/api/v2/", APIKey: key, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	k := src.(*Kutt)
	k.Backoff = 0
	return k
}

func TestKuttEach(t *testing.T) {
	fake := newFakeKutt()
	srv := httptest.NewServer(fake)
	defer srv.Close()

	got, err := collect(t, openKutt(t, srv, kuttKey))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.links) != 59 {
		t.Fatalf("%d links, want 59", len(got.links))
	}
	if len(got.errors) != 1 || got.errors[0].Where != "link locked" || !strings.Contains(got.errors[0].Reason, "password") {
		t.Fatalf("row errors = %+v, want the password-protected link", got.errors)
	}
	spring := got.links[0]
	if spring.Key != "00000000-0000-4000-8000-000000000000" || spring.Alias != "spring" || spring.URL != "https://example.com/spring" ||
		spring.Title != "Spring sale" || spring.Domain != "" || spring.Clicks != 100 ||
		!spring.CreatedAt.Equal(time.Date(2024, 3, 1, 10, 20, 30, 0, time.UTC)) {
		t.Fatalf("first link = %+v", spring)
	}
	updated := time.Date(2024, 4, 10, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) Visit { return Visit{At: updated.Add(-d)} }
	checkVisits(t, spring.Visits, []Visit{
		at(29*24*time.Hour + 12*time.Hour),                         // 29 whole days ago
		at(36 * time.Hour), at(36 * time.Hour), at(36 * time.Hour), // a whole day ago
		at(23*time.Hour + 30*time.Minute),          // 23 whole hours ago
		at(30 * time.Minute), at(30 * time.Minute), // this hour
	})
	shop := got.links[1]
	if shop.Domain != "go.example.com" || shop.Where != "link go.example.com/shop" || shop.Visits != nil {
		t.Fatalf("link on a domain = %+v", shop)
	}
	if got.links[58].Alias != "l59" {
		t.Fatalf("last link = %+v", got.links[58])
	}
	for _, req := range []string{"/api/v2/links?limit=50&skip=0", "/api/v2/links?limit=50&skip=50", "/api/v2/links/00000000-0000-4000-8000-000000000000/stats?"} {
		if n := fake.log.count(req); n != 1 {
			t.Errorf("GET %s asked %d times, want once", req, n)
		}
	}
	if n := fake.log.count("/api/v2/links/00000000-0000-4000-8000-000000000002/stats?"); n != 0 {
		t.Errorf("the stats of a link without visits were asked for")
	}
}

func TestKuttRefusedKey(t *testing.T) {
	srv := httptest.NewServer(newFakeKutt())
	defer srv.Close()
	_, err := collect(t, openKutt(t, srv, "not-the-key-9876"))
	checkSourceError(t, err, "api_key", "401", "not-the-key-9876")
}

func TestKuttFailsHalfWay(t *testing.T) {
	fake := newFakeKutt()
	fake.fail = func(r *http.Request) bool { return r.URL.Query().Get("skip") == "50" }
	srv := httptest.NewServer(fake)
	defer srv.Close()
	got, err := collect(t, openKutt(t, srv, kuttKey))
	checkStopped(t, err, "answered 500 Internal Server Error", kuttKey)
	if len(got.links)+len(got.errors) != 50 || len(got.links[0].Visits) != 7 {
		t.Fatalf("handed over %d links and %d row errors before the failure, want the first page's 50, whole", len(got.links), len(got.errors))
	}
	if n := fake.log.count("/api/v2/links?limit=50&skip=50"); n != 4 {
		t.Fatalf("second page asked %d times, want 4", n)
	}
}

func TestKuttBadStats(t *testing.T) {
	fake := newFakeKutt()
	fake.stats["00000000-0000-4000-8000-000000000000"] = map[string]any{"lastDay": map[string]any{"views": []int{1}}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	got, err := collect(t, openKutt(t, srv, kuttKey))
	checkSourceError(t, err, "url", "not the stats Kutt's API documents", kuttKey)
	if len(got.links) != 0 {
		t.Fatalf("a link was handed over without its visits: %v", got.keys())
	}
}

// A Kutt (or something answering as one) that counts more views than
// memory holds: the dated clicks stop at MaxLinkVisits, instead of the
// server allocating without end.
func TestKuttViewsBeyondMemory(t *testing.T) {
	t.Parallel()
	fake := newFakeKutt()
	fake.links = fake.links[:1]
	fake.links[0]["visit_count"] = 9_000_000_000_000_000_000
	day, month := make([]int, 24), make([]int, 30)
	day[23], month[0] = 9_000_000_000_000_000_000, 9_000_000_000_000_000_000
	fake.stats[fake.links[0]["id"].(string)] = kuttStatsJSON(fake.links[0], day, month, "2024-04-10T12:00:00.000Z")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	got, err := collect(t, openKutt(t, srv, kuttKey))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.links) != 1 || len(got.links[0].Visits) != MaxLinkVisits || got.links[0].Clicks != 9_000_000_000_000_000_000 {
		t.Fatalf("%d links, the first with %d visits", len(got.links), len(got.links[0].Visits))
	}
}
