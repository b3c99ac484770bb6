package storage

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// testdata/v2.db is a data file written by linkbolt of schema version 2
// (commit b4ba191: one clicks.link counter per link). testdata/mkv2/main.go.txt
// made it (see there): workspace "Default" of a@example.com, campaign
// "Spring", links l000..l299 (l001, l011, ... l291 in the campaign, one
// click each), the clicks of
// v2Clicks, link l007 deleted, one API key of hash "hash-1".
const v2Fixture = "testdata/v2.db"

// v2Start is the time of the fixture's first click.
var v2Start = time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC)

// v2Clicks returns the fixture's clicks as the old code was given them,
// with lid(i) the ID of link i (a 0-based index; lid must know l007's).
func v2Clicks(wsID, campaignID string, lid func(i int) string) []link.Click {
	refs := []string{"direct", "t.co", "www.google.com", "news.ycombinator.com", "example.org"} // stored canonical
	var clicks []link.Click
	for i := range 300 {
		for k := range i % 5 {
			c := link.Click{LinkID: lid(i), WorkspaceID: wsID, Time: v2Start.Add(time.Duration(i*5+k) * time.Minute),
				Referrer: refs[(i+k)%5], Browser: "Chrome", OS: "Linux", Device: "desktop", Country: "DE", Visitor: uint64(i % 11)}
			if i%10 == 1 {
				c.CampaignID = campaignID
			}
			clicks = append(clicks, c)
		}
	}
	return clicks
}

// fileDump is every key and value of every bucket of a data file.
type fileDump map[string]map[string]string

