package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Field names are matched exactly: encoding/json alone would take
// {"Destination_URL": …} for destination_url.
func TestFieldNamesAreCaseSensitive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	link := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/"}`, 201).str("id")
	for _, tc := range []struct {
		name, method, path, cred, body, field string
	}{
		{"link create", "POST", "/v1/links", e.writeKey, `{"Destination_URL":"https://example.com/"}`, "Destination_URL"},
		{"link create, second field", "POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","ALIAS":"x"}`, "ALIAS"},
		{"link update", "PATCH", "/v1/links/" + link, e.writeKey, `{"Tags":["a"]}`, "Tags"},
		{"simple API", "POST", "/api/urls", e.writeKey, `{"originalURL":"https://example.com/"}`, "originalURL"},
		{"key", "POST", "/v1/keys", e.writeKey, `{"Name":"k","scope":"read"}`, "Name"},
		{"login", "POST", "/v1/auth/login", "", `{"Email":"admin@example.com","password":"correct horse battery"}`, "Email"},
		{"nested object", "POST", "/v1/qr-codes", e.writeKey, `{"link_id":"` + link + `","name":"q","options":{"Size":300}}`, "options.Size"},
		{"duplicate field", "POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","destination_url":"https://other.example/"}`, "destination_url"},
		{"duplicate nested field", "POST", "/v1/qr-codes", e.writeKey, `{"link_id":"` + link + `","name":"q","options":{"size":300,"size":400}}`, "options.size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.request(newRequest(tc.method, tc.path, tc.cred, tc.body))
			wantProblem(t, r, 400, "invalid_request")
			if got := r.path("errors", 0, "field"); got != tc.field {
				t.Fatalf("field %v, want %q: %s", got, tc.field, r.raw)
			}
		})
	}
	// Nothing was created by the refused requests.
	if got := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); got != float64(1) {
		t.Fatalf("links after refused creations: %v", got)
	}
}

// Invalid UTF-8 anywhere in a body is refused, not stored as U+FFFD.
func TestInvalidUTF8BodyRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, body := range []string{
		"{\"destination_url\":\"https://example.com/\",\"tags\":[\"caf\xe9\"]}",
		"{\"destination_url\":\"https://example.com/\xff\"}",
		"{\"destination_url\":\"https://example.com/\",\"alias\":\"a\xc0\xafb\"}",
		"{\"name\":\"\xed\xa0\x80\",\"scope\":\"read\"}", // a UTF-16 surrogate
	} {
		path := "/v1/links"
		if strings.Contains(body, "scope") {
			path = "/v1/keys"
		}
		r := e.request(newRequest("POST", path, e.writeKey, body))
		wantProblem(t, r, 400, "invalid_request")
		if d := r.str("detail"); !strings.Contains(d, "UTF-8") {
			t.Fatalf("detail %q does not say what is wrong", d)
		}
	}
	// Escaped lone surrogates are valid UTF-8 on the wire, but decode to
	// U+FFFD all the same: refused too. A real pair and escaped
	// backslashes are fine.
	for _, body := range []string{
		`{"destination_url":"https://example.com/","tags":["a\ud800"]}`,
		`{"destination_url":"https://example.com/","tags":["a\udc00b"]}`,
		`{"destination_url":"https://example.com/","tags":["a\ud83d\u0041"]}`,
		`{"destination_url":"https://example.com/","tags":["\ud83d"]}`,
	} {
		r := e.request(newRequest("POST", "/v1/links", e.writeKey, body))
		wantProblem(t, r, 400, "invalid_request")
		if d := r.str("detail"); !strings.Contains(d, "surrogate") {
			t.Fatalf("%s: detail %q does not say what is wrong", body, d)
		}
	}
	if got := e.do("GET", "/v1/links", e.readKey, "", 200).path("meta", "total"); got != float64(0) {
		t.Fatalf("links after refused creations: %v", got)
	}
	ok := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","tags":["\ud83d\ude00","back\\ud800slash"]}`, 201)
	if want := "\"tags\":[\"\U0001F600\",\"back\\\\ud800slash\"]"; !strings.Contains(string(ok.raw), want) {
		t.Fatalf("tags of %s, want %s", ok.raw, want)
	}
}

