package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserKeyDetails opens a key's details on the API keys page (read
// fresh with GET /v1/keys/{id}), where the owner keeps the key working
// when its creator is disabled; a read_write member trying the same sees
// the API's 403, and the key is unchanged.
func TestBrowserKeyDetails(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	k := c.must("POST", "/v1/keys", tok, `{"name":"deploy","scope":"read_write"}`, 201)
	id := k["id"].(string)
	row := `#keys tr[data-key="` + id + `"]`

	b := newBrowser(t, base)
	signIn(b, base)
	var shownID, creator string
	b.run("open the details",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/keys"]`),
		chromedp.WaitVisible(row+` button.details`),
		chromedp.Click(row+` button.details`),
		chromedp.WaitVisible(`#details-`+id+` .key-id`),
		chromedp.Text(`#details-`+id+` .key-id`, &shownID),
		chromedp.Text(`#details-`+id+` .creator-state`, &creator))
	if shownID != id || creator != "is active" {
		t.Fatalf("the details show key %q, its creator %q; the key is %s", shownID, creator, id)
	}

	// The owner keeps the key; the curl shows the request.
	var curl string
	b.run("keep the key",
		chromedp.Click(`#keep-input-`+id),
		chromedp.Click(`#keep-`+id+` details.curl summary`),
		chromedp.Text(`#keep-`+id+` details.curl code`, &curl),
		chromedp.Click(`#keep-`+id+` button[type=submit]`),
		chromedp.WaitVisible(`#keep-`+id+` .msg.notice`))
	if !strings.Contains(curl, "-X PATCH") || !strings.Contains(curl, "/v1/keys/"+id) || !strings.Contains(curl, `{"keep_when_creator_disabled":true}`) || strings.Contains(curl, tok) {
		t.Fatalf("the curl: %s", curl)
	}
	if got := c.must("GET", "/v1/keys/"+id, tok, "", 200)["keep_when_creator_disabled"]; got != true {
		t.Fatalf("keep_when_creator_disabled after the owner saved: %v", got)
	}
	b.screenshot("key-details")

	// Sam, read_write, is no owner: the API refuses and the page says so.
	inv := c.must("POST", "/v1/invitations", tok, `{"email":"sam@example.com","role":"read_write"}`, 201)
	sam := c.must("POST", "/v1/invitations/accept", "", fmt.Sprintf(`{"token":%q,"name":"Sam","password":"sam's long password"}`, inv["token"]), 201)["token"].(string)
	b2 := newBrowser(t, base)
	var msg string
	b2.run("sam's attempt",
		withToken(base, "/app/keys", sam),
		chromedp.WaitVisible(row+` button.details`),
		chromedp.Click(row+` button.details`),
		chromedp.WaitVisible(`#keep-input-`+id),
		chromedp.WaitVisible(`//form[@id="keep-`+id+`"]//p[contains(., "Only an owner")]`, chromedp.BySearch),
		chromedp.Click(`#keep-input-`+id),
		chromedp.Click(`#keep-`+id+` button[type=submit]`),
		chromedp.WaitVisible(`#keep-`+id+` .msg.error`),
		chromedp.Text(`#keep-`+id+` .msg.error`, &msg))
	status, _, _ := c.call("PATCH", "/v1/keys/"+id, sam, `{"keep_when_creator_disabled":false}`)
	if status != 403 || msg == "" {
		t.Fatalf("sam's change: the API answers %d, the page says %q", status, msg)
	}
	t.Logf("sam is refused: %s", msg)
	if got := c.must("GET", "/v1/keys/"+id, tok, "", 200)["keep_when_creator_disabled"]; got != true {
		t.Fatalf("keep_when_creator_disabled after sam's refused change: %v", got)
	}
}

