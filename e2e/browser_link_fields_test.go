package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserLinkExternalID gives a link an external ID in the create
// form, sees a second link with the same one refused on that field, and
// removes it in the edit form.
func TestBrowserLinkExternalID(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)
	b.run("create",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.SendKeys("#destination_url", "https://example.com/order"),
		chromedp.SendKeys("#alias", "order"),
		chromedp.Click(`#create-link-form details.more summary`),
		chromedp.WaitVisible(`#external_id`),
		chromedp.SendKeys("#external_id", "order-1234"))
	b.screenshot("link-external-id")
	b.run("submit",
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="order"]`))
	l := c.must("GET", "/v1/links/ext_order-1234", tok, "", 200)
	if l["alias"] != "order" {
		t.Fatalf("by external ID: %v", l)
	}

	var msg string
	b.run("a second with the same",
		chromedp.SendKeys("#destination_url", "https://example.com/other"),
		chromedp.Evaluate(`document.querySelector('#create-link-form details.more').open = true`, nil),
		chromedp.WaitVisible(`#external_id`),
		chromedp.SendKeys("#external_id", "order-1234"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#create-link-form .field-error`),
		chromedp.Text(`#create-link-form .field-error`, &msg))
	if msg == "" {
		t.Fatal("no message on the field")
	}

	b.run("edit",
		chromedp.Click(`#links tr[data-alias="order"] button.edit`),
		chromedp.WaitVisible(`#edit_external_id`),
		chromedp.Evaluate(`(() => { const i = document.querySelector('#edit_external_id'); i.select(); })()`, nil),
		chromedp.SendKeys(`#edit_external_id`, "\b"),
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(`.answer`))
	if got := c.must("GET", "/v1/links?search=order", tok, "", 200)["data"].([]any)[0].(map[string]any); got["external_id"] != nil {
		t.Fatalf("after removing: %v", got)
	}
}

// TestBrowserLinkAppDestinations sets a link's iOS destination in the
// create form, follows the short URL as an iPhone and as a desktop, and
// moves the app destination to Android in the edit form.
func TestBrowserLinkAppDestinations(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)
	b.run("create",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.SendKeys("#destination_url", "https://example.com/app"),
		chromedp.SendKeys("#alias", "get-app"),
		chromedp.Click(`#create-link-form details.targeting summary`),
		chromedp.WaitVisible(`#ios_url`),
		chromedp.SendKeys("#ios_url", "https://apps.apple.com/app/id123"))
	b.screenshot("link-app-destinations", chromedp.ScrollIntoView(`#ios_url`))
	b.run("submit",
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="get-app"]`))
	const iPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
	const android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.104 Mobile Safari/537.36"
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	follow := func(ua string) string {
		t.Helper()
		req, _ := http.NewRequest("HEAD", base+"/get-app", nil)
		req.Header.Set("User-Agent", ua)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("Location")
	}
	if got := follow(iPhone); got != "https://apps.apple.com/app/id123" {
		t.Fatalf("iPhone: %q", got)
	}
	if got := follow(android); got != "https://example.com/app" {
		t.Fatalf("Android before: %q", got)
	}

	b.run("edit",
		chromedp.Click(`#links tr[data-alias="get-app"] button.edit`),
		chromedp.WaitVisible(`#edit_ios_url`),
		chromedp.Evaluate(`document.querySelector('#edit_ios_url').select()`, nil),
		chromedp.SendKeys(`#edit_ios_url`, "\b"),
		chromedp.SendKeys(`#edit_android_url`, "https://play.google.com/store/apps/details?id=com.example"),
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(`.answer`))
	l := c.must("GET", "/v1/links?search=get-app", tok, "", 200)["data"].([]any)[0].(map[string]any)
	if l["ios_url"] != nil || l["android_url"] != "https://play.google.com/store/apps/details?id=com.example" {
		t.Fatalf("after the edit: %v", l)
	}
	if got := follow(android); got != "https://play.google.com/store/apps/details?id=com.example" {
		t.Fatalf("Android after: %q", got)
	}
}

// TestBrowserLinkCrawlable ticks "Let search engines index it" in the
// create form and finds the short URL allowed by /robots.txt.
func TestBrowserLinkCrawlable(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)
	b.run("create",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.SendKeys("#destination_url", "https://example.com/spring"),
		chromedp.SendKeys("#alias", "spring"),
		chromedp.Click(`#create-link-form details.more summary`),
		chromedp.WaitVisible(`#crawlable`),
		chromedp.Click(`#crawlable`),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="spring"]`))
	if l := c.must("GET", "/v1/links?search=spring", tok, "", 200)["data"].([]any)[0].(map[string]any); l["crawlable"] != true {
		t.Fatalf("stored: %v", l)
	}
	var robots string
	b.run("robots.txt",
		chromedp.Navigate(base+"/robots.txt"),
		chromedp.Text(`body`, &robots))
	if !strings.Contains(robots, "Allow: /spring$") || !strings.Contains(robots, "Disallow: /") {
		t.Fatalf("robots.txt: %q", robots)
	}
}
