package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserImport moves links in from a generic CSV on the Import page:
// a dry run says what would be imported and why a broken row would not,
// changing nothing; the import creates the links with their click totals;
// a second dry run says they are already imported. An API source's
// missing address is shown at its field, and Copy as curl holds neither
// the file nor the API key.
func TestBrowserImport(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	csv := filepath.Join(t.TempDir(), "links.csv")
	if err := os.WriteFile(csv, []byte("url,alias,tags,title,created_at,clicks\n"+
		"https://example.com/spring,spring,\"sale, 2024\",Spring sale,2024-03-01T10:00:00Z,42\n"+
		"https://example.com/summer,summer,,Summer,2024-06-01T10:00:00Z,7\n"+
		"https://example.com/autumn,,,,,\n"+
		",broken,,No address,,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, base)
	signIn(b, base)
	b.run("open the Import page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/import"]`),
		chromedp.WaitVisible(`#import-form`))

	// Nothing chosen: told at the field, nothing sent.
	b.run("dry run without a file",
		chromedp.Click(`#dry-run`),
		chromedp.WaitVisible(`#import-file-error`))

	var summary, failed string
	b.run("dry run",
		chromedp.SetUploadFiles(`#import-file`, []string{csv}),
		chromedp.WaitVisible(`#import-file-hint`),
		chromedp.Click(`#dry-run`),
		chromedp.WaitVisible(`#import-result[data-dry-run="true"] #import-summary`),
		chromedp.Text(`#import-summary`, &summary),
		chromedp.Text(`#import-items tr.failed`, &failed))
	if !strings.HasPrefix(summary, "Would import 3 links, 0 skipped, 1 failed") {
		t.Fatalf("dry run summary %q", summary)
	}
	if !strings.Contains(failed, "line 5") || !strings.Contains(strings.ToLower(failed), "url") {
		t.Fatalf("the broken row says %q, want line 5 and why (no URL)", failed)
	}
	if total := c.must("GET", "/v1/links", tok, "", 200)["meta"].(map[string]any)["total"]; total != float64(0) {
		t.Fatalf("%v links after a dry run, want none", total)
	}
	b.screenshot("import")

	var curl string
	b.run("copy as curl",
		chromedp.Click(`#import-form details.curl summary`),
		chromedp.Text(`#import-form details.curl pre`, &curl))
	if !strings.Contains(curl, base+"/v1/imports") || !strings.Contains(curl, "$LINKBOLT_KEY") || !strings.Contains(curl, `"from":"csv"`) ||
		!strings.Contains(curl, "<the text of links.csv>") || strings.Contains(curl, "example.com/spring") || strings.Contains(curl, tok) {
		t.Fatalf("copy as curl: %s", curl)
	}

	b.run("import",
		chromedp.Click(`#import-now`),
		chromedp.WaitVisible(`#import-done-links`),
		chromedp.Text(`#import-summary`, &summary))
	if !strings.HasPrefix(summary, "Imported 3 links, 0 skipped, 1 failed, 49 clicks came with them") {
		t.Fatalf("import summary %q", summary)
	}
	links := c.must("GET", "/v1/links?search=example.com", tok, "", 200)
	if total := links["meta"].(map[string]any)["total"]; total != float64(3) {
		t.Fatalf("%v links after the import, want 3", total)
	}
	spring := c.must("GET", "/v1/links?search=spring", tok, "", 200)["data"].([]any)
	if len(spring) != 1 || spring[0].(map[string]any)["alias"] != "spring" || spring[0].(map[string]any)["clicks"] != float64(42) {
		t.Fatalf("the spring link: %v", spring)
	}

	var already string
	b.run("dry run again",
		chromedp.Click(`#dry-run`),
		chromedp.WaitVisible(`#import-result[data-dry-run="true"] #import-summary`),
		chromedp.Text(`#import-summary`, &summary),
		chromedp.Text(`#import-items tr.exists`, &already))
	if !strings.HasPrefix(summary, "Would import 0 links") || !strings.Contains(summary, "3 links were already imported before") || !strings.Contains(already, "already imported") {
		t.Fatalf("second dry run: %q, first row %q", summary, already)
	}
	if total := c.must("GET", "/v1/links", tok, "", 200)["meta"].(map[string]any)["total"]; total != float64(3) {
		t.Fatalf("%v links after the second dry run, want 3", total)
	}

	// An API source: the address missing is said at its field, and the
	// key typed never reaches Copy as curl.
	b.run("Shlink without an address",
		chromedp.SetValue(`#import-from`, "shlink"),
		chromedp.Evaluate(`document.querySelector('#import-from').dispatchEvent(new Event('change', {bubbles: true}))`, nil),
		chromedp.WaitVisible(`#api_key`),
		chromedp.SendKeys(`#api_key`, "shlink-secret-key-123"),
		chromedp.Click(`#dry-run`),
		chromedp.WaitVisible(`#url-error`),
		chromedp.TextContent(`#import-form details.curl pre`, &curl))
	if strings.Contains(curl, "shlink-secret-key-123") || !strings.Contains(curl, "<your Shlink API key>") {
		t.Fatalf("copy as curl for Shlink: %s", curl)
	}
	b.screenshot("import-shlink")
	b.check()
}
