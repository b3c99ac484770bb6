package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// Scopes. A scope key names what an aggregate counts:
//
//	workspace  'w' + workspace id(8)
//	link       'l' + link id(8)
//	campaign   'c' + workspace id(8) + len(1) + campaign id
//
// The campaign's workspace is part of its key, so one workspace never reads
// another's campaign; the length byte keeps campaign keys prefix-free.
//
// Period blobs of workspaces and campaigns are keyed scope + period(4): a
// range of one scope is one Seek and a walk. A batch touches a handful of
// them. Period blobs of links are keyed 'l' + period(4) + link id(8),
// time first: a batch touches thousands of links, and time-first keys put
// all of them in the few pages of the current hour and day, instead of a
// page per link all over the file (which made every commit rewrite tens
// of megabytes). A link's range is read day by day (see Stats).
const (
	scopeKindWorkspace byte = 'w'
	scopeKindLink      byte = 'l'
	scopeKindCampaign  byte = 'c'
)

// maxCampaignIDLength bounds the campaign IDs a scope key can hold.
const maxCampaignIDLength = 64

func workspaceScope(wid uint64) []byte { return appendScope(nil, scopeKindWorkspace, wid) }
func linkScope(lid uint64) []byte      { return appendScope(nil, scopeKindLink, lid) }

func appendScope(b []byte, kind byte, id uint64) []byte {
	b = append(b, kind)
	return binary.BigEndian.AppendUint64(b, id)
}

// periodBlobKey returns the key of a scope's period blob.
func periodBlobKey(scope []byte, period uint32) []byte {
	return appendPeriodBlobKey(make([]byte, 0, len(scope)+4), scope, period)
}

func appendPeriodBlobKey(k, scope []byte, period uint32) []byte {
	if scope[0] == scopeKindLink {
		k = append(k, scopeKindLink)
		k = binary.BigEndian.AppendUint32(k, period)
		return append(k, scope[1:]...)
	}
	return binary.BigEndian.AppendUint32(append(k, scope...), period)
}

func campaignScope(wid uint64, campaign string) []byte {
	b := appendScope(make([]byte, 0, 10+len(campaign)), scopeKindCampaign, wid)
	b = append(b, byte(len(campaign)))
	return append(b, campaign...)
}

// validCampaignID reports whether id can be a campaign scope: 1 to 64
// characters of [A-Za-z0-9_-], as every wire ID is.
func validCampaignID(id string) bool {
	if id == "" || len(id) > maxCampaignIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Dimensions on disk: one byte in the keys of the dimension buckets.
// The order is link.Dimensions'.
const (
	dimLinks byte = iota
	dimReferrers
	dimCountries
	dimDevices
	dimBrowsers
	dimOS
	dimVariants // a link's A/B variants: only in link scopes, an optional last section
	numDims
)

var dimNames = [numDims]string{link.DimLinks, link.DimReferrers, link.DimCountries, link.DimDevices, link.DimBrowsers, link.DimOS, link.DimVariants}

// Values stored for what a click does not say.
const (
	directReferrer = "direct"
	unknownValue   = "unknown"
	// maxValueLength bounds a stored dimension value (a host name is at
	// most 253 bytes); longer values are cut at a character boundary, so
	// one odd header never fails a batch.
	maxValueLength = 253
)

// dimValue returns the stored form of a string dimension value.
func dimValue(v, empty string) string {
	if v == "" {
		return empty
	}
	if len(v) > maxValueLength {
		cut := maxValueLength
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut]
	}
	return v
}

// Time units of aggregate keys: whole hours and whole UTC days since the
// Unix epoch, 4 bytes big-endian. Clicks before 1970 are refused.
const (
	secondsPerHour = 3600
	secondsPerDay  = 86400
	hoursPerDay    = 24
)

// maxClickTime is the latest click time accepted: unix nanoseconds hold
// until 2262.
var maxClickTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(make([]byte, 0, 4), v) }

func hourTime(h uint32) time.Time { return time.Unix(int64(h)*secondsPerHour, 0).UTC() }

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

// dimDelta is what a batch adds to one value of a dimension: v is a link
// id, or the index of a string value in a table beside the deltas. (No
// pointers: a batch makes hundreds of thousands of them.)
type dimDelta struct {
	v          uint64
	human, bot uint64
}

// topEntry is an entry of a section being merged.
type topEntry struct {
	val        []byte // string dimensions: a value of the old section
	str        string // string dimensions: a value new to the section
	id         uint64 // links
	human, bot uint64
	inherited  uint64
	added      uint64 // clicks of a new value in this batch; 0 for old ones
	gone       bool   // pushed out of the list
}

