package storage

import (
	"encoding/binary"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/linkbolt/linkbolt/link"
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
	numDims
)

var dimNames = [numDims]string{link.DimLinks, link.DimReferrers, link.DimCountries, link.DimDevices, link.DimBrowsers, link.DimOS}

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
//	uvarint(clicks, bots included) uvarint(bot clicks)
//	daily only: uvarint(distinct visitors) uvarint(distinct human visitors)
//	for each dimension, in dimension order: uvarint(len) section
//
// A section holds the counts of one dimension: entries sorted by value,
// each
//
//	links:   uvarint(link id - previous link id) uvarint(human clicks) uvarint(bot clicks)
//	others:  uvarint(len) value uvarint(human clicks) uvarint(bot clicks)
//
// back to back. A link's own links section is empty. In memory, link
// values are 8-byte big-endian link ids, so byte order is numeric order.
// One blob for all of a period's counts means one key to read and write
// per scope and period, and no total can disagree with its dimensions.

// periodHeader is the totals of a period blob.
type periodHeader struct {
	clicks, bots     uint64
	visitors, humans uint64 // daily blobs only
}

// parsePeriodBlob splits a period blob into its header and its sections;
// a nil blob is an empty period.
func parsePeriodBlob(v []byte, daily bool) (h periodHeader, sections [numDims][]byte, err error) {
	if v == nil {
		return h, sections, nil
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
		n, l := binary.Uvarint(v)
		if l <= 0 || n > uint64(len(v)-l) {
			return h, sections, errBadBlob
		}
		sections[d], v = v[l:l+int(n)], v[l+int(n):]
	}
	if len(v) != 0 || h.bots > h.clicks || h.humans > h.visitors {
		return h, sections, errBadBlob
	}
	return h, sections, nil
}

