package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// testdata/v3.db is a data file written by linkbolt of schema version 3
// (commit 241bf0a: JSON link records); testdata/mkv3/main.go.txt made it
// (see there): 119 links l000..l119 but l050 that between them use every
// field of a link, with clicks. testdata/v3.links.json is every link as
// that version's FindLinkByID returned it.
const (
	v3Fixture = "testdata/v3.db"
	v3Links   = "testdata/v3.links.json"
)

// wantVersion3File fails unless the file at path is what version 3 wrote
// (every link record JSON), and returns its dump.
func wantVersion3File(t *testing.T, path string) fileDump {
	t.Helper()
	d := dumpFixture(t, path, "3")
	if n := len(d[string(bucketLinks)]); n != 119 {
		t.Fatalf("fixture has %d links, want 119", n)
	}
	for k, v := range d[string(bucketLinks)] {
		if v == "" || v[0] != '{' {
			t.Fatalf("fixture link %x is not JSON: %x", k, v)
		}
	}
	return d
}

// TestUpgradeVersion3File opens a file written by linkbolt of schema
// version 3 (see v3Fixture) with today's code, once in one go and once
// after an upgrade killed after its first transaction, and checks: every
// link record is rewritten in the binary form and reads as the record it
// was; every other bucket is byte for byte what it was; every link reads
// (by ID, by alias, in the list, in a search) exactly as the old code
// returned it, every field of it; a restart rewrites nothing; a link
// updated after the upgrade keeps its other fields; and the file passes
// the index, click and bolt checks.
func TestUpgradeVersion3File(t *testing.T) {
	raw, err := os.ReadFile(v3Links)
	if err != nil {
		t.Fatal(err)
	}
	var want []*link.Link
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	for _, interrupted := range []bool{false, true} {
		mustRun(t, fmt.Sprintf("interrupted=%v", interrupted), func(t *testing.T) {
			path := copyFixture(t, v3Fixture)
			before := wantVersion3File(t, path)
			if interrupted {
				killedLinkUpgrade(t, path)
			}
			var upgraded fileDump
			for round := range 2 {
				upgraded = checkUpgradedV3(t, path, before, upgraded, want, round)
			}
		})
	}
}

// killedLinkUpgrade does what Open does to a version 3 file up to the
// commit of the link records' first chunk of 40, and stops there, as a
// process killed right after that commit would.
func killedLinkUpgrade(t *testing.T, path string) {
	t.Helper()
	bdb := openSchemaOnly(t, path)
	if n, damaged, done, err := upgradeLinkChunk(bdb, 40); n != 40 || damaged != nil || done || err != nil {
		t.Fatalf("first chunk: %d rewritten, damaged %v, done %v, %v", n, damaged, done, err)
	}
	d := dumpFile(t, bdb)
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	if v := d["meta"][string(metaSchemaVersion)]; v != strconv.Itoa(SchemaVersion) {
		t.Fatalf("half-upgraded file says schema version %q, want %d (older linkbolt must refuse it)", v, SchemaVersion)
	}
	binary := 0
	for _, v := range d[string(bucketLinks)] {
		if v[0] == linkCodecBinary {
			binary++
		}
	}
	if binary != 40 || d["meta"][string(metaLinkCodecFrom)] == "" || d["meta"][string(metaLinkCodec)] != "" {
		t.Fatalf("after the first chunk: %d binary records, mark %x, done %q; want 40, a mark, not done",
			binary, d["meta"][string(metaLinkCodecFrom)], d["meta"][string(metaLinkCodec)])
	}
}

