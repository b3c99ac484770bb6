package storage

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRawSearchMatch checks that reading an encoded link record without
// decoding it gives searchMatches' answer, or declines: for records with
// and without a domain and tags, escaped and non-ASCII strings, a long
// destination, and texts in every field and in none.
func TestRawSearchMatch(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", SearchDestinationBytes) + "tail"
	recs := []linkRecord{
		{Workspace: 7, Alias: "Spring-Sale", Destination: "https://Shop.example.com/Path?q=1&x=<y>"},
		{Workspace: 7, Alias: "a", Domain: "go.example.com", Destination: "https://example.org/x", Tags: []string{"News", "q4"}},
		{Workspace: 12345678901, Alias: "b", Destination: long, Tags: []string{"t"}, UTMSource: "spring"},
		{Workspace: 7, Alias: "kelvin", Destination: "https://example.com/\u212aelvin"},
		{Workspace: 7, Alias: "quote", Destination: "https://example.com/\"q\""},
	}
	for _, rec := range recs {
		raw, err := json.Marshal(&rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"spring", "sale", "shop.example", "path?q=1", "&x=", "news", "q4", "go.example", "tail", "aaaa", "kelvin", "nothing", "k", "\"q\""} {
			wid, match, known := rawSearchMatch(raw, []byte(q))
			if !known {
				if !strings.ContainsAny(string(raw), "\\") && !strings.ContainsFunc(string(raw), func(r rune) bool { return r >= 0x80 }) {
					t.Errorf("%s: declined a plain record", raw)
				}
				continue
			}
			if wid != rec.Workspace || match != searchMatches(&rec, q) {
				t.Errorf("%s, %q: workspace %d match %v, want %d %v", raw, q, wid, match, rec.Workspace, searchMatches(&rec, q))
			}
		}
	}
}
