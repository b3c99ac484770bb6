package server

import "testing"

// Tests of the forwarding of a visitor's path and query (forward.go).

func TestForwardTo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, loc, rest, query, want string
	}{
		{"path joins with one slash", "https://x.test/a", "/b/c", "", "https://x.test/a/b/c"},
		{"after a trailing slash", "https://x.test/a/", "/b/c", "", "https://x.test/a/b/c"},
		{"onto the root", "https://x.test/", "/b", "", "https://x.test/b"},
		{"onto no path", "https://x.test", "/b", "", "https://x.test/b"},
		{"a trailing slash of the visitor's", "https://x.test/a", "/", "", "https://x.test/a/"},
		{"query and fragment stay", "https://x.test/a?k=1#top", "/b", "", "https://x.test/a/b?k=1#top"},
		{"escapes kept as sent", "https://x.test/a", "/b%20c/%2Fd", "", "https://x.test/a/b%20c/%2Fd"},
		{"query added", "https://x.test/a", "", "x=1&y=%20", "https://x.test/a?x=1&y=%20"},
		{"query after the destination's", "https://x.test/a?k=1", "", "x=1", "https://x.test/a?k=1&x=1"},
		{"the destination's name wins", "https://x.test/a?ref=own&utm_source=news", "", "ref=evil&x=1&utm_source=evil&utm_medium=m", "https://x.test/a?ref=own&utm_source=news&x=1&utm_medium=m"},
		{"an escaped name is the same name", "https://x.test/a?a+b=1", "", "a%20b=2&c=3", "https://x.test/a?a+b=1&c=3"},
		{"both, before the fragment", "https://x.test/a?k=1#f", "/b", "x=1", "https://x.test/a/b?k=1&x=1#f"},
		{"non-ASCII escaped", "https://x.test/a", "/é", "", "https://x.test/a/%C3%A9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := forwardTo(c.loc, c.rest, c.query)
			if !ok || got != c.want {
				t.Fatalf("forwardTo(%q, %q, %q) = %q, %v; want %q", c.loc, c.rest, c.query, got, ok, c.want)
			}
		})
	}
	for _, rest := range []string{"/..", "/a/../b", "/.", "/%2e%2E/x", "/%2E", "/a%2F..%2Fb", `/a\..\b`, "/a%5C..", "/%zz"} {
		if got, ok := forwardTo("https://x.test/a", rest, ""); ok {
			t.Errorf("forwardTo with %q = %q, want refused", rest, got)
		}
	}
}

// get visits path on host (the primary one when "") with a browser's
// Accept and no credential.
func (e *env) get(host, method, path string) *response {
	e.t.Helper()
	req := newRequest(method, path, "", "")
	req.Header.Set("Accept", "text/html")
	if host != "" {
		req.Host = host
	}
	return e.request(req)
}

