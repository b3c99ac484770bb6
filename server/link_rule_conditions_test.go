package server

import (
	"strings"
	"testing"
	"time"
)

// Tests of the rule conditions on the visitor's address and the time of
// the visit, and of a rule's conditions holding together.

// wantLocation visits path from addr and wants a 302 to want.
func (e *env) wantLocation(t *testing.T, path, addr, want string, headers ...string) {
	t.Helper()
	got := e.request(visit(path, addr, uaChromeWin, headers...))
	if got.status != 302 || got.header.Get("Location") != want {
		t.Fatalf("%s from %s: %d Location %q, want %q", path, addr, got.status, got.header.Get("Location"), want)
	}
}

func TestLinkRuleIP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/default","alias":"office","rules":[
		{"if":{"ip":["198.51.100.0/24"," 203.0.113.7 ","10.1.2.3/8"]},"then":"https://example.com/office"},
		{"if":{"ip":["2001:db8:aa::/48","::ffff:192.0.2.77"]},"then":"https://example.com/v6"}]}`, 201)
	// Stored and shown as networks: a single address is its /32 or /128,
	// a range is masked, an IPv4-mapped address is IPv4.
	for i, want := range []string{"198.51.100.0/24", "203.0.113.7/32", "10.0.0.0/8"} {
		if got := r.path("rules", 0, "if", "ip", i); got != want {
			t.Fatalf("ip[%d] = %v, want %s: %s", i, got, want, r.raw)
		}
	}
	if got := r.path("rules", 1, "if", "ip", 1); got != "192.0.2.77/32" {
		t.Fatalf("mapped address shown as %v", got)
	}
	for _, c := range []struct{ name, addr, want string }{
		{"in a /24", "198.51.100.200", "https://example.com/office"},
		{"next to the /24", "198.51.101.1", "https://example.com/default"},
		{"the single address", "203.0.113.7", "https://example.com/office"},
		{"next to the single address", "203.0.113.8", "https://example.com/default"},
		{"in the masked /8", "10.200.0.1", "https://example.com/office"},
		{"IPv6 in the /48", "[2001:db8:aa:1::9]", "https://example.com/v6"},
		{"IPv6 outside the /48", "[2001:db8:ab::9]", "https://example.com/default"},
		{"the mapped address as IPv4", "192.0.2.77", "https://example.com/v6"},
		{"the mapped address as mapped IPv6", "[::ffff:192.0.2.77]", "https://example.com/v6"},
	} {
		t.Run(c.name, func(t *testing.T) { e.wantLocation(t, "/office", c.addr, c.want) })
	}
	// PATCH replaces the ranges; the link's next visitor sees them.
	e.do("PATCH", "/v1/links/"+r.str("id"), e.writeKey, `{"rules":[{"if":{"ip":["198.51.101.0/24"]},"then":"https://example.com/office"}]}`, 200)
	e.wantLocation(t, "/office", "198.51.101.1", "https://example.com/office")
	e.wantLocation(t, "/office", "198.51.100.200", "https://example.com/default")
	// The rule survives a read from the store, not only the cache.
	if got := e.do("GET", "/v1/links/"+r.str("id"), e.readKey, "", 200).path("rules", 0, "if", "ip", 0); got != "198.51.101.0/24" {
		t.Fatalf("after PATCH: %v", got)
	}
}

// TestLinkRuleIPBehindProxy checks that the rule tests the address the
// server takes for the visitor's (analytics, rate limits): behind a proxy,
// the one it forwards; else the connection's, whatever a header says.
func TestLinkRuleIPBehindProxy(t *testing.T) {
	t.Parallel()
	for _, behind := range []bool{false, true} {
		e := newEnv(t, func(c *Config) { c.BehindProxy = behind })
		e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/default","alias":"office","rules":[
			{"if":{"ip":["198.51.100.0/24"]},"then":"https://example.com/office"}]}`, 201)
		want := "https://example.com/default"
		if behind {
			want = "https://example.com/office"
		}
		e.wantLocation(t, "/office", "192.0.2.1", want, "X-Forwarded-For", "198.51.100.9")
		want = "https://example.com/office"
		if behind {
			want = "https://example.com/default"
		}
		e.wantLocation(t, "/office", "198.51.100.9", want, "X-Forwarded-For", "192.0.2.1")
	}
}

func TestLinkRuleTimeWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	after := testStart.Add(time.Hour)
	before := testStart.Add(3 * time.Hour)
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/default","alias":"sale","rules":[
		{"if":{"after":"`+after.In(time.FixedZone("CET", 3600)).Format(time.RFC3339)+`","before":"`+before.Format(time.RFC3339)+`"},"then":"https://example.com/sale"},
		{"if":{"after":"`+before.Format(time.RFC3339)+`"},"then":"https://example.com/over"}]}`, 201)
	if got, want := r.path("rules", 0, "if", "after"), after.Format(time.RFC3339); got != want {
		t.Fatalf("after shown as %v, want %s (UTC)", got, want)
	}
	for _, step := range []struct {
		name string
		at   time.Time
		want string
	}{
		{"before the window", after.Add(-time.Second), "https://example.com/default"},
		{"at after", after, "https://example.com/sale"},
		{"within", before.Add(-time.Second), "https://example.com/sale"},
		{"at before", before, "https://example.com/over"},
		{"long after", before.Add(72 * time.Hour), "https://example.com/over"},
	} {
		e.clock.Set(step.at)
		t.Run(step.name, func(t *testing.T) { e.wantLocation(t, "/sale", "192.0.2.10", step.want) })
	}
}

// TestLinkRuleConditionsAnded checks that every condition of one rule must
// hold: the address and the country, the address and the time.
func TestLinkRuleConditionsAnded(t *testing.T) {
	t.Parallel()
	geo := writeGeoIP(t, map[string]string{"81.2.69.0/24": "GB", "2.16.0.0/16": "FR"})
	e := newEnvWith(t, func(d *Deps) { d.Geo = geo })
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/default","alias":"both","rules":[
		{"if":{"ip":["81.2.69.128/25","2.16.0.0/24"],"country":"GB"},"then":"https://example.com/gb-office"},
		{"if":{"ip":["2.16.0.0/16"],"before":"`+testStart.Add(time.Hour).Format(time.RFC3339)+`"},"then":"https://example.com/fr-early"}]}`, 201)
	for _, c := range []struct{ name, addr, want string }{
		{"address and country", "81.2.69.200", "https://example.com/gb-office"},
		{"country without the address", "81.2.69.5", "https://example.com/default"},
		{"address without the country", "2.16.0.9", "https://example.com/fr-early"},
	} {
		t.Run(c.name, func(t *testing.T) { e.wantLocation(t, "/both", c.addr, c.want) })
	}
	e.clock.Add(time.Hour)
	e.wantLocation(t, "/both", "2.16.0.9", "https://example.com/default")
}

func TestLinkRuleConditionsBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rule := func(cond string) string {
		return `{"destination_url":"https://example.com/","rules":[{"if":{"device":"mobile"},"then":"https://example.com/m"},{"if":` + cond + `,"then":"https://example.com/a"}]}`
	}
	ips51 := `"` + strings.TrimSuffix(strings.Repeat(`192.0.2.1","`, 51), `","`) + `"`
	for _, c := range []struct{ name, body, field string }{
		{"not an address", rule(`{"ip":["192.0.2.1","office"]}`), "rules[1].if.ip[1]"},
		{"a prefix too long", rule(`{"ip":["192.0.2.0/33"]}`), "rules[1].if.ip[0]"},
		{"an IPv6 prefix too long", rule(`{"ip":["2001:db8::/129"]}`), "rules[1].if.ip[0]"},
		{"a zoned address", rule(`{"ip":["fe80::1%eth0"]}`), "rules[1].if.ip[0]"},
		{"an empty entry", rule(`{"ip":[""]}`), "rules[1].if.ip[0]"},
		{"51 entries", rule(`{"ip":[` + ips51 + `]}`), "rules[1].if.ip"},
		{"after not RFC 3339", rule(`{"after":"2026-03-10 12:00"}`), "rules[1].if.after"},
		{"before not RFC 3339", rule(`{"before":"tomorrow"}`), "rules[1].if.before"},
		{"before not after after", rule(`{"after":"2026-03-10T12:00:00Z","before":"2026-03-10T12:00:00Z"}`), "rules[1].if.before"},
		{"an empty list is no condition", rule(`{"ip":[]}`), "rules[1].if"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.request(newRequest("POST", "/v1/links", e.writeKey, c.body))
			wantProblem(t, r, 422, "validation_failed")
			if !strings.Contains(string(r.raw), `"field":"`+c.field+`"`) {
				t.Fatalf("want field %s: %s", c.field, r.raw)
			}
		})
	}
	// In a bulk creation the bad rule refuses its own item only.
	r := e.do("POST", "/v1/links/bulk", e.writeKey, `{"links":[
		{"destination_url":"https://example.com/ok","rules":[{"if":{"ip":["2001:db8::/32"]},"then":"https://example.com/v6"}]},
		{"destination_url":"https://example.com/bad","rules":[{"if":{"ip":["2001:db8::/32","2001:db8::/200"]},"then":"https://example.com/v6"}]}]}`, 200)
	if got := r.path("data", 0, "link", "rules", 0, "if", "ip", 0); got != "2001:db8::/32" {
		t.Fatalf("bulk item 0: %s", r.raw)
	}
	if r.path("data", 1, "link") != nil || r.path("data", 1, "error", "status") != float64(422) ||
		r.path("data", 1, "error", "errors", 0, "field") != "rules[0].if.ip[1]" {
		t.Fatalf("bulk item 1: %s", r.raw)
	}
	// A PATCH is refused alike and leaves the link as it was.
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","rules":[{"if":{"ip":["192.0.2.0/24"]},"then":"https://example.com/a"}]}`, 201).str("id")
	wantProblem(t, e.request(newRequest("PATCH", "/v1/links/"+id, e.writeKey, `{"rules":[{"if":{"ip":["192.0.2.0/24","nope"]},"then":"https://example.com/a"}]}`)), 422, "validation_failed")
	if got := e.do("GET", "/v1/links/"+id, e.readKey, "", 200).path("rules", 0, "if", "ip"); len(got.([]any)) != 1 {
		t.Fatalf("after a refused PATCH: %v", got)
	}
}
