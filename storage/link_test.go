package storage_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

func TestCreateLink(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	camp := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	otherCamp := mustCampaign(t, s, other.ID, &link.Campaign{Name: "Foreign"})
	mustVerifiedDomain(t, s, ws.ID, "go.example.com")
	mustVerifiedDomain(t, s, ws.ID, "b.example.com")

	l := &link.Link{WorkspaceID: ws.ID, Alias: " promo ", Domain: "Go.Example.COM", DestinationURL: "https://example.com/a",
		Tags: []string{"a", "b", "a"}, UTMSource: "news", CampaignID: camp.ID}
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	if l.ID == "" || l.Alias != "promo" || l.Domain != "go.example.com" || l.RedirectCode != 302 ||
		!slices.Equal(l.Tags, []string{"a", "b"}) || !l.CreatedAt.Equal(t0) || !l.UpdatedAt.Equal(t0) {
		t.Fatalf("created = %+v", l)
	}

	for _, tt := range []struct {
		name string
		l    link.Link
		code string
		msg  string
	}{
		{"alias taken on domain", link.Link{WorkspaceID: ws.ID, Alias: "promo", Domain: "go.example.com"}, link.ECONFLICT, `alias "promo" is already taken`},
		{"same alias, primary host", link.Link{WorkspaceID: ws.ID, Alias: "promo"}, "", ""},
		// A custom domain is one workspace's, so only the primary host's
		// aliases are shared across workspaces.
		{"alias taken across workspaces", link.Link{WorkspaceID: other.ID, Alias: "promo"}, link.ECONFLICT, `alias "promo" is already taken`},
		{"domain of another workspace", link.Link{WorkspaceID: other.ID, Alias: "promo", Domain: "go.example.com"}, link.EINVALID,
			"domain: go.example.com is not a verified domain of this workspace"},
		{"same alias, other domain", link.Link{WorkspaceID: ws.ID, Alias: "promo", Domain: "b.example.com"}, "", ""},
		{"aliases are case-sensitive", link.Link{WorkspaceID: ws.ID, Alias: "Promo", Domain: "go.example.com"}, "", ""},
		{"unknown workspace", link.Link{WorkspaceID: "ws_zzz", Alias: "x1"}, link.ENOTFOUND, ""},
		{"malformed workspace", link.Link{WorkspaceID: "zzz", Alias: "x2"}, link.ENOTFOUND, ""},
		{"campaign of another workspace", link.Link{WorkspaceID: ws.ID, Alias: "x3", CampaignID: otherCamp.ID}, link.EINVALID, ""},
		{"unknown campaign", link.Link{WorkspaceID: ws.ID, Alias: "x4", CampaignID: s.DB.FormatID("cmp_", 1<<40)}, link.EINVALID, ""},
		{"malformed campaign", link.Link{WorkspaceID: ws.ID, Alias: "x5", CampaignID: "c&<x>"}, link.EINVALID, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.l
			in.DestinationURL = "https://example.com/" + tt.name
			err := s.Links.CreateLink(ctx, &in)
			wantCode(t, err, tt.code)
			if tt.msg != "" && link.ErrorMessage(err) != tt.msg {
				t.Fatalf("message = %q, want %q", link.ErrorMessage(err), tt.msg)
			}
			if err != nil && in.ID != "" {
				t.Fatal("ID set on failure")
			}
		})
	}

	got, err := s.Links.FindLinkByAlias(ctx, "GO.example.com", "promo")
	if err != nil || got.ID != l.ID || got.UTMSource != "news" || got.CampaignID != camp.ID {
		t.Fatalf("by alias = %+v, %v", got, err)
	}
	_, err = s.Links.FindLinkByAlias(ctx, "", "nope")
	wantCode(t, err, link.ENOTFOUND)
	_, err = s.Links.FindLinkByAlias(ctx, "other.example.com", "promo")
	wantCode(t, err, link.ENOTFOUND)
}

