package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/linkbolt/linkbolt/link"
)

func init() {
	// The YOURLS API answers XML and JSONP too: let checkOpenAPI read them
	// (their schema is a string).
	openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/javascript", openapi3filter.PlainBodyDecoder)
}

// yourlsGet sends a GET to the YOURLS API with the parameters in the query.
func (e *env) yourlsGet(params url.Values) *response {
	e.t.Helper()
	return e.request(newRequest("GET", yourlsPath+"?"+params.Encode(), "", ""))
}

// yourlsPost sends the parameters as a url-encoded form.
func (e *env) yourlsPost(params url.Values) *response {
	e.t.Helper()
	req := newRequest("POST", yourlsPath, "", params.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.request(req)
}

// yourlsScript sends a GET to the YOURLS API as a script element of
// another site's page does (the way JSONP is used).
func (e *env) yourlsScript(params url.Values) *response {
	e.t.Helper()
	req := newRequest("GET", yourlsPath+"?"+params.Encode(), "", "")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Sec-Fetch-Dest", "script")
	return e.request(req)
}

// rawRequest reads a request as a client wrote it on the wire and sends it
// through the real handler.
func (e *env) rawRequest(raw string) *response {
	e.t.Helper()
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		e.t.Fatalf("reading the request: %v\n%s", err, raw)
	}
	req.RemoteAddr = "198.51.100.7:40000"
	return e.request(req)
}

func wantYOURLS(t *testing.T, r *response, status int, contentType string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	if got := r.header.Get("Content-Type"); got != contentType {
		t.Fatalf("Content-Type %q, want %q", got, contentType)
	}
}

// shareXRequest is the request ShareX's YOURLS URL shortener sends
// (ShareX.UploadersLib/URLShorteners/YourlsURLShortener.cs): a multipart
// POST, built by RequestHelpers.MakeInputContent, of signature, action,
// url and format=simple in that order, with a boundary of 20 dashes and
// the clock's ticks in hex, from an HttpWebRequest without keep-alive.
func shareXRequest(signature, longURL string) string {
	const boundary = "--------------------8de4c3f9a1b2c3d"
	var body strings.Builder
	for _, kv := range [][2]string{{"signature", signature}, {"action", "shorturl"}, {"url", longURL}, {"format", "simple"}} {
		fmt.Fprintf(&body, "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n", boundary, kv[0], kv[1])
	}
	fmt.Fprintf(&body, "--%s--\r\n", boundary)
	return "POST /yourls-api.php HTTP/1.1\r\n" +
		"Content-Type: multipart/form-data; boundary=" + boundary + "\r\n" +
		"User-Agent: ShareX/18.0.1\r\n" +
		"Host: lb.test\r\n" +
		"Content-Length: " + strconv.Itoa(body.Len()) + "\r\n" +
		"Expect: 100-continue\r\n" +
		"Connection: Close\r\n\r\n" + body.String()
}

// TestYOURLSShareX replays ShareX's requests and checks what ShareX reads:
// the whole body of a 200 answer is the short URL.
func TestYOURLSShareX(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const long = "https://files.example/screenshots/2026-03-10_12-00-00.png"
	r := e.rawRequest(shareXRequest(e.writeKey, long))
	wantYOURLS(t, r, 200, "text/plain; charset=utf-8")
	short := string(r.raw)
	alias, ok := strings.CutPrefix(short, "http://lb.test/")
	if !ok || alias == "" || strings.ContainsAny(alias, "\r\n /") {
		t.Fatalf("ShareX reads %q as the short URL", short)
	}
	// The short URL redirects to the screenshot.
	res := e.do("GET", "/"+alias, "", "", 302)
	if got := res.header.Get("Location"); got != long {
		t.Fatalf("Location %q, want %q", got, long)
	}
	// The same screenshot again: YOURLS (unique URLs) answers 400 with the
	// short URL it has, which ShareX reports as a failed request.
	r = e.rawRequest(shareXRequest(e.writeKey, long))
	wantYOURLS(t, r, 400, "text/plain; charset=utf-8")
	if string(r.raw) != short {
		t.Fatalf("duplicate: body %q, want the existing %q", r.raw, short)
	}
	// A wrong signature: YOURLS's 403 and its message as the text.
	r = e.rawRequest(shareXRequest("0123456789", long))
	wantYOURLS(t, r, 403, "text/plain; charset=utf-8")
	if string(r.raw) != "Please log in" {
		t.Fatalf("wrong signature: body %q", r.raw)
	}
	list := e.do("GET", "/v1/links?search=screenshots", e.readKey, "", 200)
	if n := len(list.path("data").([]any)); n != 1 {
		t.Fatalf("%d links for the screenshot, want 1", n)
	}
}

