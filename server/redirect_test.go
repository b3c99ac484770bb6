package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

func TestRedirects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		body, path string
		status     int
		location   string
		cache      string
	}{
		{`{"destination_url":"https://example.com/a","alias":"plain"}`, "/plain", 302, "https://example.com/a", "no-store"},
		{`{"destination_url":"https://example.com/b","alias":"perm","redirect_code":301}`, "/perm", 301, "https://example.com/b", "max-age=300"},
		{`{"destination_url":"https://example.com/c","alias":"temp7","redirect_code":307}`, "/temp7", 307, "https://example.com/c", "no-store"},
		{`{"destination_url":"https://example.com/d","alias":"perm8","redirect_code":308}`, "/perm8", 308, "https://example.com/d", "max-age=300"},
		{`{"destination_url":"https://example.com/p?q=1&utm_source=old&b=%20x#frag","alias":"utm","utm_source":"news letter","utm_medium":"email"}`,
			"/utm", 302, "https://example.com/p?q=1&b=%20x&utm_source=news+letter&utm_medium=email#frag", "no-store"},
	} {
		e.do("POST", "/v1/links", e.writeKey, tc.body, 201)
		for _, method := range []string{"GET", "HEAD"} {
			r := e.request(newRequest(method, tc.path, "", ""))
			if r.status != tc.status || r.header.Get("Location") != tc.location || !strings.Contains(r.header.Get("Cache-Control"), tc.cache) {
				t.Fatalf("%s %s: %d Location %q Cache-Control %q", method, tc.path, r.status, r.header.Get("Location"), r.header.Get("Cache-Control"))
			}
			if method == "HEAD" && len(r.raw) != 0 {
				t.Fatalf("HEAD has a body")
			}
		}
	}
	// Unknown codes: a page for browsers, problem+json for the rest.
	req := newRequest("GET", "/nothing", "", "")
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	r := e.request(req)
	if r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.raw), "Link not found") {
		t.Fatalf("browser 404: %d %s", r.status, r.raw)
	}
	wantProblem(t, e.request(newRequest("GET", "/nothing", "", "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("GET", "/bad%20code", "", "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("GET", "/a/b", "", "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("GET", "/v1/nothing", "", "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("POST", "/plain", "", "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("PUT", "/v1/links", e.writeKey, "")), 405, "method_not_allowed")
	// Any host that is not a custom domain reaches the primary links.
	req = newRequest("GET", "/plain", "", "")
	req.Host = "127.0.0.1:8080"
	if r := e.request(req); r.status != 302 {
		t.Fatalf("by address: %d", r.status)
	}
}

func TestClicks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"c"}`, 201).str("id")
	for i := 0; i < 5; i++ {
		req := newRequest("GET", "/c", "", "")
		req.Header.Set("Referer", "https://News.Example.org/item?id=1")
		e.request(req)
	}
	for i := 0; i < 3; i++ {
		e.request(newRequest("HEAD", "/c", "", "")) // not clicks
	}
	if got := e.recorder.Pending(); got != 5 {
		t.Fatalf("%d clicks queued, want 5", got)
	}
	e.flush()
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks"); got != float64(5) {
		t.Fatalf("clicks = %v, want 5", got)
	}
	a := e.do("GET", "/v1/analytics/workspace?range=today", e.readKey, "", 200)
	if got := a.path("totals", "clicks"); got != float64(5) {
		t.Fatalf("totals.clicks = %v", got)
	}
	// The other workspace saw nothing.
	if got := e.do("GET", "/v1/analytics/workspace?range=today", e.otherKey, "", 200).path("totals", "clicks"); got != float64(0) {
		t.Fatalf("other workspace clicks = %v", got)
	}
}

func TestWorkspaceAnalyticsRanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"a"}`, 201).str("id")
	ws := e.ws
	// Clicks at known times: now (2026-03-10 12:00 UTC), 23:59:59.999 the day
	// before, midnight, 3 days ago and 40 days ago.
	at := []time.Time{
		testStart,
		time.Date(2026, 3, 9, 23, 59, 59, 999e6, time.UTC),
		time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC),
		testStart.AddDate(0, 0, -3),
		testStart.AddDate(0, 0, -40),
	}
	for _, t0 := range at {
		e.srv.recorder.Record(link.Click{LinkID: id, WorkspaceID: ws, Time: t0})
	}
	e.flush()
	for _, tc := range []struct {
		query   string
		total   float64
		buckets int
		first   string
	}{
		{"range=today", 2, 24, "2026-03-10T00:00:00Z"},
		{"range=yesterday", 1, 24, "2026-03-09T00:00:00Z"},
		{"range=24h", 3, 24, "2026-03-09T13:00:00Z"},
		{"range=7d", 4, 7, "2026-03-04T00:00:00Z"},
		{"range=30d", 4, 30, "2026-02-09T00:00:00Z"},
		{"", 4, 30, "2026-02-09T00:00:00Z"},
		{"range=90d", 5, 90, "2025-12-11T00:00:00Z"},
		{"range=all", 2, 1, "2026-03-10T00:00:00Z"}, // from the day the workspace was created
		{"range=today&interval=day", 2, 1, "2026-03-10T00:00:00Z"},
		{"start=2026-03-09T00:00:00Z&end=2026-03-10T00:00:00Z&interval=day", 1, 1, "2026-03-09T00:00:00Z"},
		// Berlin is UTC+1 in March: its today began at 23:00 UTC.
		{"range=today&tz=Europe/Berlin&interval=day", 3, 1, "2026-03-09T23:00:00Z"},
		{"range=yesterday&tz=Europe/Berlin", 0, 24, "2026-03-08T23:00:00Z"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			r := e.do("GET", "/v1/analytics/workspace?"+tc.query, e.readKey, "", 200)
			series := r.path("timeseries").([]any)
			var sum float64
			for _, p := range series {
				sum += p.(map[string]any)["clicks"].(float64)
			}
			if r.path("totals", "clicks") != tc.total || sum != tc.total {
				t.Fatalf("total %v (series sum %v), want %v", r.path("totals", "clicks"), sum, tc.total)
			}
			if len(series) != tc.buckets {
				t.Fatalf("%d buckets, want %d", len(series), tc.buckets)
			}
			if got := r.path("timeseries", 0, "start"); got != tc.first {
				t.Fatalf("first bucket %v, want %s", got, tc.first)
			}
		})
	}
	for _, q := range []string{"range=week", "tz=Mars/Olympus", "interval=minute", "start=yesterday&end=today",
		"start=2026-03-10T00:00:00Z&end=2026-03-09T00:00:00Z", "range=7d&start=2026-03-09T00:00:00Z&end=2026-03-10T00:00:00Z",
		"start=2000-01-01T00:00:00Z&end=2026-01-01T00:00:00Z&interval=hour"} {
		t.Run(q, func(t *testing.T) {
			wantProblem(t, e.request(newRequest("GET", "/v1/analytics/workspace?"+q, e.readKey, "")), 400, "invalid_request")
		})
	}
}