func TestCreateLink_GeneratedCodes(t *testing.T) {
	s, _, ws := mustSetup(t)
	seen := map[string]bool{}
	for i := range 200 {
		l := mustLink(t, s, ws.ID, &link.Link{DestinationURL: fmt.Sprintf("https://example.com/%d", i)})
		if len(l.Alias) != link.GeneratedCodeLength || !link.ValidCodeSyntax(l.Alias) || strings.ContainsAny(l.Alias, "-_") || link.IsReserved(l.Alias) {
			t.Fatalf("generated code %q", l.Alias)
		}
		if seen[l.Alias] {
			t.Fatalf("code %q generated twice", l.Alias)
		}
		seen[l.Alias] = true
		got, err := s.Links.FindLinkByAlias(context.Background(), "", l.Alias)
		if err != nil || got.ID != l.ID {
			t.Fatalf("by generated alias: %+v, %v", got, err)
		}
	}
	// Every base62 character turns up.
	chars := map[rune]bool{}
	for range 2000 {
		for _, c := range storage.NewCode() {
			chars[c] = true
		}
	}
	if len(chars) != 62 {
		t.Fatalf("%d distinct characters in codes, want 62", len(chars))
	}
}

func TestCreateLink_Concurrent(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	links := make([]*link.Link, n)
	for i := range n {
		wg.Go(func() {
			l := &link.Link{WorkspaceID: ws.ID, DestinationURL: fmt.Sprintf("https://example.com/%d", i), Tags: []string{"t" + fmt.Sprint(i%3)}}
			if i%8 == 0 {
				l.Alias = "same" // one wins, the others conflict
			}
			errs[i] = s.Links.CreateLink(ctx, l)
			links[i] = l
		})
	}
	wg.Wait()
	won, ids := 0, map[string]bool{}
	for i, err := range errs {
		if i%8 == 0 {
			if err == nil {
				won++
			} else {
				wantCode(t, err, link.ECONFLICT)
				continue
			}
		} else if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if ids[links[i].ID] {
			t.Fatalf("ID %s given twice", links[i].ID)
		}
		ids[links[i].ID] = true
		got, err := s.Links.FindLinkByID(ctx, ws.ID, links[i].ID)
		if err != nil || got.Alias != links[i].Alias || got.DestinationURL != links[i].DestinationURL {
			t.Fatalf("link %d: %+v, %v; created %+v", i, got, err, links[i])
		}
	}
	if won != 1 {
		t.Fatalf("%d creations of alias \"same\" succeeded, want 1", won)
	}
	_, total, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: ws.ID})
	if err != nil || total != len(ids) {
		t.Fatalf("total = %d, %v; want %d", total, err, len(ids))
	}
}

func TestFindLinkByID(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "mine"})
	deleted := mustLink(t, s, ws.ID, &link.Link{Alias: "gone"})
	if err := s.Links.DeleteLink(context.Background(), ws.ID, deleted.ID); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, ws, id, code string }{
		{"found", ws.ID, l.ID, ""},
		{"other workspace", other.ID, l.ID, link.ENOTFOUND},
		{"unknown", ws.ID, "lnk_zzzz", link.ENOTFOUND},
		{"deleted", ws.ID, deleted.ID, link.ENOTFOUND},
		{"malformed", ws.ID, "lnk_ZZ", link.ENOTFOUND},
		{"key id", ws.ID, strings.Replace(l.ID, "lnk_", "key_", 1), link.ENOTFOUND},
		{"malformed workspace", "", l.ID, link.ENOTFOUND},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Links.FindLinkByID(context.Background(), tt.ws, tt.id)
			wantCode(t, err, tt.code)
			if err == nil && got.Alias != "mine" {
				t.Fatalf("link = %+v", got)
			}
		})
	}
}

