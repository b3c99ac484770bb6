package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserAbuseReports: a visitor reports a link from its preview page
// (no sign-in); the admin sees the report on the Admin page, blocks the
// destination's host from it, and the link answers 410 after.
func TestBrowserAbuseReports(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://phish.example/login","alias":"prize"}`, 201)

	b := newBrowser(t, base)
	var sent string
	b.run("report from the preview",
		chromedp.Navigate(base+"/prize+"),
		chromedp.WaitVisible(`#report summary`),
		chromedp.Click(`#report summary`),
		chromedp.WaitVisible(`#reason`),
		setSelect("#reason", "phishing"),
		chromedp.SendKeys("#details", "It asks for my bank password."),
		chromedp.Click(`#report button[type=submit]`),
		chromedp.WaitVisible(`#report-sent`),
		chromedp.Text(`#report-sent`, &sent))
	if !strings.Contains(sent, "/prize") {
		t.Fatalf("the page says %q", sent)
	}
	b.run("the admin's list",
		withToken(base, "/app/admin", tok),
		chromedp.WaitVisible(`#abuse-report-list tbody tr`),
		chromedp.Poll(`document.querySelector('#abuse-report-list .report-details').textContent.includes('bank password')`, nil))
	b.screenshot("admin-abuse-reports")
	b.run("block the host",
		chromedp.Evaluate(`window.confirm = () => true`, nil),
		chromedp.Click(`#abuse-report-list button[aria-label="Block phish.example"]`),
		chromedp.Poll(`(document.querySelector('#abuse-reports .msg.notice') || {textContent: ''}).textContent.startsWith('Blocked phish.example')`, nil),
		chromedp.WaitVisible(`//section[@id="abuse-reports"]//p[contains(@class, "empty")]`, chromedp.BySearch))
	res := c.must("GET", "/v1/admin/abuse-reports?status=resolved", tok, "", 200)["data"].([]any)
	if len(res) != 1 || res[0].(map[string]any)["reason"] != "phishing" {
		t.Fatalf("resolved reports: %v", res)
	}
	if code := statusOf(t, base+"/prize"); code != 410 {
		t.Fatalf("the blocked link answers %d, want 410", code)
	}
	b.check()
}

// statusOf returns the status GET u answers, without following redirects.
func statusOf(t *testing.T, u string) int {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
