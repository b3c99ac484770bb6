package postgres

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
)

func TestDrivePattern(t *testing.T) {
	common := map[string]bool{}
	for _, w := range []string{"https", "example", "com", "item"} {
		for _, tr := range wordTrigrams(w, true, true) {
			common[tr] = true
		}
		for _, tr := range wordTrigrams(w, false, false) {
			common[tr] = true
		}
		for _, tr := range wordTrigrams(w, true, false) {
			common[tr] = true
		}
		for _, tr := range wordTrigrams(w, false, true) {
			common[tr] = true
		}
	}
	for _, c := range []struct {
		term, want string
		ok         bool
	}{
		{"w123.example.com", "%w123.%.%", true},
		{"https://w7.example.com/item/42", "%://w7.%.%/%/42%", true},
		{"w5.example.com", "%w5.%.%", true}, // "w5 " is looked up
		{"https://w777.example.com/item/4242", "%://w777.%.%/%/4242%", true},
		{"example.com/x_y%z", `%.%/x\_y\%z%`, true},
		{"example.com/abc_d%", `%.%/abc\_d\%%`, true}, // wildcards of the term escaped
		{"w123", "", false},                           // nothing common to leave out
		{"example.com", "", false},                    // everything common
		{"ünïcode.example.com", "", false},            // not steered
		{"exam", "", false},                           // a part of a common word, not common itself
		{"example.com/", "", false},                   // nothing left to look up
	} {
		got, ok := drivePattern(c.term, common)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("drivePattern(%q) = %q, %v; want %q, %v", c.term, got, ok, c.want, c.ok)
		}
	}
	if _, ok := drivePattern("w123.example.com", nil); ok {
		t.Error("steered without a sample")
	}
}

// TestSearchSteered: with a sample of links whose hosts share their
// common words, a search steered past them answers exactly the links a
// plain LIKE of the whole term answers, in the same order, with the same
// total, whatever the term.
func TestSearchSteered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := Options{URL: pgtest.URL(t)}
	db, s, ws := openBootstrapped(t, o)
	const n = 600
	ls := make([]*link.Link, n)
	for i := range ls {
		ls[i] = &link.Link{Alias: "m" + strconv.Itoa(i), DestinationURL: "https://w" + strconv.Itoa(i%100) + ".example.com/item/" + strconv.Itoa(i), RedirectCode: 302}
		if i%7 == 0 {
			ls[i].Tags = []string{"team-" + strconv.Itoa(i%3)}
		}
	}
	if _, err := s.Links.CreateLinks(ctx, ws.ID, ls); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `ANALYZE links`); err != nil {
		t.Fatal(err)
	}
	links := s.Links.(*LinkService)
	common := links.commonTrigrams(ctx)
	if !common["exa"] || !common["com"] || common["w12"] {
		t.Fatalf("common trigrams of the sample: %d, exa %v com %v w12 %v", len(common), common["exa"], common["com"], common["w12"])
	}
	for _, term := range []string{"w12.example.com", "W12.Example.com/item/12", "w4.example.com/item", "example.com", "item/59",
		"m12", "team-1", "w3.example.com/item/3", ".example.com/item/1", "nothing.example.com"} {
		var want []string
		rows, err := db.pool.Query(ctx, `SELECT id FROM links WHERE workspace_id = $1 AND search_text LIKE $2 ORDER BY seq DESC`,
			ws.ID, "%"+escapeLike(lower(term))+"%")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			want = append(want, id)
		}
		rows.Close()
		var got []string
		total := -1
		for page := 1; ; page++ {
			p, err := s.Links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: ws.ID, Search: term, Page: page, Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			total = p.Total
			for _, l := range p.Links {
				got = append(got, l.ID)
			}
			if len(p.Links) < 7 {
				break
			}
		}
		if !slices.Equal(got, want) || total != len(want) {
			t.Errorf("search %q: %d links (total %d), want %d", term, len(got), total, len(want))
		}
	}
	if _, ok := drivePattern("w12.example.com", common); !ok {
		t.Error("a host search is not steered")
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