func (e *topEntry) estimate() uint64 { return e.human + e.bot + e.inherited }

// mergeScratch is the reusable memory of mergePeriodBlob.
type mergeScratch struct {
	out, sec []byte
	one      []byte // a version 3 blob
	entries  []topEntry
	fresh    []int32
	heap     entryHeap
}

// mergeSection encodes into scratch.sec the section old plus deltas (sorted
// by value, each value once), bounded to topCap entries. Old entries are
// checked for order, so a damaged section is not rewritten as if it were
// sound.
func mergeSection(dim byte, old section, deltas []dimDelta, vals []string, scratch *mergeScratch) ([]byte, error) {
	ents, other, err := mergeEntries(dim, old, deltas, vals, scratch.entries[:0])
	scratch.entries = ents
	if err != nil {
		return nil, err
	}
	n := boundEntries(ents, topCap[dim], &other, scratch)

	buf := scratch.sec[:0]
	if n > 0 {
		buf = binary.AppendUvarint(buf, uint64(n))
		buf = binary.AppendUvarint(buf, other[0])
		buf = binary.AppendUvarint(buf, other[1])
	}
	var prevID uint64
	for i := range ents {
		e := &ents[i]
		if e.gone {
			continue
		}
		if dim == dimLinks {
			buf = binary.AppendUvarint(buf, e.id-prevID)
			prevID = e.id
		} else if e.val != nil {
			buf = binary.AppendUvarint(buf, uint64(len(e.val)))
			buf = append(buf, e.val...)
		} else {
			buf = binary.AppendUvarint(buf, uint64(len(e.str)))
			buf = append(buf, e.str...)
		}
		buf = binary.AppendUvarint(buf, e.human)
		buf = binary.AppendUvarint(buf, e.bot)
		buf = binary.AppendUvarint(buf, e.inherited)
	}
	scratch.sec = buf
	return buf, nil
}

// mergeEntries returns the entries of old and the deltas in value order,
// with the deltas of old values added, and old's other counts.
func mergeEntries(dim byte, old section, deltas []dimDelta, vals []string, ents []topEntry) ([]topEntry, [2]uint64, error) {
	other := old.other
	r := newBlobReader(dim, old)
	val, human, bot, ok, err := r.next()
	if err != nil {
		return ents, other, err
	}
	i := 0
	// cmp compares delta i with the current old entry.
	cmp := func() int {
		if dim == dimLinks {
			return compareUint(deltas[i].v, r.prevID)
		}
		return strings.Compare(vals[deltas[i].v], string(val))
	}
	fresh := func(d dimDelta) topEntry {
		e := topEntry{human: d.human, bot: d.bot, added: d.human + d.bot}
		if dim == dimLinks {
			e.id = d.v
		} else {
			e.str = vals[d.v]
		}
		return e
	}
	for ok {
		e := topEntry{id: r.prevID, human: human, bot: bot, inherited: r.inherited}
		if dim != dimLinks {
			e.val = val
		}
		for i < len(deltas) && cmp() < 0 {
			if deltas[i].human+deltas[i].bot > 0 {
				ents = append(ents, fresh(deltas[i]))
			}
			i++
		}
		if i < len(deltas) && cmp() == 0 {
			e.human += deltas[i].human
			e.bot += deltas[i].bot
			i++
		}
		if e.human+e.bot == 0 {
			return ents, other, errBadBlob
		}
		ents = append(ents, e)
		prev := val // string values point into old, never reused
		if val, human, bot, ok, err = r.next(); err != nil {
			return ents, other, err
		}
		if ok && dim != dimLinks && string(val) <= string(prev) {
			return ents, other, errBadBlob
		}
	}
	for ; i < len(deltas); i++ {
		if deltas[i].human+deltas[i].bot > 0 {
			ents = append(ents, fresh(deltas[i]))
		}
	}
	if old.v2 && len(ents)-countAdded(ents) != int(old.n) {
		return ents, other, errBadBlob
	}
	return ents, other, nil
}

