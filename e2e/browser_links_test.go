package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// rowAliases reads the aliases of the rows of the links table, in order.
func rowAliases(out *[]string) chromedp.Action {
	return chromedp.Evaluate(`[...document.querySelectorAll('#links tbody tr')].map(r => r.dataset.alias)`, out)
}

// chooseOption picks the option of value v in a select as a user does,
// with the change event the page listens to (chromedp.SetValue cannot set
// an empty value).
func chooseOption(sel, v string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(e => { e.value = %q; if (e.value !== %q) throw new Error('no option %s'); e.dispatchEvent(new Event('change', {bubbles: true})); })(document.querySelector(%q))`, v, v, v, sel), nil)
}

// TestBrowserLinks goes through the Links page: a link created with every
// field (UTM values, tags, a campaign made on the Campaigns page, redirect
// code 301) and stored as sent; the list filtered by tag and by campaign
// with the view in the address (Back and a shared address keep it);
// sorted by clicks after a redirect; edited with only the changed field
// sent and the server's answer shown; API errors at the field; deleted;
// a link on a verified custom domain and the domain filter.
func TestBrowserLinks(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "clicks:\n  flush_interval: 10ms\n")
	// An older link with another tag, outside any campaign.
	plain := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/plain","alias":"plain","tags":["other"]}`, 201)

	b := newBrowser(t, base)
	signIn(b, base)
	b.run("campaign",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/campaigns"]`),
		chromedp.WaitVisible(`#create-campaign-form`),
		chromedp.SendKeys("#name", "Spring sale"),
		chromedp.Click(`#create-campaign-form button[type=submit]`),
		chromedp.WaitVisible(`#campaigns tbody tr`))
	camps := c.must("GET", "/v1/campaigns", tok, "", 200)["data"].([]any)
	if len(camps) != 1 {
		t.Fatalf("%d campaigns", len(camps))
	}
	campID := camps[0].(map[string]any)["id"].(string)

	b.run("links page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.WaitVisible(`#links tr[data-alias="plain"]`),
		chromedp.WaitReady(`#campaign_id option[value="`+campID+`"]`, chromedp.ByQuery))

	// A bad destination: the API's message at the field.
	b.run("bad destination",
		chromedp.SendKeys("#destination_url", "not a url"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#destination_url-error`),
		chromedp.WaitVisible(`#create-link-form .msg.error`))
	var invalid string
	b.run("marked invalid", chromedp.AttributeValue(`#destination_url`, "aria-invalid", &invalid, nil))
	if invalid != "true" {
		t.Fatalf("aria-invalid of the destination: %q", invalid)
	}

	// Every field of a link, the secondary ones under "More options".
	b.run("create",
		clear("#destination_url"),
		chromedp.SendKeys("#destination_url", "https://example.com/spring"),
		chromedp.SendKeys("#alias", "spring-mail"),
		chromedp.SendKeys("#tags", "promo, spring"),
		chromedp.Click(`#create-link-form details.more summary`),
		chromedp.WaitVisible(`#utm_source`),
		chromedp.SendKeys("#utm_source", "newsletter"),
		chromedp.SendKeys("#utm_medium", "email"),
		chromedp.SendKeys("#utm_campaign", "spring-2026"),
		chromedp.SetValue("#campaign_id", campID),
		chromedp.SetValue("#redirect_code", "301"))
	var curl string
	b.run("copy as curl",
		chromedp.Click(`#create-link-form details.curl summary`),
		chromedp.Text(`#create-link-form details.curl pre`, &curl))
	for _, want := range []string{base + "/v1/links", "$LINKBOLT_KEY", `"redirect_code":301`, `"campaign_id":"` + campID + `"`, `"tags":["promo","spring"]`, `"utm_medium":"email"`} {
		if !strings.Contains(curl, want) {
			t.Fatalf("copy as curl lacks %s: %s", want, curl)
		}
	}
	if strings.Contains(curl, tok) {
		t.Fatalf("copy as curl shows the session token")
	}
	b.run("submit",
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="spring-mail"]`),
		chromedp.WaitVisible(`.msg.notice`))
	l := c.must("GET", "/v1/links?search=spring-mail", tok, "", 200)["data"].([]any)[0].(map[string]any)
	id := l["id"].(string)
	if l["destination_url"] != "https://example.com/spring" || fmt.Sprint(l["tags"]) != "[promo spring]" ||
		l["utm_source"] != "newsletter" || l["utm_medium"] != "email" || l["utm_campaign"] != "spring-2026" ||
		l["campaign_id"] != campID || l["redirect_code"] != float64(301) {
		t.Fatalf("stored link: %v", l)
	}
	var campaignCell string
	b.run("campaign shown", chromedp.Text(`#links tr[data-alias="spring-mail"] td.campaign`, &campaignCell))
	if campaignCell != "Spring sale" {
		t.Fatalf("campaign cell %q", campaignCell)
	}

	// Filters: by tag, then by campaign; each in the address.
	var rows []string
	var search string
	b.run("filter by tag",
		chromedp.SendKeys("#filter-tag", "promo"),
		chromedp.Click(`form.filters button[type=submit]`),
		chromedp.WaitVisible(`#links[data-query="tag=promo"]`),
		rowAliases(&rows),
		chromedp.Evaluate(`location.search`, &search))
	if strings.Join(rows, " ") != "spring-mail" || search != "?tag=promo" {
		t.Fatalf("tag promo: rows %v at %q", rows, search)
	}
	b.run("filter by campaign",
		clear("#filter-tag"),
		chromedp.SetValue("#filter-campaign", campID),
		chromedp.Click(`form.filters button[type=submit]`),
		chromedp.WaitVisible(`#links[data-query="campaign=`+campID+`"]`),
		rowAliases(&rows))
	if strings.Join(rows, " ") != "spring-mail" {
		t.Fatalf("campaign: rows %v", rows)
	}
	var tagValue string
	b.run("back",
		chromedp.Evaluate(`history.back()`, nil),
		chromedp.WaitVisible(`#links[data-query="tag=promo"]`),
		chromedp.Value(`#filter-tag`, &tagValue))
	if tagValue != "promo" {
		t.Fatalf("after Back the tag filter reads %q", tagValue)
	}
	// A shared address opens with its filter: the other tag, a tag chip.
	b.run("shared address",
		chromedp.Navigate(base+"/app/links?tag=other"),
		chromedp.WaitVisible(`#links[data-query="tag=other"]`),
		rowAliases(&rows),
		chromedp.Value(`#filter-tag`, &tagValue))
	if strings.Join(rows, " ") != "plain" || tagValue != "other" {
		t.Fatalf("tag other: rows %v, field %q", rows, tagValue)
	}
	// A filter the API refuses: its message, and no list of another view.
	var refused string
	b.run("unknown domain",
		chromedp.Navigate(base+"/app/links?domain=nowhere.example"),
		chromedp.WaitVisible(`section[aria-labelledby=links-list] .msg.error`),
		chromedp.Text(`section[aria-labelledby=links-list] .msg.error`, &refused),
		chromedp.WaitNotPresent(`#links`))
	if !strings.Contains(refused, "not a domain of this workspace") {
		t.Fatalf("refused filter: %q", refused)
	}
	b.run("clear filters",
		chromedp.Click(`#clear-filters`),
		chromedp.WaitVisible(`#links[data-query=""]`),
		rowAliases(&rows))
	if strings.Join(rows, " ") != "spring-mail plain" {
		t.Fatalf("newest first: %v", rows)
	}
	b.run("tag chip",
		chromedp.Click(`#links tr[data-alias="spring-mail"] button.tag`),
		chromedp.WaitVisible(`#links[data-query="tag=promo"]`))

	// Sort by clicks: the older link, followed twice, comes first.
	for range 2 {
		followAsBrowser(t, base+"/plain")
	}
	deadline := time.Now().Add(20 * time.Second)
	for c.must("GET", "/v1/links/"+plain["id"].(string), tok, "", 200)["clicks"] != float64(2) {
		if time.Now().After(deadline) {
			t.Fatalf("the API does not count the two clicks")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var clicks string
	b.run("sort by clicks",
		chromedp.Click(`#clear-filters`),
		chromedp.WaitVisible(`#links[data-query=""]`),
		chromedp.SetValue("#sort", "clicks"),
		chromedp.Click(`form.filters button[type=submit]`),
		chromedp.WaitVisible(`#links[data-query="sort=clicks"]`),
		rowAliases(&rows),
		chromedp.Text(`#links tr[data-alias="plain"] td.clicks`, &clicks))
	if strings.Join(rows, " ") != "plain spring-mail" || clicks != "2" {
		t.Fatalf("sorted by clicks: %v, plain has %q clicks", rows, clicks)
	}
	b.screenshot("links")
	b.darkScreenshot("links")

	// Edit: a bad destination at the field, then a new one; only it is sent.
	row := `#links tr[data-alias="spring-mail"]`
	// The form opens with the focus in its first field.
	b.run("edit",
		chromedp.Click(row+` button.edit`),
		chromedp.WaitVisible(`#edit-link-form`),
		chromedp.Poll(`document.activeElement.id === 'edit_destination_url'`, nil))
	b.run("bad edit",
		clear("#edit_destination_url"),
		chromedp.SendKeys("#edit_destination_url", "javascript:alert(1)"),
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(`#edit_destination_url-error`))
	b.run("edit curl",
		clear("#edit_destination_url"),
		chromedp.SendKeys("#edit_destination_url", "https://example.com/summer"),
		chromedp.Click(`#edit-link-form details.curl summary`),
		chromedp.Text(`#edit-link-form details.curl pre`, &curl))
	if !strings.Contains(curl, "-X PATCH '"+base+"/v1/links/"+id+"'") || !strings.Contains(curl, `-d '{"destination_url":"https://example.com/summer"}'`) {
		t.Fatalf("edit copy as curl: %s", curl)
	}
	var answered string
	b.run("save",
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(`.link-answer .answer-destination`),
		chromedp.Text(`.link-answer .answer-destination`, &answered),
		chromedp.WaitVisible(row+` td.dest[title="https://example.com/summer"]`))
	if answered != "https://example.com/summer" {
		t.Fatalf("the answer shows %q", answered)
	}
	l = c.must("GET", "/v1/links/"+id, tok, "", 200)
	if l["destination_url"] != "https://example.com/summer" || l["utm_source"] != "newsletter" || l["campaign_id"] != campID ||
		l["redirect_code"] != float64(301) || fmt.Sprint(l["tags"]) != "[promo spring]" {
		t.Fatalf("edited link: %v", l)
	}
	b.screenshot("links-edit")

	// Taken out of its campaign and back to 302 from the edit form.
	b.run("edit more",
		chooseOption("#edit_campaign_id", ""),
		chromedp.SetValue("#edit_redirect_code", "302"),
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(row+` td.code`),
		chromedp.WaitVisible(`//tr[@data-alias="spring-mail"]/td[contains(@class,"code") and text()="302"]`, chromedp.BySearch))
	l = c.must("GET", "/v1/links/"+id, tok, "", 200)
	if l["campaign_id"] != nil || l["redirect_code"] != float64(302) || l["destination_url"] != "https://example.com/summer" {
		t.Fatalf("link after the second edit: %v", l)
	}

	// Closing the form takes the focus back to the row's Edit button.
	b.run("close",
		chromedp.Click(`//form[@id="edit-link-form"]//button[text()="Close"]`, chromedp.BySearch),
		chromedp.WaitNotPresent(`#edit-link-form`),
		chromedp.Poll(`document.activeElement.matches('#links tr[data-alias="spring-mail"] button.edit')`, nil))

	b.run("delete",
		chromedp.Click(row+` button.danger`),
		chromedp.Click(row+` .confirm button.danger`),
		chromedp.WaitNotPresent(row),
		chromedp.WaitVisible(`.msg.notice`))
	c.must("GET", "/v1/links/"+id, tok, "", 404)

	// A verified custom domain: a choice when creating, and a filter that
	// tells its links from the primary host's.
	dom := c.must("POST", "/v1/domains", tok, `{"hostname":"go.example.com"}`, 201)["id"].(string)
	c.must("PATCH", "/v1/domains/"+dom, tok, `{"verified":true}`, 200)
	b.run("domain choices",
		chromedp.Navigate(base+"/app/links"),
		chromedp.WaitReady(`#domain option[value="go.example.com"]`, chromedp.ByQuery),
		chromedp.WaitReady(`#filter-domain option[value="go.example.com"]`, chromedp.ByQuery),
		chromedp.SendKeys("#destination_url", "https://example.com/far"),
		chromedp.SendKeys("#alias", "far"),
		chromedp.SetValue("#domain", "go.example.com"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="far"]`))
	if d := c.must("GET", "/v1/links?search=far", tok, "", 200)["data"].([]any)[0].(map[string]any)["domain"]; d != "go.example.com" {
		t.Fatalf("the link's domain: %v", d)
	}
	b.run("filter by domain",
		chromedp.SetValue("#filter-domain", "go.example.com"),
		chromedp.Click(`form.filters button[type=submit]`),
		chromedp.WaitVisible(`#links[data-query="domain=go.example.com"]`),
		rowAliases(&rows))
	if strings.Join(rows, " ") != "far" {
		t.Fatalf("domain filter: %v", rows)
	}
	b.run("primary host",
		chooseOption("#filter-domain", ""),
		chromedp.Click(`form.filters button[type=submit]`),
		chromedp.WaitVisible(`#links[data-query="domain="]`),
		rowAliases(&rows))
	if strings.Join(rows, " ") != "plain" {
		t.Fatalf("primary host filter: %v", rows)
	}

	got := b.templates(t)
	for _, w := range []string{"GET /v1/links", "POST /v1/links", "PATCH /v1/links/{id}", "DELETE /v1/links/{id}", "GET /v1/campaigns", "GET /v1/domains"} {
		if !got[w] {
			t.Errorf("the links journey did not call %s", w)
		}
	}
}