// TestBrowserFreshReads changes a webhook, a domain and a saved QR design
// through the API after the dashboard listed them (as another tab or a
// script would): editing the webhook, editing the domain's redirects and
// applying the design each read the server's current state first. A
// design's thumbnail is its own image.
func TestBrowserFreshReads(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "webhooks:\n  allow_private: true\n")
	h := c.must("POST", "/v1/webhooks", tok, `{"url":"https://hooks.example.com/old","events":["link.created"]}`, 201)
	hook := `#webhooks li[data-webhook="` + h["id"].(string) + `"]`
	d := c.must("POST", "/v1/domains", tok, `{"hostname":"go.example.com"}`, 201)
	card := `li[data-domain="go.example.com"]`
	l := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/spring","alias":"spring"}`, 201)
	q := c.must("POST", "/v1/qr-codes", tok, fmt.Sprintf(`{"link_id":%q,"name":"Poster","options":{"size":256}}`, l["id"]), 201)
	design := `#qr-designs li[data-design="` + q["id"].(string) + `"]`

	b := newBrowser(t, base)
	signIn(b, base)

	// The webhook.
	b.run("webhooks listed",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/webhooks"]`),
		chromedp.WaitVisible(hook+` button.edit`))
	c.must("PATCH", "/v1/webhooks/"+h["id"].(string), tok, `{"url":"https://hooks.example.com/new","description":"changed elsewhere"}`, 200)
	var url, desc string
	b.run("edit reads it",
		chromedp.Click(hook+` button.edit`),
		chromedp.WaitVisible(`#edit-webhook-form`),
		chromedp.Value(`#edit_url`, &url),
		chromedp.Value(`#edit_description`, &desc))
	if url != "https://hooks.example.com/new" || desc != "changed elsewhere" {
		t.Fatalf("the edit form holds %q, %q; the server %v", url, desc, c.must("GET", "/v1/webhooks/"+h["id"].(string), tok, "", 200))
	}

	// The domain.
	b.run("domains listed",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/domains"]`),
		chromedp.WaitVisible(card+` button.edit-redirects`))
	c.must("PATCH", "/v1/domains/"+d["id"].(string), tok, `{"root_redirect_url":"https://example.com/home"}`, 200)
	var root string
	b.run("edit the redirects",
		chromedp.Click(card+` button.edit-redirects`),
		chromedp.WaitVisible(`#go-example-com-root_redirect_url`),
		chromedp.Value(`#go-example-com-root_redirect_url`, &root))
	if root != "https://example.com/home" {
		t.Fatalf("the redirects form holds %q", root)
	}
	b.screenshot("domain-redirects")
	b.run("save them",
		chromedp.SendKeys(`#go-example-com-not_found_url`, "https://example.com/missing"),
		chromedp.Click(card+` form.redirects button[type=submit]`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Saved the redirects of go.example.com")]`, chromedp.BySearch),
		chromedp.WaitVisible(`//li[@data-domain="go.example.com"]//dd[@class="not-found-now" and contains(., "https://example.com/missing")]`, chromedp.BySearch))
	if got := c.must("GET", "/v1/domains/"+d["id"].(string), tok, "", 200); got["root_redirect_url"] != "https://example.com/home" || got["not_found_url"] != "https://example.com/missing" {
		t.Fatalf("the domain after the save: %v", got)
	}

	// The design: its thumbnail, then Apply after a change elsewhere.
	var width int
	b.run("the design's thumbnail",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#links tr[data-alias="spring"] button.qr-open`),
		chromedp.Click(`#links tr[data-alias="spring"] button.qr-open`),
		chromedp.WaitVisible(design+` .qr-thumb img`),
		chromedp.Poll(`document.querySelector('`+design+` .qr-thumb img').naturalWidth`, &width))
	if width != 256 {
		t.Fatalf("the thumbnail is %d px wide, the design 256", width)
	}
	var src string
	b.run("its blob", chromedp.AttributeValue(design+` .qr-thumb img`, "src", &src, nil))
	if !strings.HasPrefix(src, "blob:") {
		t.Fatalf("the thumbnail's src: %q", src)
	}
	b.screenshot("qr-designs")
	c.must("PATCH", "/v1/qr-codes/"+q["id"].(string), tok, `{"options":{"size":320,"level":"Q"}}`, 200)
	var size, level string
	b.run("apply reads it",
		chromedp.Click(design+` button.qr-apply`),
		chromedp.WaitVisible(design+` .qr-applied`),
		chromedp.Value(`#qr-size`, &size),
		chromedp.Value(`#qr-level`, &level),
		// The list follows, and the thumbnail is drawn again.
		chromedp.Poll(`document.querySelector('`+design+` .qr-thumb img') && document.querySelector('`+design+` .qr-thumb img').naturalWidth`, &width))
	if size != "320" || level != "Q" {
		t.Fatalf("after apply: size %q, level %q; the design was changed to 320, Q", size, level)
	}
}

