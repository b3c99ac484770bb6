package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/postgres"
)

// A redirect reads a link from memory for up to a minute while its
// process hears the database's notifications: a change made through the
// same store is seen at once, one made through another instance on the
// same database when its notification arrives, a deleted link stops
// redirecting at once where it was deleted, and a listener that lost its
// connection starts its cache empty when it listens again.
func TestRedirectCache(t *testing.T) {
	stores, conn, clock, ws, _ := linkInstances(t, 2)
	a, b := stores[0], stores[1]
	ctx := link.WithActor(context.Background(), link.SystemActor, "")
	eventually := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("not within 10 s: %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	listen(t, a, b)
	l := newLink(ws.ID, "hot")
	if err := a.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	dest := func(s *link.Store) string {
		t.Helper()
		got, err := s.Links.FindLinkByAlias(ctx, "", "hot")
		if err != nil {
			t.Fatal(err)
		}
		return got.DestinationURL
	}
	if got := dest(b); got != "https://example.com/hot" {
		t.Fatalf("b reads %q", got)
	}
	// Read once by b, the link is not read again within the minute (the
	// clock moves, real time does not): a change written past linkbolt
	// notifies nobody and is not seen.
	if _, err := conn.Exec(ctx, `UPDATE links SET destination_url = 'https://example.com/sql' WHERE alias = 'hot'`); err != nil {
		t.Fatal(err)
	}
	clock.Add(30 * time.Second)
	if got := dest(b); got != "https://example.com/hot" {
		t.Fatalf("b read the database again within the minute: %q", got)
	}
	// A change through a: seen by a at once, by b when its notification
	// arrives, without the clock moving.
	u := "https://example.com/new"
	if _, err := a.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{DestinationURL: &u}, nil); err != nil {
		t.Fatal(err)
	}
	if got := dest(a); got != u {
		t.Fatalf("a after its own change reads %q", got)
	}
	eventually("b sees a's change", func() bool { return dest(b) == u })
	// The campaign's UTM values are part of the redirect: changed through
	// b, seen by b at once and by a when notified.
	c := &link.Campaign{WorkspaceID: ws.ID, Name: "Spring", Status: link.CampaignActive, UTMSource: "news"}
	if err := b.Campaigns.CreateCampaign(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{CampaignID: &c.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Links.FindLinkByAlias(ctx, "", "hot"); got.UTMSource != "news" {
		t.Fatalf("utm_source %q", got.UTMSource)
	}
	eventually("a sees the campaign", func() bool {
		got, err := a.Links.FindLinkByAlias(ctx, "", "hot")
		return err == nil && got.UTMSource == "news"
	})
	src := "mail"
	if _, err := b.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{UTMSource: &src}); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Links.FindLinkByAlias(ctx, "", "hot"); got.UTMSource != "mail" {
		t.Fatalf("utm_source after the campaign's change %q", got.UTMSource)
	}
	eventually("a sees the campaign's change", func() bool {
		got, err := a.Links.FindLinkByAlias(ctx, "", "hot")
		return err == nil && got.UTMSource == "mail"
	})
	// Deleted through b: gone on b at once, on a when notified.
	if err := b.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Links.FindLinkByAlias(ctx, "", "hot"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("b after the deletion: %v", err)
	}
	eventually("a sees the deletion", func() bool {
		_, err := a.Links.FindLinkByAlias(ctx, "", "hot")
		return link.ErrorCode(err) == link.ENOTFOUND
	})
	// An unknown code is not kept: created through a, found by b at once.
	if _, err := b.Links.FindLinkByAlias(ctx, "", "later"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("unknown code: %v", err)
	}
	later := newLink(ws.ID, "later")
	if err := a.Links.CreateLink(ctx, later); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Links.FindLinkByAlias(ctx, "", "later"); err != nil {
		t.Fatalf("a new link on the other instance: %v", err)
	}
	// A minute after it was read, a link is read again.
	if _, err := conn.Exec(ctx, `UPDATE links SET destination_url = 'https://example.com/sql2' WHERE alias = 'later'`); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	if got, err := b.Links.FindLinkByAlias(ctx, "", "later"); err != nil || got.DestinationURL != "https://example.com/sql2" {
		t.Fatalf("b a minute later: %+v, %v", got, err)
	}
	// The listeners' connections are cut: what changed meanwhile went
	// unheard, so a listener that connects again starts its cache empty.
	var pids []int32
	rows, err := conn.Query(ctx, `SELECT pg_terminate_backend(pid), pid FROM pg_stat_activity WHERE application_name = 'linkbolt cache listener'`)
	if err != nil {
		t.Fatal(err)
	}
	var cut bool
	var pid int32
	if _, err := pgx.ForEachRow(rows, []any{&cut, &pid}, func() error { pids = append(pids, pid); return nil }); err != nil || len(pids) != 2 {
		t.Fatalf("listeners cut: %v, %v", pids, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE links SET destination_url = 'https://example.com/unheard' WHERE alias = 'later'`); err != nil {
		t.Fatal(err)
	}
	eventually("the listeners are back", func() bool {
		return count(t, conn, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'linkbolt cache listener' AND NOT pid = ANY($1)`, pids) == 2 &&
			postgres.Listening(a) && postgres.Listening(b)
	})
	if got, err := b.Links.FindLinkByAlias(ctx, "", "later"); err != nil || got.DestinationURL != "https://example.com/unheard" {
		t.Fatalf("b after its listener came back: %+v, %v", got, err)
	}
}

