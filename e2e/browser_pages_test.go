package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// bareChromium starts a Chromium tab without the dashboard harness of
// newBrowser, for pages that fail on purpose (a script refused).
func bareChromium(t *testing.T) context.Context {
	t.Helper()
	ctx, _ := newTab(t, time.Minute)
	return ctx
}

// TestBrowserPasswordLinkPage: the password link's page runs its own
// script under its CSP (by hash), which forbids every other inline one.
func TestBrowserPasswordLinkPage(t *testing.T) {
	t.Parallel()
	browserPath(t)
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	base, _ := startApp(t, cfg, nil)
	ctx := bareChromium(t)
	var msg string
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/auth/reset-password?token=not-a-token"),
		chromedp.WaitVisible("#f"),
		chromedp.SendKeys("#password", "a new long password"),
		chromedp.Click(`#f button[type=submit]`),
		chromedp.Poll(`document.getElementById('msg').textContent`, &msg))
	if err != nil {
		t.Fatal(err)
	}
	if msg == "" {
		t.Fatal("the form's script did not answer")
	}
	var ran bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => { const s = document.createElement('script'); s.textContent = 'window.injected = true'; document.body.append(s); return window.injected === true })()`, &ran)); err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Fatal("an inline script added to the page ran")
	}
}
