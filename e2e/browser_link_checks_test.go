package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserLinkChecks turns the checks of destinations on in the
// Workspace page, waits for the checker of the running server to find a
// destination broken (twice: link_checks.retry_interval apart), sees the
// Broken badge in the Links table with what the check found, and filters
// the list to the broken links.
func TestBrowserLinkChecks(t *testing.T) {
	t.Parallel()
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/gone") {
			http.NotFound(w, r)
		}
	}))
	defer dest.Close()
	base, c, tok := startDashboard(t, "link_checks:\n  poll: 100ms\n  retry_interval: 1s\n  host_gap: 0s\n  allow_private: true\n  timeout: 2s\n")
	c.must("POST", "/v1/links", tok, `{"destination_url":"`+dest.URL+`/pricing","alias":"pricing"}`, 201)
	c.must("POST", "/v1/links", tok, `{"destination_url":"`+dest.URL+`/gone/spring-sale","alias":"spring-sale"}`, 201)
	c.must("POST", "/v1/links", tok, `{"destination_url":"`+dest.URL+`/gone/old-docs","alias":"old-docs"}`, 201)

	b := newBrowser(t, base)
	signIn(b, base)
	b.run("workspace page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/settings"]`),
		chromedp.WaitVisible(`#destination-checks-form`),
		chromedp.Click(`#ws-destination-checks`),
		chromedp.Click(`#destination-checks-form button[type=submit]`),
		chromedp.WaitVisible(`#destination-checks-form .msg.notice`))
	b.screenshot("workspace-destination-checks", chromedp.ScrollIntoView(`#destination-checks-form`))

	deadline := time.Now().Add(30 * time.Second)
	for {
		l := c.must("GET", "/v1/links?broken=true", tok, "", 200)
		if l["meta"].(map[string]any)["total"].(float64) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broken destinations are not found: %v", c.must("GET", "/v1/links", tok, "", 200)["data"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	var badges map[string]string
	var tip string
	b.run("links with the broken badge",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#links tr[data-alias="spring-sale"] .badge.broken`),
		chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#links tbody tr')].map(r =>
			[r.dataset.alias, [...r.querySelectorAll('.badge')].map(b => b.textContent).join(',')]))`, &badges),
		chromedp.AttributeValue(`#links tr[data-alias="spring-sale"] .badge.broken`, "title", &tip, nil))
	if badges["spring-sale"] != "Broken · 404" || badges["old-docs"] != "Broken · 404" || badges["pricing"] != "" {
		t.Fatalf("badges %q", badges)
	}
	if !strings.HasPrefix(tip, "Destination check: answered 404 Not Found (") {
		t.Fatalf("badge title %q", tip)
	}
	b.run("filter broken",
		chromedp.SetValue(`#filter-broken`, "true"),
		chromedp.Click(`form.filters button[type=submit]`),
		chromedp.WaitNotPresent(`#links tr[data-alias="pricing"]`),
		chromedp.WaitVisible(`#links tr[data-alias="old-docs"]`))
	b.screenshot("links-broken")
	var url string
	var rows int
	b.run("filtered", chromedp.Location(&url),
		chromedp.Evaluate(`document.querySelectorAll('#links tbody tr').length`, &rows))
	if !strings.Contains(url, "broken=true") || rows != 2 {
		t.Fatalf("filtered list: %s, %d rows", url, rows)
	}
}