// periodClicks reads the click totals of a period blob, skipping the rest.
func periodClicks(v []byte) (clicks, bots uint64, err error) {
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

// mergePeriodBlob returns a period blob: old plus a batch's totals and
// its counts of each dimension (sorted by value, each value once; the
// values of string dimensions are indexes into vals). The blob is built in
// scratch[0], valid until the next call.
func mergePeriodBlob(old []byte, daily bool, add periodHeader, deltas *[numDims][]dimDelta, vals *[numDims][]string, scratch *[2][]byte) ([]byte, error) {
	h, sections, err := parsePeriodBlob(old, daily)
	if err != nil {
		return nil, err
	}
	h.clicks += add.clicks
	h.bots += add.bots
	h.visitors += add.visitors
	h.humans += add.humans
	out := scratch[0][:0]
	out = binary.AppendUvarint(out, h.clicks)
	out = binary.AppendUvarint(out, h.bots)
	if daily {
		out = binary.AppendUvarint(out, h.visitors)
		out = binary.AppendUvarint(out, h.humans)
	}
	for d := range numDims {
		sec := sections[d]
		if len(deltas[d]) > 0 {
			if sec, err = mergeSection(d, sections[d], deltas[d], vals[d], scratch[1][:0]); err != nil {
				return nil, err
			}
			scratch[1] = sec
		}
		out = binary.AppendUvarint(out, uint64(len(sec)))
		out = append(out, sec...)
	}
	scratch[0] = out
	return out, nil
}

// blobReader walks the entries of a section. In the links dimension, the
// id of the entry next returned is prevID.
type blobReader struct {
	links  bool
	buf    []byte
	prevID uint64
	id     [8]byte
}

func newBlobReader(dim byte, buf []byte) blobReader {
	return blobReader{links: dim == dimLinks, buf: buf}
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
	human, n := binary.Uvarint(r.buf)
	if n <= 0 {
		return nil, 0, 0, false, errBadBlob
	}
	r.buf = r.buf[n:]
	bot, n = binary.Uvarint(r.buf)
	if n <= 0 {
		return nil, 0, 0, false, errBadBlob
	}
	r.buf = r.buf[n:]
	return val, human, bot, true, nil
}

// blobWriter appends entries, in value order, to a section.
type blobWriter struct {
	buf    []byte
	prevID uint64
}

func (w *blobWriter) addID(id, human, bot uint64) {
	if human == 0 && bot == 0 {
		return
	}
	w.buf = binary.AppendUvarint(w.buf, id-w.prevID)
	w.prevID = id
	w.counts(human, bot)
}

func (w *blobWriter) add(val []byte, human, bot uint64) {
	if human == 0 && bot == 0 {
		return
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(len(val)))
	w.buf = append(w.buf, val...)
	w.counts(human, bot)
}

func (w *blobWriter) addString(val string, human, bot uint64) {
	if human == 0 && bot == 0 {
		return
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(len(val)))
	w.buf = append(w.buf, val...)
	w.counts(human, bot)
}

func (w *blobWriter) counts(human, bot uint64) {
	w.buf = binary.AppendUvarint(w.buf, human)
	w.buf = binary.AppendUvarint(w.buf, bot)
}

// dimDelta is what a batch adds to one value of a dimension: v is a link
// id, or the index of a string value in a table beside the deltas. (No
// pointers: a batch makes hundreds of thousands of them.)
type dimDelta struct {
	v          uint64
	human, bot uint64
}

// mergeSection appends to buf the section old plus deltas, which are
// sorted by value with each value once. Old entries before the last delta
// are checked for order, so a damaged section is not rewritten as if it
// were sound; the entries after it are copied as they are.
func mergeSection(dim byte, old []byte, deltas []dimDelta, vals []string, buf []byte) ([]byte, error) {
	if dim == dimLinks {
		return mergeLinkSection(old, deltas, buf)
	}
	w := blobWriter{buf: buf}
	r := newBlobReader(dim, old)
	entry := r.buf
	val, human, bot, ok, err := r.next()
	if err != nil {
		return nil, err
	}
	i := 0
	for ok && i < len(deltas) {
		if vals[deltas[i].v] < string(val) {
			w.addString(vals[deltas[i].v], deltas[i].human, deltas[i].bot)
			i++
			continue
		}
		if vals[deltas[i].v] == string(val) {
			w.add(val, human+deltas[i].human, bot+deltas[i].bot)
			i++
		} else {
			w.buf = append(w.buf, entry[:len(entry)-len(r.buf)]...)
		}
		prev := val // string values point into old, never reused
		entry = r.buf
		if val, human, bot, ok, err = r.next(); err != nil {
			return nil, err
		}
		if ok && string(val) <= string(prev) {
			return nil, errBadBlob
		}
	}
	if ok {
		return append(w.buf, entry...), nil
	}
	for ; i < len(deltas); i++ {
		w.addString(vals[deltas[i].v], deltas[i].human, deltas[i].bot)
	}
	return w.buf, nil
}

// mergeLinkSection is mergeSection for the links dimension; the reader
// refuses ids out of order.
func mergeLinkSection(old []byte, deltas []dimDelta, buf []byte) ([]byte, error) {
	w := blobWriter{buf: buf}
	r := newBlobReader(dimLinks, old)
	_, human, bot, ok, err := r.next()
	if err != nil {
		return nil, err
	}
	i := 0
	for ok && i < len(deltas) {
		if deltas[i].v < r.prevID {
			w.addID(deltas[i].v, deltas[i].human, deltas[i].bot)
			i++
			continue
		}
		if deltas[i].v == r.prevID {
			human += deltas[i].human
			bot += deltas[i].bot
			i++
		}
		w.addID(r.prevID, human, bot)
		if _, human, bot, ok, err = r.next(); err != nil {
			return nil, err
		}
	}
	if ok {
		// The rest is coded against the current entry, written next.
		w.addID(r.prevID, human, bot)
		return append(w.buf, r.buf...), nil
	}
	for ; i < len(deltas); i++ {
		w.addID(deltas[i].v, deltas[i].human, deltas[i].bot)
	}
	return w.buf, nil
}

// A raw click is
//
//	flags(1)              bit 0: bot; bit 1: a campaign follows
//	uvarint(link id)
//	[uvarint(len) campaign id]
//	uvarint(len) value    five times: referrer ("direct" for none), country,
//	                      device, browser, os
//	visitor(8)
//
// under the key workspace id(8) + unix nanos(8) + sequence(4). Never the
// address or the user agent.
const (
	rawFlagBot      = 1 << 0
	rawFlagCampaign = 1 << 1
)

// rawStrings are the string fields of a raw click after the campaign, in
// their order on disk; their indexes are the string dimensions'.
var rawStrings = [...]byte{dimReferrers, dimCountries, dimDevices, dimBrowsers, dimOS}

func appendRawClick(b []byte, c *parsedClick) []byte {
	var flags byte
	if c.bot {
		flags |= rawFlagBot
	}
	if c.campaign != "" {
		flags |= rawFlagCampaign
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, c.link)
	if c.campaign != "" {
		b = binary.AppendUvarint(b, uint64(len(c.campaign)))
		b = append(b, c.campaign...)
	}
	for _, d := range rawStrings {
		b = binary.AppendUvarint(b, uint64(len(c.vals[d])))
		b = append(b, c.vals[d]...)
	}
	return binary.BigEndian.AppendUint64(b, c.visitor)
}

var errBadRawClick = errors.New("malformed raw click")

// decodeRawClick fills c from a raw click's key and value; str turns bytes
// into strings (so an export can share repeated values).
func decodeRawClick(ids idFormatter, k, v []byte, c *link.Click, str func([]byte) string) error {
	if len(k) != 20 || len(v) < 2 {
		return errBadRawClick
	}
	c.WorkspaceID = ids.formatID(prefixWorkspace, binary.BigEndian.Uint64(k))
	c.Time = time.Unix(0, int64(binary.BigEndian.Uint64(k[8:]))).UTC()
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
		l, n := binary.Uvarint(v)
		if n <= 0 || l > uint64(len(v)-n) {
			return "", false
		}
		s := str(v[n : n+int(l)])
		v = v[n+int(l):]
		return s, true
	}
	c.CampaignID = ""
	if flags&rawFlagCampaign != 0 {
		s, ok := readString()
		if !ok {
			return errBadRawClick
		}
		c.CampaignID = s
	}
	for _, f := range []*string{&c.Referrer, &c.Country, &c.Device, &c.Browser, &c.OS} {
		s, ok := readString()
		if !ok {
			return errBadRawClick
		}
		*f = s
	}
	if len(v) != 8 {
		return errBadRawClick
	}
	c.Visitor = binary.BigEndian.Uint64(v)
	return nil
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

func decodeVisitorRecord(v []byte) (visitorRecord, error) {
	var r visitorRecord
	err := r.decode(v)
	return r, err
}

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
