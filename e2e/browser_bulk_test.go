package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserBulk creates links from "Create many links at once" on the
// Links page: one destination a
// line with an optional alias after a space or a comma; each line shows
// its short URL or its own error (an alias already taken, an invalid
// destination, words past the alias), and Copy as curl shows the request
// with a key placeholder.
func TestBrowserBulk(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/taken","alias":"taken"}`, 201)

	b := newBrowser(t, base)
	signIn(b, base)
	b.run("bulk form on the Links page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.Click(`#create-many > summary`),
		chromedp.WaitVisible(`#bulk-form`))

	// Nothing entered: told so, nothing sent.
	b.run("submit empty",
		chromedp.Click(`#bulk-form button[type=submit]`),
		chromedp.WaitVisible(`#bulk-form .msg.error`))

	lines := "https://example.com/spring spring-sale\n\n  https://example.com/summer,summer-sale\nhttps://example.com/autumn\nhttps://example.com/again taken\njavascript:alert(1)\n"
	var summary, button string
	b.run("create",
		chromedp.SendKeys(`#bulk-lines`, lines),
		chromedp.Text(`#bulk-form button[type=submit]`, &button),
		chromedp.Click(`#bulk-form button[type=submit]`),
		chromedp.WaitVisible(`#bulk-summary`),
		chromedp.Text(`#bulk-summary`, &summary))
	if button != "Create 5 links" {
		t.Fatalf("button %q, want it to count the 5 non-empty lines", button)
	}
	if summary != "3 links created, 2 refused." {
		t.Fatalf("summary %q", summary)
	}
	var rows []string
	for i := 1; i <= 5; i++ {
		var row string
		b.run("result row", chromedp.Text(`#bulk-results tbody tr:nth-child(`+string(rune('0'+i))+`)`, &row))
		rows = append(rows, row)
	}
	for i, want := range []struct{ line, result string }{
		{"1\thttps://example.com/spring\t", "/spring-sale"}, {"3\thttps://example.com/summer\t", "/summer-sale"},
		{"4\thttps://example.com/autumn\t", "http://"}, {"5\thttps://example.com/again\t", "already taken"},
		{"6\tjavascript:alert(1)\t", "destination_url: must be"},
	} {
		line, result, _ := strings.Cut(rows[i], want.line)
		if line != "" || !strings.Contains(result, want.result) {
			t.Errorf("row %d: %q, want %q then %q", i+1, rows[i], want.line, want.result)
		}
	}
	if !strings.Contains(rows[3], "taken") {
		t.Errorf("the taken alias's row says %q", rows[3])
	}
	links := c.must("GET", "/v1/links?search=example.com", tok, "", 200)
	if total := links["meta"].(map[string]any)["total"]; total != float64(4) {
		t.Fatalf("%v links hold example.com, want 4 (taken and the 3 created)", total)
	}
	for _, a := range []string{"spring-sale", "summer-sale"} {
		l := c.must("GET", "/v1/links?search="+a, tok, "", 200)["data"].([]any)
		if len(l) != 1 || l[0].(map[string]any)["alias"] != a {
			t.Fatalf("search %s: %v", a, l)
		}
	}

	var curl string
	b.run("copy as curl",
		chromedp.Click(`#bulk-form details.curl summary`),
		chromedp.Text(`#bulk-form details.curl pre`, &curl))
	if !strings.Contains(curl, "$LINKBOLT_KEY") || !strings.Contains(curl, base+"/v1/links/bulk") || !strings.Contains(curl, `"alias":"spring-sale"`) || strings.Contains(curl, tok) {
		t.Fatalf("copy as curl: %s", curl)
	}
	b.check()
}

// TestBrowserBulkLineOfMoreParts: a line of more than a destination and an
// alias (a URL whose query holds commas, a URL with spaces not written
// %20) is named and nothing is sent, rather than read as a cut URL and an
// alias: https://example.com/?ids=1,2,3 would have made a link to
// https://example.com/?ids=1 with the alias 2.
func TestBrowserBulkLineOfMoreParts(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)
	b.run("bulk form on the Links page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.Click(`#create-many > summary`),
		chromedp.WaitVisible(`#bulk-form`))

	var msg string
	b.run("submit a line of three parts",
		chromedp.SendKeys(`#bulk-lines`, "https://example.com/fine fine-alias\nhttps://example.com/?ids=1,2,3\nhttps://example.com/my spring page\n,https://example.com/lead-comma,\n"),
		chromedp.Click(`#bulk-form button[type=submit]`),
		chromedp.WaitVisible(`#bulk-form .msg.error`),
		chromedp.Text(`#bulk-form .msg.error`, &msg))
	if !strings.Contains(msg, "Lines 2, 3 hold more than a destination and an alias") || !strings.Contains(msg, "Nothing was sent") {
		t.Fatalf("message %q, want lines 2 and 3 named (line 4's commas around the URL are separators)", msg)
	}
	links := c.must("GET", "/v1/links", tok, "", 200)
	if total := links["meta"].(map[string]any)["total"]; total != float64(0) {
		t.Fatalf("%v links created, want none", total)
	}
	b.check()
}
