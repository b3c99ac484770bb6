package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/dnscheck"
	"github.com/linkbolt/linkbolt/webhook"
)

// allowPrivateTargets lets webhooks target the test's own receivers on
// loopback (webhooks.allow_private).
func allowPrivateTargets(d *Deps) { d.WebhookTargets = webhook.TargetGuard{AllowPrivate: true} }

func TestWebhooksAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Targets on special addresses are refused at creation.
	for _, u := range []string{"http://127.0.0.1/x", "http://[::1]/x", "http://10.1.2.3/x", "http://169.254.169.254/latest/meta-data",
		"http://localhost:9/x", "ftp://example.com/", "not a url"} {
		r := e.request(newRequest("POST", "/v1/webhooks", e.writeKey, `{"url":"`+u+`","events":["link.created"]}`))
		wantProblem(t, r, 422, "validation_failed")
		if r.path("errors", 0, "field") != "url" {
			t.Fatalf("%s: %s", u, r.raw)
		}
	}
	wantProblem(t, e.request(newRequest("POST", "/v1/webhooks", e.writeKey, `{"url":"https://93.184.215.14/hook","events":["link.exploded"]}`)), 422, "validation_failed")
	wantProblem(t, e.request(newRequest("POST", "/v1/webhooks", e.writeKey, `{"url":"https://93.184.215.14/hook","events":[]}`)), 422, "validation_failed")
	wantProblem(t, e.request(newRequest("POST", "/v1/webhooks", e.readKey, `{"url":"https://93.184.215.14/hook","events":["link.created"]}`)), 403, "forbidden")

	c := e.do("POST", "/v1/webhooks", e.writeKey, `{"url":"https://93.184.215.14/hook","events":["link.created","link.created"],"description":"CRM"}`, 201)
	id, secret := c.str("id"), c.str("secret")
	if !strings.HasPrefix(secret, "whsec_") || c.path("enabled") != true || len(c.path("events").([]any)) != 1 {
		t.Fatalf("created: %s", c.raw)
	}
	g := e.do("GET", "/v1/webhooks/"+id, e.readKey, "", 200)
	if strings.Contains(string(g.raw), secret) || !strings.HasPrefix(secret, g.str("secret_start")) {
		t.Fatalf("the secret is shown again: %s", g.raw)
	}
	if strings.Contains(string(e.do("GET", "/v1/webhooks", e.readKey, "", 200).raw), secret) {
		t.Fatal("the secret is listed")
	}
	roll := e.do("POST", "/v1/webhooks/"+id+"/secret", e.writeKey, "", 200)
	if roll.str("secret") == secret || roll.path("previous_secret_expires_at") == nil {
		t.Fatalf("roll: %s", roll.raw)
	}
	e.do("PATCH", "/v1/webhooks/"+id, e.writeKey, `{"events":["link.created","link.clicked"],"enabled":false}`, 200)
	wantProblem(t, e.request(newRequest("PATCH", "/v1/webhooks/"+id, e.writeKey, `{"url":"http://127.0.0.1/"}`)), 422, "validation_failed")
	wantProblem(t, e.request(newRequest("POST", "/v1/webhooks/"+id+"/test", e.writeKey, "")), 409, "conflict")

	// Another workspace sees nothing.
	for _, p := range []string{"/v1/webhooks/" + id, "/v1/webhooks/" + id + "/deliveries"} {
		wantProblem(t, e.request(newRequest("GET", p, e.otherKey, "")), 404, "not_found")
	}
	wantProblem(t, e.request(newRequest("DELETE", "/v1/webhooks/"+id, e.otherKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("POST", "/v1/webhooks/"+id+"/test", e.otherKey, "")), 404, "not_found")
	e.do("DELETE", "/v1/webhooks/"+id, e.writeKey, "", 204)
	wantProblem(t, e.request(newRequest("GET", "/v1/webhooks/"+id, e.readKey, "")), 404, "not_found")
}

