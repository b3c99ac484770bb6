package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// TestBulkUpdateLinks: one change to many links at once, a result for
// each in the order sent; another workspace's link, an unknown or repeated
// ID and a link the change would put on the blocklist fail alone; the
// redirects follow at once; an alias, no IDs or too many are refused.
func TestBulkUpdateLinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mk := func(alias string) string {
		return e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/`+alias+`","alias":"`+alias+`"}`, 201).str("id")
	}
	a, b := mk("bulk-a"), mk("bulk-b")
	body := fmt.Sprintf(`{"ids":[%q,%q,%q,"lnk_unknown",%q],"data":{"tags":["spring"],"utm_source":"bulk","redirect_code":301}}`, a, e.otherLink, b, a)
	r := e.do("POST", "/v1/links/bulk-update", e.writeKey, body, 200)
	if r.path("meta", "updated") != 2.0 || r.path("meta", "failed") != 3.0 ||
		r.path("data", 0, "link", "utm_source") != "bulk" || r.path("data", 2, "link", "redirect_code") != 301.0 ||
		r.path("data", 1, "error", "status") != 404.0 || r.path("data", 3, "error", "status") != 404.0 || r.path("data", 4, "error", "status") != 404.0 {
		t.Fatalf("bulk update: %s", r.raw)
	}
	if res := e.request(newRequest("GET", "/bulk-b", "", "")); res.status != 301 || !strings.Contains(res.header.Get("Location"), "utm_source=bulk") {
		t.Fatalf("redirect after the update: %d %s", res.status, res.header.Get("Location"))
	}
	if got := e.do("GET", "/v1/links/"+e.otherLink, e.otherKey, "", 200); got.path("utm_source") != nil {
		t.Fatalf("another workspace's link changed: %s", got.raw)
	}
	wantProblem(t, e.do("POST", "/v1/links/bulk-update", e.writeKey, fmt.Sprintf(`{"ids":[%q],"data":{"alias":"x"}}`, a), 422), 422, link.EINVALID)
	wantProblem(t, e.do("POST", "/v1/links/bulk-update", e.writeKey, `{"ids":[],"data":{"archived":true}}`, 400), 400, link.EINVALIDREQUEST)
	ids := make([]string, MaxBulkLinks+1)
	for i := range ids {
		ids[i] = fmt.Sprintf("%q", a)
	}
	wantProblem(t, e.do("POST", "/v1/links/bulk-update", e.writeKey, `{"ids":[`+strings.Join(ids, ",")+`],"data":{"archived":true}}`, 400), 400, link.EINVALIDREQUEST)
	wantProblem(t, e.do("POST", "/v1/links/bulk-update", e.readKey, fmt.Sprintf(`{"ids":[%q],"data":{"archived":true}}`, a), 403), 403, link.EFORBIDDEN)
	// A destination on the blocklist fails each link it would reach.
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"blocked.example"}`, 201)
	r = e.do("POST", "/v1/links/bulk-update", e.writeKey, fmt.Sprintf(`{"ids":[%q],"data":{"destination_url":"https://blocked.example/"}}`, a), 200)
	if r.path("data", 0, "error", "status") != 422.0 {
		t.Fatalf("a blocked destination: %s", r.raw)
	}
}

// TestBulkDeleteLinks: many links deleted at once, a result for each;
// their short URLs stop at once; others fail alone.
func TestBulkDeleteLinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/1","alias":"del-a"}`, 201).str("id")
	b := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/2","alias":"del-b"}`, 201).str("id")
	keep := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/3","alias":"del-keep"}`, 201).str("id")
	e.request(newRequest("GET", "/del-a", "", "")) // in the redirect cache
	r := e.do("POST", "/v1/links/bulk-delete", e.writeKey, fmt.Sprintf(`{"ids":[%q,%q,%q,%q]}`, a, e.otherLink, b, a), 200)
	if r.path("meta", "deleted") != 2.0 || r.path("meta", "failed") != 2.0 || r.path("data", 0, "error") != nil ||
		r.path("data", 1, "error", "status") != 404.0 || r.path("data", 3, "error", "status") != 404.0 {
		t.Fatalf("bulk delete: %s", r.raw)
	}
	for _, alias := range []string{"del-a", "del-b"} {
		if res := e.request(newRequest("GET", "/"+alias, "", "")); res.status != 404 {
			t.Fatalf("/%s after the deletion: %d", alias, res.status)
		}
	}
	e.do("GET", "/v1/links/"+keep, e.readKey, "", 200)
	e.do("GET", "/v1/links/"+e.otherLink, e.otherKey, "", 200)
	wantProblem(t, e.do("POST", "/v1/links/bulk-delete", e.writeKey, `{"ids":[]}`, 400), 400, link.EINVALIDREQUEST)
	wantProblem(t, e.do("POST", "/v1/links/bulk-delete", e.readKey, fmt.Sprintf(`{"ids":[%q]}`, keep), 403), 403, link.EFORBIDDEN)
}
