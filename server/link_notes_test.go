package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLinkNotes: a note is set on create, bulk create, PATCH and bulk
// update, cleared by null or "", shown in lists and found by search line
// by line; bad notes are 422 with the field named, and a note never
// reaches the public preview page.
func TestLinkNotes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	l := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/a","alias":"flyer","note":"  Printed on the spring flyer\r\nAsk Dana <first>  "}`, 201)
	if got, want := l.path("note"), "Printed on the spring flyer\nAsk Dana <first>"; got != want {
		t.Fatalf("note %q, want %q", got, want)
	}
	id := l.str("id")
	plain := e.do("POST", "/v1/links", e.writeKey, `{"destination_url":"https://example.com/b","alias":"plain"}`, 201)
	if plain.path("note") != nil {
		t.Fatalf("a link without a note: note %v, want null", plain.path("note"))
	}
	bulk := e.do("POST", "/v1/links/bulk", e.writeKey, `{"links":[{"destination_url":"https://example.com/c","alias":"bulky","note":"From the bulk\tcall"}]}`, 200)
	if got := bulk.path("data", 0, "link", "note"); got != "From the bulk\tcall" {
		t.Fatalf("bulk item's note %v", got)
	}
	search := func(q string, want ...string) {
		t.Helper()
		r := e.do("GET", "/v1/links?search="+q, e.readKey, "", 200)
		var got []string
		for _, it := range r.path("data").([]any) {
			got = append(got, it.(map[string]any)["alias"].(string))
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("search %q: %v, want %v", q, got, want)
		}
	}
	search("dana", "flyer")
	search("SPRING%20FLYER", "flyer")
	search("flyer%0Aask")
	search("bulk", "bulky")
	if got := e.do("GET", "/v1/links", e.readKey, "", 200).path("data", 2, "note"); got != "Printed on the spring flyer\nAsk Dana <first>" {
		t.Fatalf("listed note %v", got)
	}

	// PATCH changes and clears it; bulk update sets it on several.
	if got := e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"note":"Reprinted for autumn"}`, 200).path("note"); got != "Reprinted for autumn" {
		t.Fatalf("patched note %v", got)
	}
	search("dana")
	search("autumn", "flyer")
	if got := e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"title":"Flyer"}`, 200).path("note"); got != "Reprinted for autumn" {
		t.Fatalf("a PATCH without note changed it: %v", got)
	}
	body, _ := json.Marshal(map[string]any{"ids": []string{id, plain.str("id")}, "data": map[string]any{"note": "Both of these"}})
	up := e.do("POST", "/v1/links/bulk-update", e.writeKey, string(body), 200)
	if up.path("data", 0, "link", "note") != "Both of these" || up.path("data", 1, "link", "note") != "Both of these" {
		t.Fatalf("bulk update: %s", up.raw)
	}
	search("both", "plain", "flyer")
	for _, clear := range []string{`{"note":null}`, `{"note":""}`} {
		e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"note":"x"}`, 200)
		if got := e.do("PATCH", "/v1/links/"+id, e.writeKey, clear, 200).path("note"); got != nil {
			t.Errorf("%s: note %v, want null", clear, got)
		}
	}

	// The preview page is public: the note is not on it.
	e.do("PATCH", "/v1/links/"+id, e.writeKey, `{"note":"internal only"}`, 200)
	if r := e.request(newRequest("GET", "/flyer+", "", "")); r.status != 200 || strings.Contains(string(r.raw), "internal only") {
		t.Fatalf("preview: %d, holds the note: %v", r.status, strings.Contains(string(r.raw), "internal only"))
	}

	for _, tc := range []struct{ name, note string }{
		{"too long", strings.Repeat("é", 2001)},
		{"a control character", "bell\a"},
		{"an escape", "a\x1b[31m"},
		{"a bidi override", "invoice \u202egnp.exe"},
		{"a bidi isolate", "a\u2067b"},
	} {
		b, _ := json.Marshal(map[string]any{"destination_url": "https://example.com/", "note": tc.note})
		r := e.do("POST", "/v1/links", e.writeKey, string(b), 422)
		wantProblem(t, r, 422, "validation_failed")
		if got := r.path("errors", 0, "field"); got != "note" {
			t.Errorf("%s: field %v, want note", tc.name, got)
		}
		p, _ := json.Marshal(map[string]any{"note": tc.note})
		if got := e.do("PATCH", "/v1/links/"+id, e.writeKey, string(p), 422).path("errors", 0, "field"); got != "note" {
			t.Errorf("PATCH %s: field %v, want note", tc.name, got)
		}
		bb, _ := json.Marshal(map[string]any{"links": []any{map[string]any{"destination_url": "https://example.com/", "note": tc.note}}})
		if got := e.do("POST", "/v1/links/bulk", e.writeKey, string(bb), 200).path("data", 0, "error", "errors", 0, "field"); got != "note" {
			t.Errorf("bulk %s: field %v, want note", tc.name, got)
		}
	}
	// Exactly the limit is fine.
	b, _ := json.Marshal(map[string]any{"destination_url": "https://example.com/", "note": strings.Repeat("é", 2000)})
	e.do("POST", "/v1/links", e.writeKey, string(b), 201)
}
