package storage

import (
	"encoding/binary"
	"slices"
)

// A period blob of exactly one click (blob version 3, schema version 5).
//
// Spread over a million links, most links are clicked once in an hour,
// and often once in a day: most of their hourly and daily blobs hold one
// click. In version 2 such a blob has a section of one entry for each
// dimension, each with its counts and its value: 75 bytes for a click
// with no referrer, user agent or country. Version 3 holds it in 9:
//
//	0x00 0x03
//	flags(1)   bit 0: a bot's click; daily only: bit 1: one visitor,
//	           bit 2: one human visitor
//	dims(1)    bit d: dimension d has the click's value (a link's own
//	           blob has no links value; variants only for a variant)
//	values     for each such dimension, in dimension order: links
//	           uvarint(link id); the others one byte below 0x80, the
//	           length of the value's bytes that follow, or 0x80 + i for
//	           commonValues[i]
//
// mergePeriodBlob writes it for a blob of one click whose values are
// shorter than 128 bytes; the next click of the period makes the blob
// version 2 again. parsePeriodBlob reads it as the version 2 blob it
// stands for, so nothing else tells the two apart.
const blobOneClick = 3

// commonValues are the values a version 3 blob holds in one byte: what
// clicks say most. The list only ever grows at its end: blobs name
// values by their place in it.
var commonValues = [...]string{directReferrer, unknownValue, "bot", "desktop", "mobile", "tablet",
	"Chrome", "Safari", "Firefox", "Edge", "Opera", "Samsung Internet",
	"Windows", "macOS", "iOS", "Android", "Linux", "ChromeOS"}

// The flags of a version 3 blob.
const (
	oneBot          = 1 << 0
	oneVisitor      = 1 << 1
	oneHumanVisitor = 1 << 2
	oneCode         = 0x80 // a value byte from it on is a code
)

// A short value is what a version 3 blob and a raw click with
// rawFlagCodes hold for a string: one byte below oneCode, the length of
// the bytes that follow, or oneCode + i for commonValues[i].
const maxShortValue = oneCode - 1

// commonValueBytes are commonValues as byte slices, to read without
// allocating.
var commonValueBytes = func() (b [len(commonValues)][]byte) {
	for i, v := range commonValues {
		b[i] = []byte(v)
	}
	return b
}()

// appendShortValue appends v as a short value; v is at most
// maxShortValue bytes.
func appendShortValue(dst []byte, v string) []byte {
	for i, c := range commonValues {
		if v == c {
			return append(dst, oneCode+byte(i))
		}
	}
	dst = append(dst, byte(len(v)))
	return append(dst, v...)
}

// readShortValue reads a short value at the start of v and returns the
// rest of v; ok is false for a value past v's end or an unknown code.
func readShortValue(v []byte) (val, rest []byte, ok bool) {
	if len(v) == 0 {
		return nil, nil, false
	}
	switch b := v[0]; {
	case b >= oneCode && int(b-oneCode) < len(commonValues):
		return commonValueBytes[b-oneCode], v[1:], true
	case b < oneCode && int(b) < len(v):
		return v[1 : 1+int(b)], v[1+int(b):], true
	}
	return nil, nil, false
}

// appendOneClickBlob appends to dst the version 3 form of the version 2
// blob v and reports whether v has one: one click, nothing pushed out of
// a top list, every value shorter than 128 bytes.
func appendOneClickBlob(dst, v []byte, daily bool) ([]byte, bool) {
	h, sections, err := parsePeriodBlob(v, daily)
	if err != nil || h.clicks != 1 || h.visitors > 1 || h.humans > h.visitors {
		return dst, false
	}
	var flags, dims byte
	if h.bots == 1 {
		flags |= oneBot
	}
	if h.visitors == 1 {
		flags |= oneVisitor
	}
	if h.humans == 1 {
		flags |= oneHumanVisitor
	}
	for d := range numDims {
		if len(sections[d].entries) > 0 {
			dims |= 1 << d
		}
	}
	dst = append(dst, 0, blobOneClick, flags, dims)
	for d := range numDims {
		sec := sections[d]
		if len(sec.entries) == 0 {
			continue
		}
		if !sec.v2 || sec.n != 1 || sec.other != [2]uint64{} {
			return dst, false
		}
		r := newBlobReader(d, sec)
		val, human, bot, ok, err := r.next()
		if err != nil || !ok || len(r.buf) != 0 || r.inherited != 0 || human+bot != 1 || bot != h.bots {
			return dst, false
		}
		switch {
		case d == dimLinks:
			dst = binary.AppendUvarint(dst, binary.BigEndian.Uint64(val))
		case len(val) <= maxShortValue:
			dst = appendShortValue(dst, string(val))
		default:
			return dst, false
		}
	}
	return dst, true
}

// parseOneClickBlob reads the body of a version 3 blob (after its two
// version bytes) as the version 2 blob it stands for.
func parseOneClickBlob(v []byte, daily bool) (h periodHeader, sections [numDims]section, err error) {
	if len(v) < 2 {
		return h, sections, errBadBlob
	}
	flags, dims := v[0], v[1]
	known := byte(oneBot)
	if daily {
		known |= oneVisitor | oneHumanVisitor
	}
	if flags&^known != 0 || dims>>numDims != 0 || flags&oneHumanVisitor != 0 && flags&oneVisitor == 0 {
		return h, sections, errBadBlob
	}
	h.clicks = 1
	h.bots = uint64(flags & oneBot)
	if flags&oneVisitor != 0 {
		h.visitors = 1
	}
	if flags&oneHumanVisitor != 0 {
		h.humans = 1
	}
	v = v[2:]
	// The entries as version 2 writes them: the value, the human and bot
	// clicks, no inherited estimate.
	buf := make([]byte, 0, len(v)+int(numDims)*20)
	var ends [numDims + 1]int
	for d := range numDims {
		ends[d] = len(buf)
		if dims&(1<<d) == 0 {
			continue
		}
		if d == dimLinks {
			id, n := binary.Uvarint(v)
			if n <= 0 || id == 0 {
				return h, sections, errBadBlob
			}
			buf, v = binary.AppendUvarint(buf, id), v[n:]
		} else {
			val, rest, ok := readShortValue(v)
			if !ok {
				return h, sections, errBadBlob
			}
			v = rest
			buf = binary.AppendUvarint(buf, uint64(len(val)))
			buf = append(buf, val...)
		}
		buf = append(buf, byte(1-h.bots), byte(h.bots), 0)
	}
	ends[numDims] = len(buf)
	if len(v) != 0 {
		return h, sections, errBadBlob
	}
	buf = slices.Clip(buf)
	for d := range numDims {
		switch {
		case dims&(1<<d) != 0:
			sections[d] = section{entries: buf[ends[d]:ends[d+1]], n: 1, v2: true}
		case d < dimVariants:
			sections[d].v2 = true // an empty section of version 2
		}
	}
	return h, sections, nil
}
