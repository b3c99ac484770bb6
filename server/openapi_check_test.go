package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"go.yaml.in/yaml/v3"

	"github.com/linkbolt/linkbolt/link"
)

// The OpenAPI document is the reference of the wire contract: every answer
// the tests see goes through checkOpenAPI, so an undocumented route, status,
// header or field fails a test.

// openAPIState is the document and router, loaded once for all tests.
var openAPIState struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// loadOpenAPI parses the embedded document afresh.
func loadOpenAPI() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	return loader.LoadFromData(OpenAPIYAML)
}

// openAPIRouter returns the validated document and a router over it.
// gorillamux tries paths without variables first, so a static path such as
// /v1/links or /healthz always wins over the redirect template /{code}
// (which in any case matches one path segment only).
func openAPIRouter() (*openapi3.T, routers.Router, error) {
	s := &openAPIState
	s.once.Do(func() {
		// Error answers are problem+json and the redirect's 404 may be HTML:
		// make sure both bodies can be decoded for validation.
		openapi3filter.RegisterBodyDecoder("application/problem+json", openapi3filter.JSONBodyDecoder)
		openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
		openapi3filter.RegisterBodyDecoder("image/svg+xml", openapi3filter.PlainBodyDecoder)
		openapi3filter.RegisterBodyDecoder("text/csv", openapi3filter.PlainBodyDecoder)
		openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.PlainBodyDecoder)
		doc, err := loadOpenAPI()
		if err == nil {
			err = doc.Validate(context.Background())
		}
		if err != nil {
			s.err = fmt.Errorf("openapi.yaml is not a valid OpenAPI document: %w", err)
			return
		}
		// The document's server is relative ("/": this instance); tests use
		// hosts of their own, so route on the path alone.
		doc.Servers = nil
		s.doc = doc
		if s.router, err = gorillamux.NewRouter(doc); err != nil {
			s.err = fmt.Errorf("openapi.yaml: router: %w", err)
		}
	})
	return s.doc, s.router, s.err
}

// checkOpenAPI fails the test unless the answer (status, header, body) to
// req is one the OpenAPI document describes: the method and path are an
// operation of the document, the status is one of its responses, the
// required headers are present and well-formed, and the body has the
// documented content type and matches the schema. Security is not checked
// (the answer already says what the server decided), nor is the request.
//
// Two answers are accepted for requests that are not operations of the
// document, as they are the server saying exactly that: a 405
// method_not_allowed problem, and the 404 not_found problem the router's
// fallback gives for an unknown path ("no route for ...").
func checkOpenAPI(tb testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	tb.Helper()
	if err := openAPIResponseError(req, status, header, body); err != nil {
		tb.Errorf("OpenAPI: %s %s answered %d: %v\nbody: %s", req.Method, req.URL.Path, status, err, truncate(body, 2000))
	}
}

func truncate(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return append(b[:n:n], "…"...)
}

// findRoute is router.FindRoute with the document's one path of several
// segments: /{code}/{path} matches a path of any number of segments after
// a code (OpenAPI's templates match one), or none (/{code}/), and never
// one whose first
// segment is reserved (/v1/nope is no link's).
func findRoute(router routers.Router, req *http.Request) (*routers.Route, map[string]string, error) {
	route, params, err := router.FindRoute(req)
	first, rest, multi := strings.Cut(strings.TrimPrefix(req.URL.Path, "/"), "/")
	switch {
	case err == nil && route.Path == "/{code}/{path}" && (link.IsReserved(first) || !link.ValidCodeSyntax(first)):
		return nil, nil, routers.ErrPathNotFound
	case errors.Is(err, routers.ErrPathNotFound) && multi && !link.IsReserved(first) && link.ValidCodeSyntax(first):
		// several segments, or none (/{code}/)
		one := req.Clone(req.Context())
		one.URL.Path = "/" + first + "/_" + strings.ReplaceAll(rest, "/", "_")
		one.URL.RawPath = ""
		if r, p, err2 := router.FindRoute(one); err2 == nil && r.Path == "/{code}/{path}" {
			p["path"] = rest
			return r, p, nil
		}
	}
	return route, params, err
}