// checkUpgradedV3 opens the file and checks it (see TestUpgradeVersion3File);
// it returns the file's dump, which the next round compares with.
func checkUpgradedV3(t *testing.T, path string, before, last fileDump, want []*link.Link, round int) fileDump {
	ctx := context.Background()
	db := NewDB(path)
	db.Now = func() time.Time { return time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC) }
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	links := NewLinkService(db)
	after := dumpFile(t, db.db)

	mustRun(t, fmt.Sprintf("round %d: records rewritten, nothing else changed", round), func(t *testing.T) {
		if round > 0 {
			if !reflect.DeepEqual(after, last) {
				t.Fatal("a restart after the upgrade changed the file")
			}
			return
		}
		for name, keys := range before {
			for k, v := range keys {
				switch {
				case name == string(bucketMeta) && k == string(metaSchemaVersion):
					if got := after[name][k]; got != strconv.Itoa(SchemaVersion) {
						t.Errorf("schema version %q, want %d", got, SchemaVersion)
					}
				case name == string(bucketLinks):
					wantSameLink(t, k, after[name][k], v)
				default:
					if got, ok := after[name][k]; !ok || got != v {
						t.Errorf("bucket %s key %x: %x (%v), want %x", name, k, got, ok, v)
					}
				}
			}
			n := len(keys)
			if name == string(bucketMeta) {
				if after[name][string(metaLinkCodec)] == "" || after[name][string(metaLinkCodecFrom)] != "" {
					t.Error("the upgrade is not marked done, or its mark of progress is left")
				}
				n++
			}
			if len(after[name]) != n {
				t.Errorf("bucket %s: %d keys, want %d", name, len(after[name]), n)
			}
		}
	})

	mustRun(t, fmt.Sprintf("round %d: every link reads as version 3 returned it", round), func(t *testing.T) {
		listed := map[string]*link.Link{}
		for page := 1; ; page++ {
			p, err := links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: want[0].WorkspaceID, Page: page, Limit: 50, Archived: link.ArchivedAll})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range p.Links {
				listed[l.ID] = l
			}
			if len(p.Links) < 50 {
				break
			}
		}
		if len(listed) != len(want) {
			t.Errorf("%d links listed, want %d", len(listed), len(want))
		}
		for _, w := range want {
			if round > 0 && w.Alias == "l001" {
				w = upgradedUpdate(w)
			}
			got, err := links.FindLinkByID(ctx, w.WorkspaceID, w.ID)
			if err != nil {
				t.Fatalf("link %s: %v", w.Alias, err)
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("link %s by ID:\n%+v\nwant\n%+v", w.Alias, got, w)
			}
			if !reflect.DeepEqual(listed[w.ID], w) {
				t.Errorf("link %s listed:\n%+v\nwant\n%+v", w.Alias, listed[w.ID], w)
			}
			// A redirect's link has no clicks and takes the campaign's
			// UTM source where it has none.
			r := *w
			r.Clicks = 0
			if r.CampaignID != "" && r.UTMSource == "" {
				r.UTMSource = "news"
			}
			got, err = links.FindLinkByAlias(ctx, w.Domain, w.Alias)
			if err != nil || !reflect.DeepEqual(got, &r) {
				t.Errorf("link %s by alias: %+v, %v\nwant\n%+v", w.Alias, got, err, r)
			}
		}
		p, err := links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: want[0].WorkspaceID, Search: "ÜNÏ", Archived: link.ArchivedAll})
		if err != nil || p.Total != 10 {
			t.Errorf("search by a non-ASCII tag: %d links, %v; want 10", p.Total, err)
		}
		p, err = links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: want[0].WorkspaceID, Archived: link.ArchivedOnly})
		if err != nil || p.Total != 10 {
			t.Errorf("archived links: %d, %v; want 10", p.Total, err)
		}
	})

	if round == 0 {
		mustRun(t, "a link updated after the upgrade keeps its other fields", func(t *testing.T) {
			var w *link.Link
			for _, l := range want {
				if l.Alias == "l001" {
					w = l
				}
			}
			dest := "https://example.com/moved"
			got, err := links.UpdateLink(ctx, w.WorkspaceID, w.ID, link.LinkUpdate{DestinationURL: &dest}, nil)
			if wantL := upgradedUpdate(w); err != nil || !reflect.DeepEqual(got, wantL) {
				t.Fatalf("update: %+v, %v\nwant\n%+v", got, err, wantL)
			}
		})
	}

	mustRun(t, fmt.Sprintf("round %d: indexes and clicks check clean", round), func(t *testing.T) {
		wantIndexesAndClicks(t, db)
	})
	after = dumpFile(t, db.db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := CheckFile(path); err != nil || !r.OK() {
		t.Fatalf("check file: %+v, %v", r, err)
	}
	return after
}

// upgradedUpdate is link l001 of the fixture after the update of
// TestUpgradeVersion3File.
func upgradedUpdate(w *link.Link) *link.Link {
	l := *w
	l.DestinationURL = "https://example.com/moved"
	l.UpdatedAt = time.Date(2026, 11, 23, 13, 0, 0, 0, time.UTC)
	return &l
}

// TestUpgradeLinkRecordsCount checks the upgrade's count of rewritten
// records, which its log line reports, also when a chunk both rewrites
// records and reaches the end, and that a second run rewrites nothing.
func TestUpgradeLinkRecordsCount(t *testing.T) {
	for _, chunk := range []int{50, 119, 500} {
		path := copyFixture(t, v3Fixture)
		bdb := openSchemaOnly(t, path)
		was := linkUpgradeChunk
		linkUpgradeChunk = chunk
		n, err := upgradeLinkRecords(bdb, slog.New(slog.DiscardHandler))
		again, err2 := upgradeLinkRecords(bdb, slog.New(slog.DiscardHandler))
		linkUpgradeChunk = was
		if n != 119 || err != nil || again != 0 || err2 != nil {
			t.Errorf("chunks of %d: %d rewritten (%v), then %d (%v); want 119, then 0", chunk, n, err, again, err2)
		}
		if err := bdb.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUpgradeVersion3FileDamagedRecord checks the upgrade of a file one
// of whose JSON link records does not decode: the server starts as
// version 3 did on that file, the damaged record is left byte for byte
// as it was (reading that link is an error, as it was) and named in a
// warning, and every other record is rewritten and reads right.
func TestUpgradeVersion3FileDamagedRecord(t *testing.T) {
	path := copyFixture(t, v3Fixture)
	before := wantVersion3File(t, path)
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var damagedKey []byte
	damagedRec := []byte(`{"ws":1,"alias":"l0`)
	if err := bdb.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLinks)
		k, _ := b.Cursor().First()
		k, _ = b.Cursor().Seek(itob(btoi(k) + 7))
		damagedKey = cloneBytes(k)
		return b.Put(damagedKey, damagedRec)
	}); err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	db := NewDB(path)
	db.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	if err := db.Open(); err != nil {
		t.Fatalf("open: %v", err)
	}
	defer db.Close()
	if !strings.Contains(logged.String(), fmt.Sprintf("%x", damagedKey)) {
		t.Errorf("the log does not name the damaged record %x:\n%s", damagedKey, logged.String())
	}
	err = db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLinks).ForEach(func(k, v []byte) error {
			if string(k) == string(damagedKey) {
				if string(v) != string(damagedRec) {
					t.Errorf("damaged record %x became %x", k, v)
				}
				return nil
			}
			wantSameLink(t, string(k), string(v), before[string(bucketLinks)][string(k)])
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := findLinkView(db, btoi(damagedKey)); err == nil {
		t.Error("the damaged link reads without an error")
	}
}

func findLinkView(db *DB, id uint64) (*linkRecord, error) {
	var rec *linkRecord
	err := db.db.View(func(tx *bolt.Tx) (err error) {
		rec, err = findLink(tx, 0, id)
		return err
	})
	return rec, err
}
