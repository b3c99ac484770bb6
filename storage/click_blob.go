package storage

import (
	"encoding/binary"
	"errors"
)

// A period blob holds what one scope counted in one hour (clicks.hourly)
// or one UTC day (clicks.daily):
//
//	0x00 0x02            version 2 (see below)
//	uvarint(clicks, bots included) uvarint(bot clicks)
//	daily only: uvarint(distinct visitors) uvarint(distinct human visitors)
//	for each dimension, in dimension order: uvarint(len) section
//
// A section holds the counts of one dimension. An empty section is no
// bytes; otherwise it is
//
//	uvarint(entries) uvarint(other human clicks) uvarint(other bot clicks)
//
// followed by the entries, sorted by value, each
//
//	links:   uvarint(link id - previous link id) uvarint(human) uvarint(bot) uvarint(inherited)
//	others:  uvarint(len) value uvarint(human) uvarint(bot) uvarint(inherited)
//
// back to back. A link's own links section is empty. In memory, link
// values are 8-byte big-endian link ids, so byte order is numeric order.
// One blob for all of a period's counts means one key to read and write
// per scope and period, and no total can disagree with its dimensions.
//
// Top lists are bounded: a section keeps at most topCap entries (1,024
// links, 256 values of the other dimensions), so a flood of distinct
// values (random referrers) cannot grow a blob, or the reads of a range,
// without bound. The entries are kept by the Space-Saving rule: a value
// not in a full list takes the place of the entry with the smallest
// estimate (its clicks plus what it inherited), whose clicks go to the
// section's other counts, and inherits that estimate. Hence, per blob:
//
//   - the totals are exact, and the entries plus other sum to them;
//   - the human and bot counts of an entry are exact clicks of its value,
//     made since it last took a place: exact whenever the value was never
//     pushed out (always, while the period has at most topCap values);
//   - every value with more than clicks/topCap clicks in the period is
//     listed (the smallest estimate never exceeds clicks/topCap).
//
// Version 1 blobs (before bounded lists) have no version bytes (they start
// with uvarint(clicks), never 0), no section prefix and no inherited
// counts; they are read as they are and written back as version 2, bounded,
// by the next batch that touches them.
//
// The variants section (a link's clicks by A/B variant, values "1" to
// "10") came later, as an optional last section: it is written only when
// it is not empty, so a blob without variants is byte for byte what it
// was, and a blob that ends after the os section has no variants.

// blobVersion is the version of the period blobs written.
const blobVersion = 2

// topCap is the most entries a section of each dimension keeps.
var topCap = [numDims]int{dimLinks: 1024, dimReferrers: 256, dimCountries: 256, dimDevices: 256, dimBrowsers: 256, dimOS: 256, dimVariants: 16}

// periodHeader is the totals of a period blob.
type periodHeader struct {
	clicks, bots     uint64
	visitors, humans uint64 // daily blobs only
}

// section is one dimension of a period blob.
type section struct {
	entries []byte // the entries, back to back
	n       uint64 // version 2: the number of entries
	other   [2]uint64
	v2      bool // entries carry their inherited estimate
}

// parsePeriodBlob splits a period blob into its header and its sections;
// a nil blob is an empty period.
func parsePeriodBlob(v []byte, daily bool) (h periodHeader, sections [numDims]section, err error) {
	if v == nil {
		return h, sections, nil
	}
	if len(v) == 0 {
		return h, sections, errBadBlob
	}
	v2 := v[0] == 0
	if v2 {
		if len(v) >= 2 && v[1] == blobOneClick {
			return parseOneClickBlob(v[2:], daily)
		}
		if len(v) < 2 || v[1] != blobVersion {
			return h, sections, errBadBlob
		}
		v = v[2:]
	}
	fields := []*uint64{&h.clicks, &h.bots}
	if daily {
		fields = append(fields, &h.visitors, &h.humans)
	}
	for _, f := range fields {
		n, l := binary.Uvarint(v)
		if l <= 0 {
			return h, sections, errBadBlob
		}
		*f, v = n, v[l:]
	}
	for d := range sections {
		if d >= int(dimVariants) && len(v) == 0 {
			break // an optional section left out: empty
		}
		n, l := binary.Uvarint(v)
		if l <= 0 || n > uint64(len(v)-l) {
			return h, sections, errBadBlob
		}
		sec, err := parseSection(v[l:l+int(n)], v2)
		if err != nil || sec.other[1] > h.bots || sec.other[0]+sec.other[1] > h.clicks {
			return h, sections, errBadBlob
		}
		sections[d], v = sec, v[l+int(n):]
	}
	if len(v) != 0 || h.bots > h.clicks || h.humans > h.visitors {
		return h, sections, errBadBlob
	}
	return h, sections, nil
}

// parseSection reads the prefix of a section of a blob of version 2 (v2)
// or 1.
func parseSection(b []byte, v2 bool) (section, error) {
	sec := section{entries: b, v2: v2}
	if !v2 || len(b) == 0 {
		return sec, nil
	}
	for _, f := range []*uint64{&sec.n, &sec.other[0], &sec.other[1]} {
		x, l := binary.Uvarint(sec.entries)
		if l <= 0 {
			return sec, errBadBlob
		}
		*f, sec.entries = x, sec.entries[l:]
	}
	if sec.n == 0 || len(sec.entries) == 0 {
		return sec, errBadBlob
	}
	return sec, nil
}

