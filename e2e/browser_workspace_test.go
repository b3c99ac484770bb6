package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserWorkspace drives the Workspace page: the admin renames the
// workspace and sees the name in the switcher, changes its plan and sees the
// new rate limit, and creates a workspace and lands in it; an owner who is
// not the instance admin sees the plan read-only (and the API refuses the
// change when forced), and a read member's rename shows the API's 403.
func TestBrowserWorkspace(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	first := c.must("GET", "/v1/me", tok, "", 200)["workspaces"].([]any)[0].(map[string]any)["id"].(string)

	b := newBrowser(t, base)
	b.run("workspace page",
		withToken(base, "/app/", tok),
		chromedp.WaitVisible(`nav[aria-label=Main]`),
		chromedp.Click(`nav[aria-label=Main] a[href="/app/settings"]`),
		chromedp.WaitVisible(`#rename-form`),
		chromedp.WaitVisible(`#plan-select`),
		chromedp.WaitVisible(`//span[@id="plan-limit" and contains(., "100 API requests a minute")]`, chromedp.BySearch))

	// An empty name is refused at its field; then the workspace is renamed
	// and the switcher says so.
	b.run("empty name",
		emptied("#ws-name-input"),
		chromedp.Click(`#rename-form button[type=submit]`),
		chromedp.WaitVisible(`#ws-name-input-error`))
	b.run("rename",
		chromedp.SendKeys("#ws-name-input", "Growth team"),
		chromedp.Click(`#rename-form button[type=submit]`),
		chromedp.WaitVisible(`#rename-form .msg.notice`),
		// An option has no box of its own: wait for it in the document.
		chromedp.WaitReady(`//select[@id="workspace"]/option[starts-with(., "Growth team")]`, chromedp.BySearch))
	if got := c.must("GET", "/v1/workspaces/"+first, tok, "", 200)["name"]; got != "Growth team" {
		t.Fatalf("the workspace is called %v after the rename", got)
	}

	// The instance admin changes the plan; the page reads the new limit.
	b.run("change the plan",
		setSelect("#plan-select", "pro"),
		chromedp.Click(`#plan-form button[type=submit]`),
		chromedp.WaitVisible(`#plan-form ~ .msg.notice`),
		chromedp.WaitVisible(`//span[@id="plan-limit" and contains(., "1,000 API requests a minute")]`, chromedp.BySearch))
	if got := c.must("GET", "/v1/workspaces/"+first, tok, "", 200)["plan"]; got != "pro" {
		t.Fatalf("the plan is %v after the change", got)
	}
	b.screenshot("workspace")

	// A new workspace: the dashboard opens it on its (empty) Links page.
	b.run("create a workspace",
		chromedp.SendKeys("#new-ws-name", "Launch"),
		chromedp.Click(`#create-workspace-form button[type=submit]`),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.WaitVisible(`.empty`))
	var created string
	for _, w := range c.must("GET", "/v1/me", tok, "", 200)["workspaces"].([]any) {
		if w := w.(map[string]any); w["name"] == "Launch" {
			created = w["id"].(string)
			if w["role"] != "owner" {
				t.Fatalf("the creator's role in the new workspace: %v", w["role"])
			}
		}
	}
	var chosen string
	b.run("the switcher", chromedp.Value(`#workspace`, &chosen))
	if created == "" || chosen != created {
		t.Fatalf("after creating, the switcher shows %q; the new workspace is %q", chosen, created)
	}

	// Olga owns a workspace of her own and reads the admin's.
	c.must("POST", "/v1/users", tok, `{"email":"olga@example.com","name":"Olga","password":"olga's long password"}`, 201)
	olga := c.must("POST", "/v1/auth/login", "", `{"email":"olga@example.com","password":"olga's long password"}`, 200)["token"].(string)
	own := c.must("POST", "/v1/workspaces", olga, `{"name":"Olga's shop"}`, 201)["id"].(string)
	c.must("POST", "/v1/workspaces", olga, `{"name":"Olga's pro shop","plan":"pro"}`, 403)
	inv := c.must("POST", "/v1/invitations?workspace_id="+first, tok, `{"email":"olga@example.com","role":"read"}`, 201)
	invTok := inv["url"].(string)[strings.Index(inv["url"].(string), "#token=")+len("#token="):]
	c.must("POST", "/v1/invitations/accept", olga, `{"token":"`+invTok+`"}`, 200)

	b2 := newBrowser(t, base)
	b2.run("olga's workspace page",
		withToken(base, "/app/settings", olga),
		chromedp.WaitVisible(`#rename-form`),
		chromedp.WaitVisible(`#plan-who`),
		chromedp.WaitVisible(`//span[@id="plan-limit" and contains(., "100 API requests a minute")]`, chromedp.BySearch))
	var selects int
	var who string
	b2.run("no plan control",
		chromedp.Evaluate(`document.querySelectorAll('#plan-select, #new-ws-plan').length`, &selects),
		chromedp.Text(`#plan-who`, &who))
	if selects != 0 || !strings.Contains(who, "Only the instance admin") {
		t.Fatalf("an owner who is not the admin sees %d plan controls and %q", selects, who)
	}
	b2.screenshot("workspace-owner")
	// Forced through the API, the change is refused.
	c.must("PATCH", "/v1/workspaces/"+own, olga, `{"plan":"enterprise"}`, 403)
	if got := c.must("GET", "/v1/workspaces/"+own, olga, "", 200)["plan"]; got != "free" {
		t.Fatalf("olga's plan is %v", got)
	}
	// As a read member of the admin's workspace, her rename shows the 403.
	b2.run("olga renames the admin's workspace",
		setSelect("#workspace", first),
		chromedp.WaitVisible(`//p[contains(@class, "hint") and contains(., "Growth team")]`, chromedp.BySearch),
		clear("#ws-name-input"),
		chromedp.SendKeys("#ws-name-input", "Olga's now"),
		chromedp.Click(`#rename-form button[type=submit]`),
		chromedp.WaitVisible(`#rename-form .msg.error`))
	var msg string
	b2.run("the 403", chromedp.Text(`#rename-form .msg.error`, &msg))
	if msg == "" {
		t.Fatal("no message for the refused rename")
	}
	t.Logf("rename by a read member: %s", msg)
	if got := c.must("GET", "/v1/workspaces/"+first, tok, "", 200)["name"]; got != "Growth team" {
		t.Fatalf("the refused rename changed the name to %v", got)
	}

	got := b.templates(t)
	for _, w := range []string{"GET /v1/me", "PATCH /v1/workspaces/{id}", "POST /v1/workspaces", "GET /v1/links"} {
		if !got[w] {
			t.Errorf("the workspace journey did not call %s", w)
		}
	}
	b2.templates(t)
}

// emptied empties an input as a person would, firing the input event the
// page listens to (clear does not).
func emptied(sel string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const i = document.querySelector(%q); i.value = ''; i.dispatchEvent(new Event('input', {bubbles: true})); })()`, sel), nil)
}
