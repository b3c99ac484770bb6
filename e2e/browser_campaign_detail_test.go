package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserCampaignDetail opens one campaign's page from the Campaigns
// list: exactly its links (not a link outside it), the click on one of
// them in the totals, the chart and the top list, the export of its
// clicks, a change of its status with the server's answer shown, and its
// deletion from its page.
func TestBrowserCampaignDetail(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "clicks:\n  flush_interval: 10ms\n")
	camp := c.must("POST", "/v1/campaigns", tok, `{"name":"Autumn sale","utm_source":"newsletter"}`, 201)
	id := camp["id"].(string)
	in := map[string]string{}
	for _, a := range []string{"autumn-1", "autumn-2"} {
		l := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/`+a+`","alias":"`+a+`","campaign_id":"`+id+`"}`, 201)
		in[a] = l["id"].(string)
	}
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/outside","alias":"outside"}`, 201)

	// One real redirect from a browser's user agent, counted by the API.
	followAsBrowser(t, base+"/autumn-1")
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := c.must("GET", "/v1/analytics/campaigns/"+id+"?range=24h", tok, "", 200)["totals"].(map[string]any)["clicks"].(float64)
		if got == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API counts %v clicks of the campaign, want 1", got)
		}
		time.Sleep(10 * time.Millisecond)
	}

	b := newBrowser(t, base)
	signIn(b, base)
	b.run("open the campaign from the list",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/campaigns"]`),
		chromedp.WaitVisible(`#campaigns tr[data-campaign="`+id+`"] a.open`),
		chromedp.Click(`#campaigns tr[data-campaign="`+id+`"] a.open`),
		chromedp.WaitVisible(`#campaign-facts`),
		chromedp.WaitVisible(`#campaign-links tbody tr`),
		chromedp.WaitVisible(`#an-clicks`),
		chromedp.WaitVisible(`#an-chart canvas`),
		chromedp.WaitVisible(`#top-links tbody tr`))
	var loc, nav, title string
	b.run("its address and the navigation",
		chromedp.Evaluate(`location.pathname + location.search`, &loc),
		chromedp.AttributeValue(`nav[aria-label=Main] a[aria-current=page]`, "href", &nav, nil),
		chromedp.Title(&title))
	if loc != "/app/campaigns?campaign="+id || nav != "/app/campaigns" || title != "Autumn sale · Campaigns · linkbolt" {
		t.Fatalf("the campaign's page is at %q with %q current in the navigation, titled %q", loc, nav, title)
	}

	// Exactly its two links, each with a way to its analytics.
	var aliases []string
	var clicks, topLink, hrefs string
	b.run("its links",
		chromedp.Evaluate(`[...document.querySelectorAll('#campaign-links tbody tr')].map(r => r.dataset.alias).sort()`, &aliases),
		chromedp.Evaluate(`[...document.querySelectorAll('#campaign-links tbody tr a[aria-label^="Analytics of"]')].map(a => a.getAttribute('href')).sort().join(' ')`, &hrefs),
		chromedp.Text(`#an-clicks`, &clicks),
		chromedp.Text(`#top-links tbody tr`, &topLink))
	if strings.Join(aliases, ",") != "autumn-1,autumn-2" {
		t.Fatalf("the campaign's page lists %v", aliases)
	}
	want := []string{"/app/analytics?link=" + in["autumn-1"], "/app/analytics?link=" + in["autumn-2"]}
	if hrefs != strings.Join(want, " ") && hrefs != want[1]+" "+want[0] {
		t.Fatalf("analytics links: %q", hrefs)
	}
	if clicks != "1" || !strings.Contains(topLink, "autumn-1") {
		t.Fatalf("the campaign's analytics show %q clicks, top link %q", clicks, topLink)
	}
	var chart string
	b.run("chart", chromedp.AttributeValue(`#an-chart`, "aria-label", &chart, nil))
	if !strings.HasPrefix(chart, "Chart of 1 clicks") {
		t.Fatalf("chart: %q", chart)
	}

	// Another range, read again from the API (the last 24 hours come by
	// hour, the default 30 days by day).
	b.run("last 24 hours",
		chromedp.SetValue(`#an-range`, "24h"),
		chromedp.WaitVisible(`//p[@class="an-range" and contains(., "by hour")]`, chromedp.BySearch),
		chromedp.Text(`#an-clicks`, &clicks))
	if clicks != "1" {
		t.Fatalf("last 24 hours: %q clicks", clicks)
	}

	// The export holds the campaign's one click.
	var saved string
	b.run("export",
		chromedp.Click(`button[data-export="clicks.csv"]`),
		chromedp.WaitVisible(`#an-export ~ .msg.notice`),
		chromedp.Text(`#an-export ~ .msg.notice`, &saved))
	if !strings.Contains(saved, "linkbolt-"+id+"-clicks-24h.csv") || !strings.Contains(saved, "(1 row)") {
		t.Fatalf("export: %q", saved)
	}

	// Edit: the status, and the server's answer on the page.
	var notice, status string
	b.run("edit the status",
		chromedp.Click(`#campaign-facts button.edit`),
		chromedp.WaitVisible(`#edit-campaign-form`),
		chromedp.SetValue(`#edit_status`, "paused"),
		chromedp.Click(`#edit-campaign-form button[type=submit]`),
		chromedp.WaitNotPresent(`#edit-campaign-form`),
		chromedp.WaitVisible(`#campaign-status.paused`),
		chromedp.Text(`#campaign-status`, &status),
		chromedp.Text(`#campaign-facts .msg.notice`, &notice))
	if status != "paused" || !strings.Contains(notice, "The server answers: Autumn sale, paused, UTM source newsletter") {
		t.Fatalf("after the edit: status %q, notice %q", status, notice)
	}
	if got := c.must("GET", "/v1/campaigns/"+id, tok, "", 200); got["status"] != "paused" || got["utm_source"] != "newsletter" || got["name"] != "Autumn sale" {
		t.Fatalf("the campaign after the edit: %v", got)
	}
	b.screenshot("campaign-detail")

	// An empty name is refused at the field.
	b.run("refused edit",
		chromedp.Click(`#campaign-facts button.edit`),
		chromedp.WaitVisible(`#edit-campaign-form`),
		emptyInput(`#edit_name`),
		chromedp.Click(`#edit-campaign-form button[type=submit]`),
		chromedp.WaitVisible(`#edit_name-error`),
		chromedp.Click(`//form[@id="edit-campaign-form"]//button[text()="Cancel"]`, chromedp.BySearch),
		chromedp.WaitNotPresent(`#edit-campaign-form`))

	// Back to the list, by the page's link and by the browser's history.
	b.run("back to the list",
		chromedp.Click(`#all-campaigns`),
		chromedp.WaitVisible(`#campaigns tr[data-campaign="`+id+`"] .state.paused`),
		chromedp.Title(&title),
		chromedp.NavigateBack(),
		chromedp.WaitVisible(`#campaign-facts`))
	if title != "Campaigns · linkbolt" {
		t.Fatalf("the list's title: %q", title)
	}

	// A campaign that does not exist says so.
	var missing string
	b.run("unknown campaign",
		chromedp.Navigate(base+"/app/campaigns?campaign=cmp_unknown"),
		chromedp.WaitVisible(`.msg.error`),
		chromedp.Text(`.msg.error`, &missing))
	if missing == "" {
		t.Fatal("no message for an unknown campaign")
	}

	// Delete from its page, after a question that says its links leave it.
	var question, deleted string
	b.run("ask before deleting",
		chromedp.Navigate(base+"/app/campaigns?campaign="+id),
		chromedp.WaitVisible(`#campaign-facts button.danger`),
		chromedp.Click(`#campaign-facts button.danger`),
		chromedp.Text(`#campaign-facts .confirm span`, &question))
	if !strings.Contains(question, "2 links are taken out of it first") {
		t.Fatalf("delete question: %q", question)
	}
	b.run("delete",
		chromedp.Click(`#campaign-facts .confirm button.danger`),
		chromedp.WaitVisible(`.msg.notice`),
		chromedp.Text(`.msg.notice`, &deleted))
	if deleted != "Deleted the campaign Autumn sale; its 2 links keep working without its UTM values." {
		t.Fatalf("after the delete: %q", deleted)
	}
	c.must("GET", "/v1/campaigns/"+id, tok, "", 404)
	for _, lid := range in {
		if l := c.must("GET", "/v1/links/"+lid, tok, "", 200); l["campaign_id"] != nil && l["campaign_id"] != "" {
			t.Fatalf("a link kept the deleted campaign: %v", l)
		}
	}

	got := b.templates(t)
	for _, w := range []string{"GET /v1/campaigns/{id}", "PATCH /v1/campaigns/{id}", "DELETE /v1/campaigns/{id}", "GET /v1/links", "GET /v1/analytics/campaigns/{id}", "GET /v1/analytics/export"} {
		if !got[w] {
			t.Errorf("the campaign's page did not call %s", w)
		}
	}
}
