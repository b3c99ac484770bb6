package server

import (
	"sync"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// TestLinkFindIfExists: POST /v1/links with find_if_exists answers the
// workspace's link to the same destination (200) on the same domain, with
// the alias and the tags when the request gives them, and creates one
// (201) otherwise; many such requests at once make one link; another
// workspace's link is never found.
func TestLinkFindIfExists(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/offer?a=1","tags":["b","a"]}`, 201)
	id := first.str("id")
	found := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/offer?a=1","find_if_exists":true}`, 200)
	if found.str("id") != id {
		t.Fatalf("found %s, want %s", found.raw, id)
	}
	// The destination as the link keeps it, byte for byte (surrounding
	// spaces trimmed).
	if got := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"  https://example.com/offer?a=1 ","find_if_exists":true}`, 200); got.str("id") != id {
		t.Fatalf("found with spaces around: %s", got.raw)
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/offer?a=2","find_if_exists":true}`, 201)
	// Same tags in another order: found; other tags: a new link.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/offer?a=1","tags":["a","b"],"find_if_exists":true}`, 200)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/offer?a=1","tags":["a"],"find_if_exists":true}`, 201)
	// An alias: the link of that alias, when it goes there.
	alias := first.str("alias")
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/offer?a=1","alias":"`+alias+`","find_if_exists":true}`, 200)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/offer?a=1","alias":"fresh-one","find_if_exists":true}`, 201)
	wantProblem(t, e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/other","alias":"fresh-one","find_if_exists":true}`, 409), 409, link.ECONFLICT)
	// Without the flag, always a new link; another workspace never finds it.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/offer?a=1"}`, 201)
	if got := e.do("POST", "/v1/links", e.otherKey, `{"destination_url":"https://example.com/offer?a=1","find_if_exists":true}`, 201); got.str("id") == id {
		t.Fatal("another workspace found the link")
	}
	// Bad input is refused before any look-up.
	wantProblem(t, e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"ftp://x","find_if_exists":true}`, 422), 422, link.EINVALID)

	// Many at once: one link.
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.request(newRequest("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/rush","find_if_exists":true}`))
			if r.status != 200 && r.status != 201 {
				t.Errorf("status %d: %s", r.status, r.raw)
				return
			}
			ids[i] = r.str("id")
		}()
	}
	wg.Wait()
	for _, got := range ids {
		if got != ids[0] {
			t.Fatalf("requests at once made several links: %v", ids)
		}
	}
}