func TestLinkForwarding(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	both := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/docs?lang=en&ref=lb#top","alias":"guide",
		"utm_source":"short","forward_path":true,"forward_query":true}`, 201)
	if both.path("forward_path") != true || both.path("forward_query") != true {
		t.Fatalf("created: %s", both.raw)
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/q","alias":"query","forward_query":true}`, 201)
	plain := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/plain","alias":"plain"}`, 201)
	if plain.path("forward_path") != false || plain.path("forward_query") != false {
		t.Fatalf("a plain link: %s", plain.raw)
	}
	for _, c := range []struct {
		name, path string
		status     int
		location   string
	}{
		{"path and query", "/guide/guide/install?x=1&ref=evil&utm_source=evil",
			302, "https://x.test/docs/guide/install?lang=en&ref=lb&utm_source=short&x=1#top"},
		{"the code alone", "/guide", 302, "https://x.test/docs?lang=en&ref=lb&utm_source=short#top"},
		{"the code with a query", "/guide?page=2", 302, "https://x.test/docs?lang=en&ref=lb&utm_source=short&page=2#top"},
		{"a trailing slash", "/guide/", 302, "https://x.test/docs/?lang=en&ref=lb&utm_source=short#top"},
		{"an escaped segment", "/guide/a%20b", 302, "https://x.test/docs/a%20b?lang=en&ref=lb&utm_source=short#top"},
		{"a dot-dot segment", "/guide/a/../../admin", 400, ""},
		{"an escaped dot-dot", "/guide/%2e%2e/admin", 400, ""},
		{"a reserved suffix: the tracking pixel", "/guide/track", 200, ""},
		{"a reserved suffix, deeper", "/guide/stats/x", 404, ""},
		{"query only: the query", "/query?x=1", 302, "https://x.test/q?x=1"},
		{"query only: no path", "/query/more", 404, ""},
		{"plain: the query stays behind", "/plain?x=1", 302, "https://x.test/plain"},
		{"plain: a path is 404 as before", "/plain/more", 404, ""},
		{"no such link", "/nope/more", 404, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, method := range []string{"GET", "HEAD"} {
				r := e.get("", method, c.path)
				if r.status != c.status || r.header.Get("Location") != c.location {
					t.Fatalf("%s %s: %d %q, want %d %q: %s", method, c.path, r.status, r.header.Get("Location"), c.status, c.location, r.raw)
				}
			}
		})
	}
	// A path of a link without forwarding answers exactly what an unknown
	// path does.
	a, b := e.get("", "GET", "/plain/more"), e.get("", "GET", "/nope/more")
	if a.status != b.status || a.header.Get("Content-Type") != b.header.Get("Content-Type") {
		t.Fatalf("/plain/more %d %s, /nope/more %d %s", a.status, a.header.Get("Content-Type"), b.status, b.header.Get("Content-Type"))
	}
	// The routes beside the codes keep theirs.
	e.do("GET", "/v1/links/"+both.str("id"), e.readKey, "", 200)
	if r := e.get("", "GET", "/guide+"); r.status != 200 {
		t.Fatalf("preview: %d", r.status)
	}
	if r := e.get("", "GET", "/v1/nope"); r.status != 404 {
		t.Fatalf("/v1/nope: %d", r.status)
	}
	// Every forwarded GET is a click; HEAD none.
	e.flush()
	if got := e.do("GET", "/v1/links/"+both.str("id"), e.readKey, "", 200).path("clicks"); got != float64(6) {
		t.Fatalf("clicks %v, want 6 (5 forwarded, the pixel's)", got)
	}
	// PATCH turns it off: the path is 404 again, the query stays behind.
	r := e.do("PATCH", "/v1/links/"+both.str("id"), e.writeKey, `{"forward_path":false,"forward_query":false}`, 200)
	if r.path("forward_path") != false || r.path("forward_query") != false {
		t.Fatalf("patched: %s", r.raw)
	}
	if r := e.get("", "GET", "/guide/guide"); r.status != 404 {
		t.Fatalf("after PATCH: %d %q", r.status, r.header.Get("Location"))
	}
	if r := e.get("", "GET", "/guide?x=1"); r.header.Get("Location") != "https://x.test/docs?lang=en&ref=lb&utm_source=short#top" {
		t.Fatalf("after PATCH: %q", r.header.Get("Location"))
	}
	// A PATCH of another field leaves it as it is.
	e.do("PATCH", "/v1/links/"+both.str("id"), e.writeKey, `{"forward_path":true}`, 200)
	if got := e.do("PATCH", "/v1/links/"+both.str("id"), e.writeKey, `{"tags":["t"]}`, 200).path("forward_path"); got != true {
		t.Fatalf("forward_path after another PATCH: %v", got)
	}
}

