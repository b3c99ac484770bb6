package server

import (
	"fmt"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// TestUTMTemplates: a workspace's UTM templates through the API: saved,
// listed by name, changed, deleted; names unique whatever the case; a
// read key reads them only; another workspace sees none of them.
func TestUTMTemplates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	news := e.do("POST", "/v1/utm-templates", e.writeKey, `{"name":" Newsletter ","utm_source":"newsletter","utm_medium":"email"}`, 201)
	id := news.str("id")
	if news.str("name") != "Newsletter" || news.str("utm_source") != "newsletter" || news.path("utm_campaign") != nil {
		t.Fatalf("created %s", news.raw)
	}
	e.do("POST", "/v1/utm-templates", e.adminToken, `{"name":"ads","utm_source":"google","utm_medium":"cpc"}`, 201)
	list := e.do("GET", "/v1/utm-templates", e.readKey, "", 200)
	if list.path("data", 0, "name") != "ads" || list.path("data", 1, "id") != id {
		t.Fatalf("list %s", list.raw)
	}
	if got := e.do("GET", "/v1/utm-templates/"+id, e.readKey, "", 200); got.str("utm_medium") != "email" {
		t.Fatalf("get %s", got.raw)
	}
	wantProblem(t, e.do("POST", "/v1/utm-templates", e.writeKey, `{"name":"NEWSLETTER","utm_source":"x"}`, 409), 409, link.ECONFLICT)
	wantProblem(t, e.do("POST", "/v1/utm-templates", e.writeKey, `{"name":"empty"}`, 422), 422, link.EINVALID)
	wantProblem(t, e.do("POST", "/v1/utm-templates", e.writeKey, `{"utm_source":"x"}`, 422), 422, link.EINVALID)
	wantProblem(t, e.do("POST", "/v1/utm-templates", e.writeKey, `{"name":"x","utm_source":"x","utm_term":"y"}`, 400), 400, link.EINVALIDREQUEST)
	wantProblem(t, e.do("POST", "/v1/utm-templates", e.readKey, `{"name":"r","utm_source":"x"}`, 403), 403, link.EFORBIDDEN)
	wantProblem(t, e.do("GET", "/v1/utm-templates/"+id, e.otherKey, "", 404), 404, link.ENOTFOUND)
	if other := e.do("GET", "/v1/utm-templates", e.otherKey, "", 200); len(other.path("data").([]any)) != 0 {
		t.Fatalf("another workspace lists %s", other.raw)
	}

	upd := e.do("PATCH", "/v1/utm-templates/"+id, e.writeKey, `{"utm_campaign":"weekly","utm_medium":""}`, 200)
	if upd.str("utm_campaign") != "weekly" || upd.path("utm_medium") != nil || upd.str("utm_source") != "newsletter" {
		t.Fatalf("updated %s", upd.raw)
	}
	wantProblem(t, e.do("PATCH", "/v1/utm-templates/"+id, e.writeKey, `{"name":"ADS"}`, 409), 409, link.ECONFLICT)
	wantProblem(t, e.do("PATCH", "/v1/utm-templates/"+id, e.writeKey, `{"utm_source":"","utm_campaign":""}`, 422), 422, link.EINVALID)
	wantProblem(t, e.do("PATCH", "/v1/utm-templates/"+id, e.otherKey, `{"name":"mine"}`, 404), 404, link.ENOTFOUND)
	wantProblem(t, e.do("DELETE", "/v1/utm-templates/"+id, e.otherKey, "", 404), 404, link.ENOTFOUND)
	e.do("DELETE", "/v1/utm-templates/"+id, e.writeKey, "", 204)
	wantProblem(t, e.do("GET", "/v1/utm-templates/"+id, e.readKey, "", 404), 404, link.ENOTFOUND)
}

// TestLinkWithUTMTemplate: a link created with utm_template_id takes the
// template's values where it sets none of its own, alone or in bulk, and
// keeps them when the template changes; an unknown template, or another
// workspace's, is refused (422, utm_template_id), in bulk for its link only.
func TestLinkWithUTMTemplate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tpl := e.do("POST", "/v1/utm-templates", e.writeKey, `{"name":"Spring","utm_source":"newsletter","utm_medium":"email","utm_campaign":"spring"}`, 201).str("id")
	theirs := e.do("POST", "/v1/utm-templates", e.otherKey, `{"name":"Theirs","utm_source":"theirs"}`, 201).str("id")

	l := e.do("POST", "/v1/links", e.writeKey, fmt.Sprintf(`{"destination_url":"https://example.com/a?x=1","utm_template_id":%q,"utm_medium":"social"}`, tpl), 201)
	if l.str("utm_source") != "newsletter" || l.str("utm_medium") != "social" || l.str("utm_campaign") != "spring" {
		t.Fatalf("link with the template: %s", l.raw)
	}
	r := e.request(newRequest("GET", "/"+l.str("alias"), "", ""))
	if loc := r.header.Get("Location"); loc != "https://example.com/a?x=1&utm_source=newsletter&utm_medium=social&utm_campaign=spring" {
		t.Fatalf("redirect to %q", loc)
	}
	e.do("PATCH", "/v1/utm-templates/"+tpl, e.writeKey, `{"utm_source":"changed"}`, 200)
	if got := e.do("GET", "/v1/links/"+l.str("id"), e.readKey, "", 200); got.str("utm_source") != "newsletter" {
		t.Fatalf("the template's change reached the link: %s", got.raw)
	}
	for _, bad := range []string{theirs, "utm_unknown"} {
		r := e.do("POST", "/v1/links", e.writeKey, fmt.Sprintf(`{"destination_url":"https://example.com/b","utm_template_id":%q}`, bad), 422)
		wantProblem(t, r, 422, link.EINVALID)
		if r.path("errors", 0, "field") != "utm_template_id" {
			t.Fatalf("field %s", r.raw)
		}
	}

	bulk := e.do("POST", "/v1/links/bulk", e.writeKey, fmt.Sprintf(`{"links":[
		{"destination_url":"https://example.com/1","utm_template_id":%q},
		{"destination_url":"https://example.com/2","utm_template_id":"utm_unknown"},
		{"destination_url":"https://example.com/3","utm_template_id":%q,"utm_source":"own"}]}`, tpl, tpl), 200)
	if bulk.path("meta", "created") != 2.0 || bulk.path("data", 0, "link", "utm_source") != "changed" ||
		bulk.path("data", 1, "error", "errors", 0, "field") != "utm_template_id" ||
		bulk.path("data", 2, "link", "utm_source") != "own" || bulk.path("data", 2, "link", "utm_campaign") != "spring" {
		t.Fatalf("bulk %s", bulk.raw)
	}
}
