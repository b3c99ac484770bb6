package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLinkCRUD(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/page?x=1","alias":"Launch",
		"tags":["news"," promo ","news"],"utm_source":"mail","redirect_code":301}`, 201)
	id := r.str("id")
	if got, want := r.str("short_url"), "http://lb.test/Launch"; got != want {
		t.Fatalf("short_url = %q, want %q", got, want)
	}
	if got := fmt.Sprint(r.path("tags")); got != "[news promo]" {
		t.Fatalf("tags = %s", got)
	}
	if got := r.path("redirect_code"); got != float64(301) {
		t.Fatalf("redirect_code = %v", got)
	}
	if got := r.str("domain"); got != "lb.test" {
		t.Fatalf("domain = %q", got)
	}
	// Aliases are case-sensitive: "launch" is another alias.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"launch"}`, 201)
	wantProblem(t, e.request(newRequest("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"Launch"}`)), 409, "conflict")
	// An alias taken in another workspace is taken here too (one primary host).
	other := e.do("GET", "/v1/links/"+e.otherLink, e.otherKey, "", 200).str("alias")
	wantProblem(t, e.request(newRequest("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"`+other+`"}`)), 409, "conflict")

	// A generated code is 7 base62 characters.
	g := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/"}`, 201)
	if a := g.str("alias"); len(a) != 7 || strings.Trim(a, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		t.Fatalf("generated alias %q", a)
	}
	if g.path("utm_source") != nil || g.path("campaign_id") != nil {
		t.Fatalf("unset fields are not null: %s", g.raw)
	}

	// PATCH changes only what is given; "" clears a UTM value.
	p := e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"destination_url":"https://example.org/new","utm_source":"","alias":"Launch2"}`, 200)
	if p.str("destination_url") != "https://example.org/new" || p.path("utm_source") != nil || p.str("alias") != "Launch2" ||
		fmt.Sprint(p.path("tags")) != "[news promo]" || p.path("redirect_code") != float64(301) {
		t.Fatalf("patched: %s", p.raw)
	}
	// The old alias is free, the new one redirects.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"Launch"}`, 201)
	if loc := e.do("GET", "/Launch2", "", "", 301).header.Get("Location"); loc != "https://example.org/new" {
		t.Fatalf("Location = %q", loc)
	}
	wantProblem(t, e.request(newRequest("PATCH", "/v1/links/"+id, e.writeKey, `{"alias":"launch"}`)), 409, "conflict")
	wantProblem(t, e.request(newRequest("PATCH", "/v1/links/"+id, e.writeKey, `{"redirect_code":303}`)), 422, "validation_failed")
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("redirect_code"); got != float64(301) {
		t.Fatalf("a refused PATCH changed the link: %v", got)
	}

	e.do("DELETE", "/v1/links/"+id, e.writeKey, "", 204)
	wantProblem(t, e.request(newRequest("GET", "/v1/links/"+id, e.readKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("DELETE", "/v1/links/"+id, e.writeKey, "")), 404, "not_found")
	e.do("GET", "/Launch2", "", "", 404)
}

func TestLinkValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := "https://example.com/" + strings.Repeat("a", 4096)
	for _, tc := range []struct {
		name, body  string
		status      int
		code, field string
	}{
		{"javascript", `{"destination_url":"javascript:alert(1)"}`, 422, "validation_failed", "destination_url"},
		{"data", `{"destination_url":"data:text/html,<b>x</b>"}`, 422, "validation_failed", "destination_url"},
		{"relative", `{"destination_url":"/path/only"}`, 422, "validation_failed", "destination_url"},
		{"no host", `{"destination_url":"https:///path"}`, 422, "validation_failed", "destination_url"},
		{"ftp", `{"destination_url":"ftp://example.com/file"}`, 422, "validation_failed", "destination_url"},
		{"space", `{"destination_url":"https://example.com/a b"}`, 422, "validation_failed", "destination_url"},
		{"control", `{"destination_url":"https://example.com/\u0007"}`, 422, "validation_failed", "destination_url"},
		{"credentials", `{"destination_url":"https://user:pw@example.com/"}`, 422, "validation_failed", "destination_url"},
		{"too long", `{"destination_url":"` + long + `"}`, 422, "validation_failed", "destination_url"},
		{"missing", `{"alias":"abc"}`, 422, "validation_failed", "destination_url"},
		{"own short url", `{"destination_url":"http://lb.test/abc"}`, 422, "validation_failed", "destination_url"},
		{"own alt url", `{"destination_url":"https://S.TEST/abc"}`, 422, "validation_failed", "destination_url"},
		{"alias characters", `{"destination_url":"https://example.com/","alias":"a/b"}`, 422, "validation_failed", "alias"},
		{"alias unicode", `{"destination_url":"https://example.com/","alias":"café"}`, 422, "validation_failed", "alias"},
		{"alias reserved", `{"destination_url":"https://example.com/","alias":"V1"}`, 422, "validation_failed", "alias"},
		{"alias reserved healthz", `{"destination_url":"https://example.com/","alias":"healthz"}`, 422, "validation_failed", "alias"},
		{"alias too long", `{"destination_url":"https://example.com/","alias":"` + strings.Repeat("a", 65) + `"}`, 422, "validation_failed", "alias"},
		{"redirect code", `{"destination_url":"https://example.com/","redirect_code":200}`, 422, "validation_failed", "redirect_code"},
		{"too many tags", `{"destination_url":"https://example.com/","tags":[` + strings.Repeat(`"t",`, 0) + tags(21) + `]}`, 422, "validation_failed", "tags"},
		{"tag with comma", `{"destination_url":"https://example.com/","tags":["a,b"]}`, 422, "validation_failed", "tags"},
		{"utm too long", `{"destination_url":"https://example.com/","utm_source":"` + strings.Repeat("u", 201) + `"}`, 422, "validation_failed", "utm_source"},
		{"foreign domain", `{"destination_url":"https://example.com/","domain":"evil.example"}`, 422, "validation_failed", "domain"},
		{"unknown campaign", `{"destination_url":"https://example.com/","campaign_id":"cmp_1"}`, 422, "validation_failed", ""},
		{"wrong type", `{"destination_url":42}`, 400, "invalid_request", "destination_url"},
		{"tags not array", `{"destination_url":"https://example.com/","tags":"a"}`, 400, "invalid_request", "tags"},
		{"unknown field", `{"destination_url":"https://example.com/","url":"x"}`, 400, "invalid_request", "url"},
		{"malformed", `{"destination_url":`, 400, "invalid_request", ""},
		{"not an object", `["https://example.com/"]`, 400, "invalid_request", ""},
		{"two objects", `{"destination_url":"https://example.com/"}{}`, 400, "invalid_request", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.request(newRequest("POST", "/v1/links", e.writeKey, tc.body))
			wantProblem(t, r, tc.status, tc.code)
			if tc.field != "" {
				if got := r.path("errors", 0, "field"); got != tc.field {
					t.Fatalf("field = %v, want %q: %s", got, tc.field, r.raw)
				}
			}
		})
	}
	if got := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); got != float64(0) {
		t.Fatalf("refused requests stored links: total %v", got)
	}
}

func tags(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf(`"t%d"`, i)
	}
	return strings.Join(s, ",")
}

func TestBadBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.MaxBody = 2048 })
	big := `{"destination_url":"https://example.com/` + strings.Repeat("a", 3000) + `"}`
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		code              string
	}{
		{"text/plain", "text/plain", `{"destination_url":"https://example.com/"}`, 415, "unsupported_media_type"},
		{"form", "application/x-www-form-urlencoded", `destination_url=x`, 415, "unsupported_media_type"},
		{"no content type", "", `{"destination_url":"https://example.com/"}`, 415, "unsupported_media_type"},
		{"over max_body", "application/json", big, 413, "payload_too_large"},
		{"empty", "application/json", ``, 400, "invalid_request"},
		{"binary", "application/json", "\x00\x01\x02", 400, "invalid_request"},
		{"json with charset", "application/json; charset=utf-8", `{"destination_url":"https://example.com/"}`, 201, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest("POST", "/v1/links", e.writeKey, "")
			req.Body = http.NoBody
			if tc.body != "" {
				req = newRequest("POST", "/v1/links", e.writeKey, tc.body)
			}
			req.Header.Del("Content-Type")
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			r := e.request(req)
			if tc.code == "" {
				if r.status != tc.status {
					t.Fatalf("status %d: %s", r.status, r.raw)
				}
				return
			}
			wantProblem(t, r, tc.status, tc.code)
		})
	}
	// A body over the limit with no Content-Length is cut off too.
	req := newRequest("POST", "/v1/links", e.writeKey, big)
	req.ContentLength = -1
	wantProblem(t, e.request(req), 413, "payload_too_large")
}

func TestListLinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := 0; i < 25; i++ {
		tag := []string{"red", "blue", "green"}[i%3]
		e.do("POST", "/v1/links", e.writeKey, fmt.Sprintf(`{"destination_url":"https://example.com/%d","alias":"l%02d","tags":["%s"]}`, i, i, tag), 201)
	}
	r := e.do("GET", "/v1/links", e.readKey, "", 200)
	if got := len(r.path("data").([]any)); got != 20 {
		t.Fatalf("page has %d links", got)
	}
	if r.path("meta", "total") != float64(25) || r.path("meta", "limit") != float64(20) || r.path("meta", "page") != float64(1) {
		t.Fatalf("meta: %v", r.path("meta"))
	}
	if got := r.path("data", 0, "alias"); got != "l24" {
		t.Fatalf("first link %v, want the newest (l24)", got)
	}
	r = e.do("GET", "/v1/links?page=2&limit=20", e.readKey, "", 200)
	if got := len(r.path("data").([]any)); got != 5 || r.path("data", 4, "alias") != "l00" {
		t.Fatalf("page 2: %d links: %s", got, r.raw)
	}
	if got := len(e.do("GET", "/v1/links?page=9", e.readKey, "", 200).path("data").([]any)); got != 0 {
		t.Fatalf("page past the end has %d links", got)
	}
	r = e.do("GET", "/v1/links?tags=red", e.readKey, "", 200)
	if r.path("meta", "total") != float64(9) {
		t.Fatalf("tags=red total %v", r.path("meta", "total"))
	}
	r = e.do("GET", "/v1/links?tags=red,blue&limit=100", e.readKey, "", 200)
	if r.path("meta", "total") != float64(17) || len(r.path("data").([]any)) != 17 {
		t.Fatalf("tags=red,blue total %v", r.path("meta", "total"))
	}
	r = e.do("GET", "/v1/links?search=example.com/2", e.readKey, "", 200)
	if r.path("meta", "total") != float64(6) { // 2, 20..24
		t.Fatalf("search total %v: %s", r.path("meta", "total"), r.raw)
	}
	r = e.do("GET", "/v1/links?domain=lb.test&limit=1", e.readKey, "", 200)
	if r.path("meta", "total") != float64(25) {
		t.Fatalf("domain total %v", r.path("meta", "total"))
	}
	// Another workspace's links never show.
	if got := e.do("GET", "/v1/links?search=other.example", e.readKey, "", 200).path("meta", "total"); got != float64(0) {
		t.Fatalf("search found another workspace's link")
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=-1", "limit=ten", "page=0", "page=1.5", "page=", "limit=1e2", "domain=evil.example"} {
		t.Run(q, func(t *testing.T) {
			if q == "page=" {
				e.do("GET", "/v1/links?"+q, e.readKey, "", 200)
				return
			}
			wantProblem(t, e.request(newRequest("GET", "/v1/links?"+q, e.readKey, "")), 400, "invalid_request")
		})
	}
}

func TestSimpleAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/api/urls", e.writeKey, `{"originalUrl":"https://example.com/long/path"}`, 201)
	code := r.str("shortCode")
	if got, want := r.str("shortUrl"), "http://s.test/"+code; got != want {
		t.Fatalf("shortUrl = %q, want %q", got, want)
	}
	if r.str("originalUrl") != "https://example.com/long/path" {
		t.Fatalf("originalUrl: %s", r.raw)
	}
	// It is a link like any other, and redirects on the alternate host.
	req := newRequest("GET", "/"+code, "", "")
	req.Host = "s.test"
	if loc := e.request(req).header.Get("Location"); loc != "https://example.com/long/path" {
		t.Fatalf("Location = %q", loc)
	}
	e.do("POST", "/api/urls", e.writeKey, `{"originalUrl":"https://example.com/","customCode":"mine"}`, 201)
	r = e.request(newRequest("POST", "/api/urls", e.writeKey, `{"originalUrl":"javascript:alert(1)"}`))
	wantProblem(t, r, 422, "validation_failed")
	if r.path("errors", 0, "field") != "originalUrl" {
		t.Fatalf("field: %s", r.raw)
	}
	wantProblem(t, e.request(newRequest("POST", "/api/urls", e.writeKey, `{"url":"https://example.com/"}`)), 400, "invalid_request")
	r = e.request(newRequest("POST", "/api/urls", e.writeKey, `{"originalUrl":"https://example.com/","customCode":"mine"}`))
	wantProblem(t, r, 409, "conflict")
	if !strings.Contains(r.str("detail"), "customCode") {
		t.Fatalf("detail: %s", r.raw)
	}
	wantProblem(t, e.request(newRequest("POST", "/api/urls", "", `{"originalUrl":"https://example.com/"}`)), 401, "unauthorized")
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.clock.Add(time.Minute) // newEnv's own requests drew from the budget: refill it
	for i := 0; i < 100; i++ {
		r := e.request(newRequest("GET", "/v1/keys", e.readKey, ""))
		if r.status != 200 {
			t.Fatalf("request %d: %d %s", i, r.status, r.raw)
		}
	}
	r := e.request(newRequest("GET", "/v1/links", e.readKey, ""))
	wantProblem(t, r, 429, "rate_limited")
	if r.header.Get("Retry-After") != "1" || r.header.Get("X-RateLimit-Remaining") != "0" || r.header.Get("X-RateLimit-Limit") != "100" {
		t.Fatalf("headers: %v", r.header)
	}
	if d := r.str("detail"); !strings.Contains(d, "workspace") || !strings.Contains(d, "shared") {
		t.Fatalf("detail does not say the budget is the workspace's: %q", d)
	}
	// Every other credential of the workspace shares that budget: another
	// key and a user acting in the workspace are refused too.
	wantProblem(t, e.request(newRequest("GET", "/v1/links", e.writeKey, "")), 429, "rate_limited")
	wantProblem(t, e.request(newRequest("GET", "/v1/links", e.adminToken, "")), 429, "rate_limited")
	// Another workspace has its own budget, and a user's requests outside
	// any workspace their own.
	e.do("GET", "/v1/links", e.otherKey, "", 200)
	e.do("GET", "/v1/me", e.adminToken, "", 200)
	// Time refills the bucket.
	e.clock.Add(1200 * 1e6)
	e.do("GET", "/v1/links", e.readKey, "", 200)
	// The admin moves the workspace to enterprise: unlimited from the next
	// request, no headers.
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"plan":"enterprise"}`, 200)
	for i := 0; i < 150; i++ {
		r = e.do("GET", "/v1/links", e.readKey, "", 200)
	}
	if r.header.Get("X-RateLimit-Limit") != "" {
		t.Fatalf("unlimited answer has rate headers: %v", r.header)
	}
	// And back to free: limited again at once.
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"plan":"free"}`, 200)
	if got := e.do("GET", "/v1/links", e.readKey, "", 200).header.Get("X-RateLimit-Limit"); got != "100" {
		t.Fatalf("X-RateLimit-Limit after the plan change = %q, want 100", got)
	}
}

// A search over more links than server.search_scan_limit reads only the
// newest of them and says so in meta.search_truncated; a workspace within
// the bound gets the whole answer.
func TestListLinksSearchBound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.SearchScanLimit = 3 })
	for i := range 5 {
		e.do("POST", "/v1/links", e.writeKey, fmt.Sprintf(`{"destination_url":"https://example.com/%d","alias":"sb%d"}`, i, i), 201)
	}
	r := e.do("GET", "/v1/links?search=example.com", e.readKey, "", 200)
	// On bbolt the bound counts the search index's candidates; on
	// PostgreSQL the trigram index answers the whole search, read no
	// further than its matches: complete, and said to be.
	truncated, total := true, float64(3)
	if onPostgres() {
		truncated, total = false, 5
	}
	if got := r.path("meta", "search_truncated"); got != truncated {
		t.Fatalf("search_truncated %v: %s", got, r.raw)
	}
	if got := r.path("meta", "total"); got != total {
		t.Fatalf("total %v, want %v", got, total)
	}
	if got, want := r.path("data", 0, "alias"), "sb4"; got != want {
		t.Fatalf("first %v, want %q", got, want)
	}
	// The oldest link is past the bound of a scanned (short) search; the
	// answer says it did not look.
	r = e.do("GET", "/v1/links?search=b0", e.readKey, "", 200)
	if r.path("meta", "total") != float64(0) || r.path("meta", "search_truncated") != true {
		t.Fatalf("search past the bound: %s", r.raw)
	}
	// A search of 3 characters or more reads the search index: the bound
	// counts the candidates it names, here one.
	r = e.do("GET", "/v1/links?search=sb0", e.readKey, "", 200)
	if r.path("meta", "total") != float64(1) || r.path("meta", "search_truncated") != false || r.path("data", 0, "alias") != "sb0" {
		t.Fatalf("indexed search past the scan bound: %s", r.raw)
	}
	// Without a filter nothing is scanned: every link is counted.
	r = e.do("GET", "/v1/links", e.readKey, "", 200)
	if r.path("meta", "total") != float64(5) || r.path("meta", "search_truncated") != false {
		t.Fatalf("plain list: %s", r.raw)
	}
	// The other workspace holds one link: within the bound, complete.
	r = e.do("GET", "/v1/links?search=other", e.otherKey, "", 200)
	if r.path("meta", "total") != float64(1) || r.path("meta", "search_truncated") != false {
		t.Fatalf("small workspace: %s", r.raw)
	}
}

