package storage_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

func TestFindLinks(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	camp := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	otherCamp := mustCampaign(t, s, other.ID, &link.Campaign{Name: "Foreign"})

	mustVerifiedDomain(t, s, ws.ID, "go.example.com")

	// 25 links, newest last: tags by i%3, every 5th on a custom domain,
	// every 4th in a campaign, and "Needle" in a few destinations.
	var ids []string
	for i := range 25 {
		l := &link.Link{Alias: fmt.Sprintf("l%02d", i), DestinationURL: fmt.Sprintf("https://example.com/%d", i),
			Tags: []string{[]string{"red", "green", "blue"}[i%3]}}
		if i%5 == 0 {
			l.Domain = "go.example.com"
		}
		if i%4 == 0 {
			l.CampaignID = camp.ID
			l.Tags = append(l.Tags, "red")
		}
		if i == 7 || i == 17 {
			l.DestinationURL = "https://example.com/NeedleInHay"
		}
		ids = append(ids, mustLink(t, s, ws.ID, l).ID)
		s.Clock.Add(time.Second)
	}
	mustLink(t, s, other.ID, &link.Link{Alias: "foreign", Tags: []string{"red"}, DestinationURL: "https://example.com/needle", CampaignID: otherCamp.ID})

	// want lists link indexes, newest first.
	pick := func(keep func(i int) bool) []string {
		var out []string
		for i := 24; i >= 0; i-- {
			if keep(i) {
				out = append(out, ids[i])
			}
		}
		return out
	}
	red := func(i int) bool { return i%3 == 0 || i%4 == 0 }
	for _, tt := range []struct {
		name      string
		f         link.LinkFilter
		want      []string // the page
		wantTotal int
	}{
		{"first page", link.LinkFilter{Limit: 10, Page: 1}, pick(func(i int) bool { return i >= 15 }), 25},
		{"last page", link.LinkFilter{Limit: 10, Page: 3}, pick(func(i int) bool { return i < 5 }), 25},
		{"past the end", link.LinkFilter{Limit: 10, Page: 4}, nil, 25},
		{"defaults", link.LinkFilter{}, pick(func(i int) bool { return i >= 5 }), 25},
		{"one tag", link.LinkFilter{Tags: []string{"red"}, Limit: 100}, pick(red), len(pick(red))},
		{"one tag, page 2", link.LinkFilter{Tags: []string{"red"}, Limit: 5, Page: 2}, pick(red)[5:10], len(pick(red))},
		{"two tags, any of, once each", link.LinkFilter{Tags: []string{"red", "green"}, Limit: 100},
			pick(func(i int) bool { return red(i) || i%3 == 1 }), len(pick(func(i int) bool { return red(i) || i%3 == 1 }))},
		{"two tags, page 2", link.LinkFilter{Tags: []string{"blue", "red", "blue"}, Limit: 4, Page: 2},
			pick(func(i int) bool { return red(i) || i%3 == 2 })[4:8], len(pick(func(i int) bool { return red(i) || i%3 == 2 }))},
		{"unknown tag", link.LinkFilter{Tags: []string{"nope"}}, nil, 0},
		{"search destination, any case", link.LinkFilter{Search: "needle", Limit: 100}, pick(func(i int) bool { return i == 7 || i == 17 }), 2},
		{"search alias", link.LinkFilter{Search: "L1", Limit: 100}, pick(func(i int) bool { return i >= 10 && i < 20 }), 10},
		{"search and tag", link.LinkFilter{Search: "needle", Tags: []string{"green"}, Limit: 100}, pick(func(i int) bool { return i == 7 }), 1},
		{"custom domain", link.LinkFilter{Domain: ptr("GO.example.com"), Limit: 3}, pick(func(i int) bool { return i%5 == 0 })[:3], 5},
		{"primary host", link.LinkFilter{Domain: ptr(""), Limit: 100}, pick(func(i int) bool { return i%5 != 0 }), 20},
		{"campaign", link.LinkFilter{CampaignID: camp.ID, Limit: 100}, pick(func(i int) bool { return i%4 == 0 }), 7},
		{"campaign, page 2", link.LinkFilter{CampaignID: camp.ID, Limit: 3, Page: 2}, pick(func(i int) bool { return i%4 == 0 })[3:6], 7},
		{"campaign of another workspace", link.LinkFilter{CampaignID: otherCamp.ID, Limit: 100}, nil, 0},
		{"unknown campaign", link.LinkFilter{CampaignID: s.DB.FormatID("cmp_", 1<<40), Limit: 100}, nil, 0},
		{"campaign and domain and tags", link.LinkFilter{CampaignID: camp.ID, Domain: ptr("go.example.com"), Tags: []string{"red", "blue"}, Limit: 100},
			pick(func(i int) bool { return i%4 == 0 && i%5 == 0 }), 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.WorkspaceID = ws.ID
			links, total, err := findLinks(ctx, s.Links, f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range links {
				got = append(got, l.ID)
				if l.WorkspaceID != ws.ID {
					t.Fatalf("link of another workspace: %+v", l)
				}
			}
			if !slices.Equal(got, tt.want) || total != tt.wantTotal {
				t.Fatalf("got %v (total %d), want %v (total %d)", got, total, tt.want, tt.wantTotal)
			}
		})
	}

	_, _, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: "ws_zzz"})
	wantCode(t, err, link.ENOTFOUND)
	links, total, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: other.ID, Tags: []string{"red"}})
	if err != nil || total != 1 || len(links) != 1 || links[0].Alias != "foreign" {
		t.Fatalf("other workspace: %v, %d, %v", links, total, err)
	}
}

