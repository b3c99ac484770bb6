package storage

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// searchSum sums a keyed hash of every (workspace, trigram, link) entry of
// the search index: two sets of entries with the same count and sum are
// the same set but with negligible chance, so the index is compared with
// the links in two passes and constant memory, whatever their number.
type searchSum struct {
	seed    maphash.Seed
	entries map[uint64]*searchTally // by workspace
}

type searchTally struct{ n, sum uint64 }

func (s *searchSum) add(wid uint64, gram string, id uint64) {
	var b [8 + 3 + 8]byte
	binary.BigEndian.PutUint64(b[:], wid)
	copy(b[8:], gram)
	binary.BigEndian.PutUint64(b[11:], id)
	t := s.entries[wid]
	if t == nil {
		t = &searchTally{}
		s.entries[wid] = t
	}
	t.n++
	t.sum += maphash.Bytes(s.seed, b[:])
}

// checkSearchIndex checks that links.search holds exactly the entries the
// link records give (see searchFields), workspace by workspace, and that
// every value decodes. A file whose index is not built yet (meta
// search_index_v1 missing: it is built when a server next opens the file)
// has nothing to check.
func checkSearchIndex(tx *bolt.Tx) []error {
	if tx.Bucket(bucketMeta).Get(metaSearchIndex) == nil {
		return nil
	}
	var errs []error
	seed := maphash.MakeSeed()
	want := &searchSum{seed: seed, entries: map[uint64]*searchTally{}}
	got := &searchSum{seed: seed, entries: map[uint64]*searchTally{}}
	err := tx.Bucket(bucketLinks).ForEach(func(k, v []byte) error {
		var rec linkRecord
		if err := decodeLink(v, &rec); err != nil {
			return fmt.Errorf("link %x: %w", k, err)
		}
		for _, g := range trigrams(searchFields(&rec)...) {
			want.add(rec.Workspace, g, btoi(k))
		}
		return nil
	})
	if err != nil {
		return []error{err}
	}
	var set searchSet
	_ = tx.Bucket(bucketLinksSearch).ForEach(func(k, v []byte) error {
		if len(k) != searchKeyLen {
			errs = append(errs, fmt.Errorf("links.search %x: malformed key", k))
			return nil
		}
		if err := decodeSearchSet(v, &set); err != nil {
			errs = append(errs, fmt.Errorf("%w at %x", err, k))
			return nil
		}
		if set.count() == 0 {
			errs = append(errs, fmt.Errorf("links.search %x: empty set", k))
		}
		wid, block, gram := searchKeyParts(k)
		for i, w := range set {
			for ; w != 0; w &= w - 1 {
				low := uint64(i*64 + bits.TrailingZeros64(w))
				got.add(wid, gram, uint64(block)<<searchBlockBits|low)
			}
		}
		return nil
	})
	wids := make([]uint64, 0, len(want.entries))
	for wid := range want.entries {
		wids = append(wids, wid)
	}
	for wid := range got.entries {
		if want.entries[wid] == nil {
			wids = append(wids, wid)
		}
	}
	slices.Sort(wids)
	for _, wid := range wids {
		w, g := want.entries[wid], got.entries[wid]
		if w == nil {
			w = &searchTally{}
		}
		if g == nil {
			g = &searchTally{}
		}
		if *w != *g {
			errs = append(errs, fmt.Errorf("links.search: workspace %d: the index holds %d entries, the links give %d, and they differ", wid, g.n, w.n))
		}
	}
	return errs
}