// linkCreatorRequest is a request of the WordPress plugin YOURLS Link
// Creator (norcross/yourls-link-creator, lib/helper.php
// run_yourls_api_call): wp_remote_post over HTTP/1.0 with the arguments
// first and signature, action and format=json after them
// (array_merge($args, $base)), encoded by http_build_query.
func linkCreatorRequest(args [][2]string, signature, action string) string {
	var parts []string
	for _, kv := range append(args, [2]string{"signature", signature}, [2]string{"action", action}, [2]string{"format", "json"}) {
		parts = append(parts, url.QueryEscape(kv[0])+"="+url.QueryEscape(kv[1])) // PHP's urlencode: spaces as +
	}
	body := strings.Join(parts, "&")
	return "POST /yourls-api.php HTTP/1.0\r\n" +
		"Host: lb.test\r\n" +
		"User-Agent: WordPress/6.5.2; https://blog.example\r\n" +
		"Accept: */*\r\n" +
		"Accept-Encoding: deflate, gzip, br\r\n" +
		"Content-Type: application/x-www-form-urlencoded; charset=UTF-8\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// TestYOURLSLinkCreator replays the WordPress YOURLS Link Creator's four
// calls and checks the fields it reads: a 200 with JSON, shorturl from
// shorturl, link.clicks from url-stats, links[*].url/shorturl/clicks from
// stats (its import), and any JSON from db-stats (its connection check).
func TestYOURLSLinkCreator(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const permalink = "https://blog.example/2026/03/hello-world/"
	// The connection check.
	r := e.rawRequest(linkCreatorRequest(nil, e.writeKey, "db-stats"))
	wantYOURLS(t, r, 200, "application/json; charset=utf-8")
	if r.path("db-stats", "total_links") == nil {
		t.Fatalf("db-stats: %s", r.raw)
	}
	// A post is published: shorturl with url, title and keyword.
	r = e.rawRequest(linkCreatorRequest([][2]string{{"url", permalink}, {"title", "Hello world!"}, {"keyword", "hello"}}, e.writeKey, "shorturl"))
	wantYOURLS(t, r, 200, "application/json; charset=utf-8")
	if got, want := r.str("shorturl"), "http://lb.test/hello"; got != want {
		t.Fatalf("shorturl %q, want %q", got, want)
	}
	if got := r.path("url", "title"); got != "Hello world!" {
		t.Fatalf("title %v", got)
	}
	link := e.do("GET", "/v1/links?search=hello-world", e.readKey, "", 200).path("data", 0).(map[string]any)
	if link["alias"] != "hello" || link["destination_url"] != permalink || link["title"] != "Hello world!" {
		t.Fatalf("the stored link: %v", link)
	}
	e.click("hello", "Mozilla/5.0 (X11; Linux x86_64) Firefox/124.0", "203.0.113.9", "")
	e.click("hello", "Mozilla/5.0 (X11; Linux x86_64) Firefox/124.0", "203.0.113.10", "")
	e.flush()
	// The click count column: url-stats with the stored short URL.
	r = e.rawRequest(linkCreatorRequest([][2]string{{"shorturl", "http://lb.test/hello"}}, e.writeKey, "url-stats"))
	wantYOURLS(t, r, 200, "application/json; charset=utf-8")
	if got := r.path("link", "clicks"); got != float64(2) {
		t.Fatalf("link.clicks %v: %s", got, r.raw)
	}
	// The import: stats, top 999.
	r = e.rawRequest(linkCreatorRequest([][2]string{{"filter", "top"}, {"limit", "999"}}, e.writeKey, "stats"))
	wantYOURLS(t, r, 200, "application/json; charset=utf-8")
	first := r.path("links", "link_1").(map[string]any)
	if first["url"] != permalink || first["shorturl"] != "http://lb.test/hello" || first["clicks"] != float64(2) {
		t.Fatalf("links.link_1: %v", first)
	}
	// The same post again (a second save): YOURLS's duplicate answer, a
	// 400 the plugin does not store.
	r = e.rawRequest(linkCreatorRequest([][2]string{{"url", permalink}, {"title", "Hello world!"}, {"keyword", "hello2"}}, e.writeKey, "shorturl"))
	wantYOURLS(t, r, 400, "application/json; charset=utf-8")
	if r.str("code") != "error:url" || r.str("shorturl") != "http://lb.test/hello" {
		t.Fatalf("duplicate: %s", r.raw)
	}
}

// TestYOURLSShorturlAnswers checks the shorturl action's answers, field by
// field, in order, against YOURLS's yourls_add_new_link.
func TestYOURLSShorturlAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.otherKey, `{"destination_url":"https://other.example/taken","alias":"taken"}`, 201)
	e.do("POST", "/v1/admin/blocklist", e.adminToken, `{"entry":"malware.example"}`, 201)
	sig := e.writeKey

	r := e.yourlsGet(url.Values{"signature": {sig}, "action": {"shorturl"}, "url": {"https://example.com/spring"},
		"keyword": {"spring"}, "title": {"  Spring\n\tsale  "}, "format": {"json"}})
	wantYOURLS(t, r, 200, "application/json; charset=utf-8")
	want := `{"status":"success","code":"","message":"https:\/\/example.com\/spring added to database","errorCode":"","statusCode":"200",` +
		`"url":{"keyword":"spring","url":"https:\/\/example.com\/spring","title":"Spring sale","date":"2026-03-10 12:00:00","ip":"192.0.2.1"},` +
		`"title":"Spring sale","shorturl":"http:\/\/lb.test\/spring"}`
	if string(r.raw) != want {
		t.Fatalf("answer\n%s\nwant\n%s", r.raw, want)
	}

	// The other formats of the same answer.
	for i, format := range []string{"xml", "", "jsonp", "simple"} {
		long := "https://example.com/format/" + strconv.Itoa(i)
		p := url.Values{"signature": {sig}, "action": {"shorturl"}, "url": {long}, "keyword": {"fmt" + strconv.Itoa(i)}, "callback": {"cb"}}
		if format != "" {
			p.Set("format", format)
		}
		for _, want := range []int{200, 400} { // made, then a duplicate
			r := e.yourlsPost(p)
			if r.status != want {
				t.Fatalf("%q: status %d, want %d: %s", format, r.status, want, r.raw)
			}
			short := "http://lb.test/fmt" + strconv.Itoa(i)
			switch format {
			case "xml", "":
				tree := xmlTree(t, r.raw).(map[string]any)
				if tree["shorturl"] != short || tree["callback"] != "cb" || tree["url"].(map[string]any)["url"] != long ||
					(want == 200) != (tree["status"] == "success") {
					t.Fatalf("xml: %s", r.raw)
				}
			case "jsonp":
				var v map[string]any
				body, ok := strings.CutPrefix(string(r.raw), "cb(")
				if !ok || json.Unmarshal([]byte(strings.TrimSuffix(body, ")")), &v) != nil || v["shorturl"] != short {
					t.Fatalf("jsonp: %s", r.raw)
				}
			case "simple":
				if string(r.raw) != short {
					t.Fatalf("simple: %s", r.raw)
				}
			}
		}
	}
	for _, l := range e.do("GET", "/v1/links?search=fmt", e.readKey, "", 200).path("data").([]any) {
		e.do("DELETE", "/v1/links/"+l.(map[string]any)["id"].(string), e.writeKey, "", 204)
	}

	for _, tc := range []struct {
		name, url, keyword string
		code, message      string
		shorturl           string
	}{
		{"duplicate long URL", "https://example.com/spring", "", "error:url",
			"https://example.com/spring already exists in database (short URL: lb.test/spring)", "http://lb.test/spring"},
		{"duplicate long URL with a new keyword", "https://example.com/spring", "spring2", "error:url",
			"https://example.com/spring already exists in database (short URL: lb.test/spring)", "http://lb.test/spring"},
		{"keyword taken here", "https://example.com/b", "spring", "error:keyword",
			"Short URL spring already exists in database or is reserved", ""},
		{"keyword taken by another workspace", "https://example.com/c", "taken", "error:keyword",
			"Short URL taken already exists in database or is reserved", ""},
		{"reserved keyword", "https://example.com/d", "app", "error:keyword", "", ""},
		{"bad keyword", "https://example.com/e", "a b.c", "error:keyword", "", ""},
		{"no URL", "", "", "error:nourl", "Missing or malformed URL", ""},
		{"bare scheme", "http://", "", "error:nourl", "Missing or malformed URL", ""},
		{"not http", "javascript:alert(1)", "", "error:nourl", "", ""},
		{"no host", "https:///path", "", "error:nourl", "", ""},
		{"a short URL of this service", "http://lb.test/spring", "", "error:noloop", "URL is a short URL", ""},
		{"blocklisted", "https://malware.example/x", "", "error:blocked", "URL is on this service's blocklist", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.yourlsPost(url.Values{"signature": {sig}, "action": {"shorturl"}, "url": {tc.url},
				"keyword": {tc.keyword}, "format": {"json"}})
			wantYOURLS(t, r, 400, "application/json; charset=utf-8")
			if r.str("status") != "fail" || r.str("code") != tc.code || r.str("statusCode") != "400" || r.str("errorCode") != "400" {
				t.Fatalf("answer: %s", r.raw)
			}
			if tc.message != "" && r.str("message") != tc.message {
				t.Fatalf("message %q, want %q", r.str("message"), tc.message)
			}
			if got, _ := r.path("shorturl").(string); got != tc.shorturl {
				t.Fatalf("shorturl %q, want %q", got, tc.shorturl)
			}
			if tc.code == "error:url" {
				u := r.path("url").(map[string]any)
				if u["keyword"] != "spring" || u["clicks"] != float64(0) || u["title"] != "Spring sale" {
					t.Fatalf("url: %v", u)
				}
			}
		})
	}
	// Nothing but the first link was made in the workspace.
	if n := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); n != float64(1) {
		t.Fatalf("%v links, want 1", n)
	}
	// A read key reads but does not shorten.
	r = e.yourlsGet(url.Values{"signature": {e.readKey}, "action": {"shorturl"}, "url": {"https://example.com/r"}, "format": {"json"}})
	wantYOURLS(t, r, 403, "application/json; charset=utf-8")
	if r.str("errorCode") != "403" || !strings.Contains(r.str("message"), "read_write") {
		t.Fatalf("read key: %s", r.raw)
	}
	r = e.yourlsGet(url.Values{"signature": {e.readKey}, "action": {"expand"}, "shorturl": {"spring"}, "format": {"json"}})
	wantYOURLS(t, r, 200, "application/json; charset=utf-8")
	// A long title is cut to what a link takes.
	r = e.yourlsPost(url.Values{"signature": {sig}, "action": {"shorturl"}, "url": {"https://example.com/long"},
		"title": {strings.Repeat("é", 300)}, "format": {"json"}})
	wantYOURLS(t, r, 200, "application/json; charset=utf-8")
	if got := r.str("title"); got != strings.Repeat("é", link.MaxTitleLength) {
		t.Fatalf("title of %d characters", len([]rune(got)))
	}
	// No title: YOURLS titles the link with its URL when it cannot read
	// the page; linkbolt reads no page and stores no title.
	r = e.yourlsPost(url.Values{"signature": {sig}, "action": {"shorturl"}, "url": {"https://example.com/untitled"}, "format": {"json"}})
	if r.str("title") != "https://example.com/untitled" {
		t.Fatalf("title %q", r.str("title"))
	}
}