// sort=clicks lists the most clicked links first, the newest first among
// links with as many clicks, with the filters and paging of any list; it
// ranks only the newest server.search_scan_limit links and says so; any
// other sort is 400.
func TestListLinksSortClicks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.SearchScanLimit = 4 })
	for i := range 5 {
		tag := []string{"red", "blue"}[i%2]
		e.do("POST", "/v1/links", e.writeKey, fmt.Sprintf(`{"destination_url":"https://example.com/%d","alias":"c%d","tags":["%s"]}`, i, i, tag), 201)
	}
	// c0 (past the bound) 5 clicks, c1 1, c2 3, c3 none, c4 1.
	for alias, n := range map[string]int{"c0": 5, "c1": 1, "c2": 3, "c4": 1} {
		for range n {
			e.do("GET", "/"+alias, "", "", http.StatusFound)
		}
	}
	e.flush()
	aliases := func(r *response) []string {
		var out []string
		for _, l := range r.path("data").([]any) {
			out = append(out, l.(map[string]any)["alias"].(string))
		}
		return out
	}
	for _, tt := range []struct {
		query     string
		want      []string
		total     float64
		truncated bool
	}{
		{"sort=clicks", []string{"c2", "c4", "c1", "c3"}, 4, true},
		{"sort=clicks&limit=2&page=2", []string{"c1", "c3"}, 4, true},
		{"sort=clicks&page=3&limit=2", nil, 4, true},
		{"sort=clicks&tags=red", []string{"c0", "c2", "c4"}, 3, false},
		{"sort=clicks&tags=blue&search=example", []string{"c1", "c3"}, 2, false},
		// An indexed search names its candidates; the bound counts them.
		{"sort=clicks&search=example.com/", []string{"c2", "c4", "c1", "c3"}, 4, true},
		{"sort=clicks&search=com/0", []string{"c0"}, 1, false},
		{"sort=created", []string{"c4", "c3", "c2", "c1", "c0"}, 5, false},
	} {
		t.Run(tt.query, func(t *testing.T) {
			r := e.do("GET", "/v1/links?"+tt.query, e.readKey, "", 200)
			if got := aliases(r); !slices.Equal(got, tt.want) {
				t.Fatalf("order %v, want %v", got, tt.want)
			}
			if r.path("meta", "total") != tt.total || r.path("meta", "search_truncated") != tt.truncated {
				t.Fatalf("meta %v, want total %v truncated %v", r.path("meta"), tt.total, tt.truncated)
			}
		})
	}
	if got := e.do("GET", "/v1/links?sort=clicks&tags=red", e.readKey, "", 200).path("data", 0, "clicks"); got != float64(5) {
		t.Fatalf("clicks of the first: %v", got)
	}
	for _, q := range []string{"sort=Clicks", "sort=-clicks", "sort=", "sort=updated"} {
		if q == "sort=" {
			e.do("GET", "/v1/links?"+q, e.readKey, "", 200)
			continue
		}
		wantProblem(t, e.request(newRequest("GET", "/v1/links?"+q, e.readKey, "")), 400, "invalid_request")
	}
}
