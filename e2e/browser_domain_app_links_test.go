package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserDomainAppLinks sets a custom domain's app files on the
// Domains page: text that is not JSON is refused at its field, JSON of
// the wrong kind with the API's message; valid files are saved.
func TestBrowserDomainAppLinks(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	id := c.must("POST", "/v1/domains", tok, `{"hostname":"go.example.com"}`, 201)["id"].(string)
	b := newBrowser(t, base)
	card := `li[data-domain="go.example.com"]`
	aasa, assets := "#go-example-com-aasa", "#go-example-com-assets"
	b.run("open",
		withToken(base, "/app/domains", tok),
		chromedp.WaitVisible(card),
		chromedp.Click(card+` button.edit-redirects`),
		chromedp.WaitVisible(aasa),
		chromedp.SendKeys(aasa, `{"applinks": `),
		chromedp.Click(card+` form.app-links button[type=submit]`),
		chromedp.WaitVisible(card+` form.app-links .field-error`))
	b.run("wrong kind",
		chromedp.Evaluate(`document.querySelector('`+aasa+`').value = ''`, nil),
		chromedp.SendKeys(aasa, `[1]`),
		chromedp.Click(card+` form.app-links button[type=submit]`),
		chromedp.WaitVisible(`//form[contains(@class, "app-links")]//small[contains(@class, "field-error") and contains(., "JSON object")]`, chromedp.BySearch))
	b.run("save",
		chromedp.Evaluate(`document.querySelector('`+aasa+`').value = ''`, nil),
		chromedp.SendKeys(aasa, `{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.app"],"components":[{"/":"/*"}]}]}}`),
		chromedp.SendKeys(assets, `[{"relation":["delegate_permission/common.handle_all_urls"],"target":{"namespace":"android_app","package_name":"com.example.app"}}]`))
	b.screenshot("domains-app-links")
	b.run("saved",
		chromedp.Click(card+` form.app-links button[type=submit]`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Saved")]`, chromedp.BySearch))
	d := c.must("GET", "/v1/domains/"+id, tok, "", 200)
	if a, ok := d["apple_app_site_association"].(map[string]any); !ok || a["applinks"] == nil {
		t.Fatalf("saved: %v", d)
	}
	if l, ok := d["android_asset_links"].([]any); !ok || len(l) != 1 || !strings.Contains(fmt.Sprint(l), "com.example.app") {
		t.Fatalf("saved: %v", d)
	}
	b.check()
}