// openAPIResponseError returns why an answer does not match the document.
func openAPIResponseError(req *http.Request, status int, header http.Header, body []byte) error {
	doc, router, err := openAPIRouter()
	if err != nil {
		return err
	}
	if header == nil {
		header = http.Header{}
	}
	route, params, err := findRoute(router, req)
	if req.Method == http.MethodHead && errors.Is(err, routers.ErrMethodNotAllowed) {
		// HEAD is answered wherever GET is (the document says so once, in
		// its description): check the answer against the GET operation.
		get := req.Clone(req.Context())
		get.Method = http.MethodGet
		route, params, err = findRoute(router, get)
	}
	if err != nil {
		if !errors.Is(err, routers.ErrPathNotFound) && !errors.Is(err, routers.ErrMethodNotAllowed) {
			return fmt.Errorf("finding the operation: %w", err)
		}
		if uerr := checkUnrouted(doc, req, status, header, body); uerr != nil {
			return fmt.Errorf("%s %s is not an operation of the document (%v), and the answer is not the server's own 404/405 for that: %w",
				req.Method, req.URL.Path, err, uerr)
		}
		return nil
	}

	responses := route.Operation.Responses
	// Only a listed status passes: a `default` answer describes what the
	// server says before any route is matched (an unreadable request), so
	// an answer the router gave is never checked against it.
	ref := responses.Status(status)
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("status %d is not documented for %s %s (documented: %s)",
			status, route.Method, route.Path, strings.Join(documentedStatuses(responses), ", "))
	}
	resp := ref.Value

	// kin-openapi skips HEAD requests and the statuses 301, 307 and 308
	// altogether, so headers are checked here for every answer.
	if err := checkResponseHeaders(resp, header); err != nil {
		return err
	}
	if req.Method == http.MethodHead {
		return nil // a HEAD answer has no body on the wire
	}
	if len(resp.Content) == 0 {
		if len(bytes.TrimSpace(body)) > 0 {
			return fmt.Errorf("the answer has a body (%s) but the document declares none for %d", header.Get("Content-Type"), status)
		}
		return nil
	}

	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		ExcludeRequestBody:    true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route, Options: opts,
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: opts,
	}
	return openapi3filter.ValidateResponse(req.Context(), in)
}

// checkResponseHeaders checks that the documented required headers are
// present and that every documented header present matches its schema.
func checkResponseHeaders(resp *openapi3.Response, header http.Header) error {
	names := make([]string, 0, len(resp.Headers))
	for name := range resp.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.EqualFold(name, "Content-Type") {
			continue
		}
		h := resp.Headers[name].Value
		v := header.Get(name)
		if v == "" {
			if h != nil && h.Required {
				return fmt.Errorf("required header %s is missing", name)
			}
			continue
		}
		if h == nil || h.Schema == nil || h.Schema.Value == nil {
			continue
		}
		schema := h.Schema.Value
		var value any = v
		switch {
		case schema.Type.Is("integer"):
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("header %s: %q is not an integer", name, v)
			}
			value = float64(n)
		case schema.Type.Is("number"):
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("header %s: %q is not a number", name, v)
			}
			value = f
		}
		if err := schema.VisitJSON(value); err != nil {
			return fmt.Errorf("header %s: %w", name, err)
		}
	}
	return nil
}

// checkUnrouted accepts the answers the server gives to a request that is
// not an operation of the document: 405 method_not_allowed when the path has
// other methods, and the router fallback's 404 for an unknown path.
func checkUnrouted(doc *openapi3.T, req *http.Request, status int, header http.Header, body []byte) error {
	mt, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	if mt != "application/problem+json" {
		return fmt.Errorf("status %d with content type %q", status, header.Get("Content-Type"))
	}
	if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
		return fmt.Errorf("status %d", status)
	}
	if req.Method == http.MethodHead {
		return nil // no body to tell more
	}
	var p struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("problem body: %w", err)
	}
	var generic any
	_ = json.Unmarshal(body, &generic)
	if err := doc.Components.Schemas["Problem"].Value.VisitJSON(generic); err != nil {
		return fmt.Errorf("problem body does not match the Problem schema: %w", err)
	}
	switch {
	case status == http.StatusMethodNotAllowed && p.Code == "method_not_allowed":
		if header.Get("Allow") == "" {
			return errors.New("405 without an Allow header")
		}
		return nil
	case status == http.StatusNotFound && p.Code == "not_found" && strings.HasPrefix(p.Detail, "no route for "):
		return nil
	}
	return fmt.Errorf("status %d with code %q: %q", status, p.Code, p.Detail)
}

