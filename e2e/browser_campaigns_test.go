package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// signIn opens the dashboard in b and signs in with the test's admin.
func signIn(b *browser, base string) {
	b.t.Helper()
	b.run("sign in",
		chromedp.Navigate(base+"/app/"),
		chromedp.WaitVisible("#sign-in"),
		chromedp.SendKeys("#email", "admin@example.com"),
		chromedp.SendKeys("#password", "a long password"),
		chromedp.Click(`#sign-in button[type=submit]`),
		chromedp.WaitVisible(`nav[aria-label=Main]`))
}

// emptyInput empties an input as a user does, with the input event the
// page listens to.
func emptyInput(sel string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(e => { e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); })(document.querySelector(%q))`, sel), nil)
}

// TestBrowserCampaigns creates, lists, edits and deletes a campaign in
// the dashboard, its links counted and taken out of it on delete.
func TestBrowserCampaigns(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")

	b := newBrowser(t, base)
	signIn(b, base)
	b.run("campaigns page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/campaigns"]`),
		chromedp.WaitVisible(`#create-campaign-form`),
		chromedp.WaitVisible(`.empty`))

	// No name: the API's message at the field.
	b.run("create without a name",
		chromedp.Click(`#create-campaign-form button[type=submit]`),
		chromedp.WaitVisible(`#name-error`),
		chromedp.WaitVisible(`#create-campaign-form .msg.error`))
	b.run("create",
		chromedp.SendKeys("#name", "Spring sale"),
		chromedp.SendKeys("#utm_source", "newsletter"),
		chromedp.SendKeys("#utm_campaign", "spring-sale"),
		chromedp.Click(`#create-campaign-form button[type=submit]`),
		chromedp.WaitVisible(`#campaigns tbody tr`))
	list := c.must("GET", "/v1/campaigns", tok, "", 200)["data"].([]any)
	if len(list) != 1 {
		t.Fatalf("%d campaigns after the create", len(list))
	}
	camp := list[0].(map[string]any)
	id := camp["id"].(string)
	if camp["name"] != "Spring sale" || camp["status"] != "active" || camp["utm_source"] != "newsletter" || camp["utm_campaign"] != "spring-sale" || camp["utm_medium"] != nil {
		t.Fatalf("created campaign: %v", camp)
	}
	var curl string
	b.run("copy as curl",
		chromedp.Click(`#create-campaign-form details.curl summary`),
		chromedp.Text(`#create-campaign-form details.curl pre`, &curl))
	if !strings.Contains(curl, "$LINKBOLT_KEY") || !strings.Contains(curl, base+"/v1/campaigns") || strings.Contains(curl, tok) {
		t.Fatalf("copy as curl: %s", curl)
	}

	// Two links join it; the list counts them.
	row := `#campaigns tr[data-campaign="` + id + `"]`
	for _, a := range []string{"spring-1", "spring-2"} {
		c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/`+a+`","alias":"`+a+`","campaign_id":"`+id+`"}`, 201)
	}
	var links string
	b.run("links counted",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.Click(`nav[aria-label=Main] a[href="/app/campaigns"]`),
		chromedp.WaitVisible(row+` td.links`),
		chromedp.Text(row+` td.links`, &links))
	if links != "2 links" {
		t.Fatalf("links of the campaign: %q", links)
	}

	// Edit: an empty name is refused at the field; then paused with its
	// source cleared.
	b.run("edit",
		chromedp.Click(row+` button.edit`),
		chromedp.WaitVisible(`#edit-campaign-form`),
		emptyInput("#edit_name"),
		chromedp.Click(`#edit-campaign-form button[type=submit]`),
		chromedp.WaitVisible(`#edit_name-error`))
	b.run("save",
		clear("#edit_name"),
		chromedp.SendKeys("#edit_name", "Spring sale 2026"),
		chromedp.SetValue("#edit_status", "paused"),
		emptyInput("#edit_utm_source"),
		chromedp.SendKeys("#edit_utm_medium", "email"),
		chromedp.Click(`#edit-campaign-form button[type=submit]`),
		chromedp.WaitNotPresent(`#edit-campaign-form`),
		chromedp.WaitVisible(row+` .state.paused`))
	camp = c.must("GET", "/v1/campaigns/"+id, tok, "", 200)
	if camp["name"] != "Spring sale 2026" || camp["status"] != "paused" || camp["utm_source"] != nil || camp["utm_medium"] != "email" || camp["utm_campaign"] != "spring-sale" {
		t.Fatalf("edited campaign: %v", camp)
	}
	b.screenshot("campaigns")

	// Delete: the question says the links are taken out first; they are.
	var question string
	b.run("ask before deleting",
		chromedp.Click(row+` button.danger`),
		chromedp.Text(row+` .confirm span`, &question))
	if !strings.Contains(question, "2 links are taken out of it first") {
		t.Fatalf("delete question: %q", question)
	}
	b.run("delete",
		chromedp.Click(row+` .confirm button.danger`),
		chromedp.WaitVisible(`.empty`),
		chromedp.WaitVisible(`.msg.notice`))
	c.must("GET", "/v1/campaigns/"+id, tok, "", 404)
	for _, l := range c.must("GET", "/v1/links", tok, "", 200)["data"].([]any) {
		if cid := l.(map[string]any)["campaign_id"]; cid != nil && cid != "" {
			t.Fatalf("a link kept the deleted campaign: %v", l)
		}
	}

	got := b.templates(t)
	for _, w := range []string{"GET /v1/campaigns", "POST /v1/campaigns", "PATCH /v1/campaigns/{id}", "DELETE /v1/campaigns/{id}"} {
		if !got[w] {
			t.Errorf("the campaigns journey did not call %s", w)
		}
	}
}
