package postgres

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/linkbolt/linkbolt/internal/pgtest"
	"github.com/linkbolt/linkbolt/link"
)

// TestAliasLoaderBatches: lookups that wait while the one reader is busy
// are read together, each answered with its own link (or not found), a
// link of a campaign with the campaign's UTM values, duplicates each
// answered; a failed statement fails each of its lookups.
func TestAliasLoaderBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := Options{URL: pgtest.URL(t)}
	db, s, ws := openBootstrapped(t, o)
	c := &link.Campaign{WorkspaceID: ws.ID, Name: "Spring", UTMSource: "news"}
	if err := s.Campaigns.CreateCampaign(ctx, c); err != nil {
		t.Fatal(err)
	}
	const n = 200
	ls := make([]*link.Link, n)
	for i := range ls {
		ls[i] = &link.Link{Alias: "a" + strconv.Itoa(i), DestinationURL: "https://example.com/" + strconv.Itoa(i), RedirectCode: 302}
		if i%10 == 0 {
			ls[i].CampaignID = c.ID
		}
	}
	if _, err := s.Links.CreateLinks(ctx, ws.ID, ls); err != nil {
		t.Fatal(err)
	}
	a := newAliasLoader(db, 1)
	var batched sync.WaitGroup
	lookup := func(i int) {
		defer batched.Done()
		alias := "a" + strconv.Itoa(i%(n+20)) // the last 20 do not exist
		l, err := a.load(ctx, "", alias)
		switch {
		case i%(n+20) >= n:
			if link.ErrorCode(err) != link.ENOTFOUND {
				t.Errorf("%s: %v %v, want not found", alias, l, err)
			}
		case err != nil || l.Alias != alias || l.DestinationURL != "https://example.com/"+strconv.Itoa(i%(n+20)):
			t.Errorf("%s: %+v %v", alias, l, err)
		case i%10 == 0 && l.UTMSource != "news":
			t.Errorf("%s: utm_source %q, want the campaign's", alias, l.UTMSource)
		}
	}
	for i := range 3 * (n + 20) { // each alias three times
		batched.Add(1)
		go lookup(i)
	}
	batched.Wait()

	db.pool.Close() // every statement fails now
	var failed sync.WaitGroup
	for i := range 20 {
		failed.Add(1)
		go func() {
			defer failed.Done()
			if _, err := a.load(ctx, "", "a"+strconv.Itoa(i)); err == nil || link.ErrorCode(err) == link.ENOTFOUND {
				t.Errorf("a lookup on a closed pool: %v", err)
			}
		}()
	}
	failed.Wait()
}

// openBootstrapped opens the store of o for an internal test, closed when
// the test ends, with its first user and workspace.
func openBootstrapped(t *testing.T, o Options) (*DB, *link.Store, *link.Workspace) {
	t.Helper()
	ctx := context.Background()
	db, err := OpenDB(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := db.Store(o)
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := s.Users.Bootstrap(ctx, &link.User{Email: "admin@example.com", PasswordHash: []byte("h")}, ws); err != nil {
		t.Fatal(err)
	}
	return db, s, ws
}
