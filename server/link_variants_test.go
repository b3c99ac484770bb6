package server

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLinkVariantsTopList splits 10,000 visitors 30/70 and reads the test
// back from the link's analytics: the variants top list counts exactly
// the visitors each destination got, with the variant's destination and
// weight; clicks no variant took are its other; the export carries each
// click's variant; a workspace's analytics have no variants list.
func TestLinkVariantsTopList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/","alias":"split","variants":[
		{"destination_url":"https://a.example/","weight":30},
		{"destination_url":"https://b.example/","weight":70}],
		"rules":[{"if":{"query":{"name":"src","value":"qr"}},"then":"https://example.com/qr"}]}`, 201)
	id := r.str("id")

	const n = 10_000
	counts := map[string]int{}
	for i := 0; i < n; i++ {
		req := visit("/split", fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), uaChromeWin)
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, req)
		if w.Code != 302 {
			t.Fatalf("status %d", w.Code)
		}
		counts[w.Header().Get("Location")]++
		if i%1000 == 999 {
			e.flush() // the test's queue is small
		}
	}
	if len(counts) != 2 {
		t.Fatalf("destinations %v", counts)
	}
	for dest, weight := range map[string]int{"https://a.example/": 30, "https://b.example/": 70} {
		share := float64(counts[dest]) * 100 / n
		if share < float64(weight)-3 || share > float64(weight)+3 {
			t.Errorf("%s got %.1f %% of the visitors, want %d ± 3 %%", dest, share, weight)
		}
	}
	// Two clicks a rule takes: in no variant.
	e.request(visit("/split?src=qr", "198.51.100.1", uaChromeWin))
	e.request(visit("/split?src=qr", "198.51.100.2", uaChromeWin))
	e.flush()

	r = e.do("GET", "/v1/analytics/links/"+id+"?range=today", e.readKey, "", 200)
	if got := r.path("totals", "clicks"); got != float64(n+2) {
		t.Fatalf("clicks %v, want %d", got, n+2)
	}
	list := r.path("top", "variants").([]any)
	if len(list) != 2 {
		t.Fatalf("variants: %s", r.raw)
	}
	want := map[string]struct {
		dest   string
		weight float64
	}{"1": {"https://a.example/", 30}, "2": {"https://b.example/", 70}}
	for _, x := range list {
		m := x.(map[string]any)
		w, ok := want[m["value"].(string)]
		if !ok || m["destination_url"] != w.dest || m["weight"] != w.weight {
			t.Fatalf("variant entry %v", m)
		}
		if m["clicks"] != float64(counts[w.dest]) {
			t.Errorf("variant %s: %v clicks, the redirects sent %d", m["value"], m["clicks"], counts[w.dest])
		}
	}
	if first := list[0].(map[string]any)["value"]; first != "2" {
		t.Errorf("most clicks first: %v", first)
	}
	if got := r.path("top_other", "variants"); got != float64(2) {
		t.Errorf("top_other.variants %v, want the 2 clicks the rule took", got)
	}

	// A variant the link no longer has keeps its count, without a destination.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"variants":[]}`, 200)
	r = e.do("GET", "/v1/analytics/links/"+id+"?range=today", e.readKey, "", 200)
	for _, x := range r.path("top", "variants").([]any) {
		if m := x.(map[string]any); m["destination_url"] != nil || m["weight"] != nil {
			t.Errorf("a variant the link no longer has: %v", m)
		}
	}

	// The workspace's analytics have no variants list.
	r = e.do("GET", "/v1/analytics/workspace?range=today", e.readKey, "", 200)
	if top := r.path("top").(map[string]any); top["variants"] != nil {
		t.Errorf("workspace top has variants: %v", top["variants"])
	}

	// The export names each click's variant.
	r = e.do("GET", "/v1/analytics/export?range=today&format=json&link_id="+id, e.readKey, "", 200)
	var rows []struct {
		Variant *int `json:"variant"`
	}
	if err := json.Unmarshal(r.raw, &rows); err != nil {
		t.Fatal(err)
	}
	byVariant := map[int]int{}
	for _, row := range rows {
		if row.Variant == nil {
			byVariant[0]++
		} else {
			byVariant[*row.Variant]++
		}
	}
	if byVariant[1] != counts["https://a.example/"] || byVariant[2] != counts["https://b.example/"] || byVariant[0] != 2 {
		t.Errorf("export by variant %v, redirects %v", byVariant, counts)
	}
	r = e.do("GET", "/v1/analytics/export?range=today&data=top&link_id="+id, e.readKey, "", 200)
	if want := fmt.Sprintf("variants,2,%d\n", counts["https://b.example/"]); !strings.Contains(string(r.raw), want) {
		t.Errorf("top export lacks %q: %s", want, r.raw)
	}
	if !strings.Contains(string(r.raw), "variants,(other),2\n") {
		t.Errorf("top export lacks the variants' other: %s", r.raw)
	}
}

// TestPreferredLanguage: the primary tag of the language with the highest
// q (the first among equals); q=0 and malformed weights are no choice.
func TestPreferredLanguage(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		"de-AT,de;q=0.9,en;q=0.8": "de",
		"en;q=0.5, FR-ca;q=0.8":   "fr",
		"fr;q=0":                  "",
		"fr;q=0, es;q=0.001":      "es",
		"it;q=abc, pt;q=0.3":      "pt",
		"it;q=1.5, pt;q=0.3":      "pt",
		"it;q=0.1234, pt;q=0.3":   "pt",
		"nl;q=1.000, sv":          "nl",
		"*, ja;q=0.2":             "ja",
		"":                        "",
	} {
		if got := preferredLanguage(h); got != want {
			t.Errorf("preferredLanguage(%q) = %q, want %q", h, got, want)
		}
	}
}