// Names, tags and other short texts refuse Unicode format characters (Cf):
// zero-width spaces and bidi overrides make a tag look like another one or
// reverse what a person reads.
func TestFormatCharactersRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	link := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/"}`, 201).str("id")
	for _, tc := range []struct {
		name, method, path, cred, body, field string
	}{
		{"tag zero-width space", "POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","tags":["news\u200b"]}`, "tags"},
		{"tag bidi override", "POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","tags":["\u202egnp.exe"]}`, "tags"},
		{"tag on update", "PATCH", "/v1/links/" + link, e.writeKey, `{"tags":["a\u2066b"]}`, "tags"},
		{"utm value", "POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","utm_source":"ma\u200dil"}`, "utm_source"},
		{"alias", "POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"sale\u200b"}`, "alias"},
		{"key name", "POST", "/v1/keys", e.writeKey, `{"name":"ci\u202e","scope":"read"}`, "name"},
		{"campaign name", "POST", "/v1/campaigns", e.writeKey, `{"name":"spring\ufeff"}`, "name"},
		{"qr design name", "POST", "/v1/qr-codes", e.writeKey, `{"link_id":"` + link + `","name":"\u00adqr"}`, "name"},
		{"workspace name", "POST", "/v1/workspaces", e.adminToken, `{"name":"Acme\u200e"}`, "name"},
		{"workspace rename", "PATCH", "/v1/workspaces/" + e.ws, e.adminToken, `{"name":"Acme\u061c"}`, "name"},
		{"webhook description", "POST", "/v1/webhooks", e.writeKey, `{"url":"https://hooks.example.com/x","events":["link.created"],"description":"a\u202ab"}`, "description"},
		{"campaign name of a Hangul filler", "POST", "/v1/campaigns", e.writeKey, `{"name":"\u3164"}`, "name"},
		{"campaign name of a braille blank", "POST", "/v1/campaigns", e.writeKey, `{"name":"\u2800"}`, "name"},
		{"utm with a grapheme joiner", "POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","utm_source":"ma\u034fil"}`, "utm_source"},
		{"tag with a line separator", "POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","tags":["a\u2028b"]}`, "tags"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.request(newRequest(tc.method, tc.path, tc.cred, tc.body))
			wantProblem(t, r, 422, "validation_failed")
			if got := r.path("errors", 0, "field"); got != tc.field {
				t.Fatalf("field %v, want %q: %s", got, tc.field, r.raw)
			}
		})
	}
	// Visible non-ASCII stays welcome.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","tags":["grüße","日本"]}`, 201)
	e.do("POST", "/v1/campaigns", e.writeKey, `{"name":"Frühling 🌸"}`, 201)
}

// Requests net/http refuses before any handler runs (GET /% among them)
// are answered with problem+json too, on the real listener.
func TestMalformedRequestsAnswerProblemJSON(t *testing.T) {
	e := newEnv(t)
	ts := httptest.NewUnstartedServer(e.srv)
	ts.Config = e.srv.HTTPServer("")
	ts.Listener = e.srv.Listener(ts.Listener)
	ts.Start()
	defer ts.Close()

	for _, tc := range []struct {
		name, raw string
		status    int
		code      string
	}{
		{"bad percent escape", "GET /% HTTP/1.1\r\nHost: lb.test\r\n\r\n", 400, "invalid_request"},
		{"bad escape in API path", "GET /v1/links/%zz HTTP/1.1\r\nHost: lb.test\r\n\r\n", 400, "invalid_request"},
		{"no Host", "GET /x HTTP/1.1\r\n\r\n", 400, "invalid_request"},
		{"two Hosts", "GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "invalid_request"},
		{"malformed header", "GET /x HTTP/1.1\r\nHost: lb.test\r\nNo colon here\r\n\r\n", 400, "invalid_request"},
		{"garbage request line", "HELLO\r\n\r\n", 400, "invalid_request"},
		{"unknown HTTP version", "GET /x HTTP/9.9\r\nHost: lb.test\r\n\r\n", 505, "http_version_not_supported"},
		{"unknown transfer encoding", "POST /v1/links HTTP/1.1\r\nHost: lb.test\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "not_implemented"},
		{"headers too large", "GET /x HTTP/1.1\r\nHost: lb.test\r\nX-Big: " + strings.Repeat("a", 80<<10) + "\r\n\r\n", 431, "headers_too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tc.raw); err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := res.StatusCode, tc.status; got != want {
				t.Fatalf("status %d, want %d: %s", got, want, body)
			}
			if got, want := res.Header.Get("Content-Type"), "application/problem+json"; got != want {
				t.Fatalf("Content-Type %q, want %q: %s", got, want, body)
			}
			var p problem
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatalf("body is not JSON: %v: %s", err, body)
			}
			if p.Code != tc.code || p.Status != tc.status || p.Detail == "" || p.Type != problemTypeBase+tc.code {
				t.Fatalf("problem %+v", p)
			}
		})
	}

	// A well-formed request on the same listener is served as usual.
	res, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("healthz: %d", res.StatusCode)
	}
}

// A deleted or renamed alias is not taken at once by another workspace,
// which would receive the old link's traffic: it is held for its
// workspace for links.alias_hold (30 days by default) and redirects
// nowhere meanwhile.
func TestAliasHoldThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/old","alias":"promo"}`, 201).str("id")
	e.do("GET", "/promo", "", "", 302)
	e.do("DELETE", "/v1/links/"+id, e.writeKey, "", 204)
	id = e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/old","alias":"sale"}`, 201).str("id")
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"alias":"sale-2026"}`, 200)

	for _, alias := range []string{"promo", "sale"} {
		e.do("GET", "/"+alias, "", "", 404)
		wantProblem(t, e.request(newRequest("POST", "/v1/links", e.otherKey,
			`{"destination_url":"https://attacker.example/","alias":"`+alias+`"}`)), 409, "conflict")
		wantProblem(t, e.request(newRequest("PATCH", "/v1/links/"+e.otherLink, e.otherKey, `{"alias":"`+alias+`"}`)), 409, "conflict")
		wantProblem(t, e.request(newRequest("POST", "/api/urls", e.otherKey,
			`{"originalUrl":"https://attacker.example/","customCode":"`+alias+`"}`)), 409, "conflict")
	}
	// The workspace that used it may take it again.
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/new","alias":"promo"}`, 201)
	if loc := e.do("GET", "/promo", "", "", 302).header.Get("Location"); loc != "https://example.com/new" {
		t.Fatalf("Location %q", loc)
	}
	// After the hold, anyone may.
	e.clock.Add(30*24*time.Hour + time.Second)
	e.do("POST", "/v1/links", e.otherKey, `{"destination_url":"https://example.org/","alias":"sale"}`, 201)
}
