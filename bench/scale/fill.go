package main

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketFill is how full the pages of one top-level bucket (with its
// nested buckets) are.
type bucketFill struct {
	name         string
	keys         int
	alloc, inuse int64
}

func (b bucketFill) percent() float64 {
	if b.alloc == 0 {
		return 0
	}
	return 100 * float64(b.inuse) / float64(b.alloc)
}

// fillReport is the page fill of every bucket and the file's free pages.
type fillReport struct {
	buckets  []bucketFill // largest first
	free     int64        // bytes on the freelist
	pageSize int
	took     time.Duration
}

// pageFill reads the data file (no server holding it) read-only and
// returns bbolt's page statistics per top-level bucket: the bytes of the
// pages allocated to it and the bytes those pages use.
func pageFill(path string) (*fillReport, error) {
	t := time.Now()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("page fill: %w", err)
	}
	defer db.Close()
	rep := &fillReport{pageSize: db.Info().PageSize}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			s := b.Stats()
			rep.buckets = append(rep.buckets, bucketFill{
				name:  string(name),
				keys:  s.KeyN,
				alloc: int64(s.BranchAlloc + s.LeafAlloc),
				inuse: int64(s.BranchInuse + s.LeafInuse),
			})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("page fill: %w", err)
	}
	st := db.Stats()
	rep.free = int64(st.FreePageN+st.PendingPageN) * int64(rep.pageSize)
	slices.SortFunc(rep.buckets, func(x, y bucketFill) int { return cmp.Compare(y.alloc, x.alloc) })
	rep.took = time.Since(t)
	logf("page fill read in %.1f s", rep.took.Seconds())
	return rep, nil
}
