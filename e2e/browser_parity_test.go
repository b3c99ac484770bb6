package e2e

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/linkbolt/linkbolt/internal/pgtest"
)

// The parity check: every operation of the OpenAPI document is reachable
// from the dashboard, except the short list below. Each browser journey
// records the operations its page called (browser.check); after the
// whole suite, TestMain compares their union with the document.

// notDashboard are the operations the dashboard does not call, with the
// reason. docs/dashboard.md lists them too.
var notDashboard = map[string]string{
	"GET /metrics":         "Prometheus metrics, for a scraper",
	"GET /healthz":         "a probe for a supervisor or load balancer",
	"HEAD /healthz":        "a probe for a supervisor or load balancer",
	"GET /":                "the status page; a browser is sent on to /app/",
	"GET /setup":           "the setup page itself (it calls POST /v1/setup)",
	"GET /app":             "the dashboard's own page",
	"GET /app/{path}":      "the dashboard's own pages",
	"GET /v1/openapi.json": "the API's document, for tools and code generators",
	"POST /api/urls":       "the simple API for scripts",
	"GET /yourls-api.php":  "the YOURLS-compatible API, for tools made for YOURLS",
	"POST /yourls-api.php": "the YOURLS-compatible API, for tools made for YOURLS",
	// The Kutt-compatible API (server/kutt.go), for clients made for Kutt.
	"GET /api/v2/health":                          "the Kutt-compatible API, for clients made for Kutt",
	"GET /api/v2/links":                           "the Kutt-compatible API, for clients made for Kutt",
	"POST /api/v2/links":                          "the Kutt-compatible API, for clients made for Kutt",
	"PATCH /api/v2/links/{id}":                    "the Kutt-compatible API, for clients made for Kutt",
	"DELETE /api/v2/links/{id}":                   "the Kutt-compatible API, for clients made for Kutt",
	"GET /api/v2/links/{id}/stats":                "the Kutt-compatible API, for clients made for Kutt",
	"DELETE /api/v2/links/{id}/stats":             "the Kutt-compatible API, for clients made for Kutt",
	"GET /api/v2/users":                           "the Kutt-compatible API, for clients made for Kutt",
	"POST /api/v2/domains":                        "the Kutt-compatible API, for clients made for Kutt",
	"DELETE /api/v2/domains/{id}":                 "the Kutt-compatible API, for clients made for Kutt",
	"GET /{code}":                                 "the public redirect: a person follows the short URL",
	"HEAD /{code}":                                "the public redirect: checked by link checkers",
	"POST /{code}":                                "the password form of a protected link, on its own page (link controls)",
	"GET /{code}+":                                "the public preview page: a person opens it before following the link",
	"POST /{code}+":                               "the report form of the public preview page (TestBrowserAbuseReports sends it)",
	"GET /.well-known/apple-app-site-association": "a custom domain's app file, fetched by iOS",
	"GET /apple-app-site-association":             "a custom domain's app file, fetched by older iOS versions",
	"GET /.well-known/assetlinks.json":            "a custom domain's app file, fetched by Android",
	"POST /v1/abuse-reports":                      "reports by scripts and other sites; a visitor reports from the preview page (POST /{code}+)",
	"GET /{code}/{path}":                          "the public redirect of a link that forwards the path: a person follows the short URL",
	"HEAD /{code}/{path}":                         "the public redirect of a link that forwards the path: checked by link checkers",
	"POST /{code}/{path}":                         "the password form of a protected link that forwards the path, on its own page",
	"GET /v1/public/links/{domain}/{alias}/stats": "a link's public statistics for other sites and scripts; a person opens /{code}/stats",
	// The command line's rescue routes (linkbolt users, keys; server/admin_*.go).
	"POST /v1/admin/users":                        "linkbolt users create --admin, while a server holds the data file",
	"POST /v1/admin/users/{id}/password":          "linkbolt users reset-password, while a server holds the data file",
	"POST /v1/admin/users/{id}/password-link":     "linkbolt users reset-password --setup-link, while a server holds the data file",
	"DELETE /v1/admin/workspaces/{id}/keys/{key}": "linkbolt keys revoke, while a server holds the data file",
	"GET /auth/reset-password":                    "the page of a one-time password link itself (it calls POST /v1/auth/password-reset)",
	"POST /v1/auth/password-reset":                "the page of a one-time password link, opened from the link",
}

// parity is the union of the operations the browser journeys called, and
// the top-level tests that drove a browser.
var parity = &parityRecord{calls: map[string]bool{}, ran: map[string]bool{}}

type parityRecord struct {
	mu    sync.Mutex
	calls map[string]bool
	ran   map[string]bool
}

func (p *parityRecord) add(op string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[op] = true
}

// journey notes that the top-level test of t drove a browser.
func (p *parityRecord) journey(t testing.TB) {
	root, _, _ := strings.Cut(t.Name(), "/")
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ran[root] = true
}

// parallel is how many of the package's tests run at once unless
// -test.parallel says otherwise: they mostly wait for Chromium and for
// child processes, not for this process's CPU.
const parallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(parallel, runtime.GOMAXPROCS(0))))
	}
	code := pgtest.MainBothStores(m)
	if chromium.cancel != nil {
		chromium.cancel()
	}
	if code == 0 {
		if err := checkParity(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: the dashboard/API parity check:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkParity compares the operations the journeys called with the
// document's, when every browser journey of the package ran (not when a
// -run pattern picked some, or without a browser outside CI).
func checkParity() error {
	journeys, err := browserJourneys()
	if err != nil {
		return err
	}
	parity.mu.Lock()
	defer parity.mu.Unlock()
	for _, j := range journeys {
		if !parity.ran[j] {
			return nil
		}
	}
	ops, err := documentOperations()
	if err != nil {
		return err
	}
	var missing []string
	for _, o := range ops {
		op := o.method + " " + o.path
		if _, ok := notDashboard[op]; ok {
			if parity.calls[op] {
				missing = append(missing, op+" is called by the dashboard but listed in notDashboard")
			}
			continue
		}
		if !parity.calls[op] {
			missing = append(missing, op+" is not reachable from the dashboard (no journey called it)")
		}
	}
	for op := range notDashboard {
		found := false
		for _, o := range ops {
			found = found || o.method+" "+o.path == op
		}
		if !found {
			missing = append(missing, op+" is in notDashboard but not in the document")
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("\n  %s", strings.Join(missing, "\n  "))
	}
	fmt.Printf("parity: the dashboard's journeys called all %d API operations (%d operations are not the dashboard's)\n", len(parity.calls), len(notDashboard))
	return nil
}

// browserJourneys lists the package's top-level TestBrowser… functions.
func browserJourneys() ([]string, error) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		return nil, err
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "TestBrowser") {
				out = append(out, fn.Name.Name)
			}
		}
	}
	return out, nil
}