func TestFindLinks_HugePage(t *testing.T) {
	s, _, ws := mustSetup(t)
	mustLink(t, s, ws.ID, &link.Link{Alias: "one"})
	for _, f := range []link.LinkFilter{
		{WorkspaceID: ws.ID, Page: math.MaxInt, Limit: 100},
		{WorkspaceID: ws.ID, Page: math.MaxInt / 50, Limit: 100},
		{WorkspaceID: ws.ID, Page: math.MaxInt, Limit: 100, Search: "one"},
	} {
		links, total, err := findLinks(context.Background(), s.Links, f)
		if err != nil || len(links) != 0 || total != 1 {
			t.Fatalf("page %d: %v, %d, %v", f.Page, links, total, err)
		}
	}
}

// TestFindLinks_SearchEncoding checks search and filters on values that
// JSON escapes or that change under Unicode case mapping.
func TestFindLinks_SearchEncoding(t *testing.T) {
	s, _, ws := mustSetup(t)
	amp := mustLink(t, s, ws.ID, &link.Link{Alias: "amp", DestinationURL: "https://example.com/?a=1&b=<2>"})
	kelvin := mustLink(t, s, ws.ID, &link.Link{Alias: "temp1", DestinationURL: "https://example.com/\u212a\u00dcber"})
	// Campaign IDs are generated (cmp_ and base 36), so none holds characters
	// JSON escapes; the escaped needle is checked on the destination above.
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "C&<x>"})
	mustVerifiedDomain(t, s, ws.ID, "ex.example.com")
	camp := mustLink(t, s, ws.ID, &link.Link{Alias: "camp", CampaignID: c.ID, Domain: "Ex.Example.com"})
	for _, tt := range []struct {
		name string
		f    link.LinkFilter
		want string
	}{
		{"escaped characters", link.LinkFilter{Search: "&B=<2"}, amp.ID},
		{"kelvin sign lowers to k", link.LinkFilter{Search: "k"}, kelvin.ID},
		{"non-ASCII any case", link.LinkFilter{Search: "üBER"}, kelvin.ID},
		{"campaign", link.LinkFilter{CampaignID: c.ID}, camp.ID},
		{"domain any case", link.LinkFilter{Domain: ptr("EX.example.COM")}, camp.ID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.WorkspaceID = ws.ID
			links, total, err := findLinks(context.Background(), s.Links, f)
			if err != nil || total != 1 || len(links) != 1 || links[0].ID != tt.want {
				t.Fatalf("got %v (total %d, %v), want %s", links, total, err, tt.want)
			}
		})
	}
}

