package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// setSelect chooses a value in a select and fires the change event the
// page listens to.
func setSelect(sel, value string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event('change', {bubbles: true})); })()`, sel, value), nil)
}

// TestBrowserTeam drives the Members and Audit log pages: the last owner
// cannot leave, an invitation made in the page is accepted in a second
// browser, the new member's role is changed and they are removed (and,
// invited again, leave by themselves), and the audit log lists, filters,
// pages and exports what happened; a non-owner sees the API's 403 there.
func TestBrowserTeam(t *testing.T) {
	t.Parallel()
	// Unlimited requests: the test writes 50 entries to page through.
	base, c, tok := startDashboard(t, "plans:\n  free: 0\n")

	b := newBrowser(t, base)
	b.run("members page",
		withToken(base, "/app/", tok),
		chromedp.WaitVisible(`nav[aria-label=Main]`),
		chromedp.Click(`nav[aria-label=Main] a[href="/app/members"]`),
		chromedp.WaitVisible(`#members tbody tr`),
		chromedp.WaitVisible(`#invite-form`),
		chromedp.WaitVisible(`#invitations ~ .empty`))

	// The only owner cannot step down either: the API's 409 is shown and
	// the row shows the role kept, not the one refused.
	admin := c.must("GET", "/v1/me", tok, "", 200)["id"].(string)
	adminRow := `tr[data-member="` + admin + `"]`
	var kept string
	b.run("last owner steps down",
		chromedp.SetValue(`#role-`+admin, "read"),
		chromedp.Click(adminRow+` .role-form button[type=submit]`),
		chromedp.WaitVisible(`#members-list ~ .msg.error`),
		chromedp.Value(`#role-`+admin, &kept))
	if kept != "owner" {
		t.Fatalf("after the refused change the row shows role %q, want owner", kept)
	}

	// The only owner cannot leave: the API's 409 is shown.
	b.run("last owner leaves",
		chromedp.Click(`#leave-actions button.danger`),
		chromedp.Click(`#leave-actions .confirm button.danger`),
		chromedp.WaitVisible(`#members-list ~ .msg.error`))
	var msg string
	b.run("the message", chromedp.Text(`#members-list ~ .msg.error`, &msg))
	if !strings.Contains(strings.ToLower(msg), "owner") {
		t.Fatalf("leaving as the last owner said %q", msg)
	}

	// A bad e-mail is shown at its field; then Sam is invited.
	b.run("bad e-mail",
		chromedp.SendKeys("#invite-email", "not an e-mail"),
		chromedp.Click(`#invite-form button[type=submit]`),
		chromedp.WaitVisible(`#invite-email-error`))
	var invURL string
	b.run("invite sam",
		clear("#invite-email"),
		chromedp.SendKeys("#invite-email", "sam@example.com"),
		setSelect("#invite-role", "read"),
		chromedp.Click(`#invite-form button[type=submit]`),
		chromedp.WaitVisible(`#invitation-url`),
		chromedp.Text(`#invitation-url`, &invURL),
		chromedp.WaitVisible(`//table[@id="invitations-table"]//td[text()="sam@example.com"]`, chromedp.BySearch))
	if !strings.Contains(invURL, "/app/invite#token=") {
		t.Fatalf("the invitation's link: %q", invURL)
	}
	b.run("copy the link", chromedp.Click(`#copy-invitation`), chromedp.WaitVisible(`#copy-invitation + .copied`))
	b.screenshot("members")

	// A second invitation, revoked.
	b.run("invite and revoke bob",
		chromedp.SendKeys("#invite-email", "bob@example.com"),
		chromedp.Click(`#invite-form button[type=submit]`),
		chromedp.WaitVisible(`//table[@id="invitations-table"]//td[text()="bob@example.com"]`, chromedp.BySearch),
		chromedp.Click(`//table[@id="invitations-table"]//tr[td[text()="bob@example.com"]]//button[contains(@class,"danger")]`, chromedp.BySearch),
		chromedp.Click(`//table[@id="invitations-table"]//tr[td[text()="bob@example.com"]]//span[@class="confirm"]/button[contains(@class,"danger")]`, chromedp.BySearch),
		chromedp.WaitVisible(`#invitations ~ .msg.notice`))
	if invs := c.must("GET", "/v1/invitations", tok, "", 200)["data"].([]any); len(invs) != 1 || invs[0].(map[string]any)["email"] != "sam@example.com" {
		t.Fatalf("pending invitations after the revocation: %v", invs)
	}

	// Sam accepts in a second browser with its own profile.
	b2 := newBrowser(t, base)
	b2.run("accept",
		chromedp.Navigate(strings.Replace(invURL, "http://localhost:8080", base, 1)),
		chromedp.WaitVisible(`#invite-new`),
		chromedp.SendKeys("#invite-name", "Sam"),
		chromedp.SendKeys("#invite-password", "sam's long password"),
		chromedp.Click(`#invite-new button[type=submit]`),
		chromedp.WaitVisible(`nav[aria-label=Main]`))
	var samID string
	for _, m := range c.must("GET", "/v1/members", tok, "", 200)["data"].([]any) {
		if m := m.(map[string]any); m["email"] == "sam@example.com" {
			samID = m["user_id"].(string)
		}
	}
	if samID == "" {
		t.Fatal("sam is not a member after accepting")
	}

	// The owner sees Sam and makes them read_write.
	row := `tr[data-member="` + samID + `"]`
	b.run("sam listed",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/keys"]`),
		chromedp.WaitVisible(`#create-key-form`),
		chromedp.Click(`nav[aria-label=Main] a[href="/app/members"]`),
		chromedp.WaitVisible(row),
		chromedp.WaitVisible(`#invitations ~ .empty`))
	b.run("change sam's role",
		setSelect("#role-"+samID, "read_write"),
		chromedp.Click(row+` .role-form button[type=submit]`),
		chromedp.WaitVisible(`#members-list ~ .msg.notice`))
	for _, m := range c.must("GET", "/v1/members", tok, "", 200)["data"].([]any) {
		if m := m.(map[string]any); m["user_id"] == samID && m["role"] != "read_write" {
			t.Fatalf("sam after the role change: %v", m)
		}
	}

	// Sam, not an owner, sees the members without the owner's controls,
	// and the audit log's 403 as a message.
	b2.run("sam's members page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/members"]`),
		chromedp.WaitVisible(`#members tbody tr`),
		chromedp.WaitVisible(`#invitations ~ .empty`))
	var forms int
	b2.run("no owner controls", chromedp.Evaluate(`document.querySelectorAll('.role-form, #invite-form').length`, &forms))
	if forms != 0 {
		t.Fatalf("a read_write member sees %d owner forms", forms)
	}
	b2.run("sam's audit log",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/audit"]`),
		chromedp.WaitVisible(`.msg.error`))
	b2.run("the 403", chromedp.Text(`.msg.error`, &msg))
	if msg == "" {
		t.Fatal("no message for the refused audit log")
	}
	t.Logf("audit log for a non-owner: %s", msg)

	// The owner's audit log lists the invitation, the joining and the
	// role change, filters and exports them.
	b.run("audit log",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/audit"]`),
		chromedp.WaitVisible(`#audit tr[data-action="member.invited"]`),
		chromedp.WaitVisible(`#audit tr[data-action="member.joined"]`),
		chromedp.WaitVisible(`#audit tr[data-action="member.role_changed"]`))
	var changes string
	b.run("role change text", chromedp.Text(`#audit tr[data-action="member.role_changed"] td.changes`, &changes))
	if !strings.Contains(changes, "role: read → read_write") {
		t.Fatalf("the role change's changes: %q", changes)
	}
	b.screenshot("audit")
	var n int
	b.run("filter by action",
		setSelect("#audit-action", "member.joined"),
		chromedp.Click(`#audit-filters button[type=submit]`),
		chromedp.WaitNotPresent(`#audit tr[data-action="member.invited"]`),
		chromedp.WaitVisible(`#audit tr[data-action="member.joined"]`),
		chromedp.Evaluate(`document.querySelectorAll('#audit tbody tr').length`, &n))
	if n != 1 {
		t.Fatalf("%d entries for member.joined", n)
	}

	dir := t.TempDir()
	done := make(chan string, 1)
	chromedp.ListenTarget(b.ctx, func(ev any) {
		if e, ok := ev.(*cdpbrowser.EventDownloadProgress); ok && e.State == cdpbrowser.DownloadProgressStateCompleted {
			select {
			case done <- e.GUID:
			default:
			}
		}
	})
	b.allowDownloads(dir)
	for _, f := range []struct{ button, first string }{{"#audit-csv", "id,time,"}, {"#audit-jsonl", `{"id":`}} {
		b.run("download "+f.button,
			chromedp.Click(f.button),
			chromedp.WaitVisible(`.msg.notice`))
		var guid string
		select {
		case guid = <-done:
		case <-b.ctx.Done():
			t.Fatalf("the %s download did not complete", f.button)
		}
		data, err := os.ReadFile(filepath.Join(dir, guid))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if f.button == "#audit-csv" {
			lines = lines[1:] // the header
		}
		if len(lines) != 1 || !strings.Contains(string(data), f.first) || !strings.Contains(lines[0], "member.joined") {
			t.Fatalf("the %s export (of the filtered log):\n%s", f.button, data)
		}
	}

	// Sam's own entries, by the actor filter; a custom range that ends
	// before it starts is refused with the API's message.
	b.run("filter by actor",
		setSelect("#audit-action", ""),
		chromedp.SendKeys("#audit-actor", samID),
		chromedp.Click(`#audit-filters button[type=submit]`),
		chromedp.WaitNotPresent(`#audit tr[data-action="member.role_changed"]`),
		chromedp.WaitVisible(`#audit tr[data-action="user.created"]`),
		chromedp.Evaluate(`[...document.querySelectorAll('#audit tbody tr')].map(r => r.dataset.action).join(' ')`, &msg))
	if msg != "member.joined user.created" {
		t.Fatalf("sam's entries: %s", msg)
	}
	b.run("a backwards range",
		clear("#audit-actor"),
		chromedp.Evaluate(`document.getElementById('audit-actor').dispatchEvent(new Event('input', {bubbles: true}))`, nil),
		setSelect("#audit-range", "custom"),
		chromedp.WaitVisible("#audit-start"),
		chromedp.Evaluate(`for (const [id, v] of [['audit-start', '2026-03-10T12:00'], ['audit-end', '2026-03-01T12:00']]) { const i = document.getElementById(id); i.value = v; i.dispatchEvent(new Event('input', {bubbles: true})); }`, nil),
		chromedp.Click(`#audit-filters button[type=submit]`),
		chromedp.WaitVisible(`main .msg.error`),
		chromedp.Text(`main .msg.error`, &msg))
	if !strings.Contains(msg, "after") {
		t.Fatalf("a backwards range said %q", msg)
	}

	// 50 renames fill the first page; "Load more" shows the entries before.
	ws := c.must("GET", "/v1/me", tok, "", 200)["workspaces"].([]any)[0].(map[string]any)["id"].(string)
	for i := range 50 {
		c.must("PATCH", "/v1/workspaces/"+ws, tok, fmt.Sprintf(`{"name":"Team %d"}`, i), 200)
	}
	b.run("clear the filters",
		chromedp.Click(`#audit-clear`),
		chromedp.WaitVisible(`#audit-more`),
		chromedp.Evaluate(`document.querySelectorAll('#audit tbody tr').length`, &n))
	if n != 50 {
		t.Fatalf("%d entries on the first page", n)
	}
	b.run("load more",
		chromedp.Click(`#audit-more`),
		chromedp.WaitVisible(`#audit tr[data-action="member.joined"]`),
		chromedp.WaitNotPresent(`#audit-more`),
		chromedp.Evaluate(`document.querySelectorAll('#audit tbody tr').length`, &n))
	if n <= 50 {
		t.Fatalf("%d entries after loading more", n)
	}

	// The owner removes Sam, told what the removal ends.
	var question string
	b.run("remove sam",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/members"]`),
		chromedp.WaitVisible(row),
		chromedp.Click(row+` td.actions > button.danger`),
		chromedp.Text(row+` .confirm`, &question),
		chromedp.Click(row+` .confirm button.danger`),
		chromedp.WaitNotPresent(row),
		chromedp.WaitVisible(`#members-list ~ .msg.notice`))
	if !strings.Contains(question, "revoked for good") || !strings.Contains(question, "webhooks are disabled") {
		t.Fatalf("the removal asks %q: it should say their keys are revoked and their webhooks disabled", question)
	}
	if ms := c.must("GET", "/v1/members", tok, "", 200)["data"].([]any); len(ms) != 1 {
		t.Fatalf("members after removing sam: %v", ms)
	}

	// Invited again, Sam leaves by themselves.
	samTok := c.must("POST", "/v1/auth/login", "", `{"email":"sam@example.com","password":"sam's long password"}`, 200)["token"].(string)
	again := c.must("POST", "/v1/invitations", tok, `{"email":"sam@example.com","role":"read"}`, 201)
	c.must("POST", "/v1/invitations/accept", samTok, fmt.Sprintf(`{"token":%q}`, again["token"]), 200)
	b2.run("sam leaves",
		chromedp.Navigate(base+"/app/members"),
		chromedp.WaitVisible(`#members tbody tr`),
		chromedp.Click(`#leave-actions button.danger`),
		chromedp.Click(`#leave-actions .confirm button.danger`),
		chromedp.WaitVisible(`//main/h1[text()="No workspace"]`, chromedp.BySearch))
	if ms := c.must("GET", "/v1/members", tok, "", 200)["data"].([]any); len(ms) != 1 {
		t.Fatalf("members after sam left: %v", ms)
	}
	left := c.must("GET", "/v1/audit-log?action=member.left", tok, "", 200)["data"].([]any)
	if len(left) != 1 || left[0].(map[string]any)["actor"].(map[string]any)["id"] != samID {
		t.Fatalf("member.left entries: %v", left)
	}

	got := b.templates(t)
	for _, w := range []string{"GET /v1/members", "PATCH /v1/members/{user_id}", "DELETE /v1/members/{user_id}", "POST /v1/invitations", "GET /v1/invitations", "DELETE /v1/invitations/{id}", "GET /v1/audit-log"} {
		if !got[w] {
			t.Errorf("the team journey did not call %s", w)
		}
	}
	if got := b2.templates(t); !got["DELETE /v1/members/{user_id}"] {
		t.Error("sam's page did not leave with DELETE /v1/members/{user_id}")
	}
}
