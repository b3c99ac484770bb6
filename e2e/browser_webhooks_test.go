package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/linkbolt/linkbolt/webhook"
)

// hookRequest is one delivery a test receiver got.
type hookRequest struct {
	event, delivery, signature string
	body                       []byte
}

// TestBrowserWebhooks drives the webhooks page against a real receiver:
// create a webhook (errors at the fields first), read its secret once,
// ping it and see the delivery succeed in the page's log, retry it, roll
// the secret and check the next delivery is signed with the new one,
// disable, delete.
func TestBrowserWebhooks(t *testing.T) {
	t.Parallel()
	browserPath(t)
	got := make(chan hookRequest, 16)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- hookRequest{r.Header.Get("Linkbolt-Event"), r.Header.Get("Linkbolt-Delivery"), r.Header.Get("Linkbolt-Signature"), body}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	next := func(what string) hookRequest {
		t.Helper()
		select {
		case r := <-got:
			return r
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no delivery reached the receiver", what)
		}
		return hookRequest{}
	}

	base, c, tok := startDashboard(t, "webhooks:\n  allow_private: true\n")

	b := newBrowser(t, base)
	b.run("sign in",
		chromedp.Navigate(base+"/app/webhooks"),
		chromedp.WaitVisible("#sign-in"),
		chromedp.SendKeys("#email", "admin@example.com"),
		chromedp.SendKeys("#password", "a long password"),
		chromedp.Click(`#sign-in button[type=submit]`),
		chromedp.WaitVisible(`nav[aria-label=Main] a[href="/app/webhooks"][aria-current=page]`),
		chromedp.WaitVisible(`#create-webhook-form`),
		chromedp.WaitVisible(`.empty`))

	// A URL that is not one and no events: each error at its field.
	b.run("bad webhook",
		chromedp.SendKeys("#url", "not a url"),
		chromedp.Click(`#create-webhook-form button[type=submit]`),
		chromedp.WaitVisible(`#url-error`),
		chromedp.WaitVisible(`#events-error`))

	// Created: the secret once, copied, and the webhook listed.
	var secret, curl string
	b.run("create webhook",
		clear("#url"),
		chromedp.SendKeys("#url", recv.URL+"/hook"),
		chromedp.SendKeys("#description", "CRM sync"),
		chromedp.Click(`#create-webhook-form input[value="link.created"]`),
		chromedp.Click(`#create-webhook-form details.curl summary`),
		chromedp.Text(`#create-webhook-form details.curl pre`, &curl),
		chromedp.Click(`#create-webhook-form button[type=submit]`),
		chromedp.WaitVisible(`#new-secret-value`),
		chromedp.Text(`#new-secret-value`, &secret),
		chromedp.WaitVisible(`#webhooks li[data-webhook]`))
	if !strings.Contains(curl, base+"/v1/webhooks") || !strings.Contains(curl, `"events":["link.created"]`) || !strings.Contains(curl, "$LINKBOLT_KEY") {
		t.Fatalf("copy as curl: %s", curl)
	}
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret on the page: %q", secret)
	}
	hooks := c.must("GET", "/v1/webhooks", tok, "", 200)["data"].([]any)
	if len(hooks) != 1 {
		t.Fatalf("%d webhooks after creating one", len(hooks))
	}
	h := hooks[0].(map[string]any)
	id := h["id"].(string)
	if h["url"] != recv.URL+"/hook" || h["description"] != "CRM sync" || h["enabled"] != true || !strings.HasPrefix(secret, h["secret_start"].(string)) {
		t.Fatalf("the webhook the page made: %v", h)
	}
	if ev := h["events"].([]any); len(ev) != 1 || ev[0] != "link.created" {
		t.Fatalf("events %v", ev)
	}
	var copied string
	b.run("copy the secret",
		chromedp.Click(`#copy-secret`),
		chromedp.WaitVisible(`//span[@class="copied" and text()="Copied"]`, chromedp.BySearch),
		chromedp.Evaluate(`navigator.clipboard.readText()`, &copied, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if copied != secret {
		t.Fatalf("the copy button copied %q, the page shows %q", copied, secret)
	}

	// A ping reaches the receiver, signed with the secret, and the log
	// shows it succeeded.
	row := `#webhooks li[data-webhook="` + id + `"]`
	log := `#deliveries-` + id
	xrow := `//li[@data-webhook="` + id + `"]`
	b.run("ping",
		chromedp.Click(row+` button.ping`),
		chromedp.WaitVisible(log+` tr[data-status="succeeded"]`))
	p := next("ping")
	if p.event != "ping" || !strings.HasPrefix(p.delivery, "dlv_") {
		t.Fatalf("ping: event %q, delivery %q", p.event, p.delivery)
	}
	if err := webhook.Verify(p.signature, secret, p.body, time.Now(), 0); err != nil {
		t.Fatalf("the ping does not verify with the secret the page showed: %v", err)
	}
	var cells string
	b.run("the log row", chromedp.Text(log+` tr[data-delivery="`+p.delivery+`"]`, &cells))
	if !strings.Contains(cells, "ping") || !strings.Contains(cells, "succeeded") || !strings.Contains(cells, "204") {
		t.Fatalf("log row: %q", cells)
	}
	b.screenshot("webhooks")

	// Retry sends the succeeded delivery again, with the same id.
	b.run("retry",
		chromedp.Click(log+` tr[data-delivery="`+p.delivery+`"] button.retry`),
		chromedp.WaitVisible(`.deliveries .msg.notice`))
	if again := next("retry"); again.delivery != p.delivery || again.event != "ping" {
		t.Fatalf("retry sent %q (%s), want %q", again.delivery, again.event, p.delivery)
	}
	b.run("retried delivery in the log", chromedp.WaitVisible(log+` tr[data-delivery="`+p.delivery+`"][data-status="succeeded"]`))

	// Roll: a new secret, shown once, signs the next delivery.
	var rolled string
	b.run("roll the secret",
		chromedp.Click(`#secret-copied`),
		chromedp.WaitNotPresent(`#new-secret-value`),
		chromedp.Click(xrow+`//button[text()="Roll secret"]`, chromedp.BySearch),
		chromedp.Click(row+` .confirm button.danger`),
		chromedp.WaitVisible(`#new-secret-value`),
		chromedp.Text(`#new-secret-value`, &rolled))
	if rolled == secret || !strings.HasPrefix(rolled, "whsec_") {
		t.Fatalf("rolled secret %q (was %q)", rolled, secret)
	}
	// The list reads itself again after the roll: wait until the card
	// shows that the old secret still signs, so the click lands on the
	// card that stays.
	b.run("ping with the new secret",
		chromedp.WaitVisible(xrow+`//small[contains(text(), "the old one also signs until")]`, chromedp.BySearch),
		chromedp.Click(row+` button.ping`),
		chromedp.WaitVisible(`//p[contains(@class, "notice") and contains(text(), "A ping is on its way")]`, chromedp.BySearch))
	p2 := next("ping after the roll")
	if p2.delivery == p.delivery {
		t.Fatalf("the second ping reused delivery %s", p.delivery)
	}
	if err := webhook.Verify(p2.signature, rolled, p2.body, time.Now(), 0); err != nil {
		t.Fatalf("the delivery after the roll does not verify with the new secret: %v (%s)", err, p2.signature)
	}
	b.run("second ping in the log", chromedp.WaitVisible(log+` tr[data-delivery="`+p2.delivery+`"][data-status="succeeded"]`))

	// Disable: the API says so and the page offers no ping.
	b.run("disable",
		chromedp.Click(row+` button.toggle`),
		chromedp.WaitVisible(row+` .state.disabled`),
		chromedp.WaitVisible(row+` button.ping[disabled]`))
	if h := c.must("GET", "/v1/webhooks/"+id, tok, "", 200); h["enabled"] != false {
		t.Fatalf("after disabling in the page: %v", h)
	}

	// Delete, after a confirmation.
	b.run("delete",
		chromedp.Click(xrow+`//button[text()="Delete"]`, chromedp.BySearch),
		chromedp.Click(row+` .confirm button.danger`),
		chromedp.WaitVisible(`#webhooks-list ~ .empty`))
	c.must("GET", "/v1/webhooks/"+id, tok, "", 404)

	calls := b.templates(t)
	for _, w := range []string{"GET /v1/webhooks", "POST /v1/webhooks", "POST /v1/webhooks/{id}/test", "GET /v1/webhooks/{id}/deliveries",
		"POST /v1/webhooks/{id}/deliveries/{delivery}/retry", "POST /v1/webhooks/{id}/secret", "PATCH /v1/webhooks/{id}", "DELETE /v1/webhooks/{id}"} {
		if !calls[w] {
			t.Errorf("the webhooks journey did not call %s", w)
		}
	}
}

// TestBrowserWebhooksOfRemovedMember: the webhooks page names who made each
// webhook, and a removed member's webhook shows disabled with the reason,
// for the owner to enable again.
func TestBrowserWebhooksOfRemovedMember(t *testing.T) {
	t.Parallel()
	base, c, tok := startDashboard(t, "webhooks:\n  allow_private: true\n")
	inv := c.must("POST", "/v1/invitations", tok, `{"email":"sam@example.com","role":"read_write"}`, 201)["token"].(string)
	joined := c.must("POST", "/v1/invitations/accept", "", `{"token":"`+inv+`","name":"Sam","password":"a long new password"}`, 201)
	sam, samID := joined["token"].(string), joined["user_id"].(string)
	samsHook := c.must("POST", "/v1/webhooks", sam, `{"url":"http://127.0.0.1:9/sam","events":["link.created"]}`, 201)["id"].(string)
	ownersHook := c.must("POST", "/v1/webhooks", tok, `{"url":"http://127.0.0.1:9/owner","events":["link.created"]}`, 201)["id"].(string)
	c.must("DELETE", "/v1/members/"+samID, tok, "", 204)

	b := newBrowser(t, base)
	samsRow, ownersRow := `#webhooks li[data-webhook="`+samsHook+`"]`, `#webhooks li[data-webhook="`+ownersHook+`"]`
	var samsBy, ownersBy, reason string
	b.run("sign in",
		chromedp.Navigate(base+"/app/webhooks"),
		chromedp.WaitVisible("#sign-in"),
		chromedp.SendKeys("#email", "admin@example.com"),
		chromedp.SendKeys("#password", "a long password"),
		chromedp.Click(`#sign-in button[type=submit]`),
		chromedp.WaitVisible(samsRow),
		chromedp.Text(samsRow+` .created-by`, &samsBy),
		chromedp.Text(ownersRow+` .created-by`, &ownersBy),
		chromedp.Text(samsRow+` .reason`, &reason))
	if samsBy != "sam@example.com" || ownersBy != "admin@example.com" {
		t.Fatalf("created by: sam's webhook %q, the owner's %q", samsBy, ownersBy)
	}
	if !strings.Contains(reason, "member who made it left or was removed") {
		t.Fatalf("reason shown: %q", reason)
	}
	b.run("states",
		chromedp.WaitVisible(samsRow+` .state.disabled`),
		chromedp.WaitVisible(ownersRow+` .state.active`))
	b.screenshot("webhooks-removed-member")

	b.run("enable again",
		chromedp.Click(samsRow+` button.toggle`),
		chromedp.WaitVisible(samsRow+` .state.active`))
	if h := c.must("GET", "/v1/webhooks/"+samsHook, tok, "", 200); h["enabled"] != true || h["disabled_reason"] != nil {
		t.Fatalf("after enabling in the page: %v", h)
	}
}
