package server

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	chromeUA  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	iphoneUA  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
	slackUA   = "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"
	curlUA    = "curl/8.5.0"
	firefoxUA = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
)

// click follows a short link as a client with the given user agent,
// address and referrer.
func (e *env) click(alias, ua, addr, referer string) {
	e.t.Helper()
	req := newRequest("GET", "/"+alias, "", "")
	req.Header.Set("User-Agent", ua)
	req.RemoteAddr = addr + ":5555"
	if referer != "" {
		req.Header.Set("Referer", referer)
	}
	if r := e.request(req); r.status != 302 {
		e.t.Fatalf("click on %s: %d", alias, r.status)
	}
}

func topOf(r *response, dim string) map[string]float64 {
	out := map[string]float64{}
	for _, x := range r.path("top", dim).([]any) {
		m := x.(map[string]any)
		out[m["value"].(string)] = m["clicks"].(float64)
	}
	return out
}

func TestAnalyticsDimensions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"a"}`, 201).str("id")
	b := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","alias":"b"}`, 201).str("id")
	// a: 3 Chrome clicks from one visitor via news.example, 1 iPhone direct,
	// 1 Slack unfurl; b: 2 Firefox clicks from two visitors, 1 curl.
	for i := 0; i < 3; i++ {
		e.click("a", chromeUA, "198.51.100.7", "https://news.example/post/1")
	}
	e.click("a", iphoneUA, "198.51.100.8", "")
	e.click("a", slackUA, "198.51.100.9", "")
	e.click("b", firefoxUA, "203.0.113.1", "https://Search.Example/?q=x")
	e.click("b", firefoxUA, "203.0.113.2", "https://search.example/")
	e.click("b", curlUA, "203.0.113.3", "")
	e.flush()

	r := e.do("GET", "/v1/analytics/workspace?range=today", e.readKey, "", 200)
	if got := r.path("totals").(map[string]any); got["clicks"] != float64(8) || got["bot_clicks"] != float64(2) || got["unique_visitors"] != float64(6) {
		t.Fatalf("totals = %v", got)
	}
	if got := topOf(r, "links"); got[a] != 5 || got[b] != 3 {
		t.Fatalf("top links = %v", got)
	}
	if got := r.path("top", "links", 0, "short_url"); got != "http://lb.test/a" {
		t.Fatalf("top link short_url = %v", got)
	}
	if got := topOf(r, "referrers"); got["news.example"] != 3 || got["search.example"] != 2 || got["direct"] != 3 {
		t.Fatalf("top referrers = %v", got)
	}
	if got := topOf(r, "devices"); got["desktop"] != 5 || got["mobile"] != 1 || got["bot"] != 2 {
		t.Fatalf("top devices = %v", got)
	}
	if got := topOf(r, "browsers"); got["Chrome"] != 3 || got["Firefox"] != 2 || got["Safari"] != 1 {
		t.Fatalf("top browsers = %v", got)
	}
	if got := topOf(r, "os"); got["Windows"] != 3 || got["Linux"] < 2 || got["iOS"] != 1 {
		t.Fatalf("top os = %v", got)
	}
	if got := topOf(r, "countries"); got["unknown"] != 8 {
		t.Fatalf("countries without a GeoIP database = %v", got)
	}

	// exclude_bots leaves the bots out everywhere.
	r = e.do("GET", "/v1/analytics/workspace?range=today&exclude_bots=true", e.readKey, "", 200)
	if got := r.path("totals").(map[string]any); got["clicks"] != float64(6) || got["bot_clicks"] != float64(2) || got["unique_visitors"] != float64(4) {
		t.Fatalf("totals without bots = %v", got)
	}
	if got := topOf(r, "devices"); got["bot"] != 0 || got["desktop"] != 5 {
		t.Fatalf("devices without bots = %v", got)
	}
	var sum float64
	for _, p := range r.path("timeseries").([]any) {
		sum += p.(map[string]any)["clicks"].(float64)
	}
	if sum != 6 {
		t.Fatalf("timeseries without bots sums to %v", sum)
	}

	// One link's analytics; the link's clicks agree with them.
	r = e.do("GET", "/v1/analytics/links/"+a+"?range=all", e.readKey, "", 200)
	if got := r.path("totals", "clicks"); got != float64(5) {
		t.Fatalf("link a clicks = %v", got)
	}
	if got := e.do("GET", "/v1/links/"+a, e.readKey, "", 200).path("clicks"); got != float64(5) {
		t.Fatalf("link a's clicks field = %v", got)
	}
	if got := topOf(r, "links"); len(got) != 1 || got[a] != 5 {
		t.Fatalf("link a's top links = %v", got)
	}
	// Another workspace's link is 404; so is a deleted one.
	wantProblem(t, e.request(newRequest("GET", "/v1/analytics/links/"+e.otherLink, e.readKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("GET", "/v1/analytics/links/"+a, e.otherKey, "")), 404, "not_found")
	for _, q := range []string{"exclude_bots=maybe", "limit=0", "limit=101"} {
		wantProblem(t, e.request(newRequest("GET", "/v1/analytics/workspace?"+q, e.readKey, "")), 400, "invalid_request")
	}
	if got := len(e.do("GET", "/v1/analytics/workspace?limit=1", e.readKey, "", 200).path("top", "referrers").([]any)); got != 1 {
		t.Fatalf("limit=1 gave %d referrers", got)
	}
}

