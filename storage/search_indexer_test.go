package storage

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestSearchIndexer_Memory: the changes a transaction gathers for the
// search index cost bytes per change, not a set of the whole block per
// key touched: indexing 1,000 links of distinct destinations (as a bulk
// creation does, ~17,000 keys) allocates a few MB, where two 512-byte
// sets a key took 18 MB (and a batch of 20,000 links of the index build
// over 200 MB).
func TestSearchIndexer_Memory(t *testing.T) {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rnd := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = chars[rnd.IntN(len(chars))]
		}
		return string(b)
	}
	recs := make([]linkRecord, 1000)
	for i := range recs {
		recs[i] = linkRecord{Workspace: 1, Alias: word(7), Destination: fmt.Sprintf("https://shop%d.example.com/products/%s?ref=%s", i%50, word(12), word(6))}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var ix searchIndexer
	for i := range recs {
		ix.add(uint64(4096+i), &recs[i])
	}
	runtime.ReadMemStats(&after)
	if len(ix.changes) < 10_000 {
		t.Fatalf("%d keys touched, want the ~17,000 distinct trigrams of the links", len(ix.changes))
	}
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(6<<20); got > limit {
		t.Fatalf("indexing 1,000 links allocated %d bytes for %d keys, want at most %d", got, len(ix.changes), limit)
	}
}

// TestSearchIndexer_Order: changes to one link in one transaction apply in
// the order made, so that an update (remove the old record's trigrams, add
// the new one's) keeps the trigrams both hold and a link created and
// deleted in one transaction leaves nothing.
func TestSearchIndexer_Order(t *testing.T) {
	db := NewDB(t.TempDir() + "/linkbolt.db")
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old := &linkRecord{Workspace: 1, Alias: "abcd", Destination: "https://x.example/"}
	upd := &linkRecord{Workspace: 1, Alias: "bcde", Destination: "https://x.example/"}
	gone := &linkRecord{Workspace: 1, Alias: "zzzz", Destination: "https://x.example/"}
	err := db.db.Update(func(tx *bolt.Tx) error {
		var ix searchIndexer
		ix.add(5, old)
		if err := ix.write(tx); err != nil {
			return err
		}
		ix.remove(5, old)
		ix.add(5, upd)
		ix.add(6, gone)
		ix.remove(6, gone)
		return ix.write(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.db.View(func(tx *bolt.Tx) error {
		for gram, want := range map[string]bool{"abc": false, "bcd": true, "cde": true, "zzz": false, "x.e": true} {
			var ids []uint64
			w := newSearchWalk(tx, 1, []string{gram})
			for {
				id, err := w.next()
				if err != nil {
					return err
				}
				if id == nil {
					break
				}
				ids = append(ids, btoi(id))
			}
			if got := len(ids) == 1 && ids[0] == 5; got != want {
				t.Errorf("trigram %q finds %v, want link 5: %v", gram, ids, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