// yourlsFixture makes three links with 3, 1 and 0 clicks (created in that
// order a minute apart) and returns their aliases.
func yourlsFixture(e *env) {
	e.t.Helper()
	for _, alias := range []string{"three", "one", "zero"} {
		e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/`+alias+`","alias":"`+alias+`"}`, 201)
		e.clock.Add(time.Minute)
	}
	for range 3 {
		e.click("three", "Mozilla/5.0 Firefox/124.0", "203.0.113.1", "")
	}
	e.click("one", "Mozilla/5.0 Firefox/124.0", "203.0.113.1", "")
	e.flush()
}

// TestYOURLSActionsAndFormats runs each action in each format and checks
// that xml, jsonp and the default format carry what json carries, and
// what simple answers.
func TestYOURLSActionsAndFormats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	yourlsFixture(e)
	for _, tc := range []struct {
		params url.Values
		status int
		json   string // the exact json answer; "" checks fields below
		check  func(t *testing.T, r *response)
		simple string
	}{
		{url.Values{"action": {"version"}}, 200, `{"version":"1.10.4"}`, nil, "1.10.4"},
		{url.Values{"action": {"version"}, "db": {"1"}}, 200, `{"version":"1.10.4","db_version":"507"}`, nil, "1.10.4"},
		{url.Values{"action": {"expand"}, "shorturl": {"http://lb.test/three"}}, 200,
			`{"keyword":"three","shorturl":"http:\/\/lb.test\/three","longurl":"https:\/\/example.com\/three","title":"https:\/\/example.com\/three","message":"success","statusCode":"200"}`,
			nil, "https://example.com/three"},
		{url.Values{"action": {"expand"}, "shorturl": {"three"}}, 200, "", func(t *testing.T, r *response) {
			if r.str("longurl") != "https://example.com/three" {
				t.Fatalf("%s", r.raw)
			}
		}, "https://example.com/three"},
		{url.Values{"action": {"expand"}, "shorturl": {"http://s.test/three"}}, 200, "", func(t *testing.T, r *response) {
			if r.str("keyword") != "three" {
				t.Fatalf("%s", r.raw)
			}
		}, "https://example.com/three"},
		{url.Values{"action": {"expand"}, "shorturl": {"nope"}}, 404,
			`{"keyword":"nope","message":"Error: short URL not found","errorCode":"404"}`, nil, "not found"},
		{url.Values{"action": {"url-stats"}, "shorturl": {"http://lb.test/three"}}, 200,
			`{"statusCode":"200","message":"success","link":{"shorturl":"http:\/\/lb.test\/three","url":"https:\/\/example.com\/three","title":"https:\/\/example.com\/three","timestamp":"2026-03-10 12:00:00","ip":"","clicks":3}}`,
			nil, yourlsNeedFormat},
		{url.Values{"action": {"url-stats"}, "shorturl": {"http://elsewhere.example/three"}}, 404,
			`{"statusCode":"404","message":"Error: short URL not found"}`, nil, yourlsNeedFormat},
		{url.Values{"action": {"db-stats"}}, 200,
			`{"db-stats":{"total_links":3,"total_clicks":4},"statusCode":"200","message":"success"}`, nil, yourlsNeedFormat},
		{url.Values{"action": {"stats"}, "filter": {"top"}, "limit": {"2"}}, 200, "", func(t *testing.T, r *response) {
			wantAliases(t, r, "three", "one")
		}, yourlsNeedFormat},
		{url.Values{"action": {"stats"}}, 200, `{"stats":{"total_links":3,"total_clicks":4},"statusCode":"200","message":"success"}`, nil, yourlsNeedFormat},
		{url.Values{"action": {"nope"}}, 400, `{"errorCode":"400","message":"Unknown or missing \"action\" parameter"}`, nil,
			`Unknown or missing "action" parameter`},
		{url.Values{}, 400, `{"errorCode":"400","message":"Unknown or missing \"action\" parameter"}`, nil,
			`Unknown or missing "action" parameter`},
	} {
		t.Run(tc.params.Encode(), func(t *testing.T) {
			with := func(format string) url.Values {
				p := url.Values{"signature": {e.readKey}}
				for k, v := range tc.params {
					p[k] = v
				}
				if format != "" {
					p.Set("format", format)
				}
				return p
			}
			j := e.yourlsGet(with("json"))
			wantYOURLS(t, j, tc.status, "application/json; charset=utf-8")
			if tc.json != "" && string(j.raw) != tc.json {
				t.Fatalf("json\n%s\nwant\n%s", j.raw, tc.json)
			}
			if tc.check != nil {
				tc.check(t, j)
			}
			want := stringify(j.body)
			for _, format := range []string{"xml", ""} { // xml is the default
				x := e.yourlsGet(with(format))
				wantYOURLS(t, x, tc.status, "application/xml; charset=utf-8")
				if !bytes.HasPrefix(x.raw, []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<root>")) || !bytes.HasSuffix(x.raw, []byte("</root>\n")) {
					t.Fatalf("xml: %s", x.raw)
				}
				if got := xmlTree(t, x.raw); !reflect.DeepEqual(got, want) {
					t.Fatalf("xml\n%v\nwant (json's)\n%v", got, want)
				}
			}
			p := e.yourlsScript(with("jsonp"))
			p2 := e.yourlsScript(func() url.Values { v := with("jsonp"); v.Set("callback", "jQuery35_17.done"); return v }())
			wantYOURLS(t, p, tc.status, "application/javascript; charset=utf-8")
			wantYOURLS(t, p2, tc.status, "application/javascript; charset=utf-8")
			if string(p.raw) != "("+string(j.raw)+")" {
				t.Fatalf("jsonp without callback: %s", p.raw)
			}
			withCallback := strings.TrimSuffix(string(j.raw), "}") + `,"callback":"jQuery35_17.done"}`
			if string(p2.raw) != "jQuery35_17.done("+withCallback+")" {
				t.Fatalf("jsonp: %s", p2.raw)
			}
			s := e.yourlsGet(with("simple"))
			wantYOURLS(t, s, tc.status, "text/plain; charset=utf-8")
			if string(s.raw) != tc.simple {
				t.Fatalf("simple %q, want %q", s.raw, tc.simple)
			}
			// YOURLS reads the same parameters from a POST form.
			f := e.yourlsPost(with("json"))
			if f.status != j.status || string(f.raw) != string(j.raw) {
				t.Fatalf("form POST: %d %s", f.status, f.raw)
			}
		})
	}
}

