package storage

// The bolt helpers every service shares: keys (concatenated composite
// keys, prefix bounds; the 8-byte IDs in them come from codec.go), records
// (JSON in and out), counters, index walks, and the memory handed to bolt.

import (
	"bytes"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// concat returns a new slice holding the parts one after the other; bolt
// keeps the slices given to Put until commit, so keys are never reused.
func concat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// nextID returns the bucket's next sequence.
func nextID(b *bolt.Bucket) (uint64, error) {
	seq, err := b.NextSequence()
	if err != nil {
		return 0, fmt.Errorf("next sequence: %w", err)
	}
	return seq, nil
}

// putJSON encodes v and stores it under key.
func putJSON(b *bolt.Bucket, key []byte, v any) error {
	buf, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	if err := b.Put(key, buf); err != nil {
		return fmt.Errorf("put record: %w", err)
	}
	return nil
}

// getJSON decodes the record under key into v; it reports false when there
// is none.
func getJSON(b *bolt.Bucket, key []byte, v any) (bool, error) {
	buf := b.Get(key)
	if buf == nil {
		return false, nil
	}
	if err := json.Unmarshal(buf, v); err != nil {
		return false, fmt.Errorf("decode record %x: %w", key, err)
	}
	return true, nil
}

// counter returns the uint64 counter under key, 0 when absent.
func counter(b *bolt.Bucket, key []byte) (uint64, error) {
	v := b.Get(key)
	if v == nil {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("counter %x: %d bytes, want 8", key, len(v))
	}
	return btoi(v), nil
}

// addCounter adds delta to the counter under key and deletes it at zero.
// Going below zero means an index and its counter disagree: an error.
func addCounter(b *bolt.Bucket, key []byte, delta int64) error {
	n, err := counter(b, key)
	if err != nil {
		return err
	}
	if delta < 0 && uint64(-delta) > n {
		return fmt.Errorf("counter %x would go below zero (%d%+d)", key, n, delta)
	}
	n += uint64(delta)
	if n == 0 {
		return b.Delete(key)
	}
	return b.Put(key, itob(n))
}

// prefixEnd returns the smallest key greater than every key starting with
// prefix, or nil if there is none.
func prefixEnd(prefix []byte) []byte {
	end := append([]byte{}, prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// decodeJSON decodes a record read from a bucket.
func decodeJSON(buf []byte, v any) error {
	if err := json.Unmarshal(buf, v); err != nil {
		return fmt.Errorf("decode record: %w", err)
	}
	return nil
}

// lastWithPrefix positions c on the last key starting with prefix, or
// before where it would be; it returns that key (which the caller checks
// for the prefix), or nil.
func lastWithPrefix(c *bolt.Cursor, prefix []byte) []byte {
	end := prefixEnd(prefix)
	var k []byte
	if end == nil {
		k, _ = c.Last()
	} else if k, _ = c.Seek(end); k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	return k
}

// reverseIndex walks the keys of a bucket that start with prefix, last
// first, and yields their last 8 bytes (an ID).
type reverseIndex struct {
	c      *bolt.Cursor
	prefix []byte
	k      []byte
}

func newReverseIndex(b *bolt.Bucket, prefix []byte) *reverseIndex {
	it := &reverseIndex{}
	it.start(b, prefix)
	return it
}

// start sets it to walk the keys of b that start with prefix, from the last.
func (it *reverseIndex) start(b *bolt.Bucket, prefix []byte) {
	it.c, it.prefix = b.Cursor(), prefix
	it.set(lastWithPrefix(it.c, prefix))
}

func (it *reverseIndex) set(k []byte) {
	if k != nil && bytes.HasPrefix(k, it.prefix) && len(k) >= len(it.prefix)+8 {
		it.k = k
	} else {
		it.k = nil
	}
}

// peek returns the current ID without moving, nil at the end.
func (it *reverseIndex) peek() []byte {
	if it.k == nil {
		return nil
	}
	return it.k[len(it.k)-8:]
}

// next returns the current ID and moves to the one before it.
func (it *reverseIndex) next() []byte {
	id := it.peek()
	if id != nil {
		k, _ := it.c.Prev()
		it.set(k)
	}
	return id
}

// deletePrefix deletes every key of b that starts with prefix.
func deletePrefix(b *bolt.Bucket, prefix []byte) error {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, cloneBytes(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return fmt.Errorf("delete %x: %w", k, err)
		}
	}
	return nil
}

// cloneBytes copies b out of a transaction's memory; nil stays nil.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// arena hands out byte slices cut from big blocks.
type arena struct{ block []byte }

const arenaBlock = 1 << 20

// alloc returns n bytes.
func (a *arena) alloc(n int) []byte {
	if cap(a.block)-len(a.block) < n {
		if n > arenaBlock/4 {
			return make([]byte, n)
		}
		a.block = make([]byte, 0, arenaBlock)
	}
	m := len(a.block)
	a.block = a.block[:m+n]
	return a.block[m : m+n : m+n]
}

// copy returns a copy of b.
func (a *arena) copy(b []byte) []byte {
	c := a.alloc(len(b))
	copy(c, b)
	return c
}
