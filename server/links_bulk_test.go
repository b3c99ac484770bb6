package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// bulkBody is a POST /v1/links/bulk body of the given link bodies.
func bulkBody(items ...string) string {
	return `{"links":[` + strings.Join(items, ",") + `]}`
}

// TestBulkCreate checks POST /v1/links/bulk: good links are created in
// one request with a result each, in order; a bad link (invalid, alias
// taken before or earlier in the same request, unknown campaign) gets
// its own problem and leaves the others created; each created link sends
// one link.created event and is found by search.
func TestBulkCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/webhooks", e.writeKey, `{"url":"https://93.184.215.14/hook","events":["link.created"]}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"exists"}`, 201)
	before, err := e.srv.campaigns.FindEvents(context.Background(), e.ws, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	r := e.do("POST", "/v1/links/bulk", e.writeKey, bulkBody(
		`{"destination_url":"https://bulk.example.com/a","alias":"bulk-a","tags":["bulk"]}`,
		`{"destination_url":"javascript:alert(1)"}`,
		`{"destination_url":"https://bulk.example.com/c","alias":"exists"}`,
		`{"destination_url":"https://bulk.example.com/d","alias":"same"}`,
		`{"destination_url":"https://bulk.example.com/e","alias":"same"}`,
		`{"destination_url":"https://bulk.example.com/f","campaign_id":"cmp_nothere"}`,
		`{"destination_url":"https://bulk.example.com/g"}`,
	), 200)
	want := []struct {
		status int
		code   string
	}{{0, ""}, {422, "validation_failed"}, {409, "conflict"}, {0, ""}, {409, "conflict"}, {422, "validation_failed"}, {0, ""}}
	for i, w := range want {
		if got := r.path("data", i, "index"); got != float64(i) {
			t.Fatalf("result %d has index %v", i, got)
		}
		if w.status == 0 {
			if id, _ := r.path("data", i, "link", "id").(string); r.path("data", i, "error") != nil || !strings.HasPrefix(id, "lnk_") {
				t.Fatalf("result %d: %s", i, r.raw)
			}
			continue
		}
		if r.path("data", i, "link") != nil || r.path("data", i, "error", "status") != float64(w.status) || r.path("data", i, "error", "code") != w.code {
			t.Fatalf("result %d: want %d %s: %s", i, w.status, w.code, r.raw)
		}
	}
	if r.path("data", 1, "error", "errors", 0, "field") != "destination_url" {
		t.Fatalf("the invalid link's problem names no field: %s", r.raw)
	}
	if r.path("meta", "created") != float64(3) || r.path("meta", "failed") != float64(4) {
		t.Fatalf("meta: %s", r.raw)
	}
	if loc := e.do("GET", "/bulk-a", "", "", 302).header.Get("Location"); loc != "https://bulk.example.com/a" {
		t.Fatalf("Location = %q", loc)
	}
	if loc := e.do("GET", "/same", "", "", 302).header.Get("Location"); loc != "https://bulk.example.com/d" {
		t.Fatalf("the first link of an alias keeps it: Location = %q", loc)
	}
	l := e.do("GET", "/v1/links?search=bulk.example", e.readKey, "", 200)
	if l.path("meta", "total") != float64(3) {
		t.Fatalf("search finds the created links: %s", l.raw)
	}
	after, err := e.srv.campaigns.FindEvents(context.Background(), e.ws, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	created := 0
	for _, ev := range after[len(before):] {
		if ev.Type == link.EventLinkCreated {
			created++
		}
	}
	if created != 3 || len(after)-len(before) != 3 {
		t.Fatalf("%d new events, %d link.created, want 3 link.created", len(after)-len(before), created)
	}
}

// TestBulkCreate_Refused checks the requests refused whole, with nothing
// created: no links, more than 1,000, a malformed item, a read-only key,
// no credential, a body over the size limit.
func TestBulkCreate_Refused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	one := `{"destination_url":"https://example.com/x"}`
	many := make([]string, MaxBulkLinks+1)
	for i := range many {
		many[i] = one
	}
	for _, tc := range []struct {
		name, cred, body string
		status           int
		code             string
	}{
		{"empty list", e.writeKey, `{"links":[]}`, 400, "invalid_request"},
		{"no list", e.writeKey, `{}`, 400, "invalid_request"},
		{"empty body", e.writeKey, ``, 400, "invalid_request"},
		{"1,001 links", e.writeKey, bulkBody(many...), 400, "invalid_request"},
		{"unknown field in an item", e.writeKey, bulkBody(one, `{"destination_url":"https://example.com/","colour":"red"}`), 400, "invalid_request"},
		{"not an array", e.writeKey, `{"links":{"destination_url":"https://example.com/"}}`, 400, "invalid_request"},
		{"read-only key", e.readKey, bulkBody(one), 403, "forbidden"},
		{"no credential", "", bulkBody(one), 401, "unauthorized"},
		{"too large", e.writeKey, bulkBody(`{"destination_url":"https://example.com/` + strings.Repeat("a", maxBulkBody) + `"}`), 413, "payload_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest("POST", "/v1/links/bulk", tc.cred, tc.body)
			if tc.body == "" {
				req.Header.Set("Content-Type", "application/json")
			}
			wantProblem(t, e.request(req), tc.status, tc.code)
		})
	}
	// An unknown field is named with its item, so that a list of a
	// thousand says which one to fix; a case mismatch too.
	for _, tc := range []struct{ item, field string }{
		{`{"destination_url":"https://example.com/","colour":"red"}`, "links[2].colour"},
		{`{"Destination_URL":"https://example.com/"}`, "links[2].Destination_URL"},
	} {
		r := e.request(newRequest("POST", "/v1/links/bulk", e.writeKey, bulkBody(one, one, tc.item)))
		wantProblem(t, r, 400, "invalid_request")
		if got := r.path("errors", 0, "field"); got != tc.field {
			t.Fatalf("field %v, want %q: %s", got, tc.field, r.raw)
		}
		if detail, _ := r.path("detail").(string); !strings.Contains(detail, tc.field) {
			t.Fatalf("detail %q does not name %s", detail, tc.field)
		}
	}
	if total := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); total != float64(0) {
		t.Fatalf("refused requests created %v links", total)
	}
	// 1,000 links are one request.
	r := e.do("POST", "/v1/links/bulk", e.writeKey, bulkBody(many[:MaxBulkLinks]...), 200)
	if r.path("meta", "created") != float64(MaxBulkLinks) {
		t.Fatalf("meta: %v", r.path("meta"))
	}
	if total := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); total != float64(MaxBulkLinks) {
		t.Fatalf("%v links after 1,000 created, want %d", total, MaxBulkLinks)
	}
}

