package storetest

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var linkTests = []test{
	{"CreateAndFind", testLinksCreate},
	{"AliasUnique", testLinksAliasUnique},
	{"AliasHold", testLinksAliasHold},
	{"PruneAliasHolds", testLinksPruneHolds},
	{"Update", testLinksUpdate},
	{"UpdateRefusedChangesNothing", testLinksUpdateRefused},
	{"Delete", testLinksDelete},
	{"ListPagingAndFilters", testLinksList},
	{"ListSearch", testLinksSearch},
	{"ListSortClicks", testLinksSortClicks},
	{"ArchivedAndLimits", testLinksLimits},
	{"CreateLinks", testLinksBulk},
	{"CampaignUTM", testLinksCampaignUTM},
	{"ConcurrentSameAlias", testLinksConcurrent},
	{"RuleConditions", testLinksRuleConditions},
	{"Forwarding", testLinksForwarding},
	{"ExternalID", testLinksExternalID},
	{"AppDestinations", testLinksAppDestinations},
	{"Crawlable", testLinksCrawlable},
	{"PublicStats", testLinksPublicStats},
	{"Interstitials", testLinksInterstitials},
	{"Notes", testLinksNotes},
}

// testLinksCrawlable checks CrawlableAliases: the crawlable links of one
// domain, by alias, at most the limit, following creations (one and in
// bulk), renames, the flag turned off, deletions and a restart.
func testLinksCrawlable(t *testing.T, e *env) {
	_, ws := e.setup()
	e.domain(ws.ID, "crawl.example", true)
	b := e.link(ws.ID, &link.Link{Alias: "crawl-b", Crawlable: true})
	e.link(ws.ID, &link.Link{Alias: "crawl-a", Crawlable: true})
	e.link(ws.ID, &link.Link{Alias: "crawl-hidden"})
	e.link(ws.ID, &link.Link{Alias: "crawl-d", Domain: "crawl.example", Crawlable: true})
	bulk := []*link.Link{{WorkspaceID: ws.ID, Alias: "crawl-c", DestinationURL: "https://example.com/c", Crawlable: true}}
	if errs, err := e.Links.CreateLinks(e.ctx, ws.ID, bulk); err != nil || errs[0] != nil {
		t.Fatalf("bulk: %v %v", errs, err)
	}
	want := func(what, domain string, limit int, aliases ...string) {
		t.Helper()
		got, err := e.Links.CrawlableAliases(e.ctx, domain, limit)
		if err != nil || !slices.Equal(got, aliases) {
			t.Fatalf("%s: %q = %v, %v; want %v", what, domain, got, err, aliases)
		}
	}
	want("created", "", 10, "crawl-a", "crawl-b", "crawl-c")
	want("limited", "", 2, "crawl-a", "crawl-b")
	want("custom domain", "crawl.example", 10, "crawl-d")
	want("unknown domain", "other.example", 10)
	renamed, off := "crawl-z", false
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, b.ID, link.LinkUpdate{Alias: &renamed}, nil); err != nil {
		t.Fatal(err)
	}
	want("renamed", "", 10, "crawl-a", "crawl-c", "crawl-z")
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, bulk[0].ID, link.LinkUpdate{Crawlable: &off}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Links.DeleteLink(e.ctx, ws.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	e.restart()
	want("turned off, deleted, reopened", "", 10, "crawl-a")
	if got, err := e.Links.FindLinkByAlias(e.ctx, "", "crawl-a"); err != nil || !got.Crawlable {
		t.Fatalf("by alias: %+v, %v", got, err)
	}
}

// testLinksAppDestinations checks that a link's iOS and Android
// destinations are stored, read back by ID and by alias, changed and
// removed one at a time, and kept over a restart, alone and in bulk.
func testLinksAppDestinations(t *testing.T, e *env) {
	_, ws := e.setup()
	l := e.link(ws.ID, &link.Link{Alias: "apps-one", IOSURL: "https://apps.apple.com/app/id1", AndroidURL: "https://play.google.com/store/apps/details?id=x"})
	check := func(what, alias, ios, android string) {
		t.Helper()
		got, err := e.Links.FindLinkByAlias(e.ctx, "", alias)
		if err != nil || got.IOSURL != ios || got.AndroidURL != android || !got.HasControls() != (ios == "" && android == "") {
			t.Fatalf("%s: %s = %+v, %v; want %q, %q", what, alias, got, err, ios, android)
		}
	}
	check("created", "apps-one", "https://apps.apple.com/app/id1", "https://play.google.com/store/apps/details?id=x")
	bulk := []*link.Link{{WorkspaceID: ws.ID, Alias: "app-bulk", DestinationURL: "https://example.com/b", AndroidURL: "https://example.com/android"}}
	if errs, err := e.Links.CreateLinks(e.ctx, ws.ID, bulk); err != nil || errs[0] != nil {
		t.Fatalf("bulk: %v %v", errs, err)
	}
	none, other := "", "https://example.com/ios"
	if got, err := e.Links.UpdateLink(e.ctx, ws.ID, l.ID, link.LinkUpdate{AndroidURL: &none, IOSURL: &other}, nil); err != nil || got.AndroidURL != "" || got.IOSURL != other {
		t.Fatalf("updated: %+v, %v", got, err)
	}
	e.restart()
	check("reopened", "apps-one", other, "")
	check("bulk, reopened", "app-bulk", "", "https://example.com/android")
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, l.ID, link.LinkUpdate{IOSURL: &none}, nil); err != nil {
		t.Fatal(err)
	}
	check("removed", "apps-one", "", "")
}

