package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserLinkNotes writes a note of two lines in the link editor,
// sees its first line in the list and the whole behind "more", finds the
// link by a word of the note's second line with the list's search, and
// changes the note in the edit form.
func TestBrowserLinkNotes(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/other","alias":"other"}`, 201)
	b.run("links page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`))
	b.run("create",
		chromedp.SendKeys("#destination_url", "https://example.com/spring"),
		chromedp.SendKeys("#alias", "flyer"),
		chromedp.SendKeys("#note", "Printed on the spring flyer (run of 5,000)\nAsk Dana before changing the destination"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="flyer"] details.link-note`))
	l := c.must("GET", "/v1/links?search=flyer", tok, "", 200)["data"].([]any)[0].(map[string]any)
	if got, want := l["note"], "Printed on the spring flyer (run of 5,000)\nAsk Dana before changing the destination"; got != want {
		t.Fatalf("stored note %q, want %q", got, want)
	}
	var summary, full string
	b.run("open the note",
		chromedp.Text(`#links tr[data-alias="flyer"] details.link-note summary`, &summary),
		chromedp.Click(`#links tr[data-alias="flyer"] details.link-note summary`),
		chromedp.WaitVisible(`#links tr[data-alias="flyer"] .note-full`),
		chromedp.Text(`#links tr[data-alias="flyer"] .note-full`, &full))
	if !strings.HasPrefix(summary, "Printed on the spring flyer") || strings.Contains(summary, "Dana") {
		t.Fatalf("the note's summary: %q", summary)
	}
	if !strings.Contains(full, "Ask Dana") {
		t.Fatalf("the whole note: %q", full)
	}
	b.screenshot("link-notes")

	b.run("search the note",
		chromedp.SendKeys("#search", "dana"),
		chromedp.Submit("#search"),
		chromedp.WaitNotPresent(`#links tr[data-alias="other"]`),
		chromedp.WaitVisible(`#links tr[data-alias="flyer"]`))

	b.run("edit",
		chromedp.Click(`#links tr[data-alias="flyer"] button.edit`),
		chromedp.WaitVisible(`#edit_note`),
		chromedp.Evaluate(`document.querySelector('#edit_note').select()`, nil), // as a person selects the text to type over it
		chromedp.SendKeys(`#edit_note`, "Reprinted"),
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(`.answer`))
	b.screenshot("link-notes-edit")
	l = c.must("GET", "/v1/links?search=flyer", tok, "", 200)["data"].([]any)[0].(map[string]any)
	if l["note"] != "Reprinted" {
		t.Fatalf("edited note %q", l["note"])
	}
}