// TestWebhookDelivery runs the whole path on a real receiver: a link change
// and a ping reach it signed, in order, and show in the delivery log.
func TestWebhookDelivery(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, allowPrivateTargets)
	var mu sync.Mutex
	var got []map[string]any
	var headers []http.Header
	var bodies [][]byte
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		mu.Lock()
		got, headers, bodies = append(got, m), append(headers, r.Header.Clone()), append(bodies, b)
		mu.Unlock()
	}))
	defer recv.Close()
	c := e.do("POST", "/v1/webhooks", e.writeKey, `{"url":"`+recv.URL+`/hook","events":["link.created","link.deleted"]}`, 201)
	id, secret := c.str("id"), c.str("secret")
	lid := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"hooked"}`, 201).str("id")
	e.do("PATCH", "/v1/links/"+lid, e.writeKey, `{"tags":["a"]}`, 200) // not subscribed
	e.do("DELETE", "/v1/links/"+lid, e.writeKey, "", 204)
	ping := e.do("POST", "/v1/webhooks/"+id+"/test", e.writeKey, "", 202)

	d := &webhook.Dispatcher{Store: e.srv.webhooks, Now: e.clock.Now, Client: webhook.NewClient(true)}
	for i := 0; i < 3; i++ {
		if _, err := d.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var types []string
	for i, m := range got {
		types = append(types, m["type"].(string))
		if err := webhook.Verify(headers[i].Get("Linkbolt-Signature"), secret, bodies[i], e.clock.Now(), 0); err != nil {
			t.Fatalf("signature of %v: %v", m["type"], err)
		}
		if headers[i].Get("Linkbolt-Event") != m["type"] || !strings.HasPrefix(headers[i].Get("Linkbolt-Delivery"), "dlv_") {
			t.Fatalf("headers: %v", headers[i])
		}
	}
	if strings.Join(types, ",") != "link.created,link.deleted,ping" {
		t.Fatalf("received %v", types)
	}
	if data := got[0]["data"].(map[string]any); data["id"] != lid || data["short_url"] != "http://lb.test/hooked" || got[0]["workspace_id"] != e.ws {
		t.Fatalf("link.created body: %v", got[0])
	}
	log := e.do("GET", "/v1/webhooks/"+id+"/deliveries", e.readKey, "", 200)
	entries := log.path("data").([]any)
	if len(entries) != 3 {
		t.Fatalf("%d deliveries logged", len(entries))
	}
	first := entries[0].(map[string]any)
	if first["id"] != ping.str("id") || first["status"] != "succeeded" || first["attempts"] != float64(1) || first["response_code"] != float64(200) {
		t.Fatalf("log: %v", first)
	}
	// A finished delivery can be sent again, with the same delivery id.
	r := e.do("POST", "/v1/webhooks/"+id+"/deliveries/"+ping.str("id")+"/retry", e.writeKey, "", 202)
	if r.str("status") != "pending" {
		t.Fatalf("retry: %s", r.raw)
	}
	mu.Unlock()
	d.RunOnce(context.Background())
	mu.Lock()
	if n := len(got); n != 4 || headers[3].Get("Linkbolt-Delivery") != ping.str("id") {
		t.Fatalf("after retry: %d deliveries", n)
	}
	wantProblem(t, e.request(newRequest("POST", "/v1/webhooks/"+id+"/deliveries/dlv_nope/retry", e.writeKey, "")), 404, "not_found")
}

// TestWebhookTargetErrorsNoLeaks is the attack of issue 9: saving a webhook
// whose name resolves to a private address showed the address and the
// resolver (`lookup … on <resolver>:53`). The 422 says "resolves to a
// private address", or that the name does not resolve, and no more.
func TestWebhookTargetErrorsNoLeaks(t *testing.T) {
	t.Parallel()
	z, dnsAddr := startDNS(t)
	z.setA("internal.example.com", "10.1.2.3")
	z.setFail("broken.example.com")
	e := newEnvWith(t, func(d *Deps) { d.WebhookTargets = webhook.TargetGuard{Resolver: dnscheck.NewResolver(dnsAddr)} })
	id := e.do("POST", "/v1/webhooks", e.writeKey, `{"url":"https://93.184.215.14/hook","events":["link.created"]}`, 201).str("id")

	for _, tt := range []struct {
		host, want string
	}{
		{"internal.example.com", "url: host internal.example.com resolves to a private address"},
		{"nothing.example.com", "url: host nothing.example.com does not resolve"},
		{"broken.example.com", "url: host broken.example.com does not resolve"},
	} {
		body := `{"url":"https://` + tt.host + `/hook","events":["link.created"]}`
		for _, r := range []*response{
			e.request(newRequest("POST", "/v1/webhooks", e.writeKey, body)),
			e.request(newRequest("PATCH", "/v1/webhooks/"+id, e.writeKey, body)),
		} {
			wantProblem(t, r, 422, "validation_failed")
			d := r.str("detail")
			if !strings.HasPrefix(d, tt.want) {
				t.Errorf("%s: detail %q, want it to start %q", tt.host, d, tt.want)
			}
			for _, leak := range []string{"10.1.2.3", dnsAddr, "127.0.0.1", " on ", ":53"} {
				if strings.Contains(string(r.raw), leak) {
					t.Errorf("%s: the answer reveals %q: %s", tt.host, leak, r.raw)
				}
			}
		}
	}
}

// TestWebhookEventsOnTheWire runs every event type through the real router,
// storage and dispatcher to a receiver: each event's data is the object as
// the API answered it, created_at is in whole seconds like every time of
// the API, and a ping's event_id in the delivery log is the id of its body.
func TestWebhookEventsOnTheWire(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, allowPrivateTargets)
	var mu sync.Mutex
	var got []map[string]any
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			t.Errorf("body: %v", err)
		}
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	}))
	defer recv.Close()
	hook := e.do("POST", "/v1/webhooks", e.writeKey, `{"url":"`+recv.URL+`/hook","events":["link.created","link.updated","link.deleted","link.clicked","campaign.updated"]}`, 201).str("id")

	// Changes at times with fractions of a second.
	e.clock.Add(1500 * time.Millisecond)
	var stamps []string // the clock, in whole seconds, at each event
	stamp := func() { stamps = append(stamps, e.clock.Now().UTC().Truncate(time.Second).Format(time.RFC3339)) }
	cmp := e.do("POST", "/v1/campaigns", e.writeKey, `{"name":"Spring","utm_source":"news"}`, 201)
	stamp()
	created := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://bücher.example/a?x=1&y=2","alias":"wire","tags":["b","a"],"utm_medium":"email","campaign_id":"`+cmp.str("id")+`"}`, 201)
	stamp()
	lid := created.str("id")
	e.clock.Add(2300 * time.Millisecond)
	updated := e.do("PATCH", "/v1/links/"+lid, e.writeKey, `{"tags":["c"],"redirect_code":301}`, 200)
	stamp()
	e.clock.Add(700 * time.Millisecond)
	cmpUpdated := e.do("PATCH", "/v1/campaigns/"+cmp.str("id"), e.writeKey, `{"status":"paused"}`, 200)
	stamp()
	click := newRequest("GET", "/wire", "", "")
	click.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0")
	if r := e.request(click); r.status != 301 {
		t.Fatalf("redirect: %d", r.status)
	}
	e.flush()
	stamp()
	e.clock.Add(1100 * time.Millisecond)
	beforeDelete := e.do("GET", "/v1/links/"+lid, e.readKey, "", 200)
	e.do("DELETE", "/v1/links/"+lid, e.writeKey, "", 204)
	stamp()
	e.clock.Add(900 * time.Millisecond)
	ping := e.do("POST", "/v1/webhooks/"+hook+"/test", e.writeKey, "", 202)
	stamp()

	d := &webhook.Dispatcher{Store: e.srv.webhooks, Now: e.clock.Now, Client: webhook.NewClient(true)}
	for range 10 {
		if _, err := d.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var types []string
	for _, m := range got {
		types = append(types, m["type"].(string))
	}
	if got, want := strings.Join(types, ","), "campaign.updated,link.created,link.updated,campaign.updated,link.clicked,link.deleted,ping"; got != want {
		t.Fatalf("received %s, want %s", got, want)
	}
	for i, m := range got {
		if m["created_at"] != stamps[i] || m["workspace_id"] != e.ws || !strings.HasPrefix(m["id"].(string), "evt_") || len(m) != 5 {
			t.Errorf("%s: envelope %v, want created_at %s", types[i], m, stamps[i])
		}
	}
	asAPI := func(r *response) any {
		var v any
		if err := json.Unmarshal(r.raw, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	// A campaign.updated event is the campaign as the API shows it and the
	// changed fields.
	created0 := asAPI(cmp)
	if data := got[0]["data"].(map[string]any); !reflect.DeepEqual(data["campaign"], created0) ||
		!reflect.DeepEqual(data["changes"], map[string]any{"name": map[string]any{"from": "", "to": "Spring"},
			"status": map[string]any{"from": "", "to": "active"}, "utm_source": map[string]any{"from": "", "to": "news"}}) {
		t.Errorf("campaign created: %v\nAPI: %s", data, cmp.raw)
	}
	if data := got[3]["data"].(map[string]any); !reflect.DeepEqual(data["campaign"], asAPI(cmpUpdated)) ||
		!reflect.DeepEqual(data["changes"], map[string]any{"status": map[string]any{"from": "active", "to": "paused"}}) {
		t.Errorf("campaign updated: %v\nAPI: %s", data, cmpUpdated.raw)
	}
	// Link events are the link as the API answered.
	for _, tt := range []struct {
		i   int
		api *response
	}{{1, created}, {2, updated}, {5, beforeDelete}} {
		if data := got[tt.i]["data"]; !reflect.DeepEqual(data, asAPI(tt.api)) {
			t.Errorf("%s data %v\nAPI: %s", types[tt.i], data, tt.api.raw)
		}
	}
	if data := got[4]["data"].(map[string]any); data["link_id"] != lid || data["referrer"] != "direct" || data["bot"] != false ||
		data["browser"] != "Firefox" || data["os"] != "Linux" || len(data) != 8 {
		t.Errorf("link.clicked data %v", data)
	}
	// The ping's event ID, in the answer and in the log, is its body's id.
	pingBody := got[6]
	if ping.str("event_id") != pingBody["id"] || ping.str("event_type") != "ping" ||
		!reflect.DeepEqual(pingBody["data"], map[string]any{"message": "ping from linkbolt"}) {
		t.Errorf("ping %s, body %v", ping.raw, pingBody)
	}
	log := e.do("GET", "/v1/webhooks/"+hook+"/deliveries", e.readKey, "", 200)
	entry := log.path("data", 0).(map[string]any)
	if entry["id"] != ping.str("id") || entry["event_id"] != pingBody["id"] || entry["status"] != "succeeded" {
		t.Errorf("delivery log of the ping: %v, body id %v", entry, pingBody["id"])
	}
	// Every other delivery logs its event's id too.
	for i, v := range log.path("data").([]any)[1:] {
		body := got[len(got)-2-i]
		if v.(map[string]any)["event_id"] != body["id"] {
			t.Errorf("delivery %v: event_id is not the body's id %v", v, body["id"])
		}
	}
}

// TestMetrics_OutboxPending: the outbox gauge reads the Outbox of Deps,
// which app.go wires to the webhook service; without one it shows 0.
func TestMetrics_OutboxPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if got := e.metrics()["linkbolt_webhook_outbox_pending"]; got != 0 {
		t.Fatalf("outbox pending before any webhook = %d, want 0", got)
	}
	// No dispatcher runs here: the deliveries stay pending.
	e.do("POST", "/v1/webhooks", e.writeKey, `{"url":"https://93.184.215.14/hook","events":["link.created"]}`, 201)
	for i := 1; i <= 2; i++ {
		e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/"}`, 201)
		if got, want := e.metrics()["linkbolt_webhook_outbox_pending"], int64(i); got != want {
			t.Fatalf("outbox pending after %d links = %d, want %d", i, got, want)
		}
	}

	bare := newEnvWith(t, func(d *Deps) { d.Outbox = nil })
	bare.do("POST", "/v1/webhooks", bare.writeKey, `{"url":"https://93.184.215.14/hook","events":["link.created"]}`, 201)
	bare.do("POST", "/v1/links", bare.writeKey, `{"destination_url":"https://example.com/"}`, 201)
	if got := bare.metrics()["linkbolt_webhook_outbox_pending"]; got != 0 {
		t.Fatalf("outbox pending without Deps.Outbox = %d, want 0", got)
	}
}