// testLinksExternalID checks that a link's external ID is unique in its
// workspace (and only there) through every way a link is made or
// changed, finds the link, moves with an update, is freed by a removal,
// an update and a deletion, and is kept over a restart.
func testLinksExternalID(t *testing.T, e *env) {
	owner, ws := e.setup()
	other := e.workspace("Other", owner)
	a := e.link(ws.ID, &link.Link{Alias: "ext-a", ExternalID: "order-1"})
	e.link(other.ID, &link.Link{Alias: "ext-other", ExternalID: "order-1"}) // another workspace may
	find := func(what, ext, want string) {
		t.Helper()
		got, err := e.Links.FindLinkByExternalID(e.ctx, ws.ID, ext)
		switch {
		case want == "" && link.ErrorCode(err) != link.ENOTFOUND:
			t.Fatalf("%s: %q found %+v, %v; want ENOTFOUND", what, ext, got, err)
		case want != "" && (err != nil || got.ID != want || got.ExternalID != ext):
			t.Fatalf("%s: %q found %+v, %v; want %s", what, ext, got, err, want)
		}
	}
	find("created", "order-1", a.ID)
	find("unknown", "order-2", "")
	if a.ExternalID != "order-1" {
		t.Fatalf("created link %+v", a)
	}
	conflict := func(what string, err error) {
		t.Helper()
		var le *link.Error
		if link.ErrorCode(err) != link.ECONFLICT || !errors.As(err, &le) || len(le.Fields) != 1 || le.Fields[0].Field != "external_id" {
			t.Fatalf("%s: %v, want ECONFLICT on external_id", what, err)
		}
	}
	dup := &link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/dup", ExternalID: "order-1"}
	conflict("create taken", e.Links.CreateLink(e.ctx, dup))

	// Bulk: one taken before, two alike in the call (the second loses),
	// one free.
	bulk := []*link.Link{
		{WorkspaceID: ws.ID, DestinationURL: "https://example.com/b1", ExternalID: "order-1"},
		{WorkspaceID: ws.ID, DestinationURL: "https://example.com/b2", ExternalID: "order-3"},
		{WorkspaceID: ws.ID, DestinationURL: "https://example.com/b3", ExternalID: "order-3"},
		{WorkspaceID: ws.ID, DestinationURL: "https://example.com/b4"},
	}
	errs, err := e.Links.CreateLinks(e.ctx, ws.ID, bulk)
	if err != nil {
		t.Fatal(err)
	}
	conflict("bulk, taken before", errs[0])
	conflict("bulk, taken in the call", errs[2])
	if errs[1] != nil || errs[3] != nil {
		t.Fatalf("bulk: %v", errs)
	}
	find("bulk", "order-3", bulk[1].ID)

	// Update: to a taken one refuses and changes nothing; to a free one
	// moves it; "" removes it.
	taken, free, none := "order-3", "order-4", ""
	_, err = e.Links.UpdateLink(e.ctx, ws.ID, a.ID, link.LinkUpdate{ExternalID: &taken}, nil)
	conflict("update to taken", err)
	find("refused update", "order-1", a.ID)
	if got, err := e.Links.UpdateLink(e.ctx, ws.ID, a.ID, link.LinkUpdate{ExternalID: &free}, nil); err != nil || got.ExternalID != free {
		t.Fatalf("update: %+v, %v", got, err)
	}
	find("moved from", "order-1", "")
	find("moved to", "order-4", a.ID)
	same := "order-4"
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, a.ID, link.LinkUpdate{ExternalID: &same}, nil); err != nil {
		t.Fatalf("update to its own: %v", err)
	}
	if got, err := e.Links.UpdateLink(e.ctx, ws.ID, bulk[1].ID, link.LinkUpdate{ExternalID: &none}, nil); err != nil || got.ExternalID != "" {
		t.Fatalf("removed: %+v, %v", got, err)
	}
	find("removed", "order-3", "")
	e.link(ws.ID, &link.Link{Alias: "ext-c", ExternalID: "order-1"}) // freed by the move

	if err := e.Links.DeleteLink(e.ctx, ws.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	find("deleted", "order-4", "")
	d := e.link(ws.ID, &link.Link{Alias: "ext-d", ExternalID: "order-4"})
	e.restart()
	find("reopened", "order-4", d.ID)
	if got, err := e.Links.FindLinkByAlias(e.ctx, "", "ext-d"); err != nil || got.ExternalID != "order-4" {
		t.Fatalf("by alias: %+v, %v", got, err)
	}
	conflict("create taken, reopened", e.Links.CreateLink(e.ctx, &link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/dup2", ExternalID: "order-4"}))
}

// testLinksPublicStats checks that a link's public_stats switch is stored
// with the other flags, read back by ID and by alias, created by a bulk
// creation, updated alone, and kept over a restart.
func testLinksPublicStats(t *testing.T, e *env) {
	_, ws := e.setup()
	l := e.link(ws.ID, &link.Link{Alias: "pub", PublicStats: true, ForwardQuery: true})
	p := e.link(ws.ID, &link.Link{Alias: "priv"})
	check := func(what, alias string, want bool) {
		t.Helper()
		got, err := e.Links.FindLinkByAlias(e.ctx, "", alias)
		if err != nil || got.PublicStats != want {
			t.Fatalf("%s: %s = %+v, %v; want public_stats %v", what, alias, got, err, want)
		}
	}
	check("created", "pub", true)
	check("created", "priv", false)
	res, err := e.Links.CreateLinks(e.ctx, ws.ID, []*link.Link{{WorkspaceID: ws.ID, Alias: "bulkpub",
		DestinationURL: "https://example.com/b", RedirectCode: 302, PublicStats: true}})
	if err != nil || len(res) != 1 || res[0] != nil {
		t.Fatalf("bulk: %+v, %v", res, err)
	}
	check("bulk created", "bulkpub", true)
	on, off := true, false
	if got, err := e.Links.UpdateLink(e.ctx, ws.ID, l.ID, link.LinkUpdate{PublicStats: &off}, nil); err != nil || got.PublicStats || !got.ForwardQuery {
		t.Fatalf("switched off: %+v, %v", got, err)
	}
	if got, err := e.Links.UpdateLink(e.ctx, ws.ID, p.ID, link.LinkUpdate{PublicStats: &on}, nil); err != nil || !got.PublicStats {
		t.Fatalf("switched on: %+v, %v", got, err)
	}
	e.restart()
	check("reopened", "pub", false)
	check("reopened", "priv", true)
	if got, err := e.Links.FindLinkByID(e.ctx, ws.ID, l.ID); err != nil || got.PublicStats || !got.ForwardQuery {
		t.Fatalf("by id: %+v, %v", got, err)
	}
}

// testLinksInterstitials checks that a link's interstitial flags
// (escape_in_app_browser, retargeting) and a workspace's pixels are
// stored, read back, updated alone, validated, and kept over a restart.
func testLinksInterstitials(t *testing.T, e *env) {
	_, ws := e.setup()
	a := e.link(ws.ID, &link.Link{Alias: "inapp", EscapeInApp: true})
	b := e.link(ws.ID, &link.Link{Alias: "pixels", Retargeting: true, ForwardQuery: true})
	check := func(what, alias string, escape, retarget bool) {
		t.Helper()
		got, err := e.Links.FindLinkByAlias(e.ctx, "", alias)
		if err != nil || got.EscapeInApp != escape || got.Retargeting != retarget {
			t.Fatalf("%s: %s = %+v, %v; want escape %v, retargeting %v", what, alias, got, err, escape, retarget)
		}
	}
	check("created", "inapp", true, false)
	check("created", "pixels", false, true)
	on, off := true, false
	if got, err := e.Links.UpdateLink(e.ctx, ws.ID, a.ID, link.LinkUpdate{EscapeInApp: &off, Retargeting: &on}, nil); err != nil ||
		got.EscapeInApp || !got.Retargeting {
		t.Fatalf("updated: %+v, %v", got, err)
	}
	tags := []string{"t"}
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, b.ID, link.LinkUpdate{Tags: &tags}, nil); err != nil {
		t.Fatal(err)
	}
	bad := link.Pixels{Meta: "12ab", Google: "UA-1234-5", LinkedIn: "x"}
	_, err := e.Workspaces.UpdateWorkspace(e.ctx, ws.ID, link.WorkspaceUpdate{Pixels: &bad})
	if link.ErrorCode(err) != link.EINVALID {
		t.Fatalf("bad pixels: %v, want EINVALID", err)
	}
	px := link.Pixels{Meta: "1234567890123456", Google: " g-ab12cd34ef ", LinkedIn: "5544332"}
	if got, err := e.Workspaces.UpdateWorkspace(e.ctx, ws.ID, link.WorkspaceUpdate{Pixels: &px}); err != nil ||
		got.Pixels != (link.Pixels{Meta: "1234567890123456", Google: "G-AB12CD34EF", LinkedIn: "5544332"}) {
		t.Fatalf("workspace pixels: %+v, %v", got, err)
	}
	e.restart()
	check("reopened", "inapp", false, true)
	check("another field updated, reopened", "pixels", false, true)
	if got, err := e.Links.FindLinkByID(e.ctx, ws.ID, b.ID); err != nil || !got.Retargeting || !got.ForwardQuery || got.EscapeInApp {
		t.Fatalf("by id: %+v, %v", got, err)
	}
	got, err := e.Workspaces.FindWorkspaceByID(e.ctx, ws.ID)
	if err != nil || got.Pixels != (link.Pixels{Meta: "1234567890123456", Google: "G-AB12CD34EF", LinkedIn: "5544332"}) {
		t.Fatalf("workspace reopened: %+v, %v", got, err)
	}
	none := link.Pixels{}
	if got, err := e.Workspaces.UpdateWorkspace(e.ctx, ws.ID, link.WorkspaceUpdate{Pixels: &none}); err != nil || got.Pixels.Any() {
		t.Fatalf("pixels removed: %+v, %v", got, err)
	}
}

// testLinksForwarding checks that a link's forwarding flags and a
// workspace's defaults of them are stored, read back (by ID, by alias,
// with the workspace), updated, and kept over a restart.
func testLinksForwarding(t *testing.T, e *env) {
	_, ws := e.setup()
	l := e.link(ws.ID, &link.Link{Alias: "fwd", ForwardPath: true})
	q := e.link(ws.ID, &link.Link{Alias: "fwq", ForwardQuery: true})
	check := func(what, alias string, path, query bool) {
		t.Helper()
		got, err := e.Links.FindLinkByAlias(e.ctx, "", alias)
		if err != nil || got.ForwardPath != path || got.ForwardQuery != query {
			t.Fatalf("%s: %s = %+v, %v; want path %v, query %v", what, alias, got, err, path, query)
		}
	}
	check("created", "fwd", true, false)
	check("created", "fwq", false, true)
	on, off := true, false
	if got, err := e.Links.UpdateLink(e.ctx, ws.ID, l.ID, link.LinkUpdate{ForwardPath: &off, ForwardQuery: &on}, nil); err != nil ||
		got.ForwardPath || !got.ForwardQuery {
		t.Fatalf("updated: %+v, %v", got, err)
	}
	tags := []string{"t"}
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, q.ID, link.LinkUpdate{Tags: &tags}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Workspaces.UpdateWorkspace(e.ctx, ws.ID, link.WorkspaceUpdate{ForwardPath: &on}); err != nil || !got.ForwardPath || got.ForwardQuery {
		t.Fatalf("workspace updated: %+v, %v", got, err)
	}
	e.restart()
	check("reopened", "fwd", false, true)
	check("another field updated, reopened", "fwq", false, true)
	if got, err := e.Links.FindLinkByID(e.ctx, ws.ID, q.ID); err != nil || !got.ForwardQuery || got.ForwardPath {
		t.Fatalf("by id: %+v, %v", got, err)
	}
	got, err := e.Workspaces.FindWorkspaceByID(e.ctx, ws.ID)
	if err != nil || !got.ForwardPath || got.ForwardQuery {
		t.Fatalf("workspace reopened: %+v, %v", got, err)
	}
}

// testLinksRuleConditions checks that a rule's IP ranges and time window
// are stored and read back as given, by ID and by alias, after a restart
// and after an update that replaces them.
func testLinksRuleConditions(t *testing.T, e *env) {
	_, ws := e.setup()
	after := time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)
	before := after.Add(96*time.Hour + 500*time.Millisecond)
	rules := []link.Rule{
		{If: link.RuleCondition{Country: "DE", IP: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"),
			netip.MustParsePrefix("203.0.113.7/32"), netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("::1/128")}},
			Then: "https://example.com/office"},
		{If: link.RuleCondition{After: &after, Before: &before}, Then: "https://example.com/sale"},
		{If: link.RuleCondition{Before: &before, Query: &link.QueryCondition{Name: "src", Value: "qr"}}, Then: "https://example.com/q"},
	}
	l := e.link(ws.ID, &link.Link{Alias: "conds", Rules: slices.Clone(rules)})
	check := func(what string, got *link.Link, want []link.Rule) {
		t.Helper()
		if len(got.Rules) != len(want) {
			t.Fatalf("%s: %d rules, want %d", what, len(got.Rules), len(want))
		}
		for i, r := range got.Rules {
			w := want[i]
			if !slices.Equal(r.If.IP, w.If.IP) || !timeEqual(r.If.After, w.If.After) || !timeEqual(r.If.Before, w.If.Before) ||
				r.If.Country != w.If.Country || (r.If.Query == nil) != (w.If.Query == nil) || r.Then != w.Then {
				t.Fatalf("%s: rule %d = %+v, want %+v", what, i, r, w)
			}
		}
	}
	find := func(what string, want []link.Rule) {
		t.Helper()
		byID, err := e.Links.FindLinkByID(e.ctx, ws.ID, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		check(what+" by id", byID, want)
		byAlias, err := e.Links.FindLinkByAlias(e.ctx, "", "conds")
		if err != nil {
			t.Fatal(err)
		}
		check(what+" by alias", byAlias, want)
	}
	find("created", rules)
	e.restart()
	find("reopened", rules)
	changed := []link.Rule{{If: link.RuleCondition{IP: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, Then: "https://example.com/lan"}}
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, l.ID, link.LinkUpdate{Rules: &changed}, nil); err != nil {
		t.Fatal(err)
	}
	find("updated", changed)
}