func wantAliases(t *testing.T, r *response, aliases ...string) {
	t.Helper()
	links, _ := r.path("links").(map[string]any)
	if len(links) != len(aliases) {
		t.Fatalf("links %v, want %v: %s", links, aliases, r.raw)
	}
	for i, a := range aliases {
		l, _ := links["link_"+strconv.Itoa(i+1)].(map[string]any)
		if l["shorturl"] != "http://lb.test/"+a {
			t.Fatalf("link_%d is %v, want %s: %s", i+1, l["shorturl"], a, r.raw)
		}
	}
}

// TestYOURLSStatsFilters checks the orders and windows of the stats action.
func TestYOURLSStatsFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	yourlsFixture(e)
	stats := func(params ...string) *response {
		p := url.Values{"signature": {e.readKey}, "action": {"stats"}, "format": {"json"}}
		for i := 0; i+1 < len(params); i += 2 {
			p.Set(params[i], params[i+1])
		}
		r := e.yourlsGet(p)
		wantYOURLS(t, r, 200, "application/json; charset=utf-8")
		if got := r.path("stats", "total_links"); got != float64(3) {
			t.Fatalf("total_links %v", got)
		}
		return r
	}
	wantAliases(t, stats("filter", "top", "limit", "10"), "three", "one", "zero")
	wantAliases(t, stats("limit", "10"), "three", "one", "zero")
	wantAliases(t, stats("filter", "bogus", "limit", "10"), "three", "one", "zero")
	wantAliases(t, stats("filter", "top", "limit", "1", "start", "1"), "one")
	wantAliases(t, stats("filter", "top", "limit", "2", "start", "1"), "one", "zero")
	wantAliases(t, stats("filter", "bottom", "limit", "10"), "zero", "one", "three")
	wantAliases(t, stats("filter", "bottom", "limit", "2", "start", "1"), "one", "three")
	wantAliases(t, stats("filter", "last", "limit", "10"), "zero", "one", "three")
	wantAliases(t, stats("filter", "last", "limit", "2", "start", "1"), "one", "three")
	wantAliases(t, stats("filter", "top", "limit", "2", "start", "5"))
	r := stats("filter", "rand", "limit", "2")
	if n := len(r.path("links").(map[string]any)); n != 2 {
		t.Fatalf("rand: %d links", n)
	}
	// limit as PHP's intval reads it; nothing without a positive one.
	wantAliases(t, stats("filter", "top", "limit", "1abc"), "three")
	wantAliases(t, stats("filter", "top", "limit", "-3"))
	wantAliases(t, stats("filter", "top", "limit", "99999999999999999999999"), "three", "one", "zero")
	// Another workspace's links are not listed, nor found.
	r = e.yourlsGet(url.Values{"signature": {e.otherKey}, "action": {"stats"}, "limit": {"10"}, "format": {"json"}})
	if r.path("stats", "total_links") != float64(1) || r.path("links", "link_1", "url") != "https://other.example/" {
		t.Fatalf("other workspace: %s", r.raw)
	}
	r = e.yourlsGet(url.Values{"signature": {e.otherKey}, "action": {"url-stats"}, "shorturl": {"three"}, "format": {"json"}})
	wantYOURLS(t, r, 404, "application/json; charset=utf-8")
}

