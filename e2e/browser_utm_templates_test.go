package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserUTMTemplates keeps UTM templates on the Workspace page (a
// taken name is refused at its field, one is added, edited, deleted) and
// creates a link with one from the Links page: the link takes the
// template's values where its own fields are empty.
func TestBrowserUTMTemplates(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	c.must("POST", "/v1/utm-templates", tok, `{"name":"Ads","utm_source":"google","utm_medium":"cpc"}`, 201)

	b := newBrowser(t, base)
	b.run("workspace page",
		withToken(base, "/app/settings", tok),
		chromedp.WaitVisible(`#utm-template-list`),
		chromedp.SendKeys("#utm-tpl-name", "ads"),
		chromedp.SendKeys("#utm-tpl-utm_source", "x"),
		chromedp.Click(`#utm-template-form button[type=submit]`),
		chromedp.WaitVisible(`#utm-tpl-name-error`))
	b.run("add",
		emptied("#utm-tpl-name"), emptied("#utm-tpl-utm_source"),
		chromedp.SendKeys("#utm-tpl-name", "Newsletter"),
		chromedp.SendKeys("#utm-tpl-utm_source", "newsletter"),
		chromedp.SendKeys("#utm-tpl-utm_medium", "email"),
		chromedp.Click(`#utm-template-form button[type=submit]`),
		chromedp.Poll(`document.querySelectorAll('#utm-template-list tbody tr').length === 2`, nil))
	b.screenshot("utm-templates")
	b.run("edit",
		chromedp.Click(`#utm-template-list button[aria-label="Edit Newsletter"]`),
		chromedp.WaitVisible(`#utm-template-edit`),
		chromedp.SendKeys("#utm-tpl-utm_campaign", "weekly"),
		chromedp.Click(`#utm-template-edit button[type=submit]`),
		chromedp.WaitVisible(`#utm-template-form`),
		chromedp.Poll(`[...document.querySelectorAll('#utm-template-list td')].some(td => td.textContent === 'weekly')`, nil))
	tpls := c.must("GET", "/v1/utm-templates", tok, "", 200)["data"].([]any)
	news := tpls[1].(map[string]any)
	if news["name"] != "Newsletter" || news["utm_campaign"] != "weekly" {
		t.Fatalf("templates after the edit: %v", tpls)
	}

	// A link made with the template, its own medium kept.
	b.run("a link with the template",
		chromedp.Navigate(base+"/app/links"),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.SendKeys("#destination_url", "https://example.com/issue-42"),
		chromedp.Click(`#create-link-form details.more summary`),
		chromedp.WaitVisible(`#utm_template_id`),
		setSelect("#utm_template_id", news["id"].(string)),
		chromedp.SendKeys("#utm_medium", "social"),
		chromedp.WaitVisible(`//small[@id="utm_template_id-hint" and contains(., "utm_source=newsletter")]`, chromedp.BySearch))
	b.screenshot("links-utm-template")
	b.run("create",
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`//*[contains(@class, "notice") and starts-with(., "Created ")]`, chromedp.BySearch))
	links := c.must("GET", "/v1/links?search=issue-42", tok, "", 200)["data"].([]any)
	if len(links) != 1 {
		t.Fatalf("links: %v", links)
	}
	l := links[0].(map[string]any)
	if l["utm_source"] != "newsletter" || l["utm_medium"] != "social" || l["utm_campaign"] != "weekly" {
		t.Fatalf("the link took %v", l)
	}

	b.run("delete",
		chromedp.Navigate(base+"/app/settings"),
		chromedp.WaitVisible(`#utm-template-list`),
		chromedp.Evaluate(`window.confirm = () => true`, nil),
		chromedp.Click(`#utm-template-list button[aria-label="Delete Ads"]`),
		chromedp.Poll(`document.querySelectorAll('#utm-template-list tbody tr').length === 1`, nil))
	if got := c.must("GET", "/v1/utm-templates", tok, "", 200)["data"].([]any); len(got) != 1 || !strings.Contains(got[0].(map[string]any)["name"].(string), "Newsletter") {
		t.Fatalf("after the deletion: %v", got)
	}
	b.check()
}
