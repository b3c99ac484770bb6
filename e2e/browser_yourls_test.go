package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// loadScript adds a script element of src to the page at page and says
// whether it ran (it calls jsonpRan), was refused, or loaded without
// running.
func loadScript(t *testing.T, ctx context.Context, page, src string) string {
	t.Helper()
	js := `new Promise(resolve => {
  window.jsonpRan = () => resolve('ran');
  const s = document.createElement('script');
  s.src = ` + strings.ReplaceAll(`"`+src+`"`, "&", "\\u0026") + `;
  s.onerror = () => resolve('refused');
  s.onload = () => setTimeout(() => resolve('loaded, not run'), 50);
  document.head.append(s);
})`
	var got string
	err := chromedp.Run(ctx, chromedp.Navigate(page),
		chromedp.Evaluate(js, &got, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	return got
}

// TestBrowserJSONPNoScriptOfOurOwn: a <script src="/yourls-api.php?
// format=jsonp&callback=…"> on one of linkbolt's own pages, which the
// dashboard's script-src 'self' lets load, does not run in Chromium; the
// same JSONP loaded by another site's page runs, as JSONP clients need.
func TestBrowserJSONPNoScriptOfOurOwn(t *testing.T) {
	t.Parallel()
	browserPath(t)
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	base, _ := startApp(t, cfg, nil)
	c := client{t, base}
	tok := loginAs(c, "admin@example.com", "a long password", 200)
	key := c.must("POST", "/v1/keys", tok, `{"name":"jsonp","scope":"read"}`, 201)["key"].(string)
	api := base + "/yourls-api.php?" + url.Values{"signature": {key}, "action": {"version"}, "format": {"jsonp"}, "callback": {"jsonpRan"}}.Encode()

	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!doctype html><title>another site</title><p>another site"))
	}))
	t.Cleanup(other.Close)
	otherSite := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) // another site than 127.0.0.1

	ctx := bareChromium(t)
	if got := loadScript(t, ctx, base+"/app/", api); got != "refused" {
		t.Errorf("on the dashboard's own page, the JSONP script %s", got)
	}
	if got := loadScript(t, ctx, otherSite+"/", api); got != "ran" {
		t.Errorf("on another site's page, the JSONP script %s", got)
	}
}
