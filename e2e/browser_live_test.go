package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// livePoll checks the page every 50 ms (not on animation frames, which a
// window the browser does not draw may not get) for up to a minute: the
// whole suite loads the machine.
var livePoll = []chromedp.PollOption{chromedp.WithPollingInterval(50 * time.Millisecond), chromedp.WithPollingTimeout(time.Minute)}

// TestBrowserLiveClicks watches the workspace's clicks live on the
// Analytics page: clicks made after "Watch live" appear, newest first,
// with their link's short URL, country, device and browser; a link's own
// page watches that link only; "Stop watching" ends the stream.
func TestBrowserLiveClicks(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "clicks:\n  flush_interval: 10ms\n")
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/live","alias":"live-one"}`, 201)
	two := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/live2","alias":"live-two"}`, 201)["id"].(string)

	b := newBrowser(t, base)
	b.run("watch",
		withToken(base, "/app/analytics", tok),
		chromedp.WaitVisible(`#an-live-toggle`),
		chromedp.Click(`#an-live-toggle`),
		chromedp.WaitVisible(`#an-live-status`),
		chromedp.Poll(`document.querySelector('#an-live-status').textContent.startsWith('Watching')`, nil, livePoll...))
	followAsBrowser(t, base+"/live-one")
	followAsBrowser(t, base+"/live-two")
	var first, count string
	b.run("two clicks",
		chromedp.Poll(`document.querySelectorAll('#an-live-clicks tbody tr').length === 2`, nil, livePoll...),
		chromedp.Poll(`document.querySelector('#an-live-clicks tbody tr td:nth-child(2)').textContent.includes('/live-two')`, nil, livePoll...),
		chromedp.Text(`#an-live-clicks tbody tr`, &first),
		chromedp.Text(`#an-live-count`, &count))
	if !strings.Contains(first, "Chrome") || !strings.Contains(first, "desktop") || !strings.Contains(first, "direct") {
		t.Fatalf("the newest row %q", first)
	}
	if count != "2 clicks" {
		t.Fatalf("count %q, want 2 clicks", count)
	}
	b.screenshot("analytics-live")
	b.run("stop",
		chromedp.Click(`#an-live-toggle`),
		chromedp.Poll(`document.querySelector('#an-live-toggle').textContent === 'Watch live'`, nil))
	followAsBrowser(t, base+"/live-one")

	// One link's page: its clicks only.
	var state string
	b.run("the link's live clicks",
		chromedp.Navigate(base+"/app/analytics?link="+two),
		chromedp.WaitVisible(`#an-live-toggle`),
		chromedp.Click(`#an-live-toggle`),
		chromedp.Poll(`(() => {
			const s = document.querySelector('#an-live-status'), e = document.querySelector('#an-live .msg.error');
			return (s && s.textContent !== 'Connecting…') || !!e;
		})()`, nil, livePoll...),
		chromedp.Evaluate(`(document.querySelector('#an-live .msg.error') || document.querySelector('#an-live-status')).textContent`, &state))
	if !strings.HasPrefix(state, "Watching") {
		t.Fatalf("the link's stream did not open: %q", state)
	}
	followAsBrowser(t, base+"/live-one")
	followAsBrowser(t, base+"/live-two")
	b.run("one click of the link",
		chromedp.Poll(`document.querySelectorAll('#an-live-clicks tbody tr').length === 1`, nil, livePoll...),
		chromedp.Text(`#an-live-count`, &count))
	if count != "1 click" {
		t.Fatalf("the link's count %q, want 1 click", count)
	}
	b.check()
}