// TestBrowserYourWorkspaces reads the Workspace page's workspace from the
// server (GET /v1/workspaces/{id}) and lists the person's workspaces
// with their role (GET /v1/workspaces); Switch opens another one's
// settings.
func TestBrowserYourWorkspaces(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	first := c.must("GET", "/v1/me", tok, "", 200)["workspaces"].([]any)[0].(map[string]any)
	c.must("POST", "/v1/users", tok, `{"email":"olga@example.com","name":"Olga","password":"olga's long password"}`, 201)
	olga := c.must("POST", "/v1/auth/login", "", `{"email":"olga@example.com","password":"olga's long password"}`, 200)["token"].(string)
	shop := c.must("POST", "/v1/workspaces", olga, `{"name":"Olga's shop"}`, 201)["id"].(string)
	// Olga invites the admin to read her shop.
	st, inv, _ := c.call("POST", "/v1/invitations?workspace_id="+shop, olga, `{"email":"admin@example.com","role":"read"}`)
	if st != 201 {
		t.Fatalf("olga's invitation: %d %v", st, inv)
	}
	c.must("POST", "/v1/invitations/accept", tok, fmt.Sprintf(`{"token":%q}`, inv["token"]), 200)

	b := newBrowser(t, base)
	signIn(b, base)
	var dates string
	b.run("workspace page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/settings"]`),
		chromedp.WaitVisible(`#ws-dates`),
		chromedp.Text(`#ws-dates`, &dates),
		chromedp.WaitVisible(`#your-workspaces tr[data-workspace="`+shop+`"] button.switch`))
	if !strings.Contains(dates, "Plan Free") || !strings.Contains(dates, "created") {
		t.Fatalf("the workspace's facts: %q", dates)
	}
	for _, w := range c.must("GET", "/v1/workspaces", tok, "", 200)["data"].([]any) {
		w := w.(map[string]any)
		var role string
		b.run("role in "+w["name"].(string), chromedp.Text(`#your-workspaces tr[data-workspace="`+w["id"].(string)+`"] .ws-role`, &role))
		if role != strings.ReplaceAll(w["role"].(string), "_", " ") {
			t.Fatalf("the page shows role %q in %v", role, w)
		}
	}

	// Switch: the page is now the shop's, and so is the switcher.
	var chosen, heading string
	b.run("switch",
		chromedp.Click(`#your-workspaces tr[data-workspace="`+shop+`"] button.switch`),
		chromedp.WaitVisible(`//p[contains(., "Settings of") and strong[text()="Olga's shop"]]`, chromedp.BySearch),
		chromedp.WaitVisible(`#your-workspaces tr[data-workspace="`+first["id"].(string)+`"] button.switch`),
		chromedp.Value(`#workspace`, &chosen),
		chromedp.Text(`#ws-dates`, &heading))
	if chosen != shop {
		t.Fatalf("after Switch the switcher shows %q, want the shop %q", chosen, shop)
	}
	if !strings.Contains(heading, "Plan Free") {
		t.Fatalf("the shop's facts: %q", heading)
	}
}