func timeEqual(a, b *time.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}

func testLinksCreate(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	e.domain(ws.ID, "go.example.com", true)
	l := &link.Link{WorkspaceID: ws.ID, Alias: " promo ", Domain: "Go.Example.COM", DestinationURL: "https://example.com/a",
		Tags: []string{"a", "b", "a"}, UTMSource: "news"}
	l.Normalize()
	if err := l.Validate(nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Links.CreateLink(e.ctx, l); err != nil {
		t.Fatal(err)
	}
	if l.ID == "" || l.Alias != "promo" || l.Domain != "go.example.com" || l.RedirectCode != 302 ||
		!slices.Equal(l.Tags, []string{"a", "b"}) || !l.CreatedAt.Equal(e.now()) || !l.UpdatedAt.Equal(e.now()) {
		t.Fatalf("created = %+v", l)
	}
	got, err := e.Links.FindLinkByID(e.ctx, ws.ID, l.ID)
	if err != nil || got.Alias != "promo" || got.Domain != "go.example.com" || got.DestinationURL != "https://example.com/a" ||
		!slices.Equal(got.Tags, []string{"a", "b"}) || got.UTMSource != "news" || got.RedirectCode != 302 || got.Clicks != 0 ||
		got.WorkspaceID != ws.ID || !got.CreatedAt.Equal(l.CreatedAt) {
		t.Fatalf("FindLinkByID = %+v, %v", got, err)
	}
	for _, tt := range [][2]string{{other.ID, l.ID}, {ws.ID, "lnk_unknown"}, {"ws_unknown", l.ID}} {
		_, err := e.Links.FindLinkByID(e.ctx, tt[0], tt[1])
		wantCode(t, err, link.ENOTFOUND)
	}
	if got, err := e.Links.FindLinkByAlias(e.ctx, "go.example.com", "promo"); err != nil || got.ID != l.ID {
		t.Fatalf("FindLinkByAlias = %+v, %v", got, err)
	}
	for _, tt := range [][2]string{{"", "promo"}, {"other.example.com", "promo"}, {"go.example.com", "nope"}} {
		_, err := e.Links.FindLinkByAlias(e.ctx, tt[0], tt[1])
		wantCode(t, err, link.ENOTFOUND)
	}

	// An empty alias gets a generated code, unique.
	a, b := e.link(ws.ID, &link.Link{}), e.link(ws.ID, &link.Link{})
	if len(a.Alias) != link.GeneratedCodeLength || len(b.Alias) != link.GeneratedCodeLength || a.Alias == b.Alias {
		t.Fatalf("generated codes %q and %q", a.Alias, b.Alias)
	}
	if got, err := e.Links.FindLinkByAlias(e.ctx, "", a.Alias); err != nil || got.ID != a.ID {
		t.Fatalf("a generated code finds %+v, %v", got, err)
	}
	err = e.Links.CreateLink(e.ctx, &link.Link{WorkspaceID: "ws_unknown", Alias: "x", DestinationURL: "https://example.com/", RedirectCode: 302})
	wantCode(t, err, link.ENOTFOUND)

	e.restart()
	if got, err := e.Links.FindLinkByAlias(e.ctx, "go.example.com", "promo"); err != nil || got.ID != l.ID || got.DestinationURL != "https://example.com/a" {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
}

func testLinksAliasUnique(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	e.domain(ws.ID, "go.example.com", true)
	e.domain(ws.ID, "b.example.com", true)
	e.domain(ws.ID, "unverified.example.com", false)
	theirs := e.campaign(other.ID, &link.Campaign{Name: "Theirs"})
	e.link(ws.ID, &link.Link{Alias: "promo", Domain: "go.example.com"})
	e.link(ws.ID, &link.Link{Alias: "home"})

	for _, tt := range []struct {
		name string
		l    link.Link
		code string
	}{
		{"alias taken on its domain", link.Link{WorkspaceID: ws.ID, Alias: "promo", Domain: "go.example.com"}, link.ECONFLICT},
		{"alias taken on the primary host", link.Link{WorkspaceID: ws.ID, Alias: "home"}, link.ECONFLICT},
		{"alias taken by another workspace", link.Link{WorkspaceID: other.ID, Alias: "home"}, link.ECONFLICT},
		{"same alias, primary host", link.Link{WorkspaceID: ws.ID, Alias: "promo"}, ""},
		{"same alias, other domain", link.Link{WorkspaceID: ws.ID, Alias: "promo", Domain: "b.example.com"}, ""},
		{"aliases are case-sensitive", link.Link{WorkspaceID: ws.ID, Alias: "Promo", Domain: "go.example.com"}, ""},
		{"domain of another workspace", link.Link{WorkspaceID: other.ID, Alias: "x1", Domain: "go.example.com"}, link.EINVALID},
		{"domain not verified", link.Link{WorkspaceID: ws.ID, Alias: "x2", Domain: "unverified.example.com"}, link.EINVALID},
		{"campaign of another workspace", link.Link{WorkspaceID: ws.ID, Alias: "x3", CampaignID: theirs.ID}, link.EINVALID},
	} {
		in := tt.l
		in.DestinationURL, in.RedirectCode = "https://example.com/"+tt.name, 302
		err := e.Links.CreateLink(e.ctx, &in)
		if link.ErrorCode(err) != tt.code {
			t.Errorf("%s: error %v, want code %q", tt.name, err, tt.code)
		}
	}
	// What was refused was not stored.
	if got, err := e.Links.FindLinkByAlias(e.ctx, "", "x3"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a refused link is found: %+v, %v", got, err)
	}
}

func testLinksAliasHold(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	deleted := e.link(ws.ID, &link.Link{Alias: "promo"})
	if err := e.Links.DeleteLink(e.ctx, ws.ID, deleted.ID); err != nil {
		t.Fatal(err)
	}
	renamed := e.link(ws.ID, &link.Link{Alias: "sale"})
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, renamed.ID, link.LinkUpdate{Alias: ptr("sale2")}, nil); err != nil {
		t.Fatal(err)
	}
	theirs := e.link(other.ID, &link.Link{})
	for _, alias := range []string{"promo", "sale"} {
		// Held: no redirect, and another workspace is refused the alias,
		// on creation and on a rename.
		_, err := e.Links.FindLinkByAlias(e.ctx, "", alias)
		wantCode(t, err, link.ENOTFOUND)
		err = e.Links.CreateLink(e.ctx, &link.Link{WorkspaceID: other.ID, Alias: alias, DestinationURL: "https://example.org/", RedirectCode: 302})
		wantCode(t, err, link.ECONFLICT)
		_, err = e.Links.UpdateLink(e.ctx, other.ID, theirs.ID, link.LinkUpdate{Alias: ptr(alias)}, nil)
		wantCode(t, err, link.ECONFLICT)
	}
	// The workspace that holds an alias takes it back, by creation or rename.
	back := e.link(ws.ID, &link.Link{Alias: "promo"})
	if got, err := e.Links.FindLinkByAlias(e.ctx, "", "promo"); err != nil || got.ID != back.ID {
		t.Fatalf("promo taken back: %+v, %v", got, err)
	}
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, renamed.ID, link.LinkUpdate{Alias: ptr("sale")}, nil); err != nil {
		t.Fatal(err)
	}

	// "sale2" is held now. Holds outlive a restart.
	e.restart()
	err := e.Links.CreateLink(e.ctx, &link.Link{WorkspaceID: other.ID, Alias: "sale2", DestinationURL: "https://example.org/", RedirectCode: 302})
	wantCode(t, err, link.ECONFLICT)
	// A second before the hold ends it still holds; then the alias is anyone's.
	e.clock.Add(aliasHold - time.Second)
	err = e.Links.CreateLink(e.ctx, &link.Link{WorkspaceID: other.ID, Alias: "sale2", DestinationURL: "https://example.org/", RedirectCode: 302})
	wantCode(t, err, link.ECONFLICT)
	e.clock.Add(time.Second)
	e.link(other.ID, &link.Link{Alias: "sale2"})
}