func dumpFile(t *testing.T, bdb *bolt.DB) fileDump {
	t.Helper()
	d := fileDump{}
	err := bdb.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			m := map[string]string{}
			d[string(name)] = m
			return b.ForEach(func(k, v []byte) error {
				if v == nil {
					return fmt.Errorf("bucket %s: nested bucket %x", name, k)
				}
				m[string(k)] = string(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// dumpFixture returns the dump of the fixture copied to path, failing
// unless it says schema version.
func dumpFixture(t *testing.T, path, version string) fileDump {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	d := dumpFile(t, bdb)
	if v := d["meta"][string(metaSchemaVersion)]; v != version {
		t.Fatalf("fixture schema version %q, want %s", v, version)
	}
	return d
}

// openSchemaOnly opens the file at path and does the first step of Open,
// recording today's schema version and creating the buckets, and no more:
// the upgrades' steps are the test's to take.
func openSchemaOnly(t *testing.T, path string) *bolt.DB {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(tx *bolt.Tx) error { return initSchema(tx, path) }); err != nil {
		t.Fatal(err)
	}
	return bdb
}

// wantIndexesAndClicks fails unless the indexes and the click aggregates
// of the open file check clean.
func wantIndexesAndClicks(t *testing.T, db *DB) {
	t.Helper()
	if err := db.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
	if err := db.db.View(func(tx *bolt.Tx) error {
		if errs := checkClicks(tx); len(errs) > 0 {
			t.Fatal(errs)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// wantVersion2File fails unless the file at path is what version 2
// wrote, and returns its dump: 239 per-link counters (the links with
// clicks but l007) in clicks.link, no clicks.totals.
func wantVersion2File(t *testing.T, path string) fileDump {
	t.Helper()
	d := dumpFixture(t, path, "2")
	if n := len(d[string(bucketClicksLinkV2)]); n != 239 {
		t.Fatalf("fixture has %d clicks.link counters, want 239", n)
	}
	if _, ok := d[string(bucketClicksTotals)]; ok {
		t.Fatal("fixture has clicks.totals")
	}
	return d
}

// TestUpgradeVersion2File opens a file written by linkbolt of schema
// version 2 (see v2Fixture) with today's code, once in one go and once
// after an upgrade killed after its first transaction, and checks: every
// bucket but the counters' is byte for byte what it was; clicks.link is
// gone and each of its counters is the link's total in clicks.totals; every
// link reads its click count (alone and in the list), the deleted one
// stays gone; the key, the stats and the exported clicks are the
// fixture's; new clicks add to the moved totals; and the file passes the
// index, click and bolt checks, also after a restart.
func TestUpgradeVersion2File(t *testing.T) {
	for _, interrupted := range []bool{false, true} {
		mustRun(t, fmt.Sprintf("interrupted=%v", interrupted), func(t *testing.T) {
			path := copyFixture(t, v2Fixture)
			before := wantVersion2File(t, path)
			if interrupted {
				killedUpgrade(t, path)
			}
			for round := range 2 {
				checkUpgradedV2(t, path, before, round)
			}
		})
	}
}

// killedUpgrade does what Open does to a version 2 file up to the commit
// of the counters' first chunk of 100, and stops there, as a process
// killed right after that commit would.
func killedUpgrade(t *testing.T, path string) {
	t.Helper()
	bdb := openSchemaOnly(t, path)
	if n, done, err := moveLinkCounterChunk(bdb, 100); n != 100 || done || err != nil {
		t.Fatalf("first chunk: %d moved, done %v, %v", n, done, err)
	}
	d := dumpFile(t, bdb)
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	if v := d["meta"][string(metaSchemaVersion)]; v != strconv.Itoa(SchemaVersion) {
		t.Fatalf("half-moved file says schema version %q, want %d (older linkbolt must refuse it)", v, SchemaVersion)
	}
	if n := len(d[string(bucketClicksLinkV2)]); n != 139 {
		t.Fatalf("%d counters left in clicks.link, want 139", n)
	}
}

func checkUpgradedV2(t *testing.T, path string, before fileDump, round int) {
	ctx := context.Background()
	db := NewDB(path)
	db.Now = func() time.Time { return v2Start.Add(30 * time.Hour) }
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	links, clicks := NewLinkService(db), NewClickService(db)

	mustRun(t, fmt.Sprintf("round %d: every other bucket is unchanged", round), func(t *testing.T) {
		after := dumpFile(t, db.db)
		if _, ok := after[string(bucketClicksLinkV2)]; ok {
			t.Error("clicks.link is still there")
		}
		for name, keys := range before {
			if name == string(bucketClicksLinkV2) || round > 0 && (name == string(bucketClicksTotals) ||
				name == string(bucketClicksRaw) || name == string(bucketClicksHourly) || name == string(bucketClicksDaily) ||
				name == string(bucketClicksVisitors) || name == string(bucketClicksHosts) || name == string(bucketClicksSalts)) {
				continue // round 1 follows new clicks
			}
			for k, v := range keys {
				if name == string(bucketMeta) && k == string(metaSchemaVersion) {
					if got := after[name][k]; got != strconv.Itoa(SchemaVersion) {
						t.Errorf("schema version %q, want %d", got, SchemaVersion)
					}
					continue
				}
				if name == string(bucketLinks) {
					wantSameLink(t, k, after[name][k], v)
					continue
				}
				if got, ok := after[name][k]; !ok || got != v {
					t.Errorf("bucket %s key %x: %x (%v), want %x", name, k, got, ok, v)
				}
			}
			want := len(keys)
			if name == string(bucketMeta) {
				// The search index, built for a file that had none, and
				// the link records' upgrade are marked done in meta (the
				// index's own bucket is checked by CheckFile below).
				if after[name][string(metaSearchIndex)] == "" {
					t.Error("the search index is not marked built")
				}
				if after[name][string(metaLinkCodec)] == "" {
					t.Error("the link records' upgrade is not marked done")
				}
				want += 2
			}
			if len(after[name]) != want {
				t.Errorf("bucket %s: %d keys, want %d", name, len(after[name]), want)
			}
		}
		if round == 0 {
			err := db.db.View(func(tx *bolt.Tx) error {
				for k, v := range before[string(bucketClicksLinkV2)] {
					got, err := linkClicks(tx, btoi([]byte(k)))
					if err != nil || got != btoi([]byte(v)) {
						t.Errorf("link %x: total %d (%v), want %d", k, got, err, btoi([]byte(v)))
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})

	var ws, campaign string
	ids := make([]string, 300)
	mustRun(t, fmt.Sprintf("round %d: every link reads its clicks", round), func(t *testing.T) {
		for i := range 300 {
			alias := fmt.Sprintf("l%03d", i)
			l, err := links.FindLinkByAlias(ctx, "", alias)
			if i == 7 {
				if link.ErrorCode(err) != link.ENOTFOUND {
					t.Fatalf("deleted link l007: %+v, %v", l, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("link %s: %v", alias, err)
			}
			ws, ids[i] = l.WorkspaceID, l.ID
			if i%10 == 1 {
				campaign = l.CampaignID
			}
			if l, err = links.FindLinkByID(ctx, ws, l.ID); err != nil {
				t.Fatal(err)
			}
			want := int64(i % 5)
			if round == 1 && i < 3 {
				want++ // round 0 clicked l000..l002 once more
			}
			if l.Clicks != want || l.DestinationURL != "https://example.com/"+alias {
				t.Errorf("link %s: %d clicks, destination %s; want %d", alias, l.Clicks, l.DestinationURL, want)
			}
		}
		// l007 was the eighth link created.
		seq, _ := db.ids.parseID(prefixLink, ids[6])
		ids[7] = db.ids.formatID(prefixLink, seq+1)
		listed := map[string]int64{}
		for page := 1; ; page++ {
			p, err := links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: ws, Page: page, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range p.Links {
				listed[l.Alias] = l.Clicks
			}
			if len(p.Links) < 100 {
				break
			}
		}
		if len(listed) != 299 {
			t.Fatalf("%d links listed, want 299", len(listed))
		}
		for alias, n := range listed {
			var i int
			if _, err := fmt.Sscanf(alias, "l%03d", &i); err != nil {
				t.Fatal(err)
			}
			if want := int64(i%5) + int64(round*btoiBool(i < 3)); n != want {
				t.Errorf("listed link %s: %d clicks, want %d", alias, n, want)
			}
		}
	})

	mustRun(t, fmt.Sprintf("round %d: the key, stats and export survived", round), func(t *testing.T) {
		if k, err := NewKeyService(db).FindKeyByHash(ctx, []byte("hash-1")); err != nil || k.WorkspaceID != ws {
			t.Fatalf("key: %+v, %v", k, err)
		}
		want := v2Clicks(ws, campaign, func(i int) string { return ids[i] })
		two := link.StatsFilter{WorkspaceID: ws, Scope: link.ScopeWorkspace, Start: v2Start.Truncate(24 * time.Hour), End: v2Start.Truncate(24 * time.Hour).Add(48 * time.Hour), TopLimit: -1}
		st, err := clicks.Stats(ctx, two)
		if err != nil {
			t.Fatal(err)
		}
		// Visitors count once a day: all 11 on each of the two days, and
		// visitor 99 on the second.
		if st.Clicks != int64(len(want)+3*round) || st.UniqueVisitors != 22+int64(round) {
			t.Errorf("workspace: %d clicks, %d visitors; want %d, %d", st.Clicks, st.UniqueVisitors, len(want)+3*round, 22+round)
		}
		f := two
		f.Scope, f.ID = link.ScopeCampaign, campaign
		if st, err = clicks.Stats(ctx, f); err != nil || st.Clicks != 30+int64(round) {
			t.Errorf("campaign: %+v, %v; want %d clicks", st, err, 30+round)
		}
		f.Scope, f.ID = link.ScopeLink, ids[299]
		if st, err = clicks.Stats(ctx, f); err != nil || st.Clicks != 4 || fmt.Sprint(st.Top[link.DimReferrers]) != "[{direct 1} {example.org 1} {t.co 1} {www.google.com 1}]" {
			t.Errorf("link l299: %+v, %v; want 4 clicks, one of each referrer but news.ycombinator.com", st, err)
		}
		var got []link.Click
		if err := clicks.ExportClicks(ctx, ws, v2Start, v2Start.Add(26*time.Hour), func(c *link.Click) error {
			got = append(got, *c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("exported %d clicks, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("click %d = %+v, want %+v", i, got[i], want[i])
			}
		}
	})

	if round == 0 {
		mustRun(t, "new clicks add to the moved totals", func(t *testing.T) {
			batch := make([]link.Click, 3)
			for i := range batch {
				batch[i] = link.Click{LinkID: ids[i], WorkspaceID: ws, Time: v2Start.Add(27 * time.Hour), Visitor: 99}
				if i == 1 {
					batch[i].CampaignID = campaign
				}
			}
			if skipped, err := clicks.RecordClicks(ctx, batch); skipped != 0 || err != nil {
				t.Fatalf("record: %d skipped, %v", skipped, err)
			}
		})
	}
	mustRun(t, fmt.Sprintf("round %d: indexes, clicks and file check clean", round), func(t *testing.T) {
		wantIndexesAndClicks(t, db)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := CheckFile(path)
		if err != nil || !r.OK() {
			t.Fatalf("check file: %+v, %v", r, err)
		}
	})
}

// wantSameLink fails unless the link record got, read by today's code,
// is the record want an older version wrote, and got is in the binary
// form.
func wantSameLink(t *testing.T, key, got, want string) {
	t.Helper()
	var g, w linkRecord
	if got == "" || got[0] != linkCodecBinary {
		t.Errorf("link %x: record %x, want it rewritten in the binary form", key, got)
		return
	}
	if err := decodeLink([]byte(got), &g); err != nil {
		t.Errorf("link %x: %v", key, err)
		return
	}
	if err := decodeJSON([]byte(want), &w); err != nil {
		t.Fatalf("link %x in the fixture: %v", key, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("link %x: %+v, want %+v", key, g, w)
	}
}

func btoiBool(b bool) int {
	if b {
		return 1
	}
	return 0
}
