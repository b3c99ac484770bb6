package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The user agents of Instagram's in-app browser, as the app sends them.
const (
	uaInstagramIPhone  = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 361.0.0.35.82 (iPhone14,5; iOS 18_1_1; en_US; en; scale=3.00; 1170x2532; 674117118)"
	uaInstagramAndroid = "Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36 Instagram 357.0.0.25.101 Android (34/14; 480dpi; 1080x2340; samsung; SM-S918B; dm3q; qcom; en_US; 658543098)"
	uaDesktopChrome    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)

// TestBrowserLinkInterstitials sets the workspace's retargeting pixels on
// the Workspace page (a malformed ID refused at its field), creates a link
// that leaves in-app browsers and fires the pixels in the link editor,
// follows it as Instagram on Android and iOS and as a desktop browser,
// opens the iOS page in the browser, and unticks the pixels in the edit
// form.
func TestBrowserLinkInterstitials(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	signIn(b, base)

	b.run("workspace page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/settings"]`),
		chromedp.WaitVisible(`#pixels-form`),
		chromedp.SendKeys(`#ws-pixel-meta`, "12345"),
		chromedp.SendKeys(`#ws-pixel-google`, "g-ab12cd34ef"),
		chromedp.Click(`#pixels-form button[type=submit]`),
		chromedp.WaitVisible(`#pixels-form .field-error`))
	var msg string
	b.run("field error", chromedp.Text(`#pixels-form .field-error`, &msg))
	if !strings.Contains(msg, "10 to 20 digits") {
		t.Fatalf("field error %q", msg)
	}
	b.run("fix",
		chromedp.SendKeys(`#ws-pixel-meta`, strings.Repeat(kb.Backspace, 5)+"1234567890123456"),
		chromedp.Click(`#pixels-form button[type=submit]`),
		chromedp.WaitVisible(`#pixels-form .msg.notice`))
	var google string
	b.run("normalised", chromedp.Value(`#ws-pixel-google`, &google))
	if google != "G-AB12CD34EF" {
		t.Fatalf("Google tag shown as %q", google)
	}
	b.screenshot("workspace-pixels", chromedp.ScrollIntoView(`#pixels-form`))
	me := c.must("GET", "/v1/me", tok, "", 200)
	wsID := me["workspaces"].([]any)[0].(map[string]any)["id"].(string)
	px := c.must("GET", "/v1/workspaces/"+wsID, tok, "", 200)["pixels"].(map[string]any)
	if px["meta"] != "1234567890123456" || px["google"] != "G-AB12CD34EF" || px["linkedin"] != "" {
		t.Fatalf("stored pixels: %v", px)
	}

	b.run("links page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/links"]`),
		chromedp.WaitVisible(`#create-link-form`),
		chromedp.SendKeys("#destination_url", "https://example.com/spring-sale"),
		chromedp.SendKeys("#alias", "sale"),
		chromedp.Click(`#create-link-form details.more summary`),
		chromedp.WaitVisible(`#escape_in_app_browser`),
		chromedp.Click(`#escape_in_app_browser`),
		chromedp.Click(`#retargeting`))
	b.screenshot("link-interstitials", chromedp.ScrollIntoView(`#retargeting`))
	b.run("submit",
		chromedp.Click(`#create-link-form button[type=submit]`),
		chromedp.WaitVisible(`#links tr[data-alias="sale"]`))
	l := c.must("GET", "/v1/links?search=sale", tok, "", 200)["data"].([]any)[0].(map[string]any)
	if l["escape_in_app_browser"] != true || l["retargeting"] != true {
		t.Fatalf("stored link: %v", l)
	}

	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	visit := func(path, ua string) (int, string, string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("User-Agent", ua)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Content-Security-Policy"), string(body)
	}
	if code, _, csp, body := visit("/sale", uaInstagramAndroid); code != 200 || !strings.Contains(body, `data-next="intent://example.com/spring-sale#Intent;scheme=https;`) ||
		!strings.Contains(body, `data-meta="1234567890123456"`) || !strings.Contains(csp, "https://connect.facebook.net") {
		t.Fatalf("Instagram on Android: %d %s\n%s", code, csp, body)
	}
	if code, _, _, body := visit("/sale", uaDesktopChrome); code != 200 || !strings.Contains(body, `data-next="https://example.com/spring-sale"`) {
		t.Fatalf("a desktop browser: %d %s", code, body)
	}

	// Without pixels, the iOS page as a visitor in Instagram sees it.
	b.run("untick the pixels",
		chromedp.Click(`#links tr[data-alias="sale"] button.edit`),
		chromedp.WaitVisible(`#edit_retargeting`),
		chromedp.Click(`#edit_retargeting`),
		chromedp.Click(`#edit-link-form button[type=submit]`),
		chromedp.WaitVisible(`.answer`))
	if code, loc, _, _ := visit("/sale", uaDesktopChrome); code != 302 || loc != "https://example.com/spring-sale" {
		t.Fatalf("unticked, a desktop browser: %d %q", code, loc)
	}
	b.run("as Instagram on an iPhone",
		emulation.SetUserAgentOverride(uaInstagramIPhone),
		chromedp.Navigate(base+"/sale"),
		chromedp.WaitVisible(`#open`))
	var href string
	var ok bool
	b.run("the Safari button", chromedp.AttributeValue(`#open`, "href", &href, &ok))
	if href != "x-safari-https://example.com/spring-sale" {
		t.Fatalf("Open in Safari goes to %q", href)
	}
	b.screenshot("link-in-app-ios")
	b.run("user agent back", emulation.SetUserAgentOverride(uaDesktopChrome))
	c.must("GET", "/v1/links/"+l["id"].(string), tok, "", 200)
}
