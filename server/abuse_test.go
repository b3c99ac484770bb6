package server

import (
	"net/url"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// reportForm posts the preview page's report form of alias, from addr.
func (e *env) reportForm(alias, addr string, form url.Values) *response {
	e.t.Helper()
	req := newRequest("POST", "/"+alias+"+", "", form.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = addr + ":4321"
	return e.request(req)
}

// TestAbuseReports: a visitor reports a link from its preview page (the
// form posts back to /{code}+) or through the API; reports of one link
// and reason are counted as one; the admin lists them, newest first, and
// resolves or dismisses them; a read key or a member cannot; bad input and
// floods are refused.
func TestAbuseReports(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://bank.example/login","alias":"phish"}`, 201)

	// The preview page offers the form, its policy lets it post back.
	p := e.request(newRequest("GET", "/phish+", "", ""))
	if !strings.Contains(string(p.raw), `<form method="post" action="/phish+">`) || !strings.Contains(p.header.Get("Content-Security-Policy"), "form-action 'self'") {
		t.Fatalf("preview: %s %s", p.header.Get("Content-Security-Policy"), p.raw)
	}
	r := e.reportForm("phish", "198.51.100.1", url.Values{"reason": {"phishing"}, "details": {"asks for my PIN"}, "contact": {"me@example.org"}})
	if r.status != 200 || !strings.Contains(string(r.raw), `id="report-sent"`) {
		t.Fatalf("report form: %d %s", r.status, r.raw)
	}
	r = e.reportForm("phish", "198.51.100.2", url.Values{"reason": {"bogus"}})
	if r.status != 422 || !strings.Contains(string(r.raw), "reason: must be one of") {
		t.Fatalf("a bad reason: %d %s", r.status, r.raw)
	}
	if r := e.reportForm("nosuch", "198.51.100.2", url.Values{"reason": {"spam"}}); r.status != 404 {
		t.Fatalf("an unknown link: %d", r.status)
	}
	// Through the API, with the short URL (the alternate host serves it too).
	e.do("POST", "/v1/abuse-reports", "", `{"short_url":"http://s.test/phish","reason":"phishing"}`, 202)
	e.do("POST", "/v1/abuse-reports", "", `{"short_url":"http://lb.test/phish+","reason":"spam"}`, 202)
	wantProblem(t, e.do("POST", "/v1/abuse-reports", "", `{"short_url":"http://lb.test/nosuch","reason":"spam"}`, 404), 404, link.ENOTFOUND)
	wantProblem(t, e.do("POST", "/v1/abuse-reports", "", `{"short_url":"phish","reason":"spam"}`, 422), 422, link.EINVALID)
	wantProblem(t, e.do("POST", "/v1/abuse-reports", "", `{"short_url":"http://lb.test/phish","reason":"spam","contact":"not an address"}`, 422), 422, link.EINVALID)
	wantProblem(t, e.do("POST", "/v1/abuse-reports", "", `{"short_url":"http://lb.test/phish","reason":"spam","details":"`+strings.Repeat("x", 1001)+`"}`, 422), 422, link.EINVALID)

	list := e.do("GET", "/v1/admin/abuse-reports", e.adminToken, "", 200)
	data := list.path("data").([]any)
	if len(data) != 2 {
		t.Fatalf("open reports: %s", list.raw)
	}
	spam, phishing := data[0].(map[string]any), data[1].(map[string]any)
	if phishing["reason"] != "phishing" || phishing["count"] != 2.0 || phishing["details"] != "asks for my PIN" ||
		phishing["contact"] != "me@example.org" || phishing["short_url"] != "http://lb.test/phish" ||
		phishing["link_id"] != l.str("id") || phishing["destination"] != "https://bank.example/login" || spam["reason"] != "spam" {
		t.Fatalf("reports %s", list.raw)
	}
	if one := e.do("GET", "/v1/admin/abuse-reports?limit=1&status=all", e.adminToken, "", 200); len(one.path("data").([]any)) != 1 {
		t.Fatalf("limit 1: %s", one.raw)
	}
	wantProblem(t, e.do("GET", "/v1/admin/abuse-reports?status=nope", e.adminToken, "", 400), 400, link.EINVALIDREQUEST)
	wantProblem(t, e.do("GET", "/v1/admin/abuse-reports", e.writeKey, "", 403), 403, link.EFORBIDDEN)

	done := e.do("PATCH", "/v1/admin/abuse-reports/"+phishing["id"].(string), e.adminToken, `{"status":"resolved"}`, 200)
	if done.str("status") != "resolved" {
		t.Fatalf("resolved: %s", done.raw)
	}
	wantProblem(t, e.do("PATCH", "/v1/admin/abuse-reports/"+phishing["id"].(string), e.adminToken, `{"status":"gone"}`, 422), 422, link.EINVALID)
	wantProblem(t, e.do("PATCH", "/v1/admin/abuse-reports/rpt_unknown", e.adminToken, `{"status":"dismissed"}`, 404), 404, link.ENOTFOUND)
	if open := e.do("GET", "/v1/admin/abuse-reports", e.adminToken, "", 200); len(open.path("data").([]any)) != 1 {
		t.Fatalf("open after one resolved: %s", open.raw)
	}
	if res := e.do("GET", "/v1/admin/abuse-reports?status=resolved", e.adminToken, "", 200); res.path("data", 0, "id") != phishing["id"] {
		t.Fatalf("resolved list: %s", res.raw)
	}

	// One address sends at most reportsPerMinute reports a minute.
	for i := range reportsPerMinute {
		if r := e.reportForm("phish", "203.0.113.9", url.Values{"reason": {"other"}}); r.status != 200 {
			t.Fatalf("report %d: %d %s", i, r.status, r.raw)
		}
	}
	if r := e.reportForm("phish", "203.0.113.9", url.Values{"reason": {"other"}}); r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("a flood: %d %s", r.status, r.raw)
	}
}

// TestAbuseReportsOnCustomDomain: a link on a custom domain is reported
// from its preview there (the form posts back to that host) and by its
// short URL on that host; the report names the link's short URL there.
func TestAbuseReportsOnCustomDomain(t *testing.T) {
	t.Parallel()
	e, _ := newDomainEnv(t)
	e.verifiedDomain("go.example.com", "")
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://spam.example/","alias":"deal","domain":"go.example.com"}`, 201)
	if p := e.onHost("go.example.com", "GET", "/deal+", "", ""); !strings.Contains(string(p.raw), `action="/deal+"`) {
		t.Fatalf("preview on the domain: %d %s", p.status, p.raw)
	}
	r := e.onHost("go.example.com", "POST", "/deal+", "", url.Values{"reason": {"spam"}}.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	if r.status != 200 || !strings.Contains(string(r.raw), `id="report-sent"`) {
		t.Fatalf("report on the domain: %d %s", r.status, r.raw)
	}
	e.do("POST", "/v1/abuse-reports", "", `{"short_url":"https://go.example.com/deal","reason":"spam"}`, 202)
	// Not the primary host's namespace.
	wantProblem(t, e.do("POST", "/v1/abuse-reports", "", `{"short_url":"http://lb.test/deal","reason":"spam"}`, 404), 404, link.ENOTFOUND)
	list := e.do("GET", "/v1/admin/abuse-reports", e.adminToken, "", 200)
	if list.path("data", 0, "count") != 2.0 || !strings.HasSuffix(list.path("data", 0, "short_url").(string), "go.example.com/deal") {
		t.Fatalf("reports %s", list.raw)
	}
}
