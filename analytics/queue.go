package analytics

import (
	"net/netip"
	"time"
	"unsafe"

	"github.com/linkbolt/linkbolt/link"
)

// queuedClick is a click as the recorder's queue holds it until it is
// written: 80 bytes where a link.Click takes 216, and no string of its
// own but the link ID. The workspace and campaign IDs, the referrer host
// and the user agent point into the recorder's intern tables, shared by
// every click that has the same; the time is Unix nanoseconds, the
// address its 16 bytes. A click that does not fit this form (one already
// classified, an address with a zone, a time in a location other than UTC
// or Local, or out of the range of Unix nanoseconds) is kept whole in
// full: nothing of a click is lost in the queue.
type queuedClick struct {
	linkID string
	ids    *clickIDs // interned; nil when full is set
	ref    *string   // interned referrer host; nil for ""
	ua     *string   // interned user agent (cut to MaxUALength); nil for ""
	full   *link.Click
	nanos  int64
	addr   [16]byte
	// addrKind is 0 for no address, 4 or 6.
	addrKind uint8
	variant  uint8
	flags    uint8
}

// The flags of a queued click.
const (
	qUTC    = 1 << iota // the time was in UTC rather than Local
	qOwnIDs             // ids, ref or ua is the click's own, not interned
	qOwnRef
	qOwnUA
)

// clickIDs are the workspace and campaign of clicks, shared by every
// queued click of the same.
type clickIDs struct{ workspace, campaign string }

// queuedSize is what a queued click costs besides its link ID and, for a
// click kept whole, its link.Click.
const queuedSize = int64(unsafe.Sizeof(queuedClick{}))

// fullSize is what a link.Click kept whole costs besides its strings.
const fullSize = int64(unsafe.Sizeof(link.Click{}))

// The intern tables' bounds. A table that is full interns nothing more
// until the queue it serves has been taken by a flush, which starts
// empty tables: the clicks of an old table keep its strings alive until
// they are written, and the queue counts the old tables' bytes until
// then. A value that is not interned is the click's own, counted in its
// cost.
const (
	internUAs   = 4096    // distinct user agents…
	internBytes = 1 << 20 // …and their bytes, as for referrers
	internRefs  = 4096    // distinct referrer hosts
	internIDs   = 4096    // distinct workspace and campaign pairs
	internIDLen = 64      // longer IDs are not interned (they are not linkbolt's)
)

// interner holds the intern tables of the clicks queued since the last
// flush began. It is used under the recorder's mu.
type interner struct {
	uas, refs         map[string]*string
	uaBytes, refBytes int
	ids               map[clickIDs]*clickIDs
	full              bool  // a table filled up: start new ones at the next flush
	bytes             int64 // what the tables cost, counted in the queue's bytes
	lastIDs           *clickIDs
	lastRef, lastUA   *string
	lastRefS, lastUAS string
}

func newInterner() *interner {
	return &interner{uas: map[string]*string{}, refs: map[string]*string{}, ids: map[clickIDs]*clickIDs{}}
}

// entryCost is what an entry of an intern table costs besides its
// text: the map's key and value, the string the value points to, and
// the map's own overhead, roughly.
const entryCost = 80

// lookup returns s's interned copy, or nil and whether a new entry of s
// fits the table (else the click keeps s as its own).
func lookup(m map[string]*string, used, maxN, maxBytes int, s string) (p *string, fits bool) {
	if p, ok := m[s]; ok {
		return p, true
	}
	return nil, len(m) < maxN && used+len(s) <= maxBytes
}

// intern adds s to m and returns its copy: a copy, so the table pins no
// request's header buffer.
func intern(m map[string]*string, used *int, s string) *string {
	c := string([]byte(s))
	p := &c
	m[c] = p
	*used += len(c)
	return p
}

