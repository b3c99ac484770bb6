package storage

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// testdata/v1.db is a data file written by linkbolt of schema version 1
// (commit 9ec6f85: wire IDs the bucket sequence in base 36, no ID key,
// unbounded version 1 period blobs, raw clicks with their referrer inline,
// no clicks.hosts). testdata/mkv1/main.go.txt made it: built in a
// worktree of commit 9ec6f85 as cmd/mkv1,
//
//	go run ./cmd/mkv1 v1.db
//
// bootstraps usr_1 with workspace ws_1, creates campaign cmp_1, links
// lnk_1 (in cmp_1), lnk_2 and lnk_3, records the 50 clicks of v1Click and
// creates key key_1. The file is 64 KB.
const v1Fixture = "testdata/v1.db"

// v1Start is the time of the fixture's first click; its clicks are a
// minute apart.
var v1Start = time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC)

// v1Click returns the fixture's click i as the old code exported it.
func v1Click(i int) link.Click {
	lid := fmt.Sprintf("lnk_%d", i%3+1)
	c := link.Click{LinkID: lid, WorkspaceID: "ws_1", Time: v1Start.Add(time.Duration(i) * time.Minute),
		Referrer: []string{"direct", "t.co", "www.google.com", "news.ycombinator.com", "Example.ORG"}[i%5],
		Browser:  "Chrome", OS: "Linux", Device: "desktop", Country: "DE", Visitor: uint64(i % 7)}
	if lid == "lnk_1" {
		c.CampaignID = "cmp_1"
	}
	return c
}

