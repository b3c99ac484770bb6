package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// Wire ID prefixes. A wire ID is the prefix and the record's bucket
// sequence in base 36; on disk the sequence is an 8-byte big-endian key so
// that keys sort in creation order.
const (
	prefixWorkspace = "ws_"
	prefixUser      = "usr_"
	prefixKey       = "key_"
	prefixLink      = "lnk_"
	prefixCampaign  = "cmp_"
	prefixEvent     = "evt_"
	prefixQRCode    = "qr_"
)

func formatID(prefix string, seq uint64) string {
	return prefix + strconv.FormatUint(seq, 36)
}

// parseID returns the sequence of a wire ID. Only the canonical form that
// formatID writes is accepted, so one record has exactly one wire ID.
func parseID(prefix, id string) (uint64, bool) {
	if len(id) <= len(prefix) || id[:len(prefix)] != prefix {
		return 0, false
	}
	s := id[len(prefix):]
	if len(s) > 13 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 36, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// itob returns v as an 8-byte big-endian key.
func itob(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func btoi(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

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