func TestUpdateLink(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "old", Tags: []string{"a", "b"}})
	mustLink(t, s, ws.ID, &link.Link{Alias: "taken", Tags: []string{"b"}})
	s.Clock.Add(time.Hour)

	// Moving alias and tags.
	got, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{
		Alias: ptr("new"), Tags: ptr([]string{"b", "c", "c"}), DestinationURL: ptr(" https://example.com/new "), RedirectCode: ptr(301),
	}, func(l *link.Link) error { return l.Validate(nil) })
	if err != nil {
		t.Fatal(err)
	}
	if got.Alias != "new" || !slices.Equal(got.Tags, []string{"b", "c"}) || got.DestinationURL != "https://example.com/new" ||
		got.RedirectCode != 301 || !got.UpdatedAt.Equal(t0.Add(time.Hour)) || !got.CreatedAt.Equal(t0) {
		t.Fatalf("updated = %+v", got)
	}
	_, err = s.Links.FindLinkByAlias(ctx, "", "old")
	wantCode(t, err, link.ENOTFOUND)
	if byAlias, err := s.Links.FindLinkByAlias(ctx, "", "new"); err != nil || byAlias.ID != l.ID || byAlias.RedirectCode != 301 {
		t.Fatalf("by new alias = %+v, %v", byAlias, err)
	}
	wantTotals(t, s, ws.ID, map[string]int{"": 2, "a": 0, "b": 2, "c": 1})
	mustLink(t, s, ws.ID, &link.Link{Alias: "old"}) // the old alias is free again

	// Failures change nothing.
	before, _ := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
	errBad := errors.New("custom validation")
	for _, tt := range []struct {
		name     string
		ws, id   string
		upd      link.LinkUpdate
		validate func(*link.Link) error
		code     string
		wantErr  error
	}{
		{"alias taken", ws.ID, l.ID, link.LinkUpdate{Alias: ptr("taken"), Tags: ptr([]string{"z"})}, nil, link.ECONFLICT, nil},
		{"validate error unchanged", ws.ID, l.ID, link.LinkUpdate{Alias: ptr("zzz")}, func(*link.Link) error { return errBad }, link.EINTERNAL, errBad},
		{"invalid", ws.ID, l.ID, link.LinkUpdate{DestinationURL: ptr("ftp://x")}, func(l *link.Link) error { return l.Validate(nil) }, link.EINVALID, nil},
		{"other workspace", other.ID, l.ID, link.LinkUpdate{Alias: ptr("x")}, nil, link.ENOTFOUND, nil},
		{"unknown", ws.ID, "lnk_zzz", link.LinkUpdate{Alias: ptr("x")}, nil, link.ENOTFOUND, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Links.UpdateLink(ctx, tt.ws, tt.id, tt.upd, tt.validate)
			wantCode(t, err, tt.code)
			if tt.wantErr != nil && err != tt.wantErr {
				t.Fatalf("err = %v, want the validator's own error", err)
			}
			after, _ := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
			if fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("link changed by a failed update:\n%+v\n%+v", before, after)
			}
		})
	}

	// An empty alias gets a new generated code.
	got, err = s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{Alias: ptr("")}, nil)
	if err != nil || len(got.Alias) != link.GeneratedCodeLength {
		t.Fatalf("update to empty alias: %+v, %v", got, err)
	}
	// Keeping the alias is not a conflict with itself.
	if _, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{Alias: ptr(got.Alias), Tags: ptr([]string{})}, nil); err != nil {
		t.Fatal(err)
	}
	wantTotals(t, s, ws.ID, map[string]int{"": 3, "b": 1, "c": 0})
}

func TestDeleteLink(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "bye", Tags: []string{"a"}})
	if _, err := s.Clicks.RecordClicks(ctx, []link.Click{{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0}}); err != nil {
		t.Fatal(err)
	}

	wantCode(t, s.Links.DeleteLink(ctx, other.ID, l.ID), link.ENOTFOUND)
	wantCode(t, s.Links.DeleteLink(ctx, ws.ID, "lnk_"), link.ENOTFOUND)
	if err := s.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Links.DeleteLink(ctx, ws.ID, l.ID), link.ENOTFOUND)
	_, err := s.Links.FindLinkByAlias(ctx, "", "bye")
	wantCode(t, err, link.ENOTFOUND)
	wantTotals(t, s, ws.ID, map[string]int{"": 0, "a": 0})

	again := mustLink(t, s, ws.ID, &link.Link{Alias: "bye"})
	if again.ID == l.ID || again.Clicks != 0 {
		t.Fatalf("recreated = %+v", again)
	}
	// The workspace keeps the deleted link's clicks.
	st, err := s.Clicks.Stats(ctx, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t0, End: t0.Add(time.Hour)})
	if err != nil || st.Clicks != 1 || len(st.Hourly) != 1 || st.Hourly[0].Clicks != 1 {
		t.Fatalf("workspace stats = %+v, %v", st, err)
	}
}