func documentedStatuses(r *openapi3.Responses) []string {
	var out []string
	for code := range r.Map() {
		out = append(out, code)
	}
	sort.Strings(out)
	return out
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	doc, err := loadOpenAPI()
	if err != nil {
		t.Fatalf("loading openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid OpenAPI: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi: %q, want 3.0.3", doc.OpenAPI)
	}
	// Every operation answers through the shared Problem schema and names
	// its security (an empty list for the public ones).
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			if op.Security == nil {
				t.Errorf("%s %s: no security requirement (use [] for public operations)", method, path)
			}
			for code, ref := range op.Responses.Map() {
				if code[0] != '4' && code[0] != '5' || ref.Value == nil {
					continue
				}
				for ct, mt := range ref.Value.Content {
					if ct == "application/problem+json" && (mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Problem") {
						t.Errorf("%s %s %s: problem+json answer without the shared Problem schema", method, path, code)
					}
				}
			}
		}
	}
	if _, _, err := openAPIRouter(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenAPIExamples checks that contract testers (Dredd and the like) can
// build a request for every operation from the document alone: every
// request body and every parameter has an example, except the custom
// range's start and end, which replace range (whose example is used).
func TestOpenAPIExamples(t *testing.T) {
	t.Parallel()
	doc, err := loadOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	withoutExample := map[string]bool{"query start": true, "query end": true}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			if rb := op.RequestBody; rb != nil {
				for ct, mt := range rb.Value.Content {
					if mt.Example == nil && len(mt.Examples) == 0 {
						t.Errorf("%s %s: the %s request body has no example", method, path, ct)
					}
				}
			}
			params := append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...)
			for _, ref := range params {
				p := ref.Value
				if p.Example == nil && len(p.Examples) == 0 && !withoutExample[p.In+" "+p.Name] {
					t.Errorf("%s %s: the %s parameter %s has no example", method, path, p.In, p.Name)
				}
			}
		}
	}
}

// routePattern finds the routes registered in the package's source:
// r.GET("/path", ...) and s.handle("METHOD", "/path", ...).
var routePattern = regexp.MustCompile(`(?:\br\.(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\(|\bs\.handle\("([A-Z]+)",\s*|\bs\.(page)\()"(/[^"]*)"`)

// TestOpenAPIDocumentsEveryRoute compares the routes registered in the
// source with the operations of the document, both ways.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]bool{
		// The router's fallback serves the redirects.
		"GET /{code}": true, "HEAD /{code}": true,
		// ServeHTTP serves the password form of a protected link (link controls).
		"POST /{code}": true,
		"GET /{code}+": true, "HEAD /{code}+": true,
		// ... and the report form of a link's preview (abuse.go).
		"POST /{code}+": true,
		// serveCustomHost serves a custom domain's app files (domains.go).
		"GET /.well-known/apple-app-site-association": true, "GET /apple-app-site-association": true,
		"GET /.well-known/assetlinks.json": true,
		// ServeHTTP and serveCustomHost serve the paths after the code of
		// a link that forwards them (forward.go).
		"GET /{code}/{path}": true, "HEAD /{code}/{path}": true, "POST /{code}/{path}": true,
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range routePattern.FindAllStringSubmatch(string(src), -1) {
			method := m[1] + m[2]
			if m[3] == "page" {
				method = "GET" // s.page registers GET and HEAD
			}
			path := regexp.MustCompile(`[:*]([A-Za-z_]+)`).ReplaceAllString(m[4], "{$1}")
			registered[method+" "+path] = true
			if method == "GET" {
				// handle() registers HEAD beside every GET.
				registered["HEAD "+path] = true
			}
		}
	}
	if len(registered) < 10 {
		t.Fatalf("found only %d routes in the source; has routes() moved? %v", len(registered), registered)
	}
	doc, err := loadOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, path := range doc.Paths.InMatchingOrder() {
		for method := range doc.Paths.Value(path).Operations() {
			documented[method+" "+path] = true
		}
	}
	for r := range registered {
		// HEAD beside a documented GET is covered by the document's rule
		// that HEAD is answered wherever GET is.
		if path, ok := strings.CutPrefix(r, "HEAD "); ok && documented["GET "+path] {
			continue
		}
		if !documented[r] {
			t.Errorf("route %s is registered but not in openapi.yaml", r)
		}
	}
	for d := range documented {
		if !registered[d] {
			t.Errorf("operation %s is in openapi.yaml but no route serves it", d)
		}
	}
}