func testLinksPruneHolds(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	start := e.now()
	for _, alias := range []string{"a1", "a2"} {
		l := e.link(ws.ID, &link.Link{Alias: alias})
		if err := e.Links.DeleteLink(e.ctx, ws.ID, l.ID); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(time.Hour)
	}
	if n, err := e.Links.PruneAliasHolds(e.ctx, start); err != nil || n != 0 {
		t.Fatalf("PruneAliasHolds before any hold ended = %d, %v; want 0", n, err)
	}
	// At the end of a1's hold, a2's runs for another hour.
	if n, err := e.Links.PruneAliasHolds(e.ctx, start.Add(aliasHold)); err != nil || n != 1 {
		t.Fatalf("PruneAliasHolds = %d, %v; want 1", n, err)
	}
	err := e.Links.CreateLink(e.ctx, &link.Link{WorkspaceID: other.ID, Alias: "a2", DestinationURL: "https://example.org/", RedirectCode: 302})
	wantCode(t, err, link.ECONFLICT)
	if n, err := e.Links.PruneAliasHolds(e.ctx, start.Add(aliasHold+time.Hour)); err != nil || n != 1 {
		t.Fatalf("second PruneAliasHolds = %d, %v; want 1", n, err)
	}
	e.link(other.ID, &link.Link{Alias: "a1"})
	e.link(other.ID, &link.Link{Alias: "a2"})
}