// TestFindLinkPage_ScanLimit checks the bound on a filtered walk: a
// workspace larger than ScanLimit is scanned newest first up to the bound
// and the page says Truncated, counting only the matches it saw; one of
// exactly ScanLimit links (or a walk that reads no record) is complete.
func TestFindLinkPage_ScanLimit(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	var ids []string
	for i := range 12 {
		l := mustLink(t, s, ws.ID, &link.Link{Alias: fmt.Sprintf("b%d", i), DestinationURL: fmt.Sprintf("https://example.com/%d", i), Tags: []string{"t"}})
		ids = append(ids, l.ID)
	}
	for _, tt := range []struct {
		name      string
		f         link.LinkFilter
		total     int
		first     string
		truncated bool
	}{
		{"all match, bound hit", link.LinkFilter{Search: "example", ScanLimit: 5}, 5, ids[11], true},
		{"only the oldest matches", link.LinkFilter{Search: "b0", ScanLimit: 5}, 0, "", true},
		{"bound equals the workspace", link.LinkFilter{Search: "b0", ScanLimit: 12}, 1, ids[0], false},
		{"no bound", link.LinkFilter{Search: "b0"}, 1, ids[0], false},
		{"tags alone read no record", link.LinkFilter{Tags: []string{"t"}, ScanLimit: 5}, 12, ids[11], false},
		{"several tags read no record", link.LinkFilter{Tags: []string{"t", "u"}, ScanLimit: 5}, 12, ids[11], false},
		{"tag and search", link.LinkFilter{Tags: []string{"t"}, Search: "example.com/1", ScanLimit: 3}, 2, ids[11], true}, // 11 and 10 of 11, 10, 9
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.WorkspaceID = ws.ID
			p, err := s.Links.FindLinkPage(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if p.Total != tt.total || p.Truncated != tt.truncated {
				t.Fatalf("total %d truncated %v, want %d %v", p.Total, p.Truncated, tt.total, tt.truncated)
			}
			if tt.first == "" && len(p.Links) != 0 || tt.first != "" && (len(p.Links) == 0 || p.Links[0].ID != tt.first) {
				t.Fatalf("links %v, want first %q", p.Links, tt.first)
			}
		})
	}
}

// TestFindLinkPage_CampaignIndex: campaign_id reads the campaign's own
// index, so a campaign whose links are older than the workspace's newest
// ScanLimit links lists them all (the walk over the workspace found none
// and said Truncated), with the other filters still applied; an id that
// is no campaign lists nothing.
func TestFindLinkPage_CampaignIndex(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Old spring"})
	other := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Other"})
	var in []string
	for i := range 3 {
		l := mustLink(t, s, ws.ID, &link.Link{Alias: fmt.Sprintf("old%d", i), DestinationURL: fmt.Sprintf("https://example.com/old/%d", i), CampaignID: c.ID})
		in = append(in, l.ID)
	}
	mustLink(t, s, ws.ID, &link.Link{Alias: "other", DestinationURL: "https://example.com/other", CampaignID: other.ID})
	for i := range 10 {
		mustLink(t, s, ws.ID, &link.Link{Alias: fmt.Sprintf("new%d", i), DestinationURL: fmt.Sprintf("https://example.com/new/%d", i)})
	}
	for _, tt := range []struct {
		name      string
		f         link.LinkFilter
		want      []string
		truncated bool
	}{
		{"the campaign's links, newest first", link.LinkFilter{CampaignID: c.ID, ScanLimit: 5}, []string{in[2], in[1], in[0]}, false},
		{"and a short search", link.LinkFilter{CampaignID: c.ID, Search: "d1", ScanLimit: 5}, []string{in[1]}, false},
		{"and a domain", link.LinkFilter{CampaignID: c.ID, Domain: new(string), ScanLimit: 5}, []string{in[2], in[1], in[0]}, false},
		{"bound within the campaign", link.LinkFilter{CampaignID: c.ID, ScanLimit: 2}, []string{in[2], in[1]}, true},
		{"by clicks", link.LinkFilter{CampaignID: c.ID, Sort: link.SortClicks, ScanLimit: 5}, []string{in[2], in[1], in[0]}, false},
		{"no such campaign", link.LinkFilter{CampaignID: "cmp_nothing", ScanLimit: 5}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.WorkspaceID = ws.ID
			p, err := s.Links.FindLinkPage(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range p.Links {
				got = append(got, l.ID)
			}
			if !slices.Equal(got, tt.want) || p.Total != len(tt.want) || p.Truncated != tt.truncated {
				t.Fatalf("links %v total %d truncated %v, want %v %d %v", got, p.Total, p.Truncated, tt.want, len(tt.want), tt.truncated)
			}
		})
	}
}

