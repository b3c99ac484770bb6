package storage

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestSearchIndexer_Memory: the changes a transaction gathers for the
// search index cost 8 bytes a change, not a set of the whole block per
// key touched: indexing 1,000 links of distinct destinations (as a bulk
// creation does, ~60,000 changes to ~17,000 keys) allocates about 1.5
// MB (2.1 MB built with -race), where two 512-byte sets a key took 18 MB
// (and a batch of 20,000 links of the index build over 200 MB).
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
	if len(ix.ws) != 1 || len(ix.ws[0].ops) < 40_000 {
		t.Fatalf("changes gathered: %v, want one workspace's ~60,000", len(ix.ws))
	}
	n := len(ix.ws[0].ops)
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(3<<20); got > limit {
		t.Fatalf("indexing 1,000 links allocated %d bytes for %d changes, want at most %d", got, n, limit)
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

// TestSearchIndexer_Model applies random transactions of creations,
// updates and deletions, several to one link in a transaction, and
// compares every key of links.search with the sets a model holds: the
// sort of write keeps the order of the changes to one link.
func TestSearchIndexer_Model(t *testing.T) {
	db := NewDB(t.TempDir() + "/linkbolt.db")
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rnd := rand.New(rand.NewPCG(3, 4))
	recs := []linkRecord{
		{Alias: "alpha", Destination: "https://a.example/x", Tags: []string{"red"}},
		{Alias: "alpine", Destination: "https://a.example/y"},
		{Alias: "beta", Destination: "https://b.example/x", Tags: []string{"red", "blue"}},
		{Alias: "gamma", Destination: "https://c.example/"},
	}
	indexed := map[[2]uint64]int{} // workspace and link id → index in recs + 1
	for round := range 60 {
		err := db.db.Update(func(tx *bolt.Tx) error {
			var ix searchIndexer
			for range 1 + rnd.IntN(300) {
				// three blocks of two workspaces
				l := [2]uint64{1 + uint64(rnd.IntN(2)), uint64(rnd.IntN(3 * searchBlockSize))}
				for range 1 + rnd.IntN(3) {
					if was := indexed[l]; was != 0 {
						r := recs[was-1]
						r.Workspace = l[0]
						ix.remove(l[1], &r)
						delete(indexed, l)
						if rnd.IntN(2) == 0 {
							continue // deleted
						}
					}
					n := rnd.IntN(len(recs))
					r := recs[n]
					r.Workspace = l[0]
					ix.add(l[1], &r)
					indexed[l] = n + 1
				}
			}
			return ix.write(tx)
		})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]searchSet{}
		for l, n := range indexed {
			for _, g := range trigrams(searchFields(&recs[n-1])...) {
				k := string(searchKey(l[0], uint32(l[1]>>searchBlockBits), g))
				s := want[k]
				s.add(uint16(l[1] & (searchBlockSize - 1)))
				want[k] = s
			}
		}
		got := map[string]searchSet{}
		err = db.db.View(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLinksSearch).ForEach(func(k, v []byte) error {
				var s searchSet
				if err := decodeSearchSet(v, &s); err != nil {
					return err
				}
				got[string(k)] = s
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d keys, want %d", round, len(got), len(want))
		}
		for k, s := range want {
			if g := got[k]; g != s {
				t.Fatalf("round %d: key %x holds %d links, want %d", round, k, g.count(), s.count())
			}
		}
	}
}

// TestSearchIndexer_IDTooLarge: a link id past what a change packs is an
// error of write, not a wrong key.
func TestSearchIndexer_IDTooLarge(t *testing.T) {
	db := NewDB(t.TempDir() + "/linkbolt.db")
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err := db.db.Update(func(tx *bolt.Tx) error {
		var ix searchIndexer
		ix.add(searchOpMaxID, &linkRecord{Workspace: 1, Alias: "fits"})
		ix.add(searchOpMaxID+1, &linkRecord{Workspace: 1, Alias: "too-large"})
		return ix.write(tx)
	})
	if err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("write = %v, want an error for the id too large", err)
	}
}

// TestSearchIndexer_LastChangeWins: a link's changes in a transaction
// end as the last one made, as its record does, whatever the index held
// before: a link removed where the index lacks it (an index damaged or
// written by an older linkbolt) and added again is indexed, one added
// where the index holds it and then removed is not. Both with a few
// changes and with enough for write to sort them by radix.
func TestSearchIndexer_LastChangeWins(t *testing.T) {
	db := NewDB(t.TempDir() + "/linkbolt.db")
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var long strings.Builder
	for i := range 300 {
		fmt.Fprintf(&long, "%03d", i)
	}
	for _, dest := range []string{"https://a.example/", "https://a.example/" + long.String()} {
		r := &linkRecord{Workspace: 1, Alias: "alpha", Destination: dest}
		key := searchKey(1, 0, "alp")
		indexed := func(low uint16) bool {
			t.Helper()
			var set searchSet
			err := db.db.View(func(tx *bolt.Tx) error {
				v := tx.Bucket(bucketLinksSearch).Get(key)
				if v == nil {
					return nil
				}
				return decodeSearchSet(v, &set)
			})
			if err != nil {
				t.Fatal(err)
			}
			return set[low/64]&(1<<(low%64)) != 0
		}
		change := func(fn func(ix *searchIndexer)) {
			t.Helper()
			if err := db.db.Update(func(tx *bolt.Tx) error {
				var ix searchIndexer
				fn(&ix)
				return ix.write(tx)
			}); err != nil {
				t.Fatal(err)
			}
		}
		change(func(ix *searchIndexer) { ix.add(7, r) })
		change(func(ix *searchIndexer) { ix.remove(5, r); ix.add(5, r) })
		if !indexed(5) {
			t.Errorf("%d bytes: a link removed where not indexed, then added, is not indexed", len(dest))
		}
		change(func(ix *searchIndexer) { ix.add(7, r); ix.remove(7, r) })
		if indexed(7) {
			t.Errorf("%d bytes: a link added where indexed, then removed, is still indexed", len(dest))
		}
		change(func(ix *searchIndexer) { ix.remove(5, r) })
	}
}