func testLinksUpdate(t *testing.T, e *env) {
	_, ws := e.setup()
	camp := e.campaign(ws.ID, &link.Campaign{Name: "Spring"})
	l := e.link(ws.ID, &link.Link{Alias: "old", Tags: []string{"a", "b"}, UTMSource: "news", UTMMedium: "mail"})
	created := l.CreatedAt
	e.clock.Add(time.Hour)
	validated := 0
	got, err := e.Links.UpdateLink(e.ctx, ws.ID, l.ID, link.LinkUpdate{
		Alias: ptr("new"), Tags: ptr([]string{"b", "c", "c"}), DestinationURL: ptr(" https://example.com/new "),
		RedirectCode: ptr(301), UTMMedium: ptr(""), CampaignID: ptr(camp.ID),
	}, func(l *link.Link) error { validated++; return l.Validate(nil) })
	if err != nil {
		t.Fatal(err)
	}
	if validated == 0 {
		t.Fatal("UpdateLink did not call validate")
	}
	// The given fields change, normalised; the others stay.
	check := func(got *link.Link) {
		t.Helper()
		if got.Alias != "new" || !slices.Equal(got.Tags, []string{"b", "c"}) || got.DestinationURL != "https://example.com/new" ||
			got.RedirectCode != 301 || got.UTMSource != "news" || got.UTMMedium != "" || got.CampaignID != camp.ID ||
			!got.UpdatedAt.Equal(e.now()) || !got.CreatedAt.Equal(created) {
			t.Fatalf("updated = %+v", got)
		}
	}
	check(got)
	found, err := e.Links.FindLinkByID(e.ctx, ws.ID, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	check(found)
	_, err = e.Links.FindLinkByAlias(e.ctx, "", "old")
	wantCode(t, err, link.ENOTFOUND)
	if got, err := e.Links.FindLinkByAlias(e.ctx, "", "new"); err != nil || got.ID != l.ID || got.RedirectCode != 301 {
		t.Fatalf("by the new alias = %+v, %v", got, err)
	}
	// The tags index follows.
	if p := e.page(link.LinkFilter{Tags: []string{"a"}}); len(p.Links) != 0 || p.Total != 0 {
		t.Fatalf("tag a lists %d links (total %d) after it was removed", len(p.Links), p.Total)
	}
	if p := e.page(link.LinkFilter{Tags: []string{"c"}}); len(p.Links) != 1 || p.Total != 1 {
		t.Fatalf("tag c lists %d links (total %d), want 1", len(p.Links), p.Total)
	}
	if p := e.page(link.LinkFilter{CampaignID: camp.ID}); p.Total != 1 {
		t.Fatalf("the campaign lists %d links, want 1", p.Total)
	}
	// An empty alias gets a generated code; keeping an alias is no conflict.
	got, err = e.Links.UpdateLink(e.ctx, ws.ID, l.ID, link.LinkUpdate{Alias: ptr("")}, nil)
	if err != nil || len(got.Alias) != link.GeneratedCodeLength {
		t.Fatalf("update to an empty alias = %+v, %v", got, err)
	}
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, l.ID, link.LinkUpdate{Alias: ptr(got.Alias), Tags: ptr([]string{})}, nil); err != nil {
		t.Fatal(err)
	}

	e.restart()
	if got, err := e.Links.FindLinkByID(e.ctx, ws.ID, l.ID); err != nil || len(got.Tags) != 0 || got.DestinationURL != "https://example.com/new" {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
}

// page returns a page of links: of f's workspace, or the admin's first
// when f names none; page 1 and the largest page unless f says otherwise.
func (e *env) page(f link.LinkFilter) *link.LinkPage {
	e.t.Helper()
	if f.WorkspaceID == "" {
		ms, err := e.Workspaces.FindMemberships(e.ctx, e.firstUser())
		if err != nil || len(ms) == 0 {
			e.t.Fatalf("memberships: %v", err)
		}
		f.WorkspaceID = ms[0].Workspace.ID
	}
	if f.Page == 0 {
		f.Page = 1
	}
	if f.Limit == 0 {
		f.Limit = link.MaxPageLimit
	}
	p, err := e.Links.FindLinkPage(e.ctx, f)
	if err != nil {
		e.t.Fatalf("FindLinkPage %+v: %v", f, err)
	}
	return p
}

// firstUser returns the instance admin's ID.
func (e *env) firstUser() string {
	e.t.Helper()
	u, err := e.Users.FindUserByEmail(e.ctx, "admin@example.com")
	if err != nil {
		e.t.Fatal(err)
	}
	return u.ID
}

func aliases(ls []*link.Link) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, l.Alias)
	}
	return out
}

