package server

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// loopEnv is a server whose primary host is http://localhost:8080 and
// which listens on :8080, with a verified custom domain go.example.test
// in its workspace, an unverified one in another workspace and a verified
// IDN domain.
func loopEnv(t *testing.T) *env {
	e := newEnv(t, func(c *Config) {
		c.BaseURL, c.AltBaseURL, c.Listen = &url.URL{Scheme: "http", Host: "localhost:8080"}, &url.URL{Scheme: "https", Host: "s.test"}, ":8080"
		c.Plans[link.PlanFree] = 0 // many requests in a minute
	})
	id := e.do("POST", "/v1/domains", e.adminToken, `{"hostname":"go.example.test"}`, 201).str("id")
	e.do("PATCH", "/v1/domains/"+id, e.adminToken, `{"verified":true}`, 200)
	id = e.do("POST", "/v1/domains", e.adminToken, `{"hostname":"bücher.example"}`, 201).str("id")
	e.do("PATCH", "/v1/domains/"+id, e.adminToken, `{"verified":true}`, 200)
	e.do("POST", "/v1/domains", e.otherKey, `{"hostname":"pending.example.test"}`, 201)
	return e
}

// Every other spelling of this service is refused as a destination, a
// domain's root and not-found redirect, on create and update and in the
// simple API.
func TestDestinationSpellingsOfThisService(t *testing.T) {
	t.Parallel()
	e := loopEnv(t)
	linkID := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/"}`, 201).str("id")
	domID := e.do("GET", "/v1/domains", e.readKey, "", 200).path("data", 0, "id").(string)
	own := []string{
		"http://localhost:8080/x",
		"http://LOCALHOST:8080/x",
		"http://localhost.:8080/x",
		"http://app.localhost:8080/x",
		"http://ｌｏｃａｌｈｏｓｔ:8080/x",  // full-width letters
		"http://localhost。:8080/x", // ideographic full stop
		"http://127.0.0.1:8080/x",
		"http://127.1:8080/x",
		"http://[::1]:8080/x",
		"http://[::ffff:127.0.0.1]:8080/x",
		"http://2130706433:8080/x",
		"http://0x7f000001:8080/x",
		"http://0177.0.0.1:8080/x",
		"http://127.000.000.001:8080/x",
		"http://127.0.0.2:8080/x",
		"http://0.0.0.0:8080/x",
		"http://[::]:8080/x",
		"https://s.test/x",
		"https://S.TEST./x",
		"http://s.test/x",
		"https://s.test:443/x",
		"https://go.example.test/x",
		"http://GO.Example.Test.:9000/x",
		"https://bücher.example/x",
		"https://xn--bcher-kva.example/x",
		"https://BÜCHER.example/x",
	}
	for _, dest := range own {
		t.Run(dest, func(t *testing.T) {
			for _, tc := range []struct {
				method, path, body, field string
			}{
				{"POST", "/v1/links", `{"destination_url":"` + dest + `"}`, "destination_url"},
				{"PATCH", "/v1/links/" + linkID, `{"destination_url":"` + dest + `"}`, "destination_url"},
				{"POST", "/api/urls", `{"originalUrl":"` + dest + `"}`, "originalUrl"},
				{"POST", "/v1/domains", `{"hostname":"new.example.test","root_redirect_url":"` + dest + `"}`, "root_redirect_url"},
				{"POST", "/v1/domains", `{"hostname":"new.example.test","not_found_url":"` + dest + `"}`, "not_found_url"},
				{"PATCH", "/v1/domains/" + domID, `{"root_redirect_url":"` + dest + `"}`, "root_redirect_url"},
				{"PATCH", "/v1/domains/" + domID, `{"not_found_url":"` + dest + `"}`, "not_found_url"},
			} {
				r := e.request(newRequest(tc.method, tc.path, e.writeKey, tc.body))
				wantProblem(t, r, 422, "validation_failed")
				if got := r.path("errors", 0, "field"); got != tc.field {
					t.Fatalf("%s %s: field %v, want %q: %s", tc.method, tc.path, got, tc.field, r.raw)
				}
			}
		})
	}
	// Other services: another port on this machine, other hosts.
	for _, dest := range []string{
		"http://localhost:3000/x",
		"http://127.0.0.1:9090/x",
		"http://[::1]:5000/x",
		"https://localhost.example.com/x",
		"https://s.test:8443/x",
		"https://sub.go.example.test/x",
		// Another workspace's unverified claim: anyone may claim a name,
		// and a claim must not stop others linking to it (a loop through
		// it once verified is refused when served).
		"https://pending.example.test/x",
	} {
		e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"`+dest+`"}`, 201)
	}
	// The link that was patched is unchanged.
	if got := e.do("GET", "/v1/links/"+linkID, e.readKey, "", 200).str("destination_url"); got != "https://example.com/" {
		t.Fatalf("destination after refused updates: %q", got)
	}
}

// Following redirects like curl -L through the real server never loops: a
// destination that points back into the service (a domain verified after
// the link was saved, or data written by an older version) is refused when
// served, with no click, so at most one hop of a chain is a click.
func TestRedirectLoopsAreNotFollowed(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.Listen = ln.Addr().String() })
	ts := httptest.NewUnstartedServer(e.srv)
	ts.Listener = e.srv.Listener(ln)
	ts.Start()
	defer ts.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ctx := context.Background()

	// a → http://go.loop.test/b is allowed while go.loop.test is no domain.
	a := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"http://go.loop.test:`+port+`/b","alias":"a"}`, 201).str("id")
	// Data from before the fix, written past validation: a link to itself
	// spelt 127.1, and b on the domain back to a.
	links := e.db.Links
	self := &link.Link{WorkspaceID: e.ws, Alias: "self", DestinationURL: "http://127.1:" + port + "/self", RedirectCode: 302}
	if err := links.CreateLink(ctx, self); err != nil {
		t.Fatal(err)
	}
	dom := e.do("POST", "/v1/domains", e.adminToken, `{"hostname":"go.loop.test"}`, 201).str("id")
	e.do("PATCH", "/v1/domains/"+dom, e.adminToken, `{"verified":true}`, 200)
	// Now a link on the domain back to the primary host is refused...
	wantProblem(t, e.request(newRequest("POST", "/v1/links", e.writeKey,
		`{"destination_url":"http://lb.test/a","domain":"go.loop.test","alias":"b"}`)), 422, "validation_failed")
	// ...but an old one may exist.
	b := &link.Link{WorkspaceID: e.ws, Domain: "go.loop.test", Alias: "b", DestinationURL: "http://lb.test:" + port + "/a", RedirectCode: 302}
	if err := links.CreateLink(ctx, b); err != nil {
		t.Fatal(err)
	}

	// A client that resolves every name to the test server, like curl -L
	// with --resolve, following up to 50 redirects.
	hops := 0
	client := &http.Client{
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, ln.Addr().String())
		}},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			hops++
			if len(via) >= 50 {
				return http.ErrUseLastResponse
			}
			return nil
		},
		Timeout: time.Minute,
	}
	for _, start := range []string{"http://lb.test:" + port + "/a", "http://lb.test:" + port + "/self", "http://go.loop.test:" + port + "/b"} {
		hops = 0
		res, err := client.Get(start)
		if err != nil {
			t.Fatalf("GET %s: %v", start, err)
		}
		res.Body.Close()
		if got, want := res.StatusCode, http.StatusLoopDetected; got != want || hops > 1 {
			t.Fatalf("GET %s: status %d after %d redirects, want %d after at most 1", start, got, hops, want)
		}
		if got := res.Header.Get("Content-Type"); got != "application/problem+json" {
			t.Fatalf("GET %s: Content-Type %q", start, got)
		}
	}
	e.flush()
	total := 0.0
	for _, id := range []string{a, self.ID, b.ID} {
		total += e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("clicks").(float64)
	}
	// b → a: b is one click, a refuses; a and self refuse at once.
	if total > 1 {
		t.Fatalf("%v clicks counted for three loop attempts, want at most 1", total)
	}
	// HEAD is refused the same way.
	e.do("HEAD", "/a", "", "", http.StatusLoopDetected)
}

