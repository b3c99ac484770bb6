package storage

import (
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Per-link click totals (schema version 3). A link's total is a counter
// in a block of totalsBlock neighbouring link IDs:
//
//	clicks.totals  link id / 120 (8) → 120 × clicks (8), slot link id % 120
//
// Link IDs are the links bucket's sequence, so a million links fill about
// 8,300 blocks of 960 bytes, four to a 4 KB page (120 is the most that
// fits four: 4 × (16 + 8 + 960) ≤ 4096 − 16): 8.5 MB on ~2,100 pages. A
// flush of clicks spread uniformly over the links rewrites at most those
// pages, where one key per link (schema version 2's clicks.link) made it
// rewrite a page per clicked link, out of ~16,000 half-full ones. Values
// are rewritten in place at the same size, so the bucket's pages are
// filled up. A zero slot is a link without clicks; a block of zeros is
// deleted.
const totalsBlock = 120

// totalsValueSize is the size of a clicks.totals value.
const totalsValueSize = totalsBlock * 8

func totalsKey(lid uint64) []byte { return itob(lid / totalsBlock) }

// totalsValue returns the clicks.totals block of key k, nil when there is
// none, and an error for a value of the wrong size.
func totalsValue(b *bolt.Bucket, k []byte) ([]byte, error) {
	v := b.Get(k)
	if v != nil && len(v) != totalsValueSize {
		return nil, fmt.Errorf("click totals %x: %d bytes, want %d", k, len(v), totalsValueSize)
	}
	return v, nil
}

// linkClicks returns the clicks recorded for link lid.
func linkClicks(tx *bolt.Tx, lid uint64) (uint64, error) {
	v, err := totalsValue(tx.Bucket(bucketClicksTotals), totalsKey(lid))
	if v == nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(v[lid%totalsBlock*8:]), nil
}

// linkTotal is a link's clicks to add to (or set in) its block.
type linkTotal struct{ lid, n uint64 }

// writeLinkTotals applies ts, sorted by link ID, block by block: set
// overwrites each slot with n (the upgrade from clicks.link), otherwise n
// is added. mem holds the values until the commit.
func writeLinkTotals(tx *bolt.Tx, ts []linkTotal, set bool, mem *arena) error {
	b := tx.Bucket(bucketClicksTotals)
	b.FillPercent = 1
	for i := 0; i < len(ts); {
		blk := ts[i].lid / totalsBlock
		k := mem.alloc(8)
		binary.BigEndian.PutUint64(k, blk)
		v := mem.alloc(totalsValueSize)
		old, err := totalsValue(b, k)
		if err != nil {
			return err
		}
		if old != nil {
			copy(v, old)
		} else {
			clear(v)
		}
		for ; i < len(ts) && ts[i].lid/totalsBlock == blk; i++ {
			slot := v[ts[i].lid%totalsBlock*8:][:8]
			n := ts[i].n
			if !set {
				n += binary.BigEndian.Uint64(slot)
			}
			binary.BigEndian.PutUint64(slot, n)
		}
		if err := b.Put(k, v); err != nil {
			return fmt.Errorf("put click totals: %w", err)
		}
	}
	return nil
}

// deleteLinkTotal clears link lid's slot, and deletes its block once the
// block is all zeros.
func deleteLinkTotal(tx *bolt.Tx, lid uint64) error {
	b := tx.Bucket(bucketClicksTotals)
	k := totalsKey(lid)
	old, err := totalsValue(b, k)
	if old == nil {
		return err
	}
	v := slices.Clone(old)
	clear(v[lid%totalsBlock*8:][:8])
	if slices.ContainsFunc(v, func(c byte) bool { return c != 0 }) {
		return b.Put(k, v)
	}
	return b.Delete(k)
}

// upgradeChunk is the most version 2 counters the upgrade moves in one
// transaction: the upgrade's memory is bounded by it, not by the file.
const upgradeChunk = 50_000

// moveLinkCounters moves the per-link counters of a schema version 2
// file (clicks.link: link id → clicks(8)) into clicks.totals, upgradeChunk
// of them a transaction, and drops clicks.link once it is empty. Each
// transaction puts a chunk into its blocks and deletes it from
// clicks.link: a process killed midway leaves every counter in exactly
// one of the two buckets, and the next start carries on where it stopped
// (the schema version already says 3, so an older linkbolt refuses the
// half-moved file). Slots are set, not added, so a block shared by two
// chunks comes out right. It returns the number of counters moved.
func moveLinkCounters(bdb *bolt.DB) (int, error) {
	var pending bool
	if err := bdb.View(func(tx *bolt.Tx) error {
		pending = tx.Bucket(bucketClicksLinkV2) != nil
		return nil
	}); err != nil || !pending {
		return 0, err // an upgraded or new file: no write at start
	}
	moved := 0
	for {
		n, done, err := moveLinkCounterChunk(bdb, upgradeChunk)
		moved += n
		if err != nil {
			return moved, fmt.Errorf("upgrade click counters: %w", err)
		}
		if done {
			return moved, nil
		}
	}
}

// moveLinkCounterChunk moves at most chunk counters of clicks.link in one
// transaction and reports whether clicks.link is gone.
func moveLinkCounterChunk(bdb *bolt.DB, chunk int) (moved int, done bool, err error) {
	err = bdb.Update(func(tx *bolt.Tx) error {
		old := tx.Bucket(bucketClicksLinkV2)
		if old == nil {
			done = true
			return nil
		}
		var ts []linkTotal
		c := old.Cursor()
		for k, v := c.First(); k != nil && len(ts) < chunk; k, v = c.Next() {
			if len(k) != 8 || len(v) != 8 {
				return fmt.Errorf("clicks.link %x: malformed counter", k)
			}
			ts = append(ts, linkTotal{btoi(k), btoi(v)})
		}
		if len(ts) == 0 {
			done = true
			return tx.DeleteBucket(bucketClicksLinkV2)
		}
		var mem arena
		if err := writeLinkTotals(tx, ts, true, &mem); err != nil {
			return err
		}
		for _, t := range ts {
			if err := old.Delete(itob(t.lid)); err != nil {
				return fmt.Errorf("clicks.link: %w", err)
			}
		}
		moved = len(ts)
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return moved, done, nil
}