// periodClicks reads the click totals of a period blob, skipping the rest.
func periodClicks(v []byte) (clicks, bots uint64, err error) {
	if len(v) > 2 && v[0] == 0 && v[1] == blobOneClick {
		if v[2]&^(oneBot|oneVisitor|oneHumanVisitor) != 0 {
			return 0, 0, errBadBlob
		}
		return 1, uint64(v[2] & oneBot), nil
	}
	if len(v) > 0 && v[0] == 0 {
		if len(v) < 2 || v[1] != blobVersion {
			return 0, 0, errBadBlob
		}
		v = v[2:]
	}
	clicks, l := binary.Uvarint(v)
	if l <= 0 {
		return 0, 0, errBadBlob
	}
	bots, m := binary.Uvarint(v[l:])
	if m <= 0 || bots > clicks {
		return 0, 0, errBadBlob
	}
	return clicks, bots, nil
}

// mergePeriodBlob returns a period blob (version 2, bounded, or version 3
// for one click): old plus a batch's totals and its counts of each
// dimension (sorted by value, each value once; the values of string
// dimensions are indexes into vals). The blob is built in scratch, valid
// until the next call.
func mergePeriodBlob(old []byte, daily bool, add periodHeader, deltas *[numDims][]dimDelta, vals *[numDims][]string, scratch *mergeScratch) ([]byte, error) {
	h, sections, err := parsePeriodBlob(old, daily)
	if err != nil {
		return nil, err
	}
	h.clicks += add.clicks
	h.bots += add.bots
	h.visitors += add.visitors
	h.humans += add.humans
	out := append(scratch.out[:0], 0, blobVersion)
	out = binary.AppendUvarint(out, h.clicks)
	out = binary.AppendUvarint(out, h.bots)
	if daily {
		out = binary.AppendUvarint(out, h.visitors)
		out = binary.AppendUvarint(out, h.humans)
	}
	for d := range numDims {
		sec := sections[d]
		var enc []byte
		if len(deltas[d]) > 0 || !sec.v2 {
			if enc, err = mergeSection(d, sec, deltas[d], vals[d], scratch); err != nil {
				return nil, err
			}
		} else if len(sec.entries) > 0 {
			// Untouched: the prefix again, and the entries as they are.
			enc = binary.AppendUvarint(scratch.sec[:0], sec.n)
			enc = binary.AppendUvarint(enc, sec.other[0])
			enc = binary.AppendUvarint(enc, sec.other[1])
			enc = append(enc, sec.entries...)
			scratch.sec = enc
		}
		if d >= dimVariants && len(enc) == 0 {
			continue // optional, and the last: left out when empty
		}
		out = binary.AppendUvarint(out, uint64(len(enc)))
		out = append(out, enc...)
	}
	scratch.out = out
	if h.clicks == 1 {
		if one, ok := appendOneClickBlob(scratch.one[:0], out, daily); ok {
			scratch.one = one
			return one, nil
		}
	}
	return out, nil
}

// blobReader walks the entries of a section. In the links dimension, the
// id of the entry next returned is prevID; inherited is the estimate the
// entry last returned inherited.
type blobReader struct {
	links     bool
	v2        bool
	buf       []byte
	prevID    uint64
	id        [8]byte
	inherited uint64
}

func newBlobReader(dim byte, sec section) blobReader {
	return blobReader{links: dim == dimLinks, v2: sec.v2, buf: sec.entries}
}

var errBadBlob = errors.New("malformed period blob")

// next returns the next entry; ok is false at the end. val is valid until
// the next call.
func (r *blobReader) next() (val []byte, human, bot uint64, ok bool, err error) {
	if len(r.buf) == 0 {
		return nil, 0, 0, false, nil
	}
	if r.links {
		d, n := binary.Uvarint(r.buf)
		if n <= 0 || d == 0 { // ids are not 0 and strictly ascending
			return nil, 0, 0, false, errBadBlob
		}
		r.buf = r.buf[n:]
		r.prevID += d
		binary.BigEndian.PutUint64(r.id[:], r.prevID)
		val = r.id[:]
	} else {
		l, n := binary.Uvarint(r.buf)
		if n <= 0 || l > uint64(len(r.buf)-n) {
			return nil, 0, 0, false, errBadBlob
		}
		val = r.buf[n : n+int(l)]
		r.buf = r.buf[n+int(l):]
	}
	counts := []*uint64{&human, &bot}
	r.inherited = 0
	if r.v2 {
		counts = append(counts, &r.inherited)
	}
	for _, c := range counts {
		x, n := binary.Uvarint(r.buf)
		if n <= 0 {
			return nil, 0, 0, false, errBadBlob
		}
		*c, r.buf = x, r.buf[n:]
	}
	return val, human, bot, true, nil
}