// findLinks returns a page of links and the total matching f, as the list
// endpoints read them.
func findLinks(ctx context.Context, ls *storage.LinkService, f link.LinkFilter) ([]*link.Link, int, error) {
	p, err := ls.FindLinkPage(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	return p.Links, p.Total, nil
}

// TestFindLinkPage_SortClicks ranks links by their click counters, the
// newest first among equals, over the whole walk of any index (no bound)
// or the newest ScanLimit links, with the record filters applied first.
func TestFindLinkPage_SortClicks(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	var ls []*link.Link
	for i := range 6 {
		ls = append(ls, mustLink(t, s, ws.ID, &link.Link{Alias: fmt.Sprintf("k%d", i),
			DestinationURL: fmt.Sprintf("https://example.com/%d", i), Tags: []string{[]string{"a", "b", "c"}[i%3]}}))
	}
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var clicks []link.Click
	for i, n := range []int{4, 0, 2, 2, 7, 0} {
		for j := range n {
			clicks = append(clicks, link.Click{LinkID: ls[i].ID, WorkspaceID: ws.ID, Time: at, Visitor: uint64(i*100 + j)})
		}
	}
	mustRecord(t, s, clicks...)
	aliases := func(p *link.LinkPage) string {
		var out []string
		for _, l := range p.Links {
			out = append(out, fmt.Sprintf("%s:%d", l.Alias, l.Clicks))
		}
		return strings.Join(out, " ")
	}
	for _, tt := range []struct {
		name      string
		f         link.LinkFilter
		want      string
		total     int
		truncated bool
	}{
		{"all", link.LinkFilter{}, "k4:7 k0:4 k3:2 k2:2 k5:0 k1:0", 6, false},
		{"second page", link.LinkFilter{Page: 2, Limit: 4}, "k5:0 k1:0", 6, false},
		{"past the end", link.LinkFilter{Page: 5, Limit: 4}, "", 6, false},
		{"bound", link.LinkFilter{ScanLimit: 3}, "k4:7 k3:2 k5:0", 3, true},
		{"one tag", link.LinkFilter{Tags: []string{"a"}}, "k0:4 k3:2", 2, false},
		{"two tags", link.LinkFilter{Tags: []string{"b", "c"}}, "k4:7 k2:2 k5:0 k1:0", 4, false},
		{"search", link.LinkFilter{Search: "example.com/2"}, "k2:2", 1, false},
		{"tag and bounded search", link.LinkFilter{Tags: []string{"c"}, Search: "k", ScanLimit: 1}, "k5:0", 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.WorkspaceID = ws.ID
			f.Sort = link.SortClicks
			p, err := s.Links.FindLinkPage(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if got := aliases(p); got != tt.want || p.Total != tt.total || p.Truncated != tt.truncated {
				t.Fatalf("%q total %d truncated %v, want %q %d %v", got, p.Total, p.Truncated, tt.want, tt.total, tt.truncated)
			}
		})
	}
}
