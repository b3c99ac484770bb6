package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestBrowserDomains adds a custom domain in the dashboard, copies its TXT
// record, fails to verify it (no DNS answers here) with the API's message,
// sets its redirects, marks it verified as the instance admin and deletes
// it.
func TestBrowserDomains(t *testing.T) {
	t.Parallel()
	// A resolver nobody answers at: the lookup fails at once.
	base, c, tok := startDashboard(t, "domains:\n  resolver: 127.0.0.1:9\n")

	b := newBrowser(t, base)
	signIn(b, base)
	b.run("domains page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/domains"]`),
		chromedp.WaitVisible(`#add-domain-form`),
		chromedp.WaitVisible(`.empty`))

	b.run("a URL is not a hostname",
		chromedp.SendKeys("#hostname", "https://go.example.com/x"),
		chromedp.Click(`#add-domain-form button[type=submit]`),
		chromedp.WaitVisible(`#hostname-error`))
	card := `#domains li[data-domain="go.example.com"]`
	b.run("add",
		emptyInput("#hostname"),
		chromedp.SendKeys("#hostname", "Go.Example.com"),
		chromedp.Click(`#add-domain-form button[type=submit]`),
		chromedp.WaitVisible(card),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Added go.example.com")]`, chromedp.BySearch))
	list := c.must("GET", "/v1/domains", tok, "", 200)["data"].([]any)
	if len(list) != 1 {
		t.Fatalf("%d domains after the add", len(list))
	}
	d := list[0].(map[string]any)
	id := d["id"].(string)
	ver := d["verification"].(map[string]any)

	// The record as the API gives it, each part copied.
	var name, value, copied string
	b.run("the TXT record",
		chromedp.Text(card+` .txt-name`, &name),
		chromedp.Text(card+` .txt-value`, &value))
	if name != ver["name"] || value != ver["value"] || name != "_linkbolt.go.example.com" {
		t.Fatalf("the page shows %q = %q, the API %v", name, value, ver)
	}
	b.run("copy the value",
		chromedp.Click(card+` .record dd:nth-of-type(3) button`),
		chromedp.WaitVisible(card+` .record dd:nth-of-type(3) .copied`),
		chromedp.Evaluate(`navigator.clipboard.readText()`, &copied, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if copied != value {
		t.Fatalf("copied %q, want %q", copied, value)
	}

	// Verify: the lookup fails here, and the page says what the API said.
	var msg string
	b.run("verify",
		chromedp.Click(card+` button.verify`),
		chromedp.WaitVisible(card+` .msg.error`),
		chromedp.Text(card+` .msg.error`, &msg))
	if msg == "" || !strings.Contains(strings.ToLower(msg), "lookup") && !strings.Contains(msg, "record") {
		t.Fatalf("verify message: %q", msg)
	}
	t.Logf("verify refused: %s", msg)
	if c.must("GET", "/v1/domains/"+id, tok, "", 200)["verified"] != false {
		t.Fatal("verified without a record")
	}
	b.screenshot("domains")

	// Redirects: a bad URL at its field, then both saved.
	root, notFound := "#go-example-com-root_redirect_url", "#go-example-com-not_found_url"
	b.run("bad redirect",
		chromedp.Click(card+` button.edit-redirects`),
		chromedp.WaitVisible(root),
		chromedp.SendKeys(root, "not a url"),
		chromedp.Click(card+` form.redirects button[type=submit]`),
		chromedp.WaitVisible(root+`-error`))
	b.run("save redirects",
		emptyInput(root),
		chromedp.SendKeys(root, "https://example.com/"),
		chromedp.SendKeys(notFound, "https://example.com/missing"),
		chromedp.Click(card+` form.redirects button[type=submit]`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Saved the redirects of go.example.com")]`, chromedp.BySearch))
	d = c.must("GET", "/v1/domains/"+id, tok, "", 200)
	if d["root_redirect_url"] != "https://example.com/" || d["not_found_url"] != "https://example.com/missing" {
		t.Fatalf("redirects after save: %v", d)
	}

	// The instance admin marks it verified without DNS.
	b.run("mark verified",
		chromedp.Click(card+` button.mark-verified`),
		chromedp.WaitVisible(card+` .state.verified`),
		chromedp.WaitNotPresent(card+` .txt`))
	if c.must("GET", "/v1/domains/"+id, tok, "", 200)["verified"] != true {
		t.Fatal("not verified after the admin marked it")
	}

	// A domain with a link is refused; the page shows the API's reason.
	l := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/on-go","alias":"on-go","domain":"go.example.com"}`, 201)
	var count, refused string
	b.run("the link counted",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.Click(`nav[aria-label=Main] a[href="/app/domains"]`),
		chromedp.WaitVisible(card+` .state.verified`),
		chromedp.Text(card+` > p.hint`, &count))
	if !strings.HasPrefix(count, "1 link ·") {
		t.Fatalf("the domain's line: %q", count)
	}
	b.run("delete refused",
		chromedp.Click(card+` > .actions button.danger`),
		chromedp.Click(card+` .confirm button.danger`),
		chromedp.WaitVisible(card+` .msg.error`),
		chromedp.Text(card+` .msg.error`, &refused))
	if !strings.Contains(refused, "1 link") {
		t.Fatalf("the refusal does not say how many links: %q", refused)
	}
	t.Logf("delete refused: %s", refused)
	c.must("GET", "/v1/domains/"+id, tok, "", 200)
	c.must("DELETE", "/v1/links/"+l["id"].(string), tok, "", 204)

	// Another member sees the domain but not the admin's button.
	inv := c.must("POST", "/v1/invitations", tok, `{"email":"sam@example.com","role":"read_write"}`, 201)
	_, invTok, _ := strings.Cut(inv["url"].(string), "#token=")
	samTok := c.must("POST", "/v1/invitations/accept", "", `{"token":"`+invTok+`","name":"Sam","password":"sam's long password"}`, 201)["token"].(string)
	b2 := newBrowser(t, base)
	b2.run("a member's domains page",
		withToken(base, "/app/domains", samTok),
		chromedp.WaitVisible(card+` .state.verified`),
		chromedp.WaitNotPresent(card+` button.mark-verified`))
	b2.templates(t)

	b.run("delete",
		chromedp.Reload(),
		chromedp.WaitVisible(card),
		chromedp.Click(card+` > .actions button.danger`),
		chromedp.Click(card+` .confirm button.danger`),
		chromedp.WaitVisible(`.empty`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Deleted go.example.com")]`, chromedp.BySearch))
	c.must("GET", "/v1/domains/"+id, tok, "", 404)

	got := b.templates(t)
	for _, w := range []string{"GET /v1/domains", "POST /v1/domains", "POST /v1/domains/{id}/verify", "PATCH /v1/domains/{id}", "DELETE /v1/domains/{id}"} {
		if !got[w] {
			t.Errorf("the domains journey did not call %s", w)
		}
	}
}
