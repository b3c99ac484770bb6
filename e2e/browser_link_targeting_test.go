package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserLinkTargeting creates a link with a password, a rule and a
// social card through the Links page's form, checks them through the API
// and the redirect, and edits the rule.
func TestBrowserLinkTargeting(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)
	b.run("links page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`))

	// A rule without a condition: the API's refusal at the rule.
	b.run("bad rule",
		chromedp.SendKeys("#destination_url", "https://example.com/home"),
		chromedp.SendKeys("#alias", "guarded"),
		chromedp.Click(`#create-link-form details.targeting summary`),
		chromedp.WaitVisible(`#password`),
		chromedp.SendKeys("#password", "open-sesame"),
		chromedp.Click(`#add_rule`),
		chromedp.WaitVisible(`#rule_0_then`),
		chromedp.SendKeys("#rule_0_then", "https://example.com/de"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#rule_0_if-error`))

	b.run("create",
		chromedp.SendKeys("#rule_0_if", "language=de"),
		chromedp.SendKeys("#og_title", "Guarded <page>"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="guarded"]`))
	l := c.must("GET", "/v1/links?search=guarded", tok, "", 200)["data"].([]any)[0].(map[string]any)
	rules := l["rules"].([]any)
	if l["has_password"] != true || len(rules) != 1 || l["og"].(map[string]any)["title"] != "Guarded <page>" {
		t.Fatalf("stored link: %v", l)
	}
	if r := rules[0].(map[string]any); r["then"] != "https://example.com/de" || r["if"].(map[string]any)["language"] != "de" {
		t.Fatalf("stored rule: %v", r)
	}

	// The redirect asks for the password, and follows the rule with it.
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(base + "/guarded")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Location") != "" {
		t.Fatalf("without the password: %d %v", resp.StatusCode, resp.Header)
	}
	req, _ := http.NewRequest("GET", base+"/guarded", nil)
	req.Header.Set("X-Link-Password", "open-sesame")
	req.Header.Set("Accept-Language", "de-DE,de;q=0.9")
	if resp, err = hc.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://example.com/de" {
		t.Fatalf("with the password: %d %v", resp.StatusCode, resp.Header)
	}

	// The edit form shows the rule and sends only what changed.
	b.run("edit",
		chromedp.Click(`#links tr[data-alias="guarded"] button.edit`),
		chromedp.WaitVisible(`#edit-link-form`),
		// open: the link has controls
		chromedp.WaitVisible(`#edit_rule_0_if`))
	var cond string
	b.run("rule shown", chromedp.Value(`#edit_rule_0_if`, &cond))
	if cond != "language=de" {
		t.Fatalf("rule shown as %q", cond)
	}
	b.run("change rule",
		clear("#edit_rule_0_if"),
		chromedp.SendKeys("#edit_rule_0_if", "country=DE, query.src=qr"),
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(`.answer`))
	l = c.must("GET", "/v1/links/"+l["id"].(string), tok, "", 200)
	cnd := l["rules"].([]any)[0].(map[string]any)["if"].(map[string]any)
	if cnd["country"] != "DE" || cnd["query"].(map[string]any)["name"] != "src" || cnd["language"] != nil || l["has_password"] != true {
		t.Fatalf("edited link: %v", l)
	}
}

// TestBrowserLinkRuleConditions writes a rule on the visitor's address and
// the time through the Links page's form: a bad range is refused at the
// rule, the rule is stored as networks and UTC instants, the redirect
// follows it (this test's client is on 127.0.0.1), and the edit form shows
// it back.
func TestBrowserLinkRuleConditions(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)
	b.run("links page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`))
	b.run("bad range",
		chromedp.SendKeys("#destination_url", "https://example.com/home"),
		chromedp.SendKeys("#alias", "office"),
		chromedp.Click(`#create-link-form details.targeting summary`),
		chromedp.Click(`#add_rule`),
		chromedp.WaitVisible(`#rule_0_then`),
		chromedp.SendKeys("#rule_0_if", "ip=127.0.0.9/8 office, after=2020-01-01T01:00:00+01:00, before=2100-01-01T00:00:00Z"),
		chromedp.SendKeys("#rule_0_then", "https://example.com/office"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#rule_0_if-error`))
	var msg string
	b.run("error text", chromedp.Text(`#rule_0_if-error`, &msg))
	if !strings.Contains(msg, `"office" is not an IP address or a CIDR range`) {
		t.Fatalf("error shown: %q", msg)
	}
	b.screenshot("link-rule-conditions")
	b.run("create",
		clear("#rule_0_if"),
		chromedp.SendKeys("#rule_0_if", "ip=127.0.0.9/8 2001:db8::/32, after=2020-01-01T01:00:00+01:00, before=2100-01-01T00:00:00Z"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="office"]`))
	l := c.must("GET", "/v1/links?search=office", tok, "", 200)["data"].([]any)[0].(map[string]any)
	cond := l["rules"].([]any)[0].(map[string]any)["if"].(map[string]any)
	if ip := cond["ip"].([]any); len(ip) != 2 || ip[0] != "127.0.0.0/8" || ip[1] != "2001:db8::/32" ||
		cond["after"] != "2020-01-01T00:00:00Z" || cond["before"] != "2100-01-01T00:00:00Z" {
		t.Fatalf("stored rule: %v", cond)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(base + "/office")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://example.com/office" {
		t.Fatalf("from 127.0.0.1: %d %v", resp.StatusCode, resp.Header)
	}

	// The edit form shows the rule as stored; narrowing the range to
	// another network sends this client to the destination.
	b.run("edit",
		chromedp.Click(`#links tr[data-alias="office"] button.edit`),
		chromedp.WaitVisible(`#edit_rule_0_if`))
	var shown string
	b.run("rule shown", chromedp.Value(`#edit_rule_0_if`, &shown))
	if want := "ip=127.0.0.0/8 2001:db8::/32, after=2020-01-01T00:00:00Z, before=2100-01-01T00:00:00Z"; shown != want {
		t.Fatalf("rule shown as %q, want %q", shown, want)
	}
	b.screenshot("link-rule-conditions-edit")
	b.run("change rule",
		clear("#edit_rule_0_if"),
		chromedp.SendKeys("#edit_rule_0_if", "ip=198.51.100.0/24, country=DE"),
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(`.answer`))
	if resp, err = hc.Get(base + "/office"); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://example.com/home" {
		t.Fatalf("after the edit: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestBrowserLinkForwarding turns on path and query forwarding in the
// link editor, follows a forwarded short URL, turns the path off again in
// the edit form, and sets the workspace's defaults of new links on the
// Workspace page, which the next link created without a tick takes.
func TestBrowserLinkForwarding(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)
	b.run("links page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`))
	b.run("create",
		chromedp.SendKeys("#destination_url", "https://example.com/docs?lang=en"),
		chromedp.SendKeys("#alias", "handbook"),
		chromedp.Click(`#create-link-form details.more summary`),
		chromedp.WaitVisible(`#forward_path`),
		chromedp.Click(`#forward_path`),
		chromedp.Click(`#forward_query`))
	b.screenshot("link-forwarding")
	b.run("submit",
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="handbook"]`))
	l := c.must("GET", "/v1/links?search=handbook", tok, "", 200)["data"].([]any)[0].(map[string]any)
	if l["forward_path"] != true || l["forward_query"] != true {
		t.Fatalf("stored link: %v", l)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	follow := func(path string) (int, string) {
		t.Helper()
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}
	if code, loc := follow("/handbook/install/linux?x=1&lang=de"); code != 302 || loc != "https://example.com/docs/install/linux?lang=en&x=1" {
		t.Fatalf("forwarded: %d %q", code, loc)
	}

	// The edit form shows both ticked; untick the path.
	b.run("edit",
		chromedp.Click(`#links tr[data-alias="handbook"] button.edit`),
		chromedp.WaitVisible(`#edit_forward_path`))
	var ticked bool
	b.run("ticked", chromedp.JavascriptAttribute(`#edit_forward_path`, "checked", &ticked))
	if !ticked {
		t.Fatal("forward_path not shown ticked")
	}
	b.run("untick",
		chromedp.Click(`#edit_forward_path`),
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(`.answer`))
	if code, _ := follow("/handbook/install"); code != 404 {
		t.Fatalf("after unticking: %d", code)
	}
	if code, loc := follow("/handbook?x=1"); code != 302 || loc != "https://example.com/docs?lang=en&x=1" {
		t.Fatalf("query still forwarded: %d %q", code, loc)
	}

	// The workspace's defaults.
	b.run("workspace page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/settings"]`),
		chromedp.WaitVisible(`#link-defaults-form`),
		chromedp.Click(`#ws-forward-path`),
		chromedp.Click(`#link-defaults-form button[type=submit]`),
		chromedp.WaitVisible(`#link-defaults-form .msg.notice`))
	b.screenshot("workspace-link-defaults")
	b.run("links page again",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.SendKeys("#destination_url", "https://example.com/wiki"),
		chromedp.SendKeys("#alias", "wiki"),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="wiki"]`))
	if code, loc := follow("/wiki/page/one"); code != 302 || loc != "https://example.com/wiki/page/one" {
		t.Fatalf("a link taking the workspace's default: %d %q", code, loc)
	}
}