// TestYOURLSSignature covers YOURLS's login failures: each is a 403 in
// YOURLS's shape, in the format asked for, and nothing is made.
func TestYOURLSSignature(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	revoked := e.createKey(e.adminToken, "revoked", "read_write")
	e.do("DELETE", "/v1/keys/"+e.keyID(revoked), e.adminToken, "", 204)
	oneOff := []byte(e.writeKey)
	oneOff[len(oneOff)-3] ^= 1
	for _, tc := range []struct {
		name    string
		params  url.Values
		message string
	}{
		{"missing", url.Values{}, "Please log in"},
		{"empty", url.Values{"signature": {""}}, "Please log in"},
		{"a YOURLS signature", url.Values{"signature": {"1002a612b4"}}, "Please log in"},
		{"one character off", url.Values{"signature": {string(oneOff)}}, "Please log in"},
		{"revoked key", url.Values{"signature": {revoked}}, "Please log in"},
		{"timestamp signature", url.Values{"timestamp": {"1773144000"}, "signature": {"8c0ee0a6e7a1e1b86aa5e3d1b8c4f4bb"}}, yourlsNoTimestamp},
		{"timestamp with the key", url.Values{"timestamp": {"1773144000"}, "signature": {e.writeKey}}, yourlsNoTimestamp},
		{"username and password", url.Values{"username": {"admin@example.com"}, "password": {"correct horse battery"}}, yourlsNoPasswordLogin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := url.Values{"action": {"shorturl"}, "url": {"https://example.com/nope"}}
			for k, v := range tc.params {
				p[k] = v
			}
			p.Set("format", "json")
			r := e.yourlsPost(p)
			wantYOURLS(t, r, 403, "application/json; charset=utf-8")
			want := phpJSON(yourlsResult{{"message", tc.message}, {"errorCode", "403"}, {"callback", ""}})
			if tc.message == "Please log in" && want != `{"message":"Please log in","errorCode":"403","callback":""}` {
				t.Fatalf("the expected answer is wrong: %s", want)
			}
			if string(r.raw) != want {
				t.Fatalf("json\n%s\nwant\n%s", r.raw, want)
			}
			p.Del("format")
			r = e.yourlsGet(p)
			wantYOURLS(t, r, 403, "application/xml; charset=utf-8")
			if tc.message == "Please log in" {
				if want := "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<root><message>Please log in</message><errorCode>403</errorCode><callback/></root>\n"; string(r.raw) != want {
					t.Fatalf("xml\n%s\nwant\n%s", r.raw, want)
				}
			}
			p.Set("format", "simple")
			if r = e.yourlsGet(p); string(r.raw) != tc.message || r.status != 403 {
				t.Fatalf("simple: %d %q", r.status, r.raw)
			}
			// YOURLS's auth.php passes only callback on: jsonp without one
			// is its invalid callback answer.
			p.Set("format", "jsonp")
			if r = e.yourlsGet(p); r.status != 400 || string(r.raw) != `{"errorCode":"400","error":"Invalid callback parameter"}` {
				t.Fatalf("jsonp without callback: %d %s", r.status, r.raw)
			}
			p.Set("callback", "cb")
			if r = e.yourlsGet(p); r.status != 403 || !strings.HasPrefix(string(r.raw), `cb({"message":`) || !strings.HasSuffix(string(r.raw), `"errorCode":"403","callback":"cb"})`) {
				t.Fatalf("jsonp: %d %s", r.status, r.raw)
			}
		})
	}
	if n := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); n != float64(0) {
		t.Fatalf("%v links made without a valid signature", n)
	}
}

