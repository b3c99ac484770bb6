package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/webhook"
)

// TestRemovedMembersWebhooksStop reproduces the attack of issue 24, item 5:
// a removed member's webhooks kept sending the workspace's events to them,
// and nothing told the owner whose they were. Removal disables the
// webhooks the member made (directly or through their keys); they stay
// listed with created_by for an owner to delete or enable again, and the
// removal's audit entry names them.
func TestRemovedMembersWebhooksStop(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, allowPrivateTargets)
	var mu sync.Mutex
	got := map[string]int{} // path → deliveries
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path]++
		mu.Unlock()
	}))
	defer recv.Close()
	received := func() map[string]int {
		t.Helper()
		d := &webhook.Dispatcher{Store: e.srv.webhooks, Now: e.clock.Now, Client: webhook.NewClient(true)}
		for range 3 {
			if _, err := d.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range got {
			out[k] = v
		}
		clear(got)
		return out
	}
	hook := func(cred, path string) string {
		t.Helper()
		return e.do("POST", "/v1/webhooks", cred, `{"url":"`+recv.URL+path+`","events":["link.created"]}`, 201).str("id")
	}

	sam, samID := e.join("sam@example.com", "read_write")
	samKey := e.do("POST", "/v1/keys", sam, `{"name":"sam's script","scope":"read_write"}`, 201)
	bySam, byKey, byOwner := hook(sam, "/sam"), hook(samKey.str("key"), "/sam-key"), hook(e.adminToken, "/owner")

	// created_by names who made each, by e-mail or key name.
	wh := e.do("GET", "/v1/webhooks/"+bySam, e.readKey, "", 200)
	if got, want := fmt.Sprint(wh.path("created_by")), fmt.Sprintf("map[id:%s name:sam@example.com type:user]", samID); got != want {
		t.Fatalf("created_by = %s, want %s", got, want)
	}
	wh = e.do("GET", "/v1/webhooks/"+byKey, e.readKey, "", 200)
	if got, want := fmt.Sprint(wh.path("created_by")), fmt.Sprintf("map[id:%s name:sam's script type:key]", samKey.str("id")); got != want {
		t.Fatalf("created_by = %s, want %s", got, want)
	}

	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/before"}`, 201)
	if r := received(); r["/sam"] != 1 || r["/sam-key"] != 1 || r["/owner"] != 1 {
		t.Fatalf("before the removal: %v, want one event each", r)
	}

	e.do("DELETE", "/v1/members/"+samID, e.adminToken, "", 204)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/after"}`, 201)
	if r := received(); r["/sam"] != 0 || r["/sam-key"] != 0 || r["/owner"] != 1 {
		t.Fatalf("after the removal: %v, want events for the owner's webhook only", r)
	}
	for _, id := range []string{bySam, byKey} {
		wh := e.do("GET", "/v1/webhooks/"+id, e.adminToken, "", 200)
		if wh.path("enabled") != false || wh.str("disabled_reason") != link.WebhookCreatorRemoved {
			t.Fatalf("webhook %s after the removal: %s", id, wh.raw)
		}
		if wh.path("created_by") == nil {
			t.Fatalf("webhook %s lost created_by: %s", id, wh.raw)
		}
	}
	entry := e.do("GET", "/v1/audit-log?action=member.removed", e.adminToken, "", 200).path("data").([]any)[0].(map[string]any)
	ch, _ := entry["changes"].(map[string]any)["webhooks_disabled"].([]any)
	if len(ch) != 2 || !strings.Contains(fmt.Sprint(ch[1]), bySam) || !strings.Contains(fmt.Sprint(ch[1]), byKey) || strings.Contains(fmt.Sprint(ch[1]), byOwner) {
		t.Fatalf("webhooks_disabled = %v, want %s and %s", ch, bySam, byKey)
	}
	disabled := e.do("GET", "/v1/audit-log?action=webhook.disabled", e.adminToken, "", 200).path("data").([]any)
	if len(disabled) != 2 {
		t.Fatalf("%d webhook.disabled entries, want 2", len(disabled))
	}

	// Nothing queued meanwhile: enabled again by the owner, the webhook gets
	// the events from then on only.
	e.do("PATCH", "/v1/webhooks/"+bySam, e.adminToken, `{"enabled":true}`, 200)
	if r := received(); r["/sam"] != 0 {
		t.Fatalf("enabled again, it got %d events from while it was disabled", r["/sam"])
	}
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/again"}`, 201)
	if r := received(); r["/sam"] != 1 || r["/sam-key"] != 0 {
		t.Fatalf("after enabling: %v", r)
	}
}