// BenchmarkBulkCreate sends POST /v1/links/bulk requests of 1,000 links
// through the real router to a data file, and reports links created a
// second (links/s).
func BenchmarkBulkCreate(b *testing.B) {
	e := newEnv(b, func(c *Config) { c.Plans[link.PlanFree] = 0 })
	items := make([]string, MaxBulkLinks)
	n := 0
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		for i := range items {
			items[i] = `{"destination_url":"https://shop-` + strconv.Itoa(n%1000) + `.example.com/section/post-` + strconv.Itoa(n) + `?utm_source=news","tags":["bulk"]}`
			n++
		}
		req := newRequest("POST", "/v1/links/bulk", e.writeKey, bulkBody(items...))
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("status %d: %s", w.Code, w.Body.Bytes()[:min(w.Body.Len(), 500)])
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "links/s")
	if used := float64(cpuTime()-cpu) / 1e9; used > 0 {
		b.ReportMetric(float64(n)/used, "links/cpu-s")
	}
}

// TestBulkCreatePasswordsBounded: a bulk request hashes at most
// MaxBulkPasswords passwords; the links past them are refused one by one
// and the rest are created.
func TestBulkCreatePasswordsBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	items := make([]string, MaxBulkPasswords+3)
	for i := range items {
		items[i] = fmt.Sprintf(`{"destination_url":"https://example.com/%d","alias":"pw-%d","password":"open sesame"}`, i, i)
	}
	items = append(items, `{"destination_url":"https://example.com/plain","alias":"plain"}`)
	r := e.do("POST", "/v1/links/bulk", e.writeKey, bulkBody(items...), 200)
	if r.path("meta", "created") != float64(MaxBulkPasswords+1) || r.path("meta", "failed") != float64(3) {
		t.Fatalf("meta %v", r.path("meta"))
	}
	data := r.path("data").([]any)
	for i, d := range data {
		item := d.(map[string]any)
		refused := i >= MaxBulkPasswords && i < MaxBulkPasswords+3
		if _, failed := item["error"]; failed != refused {
			t.Fatalf("item %d: %v", i, item)
		}
		if refused && !strings.Contains(fmt.Sprint(item["error"]), "password") {
			t.Fatalf("item %d: %v", i, item)
		}
	}
	if got := e.do("GET", "/v1/links?search=pw-", e.readKey, "", 200).path("meta", "total"); got != float64(MaxBulkPasswords) {
		t.Fatalf("%v links with a password, want %d", got, MaxBulkPasswords)
	}
}