// TestYOURLSCallbackInjection: a jsonp callback that is not a JavaScript
// name (or dotted path of names) is refused with YOURLS's 400, so that the
// answer cannot run a script of the caller's choosing.
func TestYOURLSCallbackInjection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, cb := range []string{
		"alert(1);cb", "cb;alert(1)", "</script><script>alert(1)</script>", "a b", "cb\u2028", `cb\u2028`, "u2028",
		"x=1,cb", "cb//", "1cb", "a..b", ".cb", "cb.", "", strings.Repeat("a", 129), "eval`1`", "cb'", "cb\"",
	} {
		t.Run(fmt.Sprintf("%q", cb), func(t *testing.T) {
			for _, key := range []string{"callback", "jsonp"} {
				r := e.yourlsScript(url.Values{"signature": {e.readKey}, "action": {"version"}, "format": {"jsonp"}, key: {cb}})
				wantYOURLS(t, r, 400, "application/javascript; charset=utf-8")
				if string(r.raw) != `{"errorCode":"400","error":"Invalid callback parameter"}` {
					t.Fatalf("%s=%q: %s", key, cb, r.raw)
				}
			}
		})
	}
	for _, cb := range []string{"cb", "jQuery3710123_1773144000", "window.app.onShort", "$", "_cb$1"} {
		r := e.yourlsScript(url.Values{"signature": {e.readKey}, "action": {"version"}, "format": {"jsonp"}, "jsonp": {cb}})
		wantYOURLS(t, r, 200, "application/javascript; charset=utf-8")
		if want := cb + `({"version":"1.10.4","callback":"` + strings.ReplaceAll(cb, "/", `\/`) + `"})`; string(r.raw) != want {
			t.Fatalf("%q: %s", cb, r.raw)
		}
	}
	// Outside ASCII, json and jsonp escape every character (no raw line
	// separator reaches a script).
	r := e.yourlsPost(url.Values{"signature": {e.writeKey}, "action": {"shorturl"}, "url": {"https://example.com/u"},
		"title": {"Caf\u00e9 \U0001F600 </script>"}, "format": {"jsonp"}, "callback": {"cb"}})
	wantYOURLS(t, r, 200, "text/plain; charset=utf-8") // a program's POST, not a script's load
	if !strings.Contains(string(r.raw), `"title":"Caf\u00e9 \ud83d\ude00 <\/script>"`) {
		t.Fatalf("jsonp: %s", r.raw)
	}
	for _, b := range r.raw {
		if b >= 0x80 {
			t.Fatalf("jsonp with a byte outside ASCII: %s", r.raw)
		}
	}
}

