package e2e

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
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
	browserPath(t)
	logs := &syncWriter{}
	base, _ := startApp(t, testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\nclicks:\n  flush_interval: 10ms\n"), logs)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/live","alias":"live-one"}`, 201)
	two := c.must("POST", "/v1/links", tok, `{"destination_url":"https://example.com/live2","alias":"live-two"}`, 201)["id"].(string)

	b := newBrowser(t, base)
	// A step that times out says what the server did meanwhile: the
	// stream's requests in its log, and where the server's streams and
	// database connections wait.
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(b.ctx, actions...); err != nil {
			t.Fatalf("%s: %v\nthe stream's requests:\n%s\nwaiting:\n%s", what, err, logLines(logs.String(), "/v1/events/stream"), stacks("handleClickStream", "pgxpool", "clickHub"))
		}
	}
	run("watch",
		withToken(base, "/app/analytics", tok),
		chromedp.WaitVisible(`#an-live-toggle`),
		chromedp.Click(`#an-live-toggle`),
		chromedp.WaitVisible(`#an-live-status`),
		chromedp.Poll(`document.querySelector('#an-live-status').textContent.startsWith('Watching')`, nil, livePoll...))
	followAsBrowser(t, base+"/live-one")
	followAsBrowser(t, base+"/live-two")
	var first, count string
	run("two clicks",
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
	run("stop",
		chromedp.Click(`#an-live-toggle`),
		chromedp.Poll(`document.querySelector('#an-live-toggle').textContent === 'Watch live'`, nil))
	followAsBrowser(t, base+"/live-one")

	// One link's page: its clicks only.
	var state string
	run("the link's live clicks",
		chromedp.Navigate(base+"/app/analytics?link="+two),
		chromedp.WaitVisible(`#an-live-toggle`),
		chromedp.Click(`#an-live-toggle`),
		chromedp.Poll(`(() => {
			const s = document.querySelector('#an-live-status'), e = document.querySelector('#an-live .msg.error');
			return (s && s.textContent !== 'Connecting…') || !!e;
		})()`, nil, livePoll...),
		chromedp.Evaluate(`(document.querySelector('#an-live .msg.error') || document.querySelector('#an-live-status')).textContent`, &state))
	if strings.Contains(state, "did not start within") {
		// The page gave up on a stream that said nothing; say what the
		// server did meanwhile, and watch again, as a person would.
		t.Logf("the link's stream stalled: %s\nthe stream's requests:\n%s\nwaiting:\n%s", state, logLines(logs.String(), "/v1/events/stream"), stacks("handleClickStream", "pgxpool", "clickHub"))
		run("the link's live clicks, again",
			chromedp.Click(`#an-live-toggle`),
			chromedp.Poll(`(() => {
				const s = document.querySelector('#an-live-status'), e = document.querySelector('#an-live .msg.error');
				return (s && s.textContent !== 'Connecting…') || !!e;
			})()`, nil, livePoll...),
			chromedp.Evaluate(`(document.querySelector('#an-live .msg.error') || document.querySelector('#an-live-status')).textContent`, &state))
	}
	if !strings.HasPrefix(state, "Watching") {
		t.Fatalf("the link's stream did not open: %q", state)
	}
	followAsBrowser(t, base+"/live-one")
	followAsBrowser(t, base+"/live-two")
	run("one click of the link",
		chromedp.Poll(`document.querySelectorAll('#an-live-clicks tbody tr').length === 1`, nil, livePoll...),
		chromedp.Text(`#an-live-count`, &count))
	if count != "1 click" {
		t.Fatalf("the link's count %q, want 1 click", count)
	}
	b.check()
}

// logLines returns the lines of log that hold s.
func logLines(log, s string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// stacks returns the stacks of this process's goroutines that mention
// any of frames.
func stacks(frames ...string) string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, f := range frames {
			if strings.Contains(g, f) {
				out = append(out, g)
				break
			}
		}
	}
	return strings.Join(out, "\n\n")
}

// TestBrowserLiveClicksStalled holds the stream's response back, as a
// proxy that buffers it would: the page gives up after its wait with a
// message that says why, and watching again works once the way is clear.
func TestBrowserLiveClicksStalled(t *testing.T) {
	t.Parallel()
	base, _, tok := startDashboard(t, "")
	b := newBrowser(t, base)
	var hold atomic.Bool
	hold.Store(true)
	chromedp.ListenTarget(b.ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok && !hold.Load() {
			go func() { _ = chromedp.Run(b.ctx, fetch.ContinueRequest(e.RequestID)) }()
		}
	})
	var msg string
	b.run("held back",
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(`window.linkboltLiveStartMs = 1000`).Do(ctx)
			return err
		}),
		fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*/v1/events/stream*"}}),
		withToken(base, "/app/analytics", tok),
		chromedp.WaitVisible(`#an-live-toggle`),
		chromedp.Click(`#an-live-toggle`),
		chromedp.WaitVisible(`#an-live .msg.error`),
		chromedp.Text(`#an-live .msg.error`, &msg))
	if !strings.Contains(msg, "did not start within 1 second") || !strings.Contains(msg, "proxy") {
		t.Fatalf("message %q", msg)
	}
	var toggle string
	b.run("toggle", chromedp.Text(`#an-live-toggle`, &toggle))
	if toggle != "Watch live" {
		t.Fatalf("toggle %q after giving up", toggle)
	}
	hold.Store(false)
	b.run("again",
		fetch.Disable(),
		chromedp.Click(`#an-live-toggle`),
		chromedp.Poll(`(document.querySelector('#an-live-status') || {textContent: ''}).textContent.startsWith('Watching')`, nil, livePoll...))
}
