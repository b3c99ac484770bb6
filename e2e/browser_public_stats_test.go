package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserPublicStats ticks "Public statistics" in the link form,
// follows the short link, reads the public address the edit form shows,
// opens the public page in the browser (no sign-in needed), and unticks the
// switch, after which the page answers as an unknown code.
func TestBrowserPublicStats(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "clicks:\n  flush_interval: 10ms\n")
	b := newBrowser(t, base)
	signIn(b, base)
	b.run("links page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`))
	b.run("create",
		chromedp.SendKeys("#destination_url", "https://example.com/launch-secret"),
		chromedp.SendKeys("#alias", "launch"),
		chromedp.Click(`#create-link-form details.more summary`),
		chromedp.WaitVisible(`#public_stats`),
		chromedp.Click(`#public_stats`),
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="launch"]`))
	l := c.must("GET", "/v1/links?search=launch", tok, "", 200)["data"].([]any)[0].(map[string]any)
	if l["public_stats"] != true {
		t.Fatalf("stored link: %v", l)
	}
	const clicks = 3
	for range clicks {
		followAsBrowser(t, base+"/launch")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := c.must("GET", "/v1/public/links/"+l["domain"].(string)+"/launch/stats", "", "", 200)["totals"].(map[string]any)["clicks"].(float64)
		if got == clicks {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the public statistics count %v clicks, want %d", got, clicks)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The edit form shows the public address to copy.
	b.run("edit",
		chromedp.Click(`#links tr[data-alias="launch"] button.edit`),
		chromedp.WaitVisible(`#edit_public_stats_url`))
	var shown string
	b.run("address", chromedp.Text(`#edit_public_stats_url`, &shown))
	if want := l["short_url"].(string) + "/stats"; shown != want {
		t.Fatalf("the public address shown: %q, want %q", shown, want)
	}
	b.screenshot("link-public-stats", chromedp.ScrollIntoView(`#edit_public_stats_url`))

	// The public page, in a browser with no sign-in needed.
	page := newBrowser(t, base)
	page.run("public page",
		chromedp.Navigate(base+"/launch/stats"),
		chromedp.WaitVisible(`#stats-clicks`))
	var total, body string
	page.run("read", chromedp.Text(`#stats-clicks`, &total), chromedp.Text(`body`, &body))
	if total != "3" || strings.Contains(body, "launch-secret") || !strings.Contains(body, "Chrome") {
		t.Fatalf("the public page: clicks %q: %s", total, body)
	}
	page.screenshot("public-stats-page")

	// Unticked: the page answers as an unknown code.
	b.run("untick",
		chromedp.Click(`#edit_public_stats`),
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(`.answer`))
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	code, off := get("/launch/stats")
	unknownCode, unknown := get("/nosuch/stats")
	if code != 404 || unknownCode != 404 || strings.ReplaceAll(off, "launch", "nosuch") != unknown {
		t.Fatalf("after unticking: %d %s\nunknown: %d %s", code, off, unknownCode, unknown)
	}
}
