package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserWebhookEdit edits a webhook on the Webhooks page (an invalid
// URL and no events refused at their fields, then a new URL and events
// saved, checked through the API, with the server's answer shown), and
// retries a delivery whose receiver now fails: the log shows the state the
// server answers (status, attempts, response code, last error and next
// attempt in the browser's locale).
func TestBrowserWebhookEdit(t *testing.T) {
	t.Parallel()
	browserPath(t)
	var failing atomic.Bool
	paths := make(chan string, 64)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case paths <- r.URL.Path:
		default: // the retries of a failing receiver are not read
		}
		if failing.Load() {
			http.Error(w, "receiver down for maintenance", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()

	base, c, tok := startDashboard(t, "webhooks:\n  allow_private: true\n")
	h := c.must("POST", "/v1/webhooks", tok, `{"url":"`+recv.URL+`/old","events":["link.created"],"description":"CRM sync"}`, 201)
	id := h["id"].(string)
	row := `#webhooks li[data-webhook="` + id + `"]`

	b := newBrowser(t, base)
	signIn(b, base)
	b.run("webhooks page",
		chromedp.Click(`nav[aria-label=Main] a[href="/app/webhooks"]`),
		chromedp.WaitVisible(row+` button.edit`),
		chromedp.Click(row+` button.edit`),
		chromedp.WaitVisible(`#edit-webhook-form`))
	var url string
	b.run("the form holds the webhook", chromedp.Value(`#edit_url`, &url))
	if url != recv.URL+"/old" {
		t.Fatalf("the edit form's URL: %q", url)
	}

	// An invalid URL and no events: each refusal at its field; the
	// webhook is unchanged.
	b.run("invalid edit",
		clear(`#edit_url`),
		chromedp.SendKeys(`#edit_url`, "not a url"),
		chromedp.Click(`#edit-webhook-form input[value="link.created"]`),
		chromedp.Click(`#edit-webhook-form button[type=submit]`),
		chromedp.WaitVisible(`#edit_url-error`),
		chromedp.WaitVisible(`#edit_events-error`),
		chromedp.WaitVisible(`#edit-webhook-form .msg.error`))
	var urlErr string
	b.run("the URL's error", chromedp.Text(`#edit_url-error`, &urlErr))
	if urlErr == "" {
		t.Fatal("no message at the URL")
	}
	b.screenshot("webhook-edit")
	if got := c.must("GET", "/v1/webhooks/"+id, tok, "", 200); got["url"] != recv.URL+"/old" {
		t.Fatalf("a refused edit changed the webhook: %v", got)
	}

	// A new URL and events, with the request as curl first.
	var curl, notice string
	b.run("edit",
		clear(`#edit_url`),
		chromedp.SendKeys(`#edit_url`, recv.URL+"/new"),
		chromedp.Click(`#edit-webhook-form input[value="link.clicked"]`),
		chromedp.Click(`#edit-webhook-form input[value="campaign.updated"]`),
		chromedp.Click(`#edit-webhook-form details.curl summary`),
		chromedp.Text(`#edit-webhook-form details.curl pre`, &curl),
		chromedp.Click(`#edit-webhook-form button[type=submit]`),
		chromedp.WaitNotPresent(`#edit-webhook-form`),
		chromedp.WaitVisible(`//p[contains(@class, "notice") and contains(., "The server answers")]`, chromedp.BySearch),
		chromedp.Text(`#webhooks-list ~ .msg.notice`, &notice))
	if !strings.Contains(curl, "-X PATCH") || !strings.Contains(curl, base+"/v1/webhooks/"+id) || !strings.Contains(curl, `"events":["link.clicked","campaign.updated"]`) ||
		!strings.Contains(curl, "$LINKBOLT_KEY") || strings.Contains(curl, tok) {
		t.Fatalf("copy as curl: %s", curl)
	}
	if !strings.Contains(notice, recv.URL+"/new") || !strings.Contains(notice, "events link.clicked, campaign.updated") || !strings.Contains(notice, "enabled") {
		t.Fatalf("notice after the edit: %q", notice)
	}
	got := c.must("GET", "/v1/webhooks/"+id, tok, "", 200)
	if got["url"] != recv.URL+"/new" || got["enabled"] != true || got["description"] != "CRM sync" {
		t.Fatalf("the webhook after the edit: %v", got)
	}
	if ev := fmt.Sprint(got["events"]); ev != "[link.clicked campaign.updated]" {
		t.Fatalf("events after the edit: %s", ev)
	}
	var heading string
	b.run("listed with its new URL",
		chromedp.WaitVisible(`//li[@data-webhook="`+id+`"]//h3[text()="`+recv.URL+`/new"]`, chromedp.BySearch),
		chromedp.Text(row+` h3`, &heading))
	if heading != recv.URL+"/new" {
		t.Fatalf("listed as %q", heading)
	}

	// A ping goes to the new URL and succeeds.
	log := `#deliveries-` + id
	b.run("ping",
		chromedp.Click(row+` button.ping`),
		chromedp.WaitVisible(log+` tr[data-status="succeeded"]`))
	if p := <-paths; p != "/new" {
		t.Fatalf("the ping went to %s", p)
	}
	dl := c.must("GET", "/v1/webhooks/"+id+"/deliveries", tok, "", 200)["data"].([]any)[0].(map[string]any)
	did := dl["id"].(string)
	drow := log + ` tr[data-delivery="` + did + `"]`

	// Retried while the receiver fails: the notice gives the server's
	// answer, and the log shows the failed attempt as the API has it.
	failing.Store(true)
	var retried string
	b.run("retry",
		chromedp.Click(drow+` button.retry`),
		chromedp.WaitVisible(`.deliveries .msg.notice`),
		chromedp.Text(`.deliveries .msg.notice`, &retried),
		chromedp.WaitVisible(drow+`[data-status="pending"] td.code`),
		chromedp.WaitVisible(`//tr[@data-delivery="`+did+`"]/td[contains(@class, "code") and text()="503"]`, chromedp.BySearch))
	if !strings.Contains(retried, "the server answers pending after 0 attempts") {
		t.Fatalf("notice after the retry: %q", retried)
	}
	// The page reads the log every two seconds while a delivery is pending;
	// wait until it shows what the API answers now (a further attempt may
	// land in between, so the API is read again until both agree).
	deadline := time.Now().Add(60 * time.Second)
	for {
		var d map[string]any
		for _, x := range c.must("GET", "/v1/webhooks/"+id+"/deliveries", tok, "", 200)["data"].([]any) {
			if x.(map[string]any)["id"] == did {
				d = x.(map[string]any)
			}
		}
		if d["status"] != "pending" || d["next_attempt_at"] == nil || !strings.HasPrefix(fmt.Sprint(d["last_error"]), "HTTP 503") || d["response_code"] != float64(503) {
			t.Fatalf("the retried delivery in the API: %v", d)
		}
		var same bool
		check := fmt.Sprintf(`(r => !!r && r.querySelector('td.attempts').textContent === %q && r.querySelector('td.code').textContent === "503" &&
			r.querySelector('td.error-text').textContent === %q && r.querySelector('td.next').textContent === new Date(%q).toLocaleString())(document.querySelector(%q))`,
			fmt.Sprint(d["attempts"]), d["last_error"], d["next_attempt_at"], drow)
		err := chromedp.Run(b.ctx, chromedp.Poll(check, &same, chromedp.WithPollingTimeout(3*time.Second)))
		if err == nil && same {
			break
		}
		if time.Now().After(deadline) {
			var cells string
			b.run("the row", chromedp.Text(drow, &cells))
			t.Fatalf("the log shows %q; the API answers %v", cells, d)
		}
	}

	calls := b.templates(t)
	for _, w := range []string{"PATCH /v1/webhooks/{id}", "POST /v1/webhooks/{id}/deliveries/{delivery}/retry", "GET /v1/webhooks/{id}/deliveries"} {
		if !calls[w] {
			t.Errorf("the webhook edit journey did not call %s", w)
		}
	}
}
