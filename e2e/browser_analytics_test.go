package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserAnalytics follows a link from the test, then reads its clicks
// on the Analytics page: the totals, the chart, a top list, another range,
// a refused custom range and the exports; and the link's own analytics
// from the Links page.
func TestBrowserAnalytics(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "clicks:\n  flush_interval: 10ms\n")
	l := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/counted","alias":"counted"}`, 201)
	id := l["id"].(string)

	// Three real redirects from a browser's user agent (an HTTP library's
	// would be a bot), each a click, recorded within the flush interval.
	const clicks = 3
	for i := 0; i < clicks; i++ {
		followAsBrowser(t, base+"/counted")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := c.must("GET", "/v1/analytics/workspace?range=24h", tok, "", 200)["totals"].(map[string]any)["clicks"].(float64)
		if got == clicks {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API counts %v clicks, want %d", got, clicks)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The checks of "today" and "yesterday" use a zone where now is far
	// from midnight.
	zoneName := "UTC"
	if h := time.Now().UTC().Hour(); h < 2 || h > 21 {
		zoneName = "Asia/Tokyo"
	}

	b := newBrowser(t, base)
	b.run("sign in",
		chromedp.Navigate(base+"/app/analytics"),
		chromedp.WaitVisible("#sign-in"),
		chromedp.SendKeys("#email", "admin@example.com"),
		chromedp.SendKeys("#password", "a long password"),
		chromedp.Click(`#sign-in button[type=submit]`),
		chromedp.WaitVisible(`#analytics-range`))

	// The workspace's totals, the chart and the top list of links.
	var total, zone string
	b.run("totals",
		chromedp.WaitVisible(`#an-clicks`),
		chromedp.Text(`#an-clicks`, &total),
		chromedp.WaitVisible(`#an-chart canvas`),
		chromedp.WaitVisible(`#top-links tbody tr`),
		chromedp.Value(`#an-tz`, &zone))
	if total != fmt.Sprint(clicks) {
		t.Fatalf("the page shows %q clicks, want %d", total, clicks)
	}
	var browserZone string
	b.run("browser zone", chromedp.Evaluate(`Intl.DateTimeFormat().resolvedOptions().timeZone`, &browserZone))
	if zone != browserZone {
		t.Fatalf("time zone %q, want the browser's %q", zone, browserZone)
	}
	var row string
	b.run("top link", chromedp.Text(`#top-links tbody tr`, &row))
	if !strings.Contains(row, "/counted") || !strings.Contains(row, fmt.Sprint(clicks)) {
		t.Fatalf("top links row %q", row)
	}
	b.screenshot("analytics")

	// Another range: yesterday had no clicks; today has them all, by hour.
	b.run("yesterday",
		chromedp.SetValue(`#an-tz`, zoneName),
		chromedp.WaitVisible(`//p[@class="an-range" and contains(., "`+zoneName+`")]`, chromedp.BySearch),
		chromedp.SetValue(`#an-range`, "yesterday"),
		chromedp.WaitVisible(`//dd[@id="an-clicks" and text()="0"]`, chromedp.BySearch),
		chromedp.WaitVisible(`#an-chart canvas`),
		chromedp.WaitVisible(`#an-empty`),
		chromedp.WaitVisible(`.an-top .empty`))
	b.run("today by hour",
		chromedp.SetValue(`#an-range`, "today"),
		chromedp.SetValue(`#an-interval`, "hour"),
		chromedp.WaitVisible(fmt.Sprintf(`//dd[@id="an-clicks" and text()="%d"]`, clicks), chromedp.BySearch),
		chromedp.WaitVisible(`//p[@class="an-range" and contains(., "by hour")]`, chromedp.BySearch))
	b.run("exclude bots",
		chromedp.Click(`#an-bots`),
		chromedp.WaitVisible(fmt.Sprintf(`//dd[@id="an-clicks" and text()="%d"]`, clicks), chromedp.BySearch))

	// A custom range that ends before it starts is refused at the field.
	b.run("custom range refused",
		chromedp.SetValue(`#an-range`, "custom"),
		chromedp.WaitVisible(`#an-start`),
		chromedp.SetValue(`#an-start`, "2026-01-02T00:00"),
		chromedp.SetValue(`#an-end`, "2026-01-01T00:00"),
		chromedp.WaitVisible(`.msg.error`))
	b.run("back to 7 days",
		chromedp.SetValue(`#an-range`, "7d"),
		chromedp.WaitVisible(fmt.Sprintf(`//dd[@id="an-clicks" and text()="%d"]`, clicks), chromedp.BySearch))

	// The exports: the page says what it saved, as many rows as the API's.
	for _, kind := range []struct{ data, format string }{{"clicks", "csv"}, {"timeseries", "csv"}, {"top", "csv"}} {
		name := "linkbolt-" + kind.data + "-7d." + kind.format
		notice := `//section[.//h2[@id="an-export-h"]]//p[contains(., "Saved ` + name + `")]`
		var saved string
		b.run("export "+name,
			chromedp.Click(`#an-export button[data-export="`+kind.data+"."+kind.format+`"]`),
			chromedp.WaitVisible(notice, chromedp.BySearch),
			chromedp.Text(notice, &saved, chromedp.BySearch))
		want := exportRows(t, base, tok, "range=7d&interval=hour&exclude_bots=true&tz="+zoneName+"&data="+kind.data+"&format="+kind.format)
		if want == 0 || !strings.Contains(saved, fmt.Sprintf("(%d rows)", want)) {
			t.Fatalf("export %s: %q, want %d rows", name, saved, want)
		}
	}
	if want := exportRows(t, base, tok, "range=7d&data=clicks"); want != clicks {
		t.Fatalf("the clicks export has %d rows, want %d", want, clicks)
	}

	// A link's analytics, from its row on the Links page.
	b.run("link analytics",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#links tr[data-alias="counted"]`),
		chromedp.Click(`#links tr[data-alias="counted"] a[href="/app/analytics?link=`+id+`"]`),
		chromedp.WaitVisible(`#workspace-analytics`),
		chromedp.WaitVisible(fmt.Sprintf(`//dd[@id="an-clicks" and text()="%d"]`, clicks), chromedp.BySearch),
		chromedp.WaitVisible(`#an-chart canvas`),
		chromedp.WaitVisible(`#top-devices tbody tr`),
		chromedp.WaitVisible(`//h1[contains(., "/counted")]`, chromedp.BySearch))
	var saved string
	b.run("export the link's clicks as JSON",
		chromedp.Click(`#an-export button[data-export="clicks.json"]`),
		chromedp.WaitVisible(`//section[.//h2[@id="an-export-h"]]//p[contains(., "Saved")]`, chromedp.BySearch),
		chromedp.Text(`//section[.//h2[@id="an-export-h"]]//p[contains(., "Saved")]`, &saved, chromedp.BySearch))
	if !strings.Contains(saved, fmt.Sprintf("(%d rows)", clicks)) {
		t.Fatalf("link export: %q", saved)
	}
	b.screenshot("analytics-link")

	got := b.templates(t)
	for _, w := range []string{"GET /v1/analytics/workspace", "GET /v1/analytics/links/{id}", "GET /v1/analytics/export", "GET /v1/links/{id}"} {
		if !got[w] {
			t.Errorf("the page did not call %s", w)
		}
	}
}

// exportRows counts the data rows of an export from the API (its CSV
// without the header row).
func exportRows(t *testing.T, base, tok, query string) int {
	t.Helper()
	req, err := http.NewRequest("GET", base+"/v1/analytics/export?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("export %s: %d %s", query, res.StatusCode, body)
	}
	lines := strings.Split(strings.TrimRight(string(body), "\n"), "\n")
	return len(lines) - 1
}