// copyFixture copies the fixture file into a temporary directory.
func copyFixture(t *testing.T, fixture string) string {
	t.Helper()
	src, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "linkbolt.db")
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantVersion1File fails unless the file at path is what version 1 wrote:
// the test below must exercise the upgrade, not a file of today's code.
func wantVersion1File(t *testing.T, path string) {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if v := string(meta.Get(metaSchemaVersion)); v != "1" {
			t.Errorf("fixture schema version %q, want 1", v)
		}
		if meta.Get(metaIDKey) != nil || meta.Get(metaIDLegacyMax) != nil {
			t.Error("fixture has opaque ID metadata")
		}
		if tx.Bucket(bucketClicksHosts) != nil {
			t.Error("fixture has clicks.hosts")
		}
		if tx.Bucket(bucketAudit) != nil {
			t.Error("fixture has the audit log")
		}
		n := 0
		_ = tx.Bucket(bucketClicksRaw).ForEach(func(k, v []byte) error {
			n++
			if v[0]&rawFlagHostRef != 0 {
				t.Errorf("fixture raw click %x names a host by id", k)
			}
			return nil
		})
		if n != 50 {
			t.Errorf("fixture has %d raw clicks, want 50", n)
		}
		day := uint32(v1Start.Unix() / secondsPerDay)
		v := tx.Bucket(bucketClicksDaily).Get(periodBlobKey(workspaceScope(1), day))
		if len(v) == 0 || v[0] == 0 {
			t.Errorf("fixture's workspace day blob %x is not of version 1", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeVersion1File opens a file written by linkbolt of schema
// version 1 (see v1Fixture) with today's code, adds records and clicks,
// and checks, before and after a restart: the legacy IDs still name their
// records and the legacy maxima are the file's sequences; new records get
// opaque IDs; stats over old and new clicks (version 1 blobs merged with
// version 2 ones) are exact; the export reads the old clicks' inline
// referrers and the new clicks' dictionary ones; and the file passes the
// index, click and bolt checks.
func TestUpgradeVersion1File(t *testing.T) {
	path := copyFixture(t, v1Fixture)
	wantVersion1File(t, path)
	ctx := context.Background()
	now := v1Start.Add(26 * time.Hour)

	// The clicks recorded after the upgrade: on the same day, on old
	// links and a new one, half of them in cmp_1, each a new visitor.
	const newClicks = 12
	newRefs := []string{"t.co", "new.example", ""}
	var newLink string
	newClick := func(i int) link.Click {
		lid := []string{"lnk_1", "lnk_2", newLink}[i%3]
		c := link.Click{LinkID: lid, WorkspaceID: "ws_1", Time: v1Start.Add(2*time.Hour + time.Duration(i)*time.Minute),
			Referrer: newRefs[i%3], Browser: "Firefox", OS: "Linux", Device: "desktop", Country: "FR", Visitor: uint64(100 + i)}
		if lid != "lnk_2" {
			c.CampaignID = "cmp_1"
		}
		return c
	}

	for round := range 2 {
		mustRun(t, fmt.Sprintf("open %d", round+1), func(t *testing.T) {
			db := NewDB(path)
			db.Now = func() time.Time { return now }
			if err := db.Open(); err != nil {
				t.Fatal(err)
			}
			links, clicks := NewLinkService(db), NewClickService(db)
			day := link.StatsFilter{WorkspaceID: "ws_1", Start: v1Start.Truncate(24 * time.Hour), End: v1Start.Truncate(24 * time.Hour).Add(24 * time.Hour), TopLimit: -1}

			mustRun(t, "legacy records keep their IDs", func(t *testing.T) {
				for prefix, want := range map[string]uint64{prefixWorkspace: 1, prefixUser: 1, prefixCampaign: 1, prefixKey: 1, prefixLink: 3} {
					if got := db.ids.legacy[prefix]; got != want {
						t.Errorf("round %d: legacy maximum of %s = %d, want %d", round, prefix, got, want)
					}
				}
				for i, alias := range []string{"one", "two", "three"} {
					id := fmt.Sprintf("lnk_%d", i+1)
					l, err := links.FindLinkByID(ctx, "ws_1", id)
					if err != nil || l.ID != id || l.Alias != alias {
						t.Fatalf("round %d: legacy link %s: %+v, %v", round, id, l, err)
					}
				}
				if _, err := NewWorkspaceService(db).FindWorkspaceByID(ctx, "ws_1"); err != nil {
					t.Fatalf("round %d: ws_1: %v", round, err)
				}
				if _, err := NewUserService(db).FindUserByID(ctx, "usr_1"); err != nil {
					t.Fatalf("round %d: usr_1: %v", round, err)
				}
				if _, err := NewCampaignService(db).FindCampaignByID(ctx, "ws_1", "cmp_1"); err != nil {
					t.Fatalf("round %d: cmp_1: %v", round, err)
				}
				if k, err := NewKeyService(db).FindKeyByID(ctx, "ws_1", "key_1"); err != nil || string(k.Hash) != "hash-1" {
					t.Fatalf("round %d: key_1: %+v, %v", round, k, err)
				}
			})
			if round == 0 {
				mustRun(t, "new records get opaque IDs, past the legacy maxima", func(t *testing.T) {
					l := &link.Link{WorkspaceID: "ws_1", Alias: "four", DestinationURL: "https://example.com/four", CampaignID: "cmp_1"}
					if err := links.CreateLink(ctx, l); err != nil {
						t.Fatal(err)
					}
					if seq, ok := db.ids.parseID(prefixLink, l.ID); len(l.ID) != len(prefixLink)+opaqueLen || !ok || seq != 4 {
						t.Fatalf("new link id %q (%d, %v), want an opaque id of sequence 4", l.ID, seq, ok)
					}
					newLink = l.ID
					c := &link.Campaign{WorkspaceID: "ws_1", Name: "Autumn", Status: link.CampaignActive}
					if err := NewCampaignService(db).CreateCampaign(ctx, c); err != nil {
						t.Fatal(err)
					}
					k := &link.APIKey{WorkspaceID: "ws_1", Name: "k2", Scope: "read", Hash: []byte("hash-2"), Start: "lb_live_y"}
					if err := NewKeyService(db).CreateKey(ctx, k, 10); err != nil {
						t.Fatal(err)
					}
					for _, id := range []string{c.ID, k.ID} {
						if len(id) < opaqueLen || id == "cmp_2" || id == "key_2" {
							t.Fatalf("new id %q is not opaque", id)
						}
					}
					batch := make([]link.Click, newClicks)
					for i := range batch {
						batch[i] = newClick(i)
					}
					if skipped, err := clicks.RecordClicks(ctx, batch); err != nil || skipped != 0 {
						t.Fatalf("record: %d skipped, %v", skipped, err)
					}
					// The new clicks name their hosts in the dictionary: 8 of them
					// have a host, the others are direct.
					refs := 0
					err := db.db.View(func(tx *bolt.Tx) error {
						return tx.Bucket(bucketClicksRaw).ForEach(func(k, v []byte) error {
							if v[0]&rawFlagHostRef != 0 {
								refs++
							}
							return nil
						})
					})
					if err != nil || refs != 2*newClicks/3 {
						t.Fatalf("%d raw clicks name their host by id, want %d (%v)", refs, 2*newClicks/3, err)
					}
				})
			}
			mustRun(t, "stats count version 1 aggregates and the new clicks exactly", func(t *testing.T) {
				for _, tt := range []struct {
					scope            link.StatsScope
					id               string
					clicks, visitors int64
				}{
					{link.ScopeWorkspace, "", 50 + newClicks, 7 + newClicks},
					{link.ScopeLink, "lnk_1", 17 + newClicks/3, 7 + newClicks/3},
					{link.ScopeLink, "lnk_3", 16, 7},
					{link.ScopeLink, newLink, newClicks / 3, newClicks / 3},
					{link.ScopeCampaign, "cmp_1", 17 + 2*newClicks/3, 7 + 2*newClicks/3},
				} {
					f := day
					f.Scope, f.ID = tt.scope, tt.id
					st, err := clicks.Stats(ctx, f)
					if err != nil {
						t.Fatalf("round %d: stats of %s %s: %v", round, tt.scope, tt.id, err)
					}
					if st.Clicks != tt.clicks || st.UniqueVisitors != tt.visitors {
						t.Errorf("round %d: %s %s: %d clicks, %d visitors; want %d, %d", round, tt.scope, tt.id, st.Clicks, st.UniqueVisitors, tt.clicks, tt.visitors)
					}
				}
				f := day
				f.Scope = link.ScopeWorkspace
				st, err := clicks.Stats(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				got := fmt.Sprint(st.Top[link.DimReferrers])
				want := "[{direct 14} {t.co 14} {Example.ORG 10} {news.ycombinator.com 10} {www.google.com 10} {new.example 4}]"
				if got != want {
					t.Errorf("round %d: referrers %s, want %s", round, got, want)
				}
			})
			mustRun(t, "the export holds old inline referrers, then new dictionary ones", func(t *testing.T) {
				var exported []link.Click
				err := clicks.ExportClicks(ctx, "ws_1", day.Start, day.End, func(c *link.Click) error {
					exported = append(exported, *c)
					return nil
				})
				if err != nil {
					t.Fatalf("round %d: export: %v", round, err)
				}
				if len(exported) != 50+newClicks {
					t.Fatalf("round %d: exported %d clicks, want %d", round, len(exported), 50+newClicks)
				}
				for i, got := range exported {
					var want link.Click
					if i < 50 {
						want = v1Click(i)
					} else {
						want = newClick(i - 50)
						if want.Referrer == "" {
							want.Referrer = "direct"
						}
					}
					if got != want {
						t.Errorf("round %d: click %d = %+v, want %+v", round, i, got, want)
					}
				}
			})
			mustRun(t, "the upgraded file keeps an audit log", func(t *testing.T) {
				audit := NewAuditService(db)
				actor := link.Actor{Type: link.ActorUser, ID: "usr_1", Name: "admin@example.com"}
				if err := audit.RecordAudit(link.WithActor(ctx, actor, "192.0.2.1"), []string{"ws_1"}, link.AuditBackupDownloaded, link.AuditTarget{Type: "instance"}, nil); err != nil {
					t.Fatal(err)
				}
				es, _, err := audit.FindAuditEntries(ctx, link.AuditFilter{WorkspaceID: "ws_1", Actor: "usr_1"})
				if err != nil || len(es) != round+1 || es[0].Actor != actor {
					t.Fatalf("round %d: audit entries = %+v, %v", round, es, err)
				}
			})
			mustRun(t, "indexes and file check clean", func(t *testing.T) {
				if err := db.CheckIndexes(); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				r, err := CheckFile(path)
				if err != nil || !r.OK() {
					t.Fatalf("round %d: check file: %+v, %v", round, r, err)
				}
			})
		})
	}
}

// mustRun runs fn as the subtest name and stops t if it fails: the steps
// of a story build on each other.
func mustRun(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, fn) {
		t.FailNow()
	}
}
