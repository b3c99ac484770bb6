package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var orphanTests = []test{
	{"CountKeepPageAndPrune", testOrphanVisits},
}

func testOrphanVisits(t *testing.T, e *env) {
	h0 := e.now().UTC().Truncate(time.Hour)
	visit := func(domain, typ, path string, at time.Time) link.OrphanVisit {
		return link.OrphanVisit{Time: at, Domain: domain, Type: typ, Path: path, Referrer: "direct", Country: "DE",
			Device: "desktop", Browser: "Firefox", OS: "Linux"}
	}
	// Two batches in the first hour: 4 visits kept of 6 (at most 4 an
	// hour, whichever batch they come in), all counted; another domain
	// keeps its own; the second hour keeps its own.
	var batch []link.OrphanVisit
	for i := range 4 {
		batch = append(batch, visit("", link.OrphanInvalidShortURL, fmt.Sprintf("/c%d", i), h0.Add(time.Duration(i)*time.Second)))
	}
	batch = append(batch, visit("go.example.com", link.OrphanBaseURL, "/", h0.Add(time.Minute)))
	if err := e.Orphans.AddOrphanVisits(e.ctx, batch, 4); err != nil {
		t.Fatal(err)
	}
	if err := e.Orphans.AddOrphanVisits(e.ctx, []link.OrphanVisit{
		visit("", link.OrphanRegular404, "/a/b", h0.Add(10*time.Second)),
		visit("", link.OrphanBaseURL, "/", h0.Add(11*time.Second)),
		visit("", link.OrphanBaseURL, "/", h0.Add(time.Hour+time.Second)),
	}, 4); err != nil {
		t.Fatal(err)
	}
	counts, err := e.Orphans.OrphanCounts(e.ctx, "", h0, h0.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(counts), fmt.Sprint([]link.OrphanCount{
		{Hour: h0, Type: link.OrphanBaseURL, Count: 1}, {Hour: h0, Type: link.OrphanInvalidShortURL, Count: 4},
		{Hour: h0, Type: link.OrphanRegular404, Count: 1}, {Hour: h0.Add(time.Hour), Type: link.OrphanBaseURL, Count: 1},
	}); got != want {
		t.Fatalf("counts\n%s, want\n%s", got, want)
	}
	page := func(f link.OrphanVisitFilter) (string, string) {
		t.Helper()
		vs, next, err := e.Orphans.FindOrphanVisits(e.ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, v := range vs {
			s += v.Path + " "
		}
		return s, next
	}
	all := link.OrphanVisitFilter{Start: h0, End: h0.Add(2 * time.Hour), Limit: 10}
	if got, _ := page(all); got != "/ /c3 /c2 /c1 /c0 " {
		t.Fatalf("kept %q", got)
	}
	// Pages of 2, and a type.
	f := all
	f.Limit = 2
	got, next := page(f)
	f.Cursor = next
	got2, next := page(f)
	f.Cursor = next
	got3, next := page(f)
	if got+got2+got3 != "/ /c3 /c2 /c1 /c0 " || next != "" {
		t.Fatalf("pages %q %q %q, next %q", got, got2, got3, next)
	}
	f = all
	f.Type = link.OrphanBaseURL
	if got, _ := page(f); got != "/ " {
		t.Fatalf("base_url %q", got)
	}
	f = all
	f.Domain = "go.example.com"
	if got, _ := page(f); got != "/ " {
		t.Fatalf("domain %q", got)
	}
	if _, _, err := e.Orphans.FindOrphanVisits(e.ctx, link.OrphanVisitFilter{Cursor: "nope", Limit: 1, End: h0}); link.ErrorCode(err) != link.EINVALIDREQUEST {
		t.Fatalf("bad cursor: %v", err)
	}
	// Pruning the first hour: its 4 records of the primary host and 1 of
	// the domain, and its counters.
	n, err := e.Orphans.PruneOrphanVisits(e.ctx, h0.Add(time.Hour))
	if err != nil || n != 5 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	if got, _ := page(all); got != "/ " {
		t.Fatalf("after pruning %q", got)
	}
	counts, err = e.Orphans.OrphanCounts(e.ctx, "", h0, h0.Add(2*time.Hour))
	if err != nil || len(counts) != 1 {
		t.Fatalf("counts after pruning %v, %v", counts, err)
	}
}
