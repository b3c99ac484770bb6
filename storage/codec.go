package storage

// The binary helpers every record codec and key builder shares: fixed-width
// big-endian integers (IDs as 8-byte keys, hours and days as 4) and
// length-prefixed strings. The codecs of each record (links, raw clicks,
// period blobs, click backlog, deliveries) build on them and live beside
// the service that owns the record.

import "encoding/binary"

// itob returns v as an 8-byte big-endian key.
func itob(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func btoi(b []byte) uint64 { return binary.BigEndian.Uint64(b) }

// be32 returns v as 4 bytes big-endian: the hours and days of click keys.
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(make([]byte, 0, 4), v) }

// appendLenString appends s with its length before it, a uvarint: how
// links, raw clicks, visitor records, click backlog records and
// deliveries hold their strings.
func appendLenString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// readLenBytes reads what appendLenString wrote at the start of v, and
// returns the rest of v; ok is false for a length past v's end.
func readLenBytes(v []byte) (b, rest []byte, ok bool) {
	l, n := binary.Uvarint(v)
	if n <= 0 || l > uint64(len(v)-n) {
		return nil, nil, false
	}
	return v[n : n+int(l)], v[n+int(l):], true
}
