package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserBulkEdits ticks links on the Links page and archives them
// (they leave the default list), then deletes others, each in one request.
func TestBrowserBulkEdits(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	for _, a := range []string{"keep", "old-1", "old-2", "gone-1"} {
		c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/`+a+`","alias":"`+a+`"}`, 201)
	}
	b := newBrowser(t, base)
	b.run("select and archive",
		withToken(base, "/app/links", tok),
		chromedp.WaitVisible(`#links tbody tr`),
		chromedp.Click(`#links input[aria-label="Select old-1"]`),
		chromedp.Click(`#links input[aria-label="Select old-2"]`),
		chromedp.WaitVisible(`#bulk-bar`))
	b.screenshot("links-bulk")
	b.run("archived",
		chromedp.Click(`//div[@id="bulk-bar"]/button[.="Archive"]`, chromedp.BySearch),
		chromedp.Poll(`(document.querySelector('.msg.notice') || {textContent: ''}).textContent.startsWith('2 links archived')`, nil),
		chromedp.Poll(`document.querySelectorAll('#links tbody tr').length === 2`, nil))
	b.run("delete",
		chromedp.Click(`#links input[aria-label="Select gone-1"]`),
		chromedp.WaitVisible(`#bulk-bar`),
		chromedp.Click(`//div[@id="bulk-bar"]//button[.="Delete"]`, chromedp.BySearch),
		chromedp.Click(`//div[@id="bulk-bar"]//button[starts-with(., "Yes, delete")]`, chromedp.BySearch),
		chromedp.Poll(`(document.querySelector('.msg.notice') || {textContent: ''}).textContent.startsWith('1 link deleted')`, nil),
		chromedp.Poll(`document.querySelectorAll('#links tbody tr').length === 1`, nil))
	all := c.must("GET", "/v1/links?archived=all", tok, "", 200)["data"].([]any)
	if len(all) != 3 {
		t.Fatalf("links left: %v", all)
	}
	b.check()
}
