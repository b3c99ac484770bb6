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
// they are written, so the tables hold at most twice these besides the
// queue's bound (about 3 MiB in all). A value that is not interned is
// the click's own, counted in its cost.
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
	full              bool // a table filled up: start new ones at the next flush
	lastIDs           *clickIDs
	lastRef, lastUA   *string
	lastRefS, lastUAS string
}

func newInterner() *interner {
	return &interner{uas: map[string]*string{}, refs: map[string]*string{}, ids: map[clickIDs]*clickIDs{}}
}

// str returns s's interned copy and whether it is one, or a pointer to
// s of the click's own when the table is full.
func internStr(m map[string]*string, used *int, maxN, maxBytes int, full *bool, s string) (p *string, shared bool) {
	if p, ok := m[s]; ok {
		return p, true
	}
	if len(m) >= maxN || *used+len(s) > maxBytes {
		*full = true
		own := s
		return &own, false
	}
	c := string([]byte(s)) // a copy, so the table pins no request's header buffer
	p = &c
	m[c] = p
	*used += len(c)
	return p, true
}

// put converts c to its queued form and returns it with its cost in
// bytes: queuedSize plus the strings that are the click's own.
func (in *interner) put(c *link.Click) (queuedClick, int64) {
	q := queuedClick{linkID: c.LinkID, variant: c.Variant}
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
		return q, q.cost()
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
	if k := (clickIDs{c.WorkspaceID, c.CampaignID}); in.lastIDs != nil && *in.lastIDs == k {
		q.ids = in.lastIDs
	} else if p, ok := in.ids[k]; ok {
		q.ids, in.lastIDs = p, p
	} else if len(in.ids) < internIDs {
		p := &clickIDs{string([]byte(k.workspace)), string([]byte(k.campaign))}
		in.ids[*p] = p
		q.ids, in.lastIDs = p, p
	} else {
		in.full = true
		own := k
		q.ids = &own
		q.flags |= qOwnIDs
	}
	if c.Referrer != "" {
		if in.lastRef != nil && in.lastRefS == c.Referrer {
			q.ref = in.lastRef
		} else {
			p, shared := internStr(in.refs, &in.refBytes, internRefs, internBytes, &in.full, c.Referrer)
			q.ref = p
			if shared {
				in.lastRef, in.lastRefS = p, *p
			} else {
				q.flags |= qOwnRef
			}
		}
	}
	if ua := truncateUA(c.UserAgent); ua != "" {
		if in.lastUA != nil && in.lastUAS == ua {
			q.ua = in.lastUA
		} else {
			p, shared := internStr(in.uas, &in.uaBytes, internUAs, internBytes, &in.full, ua)
			q.ua = p
			if shared {
				in.lastUA, in.lastUAS = p, *p
			} else {
				q.flags |= qOwnUA
			}
		}
	}
	return q, q.cost()
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
