package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserLinkBadges: the Links table shows a link's title under its
// short URL and a badge for each control that matters at a glance:
// expired, used up, expires soon (with its date), clicks left, archived,
// password, rules, A/B; readable at 390 px.
func TestBrowserLinkBadges(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "clicks:\n  flush_interval: 10ms\n")
	soon := time.Now().Add(50 * time.Hour).UTC().Format(time.RFC3339)
	later := time.Now().Add(60 * 24 * time.Hour).UTC().Format(time.RFC3339)
	ended := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/ended","alias":"ended","expires_at":"`+later+`"}`, 201)
	c.must("PATCH", "/v1/links/"+ended["id"].(string), tok, `{"expires_at":"2026-01-01T00:00:00Z"}`, 200)
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/once","alias":"once","max_clicks":1}`, 201)
	followAsBrowser(t, base+"/once")
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/soon","alias":"soon","expires_at":"`+soon+`","max_clicks":5,"title":"Spring sale, last days"}`, 201)
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/later","alias":"later","expires_at":"`+later+`"}`, 201)
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/old","alias":"old","archived":true}`, 201)
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/","alias":"guarded","password":"open-sesame",
		"rules":[{"if":{"language":"de"},"then":"https://example.com/de"},{"if":{"device":"mobile"},"then":"https://example.com/m"}],
		"variants":[{"destination_url":"https://a.example/","weight":30},{"destination_url":"https://b.example/","weight":70}]}`, 201)
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/plain","alias":"plain"}`, 201)
	deadline := time.Now().Add(20 * time.Second)
	for c.must("GET", "/v1/links?search=once", tok, "", 200)["data"].([]any)[0].(map[string]any)["clicks"].(float64) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the click on /once is not counted")
		}
		time.Sleep(10 * time.Millisecond)
	}

	b := newBrowser(t, base)
	signIn(b, base)
	var rows map[string]string
	var titles map[string]string
	b.run("links with badges",
		chromedp.Navigate(base+"/app/links?archived=all"),
		chromedp.WaitVisible(`#links tr[data-alias="old"]`),
		chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#links tbody tr')].map(r =>
			[r.dataset.alias, [...r.querySelectorAll('.badge')].map(b => b.textContent).join(',')]))`, &rows),
		chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#links tbody tr')].map(r =>
			[r.dataset.alias, (r.querySelector('.link-title') || {}).textContent || '']))`, &titles))
	want := map[string]string{
		"ended":   "Expired",
		"once":    "Used up",
		"old":     "Archived",
		"guarded": "Password,2 rules,A/B 30/70",
		"plain":   "",
	}
	for alias, w := range want {
		if rows[alias] != w {
			t.Errorf("%s: badges %q, want %q", alias, rows[alias], w)
		}
	}
	if !strings.HasPrefix(rows["soon"], "Expires ") || !strings.HasSuffix(rows["soon"], ",5 of 5 clicks left") {
		t.Errorf("soon: badges %q", rows["soon"])
	}
	if !strings.HasPrefix(rows["later"], "Expires ") {
		t.Errorf("later: badges %q", rows["later"])
	}
	if titles["soon"] != "Spring sale, last days" || titles["plain"] != "" {
		t.Errorf("titles %q", titles)
	}
	// An expiry within a week is a warning; the stopped links are marked so.
	var classes map[string]string
	b.run("badge kinds", chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#links tbody tr')].map(r =>
		[r.dataset.alias, (r.querySelector('.badge') || {}).className || '']))`, &classes))
	if !strings.Contains(classes["soon"], "warn") || strings.Contains(classes["later"], "warn") ||
		!strings.Contains(classes["ended"], "bad") || !strings.Contains(classes["once"], "bad") {
		t.Errorf("badge classes %q", classes)
	}
	// At 390 px the badges stay inside the row.
	var overflow bool
	b.run("narrow",
		chromedp.EmulateViewport(390, 900),
		chromedp.WaitVisible(`#links tr[data-alias="guarded"] .badge.ab`),
		chromedp.Evaluate(`[...document.querySelectorAll('#links .badge')].some(b => b.getBoundingClientRect().right > document.documentElement.clientWidth)`, &overflow),
		chromedp.EmulateViewport(1440, 1000))
	if overflow {
		t.Error("a badge runs past the screen at 390 px")
	}
	b.screenshot("links-badges")
}