// A domain's root and not-found redirects that loop (the target became a
// verified domain after they were saved) answer the page instead.
func TestDomainRedirectLoopsServeThePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	one := e.do("POST", "/v1/domains", e.adminToken, `{"hostname":"one.example.test","root_redirect_url":"https://two.example.test/",
		"not_found_url":"https://two.example.test/404"}`, 201).str("id")
	e.do("PATCH", "/v1/domains/"+one, e.adminToken, `{"verified":true}`, 200)
	req := newRequest("GET", "/", "", "")
	req.Host = "one.example.test"
	if r := e.request(req); r.status != 302 || r.header.Get("Location") != "https://two.example.test/" {
		t.Fatalf("root before: %d %q", r.status, r.header.Get("Location"))
	}
	two := e.do("POST", "/v1/domains", e.adminToken, `{"hostname":"two.example.test"}`, 201).str("id")
	e.do("PATCH", "/v1/domains/"+two, e.adminToken, `{"verified":true}`, 200)
	req = newRequest("GET", "/", "", "")
	req.Host = "one.example.test"
	if r := e.request(req); r.status != 200 || r.header.Get("Location") != "" {
		t.Fatalf("root after: %d %q", r.status, r.header.Get("Location"))
	}
	req = newRequest("GET", "/nope", "", "")
	req.Host = "one.example.test"
	if r := e.request(req); r.status != 404 || r.header.Get("Location") != "" {
		t.Fatalf("not found after: %d %q", r.status, r.header.Get("Location"))
	}
}