func testLinksUpdateRefused(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	l := e.link(ws.ID, &link.Link{Alias: "mine", Tags: []string{"a"}})
	e.link(ws.ID, &link.Link{Alias: "taken"})
	before, err := e.Links.FindLinkByID(e.ctx, ws.ID, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	errOwn := errors.New("refused by the caller")
	for _, tt := range []struct {
		name     string
		ws, id   string
		upd      link.LinkUpdate
		validate func(*link.Link) error
		code     string
	}{
		{"alias taken", ws.ID, l.ID, link.LinkUpdate{Alias: ptr("taken"), Tags: ptr([]string{"z"})}, nil, link.ECONFLICT},
		{"validate's own error", ws.ID, l.ID, link.LinkUpdate{Alias: ptr("zzz")}, func(*link.Link) error { return errOwn }, link.EINTERNAL},
		{"invalid", ws.ID, l.ID, link.LinkUpdate{DestinationURL: ptr("ftp://x")}, func(l *link.Link) error { return l.Validate(nil) }, link.EINVALID},
		{"another workspace", other.ID, l.ID, link.LinkUpdate{Alias: ptr("x")}, nil, link.ENOTFOUND},
		{"unknown", ws.ID, "lnk_unknown", link.LinkUpdate{Alias: ptr("x")}, nil, link.ENOTFOUND},
	} {
		_, err := e.Links.UpdateLink(e.ctx, tt.ws, tt.id, tt.upd, tt.validate)
		if link.ErrorCode(err) != tt.code {
			t.Errorf("%s: error %v, want code %q", tt.name, err, tt.code)
		}
		if tt.validate != nil && tt.code == link.EINTERNAL && !errors.Is(err, errOwn) {
			t.Errorf("%s: error %v, want validate's error unchanged", tt.name, err)
		}
		after, _ := e.Links.FindLinkByID(e.ctx, ws.ID, l.ID)
		if fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("%s changed the link:\n%+v\n%+v", tt.name, before, after)
		}
	}
	if _, err := e.Links.FindLinkByAlias(e.ctx, "", "zzz"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a refused alias is found: %v", err)
	}
}

func testLinksDelete(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	l := e.link(ws.ID, &link.Link{Alias: "bye", Tags: []string{"a"}})
	e.record(link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: e.now()})
	wantCode(t, e.Links.DeleteLink(e.ctx, other.ID, l.ID), link.ENOTFOUND)
	wantCode(t, e.Links.DeleteLink(e.ctx, ws.ID, "lnk_unknown"), link.ENOTFOUND)
	if err := e.Links.DeleteLink(e.ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Links.DeleteLink(e.ctx, ws.ID, l.ID), link.ENOTFOUND)
	_, err := e.Links.FindLinkByID(e.ctx, ws.ID, l.ID)
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.Links.FindLinkByAlias(e.ctx, "", "bye")
	wantCode(t, err, link.ENOTFOUND)
	if p := e.page(link.LinkFilter{}); p.Total != 0 || len(p.Links) != 0 {
		t.Fatalf("a deleted link is listed: %v (total %d)", aliases(p.Links), p.Total)
	}
	if p := e.page(link.LinkFilter{Tags: []string{"a"}}); p.Total != 0 {
		t.Fatalf("a deleted link is counted under its tag: %d", p.Total)
	}
	// Recreated, the alias is a new link with no clicks; the workspace
	// keeps the deleted link's clicks.
	again := e.link(ws.ID, &link.Link{Alias: "bye"})
	if again.ID == l.ID || e.clicksOf(again) != 0 {
		t.Fatalf("recreated = %+v", again)
	}
	st := e.stats(link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t0, End: t0.Add(time.Hour)})
	if st.Clicks != 1 {
		t.Fatalf("the workspace counts %d clicks after the link's deletion, want 1", st.Clicks)
	}
}

func testLinksList(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	camp := e.campaign(ws.ID, &link.Campaign{Name: "Spring"})
	e.domain(ws.ID, "go.example.com", true)
	// l0 … l4, a minute apart: the newest is l4.
	specs := []link.Link{
		{Alias: "l0", Tags: []string{"red"}},
		{Alias: "l1", Tags: []string{"blue"}, CampaignID: camp.ID},
		{Alias: "l2", Tags: []string{"red", "blue"}, Domain: "go.example.com"},
		{Alias: "l3"},
		{Alias: "l4", Tags: []string{"green"}, CampaignID: camp.ID, Domain: "go.example.com"},
	}
	for _, s := range specs {
		e.link(ws.ID, &s)
		e.clock.Add(time.Minute)
	}
	e.link(other.ID, &link.Link{Alias: "theirs", Tags: []string{"red"}})

	for _, tt := range []struct {
		name  string
		f     link.LinkFilter
		want  []string
		total int
	}{
		{"all, newest first", link.LinkFilter{}, []string{"l4", "l3", "l2", "l1", "l0"}, 5},
		{"first page", link.LinkFilter{Page: 1, Limit: 2}, []string{"l4", "l3"}, 5},
		{"second page", link.LinkFilter{Page: 2, Limit: 2}, []string{"l2", "l1"}, 5},
		{"last page", link.LinkFilter{Page: 3, Limit: 2}, []string{"l0"}, 5},
		{"past the end", link.LinkFilter{Page: 4, Limit: 2}, []string{}, 5},
		{"a tag", link.LinkFilter{Tags: []string{"red"}}, []string{"l2", "l0"}, 2},
		{"any of the tags", link.LinkFilter{Tags: []string{"green", "blue"}}, []string{"l4", "l2", "l1"}, 3},
		{"a tag, paged", link.LinkFilter{Tags: []string{"red", "blue"}, Page: 2, Limit: 2}, []string{"l0"}, 3},
		{"no such tag", link.LinkFilter{Tags: []string{"none"}}, []string{}, 0},
		{"a campaign", link.LinkFilter{CampaignID: camp.ID}, []string{"l4", "l1"}, 2},
		{"a domain", link.LinkFilter{Domain: ptr("go.example.com")}, []string{"l4", "l2"}, 2},
		{"the primary host", link.LinkFilter{Domain: ptr("")}, []string{"l3", "l1", "l0"}, 3},
		{"a tag and a campaign", link.LinkFilter{Tags: []string{"blue"}, CampaignID: camp.ID}, []string{"l1"}, 1},
	} {
		p := e.page(tt.f)
		if got := aliases(p.Links); !slices.Equal(got, tt.want) || p.Total != tt.total || p.Truncated {
			t.Errorf("%s: %v, total %d, truncated %v; want %v, total %d", tt.name, got, p.Total, p.Truncated, tt.want, tt.total)
		}
	}
	_, err := e.Links.FindLinkPage(e.ctx, link.LinkFilter{WorkspaceID: "ws_unknown", Page: 1, Limit: 10})
	wantCode(t, err, link.ENOTFOUND)
	// A scan limit may stop a filter's walk early (a store that answers
	// from an index reads no link to test); a page cut short says so and
	// lists the newest matches only, and a bound past the workspace's
	// links changes nothing.
	all := []string{"l4", "l3", "l2", "l1", "l0"}
	if got := aliases(e.page(link.LinkFilter{Search: "l"}).Links); !slices.Equal(got, all) {
		t.Fatalf("search l: %v, want every link", got)
	}
	for _, f := range []link.LinkFilter{{Search: "l", ScanLimit: 2}, {CampaignID: camp.ID, ScanLimit: 2}, {Domain: ptr(""), ScanLimit: 2}} {
		full := e.page(link.LinkFilter{Search: f.Search, CampaignID: f.CampaignID, Domain: f.Domain})
		p := e.page(f)
		got := aliases(p.Links)
		if p.Truncated && (p.Total > full.Total || !slices.Equal(got, aliases(full.Links)[:len(got)])) ||
			!p.Truncated && (p.Total != full.Total || !slices.Equal(got, aliases(full.Links))) {
			t.Errorf("scan limit 2 (%+v): %v, total %d, truncated %v; without it %v, total %d",
				f, got, p.Total, p.Truncated, aliases(full.Links), full.Total)
		}
		f.ScanLimit = len(all)
		if p := e.page(f); p.Truncated || p.Total != full.Total {
			t.Errorf("scan limit of every link (%+v): total %d, truncated %v; want %d, not truncated", f, p.Total, p.Truncated, full.Total)
		}
	}
}