// TestYOURLSBadInput: unreadable bodies and odd parameters get YOURLS
// answers, never a 500.
func TestYOURLSBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// A body over server.max_body.
	big := url.Values{"signature": {e.writeKey}, "action": {"shorturl"}, "url": {"https://example.com/" + strings.Repeat("a", 1<<20)}}
	req := newRequest("POST", yourlsPath+"?format=json", "", big.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r := e.request(req)
	wantYOURLS(t, r, 413, "application/json; charset=utf-8")
	if r.str("errorCode") != "413" {
		t.Fatalf("%s", r.raw)
	}
	// A multipart body over the limit.
	var huge bytes.Buffer
	hw := multipart.NewWriter(&huge)
	_ = hw.WriteField("signature", e.writeKey)
	_ = hw.WriteField("url", "https://example.com/"+strings.Repeat("a", 1<<20))
	_ = hw.Close()
	req = newRequest("POST", yourlsPath+"?format=json&action=shorturl", "", huge.String())
	req.Header.Set("Content-Type", hw.FormDataContentType())
	wantYOURLS(t, e.request(req), 413, "application/json; charset=utf-8")
	// A broken multipart body.
	req = newRequest("POST", yourlsPath+"?format=json", "", "--x\r\nContent-Disposition: form-data; name=\"signature\"\r\n\r\nabc")
	req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
	r = e.request(req)
	wantYOURLS(t, r, 400, "application/json; charset=utf-8")
	// A JSON body is not a form (PHP does not read it either): the query
	// is all there is.
	req = newRequest("POST", yourlsPath+"?format=json&action=version", "", `{"signature":"`+e.readKey+`"}`)
	r = e.request(req)
	wantYOURLS(t, r, 403, "application/json; charset=utf-8")
	// Body values win over the query's.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, kv := range [][2]string{{"signature", e.readKey}, {"action", "version"}, {"format", "json"}} {
		_ = mw.WriteField(kv[0], kv[1])
	}
	_ = mw.Close()
	req = newRequest("POST", yourlsPath+"?format=xml&action=nope", "", body.String())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r = e.request(req)
	wantYOURLS(t, r, 200, "application/json; charset=utf-8")
	if string(r.raw) != `{"version":"1.10.4"}` {
		t.Fatalf("%s", r.raw)
	}
	// Unknown formats are simple, as in YOURLS.
	r = e.yourlsGet(url.Values{"signature": {e.readKey}, "action": {"version"}, "format": {"JSON"}})
	wantYOURLS(t, r, 200, "text/plain; charset=utf-8")
	// HEAD answers as GET, without a body.
	req = newRequest("HEAD", yourlsPath+"?action=version&format=json&signature="+e.readKey, "", "")
	r = e.request(req)
	if r.status != 200 || len(r.raw) != 0 {
		t.Fatalf("HEAD: %d %q", r.status, r.raw)
	}
	// A HEAD of shorturl (a link checker) makes no link.
	req = newRequest("HEAD", yourlsPath+"?action=shorturl&url=https://example.com/head&signature="+e.writeKey, "", "")
	if r = e.request(req); r.status != 400 {
		t.Fatalf("HEAD shorturl: %d", r.status)
	}
	if n := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); n != float64(0) {
		t.Fatalf("%v links after a HEAD", n)
	}
}

// TestYOURLSRateLimit: the key draws from its workspace's budget, and the
// 429 is a YOURLS answer with Retry-After.
func TestYOURLSRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := url.Values{"signature": {e.readKey}, "action": {"version"}, "format": {"json"}}
	var r *response
	for i := 0; i < 200; i++ {
		if r = e.yourlsGet(p); r.status != 200 {
			break
		}
		if r.header.Get("X-RateLimit-Limit") != "100" {
			t.Fatalf("X-RateLimit-Limit %q", r.header.Get("X-RateLimit-Limit"))
		}
	}
	wantYOURLS(t, r, 429, "application/json; charset=utf-8")
	if r.str("errorCode") != "429" || r.header.Get("Retry-After") == "" || !strings.Contains(r.str("message"), "rate limit") {
		t.Fatalf("429: %v %s", r.header, r.raw)
	}
	// The same budget as the JSON API's.
	e.do("GET", "/v1/links", e.writeKey, "", 429)
}

// TestYOURLSSignatureNeverLogged: the signature (an API key) and a
// password reach no log line, from the query, a url-encoded form or a
// multipart form, accepted or refused.
func TestYOURLSSignatureNeverLogged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bad := e.writeKey[:len(e.writeKey)-1] + "x"
	if bad == e.writeKey {
		bad = e.writeKey[:len(e.writeKey)-1] + "y"
	}
	for _, sig := range []string{e.writeKey, bad} {
		e.yourlsGet(url.Values{"signature": {sig}, "action": {"shorturl"}, "url": {"https://example.com/log1"}})
		e.yourlsPost(url.Values{"signature": {sig}, "action": {"shorturl"}, "url": {"https://example.com/log2"}})
		e.rawRequest(shareXRequest(sig, "https://example.com/log3"))
		e.yourlsGet(url.Values{"signature": {sig}, "timestamp": {"1773144000"}, "action": {"version"}})
	}
	e.yourlsPost(url.Values{"username": {"admin@example.com"}, "password": {"correct horse battery"}, "action": {"version"}})
	logs := e.logs.String()
	if !strings.Contains(logs, "path=/yourls-api.php") || !strings.Contains(logs, "yourls: signature refused") {
		t.Fatalf("the request log is missing: %s", logs)
	}
	for _, secret := range []string{e.writeKey, bad, e.writeKey[8:], bad[8:], "correct horse battery", "correct+horse+battery"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a secret reached the log:\n%s", logs)
		}
	}
}

// stringify turns a decoded JSON value into what its XML encoding reads
// back as: numbers as text.
func stringify(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = stringify(x)
		}
		return out
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return v
}

