package e2e

import (
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
