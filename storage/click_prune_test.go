package storage

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// TestPruneClicks_LateClickBetweenHostChunks prunes a day's referrer host
// dictionary in transactions of 5 keys and, between the first two, records
// clicks arriving late for that day: a host already in the dictionary
// (its id→host entry already deleted, its host→id entry not yet) and a
// new one. Before, the first click named an id whose host was gone and
// the second got an id the rest of the prune deleted, so the export failed
// with "no host"; now clicks of a day being pruned keep their host inline.
func TestPruneClicks_LateClickBetweenHostChunks(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	db := NewDB(filepath.Join(t.TempDir(), "linkbolt.db"))
	db.Now = func() time.Time { return now }
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.CheckIndexes(); err != nil {
			t.Error(err)
		}
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := NewUserService(db).Bootstrap(ctx, &link.User{Email: "a@example.com", PasswordHash: []byte("h")}, ws); err != nil {
		t.Fatal(err)
	}
	l := &link.Link{WorkspaceID: ws.ID, Alias: "a", DestinationURL: "https://example.com/"}
	if err := NewLinkService(db).CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	cs := NewClickService(db)
	record := func(clicks ...link.Click) {
		t.Helper()
		for i := range clicks {
			clicks[i].LinkID, clicks[i].WorkspaceID = l.ID, ws.ID
		}
		if skipped, err := cs.RecordClicks(ctx, clicks); err != nil || skipped != 0 {
			t.Fatalf("record clicks: %d skipped, %v", skipped, err)
		}
	}

	// Six hosts on the old day: 12 dictionary keys, the six id→host first.
	day := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	var clicks []link.Click
	for i, h := range []string{"a.example", "b.example", "c.example", "d.example", "e.example", "f.example"} {
		clicks = append(clicks, link.Click{Time: day.Add(time.Duration(i) * time.Minute), Referrer: h})
	}
	record(clicks...)

	late := []link.Click{
		{Time: day.Add(time.Hour), Referrer: "a.example"},
		{Time: day.Add(time.Hour + time.Second), Referrer: "new.example"},
		{Time: day.Add(time.Hour + 2*time.Second), Referrer: "f.example"},
	}
	cs.pruneChunk = 5
	hostChunks := 0
	cs.pruned = func(bucket []byte) {
		if !bytes.Equal(bucket, bucketClicksHosts) {
			return
		}
		hostChunks++
		if hostChunks == 1 {
			record(slices.Clone(late)...)
		}
	}
	n, err := cs.PruneClicks(ctx, time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Fatalf("pruned %d raw clicks, want 6", n)
	}
	if hostChunks < 3 {
		t.Fatalf("the dictionary was deleted in %d transactions, want 3 or more", hostChunks)
	}

	// The late clicks read back with their own hosts.
	var got []string
	err = cs.ExportClicks(ctx, ws.ID, day, day.Add(24*time.Hour), func(c *link.Click) error {
		got = append(got, c.Referrer)
		return nil
	})
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	if want := []string{"a.example", "new.example", "f.example"}; !slices.Equal(got, want) {
		t.Fatalf("late referrers = %q, want %q", got, want)
	}
	// Nothing of the pruned day's dictionary is left.
	err = db.db.View(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketClicksHosts).Cursor().First()
		if k != nil {
			t.Errorf("clicks.hosts still holds %x", k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Days from the cut on keep using the dictionary.
	recent := time.Date(2025, 3, 9, 10, 0, 0, 0, time.UTC)
	record(link.Click{Time: recent, Referrer: "a.example"}, link.Click{Time: recent.Add(time.Second), Referrer: "a.example"})
	entries := 0
	err = db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketClicksHosts).ForEach(func(k, v []byte) error {
			entries++
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if entries != 2 {
		t.Fatalf("clicks.hosts holds %d keys for one recent host, want 2", entries)
	}
	got = got[:0]
	err = cs.ExportClicks(ctx, ws.ID, recent, recent.Add(time.Hour), func(c *link.Click) error {
		got = append(got, c.Referrer)
		return nil
	})
	if err != nil || !slices.Equal(got, []string{"a.example", "a.example"}) {
		t.Fatalf("recent referrers = %q, %v", got, err)
	}
}