func TestOpenAPIRouterPrefersStaticPaths(t *testing.T) {
	t.Parallel()
	_, router, err := openAPIRouter()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/v1/links", "/v1/links"},
		{"POST", "/v1/links", "/v1/links"},
		{"GET", "/healthz", "/healthz"},
		{"HEAD", "/healthz", "/healthz"},
		{"GET", "/setup", "/setup"},
		{"GET", "/", "/"},
		{"GET", "/v1/openapi.json", "/v1/openapi.json"},
		{"GET", "/v1/me", "/v1/me"},
		{"POST", "/api/urls", "/api/urls"},
		{"GET", "/v1/links/l1", "/v1/links/{id}"},
		{"POST", "/v1/keys/k1/rotate", "/v1/keys/{id}/rotate"},
		{"GET", "/Ab3xQ9k", "/{code}"},
		{"HEAD", "/Ab3xQ9k", "/{code}"},
		{"POST", "/Ab3xQ9k", "/{code}"}, // the password form of a protected link
		{"GET", "/v1", "/{code}"},
	} {
		req := httptest.NewRequest(c.method, "http://lb.test"+c.path, nil)
		route, _, err := findRoute(router, req)
		if err != nil {
			t.Errorf("%s %s: %v, want %s", c.method, c.path, err, c.want)
			continue
		}
		if route.Path != c.want {
			t.Errorf("%s %s matched %s, want %s", c.method, c.path, route.Path, c.want)
		}
	}
	for _, c := range []struct {
		method, path string
		want         error
	}{
		{"PUT", "/v1/links", routers.ErrMethodNotAllowed},
		{"HEAD", "/v1/links", routers.ErrMethodNotAllowed},
		{"PUT", "/Ab3xQ9k", routers.ErrMethodNotAllowed},
		{"GET", "/v1/nope", routers.ErrPathNotFound},
		{"GET", "/v1/links/l1/extra", routers.ErrPathNotFound},
	} {
		req := httptest.NewRequest(c.method, "http://lb.test"+c.path, nil)
		route, _, err := findRoute(router, req)
		if !errors.Is(err, c.want) {
			got := "<nil>"
			if route != nil {
				got = route.Path
			}
			t.Errorf("%s %s: matched %s, err %v; want %v", c.method, c.path, got, err, c.want)
		}
	}
}

