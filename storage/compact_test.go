package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// TestCompactFile compacts a real data file with deleted links and
// pruned clicks: the copy holds every bucket's keys, values and sequence
// as they were, is smaller, fills the pages of clicks.raw above 85 %, and
// opens and checks clean. CompactFile refuses an existing output, and a
// file a process holds, and leaves no output behind then.
func TestCompactFile(t *testing.T) {
	t.Parallel() // a second of it is the wait for a held file's lock, which other tests can use
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "linkbolt.db")
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	db := NewDB(path)
	db.Now = func() time.Time { return now }
	db.BatchDelay = time.Nanosecond // 600 creations one after another: none waits for company
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := NewUserService(db).Bootstrap(ctx, &link.User{Email: "a@example.com", PasswordHash: []byte("h")}, ws); err != nil {
		t.Fatal(err)
	}
	links := NewLinkService(db)
	var ids []string
	for i := range 600 {
		l := &link.Link{WorkspaceID: ws.ID, Alias: fmt.Sprintf("c%03d", i), DestinationURL: fmt.Sprintf("https://example.com/%d", i)}
		if err := links.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	clicks := NewClickService(db)
	for day := range 3 {
		batch := make([]link.Click, 3000)
		for i := range batch {
			batch[i] = link.Click{WorkspaceID: ws.ID, LinkID: ids[(i*7+day)%600], Time: now.Add(time.Duration(day-3)*24*time.Hour + time.Duration(i)*time.Second),
				Referrer: "https://t.co/x", Country: "DE", Visitor: uint64(i % 50)}
		}
		if skipped, err := clicks.RecordClicks(ctx, batch); skipped != 0 || err != nil {
			t.Fatalf("record: %d skipped, %v", skipped, err)
		}
	}
	for _, id := range ids[:200] {
		if err := links.DeleteLink(ctx, ws.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := clicks.PruneClicks(ctx, now.Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}

	mustRun(t, "a file a process holds is refused", func(t *testing.T) {
		out := filepath.Join(dir, "held.db")
		if _, err := CompactFile(path, out); !errors.Is(err, ErrLocked) {
			t.Fatalf("compact of a held file: %v, want ErrLocked", err)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the refused compaction left %s behind: %v", out, err)
		}
	})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "compact.db")
	mustRun(t, "the copy holds every key and value", func(t *testing.T) {
		r, err := CompactFile(path, out)
		if err != nil {
			t.Fatal(err)
		}
		if r.ToSize >= r.FromSize || r.Keys == 0 || r.Buckets != len(allBuckets) {
			t.Fatalf("report %+v: want a smaller copy of every bucket", r)
		}
		src, dst := openRO(t, path), openRO(t, out)
		defer src.Close()
		defer dst.Close()
		if a, b := dumpFile(t, src), dumpFile(t, dst); !reflect.DeepEqual(a, b) {
			t.Fatal("the compacted file's buckets differ from the source's")
		}
		err = dst.View(func(tx *bolt.Tx) error {
			return src.View(func(stx *bolt.Tx) error {
				return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
					if b.Sequence() != stx.Bucket(name).Sequence() {
						t.Errorf("bucket %s: sequence %d, want %d", name, b.Sequence(), stx.Bucket(name).Sequence())
					}
					return nil
				})
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		dst.View(func(tx *bolt.Tx) error {
			st := tx.Bucket(bucketClicksRaw).Stats()
			if fill := float64(st.LeafInuse) / float64(st.LeafAlloc); st.LeafPageN < 10 || fill < 0.85 {
				t.Errorf("clicks.raw: %d leaf pages filled %.2f, want > 0.85", st.LeafPageN, fill)
			}
			return nil
		})
	})
	mustRun(t, "the copy opens and checks clean", func(t *testing.T) {
		db := NewDB(out)
		db.Now = func() time.Time { return now }
		if err := db.Open(); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		l, err := NewLinkService(db).FindLinkByID(ctx, ws.ID, ids[599])
		if err != nil || l.Clicks != 15 {
			t.Fatalf("link %s: %+v, %v; want 15 clicks", ids[599], l, err)
		}
		if err := db.CheckIndexes(); err != nil {
			t.Fatal(err)
		}
		db.db.View(func(tx *bolt.Tx) error {
			if errs := checkClicks(tx); len(errs) > 0 {
				t.Fatal(errs)
			}
			return nil
		})
	})
	mustRun(t, "an existing output is refused and kept", func(t *testing.T) {
		before, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := CompactFile(path, out); err == nil {
			t.Fatal("compact overwrote an existing file")
		}
		if after, err := os.ReadFile(out); err != nil || string(after) != string(before) {
			t.Fatalf("the existing output changed (%v)", err)
		}
	})
}

func openRO(t *testing.T, path string) *bolt.DB {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return bdb
}