func TestExport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"a"}`, 201).str("id")
	e.click("a", chromeUA, "198.51.100.7", "https://news.example/")
	e.clock.Add(time.Minute)
	e.click("a", curlUA, "198.51.100.8", "")
	e.flush()
	e.do("POST", "/v1/links", e.otherKey, `{"destination_url":"https://example.com/z","alias":"z"}`, 201)
	e.click("z", chromeUA, "198.51.100.9", "")
	e.flush()

	r := e.do("GET", "/v1/analytics/export?range=today", e.readKey, "", 200)
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("Content-Type %q", ct)
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.raw))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || strings.Join(rows[0], ",") != "time,link_id,campaign_id,referrer,country,device,browser,os,bot,visitor,variant" {
		t.Fatalf("CSV: %q", rows)
	}
	if rows[1][1] != id || rows[1][3] != "news.example" || rows[1][6] != "Chrome" || rows[1][8] != "false" ||
		rows[2][3] != "direct" || rows[2][5] != "bot" || rows[2][8] != "true" || len(rows[1][9]) != 16 {
		t.Fatalf("CSV rows: %q", rows[1:])
	}
	if strings.Contains(string(r.raw), "198.51.100") || strings.Contains(string(r.raw), "Mozilla") {
		t.Fatal("the export holds an address or a user agent")
	}

	r = e.do("GET", "/v1/analytics/export?range=today&format=json", e.readKey, "", 200)
	var clicks []map[string]any
	if err := json.Unmarshal(r.raw, &clicks); err != nil || len(clicks) != 2 || clicks[0]["link_id"] != id || clicks[1]["bot"] != true {
		t.Fatalf("JSON export: %v %s", err, r.raw)
	}
	// An empty range is a valid empty export.
	r = e.do("GET", "/v1/analytics/export?range=yesterday&format=json", e.readKey, "", 200)
	if strings.TrimSpace(string(r.raw)) != "[]" {
		t.Fatalf("empty JSON export: %s", r.raw)
	}

	r = e.do("GET", "/v1/analytics/export?range=today&data=timeseries&interval=day", e.readKey, "", 200)
	if got := strings.TrimSpace(string(r.raw)); got != "start,clicks\n2026-03-10T00:00:00Z,2" {
		t.Fatalf("timeseries CSV: %q", got)
	}
	r = e.do("GET", "/v1/analytics/export?range=today&data=top&exclude_bots=true", e.readKey, "", 200)
	if !strings.Contains(string(r.raw), "referrers,news.example,1") || strings.Contains(string(r.raw), "devices,bot") {
		t.Fatalf("top CSV: %s", r.raw)
	}
	for _, q := range []string{"format=xml", "data=raw", "data=top&format=json"} {
		wantProblem(t, e.request(newRequest("GET", "/v1/analytics/export?"+q, e.readKey, "")), 400, "invalid_request")
	}
}

// TestExportOfALinkOrCampaign narrows the export to one link or one
// campaign: only their clicks, in every data kind; unknown, foreign or
// both filters are refused.
func TestExportOfALinkOrCampaign(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cmp := e.do("POST", "/v1/campaigns", e.writeKey, `{"name":"Spring"}`, 201).str("id")
	a := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"a","campaign_id":"`+cmp+`"}`, 201).str("id")
	b := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","alias":"b"}`, 201).str("id")
	e.click("a", chromeUA, "198.51.100.7", "")
	e.click("b", chromeUA, "198.51.100.8", "")
	e.click("b", firefoxUA, "198.51.100.9", "")
	e.flush()

	for q, want := range map[string][]string{
		"link_id=" + a:       {a},
		"link_id=" + b:       {b, b},
		"campaign_id=" + cmp: {a},
		"":                   {a, b, b},
	} {
		r := e.do("GET", "/v1/analytics/export?range=today&format=json&"+q, e.readKey, "", 200)
		var clicks []map[string]any
		if err := json.Unmarshal(r.raw, &clicks); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range clicks {
			got = append(got, c["link_id"].(string))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("export %q: links %v, want %v", q, got, want)
		}
	}
	r := e.do("GET", "/v1/analytics/export?range=today&data=timeseries&interval=day&link_id="+b, e.readKey, "", 200)
	if got := strings.TrimSpace(string(r.raw)); got != "start,clicks\n2026-03-10T00:00:00Z,2" {
		t.Fatalf("timeseries of b: %q", got)
	}
	r = e.do("GET", "/v1/analytics/export?range=today&data=top&campaign_id="+cmp, e.readKey, "", 200)
	if !strings.Contains(string(r.raw), "browsers,Chrome,1") || strings.Contains(string(r.raw), "Firefox") {
		t.Fatalf("top of the campaign: %s", r.raw)
	}

	other := e.do("POST", "/v1/links", e.otherKey, `{"destination_url":"https://example.com/z","alias":"z"}`, 201).str("id")
	wantProblem(t, e.request(newRequest("GET", "/v1/analytics/export?link_id="+other, e.readKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("GET", "/v1/analytics/export?campaign_id=cmp_nothere", e.readKey, "")), 404, "not_found")
	wantProblem(t, e.request(newRequest("GET", "/v1/analytics/export?link_id="+a+"&campaign_id="+cmp, e.readKey, "")), 400, "invalid_request")
}

