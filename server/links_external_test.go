package server

import (
	"net/url"
	"strings"
	"testing"
)

// TestLinkExternalID checks a link's external ID through the API: set at
// creation (one and in bulk), unique in the workspace (409, field
// external_id), found with ?external_id= and at /v1/links/ext_{id} on
// every route of one link, changed and removed with PATCH, refused in a
// bulk update, and checked for its characters.
func TestLinkExternalID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/a","alias":"ext-a","external_id":"order-1234"}`, 201)
	id := a.str("id")
	if a.path("external_id") != "order-1234" {
		t.Fatalf("created: %s", a.raw)
	}
	plain := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/plain"}`, 201)
	if v, ok := plain.path("external_id"), true; v != nil || !ok {
		t.Fatalf("a link without one: %s", plain.raw)
	}

	r := e.request(newRequest("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/b","external_id":"order-1234"}`))
	wantProblem(t, r, 409, "conflict")
	if r.path("errors", 0, "field") != "external_id" {
		t.Fatalf("conflict without the field: %s", r.raw)
	}
	for _, bad := range []string{`"a/b"`, `"with space"`, `"é"`, `"` + strings.Repeat("x", 129) + `"`} {
		wantProblem(t, e.request(newRequest("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/c","external_id":`+bad+`}`)), 422, "validation_failed")
	}

	// Found by it.
	page := e.do("GET", "/v1/links?external_id=order-1234", e.readKey, "", 200)
	if page.path("meta", "total") != 1.0 || page.path("data", 0, "id") != id {
		t.Fatalf("by external_id: %s", page.raw)
	}
	if none := e.do("GET", "/v1/links?external_id=nobody", e.readKey, "", 200); none.path("meta", "total") != 0.0 || len(none.path("data").([]any)) != 0 {
		t.Fatalf("an unknown one: %s", none.raw)
	}
	wantProblem(t, e.request(newRequest("GET", "/v1/links?external_id=order-1234&tags=x", e.readKey, "")), 400, "invalid_request")
	if got := e.do("GET", "/v1/links/ext_order-1234", e.readKey, "", 200); got.str("id") != id {
		t.Fatalf("GET ext_: %s", got.raw)
	}
	e.do("GET", "/v1/analytics/links/ext_order-1234", e.readKey, "", 200)
	e.do("GET", "/v1/links/ext_order-1234/qr", e.readKey, "", 200)
	wantProblem(t, e.request(newRequest("GET", "/v1/links/ext_nobody", e.readKey, "")), 404, "not_found")

	// Changed through its own route, then removed with null.
	if got := e.do("PATCH", "/v1/links/ext_order-1234", e.writeKey, `{"external_id":"order-9"}`, 200); got.path("external_id") != "order-9" || got.str("id") != id {
		t.Fatalf("PATCH: %s", got.raw)
	}
	wantProblem(t, e.request(newRequest("GET", "/v1/links/ext_order-1234", e.readKey, "")), 404, "not_found")
	b := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/b","external_id":"order-1234"}`, 201).str("id")
	wantProblem(t, e.request(newRequest("PATCH", "/v1/links/"+b, e.writeKey, `{"external_id":"order-9"}`)), 409, "conflict")
	if got := e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"external_id":null}`, 200); got.path("external_id") != nil {
		t.Fatalf("removed: %s", got.raw)
	}

	// In bulk: a second item with the same one loses; a bulk update
	// cannot set one, only remove.
	bulk := e.do("POST", "/v1/links/bulk", e.writeKey, `{"links":[{"destination_url":"https://x.test/1","external_id":"sku:1"},
		{"destination_url":"https://x.test/2","external_id":"sku:1"},{"destination_url":"https://x.test/3","external_id":"order-1234"}]}`, 200)
	if bulk.path("data", 0, "link", "external_id") != "sku:1" || bulk.path("data", 1, "error", "code") != "conflict" || bulk.path("data", 2, "error", "code") != "conflict" {
		t.Fatalf("bulk: %s", bulk.raw)
	}
	wantProblem(t, e.request(newRequest("POST", "/v1/links/bulk-update", e.writeKey, `{"ids":["`+b+`"],"data":{"external_id":"x"}}`)), 422, "validation_failed")
	e.do("POST", "/v1/links/bulk-update", e.writeKey, `{"ids":["`+b+`"],"data":{"external_id":""}}`, 200)

	e.do("DELETE", "/v1/links/ext_"+url.PathEscape("sku:1"), e.writeKey, "", 204)
	if none := e.do("GET", "/v1/links?external_id=sku:1", e.readKey, "", 200); none.path("meta", "total") != 0.0 {
		t.Fatalf("deleted: %s", none.raw)
	}
}

// TestLinkExternalIDCheck: the page of ?external_id= shows the link's
// destination check as the other lists and GET do, where the workspace
// checks its destinations.
func TestLinkExternalIDCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"destination_checks":true}`, 200)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/a","external_id":"order-1"}`, 201)
	if got := e.do("GET", "/v1/links/ext_order-1", e.readKey, "", 200).path("destination_check", "status"); got != "unchecked" {
		t.Fatalf("GET ext_: destination_check %v", got)
	}
	if got := e.do("GET", "/v1/links", e.readKey, "", 200).path("data", 0, "destination_check", "status"); got != "unchecked" {
		t.Fatalf("list: destination_check %v", got)
	}
	if got := e.do("GET", "/v1/links?external_id=order-1", e.readKey, "", 200).path("data", 0, "destination_check", "status"); got != "unchecked" {
		t.Fatalf("?external_id=: destination_check %v", got)
	}
}