// TestServeOpenAPIMatchesYAML checks that /v1/openapi.json is valid JSON
// with the same content as openapi.yaml, and a valid document itself.
func TestServeOpenAPIMatchesYAML(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest("GET", "http://lb.test/v1/openapi.json", nil)
	rec := httptest.NewRecorder()
	serveOpenAPI(rec, req, nil)
	res := rec.Result()
	body := rec.Body.Bytes()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if !json.Valid(body) {
		t.Fatalf("/v1/openapi.json is not valid JSON")
	}
	checkOpenAPI(t, req, res.StatusCode, res.Header, body)

	var served any
	if err := json.Unmarshal(body, &served); err != nil {
		t.Fatal(err)
	}
	var fromYAML any
	if err := yaml.Unmarshal(OpenAPIYAML, &fromYAML); err != nil {
		t.Fatal(err)
	}
	// Through JSON so that numbers compare alike. A mapping with keys that
	// are not strings (an unquoted status code) fails here.
	raw, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatalf("openapi.yaml does not convert to JSON as is (quote the status codes): %v", err)
	}
	var want any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(served, want) {
		t.Errorf("/v1/openapi.json differs from openapi.yaml")
	}

	// Loaded by kin-openapi, both give the same valid document.
	docJSON, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatalf("loading /v1/openapi.json: %v", err)
	}
	if err := docJSON.Validate(context.Background()); err != nil {
		t.Fatalf("/v1/openapi.json is not valid OpenAPI: %v", err)
	}
	docYAML, err := loadOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := docJSON.MarshalJSON()
	b, _ := docYAML.MarshalJSON()
	if !bytes.Equal(a, b) {
		t.Errorf("the JSON and YAML documents load differently")
	}
}