// xmlTree reads an XML answer under <root> as nested maps of text.
func xmlTree(t *testing.T, raw []byte) any {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(raw))
	var read func() (any, error)
	read = func() (any, error) {
		m := map[string]any{}
		var text strings.Builder
		for {
			tok, err := d.Token()
			if err != nil {
				return nil, err
			}
			switch tok := tok.(type) {
			case xml.StartElement:
				v, err := read()
				if err != nil {
					return nil, err
				}
				m[tok.Name.Local] = v
			case xml.CharData:
				text.Write(tok)
			case xml.EndElement:
				if len(m) == 0 {
					return text.String(), nil
				}
				return m, nil
			}
		}
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			t.Fatalf("no root element: %s", raw)
		} else if err != nil {
			t.Fatalf("xml: %v: %s", err, raw)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "root" {
				t.Fatalf("root element <%s>", se.Name.Local)
			}
			v, err := read()
			if err != nil {
				t.Fatalf("xml: %v: %s", err, raw)
			}
			return v
		}
	}
}

// TestYOURLSCustomDomain: expand and url-stats take short URLs on the
// workspace's custom domains, and the same alias on the primary host is
// another link; the YOURLS API is not served on a custom domain.
func TestYOURLSCustomDomain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.verifiedDomain("go.example.com", "")
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/on-domain","alias":"promo","domain":"go.example.com"}`, 201)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/on-primary","alias":"promo"}`, 201)
	for short, long := range map[string]string{
		"https://go.example.com/promo": "https://example.com/on-domain",
		"http://lb.test/promo":         "https://example.com/on-primary",
		"promo":                        "https://example.com/on-primary",
	} {
		r := e.yourlsGet(url.Values{"signature": {e.readKey}, "action": {"expand"}, "shorturl": {short}, "format": {"json"}})
		wantYOURLS(t, r, 200, "application/json; charset=utf-8")
		if r.str("longurl") != long {
			t.Fatalf("%s expands to %s, want %s", short, r.str("longurl"), long)
		}
		if short != "promo" && r.str("shorturl") != short {
			t.Fatalf("%s: shorturl %s", short, r.str("shorturl"))
		}
	}
	// Another workspace's key finds neither.
	r := e.yourlsGet(url.Values{"signature": {e.otherKey}, "action": {"url-stats"}, "shorturl": {"https://go.example.com/promo"}, "format": {"json"}})
	wantYOURLS(t, r, 404, "application/json; charset=utf-8")
	r = e.onHost("go.example.com", "GET", yourlsPath+"?action=version&format=json&signature="+e.readKey, "", "")
	if r.status != 404 {
		t.Fatalf("the YOURLS API on a custom domain: %d %s", r.status, r.raw)
	}
}

// TestYOURLSShorturlRace: shorturl requests for the same long URL at once
// make one link; every other one gets YOURLS's "already exists" with it.
func TestYOURLSShorturlRace(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.CostlyWait = time.Hour }) // all wait their turn at the gate
	const n = 8
	var wg sync.WaitGroup
	answers := make([]*response, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = e.yourlsPost(url.Values{"signature": {e.writeKey}, "action": {"shorturl"}, "url": {"https://example.com/race"}, "format": {"json"}})
		}()
	}
	wg.Wait()
	made, dup := 0, 0
	for _, r := range answers {
		switch {
		case r.status == 200 && r.str("status") == "success":
			made++
		case r.status == 400 && r.str("code") == "error:url":
			dup++
		default:
			t.Fatalf("%d %s", r.status, r.raw)
		}
	}
	if made != 1 || dup != n-1 {
		t.Fatalf("%d made, %d duplicates", made, dup)
	}
	if total := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); total != 1.0 {
		t.Fatalf("%v links", total)
	}
}

// TestYOURLSJSONPNoScriptOfOurOwn: a jsonp answer is JavaScript only for
// a script element of another site's page. Loaded by a script element of
// one of linkbolt's own pages (Sec-Fetch-Site: same-origin), where the
// dashboard's script-src 'self' would let it run with a function of the
// caller's choosing once any HTML is injected, or by anything that sends
// no Fetch Metadata, it is text/plain with nosniff, which browsers refuse
// to run.
func TestYOURLSJSONPNoScriptOfOurOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	params := url.Values{"signature": {e.readKey}, "action": {"version"}, "format": {"jsonp"}, "callback": {"alert"}}
	for _, tc := range []struct {
		site, contentType string
	}{
		{"same-origin", "text/plain; charset=utf-8"},
		{"none", "text/plain; charset=utf-8"},
		{"", "text/plain; charset=utf-8"},
		{"bogus", "text/plain; charset=utf-8"},
		{"same-site", "application/javascript; charset=utf-8"},
		{"cross-site", "application/javascript; charset=utf-8"},
	} {
		req := newRequest("GET", yourlsPath+"?"+params.Encode(), "", "")
		req.Header.Set("Sec-Fetch-Dest", "script")
		if tc.site != "" {
			req.Header.Set("Sec-Fetch-Site", tc.site)
		}
		r := e.request(req)
		wantYOURLS(t, r, 200, tc.contentType)
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("Sec-Fetch-Site %q: X-Content-Type-Options %q", tc.site, got)
		}
		if !slices.Contains(r.header.Values("Vary"), "Sec-Fetch-Site") {
			t.Errorf("Sec-Fetch-Site %q: Vary %q", tc.site, r.header.Values("Vary"))
		}
		if want := `alert({"version":"1.10.4","callback":"alert"})`; string(r.raw) != want {
			t.Errorf("Sec-Fetch-Site %q: %s", tc.site, r.raw)
		}
	}
}
