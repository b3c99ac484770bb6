package storage

import (
	"encoding/binary"
	"errors"
)

// A visitor record lists where one visitor clicked in one workspace on one
// UTC day, so each of its scopes counts the visitor once that day:
//
//	flags(1)            bit 0: the visitor's first click of the day was a bot
//	uvarint(n)          n links: uvarint(link id - previous link id), ascending
//	uvarint(m)          m campaigns: uvarint(len) campaign id, ascending
//
// The workspace itself counts the visitor when the record is made.
type visitorRecord struct {
	bot       bool
	links     []uint64
	campaigns []string
}

var errBadVisitor = errors.New("malformed visitor record")

// decode sets r from v, reusing r's slices.
func (r *visitorRecord) decode(v []byte) error {
	r.links, r.campaigns = r.links[:0], r.campaigns[:0]
	if len(v) < 3 || v[0] > 1 {
		return errBadVisitor
	}
	r.bot = v[0] == 1
	v = v[1:]
	n, l := binary.Uvarint(v)
	if l <= 0 || n > uint64(len(v)) {
		return errBadVisitor
	}
	v = v[l:]
	var prev uint64
	for range n {
		d, l := binary.Uvarint(v)
		if l <= 0 || d == 0 {
			return errBadVisitor
		}
		prev += d
		r.links = append(r.links, prev)
		v = v[l:]
	}
	m, l := binary.Uvarint(v)
	if l <= 0 || m > uint64(len(v)) {
		return errBadVisitor
	}
	v = v[l:]
	for range m {
		b, rest, ok := readLenBytes(v)
		if !ok {
			return errBadVisitor
		}
		c := string(b)
		if len(r.campaigns) > 0 && c <= r.campaigns[len(r.campaigns)-1] {
			return errBadVisitor
		}
		r.campaigns = append(r.campaigns, c)
		v = rest
	}
	if len(v) != 0 {
		return errBadVisitor
	}
	return nil
}

// appendTo appends the encoded record to b.
func (r *visitorRecord) appendTo(b []byte) []byte {
	var flags byte
	if r.bot {
		flags = 1
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(r.links)))
	var prev uint64
	for _, id := range r.links {
		b = binary.AppendUvarint(b, id-prev)
		prev = id
	}
	b = binary.AppendUvarint(b, uint64(len(r.campaigns)))
	for _, c := range r.campaigns {
		b = appendLenString(b, c)
	}
	return b
}
