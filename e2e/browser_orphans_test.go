package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// visitHost sends a GET of path to base with the Host header host ("" for
// base's own), as a browser that followed a link from referer would.
func visitHost(t *testing.T, base, host, path string) int {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
	req.Header.Set("Referer", "https://forum.example/thread")
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBrowserOrphanVisits: visits that found no link on the workspace's
// custom domain and on the primary host appear in the card "Visits that
// found no link" of the Analytics page and of the Admin page, with their
// totals by type and the latest visits.
func TestBrowserOrphanVisits(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	id := c.must("POST", "/v1/domains", tok, `{"hostname":"go.example.com"}`, 201)["id"].(string)
	c.must("PATCH", "/v1/domains/"+id, tok, `{"verified":true}`, 200)
	for _, p := range []string{"/", "/spring-sale", "/old-code", "/wp-login.php", "/wp-admin/setup-config.php"} {
		visitHost(t, base, "go.example.com", p)
	}
	for _, p := range []string{"/nope", "/.env", "/admin/config.php"} {
		visitHost(t, base, "", p)
	}
	// The writer runs every clicks.flush_interval (1 s): wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := c.must("GET", "/v1/analytics/orphan-visits?range=24h", tok, "", 200)
		adm := c.must("GET", "/v1/admin/orphan-visits?range=24h", tok, "", 200)
		if out["totals"].(map[string]any)["visits"] == float64(5) && adm["totals"].(map[string]any)["visits"] == float64(3) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan visits not written: %v / %v", out["totals"], adm["totals"])
		}
		time.Sleep(100 * time.Millisecond)
	}

	b := newBrowser(t, base)
	var invalid, latest string
	b.run("analytics card",
		withToken(base, "/app/analytics", tok),
		chromedp.WaitVisible(`#orphans #orphans-visits tbody tr`),
		chromedp.Text(`#orphans [data-orphans="invalid_short_url"]`, &invalid),
		chromedp.Text(`#orphans #orphans-visits tbody`, &latest))
	if invalid != "3" || !strings.Contains(latest, "/wp-admin/setup-config.php") || !strings.Contains(latest, "forum.example") {
		t.Fatalf("the analytics card shows %q unknown codes and %q", invalid, latest)
	}
	b.screenshot("orphan-visits", chromedp.ScrollIntoView(`#orphans`))

	var total, adminLatest string
	b.run("admin card",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/admin"]`),
		chromedp.WaitVisible(`#orphans #orphans-visits tbody tr`),
		chromedp.Text(`#orphans [data-orphans="visits"]`, &total),
		chromedp.Text(`#orphans #orphans-visits tbody`, &adminLatest))
	if total != "3" || !strings.Contains(adminLatest, "/.env") || strings.Contains(adminLatest, "wp-login") {
		t.Fatalf("the admin card shows %q visits and %q", total, adminLatest)
	}
	b.screenshot("admin-orphan-visits", chromedp.ScrollIntoView(`#orphans`))

	got := b.templates(t)
	for _, w := range []string{"GET /v1/analytics/orphan-visits", "GET /v1/admin/orphan-visits"} {
		if !got[w] {
			t.Errorf("the journey did not call %s", w)
		}
	}
}
