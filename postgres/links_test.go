package postgres_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// linkInstances opens n stores over one new database with an alias hold
// of a day, and a plain connection; it makes two workspaces.
func linkInstances(t *testing.T, n int) ([]*link.Store, *pgx.Conn, *clocktest.Clock, *link.Workspace, *link.Workspace) {
	t.Helper()
	u := pgtest.URL(t)
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	ctx := context.Background()
	var stores []*link.Store
	for range n {
		s, err := postgres.Open(ctx, postgres.Options{URL: u, Now: clock.Now, AliasHold: 24 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Data.Close() })
		stores = append(stores, s)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	admin, ws := bootstrap(t, stores[0])
	other := &link.Workspace{Name: "Other", Plan: link.PlanFree}
	if err := stores[0].Workspaces.CreateWorkspace(ctx, other, admin.ID, 0); err != nil {
		t.Fatal(err)
	}
	return stores, conn, clock, ws, other
}

func newLink(wsID, alias string) *link.Link {
	return &link.Link{WorkspaceID: wsID, Alias: alias, DestinationURL: "https://example.com/" + alias, RedirectCode: 302}
}

// both runs a and b at once and returns their errors.
func both(a, b func() error) (errA, errB error) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Go(func() { <-start; errA = a() })
	wg.Go(func() { <-start; errB = b() })
	close(start)
	wg.Wait()
	return errA, errB
}

// TestAliasUniqueAcrossInstances: one alias created at once from two
// instances, by two workspaces, singly and in bulk, makes one link; the
// others are told it is taken.
func TestAliasUniqueAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, conn, _, ws, other := linkInstances(t, 2)
	const n = 12
	ok := race(t, stores, n, link.ECONFLICT, func(i int, s *link.Store) error {
		wsID := ws.ID
		if i%2 == 1 {
			wsID = other.ID
		}
		if i%3 == 2 {
			errs, err := s.Links.CreateLinks(context.Background(), wsID, []*link.Link{newLink(wsID, "race")})
			if err != nil {
				return err
			}
			return errs[0]
		}
		return s.Links.CreateLink(context.Background(), newLink(wsID, "race"))
	})
	if ok != 1 {
		t.Fatalf("%d of %d creations of one alias succeeded, want 1", ok, n)
	}
	var count int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM links WHERE alias = 'race'`).Scan(&count); err != nil || count != 1 {
		t.Fatalf("%d links of the alias, %v; want 1", count, err)
	}
}

// TestAliasHoldAcrossInstances: while one instance deletes a link or
// renames it away from its alias, another instance's creation of that
// alias for another workspace is refused, whichever commits first: the
// alias is either still taken or held. The workspace that held it takes
// it back.
func TestAliasHoldAcrossInstances(t *testing.T) {
	t.Parallel()
	stores, _, _, ws, other := linkInstances(t, 2)
	ctx := context.Background()
	for round := range 10 {
		alias := fmt.Sprintf("held%d", round)
		l := newLink(ws.ID, alias)
		if err := stores[0].Links.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		free := func() error { return stores[0].Links.DeleteLink(ctx, ws.ID, l.ID) }
		if round%2 == 1 {
			renamed := alias + "-renamed"
			free = func() error {
				_, err := stores[0].Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{Alias: &renamed}, nil)
				return err
			}
		}
		errFree, errTake := both(free, func() error { return stores[1].Links.CreateLink(ctx, newLink(other.ID, alias)) })
		if errFree != nil {
			t.Fatalf("round %d: freeing: %v", round, errFree)
		}
		if link.ErrorCode(errTake) != link.ECONFLICT {
			t.Fatalf("round %d: another workspace's creation of the freed alias: %v, want a conflict", round, errTake)
		}
		if _, err := stores[1].Links.FindLinkByAlias(ctx, "", alias); link.ErrorCode(err) != link.ENOTFOUND {
			t.Fatalf("round %d: a held alias redirects: %v", round, err)
		}
		if err := stores[1].Links.CreateLink(ctx, newLink(ws.ID, alias)); err != nil {
			t.Fatalf("round %d: the holding workspace takes its alias back: %v", round, err)
		}
	}
}

// TestDomainDeletedWhileLinksCreated: a domain deleted on one instance
// while another creates a link on it ends with the link on the domain
// and the deletion refused, or the domain gone and the link refused,
// never a link on a deleted domain.
func TestDomainDeletedWhileLinksCreated(t *testing.T) {
	t.Parallel()
	stores, conn, _, ws, _ := linkInstances(t, 2)
	ctx := context.Background()
	for round := range 10 {
		d := &link.Domain{WorkspaceID: ws.ID, Hostname: fmt.Sprintf("go%d.example.com", round)}
		if err := stores[0].Domains.CreateDomain(ctx, d, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := stores[0].Domains.SetDomainVerified(ctx, ws.ID, d.ID, true); err != nil {
			t.Fatal(err)
		}
		l := newLink(ws.ID, "x")
		l.Domain = d.Hostname
		errDel, errLink := both(
			func() error { return stores[0].Domains.DeleteDomain(ctx, ws.ID, d.ID) },
			func() error { return stores[1].Links.CreateLink(ctx, l) })
		switch {
		case errDel == nil && link.ErrorCode(errLink) == link.EINVALID:
		case link.ErrorCode(errDel) == link.ECONFLICT && errLink == nil:
		default:
			t.Fatalf("round %d: deletion %v, link %v; want one of them refused", round, errDel, errLink)
		}
		var orphans int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM links l WHERE l.domain <> '' AND NOT EXISTS (SELECT 1 FROM domains d WHERE d.hostname = l.domain)`).Scan(&orphans); err != nil || orphans != 0 {
			t.Fatalf("round %d: %d links on no domain, %v", round, orphans, err)
		}
	}
}