// While the database cannot be read, a link read before answers as it
// was, past its second; a code never read answers the error.
func TestRedirectCacheAnswersThroughAnOutage(t *testing.T) {
	u := pgtest.URL(t)
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	ctx := link.WithActor(context.Background(), link.SystemActor, "")
	// Statements give up after 200 ms: a locked table is an outage.
	s, err := postgres.Open(ctx, postgres.Options{URL: u + "&statement_timeout=200", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Data.Close()
	_, ws := bootstrap(t, s)
	for _, alias := range []string{"seen", "unseen"} {
		if err := s.Links.CreateLink(ctx, newLink(ws.ID, alias)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Links.FindLinkByAlias(ctx, "", "seen"); err != nil {
		t.Fatal(err)
	}
	// That first read starts the listener, whose start makes what was
	// read before it stale (a read it overlaps is not kept): read again
	// once it listens, so that "seen" is held.
	for deadline := time.Now().Add(30 * time.Second); !postgres.Listening(s); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listener never listened")
		}
	}
	if _, err := s.Links.FindLinkByAlias(ctx, "", "seen"); err != nil {
		t.Fatal(err)
	}
	d := &link.Domain{WorkspaceID: ws.ID, Hostname: "go.example.com"}
	if err := s.Domains.CreateDomain(ctx, d, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Domains.SetDomainVerified(ctx, ws.ID, d.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Domains.FindVerifiedDomain(ctx, "go.example.com"); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE links, domains IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	got, err := s.Links.FindLinkByAlias(ctx, "", "seen")
	if err != nil || got.DestinationURL != "https://example.com/seen" {
		t.Fatalf("a link read before the outage: %v, %v", got, err)
	}
	if _, err := s.Links.FindLinkByAlias(ctx, "", "unseen"); err == nil || link.ErrorCode(err) == link.ENOTFOUND {
		t.Fatalf("a link never read, through the outage: %v (want the database's error, not not-found)", err)
	}
	// Routing answers from the table of verified domains read before,
	// for the domains and for the hosts that are none.
	if got, err := s.Domains.FindVerifiedDomain(ctx, "go.example.com"); err != nil || got.ID != d.ID {
		t.Fatalf("a verified domain through the outage: %v, %v", got, err)
	}
	if _, err := s.Domains.FindVerifiedDomain(ctx, "example.org"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a host that is no domain, through the outage: %v", err)
	}
}

// A domain created verified (a contested claim proven) routes at once on
// the instance that created it and, when notified, on the others, though
// both read the table of verified domains within the minute.
func TestRedirectCacheDomainCreatedVerified(t *testing.T) {
	stores, _, _, ws, _ := linkInstances(t, 2)
	a, b := stores[0], stores[1]
	ctx := link.WithActor(context.Background(), link.SystemActor, "")
	listen(t, a, b)
	for _, s := range stores {
		if _, err := s.Domains.FindVerifiedDomain(ctx, "go.example.com"); link.ErrorCode(err) != link.ENOTFOUND {
			t.Fatalf("before its creation: %v", err)
		}
	}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	d := &link.Domain{WorkspaceID: ws.ID, Hostname: "go.example.com", Verified: true, VerifiedAt: &now}
	if err := a.Domains.CreateDomain(ctx, d, 0); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Domains.FindVerifiedDomain(ctx, "go.example.com"); err != nil || got.ID != d.ID {
		t.Fatalf("a after creating it: %+v, %v", got, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := b.Domains.FindVerifiedDomain(ctx, "go.example.com")
		if err == nil && got.ID == d.ID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b does not route the domain: %+v, %v", got, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// listen has each store read a redirect, which starts its listener, and
// waits until all listen.
func listen(t *testing.T, stores ...*link.Store) {
	t.Helper()
	for _, s := range stores {
		if _, err := s.Links.FindLinkByAlias(context.Background(), "", "no-such-link"); link.ErrorCode(err) != link.ENOTFOUND {
			t.Fatalf("an unknown code: %v", err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, s := range stores {
		for !postgres.Listening(s) {
			if time.Now().After(deadline) {
				t.Fatal("the instances do not listen")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// A database that stops answering without refusing (its host frozen, or
// cut off by a firewall that drops packets) does not hold the redirects
// of links read before: the first waits staleWait and answers the link
// as it was, the next answer at once; a code never read answers the
// database's error when the request gives up, never not-found. Once the
// database answers again, links are read again.
func TestRedirectCacheAnswersThroughAFrozenDatabase(t *testing.T) {
	t.Parallel()
	cluster := pgtest.NewCluster(t)
	u := cluster.URL(t)
	clock := clocktest.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	ctx := link.WithActor(context.Background(), link.SystemActor, "")
	s, err := postgres.Open(ctx, postgres.Options{URL: u, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Data.Close()
	_, ws := bootstrap(t, s)
	if err := s.Links.CreateLink(ctx, newLink(ws.ID, "seen")); err != nil {
		t.Fatal(err)
	}
	d := &link.Domain{WorkspaceID: ws.ID, Hostname: "go.example.com"}
	if err := s.Domains.CreateDomain(ctx, d, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Domains.SetDomainVerified(ctx, ws.ID, d.ID, true); err != nil {
		t.Fatal(err)
	}
	listen(t, s)
	if _, err := s.Links.FindLinkByAlias(ctx, "", "seen"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Domains.FindVerifiedDomain(ctx, "go.example.com"); err != nil {
		t.Fatal(err)
	}
	// Changed past linkbolt, unheard: what is held stays what redirects
	// answer until the database is read again.
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `UPDATE links SET destination_url = 'https://example.com/later' WHERE alias = 'seen'`); err != nil {
		t.Fatal(err)
	}

	cluster.Freeze(t)
	clock.Add(2 * time.Minute) // past every TTL
	// A request that would wait for the connect or statement timeout
	// (5 s, 30 s) ends with its deadline instead, and fails the test.
	request := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 3*time.Second) }
	for i := range 3 {
		rctx, cancel := request()
		got, err := s.Links.FindLinkByAlias(rctx, "", "seen")
		cancel()
		if err != nil || got.DestinationURL != "https://example.com/seen" {
			t.Fatalf("read %d of a link held, the database frozen: %+v, %v", i, got, err)
		}
		rctx, cancel = request()
		dom, err := s.Domains.FindVerifiedDomain(rctx, "go.example.com")
		cancel()
		if err != nil || dom.ID != d.ID {
			t.Fatalf("read %d of a verified domain, the database frozen: %+v, %v", i, dom, err)
		}
	}
	rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = s.Links.FindLinkByAlias(rctx, "", "unseen")
	cancel()
	if err == nil || link.ErrorCode(err) == link.ENOTFOUND {
		t.Fatalf("a code never read, the database frozen: %v (want an error, not not-found)", err)
	}

	cluster.Thaw(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := s.Links.FindLinkByAlias(ctx, "", "seen")
		if err == nil && got.DestinationURL == "https://example.com/later" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the link is not read again once the database answers: %+v, %v", got, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
