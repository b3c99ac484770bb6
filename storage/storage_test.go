package storage_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/clocktest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
	"github.com/linkbolt/linkbolt/webhook"
	bolt "go.etcd.io/bbolt"
)

// Clock is the clock storage tests move by hand.
type Clock = clocktest.Clock

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// MustOpenDB opens a new data file under tb.TempDir() with a clock standing
// at t0, after applying opts to the DB. At cleanup it checks the link
// indexes against the records, closes the file, and checks the file's
// consistency with bolt's own check.
func MustOpenDB(tb testing.TB, opts ...func(*storage.DB)) (*storage.DB, *Clock) {
	tb.Helper()
	clock := clocktest.New(t0)
	path := filepath.Join(tb.TempDir(), "data", "linkbolt.db")
	return mustOpenPath(tb, path, clock, opts...), clock
}

// soloCreations is an option of MustOpenDB and mustSetup for tests that
// create links one after another, from one goroutine: a creation then
// waits next to no time for others to share its commit (DB.BatchDelay),
// as none will come.
func soloCreations(db *storage.DB) { db.BatchDelay = time.Nanosecond }

// MustReopen closes db and opens its file again with the same clock.
func MustReopen(tb testing.TB, db *storage.DB, clock *Clock) *storage.DB {
	tb.Helper()
	if err := db.Close(); err != nil {
		tb.Fatalf("close: %v", err)
	}
	return mustOpenPath(tb, db.Path, clock)
}

func mustOpenPath(tb testing.TB, path string, clock *Clock, opts ...func(*storage.DB)) *storage.DB {
	tb.Helper()
	db := storage.NewDB(path)
	db.Now = clock.Now
	for _, o := range opts {
		o(db)
	}
	if err := db.Open(); err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() {
		if db.Opened() {
			if err := db.CheckIndexes(); err != nil {
				tb.Error(err)
			}
		}
		if err := db.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
		checkFile(tb, path)
	})
	return db
}

// checkFile reopens the file with bolt and runs tx.Check.
func checkFile(tb testing.TB, path string) {
	tb.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		tb.Fatalf("reopen for check: %v", err)
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			tb.Errorf("bolt check: %v", err)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// Services bundles the services of one DB.
type Services struct {
	DB         *storage.DB
	Clock      *Clock
	Users      *storage.UserService
	Workspaces *storage.WorkspaceService
	Keys       *storage.KeyService
	Links      *storage.LinkService
	Clicks     *storage.ClickService
	Campaigns  *storage.CampaignService
}

func newServices(db *storage.DB, clock *Clock) *Services {
	enc, err := webhook.NewEncoder(&url.URL{Scheme: "http", Host: "lb.test"}, "")
	if err != nil {
		panic(err)
	}
	s := &Services{
		DB: db, Clock: clock,
		Users:      storage.NewUserService(db),
		Workspaces: storage.NewWorkspaceService(db),
		Keys:       storage.NewKeyService(db),
		Links:      storage.NewLinkService(db),
		Clicks:     storage.NewClickService(db),
		Campaigns:  storage.NewCampaignService(db),
	}
	s.Clicks.Events = enc // a batch of clicks writes link.clicked events
	return s
}

// testEncoder returns the webhook event encoder of a service at
// http://lb.test.
func testEncoder(tb testing.TB) *webhook.Encoder {
	tb.Helper()
	enc, err := webhook.NewEncoder(&url.URL{Scheme: "http", Host: "lb.test"}, "")
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

// failingPing is an event encoder whose pings fail.
type failingPing struct{ *webhook.Encoder }

func (failingPing) PingData() ([]byte, error) { return nil, errors.New("boom") }

// mustSetup opens a DB (see MustOpenDB for opts) and bootstraps an admin
// with a workspace.
func mustSetup(tb testing.TB, opts ...func(*storage.DB)) (*Services, *link.User, *link.Workspace) {
	tb.Helper()
	db, clock := MustOpenDB(tb, opts...)
	s := newServices(db, clock)
	u := &link.User{Email: "admin@example.com", PasswordHash: []byte("hash")}
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := s.Users.Bootstrap(context.Background(), u, ws); err != nil {
		tb.Fatalf("bootstrap: %v", err)
	}
	return s, u, ws
}

// mustWorkspace creates another workspace owned by ownerID.
func mustWorkspace(tb testing.TB, s *Services, name, ownerID string) *link.Workspace {
	tb.Helper()
	ws := &link.Workspace{Name: name, Plan: link.PlanFree}
	if err := s.Workspaces.CreateWorkspace(context.Background(), ws, ownerID, 0); err != nil {
		tb.Fatalf("create workspace: %v", err)
	}
	return ws
}

// wantCode fails unless err has the domain error code want ("" for nil).
func wantCode(tb testing.TB, err error, want string) {
	tb.Helper()
	if got := link.ErrorCode(err); got != want {
		tb.Fatalf("error code = %q (%v), want %q", got, err, want)
	}
}

func ptr[T any](v T) *T { return &v }

// mustVerifiedDomain creates the domain host of the workspace wsID and
// marks it verified: links may only be created on verified domains of
// their workspace.
func mustVerifiedDomain(tb testing.TB, s *Services, wsID, host string) *link.Domain {
	tb.Helper()
	ds := storage.NewDomainService(s.DB)
	d := mustDomain(tb, ds, wsID, host)
	d, err := ds.SetDomainVerified(context.Background(), wsID, d.ID, true)
	if err != nil {
		tb.Fatalf("verify domain %s: %v", host, err)
	}
	return d
}

func mustLink(tb testing.TB, s *Services, wsID string, l *link.Link) *link.Link {
	tb.Helper()
	l.WorkspaceID = wsID
	if l.DestinationURL == "" {
		l.DestinationURL = "https://example.com/" + fmt.Sprint(time.Now().UnixNano())
	}
	if err := s.Links.CreateLink(context.Background(), l); err != nil {
		tb.Fatalf("create link: %v", err)
	}
	return l
}

// mustCampaign creates a campaign in the workspace wsID, normalised and
// validated as the server does.
func mustCampaign(tb testing.TB, s *Services, wsID string, c *link.Campaign) *link.Campaign {
	tb.Helper()
	c.WorkspaceID = wsID
	if c.Name == "" {
		c.Name = "Campaign " + fmt.Sprint(time.Now().UnixNano())
	}
	c.Normalize()
	if err := c.Validate(); err != nil {
		tb.Fatalf("campaign: %v", err)
	}
	if err := s.Campaigns.CreateCampaign(context.Background(), c); err != nil {
		tb.Fatalf("create campaign: %v", err)
	}
	return c
}