// Internationalised hosts are stored as A-labels, so that Location is
// ASCII and a homograph shows; the API gives both forms of the host.
func TestIDNDestinations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		in, stored, host, unicode, location string
	}{
		{"https://аpple.com/login", "https://xn--pple-43d.com/login", "xn--pple-43d.com", "аpple.com", "https://xn--pple-43d.com/login"},
		{"https://ａｐｐｌｅ。com/", "https://apple.com/", "apple.com", "apple.com", "https://apple.com/"},
		{"https://例え.テスト/パス?q=値#節", "https://xn--r8jz45g.xn--zckzah/パス?q=値#節", "xn--r8jz45g.xn--zckzah", "例え.テスト",
			"https://xn--r8jz45g.xn--zckzah/%E3%83%91%E3%82%B9?q=%E5%80%A4#%E7%AF%80"},
		{"https://Bücher.Example:8443/x", "https://xn--bcher-kva.example:8443/x", "xn--bcher-kva.example", "bücher.example", "https://xn--bcher-kva.example:8443/x"},
		{"https://faß.de/", "https://xn--fa-hia.de/", "xn--fa-hia.de", "faß.de", "https://xn--fa-hia.de/"},
		{"https://xn--pple-43d.com/", "https://xn--pple-43d.com/", "xn--pple-43d.com", "аpple.com", "https://xn--pple-43d.com/"},
		{"https://Example.COM/A", "https://Example.COM/A", "example.com", "example.com", "https://Example.COM/A"},
		{"http://3221225985/x", "http://192.0.2.1/x", "192.0.2.1", "192.0.2.1", "http://192.0.2.1/x"},
		{"https://my_host.example.com/", "https://my_host.example.com/", "my_host.example.com", "my_host.example.com", "https://my_host.example.com/"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"`+tc.in+`"}`, 201)
			if got := r.str("destination_url"); got != tc.stored {
				t.Fatalf("destination_url %q, want %q", got, tc.stored)
			}
			if got := r.str("destination_host"); got != tc.host {
				t.Fatalf("destination_host %q, want %q", got, tc.host)
			}
			if got := r.str("destination_host_unicode"); got != tc.unicode {
				t.Fatalf("destination_host_unicode %q, want %q", got, tc.unicode)
			}
			loc := e.do("GET", "/"+r.str("alias"), "", "", 302).header.Get("Location")
			if loc != tc.location {
				t.Fatalf("Location %q, want %q", loc, tc.location)
			}
			for i := 0; i < len(loc); i++ {
				if loc[i] >= 0x80 {
					t.Fatalf("Location %q is not ASCII", loc)
				}
			}
			// The simple API stores the same form.
			if got := e.do("POST", "/api/urls", e.writeKey, `{"originalUrl":"`+tc.in+`"}`, 201).str("originalUrl"); got != tc.stored {
				t.Fatalf("originalUrl %q, want %q", got, tc.stored)
			}
		})
	}
	// A PATCH converts too, and so do a domain's redirects.
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/"}`, 201).str("id")
	if got := e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"destination_url":"https://аpple.com/"}`, 200).str("destination_url"); got != "https://xn--pple-43d.com/" {
		t.Fatalf("patched destination %q", got)
	}
	d := e.do("POST", "/v1/domains", e.writeKey, `{"hostname":"go.example.test","root_redirect_url":"https://bücher.example/","not_found_url":"https://ａｐｐｌｅ。com/404"}`, 201)
	if got, want := d.str("root_redirect_url")+" "+d.str("not_found_url"), "https://xn--bcher-kva.example/ https://apple.com/404"; got != want {
		t.Fatalf("domain redirects %q, want %q", got, want)
	}

	// Hosts that are not valid IDNA (or IPv4) are refused.
	for _, bad := range []string{
		"https://xn--zz.example/",       // bad punycode
		"https://xn--a.com/",            // punycode of a disallowed character
		"https://\u05d0a.com/",          // breaks the Bidi rule
		"https://exa\u200bmple.com/",    // zero-width space
		"https://a\ufe0f\u202e.com/",    // bidi override
		"https://xn--.com/",             // empty label
		"http://example.123/",           // ends in a number, not IPv4
		"http://1.2.3.4.5/",             // five parts
		"http://300.1.1.1/",             // part over 255
		"https://exa%E2%80%8Bmple.com/", // zero-width space, percent-encoded
	} {
		r := e.request(newRequest("POST", "/v1/links", e.writeKey, `{"destination_url":"`+bad+`"}`))
		wantProblem(t, r, 422, "validation_failed")
		if got := r.path("errors", 0, "field"); got != "destination_url" {
			t.Fatalf("%s: field %v: %s", bad, got, r.raw)
		}
		if strings.Contains(r.str("detail"), "192.") {
			t.Fatalf("detail leaks: %s", r.raw)
		}
	}
}

// The machine's own host name reaches the service as localhost does (from
// /etc/hosts, no DNS): on the listen port it is this service, on another
// port another one.
func TestDestinationMachineName(t *testing.T) {
	t.Parallel()
	name, err := os.Hostname()
	if err != nil || name == "" {
		t.Fatalf("os.Hostname: %q, %v", name, err)
	}
	e := loopEnv(t)
	for _, h := range []string{name, strings.ToUpper(name), name + "."} {
		r := e.request(newRequest("POST", "/v1/links", e.writeKey, `{"destination_url":"http://`+h+`:8080/loop"}`))
		wantProblem(t, r, 422, "validation_failed")
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"http://`+name+`:3000/other"}`, 201)
}