// TestHotQueriesUseTheirIndexes: the redirect's lookup, a domain's link
// count, a list and a search can each be answered from their index (the
// tables are small, so the planner is told to avoid sequential scans).
func TestHotQueriesUseTheirIndexes(t *testing.T) {
	t.Parallel()
	_, conn, _, _, _ := linkInstances(t, 1)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ query, index string }{
		{`SELECT * FROM links WHERE domain = '' AND alias = 'abc'`, "links_alias_key"},
		{`SELECT count(*) FROM links WHERE domain = 'go.example.com'`, "links_alias_key"},
		{`SELECT * FROM links WHERE workspace_id = 'ws' ORDER BY seq DESC LIMIT 20`, "links_workspace"},
		{`SELECT * FROM links WHERE campaign_id = 'cmp' ORDER BY seq DESC`, "links_campaign"},
		{`SELECT * FROM links WHERE tags && ARRAY['red']`, "links_tags"},
		{`SELECT * FROM links WHERE search_text LIKE '%spring%'`, "links_search"},
		{`SELECT * FROM domains WHERE hostname = 'go.example.com' AND verified`, "domains_hostname_key"},
		{`DELETE FROM link_alias_holds WHERE until <= now()`, "link_alias_holds_until"},
	} {
		rows, err := conn.Query(ctx, "EXPLAIN "+tt.query)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if plan := strings.Join(lines, "\n"); !strings.Contains(plan, tt.index) {
			t.Errorf("%s: plan does not use %s:\n%s", tt.query, tt.index, plan)
		}
	}
}