// slowTargets is a webhook target check (a DNS lookup, in a server) that,
// armed, holds a URL with "/slow" in it until the test lets it go, as a
// member's own name server may.
type slowTargets struct {
	armed            *atomic.Bool
	entered, release chan struct{}
}

func (s slowTargets) CheckWebhookTarget(ctx context.Context, url string) error {
	if strings.Contains(url, "/slow") && s.armed.Load() {
		s.entered <- struct{}{}
		<-s.release
	}
	return nil
}

// TestRemovedMemberRequestInFlight: a member's request that began before
// their removal and saved after it, its webhook URL held by a slow name
// server of theirs, made a webhook that the removal never saw, enabled
// again one it had disabled, or pointed the owner's webhook at them; each
// sent the workspace's events to the removed member from then on. What
// outlasts the request is saved only while its maker may still act.
func TestRemovedMemberRequestInFlight(t *testing.T) {
	slow := slowTargets{armed: new(atomic.Bool), entered: make(chan struct{}), release: make(chan struct{})}
	e := newEnvWith(t, func(d *Deps) { d.WebhookTargets = slow })
	// inFlight sends the request, removes the member while its URL is
	// being checked, and returns the answer.
	inFlight := func(method, path, cred, body, memberID string) *httptest.ResponseRecorder {
		t.Helper()
		slow.armed.Store(true)
		defer slow.armed.Store(false)
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			e.srv.ServeHTTP(rec, newRequest(method, path, cred, body))
		}()
		<-slow.entered
		e.do("DELETE", "/v1/members/"+memberID, e.adminToken, "", 204)
		slow.release <- struct{}{}
		<-done
		return rec
	}
	webhooks := func() map[string]map[string]any {
		t.Helper()
		out := map[string]map[string]any{}
		for _, it := range e.do("GET", "/v1/webhooks", e.adminToken, "", 200).path("data").([]any) {
			m := it.(map[string]any)
			out[m["url"].(string)] = m
		}
		return out
	}

	// A webhook made in flight.
	sam, samID := e.join("sam@example.com", "read_write")
	rec := inFlight("POST", "/v1/webhooks", sam, `{"url":"https://sam.example/slow/new","events":["link.created"]}`, samID)
	if wh, ok := webhooks()["https://sam.example/slow/new"]; ok && wh["enabled"] == true {
		t.Fatalf("made in flight: %d %s; the webhook is enabled: %v", rec.Code, rec.Body, wh)
	}
	if rec.Code != 403 {
		t.Fatalf("made in flight: %d %s, want 403", rec.Code, rec.Body)
	}

	// A webhook of the member enabled in flight.
	pat, patID := e.join("pat@example.com", "read_write")
	e.do("POST", "/v1/webhooks", pat, `{"url":"https://pat.example/slow/hook","events":["link.created"]}`, 201)
	rec = inFlight("PATCH", "/v1/webhooks/"+webhooks()["https://pat.example/slow/hook"]["id"].(string), pat, `{"enabled":true}`, patID)
	if wh := webhooks()["https://pat.example/slow/hook"]; wh["enabled"] != false || wh["disabled_reason"] != link.WebhookCreatorRemoved {
		t.Fatalf("enabled in flight: %d %s; the webhook: %v", rec.Code, rec.Body, wh)
	}
	if rec.Code != 403 {
		t.Fatalf("enabled in flight: %d %s, want 403", rec.Code, rec.Body)
	}

	// The owner's webhook pointed at the member in flight, with their key.
	kim, kimID := e.join("kim@example.com", "read_write")
	kimKey := e.do("POST", "/v1/keys", kim, `{"name":"kim's script","scope":"read_write"}`, 201).str("key")
	owners := e.do("POST", "/v1/webhooks", e.adminToken, `{"url":"https://owner.example/hook","events":["link.created"]}`, 201).str("id")
	rec = inFlight("PATCH", "/v1/webhooks/"+owners, kimKey, `{"url":"https://kim.example/slow/steal"}`, kimID)
	if wh := e.do("GET", "/v1/webhooks/"+owners, e.adminToken, "", 200); wh.str("url") != "https://owner.example/hook" {
		t.Fatalf("pointed elsewhere in flight: %d %s; the webhook: %s", rec.Code, rec.Body, wh.raw)
	}
	if rec.Code != 403 {
		t.Fatalf("pointed elsewhere in flight: %d %s, want 403", rec.Code, rec.Body)
	}
}