func countAdded(ents []topEntry) int {
	n := 0
	for i := range ents {
		if ents[i].added > 0 {
			n++
		}
	}
	return n
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// boundEntries marks entries gone until at most limit remain, by the
// Space-Saving rule, and adds the clicks of the gone ones to other. It
// returns how many remain. Old entries hold their places first (an
// unbounded version 1 section loses its smallest); then the new values
// come in, most clicks first, each taking a free place or the place of the
// entry with the smallest estimate.
func boundEntries(ents []topEntry, limit int, other *[2]uint64, scratch *mergeScratch) int {
	if len(ents) <= limit {
		return len(ents)
	}
	h := &scratch.heap
	h.ents, h.idx = ents, h.idx[:0]
	fresh := scratch.fresh[:0]
	for i := range ents {
		if ents[i].added > 0 {
			fresh = append(fresh, int32(i))
		} else {
			h.idx = append(h.idx, int32(i))
		}
	}
	scratch.fresh = fresh
	h.init()
	evict := func() uint64 {
		m := &ents[h.idx[0]]
		m.gone = true
		other[0] += m.human
		other[1] += m.bot
		return m.estimate()
	}
	for len(h.idx) > limit {
		evict()
		h.pop()
	}
	slices.SortStableFunc(fresh, func(a, b int32) int { return compareUint(ents[b].added, ents[a].added) })
	for _, i := range fresh {
		if len(h.idx) < limit {
			h.push(i)
			continue
		}
		ents[i].inherited = evict()
		h.idx[0] = i
		h.down(0)
	}
	return len(h.idx)
}

// entryHeap is a min-heap of entries by estimate, then by exact clicks
// (of two equal estimates, the one with fewer known clicks goes first),
// then by value order.
type entryHeap struct {
	ents []topEntry
	idx  []int32
}

func (h *entryHeap) less(a, b int32) bool {
	x, y := &h.ents[a], &h.ents[b]
	if ex, ey := x.estimate(), y.estimate(); ex != ey {
		return ex < ey
	}
	if cx, cy := x.human+x.bot, y.human+y.bot; cx != cy {
		return cx < cy
	}
	return a < b
}

func (h *entryHeap) init() {
	for i := len(h.idx)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *entryHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.idx) {
			return
		}
		m := l
		if r := l + 1; r < len(h.idx) && h.less(h.idx[r], h.idx[l]) {
			m = r
		}
		if !h.less(h.idx[m], h.idx[i]) {
			return
		}
		h.idx[i], h.idx[m] = h.idx[m], h.idx[i]
		i = m
	}
}

func (h *entryHeap) push(e int32) {
	h.idx = append(h.idx, e)
	for i := len(h.idx) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(h.idx[i], h.idx[p]) {
			return
		}
		h.idx[i], h.idx[p] = h.idx[p], h.idx[i]
		i = p
	}
}

func (h *entryHeap) pop() {
	last := len(h.idx) - 1
	h.idx[0] = h.idx[last]
	h.idx = h.idx[:last]
	h.down(0)
}

// A raw click is
//
//	flags(1)              bit 0: bot; bit 1: a campaign follows;
//	                      bit 2: the referrer is a host reference
//	uvarint(link id)
//	[uvarint(len) campaign id]
//	referrer              uvarint(host id) with bit 2, else uvarint(len) value
//	uvarint(len) value    four times: country, device, browser, os
//	visitor(8)
//	[variant(1)]          with bit 3: the A/B variant, from 1
//
// under the key workspace id(8) + unix nanos(8) + sequence(4). Never the
// address or the user agent.
//
// Referrer hosts are kept once per workspace and UTC day in clicks.hosts
// (see hostTable), and a raw click names its host by id: a host of 240
// bytes clicked 300,000 times costs its bytes once, not on every click.
// Raw clicks written before (no bit 2) keep the host inline, and still
// read.
const (
	rawFlagBot      = 1 << 0
	rawFlagCampaign = 1 << 1
	rawFlagHostRef  = 1 << 2
	rawFlagVariant  = 1 << 3
	// rawFlagCodes: the referrer (when inline) and the four values after
	// it are short values (see readShortValue), "unknown" one byte
	// instead of eight. Set when each is at most maxShortValue bytes
	// (schema version 5).
	rawFlagCodes = 1 << 4
)

// rawStrings are the string fields of a raw click after the campaign, in
// their order on disk; their indexes are the string dimensions'.
var rawStrings = [...]byte{dimReferrers, dimCountries, dimDevices, dimBrowsers, dimOS}

// rawReferrer is how a raw click stores its referrer: the id of its host
// in clicks.hosts (ref), or a value inline.
type rawReferrer struct {
	ref    bool
	id     uint64
	inline string
}

