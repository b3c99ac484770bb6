package e2e

import (
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserTags colours and describes tags in the Workspace page's Tags
// section (a tag must be named; a tag of a link and
// a tag on no link yet), sees the coloured chips with their descriptions
// in the list of links, edits a tag, and clears one.
func TestBrowserTags(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/spring","alias":"spring-sale","tags":["spring","print"]}`, 201)
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/summer","alias":"summer","tags":["spring"]}`, 201)

	b := newBrowser(t, base)
	b.run("workspace page",
		withToken(base, "/app/settings", tok),
		chromedp.WaitVisible(`#tag-list tr[data-tag="spring"]`),
		chromedp.Click(`#tag-form button[type=submit]`),
		chromedp.WaitVisible(`#tag-name-error`))
	b.run("colour spring",
		chromedp.SendKeys("#tag-name", "spring"),
		setSelect("#tag-color", "green"),
		chromedp.SendKeys("#tag-description", "The spring campaign"),
		chromedp.Click(`#tag-form button[type=submit]`),
		chromedp.WaitVisible(`#tag-list tr[data-tag="spring"] a.tag-green`))
	b.run("a tag on no link",
		chromedp.SendKeys("#tag-name", "autumn"),
		setSelect("#tag-color", "brown"),
		chromedp.Click(`#tag-form button[type=submit]`),
		chromedp.WaitVisible(`#tag-list tr[data-tag="autumn"] a.tag-brown`))
	b.run("edit print",
		chromedp.Click(`#tag-list button[aria-label="Edit print"]`),
		chromedp.WaitVisible(`#tag-edit`),
		setSelect("#tag-color", "blue"),
		chromedp.SendKeys("#tag-description", "Flyers and posters"),
		chromedp.Click(`#tag-edit button[type=submit]`),
		chromedp.WaitVisible(`#tag-form`),
		chromedp.WaitVisible(`#tag-list tr[data-tag="print"] a.tag-blue`))
	b.screenshot("tags")
	tag := c.must("GET", "/v1/tags/"+url.PathEscape("print"), tok, "", 200)
	if tag["color"] != "blue" || tag["description"] != "Flyers and posters" || tag["links"] != float64(1) {
		t.Fatalf("print after the edit: %v", tag)
	}

	b.run("the links' chips",
		chromedp.Navigate(base+"/app/links"),
		chromedp.WaitVisible(`#links tr[data-alias="spring-sale"] button.tag-green`),
		chromedp.WaitVisible(`#links tr[data-alias="spring-sale"] button.tag-blue`))
	var title string
	var ok bool
	b.run("the description", chromedp.AttributeValue(`#links tr[data-alias="summer"] button.tag-green`, "title", &title, &ok))
	if title != "spring: The spring campaign" {
		t.Fatalf("the chip's title: %q", title)
	}
	b.screenshot("links-tag-colours")

	b.run("clear autumn",
		chromedp.Navigate(base+"/app/settings"),
		chromedp.WaitVisible(`#tag-list tr[data-tag="autumn"]`),
		chromedp.Evaluate(`window.confirm = () => true`, nil),
		chromedp.Click(`#tag-list button[aria-label="Clear autumn"]`),
		chromedp.WaitNotPresent(`#tag-list tr[data-tag="autumn"]`))
	if code, _, _ := c.call("GET", "/v1/tags/autumn", tok, ""); code != 404 {
		t.Fatalf("autumn after clearing: %d", code)
	}
}
