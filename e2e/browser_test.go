package e2e

import (
	"context"
	"fmt"
	stdlog "log"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"
)

// browserPath finds Chromium. Without one the browser tests skip, except
// with CI=true, where a missing browser fails the run (.ci/run installs it).
func browserPath(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found (chromium, chromium-browser, google-chrome): the browser tests need it; install it with apt-get install chromium")
	}
	t.Skip("browser tests skipped: no Chromium found; install it (apt-get install chromium) to run them")
	return ""
}

// browser drives one Chromium tab on the dashboard and fails the test on a
// console error, a CSP violation, a request that fails or a 5xx answer. It
// records every API call of the page as (method, path template).
type browser struct {
	t    testing.TB
	ctx  context.Context
	base string
	// browserContext is the tab's browser context (its profile).
	browserContext cdp.BrowserContextID

	mu       sync.Mutex
	problems []string
	calls    map[string]bool
	pending  map[network.RequestID]*network.Request
}

// chromium is the one Chromium of the package's browser tests. Each test
// opens tabs in a browser context of its own (cookies, storage and
// permissions apart, like a new profile), so tests share the browser's
// start-up and may run in parallel. TestMain closes it.
var chromium struct {
	once   sync.Once
	ctx    context.Context
	err    error
	cancel context.CancelFunc
}

// sharedChromium starts Chromium the first time it is called and returns
// the browser's context, from which a test opens its tabs.
func sharedChromium(t testing.TB) context.Context {
	t.Helper()
	path := browserPath(t)
	chromium.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.NoSandbox,
			chromedp.Flag("disable-gpu", true),
			chromedp.WindowSize(1440, 1000),
		)
		logs := &chromedpLog{}
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithErrorf(logs.errorf), chromedp.WithLogf(logs.logf))
		chromium.ctx, chromium.cancel = ctx, func() { cancelCtx(); cancelAlloc() }
		// The first Run starts the browser with a blank tab, from the
		// calling thread. chromedp has the kernel kill Chromium when that
		// thread ends (Pdeathsig is a thread's, not the process's), and
		// the Go runtime ends the threads of goroutines that lock one and
		// return, as the server's niced workers do in this process: a
		// Chromium started from a thread later taken by such a worker died
		// mid-test. It starts from a thread that lives as long as the
		// process.
		started := make(chan error)
		go func() {
			goruntime.LockOSThread() // never unlocked, and the goroutine never returns
			started <- chromedp.Run(ctx)
			select {}
		}()
		chromium.err = <-started
	})
	if chromium.err != nil {
		t.Fatalf("starting Chromium: %v", chromium.err)
	}
	return chromium.ctx
}

// newTab opens a tab of the shared Chromium in a new browser context, at
// 1440 × 1000, closed (with its context) when the test ends. It returns
// the tab's context and the browser context's id.
func newTab(t testing.TB, timeout time.Duration) (context.Context, cdp.BrowserContextID) {
	t.Helper()
	shared := sharedChromium(t)
	browserExec := cdp.WithExecutor(shared, chromedp.FromContext(shared).Browser)
	id, err := target.CreateBrowserContext().WithDisposeOnDetach(true).Do(browserExec)
	if err != nil {
		t.Fatalf("opening a browser context: %v", err)
	}
	// A window of its own: headless Chromium opens no tab in a new
	// browser context without one.
	tab, err := target.CreateTarget("about:blank").WithBrowserContextID(id).WithNewWindow(true).Do(browserExec)
	if err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	ctx, cancelTab := chromedp.NewContext(shared, chromedp.WithTargetID(tab))
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = target.DisposeBrowserContext(id).Do(cdp.WithExecutor(dctx, chromedp.FromContext(shared).Browser))
	})
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1440, 1000)); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx, id
}

func newBrowser(t testing.TB, base string) *browser {
	t.Helper()
	ctx, browserContext := newTab(t, 2*time.Minute)
	b := &browser{t: t, ctx: ctx, base: base, browserContext: browserContext, calls: map[string]bool{}, pending: map[network.RequestID]*network.Request{}}
	chromedp.ListenTarget(ctx, b.listen)
	// The copy buttons write to the clipboard, which a page may do once
	// the browser grants it.
	grant := cdpbrowser.GrantPermissions([]cdpbrowser.PermissionType{cdpbrowser.PermissionTypeClipboardReadWrite, cdpbrowser.PermissionTypeClipboardSanitizedWrite}).
		WithOrigin(base).WithBrowserContextID(browserContext)
	if err := chromedp.Run(ctx, network.Enable(), log.Enable(), runtime.Enable(), grant); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	t.Cleanup(b.check)
	parity.journey(t)
	return b
}