func appendRawClick(b []byte, c *parsedClick, ref rawReferrer) []byte {
	var flags byte
	if c.bot {
		flags |= rawFlagBot
	}
	if c.campaign != "" {
		flags |= rawFlagCampaign
	}
	if ref.ref {
		flags |= rawFlagHostRef
	}
	if c.variant != 0 {
		flags |= rawFlagVariant
	}
	short := ref.ref || len(ref.inline) <= maxShortValue
	for _, d := range rawStrings[1:] {
		short = short && len(c.vals[d]) <= maxShortValue
	}
	appendValue := appendLenString
	if short {
		flags |= rawFlagCodes
		appendValue = appendShortValue
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, c.link)
	if c.campaign != "" {
		b = appendLenString(b, c.campaign)
	}
	if ref.ref {
		b = binary.AppendUvarint(b, ref.id)
	} else {
		b = appendValue(b, ref.inline)
	}
	for _, d := range rawStrings[1:] {
		b = appendValue(b, c.vals[d])
	}
	b = binary.BigEndian.AppendUint64(b, c.visitor)
	if c.variant != 0 {
		b = append(b, c.variant)
	}
	return b
}

// appendLenString appends s with its length before it, a uvarint: how
// raw clicks and click backlog records hold their strings.
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

var errBadRawClick = errors.New("malformed raw click")

// decodeRawClick fills c from a raw click's key and value; str turns bytes
// into strings (so an export can share repeated values), and host returns
// the host of an id of the click's workspace and UTC day.
func decodeRawClick(ids idFormatter, k, v []byte, c *link.Click, str func([]byte) string, host func(day uint32, id uint64) (string, error)) error {
	if len(k) != 20 || len(v) < 2 {
		return errBadRawClick
	}
	c.WorkspaceID = ids.formatID(prefixWorkspace, binary.BigEndian.Uint64(k))
	nanos := binary.BigEndian.Uint64(k[8:])
	c.Time = time.Unix(0, int64(nanos)).UTC()
	flags := v[0]
	v = v[1:]
	c.Bot = flags&rawFlagBot != 0
	lid, n := binary.Uvarint(v)
	if n <= 0 {
		return errBadRawClick
	}
	v = v[n:]
	c.LinkID = ids.formatID(prefixLink, lid)
	readString := func() (string, bool) {
		b, rest, ok := readLenBytes(v)
		if !ok {
			return "", false
		}
		v = rest
		return str(b), true
	}
	c.CampaignID = ""
	if flags&rawFlagCampaign != 0 {
		s, ok := readString()
		if !ok {
			return errBadRawClick
		}
		c.CampaignID = s
	}
	fields := []*string{&c.Referrer, &c.Country, &c.Device, &c.Browser, &c.OS}
	if flags&rawFlagHostRef != 0 {
		id, n := binary.Uvarint(v)
		if n <= 0 {
			return errBadRawClick
		}
		v = v[n:]
		h, err := host(uint32(nanos/1e9/secondsPerDay), id)
		if err != nil {
			return err
		}
		c.Referrer, fields = h, fields[1:]
	}
	readValue := readLenBytes
	if flags&rawFlagCodes != 0 {
		readValue = readShortValue
	}
	for _, f := range fields {
		b, rest, ok := readValue(v)
		if !ok {
			return errBadRawClick
		}
		*f, v = str(b), rest
	}
	c.Variant = 0
	if flags&rawFlagVariant != 0 {
		if len(v) != 9 || v[8] == 0 {
			return errBadRawClick
		}
		c.Variant, v = v[8], v[:8]
	}
	if len(v) != 8 {
		return errBadRawClick
	}
	c.Visitor = binary.BigEndian.Uint64(v)
	return nil
}

// The hosts of referrers, in clicks.hosts, per workspace and UTC day:
//
//	day(4) + workspace id(8) + 0x00 + id(4)   → host
//	day(4) + workspace id(8) + 0x01 + host    → uvarint(id)
//
// ids count from 0 in each workspace and day. Day first, so a prune
// deletes whole days from the front. A prune deletes a day's entries in
// several transactions, and clicks arriving late for that day in between
// must not find half a dictionary: the days before hostsFrom (in the meta
// bucket), which a prune moves on before it deletes anything, are neither
// read nor written here, and their clicks keep the host inline. A workspace keeps at most
// maxHostsPerDay hosts a day: a flood of distinct hosts stops there, and
// the further hosts of the day are kept inline when they are short (at most
// maxInlineHost bytes) and as otherReferrer when not.
const (
	maxHostsPerDay = 1024
	maxInlineHost  = 32
	otherReferrer  = "(other)"
)