// wantTotals checks list totals (read from counters) against a brute-force
// count over the unfiltered list. The key "" is the whole workspace.
func wantTotals(tb testing.TB, s *Services, wsID string, want map[string]int) {
	tb.Helper()
	ctx := context.Background()
	var all []*link.Link
	for page := 1; ; page++ {
		links, _, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: wsID, Page: page, Limit: 100})
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, links...)
		if len(links) < 100 {
			break
		}
	}
	for tag, n := range want {
		var tags []string
		if tag != "" {
			tags = []string{tag}
		}
		_, total, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: wsID, Tags: tags, Limit: 1})
		if err != nil {
			tb.Fatal(err)
		}
		brute := 0
		for _, l := range all {
			if tag == "" || slices.Contains(l.Tags, tag) {
				brute++
			}
		}
		if total != n || brute != n {
			tb.Fatalf("tag %q: total %d, brute force %d, want %d", tag, total, brute, n)
		}
	}
}

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

// TestLinks_CountersRandom runs random creates, updates and deletes and
// compares every counter with a brute-force count (the cleanup checks all
// indexes too).
func TestLinks_CountersRandom(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	tags := []string{"a", "b", "c", "d"}
	randTags := func() []string {
		var out []string
		for _, t := range tags {
			if rng.IntN(3) == 0 {
				out = append(out, t)
			}
		}
		return out
	}
	var live []*link.Link
	for range 300 {
		switch op := rng.IntN(10); {
		case op < 5 || len(live) == 0:
			w := ws.ID
			if rng.IntN(4) == 0 {
				w = other.ID
			}
			live = append(live, mustLink(t, s, w, &link.Link{Tags: randTags()}))
		case op < 8:
			i := rng.IntN(len(live))
			got, err := s.Links.UpdateLink(ctx, live[i].WorkspaceID, live[i].ID, link.LinkUpdate{Tags: ptr(randTags())}, nil)
			if err != nil {
				t.Fatal(err)
			}
			live[i] = got
		default:
			i := rng.IntN(len(live))
			if err := s.Links.DeleteLink(ctx, live[i].WorkspaceID, live[i].ID); err != nil {
				t.Fatal(err)
			}
			live = slices.Delete(live, i, i+1)
		}
	}
	for _, w := range []string{ws.ID, other.ID} {
		want := map[string]int{"": 0}
		for _, l := range live {
			if l.WorkspaceID != w {
				continue
			}
			want[""]++
			for _, t := range l.Tags {
				want[t]++
			}
		}
		wantTotals(t, s, w, want)
	}
	if err := s.DB.CheckIndexes(); err != nil {
		t.Fatal(err)
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

// TestFindLinkByAlias_Cache checks that the redirect cache never answers
// with a link older than the file: after an update (destination, alias),
// a delete, and under concurrent updates and lookups.
func TestFindLinkByAlias_Cache(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	l := &link.Link{WorkspaceID: ws.ID, Alias: "hot", DestinationURL: "https://example.com/1"}
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	dest := func(alias string) string {
		t.Helper()
		got, err := s.Links.FindLinkByAlias(ctx, "", alias)
		if link.ErrorCode(err) == link.ENOTFOUND {
			return "<none>"
		} else if err != nil {
			t.Fatal(err)
		}
		return got.DestinationURL
	}
	if got := dest("hot"); got != "https://example.com/1" {
		t.Fatalf("dest = %q", got)
	}
	d2 := "https://example.com/2"
	if _, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{DestinationURL: &d2}, nil); err != nil {
		t.Fatal(err)
	}
	if got := dest("hot"); got != d2 {
		t.Fatalf("after update dest = %q, want %q", got, d2)
	}
	// Via another LinkService over the same file: the cache is the file's.
	other := storage.NewLinkService(s.DB)
	cold := "cold"
	if _, err := other.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{Alias: &cold}, nil); err != nil {
		t.Fatal(err)
	}
	if got := dest("hot"); got != "<none>" {
		t.Fatalf("old alias still answers %q", got)
	}
	if got := dest("cold"); got != d2 {
		t.Fatalf("new alias answers %q", got)
	}
	if err := s.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	if got := dest("cold"); got != "<none>" {
		t.Fatalf("deleted link answers %q", got)
	}

	// Concurrent lookups while the destination changes: once the updates
	// are done, the lookup must see the last one.
	l = &link.Link{WorkspaceID: ws.ID, Alias: "race", DestinationURL: "https://example.com/0"}
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					s.Links.FindLinkByAlias(ctx, "", "race")
				}
			}
		}()
	}
	var last string
	for i := range 200 {
		last = fmt.Sprintf("https://example.com/%d", i+1)
		if _, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{DestinationURL: &last}, nil); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if got := dest("race"); got != last {
		t.Fatalf("after concurrent updates dest = %q, want %q", got, last)
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