// put converts c to its queued form when what it costs fits in room
// bytes: the click's own (see cost) and the entries it adds to the intern
// tables, which the tables' bytes count from then on. It changes nothing
// and returns false when the click does not fit.
func (in *interner) put(c *link.Click, room int64) (q queuedClick, cost int64, ok bool) {
	q = queuedClick{linkID: c.LinkID, variant: c.Variant}
	compact := c.Browser == "" && c.OS == "" && c.Device == "" && c.Country == "" && !c.Bot && c.Visitor == 0 &&
		c.Addr.Zone() == "" && len(c.WorkspaceID) <= internIDLen && len(c.CampaignID) <= internIDLen
	if compact {
		switch c.Time.Location() {
		case time.UTC:
			q.flags |= qUTC
		case time.Local:
		default:
			compact = false
		}
		q.nanos = c.Time.UnixNano()
		if !time.Unix(0, q.nanos).Equal(c.Time) {
			compact = false
		}
	}
	if !compact {
		full := *c
		q.full = &full
		cost = q.cost()
		return q, cost, cost <= room
	}
	switch {
	case c.Addr.Is4():
		q.addrKind = 4
		a := c.Addr.As4()
		copy(q.addr[:], a[:])
	case c.Addr.Is6():
		q.addrKind = 6
		q.addr = c.Addr.As16()
	}

	// Look each value up; count what is new.
	var add int64
	ids := clickIDs{c.WorkspaceID, c.CampaignID}
	newIDs := false
	if in.lastIDs != nil && *in.lastIDs == ids {
		q.ids = in.lastIDs
	} else if p, ok := in.ids[ids]; ok {
		q.ids, in.lastIDs = p, p
	} else if len(in.ids) < internIDs {
		newIDs = true
		add += entryCost + int64(len(ids.workspace)+len(ids.campaign))
	} else {
		q.flags |= qOwnIDs
	}
	ref, newRef := c.Referrer, false
	if ref != "" {
		if in.lastRef != nil && in.lastRefS == ref {
			q.ref = in.lastRef
		} else if p, fits := lookup(in.refs, in.refBytes, internRefs, internBytes, ref); p != nil {
			q.ref, in.lastRef, in.lastRefS = p, p, *p
		} else if fits {
			newRef = true
			add += entryCost + int64(len(ref))
		} else {
			q.flags |= qOwnRef
		}
	}
	ua, newUA := truncateUA(c.UserAgent), false
	if ua != "" {
		if in.lastUA != nil && in.lastUAS == ua {
			q.ua = in.lastUA
		} else if p, fits := lookup(in.uas, in.uaBytes, internUAs, internBytes, ua); p != nil {
			q.ua, in.lastUA, in.lastUAS = p, p, *p
		} else if fits {
			newUA = true
			add += entryCost + int64(len(ua))
		} else {
			q.flags |= qOwnUA
		}
	}
	// What is not interned is the click's own.
	if q.flags&qOwnIDs != 0 {
		own := ids
		q.ids = &own
	}
	if q.flags&qOwnRef != 0 {
		own := ref
		q.ref = &own
	}
	if q.flags&qOwnUA != 0 {
		own := ua
		q.ua = &own
	}
	cost = q.cost() + add
	if cost > room {
		return queuedClick{}, cost, false
	}
	if q.flags&(qOwnIDs|qOwnRef|qOwnUA) != 0 {
		in.full = true
	}
	if newIDs {
		p := &clickIDs{string([]byte(ids.workspace)), string([]byte(ids.campaign))}
		in.ids[*p] = p
		q.ids, in.lastIDs = p, p
	}
	if newRef {
		q.ref = intern(in.refs, &in.refBytes, ref)
		in.lastRef, in.lastRefS = q.ref, *q.ref
	}
	if newUA {
		q.ua = intern(in.uas, &in.uaBytes, ua)
		in.lastUA, in.lastUAS = q.ua, *q.ua
	}
	in.bytes += add
	return q, cost, true
}

// cost returns what q costs in memory: queuedSize, its link ID and what
// else is its own rather than shared through the intern tables.
func (q *queuedClick) cost() int64 {
	n := queuedSize + int64(len(q.linkID))
	if c := q.full; c != nil {
		return n + fullSize + int64(len(c.WorkspaceID)+len(c.CampaignID)+len(c.Referrer)+len(c.UserAgent)+
			len(c.Browser)+len(c.OS)+len(c.Device)+len(c.Country))
	}
	if q.flags&qOwnIDs != 0 {
		n += int64(unsafe.Sizeof(clickIDs{})) + int64(len(q.ids.workspace)+len(q.ids.campaign))
	}
	if q.flags&qOwnRef != 0 {
		n += 16 + int64(len(*q.ref))
	}
	if q.flags&qOwnUA != 0 {
		n += 16 + int64(len(*q.ua))
	}
	return n
}

// click returns q as the link.Click it was made from.
func (q *queuedClick) click() link.Click {
	if q.full != nil {
		return *q.full
	}
	c := link.Click{LinkID: q.linkID, WorkspaceID: q.ids.workspace, CampaignID: q.ids.campaign,
		Time: time.Unix(0, q.nanos), Variant: q.variant}
	if q.flags&qUTC != 0 {
		c.Time = c.Time.UTC()
	}
	if q.ref != nil {
		c.Referrer = *q.ref
	}
	if q.ua != nil {
		c.UserAgent = *q.ua
	}
	switch q.addrKind {
	case 4:
		c.Addr = netip.AddrFrom4([4]byte(q.addr[:4]))
	case 6:
		c.Addr = netip.AddrFrom16(q.addr)
	}
	return c
}