func TestDestination(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		l    link.Link
		want string
	}{
		{link.Link{DestinationURL: "https://e.com/"}, "https://e.com/"},
		{link.Link{DestinationURL: "https://e.com/", UTMCampaign: "spring sale"}, "https://e.com/?utm_campaign=spring+sale"},
		{link.Link{DestinationURL: "https://e.com/?a=1&utm_medium=x", UTMMedium: "y"}, "https://e.com/?a=1&utm_medium=y"},
		{link.Link{DestinationURL: "https://e.com/?utm_medium=x", UTMSource: "s"}, "https://e.com/?utm_medium=x&utm_source=s"},
		{link.Link{DestinationURL: "https://e.com/#top", UTMSource: "s&t"}, "https://e.com/?utm_source=s%26t#top"},
		{link.Link{DestinationURL: "https://e.com/straße?q=grün#über"}, "https://e.com/stra%C3%9Fe?q=gr%C3%BCn#%C3%BCber"},
		{link.Link{DestinationURL: "https://e.com/ü", UTMSource: "ä"}, "https://e.com/%C3%BC?utm_source=%C3%A4"},
		// A host saved by an older linkbolt as Unicode is sent as A-labels.
		{link.Link{DestinationURL: "https://bücher.example"}, "https://xn--bcher-kva.example"},
		{link.Link{DestinationURL: "https://аpple.com:8443/login?x=ü"}, "https://xn--pple-43d.com:8443/login?x=%C3%BC"},
	} {
		if got := Destination(&tc.l); got != tc.want {
			t.Errorf("Destination(%+v) = %q, want %q", tc.l, got, tc.want)
		}
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"m"}`, 201)
	for i := 0; i < 3; i++ {
		e.do("GET", "/m", "", "", 302)
	}
	r := e.request(newRequest("GET", "/metrics", "", ""))
	if r.status != 200 || !strings.Contains(string(r.raw), "linkbolt_clicks_pending 3") ||
		!strings.Contains(string(r.raw), "linkbolt_clicks_dropped_total 0") {
		t.Fatalf("metrics: %d %s", r.status, r.raw)
	}
	e.flush()
	if r := e.request(newRequest("GET", "/metrics", "", "")); !strings.Contains(string(r.raw), "linkbolt_clicks_written_total 3") {
		t.Fatalf("metrics after flush: %s", r.raw)
	}
}

func TestPanicRecovery(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.handle("GET", "/v1/test-panic", accessRead, func(http.ResponseWriter, *http.Request, *caller) error {
		panic("boom")
	})
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, newRequest("GET", "/v1/test-panic", e.readKey, ""))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"code":"internal"`) || strings.Contains(rec.Body.String(), "boom") {
		t.Fatalf("panic answer: %d %s", rec.Code, rec.Body.String())
	}
	if !strings.Contains(e.logs.String(), "boom") {
		t.Fatal("the panic is not logged")
	}
	// The server goes on serving.
	e.do("GET", "/v1/links", e.readKey, "", 200)
}
