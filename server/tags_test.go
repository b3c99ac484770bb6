package server

import (
	"net/url"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// TestTags: the workspace's tags through the API: listed from its links
// with their counts, coloured and described by PUT (which replaces),
// read one by one by a percent-encoded name (spaces, slashes, any
// letters), cleared by DELETE; bad colours and descriptions are 422; a
// read key reads only; another workspace sees none of it.
func TestTags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","tags":["spring","a/b","Été 2026"]}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","tags":["spring"]}`, 201)
	list := e.do("GET", "/v1/tags", e.readKey, "", 200)
	if got := len(list.path("data").([]any)); got != 3 {
		t.Fatalf("tags %s", list.raw)
	}
	if list.path("data", 0, "name") != "a/b" || list.path("data", 1, "name") != "spring" || list.path("data", 1, "links") != float64(2) || list.path("data", 1, "color") != nil || list.path("data", 2, "name") != "Été 2026" {
		t.Fatalf("tags %s", list.raw)
	}
	if len(list.path("colors").([]any)) != len(link.TagColors) {
		t.Fatalf("colors %s", list.raw)
	}

	path := func(name string) string { return "/v1/tags/" + url.PathEscape(name) }
	put := e.do("PUT", path("spring"), e.writeKey, `{"color":"Green","description":" Spring campaign "}`, 200)
	if put.str("color") != "green" || put.str("description") != "Spring campaign" || put.path("links") != float64(2) || put.str("updated_at") == "" {
		t.Fatalf("put %s", put.raw)
	}
	for _, name := range []string{"a/b", "Été 2026"} {
		got := e.do("PUT", path(name), e.writeKey, `{"color":"purple"}`, 200)
		if got.str("name") != name || got.path("description") != nil || got.path("links") != float64(1) {
			t.Fatalf("put %q: %s", name, got.raw)
		}
		if got := e.do("GET", path(name), e.readKey, "", 200); got.str("color") != "purple" {
			t.Fatalf("get %q: %s", name, got.raw)
		}
	}
	// A tag on no link yet may take a colour, which a link tagged later shows.
	e.do("PUT", path("summer"), e.writeKey, `{"color":"yellow"}`, 200)
	if got := e.do("GET", path("summer"), e.readKey, "", 200); got.path("links") != float64(0) {
		t.Fatalf("summer %s", got.raw)
	}
	// PUT replaces: what it leaves out is cleared.
	if got := e.do("PUT", path("spring"), e.writeKey, `{"description":"Only this"}`, 200); got.path("color") != nil || got.str("description") != "Only this" {
		t.Fatalf("replace %s", got.raw)
	}

	for _, tc := range []struct{ body, field string }{
		{`{"color":"teal"}`, "color"},
		{`{"description":"two\nlines"}`, "description"},
		{`{"description":"` + string(make([]byte, 0)) + `x` + repeatX(500) + `"}`, "description"},
	} {
		r := e.do("PUT", path("spring"), e.writeKey, tc.body, 422)
		wantProblem(t, r, 422, link.EINVALID)
		if got := r.path("errors", 0, "field"); got != tc.field {
			t.Errorf("%s: field %v, want %s", tc.body, got, tc.field)
		}
	}
	wantProblem(t, e.do("PUT", path("spring"), e.writeKey, `{"colour":"red"}`, 400), 400, link.EINVALIDREQUEST)
	wantProblem(t, e.do("PUT", path("a,b"), e.writeKey, `{"color":"red"}`, 422), 422, link.EINVALID)
	wantProblem(t, e.do("PUT", path(" padded"), e.writeKey, `{"color":"red"}`, 422), 422, link.EINVALID)
	// "." and ".." cannot stand in /v1/tags/{name}: links may not carry them.
	for _, name := range []string{".", ".."} {
		if got := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","tags":["`+name+`"]}`, 422).path("errors", 0, "field"); got != "tags" {
			t.Errorf("a link tagged %q: field %v", name, got)
		}
	}
	wantProblem(t, e.do("PUT", path("spring"), e.readKey, `{"color":"red"}`, 403), 403, link.EFORBIDDEN)
	wantProblem(t, e.do("DELETE", path("spring"), e.readKey, "", 403), 403, link.EFORBIDDEN)
	wantProblem(t, e.do("GET", path("nothing"), e.readKey, "", 404), 404, link.ENOTFOUND)
	wantProblem(t, e.do("GET", path("SPRING"), e.readKey, "", 404), 404, link.ENOTFOUND)

	// Another workspace sees nothing of these.
	if other := e.do("GET", "/v1/tags", e.otherKey, "", 200); len(other.path("data").([]any)) != 0 {
		t.Fatalf("another workspace lists %s", other.raw)
	}
	wantProblem(t, e.do("GET", path("summer"), e.otherKey, "", 404), 404, link.ENOTFOUND)
	wantProblem(t, e.do("DELETE", path("summer"), e.otherKey, "", 404), 404, link.ENOTFOUND)

	// DELETE clears; the links keep the tag.
	e.do("DELETE", path("spring"), e.writeKey, "", 204)
	wantProblem(t, e.do("DELETE", path("spring"), e.writeKey, "", 404), 404, link.ENOTFOUND)
	if got := e.do("GET", path("spring"), e.readKey, "", 200); got.path("description") != nil || got.path("links") != float64(2) || got.path("updated_at") != nil {
		t.Fatalf("after delete %s", got.raw)
	}
	e.do("DELETE", path("summer"), e.writeKey, "", 204)
	wantProblem(t, e.do("GET", path("summer"), e.readKey, "", 404), 404, link.ENOTFOUND)
}

func repeatX(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

// TestTagEmptyName: /v1/tags/ names no tag: every method answers 404,
// as the path of no operation does, not a validation error.
func TestTagEmptyName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wantProblem(t, e.request(newRequest("GET", "/v1/tags/", e.readKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("PUT", "/v1/tags/", e.writeKey, `{"description":"x"}`)), 404, "not_found")
	wantProblem(t, e.request(newRequest("DELETE", "/v1/tags/", e.writeKey, "")), 404, "not_found")
}
