package server

import (
	"testing"
)

// TestImportedClicksInRangeAll: a link's clicks equal its analytics for
// range=all, whatever dates an import brings. Clicks dated in the future
// (2150) or before 2000 count undated, on the link's creation day, with
// their number in the report; a link and clicks dated before the
// workspace was made move the start of range=all back to them.
func TestImportedClicksInRangeAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	urls := "keyword,url,title,timestamp,ip,clicks\n" +
		"old,https://example.com/old,Old,2020-05-01 10:00:00,192.0.2.9,6\n"
	log := "click_id,click_time,shorturl,referrer,user_agent,ip_address,country_code\n" +
		"1,2150-01-01 00:00:00,old,direct,curl/8,192.0.2.9,DE\n" +
		"2,2150-06-01 00:00:00,old,direct,curl/8,192.0.2.9,DE\n" +
		"3,1990-01-01 00:00:00,old,direct,curl/8,192.0.2.9,DE\n" +
		"4,2021-03-01 12:00:00,old,direct,curl/8,192.0.2.9,DE\n" +
		"5,2026-03-10 11:00:00,old,direct,curl/8,192.0.2.9,DE\n"
	r := e.do("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "yourls", "data": urls, "log_data": log}), 200)
	if r.path("imported") != 1.0 || r.path("clicks") != 6.0 {
		t.Errorf("report: %s", r.raw)
	}
	id := r.path("items", 0, "link_id").(string)
	// A CSV link created before the workspace, with a total only.
	c := e.do("POST", "/v1/imports", e.writeKey, importBody(t, map[string]any{"from": "csv",
		"data": "url,alias,created_at,clicks\nhttps://example.com/csv,csv,2024-01-15T10:00:00Z,4\n"}), 200)
	csvID := c.path("items", 0, "link_id").(string)

	for _, tc := range []struct {
		id     string
		clicks float64
	}{{id, 6}, {csvID, 4}} {
		l := e.do("GET", "/v1/links/"+tc.id, e.readKey, "", 200)
		a := e.do("GET", "/v1/analytics/links/"+tc.id+"?range=all", e.readKey, "", 200)
		if l.path("clicks") != tc.clicks || a.path("totals", "clicks") != tc.clicks {
			t.Errorf("link %s: clicks %v, range=all analytics %v, want %v both", tc.id, l.path("clicks"), a.path("totals", "clicks"), tc.clicks)
		}
	}
	a := e.do("GET", "/v1/analytics/workspace?range=all", e.readKey, "", 200)
	if a.path("totals", "clicks") != 10.0 || a.path("range", "start") != "2020-05-01T00:00:00Z" {
		t.Errorf("workspace range=all: %v clicks from %v: %s", a.path("totals", "clicks"), a.path("range", "start"), a.raw)
	}
	// The redated clicks are on the link's creation day; none in 2150.
	day := e.do("GET", "/v1/analytics/links/"+id+"?start=2020-05-01T00:00:00Z&end=2020-05-02T00:00:00Z", e.readKey, "", 200)
	if day.path("totals", "clicks") != 4.0 { // 3 redated, 1 undated by the source
		t.Errorf("the link creation day: %s", day.raw)
	}
	if f := e.do("GET", "/v1/analytics/links/"+id+"?start=2150-01-01T00:00:00Z&end=2150-01-02T00:00:00Z", e.readKey, "", 200); f.path("totals", "clicks") != 0.0 {
		t.Fatalf("clicks in 2150: %s", f.raw)
	}
}
