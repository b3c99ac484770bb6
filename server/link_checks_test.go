package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/linkcheck"
	"github.com/linkbolt/linkbolt/webhook"
)

// checkDestination is a destination server for the checks: /ok answers,
// /gone is 404 until fixed, /nohead refuses HEAD, /slow never answers.
func checkDestination(t *testing.T, fixed *atomic.Bool) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) {
		if !fixed.Load() {
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) })
	mux.HandleFunc("/nohead", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			w.WriteHeader(405)
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// checker returns a checker over the env's store on its clock; guarded
// refuses loopback destinations, as a server does unless
// link_checks.allow_private is set.
func (e *env) checker(guarded bool) *linkcheck.Checker {
	return &linkcheck.Checker{Store: e.db.LinkChecks, Client: webhook.NewClient(!guarded), Now: e.clock.Now,
		Config: linkcheck.Config{Timeout: 200 * time.Millisecond, HostGap: 0, Concurrency: 4}}
}

func (e *env) runChecks(c *linkcheck.Checker, want int) {
	e.t.Helper()
	n, err := c.RunOnce(context.Background())
	if err != nil || n != want {
		e.t.Fatalf("RunOnce = %d, %v; want %d checks", n, err, want)
	}
}

func TestLinkChecks(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, allowPrivateTargets)
	var fixed atomic.Bool
	dest := checkDestination(t, &fixed)
	var mu sync.Mutex
	var events []map[string]any
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		json.Unmarshal(b, &m)
		mu.Lock()
		events = append(events, m)
		mu.Unlock()
	}))
	defer recv.Close()
	e.do("POST", "/v1/webhooks", e.writeKey, `{"url":"`+recv.URL+`/hook","events":["link.broken","link.fixed"]}`, 201)
	dispatch := &webhook.Dispatcher{Store: e.srv.webhooks, Now: e.clock.Now, Client: webhook.NewClient(true)}
	received := func() []string {
		t.Helper()
		if _, err := dispatch.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, ev := range events {
			data := ev["data"].(map[string]any)
			out = append(out, ev["type"].(string)+" "+data["alias"].(string)+" "+data["destination_check"].(map[string]any)["status"].(string))
		}
		return out
	}

	ids := map[string]string{}
	for _, p := range []string{"ok", "gone", "fail", "nohead", "slow"} {
		ids[p] = e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"`+dest.URL+"/"+p+`","alias":"`+p+`"}`, 201).str("id")
	}
	// Off by default: no check shown, none made.
	if r := e.do("GET", "/v1/links/"+ids["ok"], e.readKey, "", 200); r.path("destination_check") != nil {
		t.Fatalf("destination_check with checks off: %v", r.path("destination_check"))
	}
	if ws := e.do("GET", "/v1/workspaces/"+e.ws, e.adminToken, "", 200); ws.path("destination_checks") != false {
		t.Fatalf("destination_checks = %v, want false", ws.path("destination_checks"))
	}
	c := e.checker(false)
	e.runChecks(c, 0)

	// Owners turn them on; a key cannot.
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.writeKey, `{"destination_checks":true}`, 403)
	if ws := e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"destination_checks":true}`, 200); ws.path("destination_checks") != true {
		t.Fatalf("destination_checks = %v after PATCH", ws.path("destination_checks"))
	}
	check := func(name string) map[string]any {
		t.Helper()
		v, _ := e.do("GET", "/v1/links/"+ids[name], e.readKey, "", 200).path("destination_check").(map[string]any)
		return v
	}
	if got := check("ok"); got["status"] != "unchecked" || got["checked_at"] != nil {
		t.Fatalf("before the first check: %v", got)
	}

	e.runChecks(c, 5)
	for name, want := range map[string]struct {
		status string
		http   any
		err    any
	}{
		"ok":     {"ok", 200.0, nil},
		"nohead": {"ok", 200.0, nil},
		"gone":   {"unchecked", 404.0, "answered 404 Not Found"}, // one failure: not broken yet
		"fail":   {"unchecked", 500.0, "answered 500 Internal Server Error"},
		"slow":   {"unchecked", nil, "no answer within 200ms"},
	} {
		got := check(name)
		if got["status"] != want.status || got["http_status"] != want.http || got["error"] != want.err || got["checked_at"] != "2026-03-10T12:00:00Z" {
			t.Fatalf("%s: destination_check = %v, want %+v", name, got, want)
		}
	}
	e.runChecks(c, 0) // nothing due

	// The failures are checked again after link_checks.retry_interval:
	// a second failure makes them broken, once.
	e.clock.Add(time.Hour)
	e.runChecks(c, 3)
	for _, name := range []string{"gone", "fail", "slow"} {
		if got := check(name); got["status"] != "broken" {
			t.Fatalf("%s after two failures: %v", name, got)
		}
	}
	list := e.do("GET", "/v1/links?broken=true", e.readKey, "", 200)
	if got := list.path("meta", "total"); got != 3.0 {
		t.Fatalf("broken links: total %v", got)
	}
	if got := list.path("data", 0, "destination_check", "status"); got != "broken" {
		t.Fatalf("a broken link listed with %v", got)
	}
	e.do("GET", "/v1/links?broken=maybe", e.readKey, "", 400)
	if got, want := len(received()), 3; got != want {
		t.Fatalf("%d events, want %d", got, want)
	}

	// A day later: broken again (no new event); /gone answers again (link.fixed).
	fixed.Store(true)
	e.clock.Add(24 * time.Hour)
	e.runChecks(c, 5)
	got := received()
	if len(got) != 4 || got[3] != "link.fixed gone ok" {
		t.Fatalf("events %v, want 3 link.broken and link.fixed of gone", got)
	}
	for _, ev := range got[:3] {
		if ev != "link.broken gone broken" && ev != "link.broken fail broken" && ev != "link.broken slow broken" {
			t.Fatalf("event %q", ev)
		}
	}
	if got := e.do("GET", "/v1/links?broken=true", e.readKey, "", 200).path("meta", "total"); got != 2.0 {
		t.Fatalf("broken after the fix: %v", got)
	}

	// A new destination is checked anew, at once.
	r := e.do("PATCH", "/v1/links/"+ids["fail"], e.writeKey, `{"destination_url":"`+dest.URL+`/ok?moved"}`, 200)
	if got := r.path("destination_check", "status"); got != "unchecked" {
		t.Fatalf("after a new destination: %v", got)
	}
	e.runChecks(c, 1)
	if got := check("fail"); got["status"] != "ok" {
		t.Fatalf("new destination checked: %v", got)
	}
	// A new destination starts unchecked: its first success is no fix.
	if got := received(); len(got) != 4 {
		t.Fatalf("events after the new destination: %v", got)
	}

	// So does a bulk update of destinations.
	r = e.do("POST", "/v1/links/bulk-update", e.writeKey, `{"ids":["`+ids["slow"]+`"],"data":{"destination_url":"`+dest.URL+`/ok?bulk"}}`, 200)
	if got := r.path("data", 0, "link", "destination_check", "status"); got != "unchecked" {
		t.Fatalf("after a bulk update of the destination: %v", got)
	}
	e.runChecks(c, 1)
	if got := check("slow"); got["status"] != "ok" {
		t.Fatalf("bulk-updated destination checked: %v", got)
	}

	// Off: checks forgotten, none shown.
	e.adminToken = e.login("admin@example.com", "correct horse battery") // the clock moved past the token's TTL
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"destination_checks":false}`, 200)
	if got := check("slow"); got != nil {
		t.Fatalf("after turning off: %v", got)
	}
	if got := e.do("GET", "/v1/links?broken=true", e.readKey, "", 200).path("meta", "total"); got != 0.0 {
		t.Fatalf("broken after turning off: %v", got)
	}
	e.clock.Add(48 * time.Hour)
	e.runChecks(c, 0)
}

// TestLinkChecksGuard: with the guard on (link_checks.allow_private off),
// a destination on loopback is not checked, and never broken.
func TestLinkChecksGuard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var fixed atomic.Bool
	dest := checkDestination(t, &fixed)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"`+dest.URL+`/gone"}`, 201).str("id")
	e.do("PATCH", "/v1/workspaces/"+e.ws, e.adminToken, `{"destination_checks":true}`, 200)
	c := e.checker(true)
	for range 3 {
		e.runChecks(c, 1)
		e.clock.Add(25 * time.Hour)
	}
	got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("destination_check").(map[string]any)
	if got["status"] != "unchecked" || got["http_status"] != nil || got["error"] == nil {
		t.Fatalf("a loopback destination: %v", got)
	}
	if msg := got["error"].(string); msg != "not checked: 127.0.0.1 resolves to a loopback, private or link-local address (link_checks.allow_private)" {
		t.Fatalf("error %q", msg)
	}
}