// A link password is a slow hash, and a bulk creation may carry 20 in one
// request that counts once against the rate limit (7 such requests in 10 s
// took the redirects' median from 1 to 36 ms). Each hash is costly work:
// it passes the costly-work gate, one at a time per slot, on a thread of
// low priority; while the gate stays full, a request that would hash is
// answered 503 server_busy and creates nothing, and one without passwords
// goes through.
func TestBulkPasswords_PassTheCostlyGate(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyConcurrency = 1; c.CostlyWait = 0 })
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"gate"}`, 201).str("id")
	bulk := func(prefix string, passwords int) string {
		items := make([]string, 3)
		for i := range items {
			pw := ""
			if i < passwords {
				pw = `,"password":"open sesame"`
			}
			items[i] = fmt.Sprintf(`{"destination_url":"https://example.com/%d","alias":"%s-%d"%s}`, i, prefix, i, pw)
		}
		return `{"links":[` + strings.Join(items, ",") + `]}`
	}

	letGo := holdGate(t, e, id)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/links/bulk", bulk("busy", 3)},
		{"POST", "/v1/links", `{"destination_url":"https://example.com/p","alias":"busy-one","password":"open sesame"}`},
		{"PATCH", "/v1/links/" + id, `{"password":"open sesame"}`},
	} {
		r := e.request(newRequest(c.method, c.path, e.writeKey, c.body))
		wantProblem(t, r, http.StatusServiceUnavailable, "server_busy")
		if r.header.Get("Retry-After") == "" {
			t.Fatalf("%s %s: 503 without Retry-After", c.method, c.path)
		}
	}
	e.do("GET", "/busy-0", "", "", http.StatusNotFound) // nothing of the refused bulk was created
	e.do("POST", "/v1/links/bulk", e.writeKey, bulk("plain", 0), http.StatusOK)
	letGo()

	var hashes atomic.Int64
	e.srv.costly.entered = func(class string, _ bool) func() {
		if class == costlyPassword {
			hashes.Add(1)
		}
		return func() {}
	}
	var lowPriority atomic.Int64
	e.srv.costly.working = func(class string) {
		if class == costlyPassword {
			lowPriority.Add(1)
		}
	}
	r := e.do("POST", "/v1/links/bulk", e.writeKey, bulk("pw", 3), http.StatusOK)
	if got := r.path("meta", "created"); got != float64(3) {
		t.Fatalf("created %v of 3: %s", got, r.raw)
	}
	if got, want := hashes.Load(), int64(3); got != want {
		t.Fatalf("%d hashes passed the costly-work gate, want %d", got, want)
	}
	if got, want := lowPriority.Load(), int64(3); got != want {
		t.Fatalf("%d hashes ran as costly work, want %d", got, want)
	}
}
