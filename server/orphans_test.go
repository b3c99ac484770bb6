package server

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

// flushOrphans writes the queued orphan visits.
func (e *env) flushOrphans() {
	e.t.Helper()
	if err := e.orphans.Flush(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// orphanTotals returns the totals of an orphan visits answer as
// "visits base_url invalid_short_url regular_404".
func orphanTotals(r *response) string {
	n := func(k string) any { return r.path("totals", k) }
	return fmt.Sprint(n("visits"), " ", n("base_url"), " ", n("invalid_short_url"), " ", n("regular_404"))
}

// orphanPaths returns the paths and types of the page of visits, newest first.
func orphanPaths(r *response) string {
	var out []string
	for _, v := range r.path("visits").([]any) {
		m := v.(map[string]any)
		out = append(out, fmt.Sprint(m["type"], ":", m["path"]))
	}
	return strings.Join(out, " ")
}

func TestOrphanVisitsOfEachTypeOnBothHosts(t *testing.T) {
	t.Parallel()
	e, _ := newDomainEnv(t)
	e.verifiedDomain("go.example.com", `,"root_redirect_url":"https://example.com/home"`)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"real"}`, 201)

	// The primary host: one of each type, with a referrer and a query
	// that must not be kept.
	e.do("GET", "/", "", "", 200)
	e.clock.Add(time.Second)
	e.onHost("lb.test", "GET", "/nope", "", "", "Referer", "https://Ref.Example/page", "User-Agent", "curl/8.0")
	e.clock.Add(time.Second)
	e.onHost("lb.test", "GET", "/wp-admin/setup.php?token=secret", "", "")
	// Not orphan visits: the link found, HEAD, the API, the dashboard,
	// what every host is asked for.
	e.do("GET", "/real", "", "", 302)
	e.do("HEAD", "/nope2", "", "", 404)
	for _, p := range []string{"/v1/nothing", "/favicon.ico", "/robots.txt", "/healthz", "/api/nothing"} {
		e.request(newRequest("GET", p, "", ""))
	}
	// The custom domain: its root (redirecting to root_redirect_url), an
	// unknown code, another path; its API paths are not counted.
	e.clock.Add(time.Second)
	if r := e.onHost("go.example.com", "GET", "/", "", ""); r.status != 302 {
		t.Fatalf("root: %d", r.status)
	}
	e.clock.Add(time.Second)
	e.onHost("go.example.com", "GET", "/missing", "", "")
	e.clock.Add(time.Second)
	e.onHost("go.example.com", "GET", "/a/b.php?x=1", "", "")
	e.onHost("go.example.com", "GET", "/v1/links", "", "")
	e.onHost("go.example.com", "HEAD", "/missing", "", "")
	e.flush()
	e.flushOrphans()

	r := e.do("GET", "/v1/admin/orphan-visits?range=24h", e.adminToken, "", 200)
	if got, want := orphanTotals(r), "3 1 1 1"; got != want {
		t.Fatalf("primary totals %s, want %s: %s", got, want, r.raw)
	}
	if got, want := orphanPaths(r), "regular_404:/wp-admin/setup.php invalid_short_url:/nope base_url:/"; got != want {
		t.Fatalf("primary visits %q, want %q", got, want)
	}
	if got := r.path("visits", 1, "referrer"); got != "ref.example" {
		t.Fatalf("referrer %v", got)
	}
	if got := r.path("visits", 1, "bot"); got != true {
		t.Fatalf("curl is a bot: %v", got)
	}
	if strings.Contains(string(r.raw), "secret") || strings.Contains(string(r.raw), "192.0.2.1") {
		t.Fatalf("a query or an address kept: %s", r.raw)
	}
	if got := r.path("top", "paths", 0, "visits"); got != float64(1) {
		t.Fatalf("top paths: %s", r.raw)
	}
	// The admin reads any domain's too.
	r = e.do("GET", "/v1/admin/orphan-visits?range=24h&domain=go.example.com", e.adminToken, "", 200)
	if got, want := orphanTotals(r), "3 1 1 1"; got != want {
		t.Fatalf("domain totals (admin) %s, want %s", got, want)
	}
	wantProblem(t, e.do("GET", "/v1/admin/orphan-visits?domain=unknown.example", e.adminToken, "", 400), 400, "invalid_request")
	e.do("GET", "/v1/admin/orphan-visits", e.readKey, "", 403)

	// The workspace reads its domain's, with a read key.
	r = e.do("GET", "/v1/analytics/orphan-visits?range=24h&interval=hour", e.readKey, "", 200)
	if got, want := r.str("domain"), "go.example.com"; got != want {
		t.Fatalf("domain %q", got)
	}
	if got, want := orphanTotals(r), "3 1 1 1"; got != want {
		t.Fatalf("domain totals %s, want %s", got, want)
	}
	if got, want := orphanPaths(r), "regular_404:/a/b.php invalid_short_url:/missing base_url:/"; got != want {
		t.Fatalf("domain visits %q, want %q", got, want)
	}
	var sum float64
	for _, p := range r.path("timeseries").([]any) {
		sum += p.(map[string]any)["visits"].(float64)
	}
	if sum != 3 {
		t.Fatalf("timeseries sums to %v: %s", sum, r.raw)
	}
	r = e.do("GET", "/v1/analytics/orphan-visits?range=24h&type=invalid_short_url", e.readKey, "", 200)
	if got, want := orphanTotals(r), "1 1 1 1"; got != want {
		t.Fatalf("filtered totals %s, want %s", got, want)
	}
	if got, want := orphanPaths(r), "invalid_short_url:/missing"; got != want {
		t.Fatalf("filtered visits %q", got)
	}
	wantProblem(t, e.do("GET", "/v1/analytics/orphan-visits?type=other", e.readKey, "", 400), 400, "invalid_request")
	wantProblem(t, e.do("GET", "/v1/analytics/orphan-visits?range=forever", e.readKey, "", 400), 400, "invalid_request")
	wantProblem(t, e.do("GET", "/v1/analytics/orphan-visits?cursor=zz", e.readKey, "", 400), 400, "invalid_request")

	// Another workspace: the domain is not its own, and without a domain
	// it sees nothing (never the primary host's).
	wantProblem(t, e.do("GET", "/v1/analytics/orphan-visits?domain=go.example.com", e.otherKey, "", 400), 400, "invalid_request")
	r = e.do("GET", "/v1/analytics/orphan-visits?range=24h", e.otherKey, "", 200)
	if got, want := orphanTotals(r), "0 0 0 0"; got != want || r.str("domain") != "" || len(r.path("visits").([]any)) != 0 {
		t.Fatalf("other workspace: %s", r.raw)
	}
}

func TestOrphanVisitsUntrackedIPs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.UntrackedIPs = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")} })
	e.do("GET", "/nope", "", "", 404)
	e.request(newRequest("GET", "/x/y", "", ""))
	req := newRequest("GET", "/counted", "", "")
	req.RemoteAddr = "198.51.100.9:1234"
	e.request(req)
	e.flushOrphans()
	r := e.do("GET", "/v1/admin/orphan-visits?range=24h", e.adminToken, "", 200)
	if got, want := orphanTotals(r), "1 0 1 0"; got != want {
		t.Fatalf("totals %s, want %s (only the visit from outside the untracked range)", got, want)
	}
}

func TestOrphanVisitsCapPagesAndRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// A scanner: 12 visits in one hour; every one is counted, the first
	// testOrphansPerHour are kept.
	for i := range 12 {
		e.do("GET", fmt.Sprintf("/scan%02d", i), "", "", 404)
		e.clock.Add(time.Second)
	}
	e.flushOrphans()
	// The next hour keeps its own.
	e.clock.Add(time.Hour)
	e.do("GET", "/later", "", "", 404)
	e.flushOrphans()
	r := e.do("GET", "/v1/admin/orphan-visits?range=24h&limit=100", e.adminToken, "", 200)
	if got, want := orphanTotals(r), "13 0 13 0"; got != want {
		t.Fatalf("totals %s, want %s", got, want)
	}
	if got, want := orphanPaths(r), "invalid_short_url:/later invalid_short_url:/scan04 invalid_short_url:/scan03 invalid_short_url:/scan02 invalid_short_url:/scan01 invalid_short_url:/scan00"; got != want {
		t.Fatalf("kept %q, want %q", got, want)
	}
	// Pages of 2 walk the same visits.
	var walked []string
	cursor := ""
	for range 10 {
		r := e.do("GET", "/v1/admin/orphan-visits?range=24h&limit=2&cursor="+url.QueryEscape(cursor), e.adminToken, "", 200)
		walked = append(walked, orphanPaths(r))
		next, _ := r.path("next_cursor").(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if got, want := strings.Join(walked, " "), "invalid_short_url:/later invalid_short_url:/scan04 invalid_short_url:/scan03 invalid_short_url:/scan02 invalid_short_url:/scan01 invalid_short_url:/scan00"; got != want {
		t.Fatalf("pages %q, want %q", got, want)
	}
	// Past the retention, the clean-up removes the records before it and
	// the counters of the hours wholly before it: a retention ending 6 s
	// before the later visit (in its hour) takes the first hour.
	e.clock.Add(720*time.Hour - 6*time.Second)
	n, err := e.db.Orphans.PruneOrphanVisits(context.Background(), e.clock.Now().Add(-e.cfg.OrphanRetention))
	if err != nil || n != 5 {
		t.Fatalf("pruned %d, %v; want the 5 of the first hour", n, err)
	}
	e.adminToken = e.login("admin@example.com", "correct horse battery") // the token of a month ago has expired
	r = e.do("GET", "/v1/admin/orphan-visits?range=all", e.adminToken, "", 200)
	if got, want := orphanTotals(r), "1 0 1 0"; got != want {
		t.Fatalf("after pruning %s, want %s", got, want)
	}
}

func TestOrphanVisitsOfADeletedAlias(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"gone"}`, 201).str("id")
	e.do("DELETE", "/v1/links/"+id, e.writeKey, "", 204)
	if r := e.request(newRequest("GET", "/gone", "", "")); r.status != 404 {
		t.Fatalf("a deleted alias: %d", r.status)
	}
	e.flushOrphans()
	r := e.do("GET", "/v1/admin/orphan-visits?range=24h", e.adminToken, "", 200)
	if got, want := orphanPaths(r), "invalid_short_url:/gone"; got != want {
		t.Fatalf("visits %q, want %q", got, want)
	}
}