// hostTable finds and assigns the host ids of a batch in a write
// transaction.
type hostTable struct {
	b    *bolt.Bucket
	from uint32 // the first day with a dictionary; see hostsFrom
	mem  *arena
	refs map[hostKey]rawReferrer
	next map[[12]byte]uint64 // day + workspace → next id
}

type hostKey struct {
	day  uint32
	ws   uint64
	host string
}

func newHostTable(tx *bolt.Tx, mem *arena) *hostTable {
	return &hostTable{b: tx.Bucket(bucketClicksHosts), from: hostsFrom(tx), mem: mem, refs: map[hostKey]rawReferrer{}, next: map[[12]byte]uint64{}}
}

// referrer returns how a raw click of the workspace on the day stores the
// referrer host.
func (t *hostTable) referrer(day uint32, ws uint64, host string) (rawReferrer, error) {
	if host == directReferrer || day < t.from {
		return rawReferrer{inline: host}, nil
	}
	hk := hostKey{day, ws, host}
	if r, ok := t.refs[hk]; ok {
		return r, nil
	}
	var prefix [12]byte
	binary.BigEndian.PutUint32(prefix[:], day)
	binary.BigEndian.PutUint64(prefix[4:], ws)
	fwd := t.mem.alloc(13 + len(host))
	copy(fwd, prefix[:])
	fwd[12] = 1
	copy(fwd[13:], host)
	r, err := t.lookup(prefix, fwd, host)
	if err != nil {
		return r, err
	}
	t.refs[hk] = r
	return r, nil
}

func (t *hostTable) lookup(prefix [12]byte, fwd []byte, host string) (rawReferrer, error) {
	if v := t.b.Get(fwd); v != nil {
		id, n := binary.Uvarint(v)
		if n <= 0 {
			return rawReferrer{}, fmt.Errorf("host %x: malformed id", fwd)
		}
		return rawReferrer{ref: true, id: id}, nil
	}
	next, ok := t.next[prefix]
	if !ok {
		next = t.count(prefix)
	}
	if next >= maxHostsPerDay {
		t.next[prefix] = next
		if len(host) <= maxInlineHost {
			return rawReferrer{inline: host}, nil
		}
		return rawReferrer{inline: otherReferrer}, nil
	}
	rev := t.mem.alloc(17)
	copy(rev, prefix[:])
	rev[12] = 0
	binary.BigEndian.PutUint32(rev[13:], uint32(next))
	if err := t.b.Put(rev, t.mem.copy([]byte(host))); err != nil {
		return rawReferrer{}, fmt.Errorf("put host: %w", err)
	}
	if err := t.b.Put(fwd, binary.AppendUvarint(t.mem.alloc(binary.MaxVarintLen64)[:0], next)); err != nil {
		return rawReferrer{}, fmt.Errorf("put host: %w", err)
	}
	t.next[prefix] = next + 1
	return rawReferrer{ref: true, id: next}, nil
}

// count returns the number of hosts of a workspace and day: one more than
// the last id.
func (t *hostTable) count(prefix [12]byte) uint64 {
	c := t.b.Cursor()
	end := append(prefix[:], 1)
	k, _ := c.Seek(end)
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	if len(k) != 17 || !bytes.HasPrefix(k, prefix[:]) || k[12] != 0 {
		return 0
	}
	return uint64(binary.BigEndian.Uint32(k[13:])) + 1
}

// hostOf returns the host of an id in a workspace and day.
func hostOf(b *bolt.Bucket, day uint32, ws, id uint64) (string, error) {
	var k [17]byte
	binary.BigEndian.PutUint32(k[:], day)
	binary.BigEndian.PutUint64(k[4:], ws)
	binary.BigEndian.PutUint32(k[13:], uint32(id))
	v := b.Get(k[:])
	if v == nil || id > math.MaxUint32 {
		return "", fmt.Errorf("raw click: no host %d of workspace %d on day %d", id, ws, day)
	}
	return string(v), nil
}

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
		n, l := binary.Uvarint(v)
		if l <= 0 || n > uint64(len(v)-l) {
			return errBadVisitor
		}
		c := string(v[l : l+int(n)])
		if len(r.campaigns) > 0 && c <= r.campaigns[len(r.campaigns)-1] {
			return errBadVisitor
		}
		r.campaigns = append(r.campaigns, c)
		v = v[l+int(n):]
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
		b = binary.AppendUvarint(b, uint64(len(c)))
		b = append(b, c...)
	}
	return b
}