// TestLinkForwardingControls checks forwarding with the other controls: a
// rule's destination, the password form posted back to the forwarded
// path, a custom domain, and the blocklist.
func TestLinkForwardingControls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/a","alias":"ruled","forward_path":true,"forward_query":true,
		"rules":[{"if":{"query":{"name":"src","value":"qr"}},"then":"https://qr.x.test/landing"}]}`, 201)
	if r := e.get("", "GET", "/ruled/p?src=qr"); r.status != 302 || r.header.Get("Location") != "https://qr.x.test/landing/p?src=qr" {
		t.Fatalf("rule: %d %q", r.status, r.header.Get("Location"))
	}

	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/secret","alias":"locked","forward_path":true,"password":"open-sesame"}`, 201)
	if r := e.get("", "GET", "/locked/file.pdf"); r.status != 200 || r.header.Get("Location") != "" {
		t.Fatalf("protected: %d %q", r.status, r.header.Get("Location"))
	}
	if r := e.request(passwordPost("/locked/file.pdf", "192.0.2.9", "open-sesame")); r.status != 303 || r.header.Get("Location") != "https://x.test/secret/file.pdf" {
		t.Fatalf("password posted: %d %q: %s", r.status, r.header.Get("Location"), r.raw)
	}

	e.verifiedDomain("go.example.com", "")
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/d","alias":"dd","domain":"go.example.com","forward_path":true}`, 201)
	if r := e.get("go.example.com", "GET", "/dd/x/y"); r.status != 302 || r.header.Get("Location") != "https://x.test/d/x/y" {
		t.Fatalf("custom domain: %d %q", r.status, r.header.Get("Location"))
	}
	if r := e.get("go.example.com", "GET", "/nope/x"); r.status != 404 {
		t.Fatalf("custom domain, unknown: %d", r.status)
	}

	// A forwarded URL the blocklist blocks is refused; the link's own
	// destination still redirects.
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"x.test/d/evil*"}`, 201)
	if r := e.get("go.example.com", "GET", "/dd/evil/payload"); r.status == 302 {
		t.Fatalf("blocked forward redirected to %q", r.header.Get("Location"))
	}
	if r := e.get("go.example.com", "GET", "/dd/fine"); r.status != 302 {
		t.Fatalf("a path not blocked: %d", r.status)
	}
}

// TestLinkForwardingWorkspaceDefault checks that a workspace's defaults
// are what a new link takes when its request does not say, and change no
// existing link.
func TestLinkForwardingWorkspaceDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	before := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/old","alias":"old"}`, 201)
	r := e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"link_defaults":{"forward_path":true}}`, 200)
	if r.path("link_defaults", "forward_path") != true || r.path("link_defaults", "forward_query") != false {
		t.Fatalf("patched workspace: %s", r.raw)
	}
	// A key's request reads the workspace with its key.
	n := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/new","alias":"new"}`, 201)
	if n.path("forward_path") != true || n.path("forward_query") != false {
		t.Fatalf("new link: %s", n.raw)
	}
	if r := e.get("", "GET", "/new/a/b"); r.status != 302 || r.header.Get("Location") != "https://x.test/new/a/b" {
		t.Fatalf("new link's path: %d %q", r.status, r.header.Get("Location"))
	}
	// Saying so wins over the default.
	if got := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/n2","forward_path":false}`, 201).path("forward_path"); got != false {
		t.Fatalf("explicit false: %v", got)
	}
	bulk := e.do("POST", "/v1/links/bulk", e.writeKey, `{"links":[{"destination_url":"https://x.test/b1"},{"destination_url":"https://x.test/b2","forward_query":true}]}`, 200)
	if bulk.path("data", 0, "link", "forward_path") != true || bulk.path("data", 1, "link", "forward_query") != true {
		t.Fatalf("bulk: %s", bulk.raw)
	}
	// The link made before keeps what it had.
	if got := e.do("GET", "/v1/links/"+before.str("id"), e.readKey, "", 200).path("forward_path"); got != false {
		t.Fatalf("existing link: %v", got)
	}
	if r := e.get("", "GET", "/old/a"); r.status != 404 {
		t.Fatalf("existing link's path: %d", r.status)
	}
	// Only the workspace's owners change it; GET shows it.
	wantProblem(t, e.request(newRequest("PATCH", "/v1/workspaces/"+e.ws, e.writeKey, `{"link_defaults":{"forward_query":true}}`)), 403, "forbidden")
	if got := e.do("GET", "/v1/workspaces/"+e.ws, e.adminToken, "", 200).path("link_defaults", "forward_path"); got != true {
		t.Fatalf("GET workspace: %v", got)
	}
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"link_defaults":{"forward_path":false,"forward_query":true}}`, 200)
	if got := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/n3"}`, 201); got.path("forward_path") != false || got.path("forward_query") != true {
		t.Fatalf("after the second PATCH: %s", got.raw)
	}
}