func testLinksSearch(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	e.link(ws.ID, &link.Link{Alias: "SpringSale", DestinationURL: "https://shop.example.com/a"})
	e.clock.Add(time.Minute)
	e.link(ws.ID, &link.Link{Alias: "b", DestinationURL: "https://example.com/spring-catalogue"})
	e.clock.Add(time.Minute)
	e.link(ws.ID, &link.Link{Alias: "c", DestinationURL: "https://example.com/c", Tags: []string{"springtime"}})
	e.clock.Add(time.Minute)
	d := e.link(ws.ID, &link.Link{Alias: "d", DestinationURL: "https://example.com/winter"})
	e.link(other.ID, &link.Link{Alias: "spring", DestinationURL: "https://example.com/theirs"})

	for _, tt := range []struct {
		search string
		want   []string
	}{
		{"spring", []string{"c", "b", "SpringSale"}}, // alias, destination, tag; any case
		{"SPRING", []string{"c", "b", "SpringSale"}},
		{"shop.example", []string{"SpringSale"}},
		{"winter", []string{"d"}},
		{"nothing-like-this", []string{}},
	} {
		p := e.page(link.LinkFilter{Search: tt.search})
		if got := aliases(p.Links); !slices.Equal(got, tt.want) || p.Total != len(tt.want) {
			t.Errorf("search %q: %v (total %d), want %v", tt.search, got, p.Total, tt.want)
		}
	}
	// The search follows updates and deletions.
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, d.ID, link.LinkUpdate{DestinationURL: ptr("https://example.com/spring-again")}, nil); err != nil {
		t.Fatal(err)
	}
	if got := aliases(e.page(link.LinkFilter{Search: "winter"}).Links); len(got) != 0 {
		t.Fatalf("the old destination is still found: %v", got)
	}
	if got := aliases(e.page(link.LinkFilter{Search: "spring"}).Links); !slices.Equal(got, []string{"d", "c", "b", "SpringSale"}) {
		t.Fatalf("after an update: %v", got)
	}
	if err := e.Links.DeleteLink(e.ctx, ws.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	if got := aliases(e.page(link.LinkFilter{Search: "spring"}).Links); !slices.Equal(got, []string{"c", "b", "SpringSale"}) {
		t.Fatalf("after a deletion: %v", got)
	}
}

func testLinksSortClicks(t *testing.T, e *env) {
	_, ws := e.setup()
	var ls []*link.Link
	for i := range 4 {
		ls = append(ls, e.link(ws.ID, &link.Link{Alias: fmt.Sprintf("s%d", i)}))
		e.clock.Add(time.Minute)
	}
	// s1: 3 clicks, s3 and s0: 1 each, s2: none.
	var clicks []link.Click
	for i, n := range []int{1, 3, 0, 1} {
		for range n {
			clicks = append(clicks, link.Click{LinkID: ls[i].ID, WorkspaceID: ws.ID, Time: t0})
		}
	}
	e.record(clicks...)
	p := e.page(link.LinkFilter{Sort: link.SortClicks})
	if got, want := aliases(p.Links), []string{"s1", "s3", "s0", "s2"}; !slices.Equal(got, want) {
		t.Fatalf("sorted by clicks: %v, want %v (the newest first among equals)", got, want)
	}
	if p.Links[0].Clicks != 3 || p.Links[3].Clicks != 0 {
		t.Fatalf("listed clicks: %d … %d, want 3 … 0", p.Links[0].Clicks, p.Links[3].Clicks)
	}
	if got := aliases(e.page(link.LinkFilter{Sort: link.SortClicks, Page: 2, Limit: 2}).Links); !slices.Equal(got, []string{"s0", "s2"}) {
		t.Fatalf("second page sorted by clicks: %v", got)
	}
}