// recordingTB records the failures checkOpenAPI reports.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheckOpenAPI makes sure the checker fails what it must and passes
// what it must, so that a silent checker cannot pass every test.
func TestCheckOpenAPI(t *testing.T) {
	t.Parallel()
	link := func(edit func(map[string]any)) []byte {
		m := map[string]any{
			"id": "l1", "short_url": "http://lb.test/abc", "alias": "abc", "domain": "lb.test",
			"destination_url": "https://example.com/", "destination_host": "example.com",
			"destination_host_unicode": "example.com", "tags": []string{"a"},
			"utm_source": nil, "utm_medium": "email", "utm_campaign": nil, "campaign_id": nil,
			"redirect_code": 302, "clicks": 3,
			"created_at": "2026-03-10T12:00:00Z", "updated_at": "2026-03-10T12:00:00Z",
		}
		if edit != nil {
			edit(m)
		}
		b, _ := json.Marshal(m)
		return b
	}
	key := func(edit func(map[string]any)) map[string]any {
		m := map[string]any{
			"id": "k1", "name": "ci", "scope": "read", "state": "active", "start": "lb_live_Ab3x",
			"workspace_id": "w1", "created_at": "2026-03-10T12:00:00Z", "expires_at": nil,
			"last_used_at": nil, "request_count": 0, "revoked_at": nil, "grace_ends_at": nil,
			"replaced_by": nil, "created_by": map[string]any{"type": "user", "id": "usr_1"},
			"keep_when_creator_disabled": false, "creator_disabled": false, "resources": nil,
		}
		if edit != nil {
			edit(m)
		}
		return m
	}
	js := func(v any) []byte { b, _ := json.Marshal(v); return b }
	problem := func(status int, code, detail string) []byte {
		return js(map[string]any{"type": problemTypeBase + code, "title": "T", "status": status, "detail": detail, "code": code})
	}
	jsonH := http.Header{"Content-Type": {"application/json"}}
	problemH := http.Header{"Content-Type": {"application/problem+json"}}
	rated := http.Header{"Content-Type": {"application/json"}, "X-Ratelimit-Limit": {"100"},
		"X-Ratelimit-Remaining": {"99"}, "X-Ratelimit-Reset": {"1773144001"}}

	for _, c := range []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         []byte
		ok           bool
	}{
		{"link", "GET", "/v1/links/l1", 200, rated, link(nil), true},
		{"link without rate headers", "GET", "/v1/links/l1", 200, jsonH, link(nil), true},
		{"bad rate header", "GET", "/v1/links/l1", 200, http.Header{"Content-Type": {"application/json"}, "X-Ratelimit-Reset": {"soon"}}, link(nil), false},
		{"extra field", "GET", "/v1/links/l1", 200, jsonH, link(func(m map[string]any) { m["secret"] = 1 }), false},
		{"missing field", "GET", "/v1/links/l1", 200, jsonH, link(func(m map[string]any) { delete(m, "updated_at") }), false},
		{"wrong type", "GET", "/v1/links/l1", 200, jsonH, link(func(m map[string]any) { m["clicks"] = "3" }), false},
		{"null in required non-nullable", "GET", "/v1/links/l1", 200, jsonH, link(func(m map[string]any) { m["alias"] = nil }), false},
		{"bad redirect code", "GET", "/v1/links/l1", 200, jsonH, link(func(m map[string]any) { m["redirect_code"] = 303 }), false},
		{"wrong content type", "GET", "/v1/links/l1", 200, http.Header{"Content-Type": {"text/plain"}}, link(nil), false},
		{"undocumented status", "GET", "/v1/links/l1", 418, problemH, problem(418, "internal", "x"), false},
		{"not found problem", "GET", "/v1/links/l1", 404, problemH, problem(404, "not_found", "link not found"), true},
		{"problem with extra field", "GET", "/v1/links/l1", 404, problemH,
			js(map[string]any{"type": "t", "title": "T", "status": 404, "detail": "d", "code": "not_found", "x": 1}), false},
		{"problem as application/json", "GET", "/v1/links/l1", 404, jsonH, problem(404, "not_found", "x"), false},
		{"validation errors", "POST", "/v1/links", 422, problemH,
			js(map[string]any{"type": "t", "title": "T", "status": 422, "detail": "d", "code": "validation_failed",
				"errors": []map[string]string{{"field": "alias", "message": "is a reserved word"}}}), true},
		{"401 with WWW-Authenticate", "GET", "/v1/links", 401,
			http.Header{"Content-Type": {"application/problem+json"}, "Www-Authenticate": {`Bearer realm="linkbolt"`}},
			problem(401, "unauthorized", "no credential"), true},
		{"401 without WWW-Authenticate", "GET", "/v1/links", 401, problemH, problem(401, "unauthorized", "x"), false},
		{"429 without Retry-After", "GET", "/v1/links", 429, problemH, problem(429, "rate_limited", "x"), false},
		{"429", "GET", "/v1/links", 429, http.Header{"Content-Type": {"application/problem+json"}, "Retry-After": {"1"}},
			problem(429, "rate_limited", "x"), true},
		{"403 where none is documented", "GET", "/healthz", 403, problemH, problem(403, "forbidden", "x"), false},
		{"204", "DELETE", "/v1/links/l1", 204, http.Header{}, nil, true},
		{"204 with a body", "DELETE", "/v1/links/l1", 204, jsonH, []byte(`{}`), false},
		{"key list", "GET", "/v1/keys", 200, jsonH, js(map[string]any{"data": []any{key(nil)}}), true},
		{"key list leaks the token", "GET", "/v1/keys", 200, jsonH,
			js(map[string]any{"data": []any{key(func(m map[string]any) { m["key"] = "lb_live_x" })}}), false},
		{"created key with token", "POST", "/v1/keys", 201, jsonH, js(key(func(m map[string]any) { m["key"] = "lb_live_x" })), true},
		{"created key without token", "POST", "/v1/keys", 201, jsonH, js(key(nil)), false},
		{"bad key state", "GET", "/v1/keys/k1", 200, jsonH, js(key(func(m map[string]any) { m["state"] = "paused" })), false},
		{"redirect", "GET", "/abc", 302, http.Header{"Location": {"https://example.com/"}}, nil, true},
		{"permanent redirect", "GET", "/abc", 308, http.Header{"Location": {"https://example.com/"}}, nil, true},
		{"redirect without Location", "GET", "/abc", 302, http.Header{}, nil, false},
		{"permanent redirect without Location", "GET", "/abc", 301, http.Header{}, nil, false},
		{"redirect 303", "GET", "/abc", 303, http.Header{"Location": {"https://example.com/"}}, nil, false},
		{"redirect answered a status only default covers", "GET", "/abc", 503, problemH, problem(503, "server_busy", "x"), false},
		{"HEAD redirect", "HEAD", "/abc", 307, http.Header{"Location": {"https://example.com/"}}, nil, true},
		{"HEAD unknown code", "HEAD", "/abc", 404, problemH, nil, true},
		{"unknown code as HTML", "GET", "/abc", 404, http.Header{"Content-Type": {"text/html; charset=utf-8"}}, []byte("<!doctype html>"), true},
		{"unknown code as problem", "GET", "/abc", 404, problemH, problem(404, "not_found", `no short link "abc"`), true},
		{"undocumented route", "GET", "/v1/nope", 200, jsonH, []byte(`{}`), false},
		{"undocumented method", "PUT", "/v1/links", 200, jsonH, link(nil), false},
		{"router 404 for an unknown path", "GET", "/v1/nope", 404, problemH, problem(404, "not_found", "no route for GET /v1/nope"), true},
		{"405 for an undocumented method", "PUT", "/v1/links", 405,
			http.Header{"Content-Type": {"application/problem+json"}, "Allow": {"GET, POST"}},
			problem(405, "method_not_allowed", "PUT is not allowed"), true},
		{"analytics", "GET", "/v1/analytics/workspace", 200, jsonH, js(map[string]any{
			"range":      map[string]any{"name": "24h", "start": "2026-03-09T13:00:00Z", "end": "2026-03-10T13:00:00Z", "tz": "UTC", "interval": "hour"},
			"totals":     map[string]any{"clicks": 0, "bot_clicks": 0, "unique_visitors": 0},
			"timeseries": []any{map[string]any{"start": "2026-03-09T13:00:00Z", "clicks": 0}},
			"top": map[string]any{"links": []any{map[string]any{"value": "lnk_1", "clicks": 3, "short_url": "http://lb.test/a"}},
				"referrers": []any{}, "countries": []any{}, "devices": []any{}, "browsers": []any{}, "os": []any{}},
			"top_other": map[string]any{"links": 0, "referrers": 0, "countries": 0, "devices": 0, "browsers": 0, "os": 0}}), true},
		{"analytics with a negative other", "GET", "/v1/analytics/workspace", 200, jsonH, js(map[string]any{
			"range":      map[string]any{"name": "24h", "start": "2026-03-09T13:00:00Z", "end": "2026-03-10T13:00:00Z", "tz": "UTC", "interval": "hour"},
			"totals":     map[string]any{"clicks": 0, "bot_clicks": 0, "unique_visitors": 0},
			"timeseries": []any{},
			"top":        map[string]any{"links": []any{}, "referrers": []any{}, "countries": []any{}, "devices": []any{}, "browsers": []any{}, "os": []any{}},
			"top_other":  map[string]any{"links": 0, "referrers": -1, "countries": 0, "devices": 0, "browsers": 0, "os": 0}}), false},
		{"analytics without top", "GET", "/v1/analytics/workspace", 200, jsonH, js(map[string]any{
			"range":  map[string]any{"name": "24h", "start": "2026-03-09T13:00:00Z", "end": "2026-03-10T13:00:00Z", "tz": "UTC", "interval": "hour"},
			"totals": map[string]any{"clicks": 0, "bot_clicks": 0, "unique_visitors": 0}, "timeseries": []any{}}), false},
		{"simple API", "POST", "/api/urls", 201, jsonH,
			js(map[string]string{"shortCode": "abc", "shortUrl": "http://s.test/abc", "originalUrl": "https://example.com/"}), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, "http://lb.test"+c.path, nil)
			err := openAPIResponseError(req, c.status, c.header, c.body)
			if c.ok && err != nil {
				t.Errorf("want accepted, got: %v", err)
			}
			if !c.ok && err == nil {
				t.Errorf("want rejected, got accepted")
			}
		})
	}

	// checkOpenAPI reports through the test with method, path and status.
	rec := &recordingTB{TB: t}
	req := httptest.NewRequest("GET", "http://lb.test/v1/links/l1", nil)
	checkOpenAPI(rec, req, 200, jsonH, link(func(m map[string]any) { m["secret"] = 1 }))
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "GET /v1/links/l1 answered 200") {
		t.Errorf("checkOpenAPI reported %q", rec.errs)
	}
	rec.errs = nil
	checkOpenAPI(rec, req, 200, jsonH, link(nil))
	if len(rec.errs) != 0 {
		t.Errorf("checkOpenAPI reported %q for a valid answer", rec.errs)
	}
}