// TestAnalyticsReferrerFlood clicks a link from 30 referrers of 3 to 32
// clicks and from 300 distinct long host names once each: the answer for
// limit=100 lists the 30 exactly and first, top_other holds the rest of
// the clicks, and the top export stays bounded with an (other) row, each
// dimension summing to the clicks.
func TestAnalyticsReferrerFlood(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"a"}`, 201)
	var total float64
	for i := range 30 {
		for range i + 3 {
			e.click("a", chromeUA, "198.51.100.7", fmt.Sprintf("https://heavy%02d.example/post", i))
			total++
		}
	}
	for i := range 300 {
		e.click("a", chromeUA, fmt.Sprintf("203.0.113.%d", i%250), fmt.Sprintf("https://%s.f%03d.example/", strings.Repeat("x", 60), i))
		total++
	}
	e.flush()

	r := e.do("GET", "/v1/analytics/workspace?range=today&limit=100", e.readKey, "", 200)
	if got := r.path("totals", "clicks"); got != total {
		t.Fatalf("clicks = %v, want %v", got, total)
	}
	refs := r.path("top", "referrers").([]any)
	if len(refs) != 100 {
		t.Fatalf("%d referrers, want 100", len(refs))
	}
	var listed float64
	for i, x := range refs {
		m := x.(map[string]any)
		listed += m["clicks"].(float64)
		if i >= 30 {
			continue
		}
		if want := fmt.Sprintf("heavy%02d.example", 29-i); m["value"] != want || m["clicks"] != float64(32-i) {
			t.Fatalf("referrer %d = %v, want %s with %d clicks", i, m, want, 32-i)
		}
	}
	if got := r.path("top_other", "referrers"); got != total-listed {
		t.Fatalf("top_other.referrers = %v, want %v", got, total-listed)
	}
	if got := r.path("top_other", "links"); got != float64(0) {
		t.Fatalf("top_other.links = %v, want 0", got)
	}

	r = e.do("GET", "/v1/analytics/export?range=today&data=top", e.readKey, "", 200)
	rows, err := csv.NewReader(strings.NewReader(string(r.raw))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]float64{}
	var refRows int
	var other string
	for _, row := range rows[1:] {
		n, err := strconv.ParseFloat(row[2], 64)
		if err != nil {
			t.Fatalf("row %q: %v", row, err)
		}
		sums[row[0]] += n
		if row[0] == "referrers" {
			refRows++
			if row[1] == "(other)" {
				other = row[2]
			}
		}
	}
	if refRows > 257 || other == "" {
		t.Fatalf("top export: %d referrer rows, (other) %q", refRows, other)
	}
	for _, dim := range []string{"links", "referrers", "countries", "devices", "browsers", "os"} {
		if sums[dim] != total {
			t.Fatalf("top export: %s rows sum to %v, want %v", dim, sums[dim], total)
		}
	}
}
