package server

import (
	"strings"
	"testing"
	"time"
)

// TestRobots checks /robots.txt: the crawlable links of the host allowed
// by their exact paths, everything else disallowed; each custom domain
// its own; a change shown once the minute's answer has passed; a link
// no longer crawlable, renamed or deleted leaves it.
func TestRobots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	robots := func(host string) string {
		t.Helper()
		r := e.get(host, "GET", "/robots.txt")
		if r.status != 200 || r.header.Get("Content-Type") != "text/plain; charset=utf-8" || r.header.Get("Cache-Control") != "public, max-age=60" {
			t.Fatalf("robots.txt of %q: %d %v", host, r.status, r.header)
		}
		return string(r.raw)
	}
	const head = "# linkbolt: short links are not for indexing, except those marked crawlable.\nUser-agent: *\n"
	if got := robots(""); got != head+"Disallow: /\n" {
		t.Fatalf("without crawlable links: %q", got)
	}
	spring := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/spring","alias":"spring","crawlable":true}`, 201)
	if spring.path("crawlable") != true {
		t.Fatalf("created: %s", spring.raw)
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/hidden","alias":"hidden"}`, 201)
	about := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/about","alias":"about-us"}`, 201)
	e.do("PATCH", "/v1/links/"+about.str("id"), e.writeKey, `{"crawlable":true}`, 200)
	e.verifiedDomain("go.example.com", "")
	const dom = "go.example.com"
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/d","alias":"deal","domain":"go.example.com","crawlable":true}`, 201)

	// The answer of a minute ago holds; after it, the links show.
	if got := robots(""); got != head+"Disallow: /\n" {
		t.Fatalf("within the minute: %q", got)
	}
	e.clock.Add(time.Minute)
	if got := robots(""); got != head+"Allow: /about-us$\nAllow: /spring$\nDisallow: /\n" {
		t.Fatalf("primary host: %q", got)
	}
	if got := robots(dom); got != head+"Allow: /deal$\nDisallow: /\n" {
		t.Fatalf("custom domain: %q", got)
	}
	if r := e.get("", "HEAD", "/robots.txt"); r.status != 200 || len(r.raw) != 0 {
		t.Fatalf("HEAD: %d %q", r.status, r.raw)
	}

	// Renamed, turned off, deleted: gone from the list.
	e.do("PATCH", "/v1/links/"+spring.str("id"), e.writeKey, `{"alias":"spring-2027"}`, 200)
	e.clock.Add(time.Minute)
	if got := robots(""); !strings.Contains(got, "Allow: /spring-2027$\n") || strings.Contains(got, "Allow: /spring$") {
		t.Fatalf("renamed: %q", got)
	}
	e.do("PATCH", "/v1/links/"+spring.str("id"), e.writeKey, `{"crawlable":false}`, 200)
	e.do("DELETE", "/v1/links/"+about.str("id"), e.writeKey, "", 204)
	e.clock.Add(time.Minute)
	if got := robots(""); got != head+"Disallow: /\n" {
		t.Fatalf("turned off and deleted: %q", got)
	}
}

// TestRobotsOff checks links.robots_txt: false: /robots.txt is 404, on
// custom domains too, for a proxy in front that serves its own.
func TestRobotsOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.NoRobotsTxt = true })
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://x.test/spring","alias":"spring","crawlable":true}`, 201)
	wantProblem(t, e.request(newRequest("GET", "/robots.txt", "", "")), 404, "not_found")
	e.verifiedDomain("go.example.com", "")
	if r := e.onHost("go.example.com", "GET", "/robots.txt", "", ""); r.status != 404 {
		t.Fatalf("custom domain: %d", r.status)
	}
}
