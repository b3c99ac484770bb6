package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// TestCreateLinksStoresAsCreateLink: a link created in a batch is stored
// as CreateLink stores it, every field and control included, and a batch
// honours alias holds as CreateLink does: another workspace's refuses the
// alias until it ends, the workspace's own is released.
func TestCreateLinksStoresAsCreateLink(t *testing.T) {
	t.Parallel()
	stores, conn, clock, ws, other := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	camp := &link.Campaign{WorkspaceID: ws.ID, Name: "Spring", Status: link.CampaignActive}
	if err := s.Campaigns.CreateCampaign(ctx, camp); err != nil {
		t.Fatal(err)
	}
	expires := clock.Now().Add(48*time.Hour + 123456*time.Nanosecond)
	full := func(alias string) *link.Link {
		l := &link.Link{WorkspaceID: ws.ID, Alias: alias, DestinationURL: "https://example.com/full", RedirectCode: 301,
			Tags: []string{"b", "a"}, UTMSource: "news", UTMMedium: "mail", UTMCampaign: "spring", CampaignID: camp.ID,
			PasswordHash: "hash", Rules: []link.Rule{{If: link.RuleCondition{Country: "DE"}, Then: "https://example.de/"}},
			Variants:   []link.Variant{{DestinationURL: "https://example.com/a", Weight: 50}, {DestinationURL: "https://example.com/b", Weight: 50}},
			OG:         &link.OG{Title: "Card"},
			LinkLimits: link.LinkLimits{ExpiresAt: &expires, MaxClicks: 10, ExpiredURL: "https://example.com/over", Archived: true, Title: "Full"}}
		l.Normalize()
		return l
	}
	plain := func(alias string) *link.Link {
		l := &link.Link{WorkspaceID: ws.ID, Alias: alias, DestinationURL: "https://example.com/" + alias}
		l.Normalize()
		return l
	}
	// Holds: "held" by the other workspace for a day, "mine" by this one,
	// "ended" by the other one until an hour ago.
	if _, err := conn.Exec(ctx, `INSERT INTO link_alias_holds (domain, alias, workspace_id, until) VALUES
		('', 'held', $1, $3), ('', 'mine', $2, $3), ('', 'ended', $1, $4)`,
		other.ID, ws.ID, clock.Now().Add(24*time.Hour), clock.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	single := full("single")
	if err := s.Links.CreateLink(ctx, single); err != nil {
		t.Fatal(err)
	}
	badDomain := plain("elsewhere")
	badDomain.Domain = "go.example.com"
	batch := []*link.Link{full("bulk"), plain("held"), plain("mine"), plain("ended"), badDomain, plain("")}
	errs, err := s.Links.CreateLinks(ctx, ws.ID, batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"", link.ECONFLICT, "", "", link.EINVALID, ""} {
		if got := link.ErrorCode(errs[i]); got != want {
			t.Errorf("link %d (%q): %q (%v), want %q", i, batch[i].Alias, got, errs[i], want)
		}
	}
	got, err := s.Links.FindLinkByID(ctx, ws.ID, batch[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.Links.FindLinkByID(ctx, ws.ID, single.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := linkText(batch[0]), linkText(got); a != b {
		t.Errorf("the batch answered\n%s\nthe store holds\n%s", a, b)
	}
	got.ID, got.Alias, want.ID, want.Alias = "", "", "", ""
	if g, w := linkText(got), linkText(want); g != w {
		t.Errorf("a link of the batch is stored as\n%s\nCreateLink stores\n%s", g, w)
	}
	if n := count(t, conn, `SELECT count(*) FROM link_alias_holds WHERE alias IN ('mine', 'ended')`); n != 0 {
		t.Errorf("%d holds of aliases the batch took are left", n)
	}
	if n := count(t, conn, `SELECT count(*) FROM link_alias_holds WHERE alias = 'held'`); n != 1 {
		t.Errorf("the other workspace's hold is gone")
	}
	if len(batch[5].Alias) != link.GeneratedCodeLength || batch[5].ID == "" {
		t.Errorf("generated link %+v", *batch[5])
	}
}

// TestCreateLinksCodeTakenMeanwhile: a generated code that another
// transaction takes between the batch's check and its insert is drawn
// again, and the link is stored under the new one. It swaps the code
// generator, so it does not run in parallel.
func TestCreateLinksCodeTakenMeanwhile(t *testing.T) {
	stores, conn, _, ws, _ := linkInstances(t, 2)
	ctx := context.Background()
	restore := postgres.DrawCodes("Taken01", "Free002")
	defer restore()
	// The other instance's transaction holds "Taken01" uncommitted: the
	// batch's check cannot see it, its insert waits for it.
	watch, err := pgx.Connect(ctx, conn.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO links (id, seq, workspace_id, alias, destination_url, redirect_code, created_at, updated_at)
		VALUES ('lnk_meanwhile', -1, $1, 'Taken01', 'https://example.com/', 302, now(), now())`, ws.ID); err != nil {
		t.Fatal(err)
	}
	l := &link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/batch"}
	l.Normalize()
	done := make(chan error, 1)
	go func() {
		errs, err := stores[1].Links.CreateLinks(ctx, ws.ID, []*link.Link{l})
		if err == nil {
			err = errs[0]
		}
		done <- err
	}()
	// The batch waits on the uncommitted row, which then commits.
	for count(t, watch, `SELECT count(*) FROM pg_locks WHERE NOT granted`) == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l.Alias != "Free002" {
		t.Fatalf("the link took %q, want the code drawn again", l.Alias)
	}
	if got, err := stores[0].Links.FindLinkByAlias(ctx, "", "Free002"); err != nil || got.ID != l.ID {
		t.Fatalf("by its alias: %+v, %v", got, err)
	}
}

// TestCreateLinkTakenMeanwhile: a link's insert goes out with its commit;
// a generated code that another transaction takes between the check and
// that insert is drawn again, in a new transaction, and an alias taken
// that way is refused as taken, with nothing written. It swaps the code
// generator, so it does not run in parallel.
func TestCreateLinkTakenMeanwhile(t *testing.T) {
	stores, conn, _, ws, _ := linkInstances(t, 2)
	ctx := context.Background()
	restore := postgres.DrawCodes("Taken03", "Free004")
	defer restore()
	watch, err := pgx.Connect(ctx, conn.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	for i, c := range []struct{ held, alias, want string }{
		{"Taken03", "", "Free004"},
		{"mine", "mine", ""},
	} {
		// Another transaction holds the code uncommitted: the check
		// cannot see it, the insert waits for it.
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO links (id, seq, workspace_id, alias, destination_url, redirect_code, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 'https://example.com/', 302, now(), now())`, fmt.Sprintf("lnk_meanwhile%d", i), -1-i, ws.ID, c.held); err != nil {
			t.Fatal(err)
		}
		l := &link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/one", Alias: c.alias}
		done := make(chan error, 1)
		go func() { done <- stores[1].Links.CreateLink(ctx, l) }()
		for count(t, watch, `SELECT count(*) FROM pg_locks WHERE NOT granted`) == 0 {
			time.Sleep(time.Millisecond)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		err = <-done
		if c.want == "" {
			if link.ErrorCode(err) != link.ECONFLICT {
				t.Fatalf("alias %q taken meanwhile: %v, want a conflict", c.alias, err)
			}
			if n := count(t, watch, `SELECT count(*) FROM links WHERE destination_url = 'https://example.com/one'`); n != 1 {
				t.Fatalf("%d links stored, want the first only", n)
			}
			continue
		}
		if err != nil || l.Alias != c.want {
			t.Fatalf("code taken meanwhile: %q, %v; want %q", l.Alias, err, c.want)
		}
		if got, err := stores[0].Links.FindLinkByAlias(ctx, "", c.want); err != nil || got.ID != l.ID {
			t.Fatalf("by its alias: %+v, %v", got, err)
		}
	}
}

// linkText is l with what its pointers point at.
func linkText(l *link.Link) string {
	c := *l
	og, expires := c.OG, c.ExpiresAt
	c.OG, c.ExpiresAt = nil, nil
	s := fmt.Sprintf("%+v", c)
	if og != nil {
		s += fmt.Sprintf(" og %+v", *og)
	}
	if expires != nil {
		s += " expires " + expires.UTC().String()
	}
	return s
}

// TestBulkLoadAnalyzesLinks: links added in bulk past analyzeMin give
// the links table fresh planner statistics at once, not on autovacuum's
// next round (ANALYZE sets the planner's estimate of its rows, which
// nothing else here does: a bulk insert leaves it as it was).
func TestBulkLoadAnalyzesLinks(t *testing.T) {
	t.Parallel()
	stores, conn, _, ws, _ := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	estimate := func() int64 {
		return count(t, conn, `SELECT reltuples::bigint FROM pg_class WHERE relname = 'links'`)
	}
	// Not autovacuum's: it is kept off this database's links meanwhile.
	if _, err := conn.Exec(ctx, `ALTER TABLE links SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := conn.Exec(context.Background(), `ALTER TABLE links RESET (autovacuum_enabled)`); err != nil {
			t.Error(err)
		}
	})
	for start := 0; start < 5000; start += 1000 {
		if n := estimate(); n >= 1000 {
			t.Fatalf("the estimate is %d rows before the bulk load ended", n)
		}
		ls := make([]*link.Link, 1000)
		for i := range ls {
			ls[i] = &link.Link{Alias: fmt.Sprintf("bulk%d", start+i), DestinationURL: "https://example.com/", RedirectCode: 302}
		}
		if _, err := s.Links.CreateLinks(ctx, ws.ID, ls); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for estimate() < 4000 {
		if time.Now().After(deadline) {
			t.Fatalf("links not analysed after 5,000 links added in bulk: the estimate is %d rows", estimate())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSearchPages: an indexed search answers its page and its total in
// one read of the matches, newest first, and a page past them its total
// alone; the same term asked again and again (past the point where a
// cached statement would take a generic plan) answers the same.
func TestSearchPages(t *testing.T) {
	t.Parallel()
	stores, _, _, ws, _ := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	ls := make([]*link.Link, 500)
	for i := range ls {
		ls[i] = &link.Link{Alias: fmt.Sprintf("s%03d", i), DestinationURL: "https://example.com/", RedirectCode: 302}
		if i%10 == 0 {
			ls[i].DestinationURL = "https://needle.example.org/"
		}
	}
	if _, err := s.Links.CreateLinks(ctx, ws.ID, ls); err != nil {
		t.Fatal(err)
	}
	for range 8 {
		for page, want := range map[int][]string{1: {"s490", "s480", "s470"}, 17: {"s010", "s000"}, 18: {}} {
			p, err := s.Links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: ws.ID, Search: "needle", Limit: 3, Page: page})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range p.Links {
				got = append(got, l.Alias)
			}
			if p.Total != 50 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("page %d: %v of %d; want %v of 50", page, got, p.Total, want)
			}
		}
	}
}

// TestCreateLinkRefusals: a single creation, its reads sent in one batch,
// refuses as the store always did: an unknown workspace of a well-formed
// ID, a taken alias, an alias another workspace holds, an unknown
// campaign; and a generated code found taken is drawn again. It swaps the
// code generator, so it does not run in parallel.
func TestCreateLinkRefusals(t *testing.T) {
	stores, conn, clock, ws, other := linkInstances(t, 1)
	s, ctx := stores[0], context.Background()
	mk := func(wsID, alias string) *link.Link {
		l := &link.Link{WorkspaceID: wsID, Alias: alias, DestinationURL: "https://example.com/" + alias}
		l.Normalize()
		return l
	}
	if err := s.Links.CreateLink(ctx, mk(ws.ID, "Taken01")); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO link_alias_holds (domain, alias, workspace_id, until) VALUES ('', 'theirs', $1, $2)`,
		other.ID, clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	bad := mk(ws.ID, "x")
	bad.CampaignID = "cmp_nothere"
	for _, tc := range []struct {
		l    *link.Link
		want string
	}{
		{mk(postgres.UnusedWorkspaceID(s), "y"), link.ENOTFOUND},
		{mk(ws.ID, "Taken01"), link.ECONFLICT},
		{mk(ws.ID, "theirs"), link.ECONFLICT},
		{bad, link.EINVALID},
	} {
		if err := s.Links.CreateLink(ctx, tc.l); link.ErrorCode(err) != tc.want {
			t.Errorf("%+v: %v, want %s", *tc.l, err, tc.want)
		}
	}
	if err := s.Links.CreateLink(ctx, mk(other.ID, "theirs")); err != nil {
		t.Fatalf("the holder takes its alias back: %v", err)
	}
	restore := postgres.DrawCodes("Taken01", "Free003")
	defer restore()
	l := mk(ws.ID, "")
	if err := s.Links.CreateLink(ctx, l); err != nil || l.Alias != "Free003" {
		t.Fatalf("a generated code drawn taken: %q, %v; want the next drawn", l.Alias, err)
	}
	if n := count(t, conn, `SELECT count(*) FROM link_alias_holds WHERE alias = 'theirs'`); n != 0 {
		t.Fatalf("the hold of an alias taken back is left")
	}
}
