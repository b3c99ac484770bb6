package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserKeyResources creates on the API keys page a key limited to
// links and analytics, sees the limit in the list, and the key is refused
// elsewhere (403) while it makes links.
func TestBrowserKeyResources(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	var token, row string
	b.run("create a limited key",
		withToken(base, "/app/keys", tok),
		chromedp.WaitVisible(`#create-key-form`),
		chromedp.SendKeys("#name", "reporting"),
		chromedp.Click(`#key-limited`),
		chromedp.WaitVisible(`#key-resource-list`),
		chromedp.Click(`#key-resource-list input[value=links]`),
		chromedp.Click(`#key-resource-list input[value=analytics]`))
	b.screenshot("keys-resources")
	b.run("created",
		chromedp.Click(`#create-key-form button[type=submit]`),
		chromedp.WaitVisible(`//code[starts-with(., "lb_live_")]`, chromedp.BySearch),
		chromedp.Text(`//code[starts-with(., "lb_live_")]`, &token, chromedp.BySearch),
		chromedp.WaitVisible(`#keys .key-limited`),
		chromedp.Text(`#keys .key-limited`, &row))
	if row != "only Links, Analytics" && row != "only Analytics, Links" {
		t.Fatalf("the list says %q", row)
	}
	token = strings.TrimSpace(token)
	c.must("POST", "/v1/links", token, `{"destination_url":"https://example.com/limited"}`, 201)
	c.must("GET", "/v1/webhooks", token, "", 403)
	if got := c.must("GET", "/v1/keys", tok, "", 200)["data"].([]any)[0].(map[string]any)["resources"]; fmt.Sprint(got) != "[analytics links]" {
		t.Fatalf("the key's resources: %v", got)
	}
	b.check()
}