// chromedpLog passes chromedp's messages on to the log with -v, but one:
// chromedp does not know the event Chromium sends whenever a modal dialog
// opens (dom.EventTopLayerElementsUpdated), and says so each time. The
// browser is shared by the tests, so its messages belong to none of them.
type chromedpLog struct{}

func (l *chromedpLog) errorf(format string, args ...any) {
	if format == "unhandled node event %T" && len(args) == 1 {
		if _, ok := args[0].(*dom.EventTopLayerElementsUpdated); ok {
			return
		}
	}
	l.logf("ERROR: "+format, args...)
}

func (l *chromedpLog) logf(format string, args ...any) {
	if testing.Verbose() {
		stdlog.Printf("chromium: "+format, args...)
	}
}

func (b *browser) problem(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

func (b *browser) listen(ev any) {
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			b.problem("console %s: %s", e.Type, strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		b.problem("uncaught exception: %s", e.ExceptionDetails.Error())
	case *log.EventEntryAdded:
		// The network source reports every 4xx the API answers on purpose
		// (a field's validation error, single sign-on being off); the
		// answers are checked below. Everything else (CSP violations
		// among them) fails the test.
		if e.Entry.Source != log.SourceNetwork && (e.Entry.Level == log.LevelError || e.Entry.Level == log.LevelWarning) {
			b.problem("browser log (%s): %s", e.Entry.Source, e.Entry.Text)
		}
	case *network.EventRequestWillBeSent:
		b.mu.Lock()
		prev := b.pending[e.RequestID]
		b.pending[e.RequestID] = e.Request
		b.mu.Unlock()
		// A redirect answers the request before it under the same ID
		// (single sign-on's start and callback).
		if e.RedirectResponse != nil && prev != nil {
			b.record(prev.Method, e.RedirectResponse.URL)
		}
	case *network.EventResponseReceived:
		b.mu.Lock()
		req := b.pending[e.RequestID]
		b.mu.Unlock()
		if e.Response.Status >= 500 {
			b.problem("%d answered to %s", e.Response.Status, e.Response.URL)
		}
		if req != nil {
			b.record(req.Method, e.Response.URL)
		}
	case *network.EventLoadingFailed:
		b.mu.Lock()
		req := b.pending[e.RequestID]
		b.mu.Unlock()
		u := ""
		if req != nil {
			u = req.Method + " " + req.URL
		}
		// The page ends a live click stream by aborting its request.
		if e.Canceled && req != nil && strings.HasSuffix(strings.SplitN(req.URL, "?", 2)[0], "/v1/events/stream") {
			return
		}
		b.problem("request failed: %s: %s %s", u, e.ErrorText, e.BlockedReason)
	}
}

// record remembers an API call of the page by its route.
func (b *browser) record(method, raw string) {
	u, err := url.Parse(raw)
	if err != nil || !strings.HasPrefix(u.Path, "/v1/") {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls[method+" "+u.Path] = true
}

func (b *browser) check() {
	b.mu.Lock()
	for _, p := range b.problems {
		b.t.Errorf("in the browser: %s", p)
	}
	b.mu.Unlock()
	// Every call of every journey is an operation of the document, and
	// counts for the parity check (browser_parity_test.go).
	for op := range b.templates(b.t) {
		parity.add(op)
	}
}

// allowDownloads saves what the tab downloads in dir, under the names the
// page gives, and sends the download events to the tab.
func (b *browser) allowDownloads(dir string) {
	b.t.Helper()
	b.run("allow downloads", cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName).
		WithDownloadPath(dir).WithEventsEnabled(true).WithBrowserContextID(b.browserContext))
}

func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// screenshot writes docs/screenshots/<name>-<width>.png at 1440 and 390
// pixels wide when LINKBOLT_SCREENSHOTS=1, so that ordinary runs leave the
// tree alone. The actions of prepare run at each width before the shot
// (to scroll what it shows into view, say).
func (b *browser) screenshot(name string, prepare ...chromedp.Action) {
	b.t.Helper()
	if os.Getenv("LINKBOLT_SCREENSHOTS") != "1" {
		return
	}
	for _, w := range []int64{1440, 390} {
		var png []byte
		b.run("screenshot "+name,
			chromedp.EmulateViewport(w, 900),
			chromedp.WaitReady("body"))
		b.run("prepare the screenshot "+name, prepare...)
		b.run("screenshot "+name, chromedp.FullScreenshot(&png, 100)) // 100: PNG
		path := filepath.Join("..", "docs", "screenshots", fmt.Sprintf("%s-%d.png", name, w))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.run("viewport back", chromedp.EmulateViewport(1440, 1000))
}

// darkScreenshot writes docs/screenshots/<name>-dark-1440.png with the
// system's dark theme, when LINKBOLT_SCREENSHOTS=1.
func (b *browser) darkScreenshot(name string) {
	b.t.Helper()
	if os.Getenv("LINKBOLT_SCREENSHOTS") != "1" {
		return
	}
	var png []byte
	dark := emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}})
	light := emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}})
	b.run("dark screenshot "+name, dark, chromedp.FullScreenshot(&png, 100), light)
	if err := os.WriteFile(filepath.Join("..", "docs", "screenshots", name+"-dark-1440.png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// followAsBrowser follows the short URL u once as Chrome does (a click,
// not a bot's), without following the redirect, which must be a 302.
func followAsBrowser(t testing.TB, u string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36")
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 302 {
		t.Fatalf("following %s: %d, want 302", u, res.StatusCode)
	}
}

// withToken opens path of the dashboard signed in with tok, handed over
// as single sign-on hands a token over: in the fragment, with the
// client_state the tab keeps for the sign-in it started.
func withToken(base, path, tok string) chromedp.Tasks {
	const state = "browser-test-sign-in"
	return chromedp.Tasks{
		// Another path than the one opened next: a navigation that changes
		// only the fragment would not load the page again.
		chromedp.Navigate(base + "/app/signing-in"),
		chromedp.Evaluate(`sessionStorage.setItem('linkbolt.sso', '`+state+`')`, nil),
		chromedp.Navigate(base + path + "#token=" + tok + "&client_state=" + state),
	}
}

// clear empties an input; typing afterwards fires the input events the
// page listens to.
func clear(sel string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).value = ''`, sel), nil)
}

// operation is one operation of the OpenAPI document: its method, its
// path template and the template as a pattern of concrete paths.
type operation struct {
	method, path string
	re           *regexp.Regexp
}

// documentOperations reads server/openapi.yaml's operations once.
var documentOperations = sync.OnceValues(func() ([]operation, error) {
	data, err := os.ReadFile(filepath.Join("..", "server", "openapi.yaml"))
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, err
	}
	var ops []operation
	for _, p := range doc.Paths.InMatchingOrder() {
		re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(p), "[^/]+") + "$")
		for m := range doc.Paths.Value(p).Operations() {
			ops = append(ops, operation{m, p, re})
		}
	}
	return ops, nil
})

// templates turns the recorded calls into the OpenAPI document's paths
// (/v1/keys/key_123/rotate → /v1/keys/{id}/rotate) and fails on a call to
// a route the document does not have.
func (b *browser) templates(t testing.TB) map[string]bool {
	t.Helper()
	ops, err := documentOperations()
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]bool{}
	for c := range b.calls {
		method, path, _ := strings.Cut(c, " ")
		found := ""
		for _, o := range ops {
			// HEAD is answered wherever GET is.
			if (o.method == method || (method == "HEAD" && o.method == "GET")) && o.re.MatchString(path) {
				// A static path wins over a template (/v1/invitations/accept).
				if found == "" || !strings.Contains(o.path, "{") {
					found = method + " " + o.path
				}
			}
		}
		if found == "" {
			t.Errorf("the dashboard called %s, which is not an operation of the OpenAPI document", c)
			continue
		}
		out[found] = true
	}
	return out
}

// TestBrowserJourney drives the dashboard in Chromium through the real app
// on a real data file: sign in, create a key and use it, create a link and
// follow it, rotate and revoke the key, sign out.
func TestBrowserJourney(t *testing.T) {
	t.Parallel()
	browserPath(t)
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	base, _ := startApp(t, cfg, nil)
	b := newBrowser(t, base)

	// A browser opening / lands on the dashboard, which asks to sign in.
	var location string
	b.run("open /",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible("#sign-in"),
		chromedp.Location(&location))
	if location != base+"/app/" {
		t.Fatalf("/ led to %s, want %s/app/", location, base)
	}
	b.screenshot("sign-in")

	// A wrong password shows the API's message.
	b.run("wrong password",
		chromedp.SendKeys("#email", "admin@example.com"),
		chromedp.SendKeys("#password", "not the password"),
		chromedp.Click(`#sign-in button[type=submit]`),
		chromedp.WaitVisible(`.msg.error`))
	b.run("sign in",
		clear("#password"),
		chromedp.SendKeys("#password", "a long password"),
		chromedp.Click(`#sign-in button[type=submit]`),
		chromedp.WaitVisible(`nav[aria-label=Main]`),
		chromedp.WaitVisible(`#create-link-form`))
	var stored string
	b.run("token storage", chromedp.Evaluate(`JSON.stringify({s: sessionStorage.getItem('linkbolt.token') !== null, l: localStorage.length, u: location.href})`, &stored))
	if !strings.Contains(stored, `"s":true`) || !strings.Contains(stored, `"l":0`) || strings.Contains(stored, "token") && strings.Contains(stored, "#") {
		t.Fatalf("after sign-in: %s", stored)
	}
	// The sign-in named this browser a known device of the admin: its
	// cookie goes to the login route only, and no script can read it.
	var cookies []*network.Cookie
	var scriptCookies string
	b.run("device cookie",
		chromedp.ActionFunc(func(ctx context.Context) (err error) {
			cookies, err = network.GetCookies().WithURLs([]string{base + "/v1/auth/login"}).Do(ctx)
			return err
		}),
		chromedp.Evaluate(`document.cookie`, &scriptCookies))
	var device *network.Cookie
	for _, c := range cookies {
		if c.Name == "linkbolt_device" {
			device = c
		}
	}
	if device == nil || !device.HTTPOnly || device.Path != "/v1/auth/login" || device.SameSite != network.CookieSameSiteStrict {
		t.Fatalf("after sign-in, the device cookie is %+v (of %d)", device, len(cookies))
	}
	if strings.Contains(scriptCookies, "linkbolt_device") {
		t.Fatalf("a script reads the device cookie: %q", scriptCookies)
	}
	b.run("empty links", chromedp.WaitVisible(`.empty`))

	// Keys: create one and read it from the page, once.
	b.run("keys page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/keys"]`),
		chromedp.WaitVisible(`#create-key-form`),
		chromedp.WaitVisible(`.empty`))
	b.run("create key with no name",
		chromedp.Click(`#create-key-form button[type=submit]`),
		chromedp.WaitVisible(`#create-key-form .msg.error`))
	var key string
	b.run("create key",
		chromedp.SendKeys("#name", "deploy script"),
		chromedp.Click(`#create-key-form button[type=submit]`),
		chromedp.WaitVisible(`#new-key-value`),
		chromedp.Text(`#new-key-value`, &key),
		chromedp.WaitVisible(`#keys tbody tr`))
	b.screenshot("api-keys")
	c := client{t, base}
	if got := c.must("GET", "/v1/keys", key, "", 200)["data"].([]any); len(got) != 1 {
		t.Fatalf("the key from the page lists %d keys", len(got))
	}
	var copied string
	b.run("copy the key",
		chromedp.Click(`#copy-key`),
		chromedp.WaitVisible(`//span[@class="copied" and text()="Copied"]`, chromedp.BySearch),
		chromedp.Evaluate(`navigator.clipboard.readText()`, &copied, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if copied != key {
		t.Fatalf("the copy button copied %q, the page shows %q", copied, key)
	}
	var curl string
	b.run("copy as curl",
		chromedp.Click(`#create-key-form details.curl summary`),
		chromedp.Text(`#create-key-form details.curl pre`, &curl))
	if !strings.Contains(curl, "$LINKBOLT_KEY") || !strings.Contains(curl, base+"/v1/keys") {
		t.Fatalf("copy as curl: %s", curl)
	}
	b.run("hide the key",
		chromedp.Click(`#key-copied`),
		chromedp.WaitNotPresent(`#new-key-value`))

	// Links: a validation error at the field, then a link, followed.
	b.run("links page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`))
	b.run("bad destination",
		chromedp.SendKeys("#destination_url", "not a url"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#destination_url-error`))
	b.run("create link",
		clear("#destination_url"),
		chromedp.SendKeys("#destination_url", "https://example.com/from-the-browser"),
		chromedp.SendKeys("#alias", "browser-made"),
		chromedp.SendKeys("#tags", "docs, launch"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="browser-made"]`))
	var one string
	b.run("one link", chromedp.Text(`.pager span`, &one))
	if !strings.HasSuffix(one, "· 1 link") {
		t.Fatalf("pager with one link: %q, want it to end in \"· 1 link\"", one)
	}
	b.screenshot("first-link")
	b.darkScreenshot("first-link")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(base + "/browser-made")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 302 || res.Header.Get("Location") != "https://example.com/from-the-browser" {
		t.Fatalf("following the link: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	l := c.must("GET", "/v1/links?search=browser-made", key, "", 200)["data"].([]any)[0].(map[string]any)
	if tags := fmt.Sprint(l["tags"]); tags != "[docs launch]" {
		t.Fatalf("tags %s", tags)
	}
	b.run("search finds nothing",
		chromedp.SendKeys("#search", "nothing-like-this"),
		chromedp.Click(`form[role=search] button`),
		chromedp.WaitVisible(`.empty`))
	b.run("delete link",
		clear("#search"),
		chromedp.Click(`form[role=search] button`),
		chromedp.WaitVisible(`#links tr[data-alias="browser-made"]`),
		chromedp.Click(`#links tr[data-alias="browser-made"] button.danger`),
		chromedp.Click(`#links tr[data-alias="browser-made"] .confirm button.danger`),
		chromedp.WaitVisible(`.empty`))
	c.must("GET", "/v1/links/"+l["id"].(string), key, "", 404)

	// Paging: 21 links are two pages of 20.
	for i := 0; i < 21; i++ {
		c.must("POST", "/v1/links", key, fmt.Sprintf(`{"destination_url":"https://example.com/%d","alias":"paged-%02d"}`, i, i), 201)
	}
	var pager string
	b.run("paging",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/keys"]`),
		chromedp.WaitVisible(`#keys`),
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#links tr[data-alias="paged-20"]`),
		chromedp.Text(`.pager span`, &pager))
	if !strings.Contains(pager, "Page 1 of 2") {
		t.Fatalf("pager: %q", pager)
	}
	b.run("next page",
		chromedp.Click(`//nav[@class="pager"]/button[text()="Next"]`, chromedp.BySearch),
		chromedp.WaitVisible(`#links tr[data-alias="paged-00"]`),
		chromedp.WaitNotPresent(`#links tr[data-alias="paged-20"]`))

	// The workspace switcher: another workspace has its own links.
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	other := c.must("POST", "/v1/workspaces", tok, `{"name":"Side project"}`, 201)["id"].(string)
	b.run("switch workspace",
		chromedp.Reload(),
		chromedp.WaitReady(`#workspace option[value="`+other+`"]`),
		// SetValue fires the input and change events of a select.
		chromedp.SetValue(`#workspace`, other),
		chromedp.WaitVisible(`.empty`))
	var first string
	for _, w := range c.must("GET", "/v1/me", tok, "", 200)["workspaces"].([]any) {
		if w.(map[string]any)["id"] != other {
			first = w.(map[string]any)["id"].(string)
		}
	}
	b.run("switch back",
		chromedp.SetValue(`#workspace`, first),
		chromedp.WaitVisible(`#links tr[data-alias="paged-20"]`))

	// Rotate: the new key is shown once and works; revoke it.
	var newKey string
	b.run("rotate",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/keys"]`),
		chromedp.WaitVisible(`#keys tbody tr`),
		chromedp.Click(`#keys tbody tr button.rotate`),
		chromedp.WaitVisible(`#new-key-value`),
		chromedp.Text(`#new-key-value`, &newKey),
		chromedp.WaitVisible(`#keys .state.grace`))
	if newKey == key || newKey == "" {
		t.Fatalf("rotated key %q", newKey)
	}
	c.must("GET", "/v1/keys", newKey, "", 200)
	var newID string
	for _, k := range c.must("GET", "/v1/keys", newKey, "", 200)["data"].([]any) {
		if k.(map[string]any)["state"] == "active" {
			newID = k.(map[string]any)["id"].(string)
		}
	}
	b.run("revoke",
		chromedp.Click(`#keys tr[data-key="`+newID+`"] button.danger`),
		chromedp.Click(`#keys tr[data-key="`+newID+`"] .confirm button.danger`),
		chromedp.WaitVisible(`#keys tr[data-key="`+newID+`"] .state.revoked`))
	c.must("GET", "/v1/keys", newKey, "", 401)

	b.run("sign out",
		chromedp.Click(`#sign-out`),
		chromedp.WaitVisible(`#sign-in`),
		chromedp.Evaluate(`String(sessionStorage.getItem('linkbolt.token'))`, &stored))
	if stored != "null" {
		t.Fatalf("token after sign-out: %s", stored)
	}

	// Every call of the page is an operation of the API's document.
	got := b.templates(t)
	want := []string{"POST /v1/auth/login", "GET /v1/me", "GET /v1/links", "POST /v1/links", "DELETE /v1/links/{id}",
		"GET /v1/keys", "POST /v1/keys", "POST /v1/keys/{id}/rotate", "DELETE /v1/keys/{id}", "POST /v1/auth/logout"}
	for _, w := range want {
		if !got[w] {
			t.Errorf("the journey did not call %s", w)
		}
	}
	list := make([]string, 0, len(got))
	for k := range got {
		list = append(list, k)
	}
	sort.Strings(list)
	t.Logf("the dashboard called: %s", strings.Join(list, ", "))
}

// TestBrowserTokenFromFragment signs in as single sign-on does, with the
// token in the fragment of /app/#token=…&client_state=…, which the app
// keeps only for the sign-in it started and clears from the address bar;
// and accepts an invitation from its link.
func TestBrowserTokenFromFragmentAndInvitation(t *testing.T) {
	t.Parallel()
	browserPath(t)
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	base, _ := startApp(t, cfg, nil)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)

	b := newBrowser(t, base)
	var location, stored, notice string
	// A link carrying a token this tab did not ask for (someone else's
	// session, handed out to sign a person in as them) is ignored.
	b.run("a token from elsewhere",
		chromedp.Navigate(base+"/app/links#token="+tok+"&client_state=AAAAAAAAAAAAAAAAAAAA"),
		chromedp.WaitVisible(`#sign-in`),
		chromedp.Text(`main .msg`, &notice),
		chromedp.Location(&location),
		chromedp.Evaluate(`String(sessionStorage.getItem('linkbolt.token'))`, &stored))
	if stored != "null" || location != base+"/app/links" || !strings.Contains(notice, "did not start was ignored") {
		t.Fatalf("a foreign token: stored %q, address %s, notice %q", stored, location, notice)
	}
	// The token of the sign-in this tab started (its client_state kept in
	// sessionStorage, as the sign-in button does) is taken.
	b.run("token in the fragment",
		chromedp.Evaluate(`sessionStorage.setItem('linkbolt.sso', 'Zq3-x_9KfT2mWc7RbN1p')`, nil),
		chromedp.Navigate(base+"/app/#token="+tok+"&client_state=Zq3-x_9KfT2mWc7RbN1p"),
		chromedp.WaitVisible(`nav[aria-label=Main]`),
		chromedp.Location(&location),
		chromedp.Evaluate(`String(sessionStorage.getItem('linkbolt.sso'))`, &stored))
	if location != base+"/app/" || stored != "null" {
		t.Fatalf("address after the token was picked up: %s, client_state kept: %s", location, stored)
	}

	inv := c.must("POST", "/v1/invitations", tok, `{"email":"sam@example.com","role":"read"}`, 201)
	invURL := strings.Replace(inv["url"].(string), "http://localhost:8080", base, 1)
	b2 := newBrowser(t, base)
	b2.run("open the invitation",
		chromedp.Navigate(invURL),
		chromedp.WaitVisible(`#invite-new`),
		chromedp.Location(&location))
	if strings.Contains(location, "#") {
		t.Fatalf("the invitation's token stays in the address bar: %s", location)
	}
	b2.screenshot("invitation")
	b2.run("join",
		chromedp.SendKeys("#invite-name", "Sam"),
		chromedp.SendKeys("#invite-password", "sam's long password"),
		chromedp.Click(`#invite-new button[type=submit]`),
		chromedp.WaitVisible(`nav[aria-label=Main]`),
		chromedp.WaitVisible(`#create-link-form`))
	// Sam reads; writing is refused by the API and the page says so.
	b2.run("a read member cannot create",
		chromedp.SendKeys("#destination_url", "https://example.com/sam"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#create-link-form .msg.error`))
	var msg string
	b2.run("the message", chromedp.Text(`#create-link-form .msg.error`, &msg))
	if msg == "" {
		t.Fatal("no message for the refused write")
	}
	t.Logf("refused write: %s", msg)

	// Account: a name, a new password, then out of every session.
	b2.run("account page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/account"]`),
		chromedp.WaitVisible(`#name-form`))
	b2.screenshot("account")
	b2.run("rename",
		clear("#account-name-input"),
		chromedp.SendKeys("#account-name-input", "Sam Reader"),
		chromedp.Click(`#name-form button[type=submit]`),
		chromedp.WaitVisible(`#name-form .msg.notice`),
		chromedp.WaitVisible(`//span[@class="who" and text()="Sam Reader"]`, chromedp.BySearch))
	b2.run("wrong current password",
		chromedp.SendKeys("#current_password", "not my password"),
		chromedp.SendKeys("#new_password", "sam's newer password"),
		chromedp.Click(`#password-form button[type=submit]`),
		chromedp.WaitVisible(`#current_password-error`))
	b2.run("change password",
		clear("#current_password"),
		chromedp.SendKeys("#current_password", "sam's long password"),
		chromedp.Click(`#password-form button[type=submit]`),
		chromedp.WaitVisible(`#password-form .msg.notice`))
	samTok := c.must("POST", "/v1/auth/login", "", `{"email":"sam@example.com","password":"sam's newer password"}`, 200)["token"].(string)
	if me := c.must("GET", "/v1/me", samTok, "", 200); me["name"] != "Sam Reader" {
		t.Fatalf("me after the account page: %v", me)
	}
	b2.run("sign out everywhere",
		chromedp.Click(`#account-sessions ~ .actions button.danger`),
		chromedp.Click(`#account-sessions ~ .actions .confirm button.danger`),
		chromedp.WaitVisible(`#sign-in`))
	c.must("GET", "/v1/me", samTok, "", 401)

	got := b2.templates(t)
	for _, w := range []string{"POST /v1/invitations/accept", "GET /v1/me", "GET /v1/links", "PATCH /v1/me", "POST /v1/me/password", "POST /v1/auth/logout-all"} {
		if !got[w] {
			t.Errorf("the invitation journey did not call %s", w)
		}
	}
}

// TestBrowserSetup finishes the setup of a fresh instance in the browser
// from the link in the log, and goes on into the dashboard.
func TestBrowserSetup(t *testing.T) {
	t.Parallel()
	browserPath(t)
	cfg := testConfig(t, "")
	logs := &syncWriter{}
	base, _ := startApp(t, cfg, logs)
	i := strings.Index(logs.String(), "/setup?token=")
	if i < 0 {
		t.Fatalf("no setup link in the log: %s", logs.String())
	}
	token := strings.Trim(strings.Fields(logs.String()[i+len("/setup?token="):])[0], `"`)

	b := newBrowser(t, base)
	// Before setup, / is the status page that points to the setup link.
	b.run("home before setup",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`//p[contains(., "not set up yet")]`, chromedp.BySearch))
	b.run("setup",
		chromedp.Navigate(base+"/setup?token="+token),
		chromedp.WaitVisible("#f"),
		chromedp.SendKeys("#email", "owner@example.com"),
		chromedp.SendKeys("#password", "the owner's password"),
		chromedp.Click(`#f button[type=submit]`),
		chromedp.WaitVisible(`#open-dashboard`),
		chromedp.Click(`#open-dashboard`),
		chromedp.WaitVisible(`#sign-in`),
		chromedp.SendKeys("#email", "owner@example.com"),
		chromedp.SendKeys("#password", "the owner's password"),
		chromedp.Click(`#sign-in button[type=submit]`),
		chromedp.WaitVisible(`#create-link-form`))
	got := b.templates(t)
	if !got["POST /v1/setup"] || !got["POST /v1/auth/login"] {
		t.Errorf("the setup journey called %v", got)
	}
}

// startDashboard boots the whole app for a browser journey, with the
// admin admin@example.com ("a long password") and the extra configuration
// (YAML), and returns its base URL, an API client and the admin's login
// token. Without a browser it skips, or fails under CI (browserPath).
func startDashboard(t *testing.T, extra string) (string, client, string) {
	t.Helper()
	browserPath(t)
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n"+extra)
	base, _ := startApp(t, cfg, nil)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	return base, c, tok
}
