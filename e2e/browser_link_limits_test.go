package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// setInput sets an input's value as typing does, with the input event the
// page listens to (a datetime-local input takes no keys portably).
func setInput(sel, v string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(e => { e.value = %q; e.dispatchEvent(new Event('input', {bubbles: true})); })(document.querySelector(%q))`, v, sel), nil)
}

// TestBrowserLinkLimits creates a link with an expiry, a click limit and a
// title through the Links page's form and finds them in the API; then
// archives it in the edit form and finds it under the archived filter only.
func TestBrowserLinkLimits(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)
	var wantExpiry string
	b.run("links page",
		chromedp.Navigate(base+"/app/links"),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.Evaluate(`new Date('2030-01-02T03:04').toISOString().replace('.000Z', 'Z')`, &wantExpiry))
	b.run("create with limits",
		chromedp.SendKeys("#destination_url", "https://example.com/limited"),
		chromedp.SendKeys("#alias", "limited"),
		chromedp.Click(`#limits summary`),
		chromedp.WaitVisible(`#max_clicks`),
		setInput("#expires_at", "2030-01-02T03:04"),
		chromedp.SendKeys("#max_clicks", "5"),
		chromedp.SendKeys("#title", "Spring offer"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="limited"]`))

	links := c.must("GET", "/v1/links", tok, "", 200)["data"].([]any)
	var got map[string]any
	for _, l := range links {
		if m := l.(map[string]any); m["alias"] == "limited" {
			got = m
		}
	}
	if got == nil {
		t.Fatalf("no link limited in %v", links)
	}
	if got["max_clicks"] != float64(5) || got["title"] != "Spring offer" || got["expires_at"] != wantExpiry || got["archived"] != false {
		t.Fatalf("link as stored: max_clicks %v title %v expires_at %v (want %s) archived %v",
			got["max_clicks"], got["title"], got["expires_at"], wantExpiry, got["archived"])
	}

	// A click limit of 0: the API's message at the field.
	b.run("bad click limit",
		chromedp.SendKeys("#destination_url", "https://example.com/zero"),
		chromedp.Click(`#limits summary`),
		chromedp.WaitVisible(`#max_clicks`),
		chromedp.SendKeys("#max_clicks", "0"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#max_clicks-error`))
}

// TestBrowserBlocklist adds a blocklist entry on the Admin page, sees a
// link to it refused through the API, and removes it again.
func TestBrowserBlocklist(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)
	b.run("admin page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/admin"]`),
		chromedp.WaitVisible(`#blocklist-form`))
	b.run("add an entry",
		chromedp.SendKeys("#blocklist-entry", "https://Phish.Example/"),
		chromedp.Click(`#blocklist-form button[type=submit]`),
		chromedp.WaitVisible(`#blocklist tbody tr`))
	var entries []string
	b.run("entries", chromedp.Evaluate(`[...document.querySelectorAll('#blocklist tbody td.code')].map(td => td.textContent)`, &entries))
	if len(entries) != 1 || entries[0] != "phish.example" {
		t.Fatalf("entries shown: %v", entries)
	}
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://phish.example/login"}`, 422)
	b.run("remove it",
		chromedp.Click(`#blocklist tbody button.danger`),
		chromedp.Click(`#blocklist tbody .confirm button.danger`),
		chromedp.WaitVisible(`#blocklist-title ~ p.empty`))
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://phish.example/login"}`, 201)
}