func testLinksLimits(t *testing.T, e *env) {
	_, ws := e.setup()
	exp := e.now().Add(48 * time.Hour)
	var ls []*link.Link
	for i := range 4 {
		l := &link.Link{Alias: fmt.Sprintf("a%d", i), Tags: []string{"t"}}
		l.Archived = i%2 == 0
		if i == 0 {
			l.ExpiresAt, l.MaxClicks, l.ExpiredURL, l.Title = &exp, 7, "https://example.com/over", "Zero"
		}
		ls = append(ls, e.link(ws.ID, l))
		e.clock.Add(time.Minute)
	}
	got, err := e.Links.FindLinkByID(e.ctx, ws.ID, ls[0].ID)
	if err != nil || got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) || got.MaxClicks != 7 ||
		got.ExpiredURL != "https://example.com/over" || got.Title != "Zero" || !got.Archived {
		t.Fatalf("limits read back: %+v, %v", got.LinkLimits, err)
	}
	if got, err := e.Links.FindLinkByAlias(e.ctx, "", "a0"); err != nil || got.MaxClicks != 7 || got.ExpiresAt == nil {
		t.Fatalf("limits by alias: %+v, %v", got, err)
	}
	check := func(when string, want map[link.ArchivedFilter][]string) {
		t.Helper()
		for f, w := range want {
			for _, extra := range []link.LinkFilter{{}, {Tags: []string{"t"}}, {Search: "a"}} {
				extra.Archived = f
				p := e.page(extra)
				if got := aliases(p.Links); !slices.Equal(got, w) || p.Total != len(w) {
					t.Errorf("%s, archived=%q (%+v): %v (total %d), want %v", when, f, extra, got, p.Total, w)
				}
			}
		}
	}
	check("created", map[link.ArchivedFilter][]string{
		"": {"a3", "a1"}, link.ArchivedExclude: {"a3", "a1"}, link.ArchivedOnly: {"a2", "a0"}, link.ArchivedAll: {"a3", "a2", "a1", "a0"},
	})
	// A zero expiry and a zero limit clear them; archiving moves lists.
	upd, err := e.Links.UpdateLink(e.ctx, ws.ID, ls[0].ID, link.LinkUpdate{Limits: link.LinkLimitsUpdate{
		ExpiresAt: &time.Time{}, MaxClicks: ptr(int64(0)), Archived: ptr(false), Title: ptr("Renamed"),
	}}, nil)
	if err != nil || upd.ExpiresAt != nil || upd.MaxClicks != 0 || upd.Archived || upd.Title != "Renamed" || upd.ExpiredURL != "https://example.com/over" {
		t.Fatalf("limits cleared: %+v, %v", upd.LinkLimits, err)
	}
	if _, err := e.Links.UpdateLink(e.ctx, ws.ID, ls[1].ID, link.LinkUpdate{Limits: link.LinkLimitsUpdate{Archived: ptr(true)}}, nil); err != nil {
		t.Fatal(err)
	}
	check("changed", map[link.ArchivedFilter][]string{
		"": {"a3", "a0"}, link.ArchivedOnly: {"a2", "a1"}, link.ArchivedAll: {"a3", "a2", "a1", "a0"},
	})
	e.restart()
	check("after a restart", map[link.ArchivedFilter][]string{"": {"a3", "a0"}, link.ArchivedOnly: {"a2", "a1"}})
}

func testLinksBulk(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	e.link(other.ID, &link.Link{Alias: "theirs"})
	theirs := e.campaign(other.ID, &link.Campaign{})
	mk := func(alias string) *link.Link {
		l := &link.Link{WorkspaceID: ws.ID, Alias: alias, DestinationURL: "https://example.com/" + alias}
		l.Normalize()
		return l
	}
	bad := mk("bad")
	bad.CampaignID = theirs.ID
	batch := []*link.Link{mk("one"), mk("theirs"), mk("two"), mk("one"), bad, mk("")}
	errs, err := e.Links.CreateLinks(e.ctx, ws.ID, batch)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", link.ECONFLICT, "", link.ECONFLICT, link.EINVALID, ""}
	if len(errs) != len(batch) {
		t.Fatalf("%d errors for %d links", len(errs), len(batch))
	}
	for i, w := range want {
		if got := link.ErrorCode(errs[i]); got != w {
			t.Errorf("link %d (%q): code %q (%v), want %q", i, batch[i].Alias, got, errs[i], w)
		}
	}
	for _, i := range []int{0, 2, 5} {
		l := batch[i]
		got, err := e.Links.FindLinkByAlias(e.ctx, "", l.Alias)
		if l.ID == "" || err != nil || got.ID != l.ID || !l.CreatedAt.Equal(e.now()) {
			t.Errorf("stored link %d = %+v; by alias %+v, %v", i, l, got, err)
		}
	}
	if len(batch[5].Alias) != link.GeneratedCodeLength {
		t.Errorf("generated code %q", batch[5].Alias)
	}
	if p := e.page(link.LinkFilter{WorkspaceID: ws.ID}); p.Total != 3 {
		t.Fatalf("%d links stored, want 3", p.Total)
	}
	_, err = e.Links.CreateLinks(e.ctx, "ws_unknown", []*link.Link{mk("x")})
	wantCode(t, err, link.ENOTFOUND)
	if _, err := e.Links.FindLinkByAlias(e.ctx, "", "x"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a refused call stored a link: %v", err)
	}
}

func testLinksCampaignUTM(t *testing.T, e *env) {
	_, ws := e.setup()
	camp := e.campaign(ws.ID, &link.Campaign{Name: "Spring", UTMSource: "camp-src", UTMMedium: "camp-med", UTMCampaign: "spring"})
	e.link(ws.ID, &link.Link{Alias: "own", CampaignID: camp.ID, UTMSource: "own-src"})
	got, err := e.Links.FindLinkByAlias(e.ctx, "", "own")
	if err != nil {
		t.Fatal(err)
	}
	if got.UTMSource != "own-src" || got.UTMMedium != "camp-med" || got.UTMCampaign != "spring" {
		t.Fatalf("UTM for a redirect = %q %q %q; want the link's own source, the campaign's medium and name", got.UTMSource, got.UTMMedium, got.UTMCampaign)
	}
	// The campaign's values follow its updates.
	if _, err := e.Campaigns.UpdateCampaign(e.ctx, ws.ID, camp.ID, link.CampaignUpdate{UTMMedium: ptr("social")}); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.Links.FindLinkByAlias(e.ctx, "", "own"); got.UTMMedium != "social" {
		t.Fatalf("after the campaign's update the medium is %q, want social", got.UTMMedium)
	}
}

func testLinksConcurrent(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	const n = 12
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			wsID := ws.ID
			if i%2 == 1 {
				wsID = other.ID
			}
			l := &link.Link{WorkspaceID: wsID, Alias: "race", DestinationURL: fmt.Sprintf("https://example.com/%d", i), RedirectCode: 302}
			errs[i] = e.Links.CreateLink(e.ctx, l)
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch link.ErrorCode(err) {
		case "":
			won++
		case link.ECONFLICT:
		default:
			t.Errorf("creation %d: %v, want success or conflict", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent creations of one alias succeeded, want 1", won)
	}
	if _, err := e.Links.FindLinkByAlias(e.ctx, "", "race"); err != nil {
		t.Fatal(err)
	}
	// Generated codes never clash.
	codes := make([]*link.Link, n)
	for i := range n {
		wg.Go(func() {
			codes[i] = &link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/gen", RedirectCode: 302}
			errs[i] = e.Links.CreateLink(e.ctx, codes[i])
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, l := range codes {
		if errs[i] != nil || seen[l.Alias] {
			t.Fatalf("generated code %d: %q, %v", i, l.Alias, errs[i])
		}
		seen[l.Alias] = true
	}
}