// TestSearchWithoutTrigramIndex: where pg_trgm could not be installed (the
// index links_search is missing), a search reads the newest ScanLimit
// links and says when it stopped there.
func TestSearchWithoutTrigramIndex(t *testing.T) {
	t.Parallel()
	stores, conn, clock, ws, _ := linkInstances(t, 1)
	ctx := context.Background()
	for i := range 4 {
		if err := stores[0].Links.CreateLink(ctx, newLink(ws.ID, fmt.Sprintf("spring%d", i))); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Minute)
	}
	f := link.LinkFilter{WorkspaceID: ws.ID, Search: "SPRING", ScanLimit: 2}
	if p, err := stores[0].Links.FindLinkPage(ctx, f); err != nil || p.Total != 4 || p.Truncated {
		t.Fatalf("with the index: %+v, %v; want 4 links, not truncated", p, err)
	}
	if _, err := conn.Exec(ctx, `DROP INDEX links_search`); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(ctx, postgres.Options{URL: conn.Config().ConnString(), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Data.Close()
	p, err := s.Links.FindLinkPage(ctx, f)
	if err != nil || p.Total != 2 || !p.Truncated || len(p.Links) != 2 || p.Links[0].Alias != "spring3" {
		t.Fatalf("without the index: %+v, %v; want the newest 2 links, truncated", p, err)
	}
	f.ScanLimit = 4
	if p, err := s.Links.FindLinkPage(ctx, f); err != nil || p.Total != 4 || p.Truncated {
		t.Fatalf("without the index, a bound of every link: %+v, %v; want 4, not truncated", p, err)
	}
}

// TestClicksColumn: the click service adds to links.clicks with heap-only
// updates (no index holds the column), FindLinkByID and lists show it,
// and a list sorted by clicks orders by it, the newest first among links
// with as many, reading at most the scan limit's newest links.
func TestClicksColumn(t *testing.T) {
	t.Parallel()
	stores, conn, clock, ws, _ := linkInstances(t, 1)
	ctx := context.Background()
	var ls []*link.Link
	for i := range 4 {
		l := newLink(ws.ID, fmt.Sprintf("c%d", i))
		if err := stores[0].Links.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		clock.Add(time.Minute)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// c0: 3 clicks, c1: 1, c2: 0, c3: 1
	for _, i := range []int{0, 0, 0, 1, 3} {
		if _, err := tx.Exec(ctx, `UPDATE links SET clicks = clicks + 1 WHERE id = $1`, ls[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	var hot int
	if err := tx.QueryRow(ctx, `SELECT pg_stat_get_xact_tuples_hot_updated('links'::regclass)`).Scan(&hot); err != nil || hot != 5 {
		t.Fatalf("%d of 5 click updates heap-only, %v", hot, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if l, err := stores[0].Links.FindLinkByID(ctx, ws.ID, ls[0].ID); err != nil || l.Clicks != 3 {
		t.Fatalf("FindLinkByID: %+v, %v; want 3 clicks", l, err)
	}
	page := func(f link.LinkFilter) *link.LinkPage {
		t.Helper()
		f.WorkspaceID, f.Sort = ws.ID, link.SortClicks
		p, err := stores[0].Links.FindLinkPage(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	aliases := func(p *link.LinkPage) string {
		var out []string
		for _, l := range p.Links {
			out = append(out, fmt.Sprintf("%s:%d", l.Alias, l.Clicks))
		}
		return strings.Join(out, " ")
	}
	if p := page(link.LinkFilter{}); aliases(p) != "c0:3 c3:1 c1:1 c2:0" || p.Total != 4 || p.Truncated {
		t.Fatalf("by clicks: %s, total %d, truncated %v", aliases(p), p.Total, p.Truncated)
	}
	if p := page(link.LinkFilter{Page: 2, Limit: 2}); aliases(p) != "c1:1 c2:0" {
		t.Fatalf("by clicks, page 2: %s", aliases(p))
	}
	if p := page(link.LinkFilter{ScanLimit: 2}); aliases(p) != "c3:1 c2:0" || p.Total != 2 || !p.Truncated {
		t.Fatalf("by clicks, the newest 2: %s, total %d, truncated %v", aliases(p), p.Total, p.Truncated)
	}
}

// TestLinkAsReadBack: a link as CreateLink and UpdateLink return it is
// the link as it is read back, times included (kept in microseconds),
// with a clock and an expiry finer than that.
func TestLinkAsReadBack(t *testing.T) {
	t.Parallel()
	stores, _, clock, ws, _ := linkInstances(t, 1)
	ctx := context.Background()
	clock.Add(123456789 * time.Nanosecond)
	exp := clock.Now().Add(time.Hour + time.Nanosecond)
	l := newLink(ws.ID, "fine")
	l.Tags, l.ExpiresAt, l.OG = []string{"a"}, &exp, &link.OG{Title: "T"}
	l.Rules = []link.Rule{{If: link.RuleCondition{Country: "DE"}, Then: "https://example.de/"}}
	if err := stores[0].Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	got, err := stores[0].Links.FindLinkByID(ctx, ws.ID, l.ID)
	if err != nil || !reflect.DeepEqual(got, l) {
		t.Fatalf("read back:\n%+v, %v\ncreated:\n%+v", got, err, l)
	}
	clock.Add(time.Nanosecond)
	upd, err := stores[0].Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{Limits: link.LinkLimitsUpdate{ExpiresAt: &exp}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := stores[0].Links.FindLinkByID(ctx, ws.ID, l.ID); err != nil || !reflect.DeepEqual(got, upd) {
		t.Fatalf("read back:\n%+v, %v\nupdated:\n%+v", got, err, upd)
	}
}
