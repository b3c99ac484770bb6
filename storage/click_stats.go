package storage

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// DefaultTopLimit is the length of top lists when the filter gives none.
const DefaultTopLimit = 10

// Stats answers analytics from the aggregates in one read transaction.
// The range is rounded out to whole UTC hours. Hourly holds each non-empty
// hour with all its clicks and its bot clicks, whatever ExcludeBots says;
// Clicks, UniqueVisitors and the top lists leave bots out when it is set.
// The top lists sum the daily counts of the UTC days wholly inside the
// range and the hourly counts of the hours at its edges, so a range of
// days in any time zone is exact. A link's own top list of links is
// empty. TopLimit 0 means DefaultTopLimit, and below 0 no limit.
// ENOTFOUND for an unknown workspace, and for a link or campaign ID not of
// the workspace; EINVALID for an unknown scope or an end before the start.
//
// A campaign answers from the aggregates of its ID in the workspace, zeros
// when there are none; callers check that the campaign exists (the server
// answers 404 for an unknown one before asking).
func (s *ClickService) Stats(ctx context.Context, f link.StatsFilter) (*link.Stats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wid, ok := s.db.ids.parseID(prefixWorkspace, f.WorkspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", f.WorkspaceID)
	}
	if f.End.Before(f.Start) {
		return nil, link.Errorf(link.EINVALID, "range end %s is before its start %s", f.End.Format(time.RFC3339), f.Start.Format(time.RFC3339))
	}
	var scope []byte
	var lid uint64
	switch f.Scope {
	case link.ScopeWorkspace:
		scope = workspaceScope(wid)
	case link.ScopeLink:
		if lid, ok = s.db.ids.parseID(prefixLink, f.ID); !ok {
			return nil, link.Errorf(link.ENOTFOUND, "link %q not found", f.ID)
		}
		scope = linkScope(lid)
	case link.ScopeCampaign:
		if !validCampaignID(f.ID) {
			return nil, link.Errorf(link.ENOTFOUND, "campaign %q not found", f.ID)
		}
		scope = campaignScope(wid, f.ID)
	default:
		return nil, link.Errorf(link.EINVALID, "unknown analytics scope %q", f.Scope)
	}
	limit := f.TopLimit
	if limit == 0 {
		limit = DefaultTopLimit
	}
	q := statsQuery{scope: scope, start: floorHour(f.Start), end: ceilHour(f.End), excludeBots: f.ExcludeBots, limit: limit}
	if f.Scope == link.ScopeLink {
		q.firstDim = dimReferrers
	}
	var st *link.Stats
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if f.Scope == link.ScopeLink {
			if _, err := findLink(tx, wid, lid); err != nil {
				return err
			}
		} else if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		var err error
		st, err = q.run(tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// floorHour and ceilHour turn a time into a unix hour, clamped to the
// hours aggregate keys hold.
func floorHour(t time.Time) uint32 {
	sec := t.Unix()
	if sec < 0 {
		return 0
	}
	if !t.Before(maxClickTime) {
		return uint32(maxClickTime.Unix() / secondsPerHour)
	}
	return uint32(sec / secondsPerHour)
}

func ceilHour(t time.Time) uint32 {
	h := floorHour(t)
	if hourTime(h).Before(t) && t.Before(maxClickTime) {
		h++
	}
	return h
}

// statsQuery is one Stats call on one scope over the hours [start, end).
type statsQuery struct {
	scope       []byte
	start, end  uint32
	excludeBots bool
	limit       int
	firstDim    byte // dimLinks, or dimReferrers for a link

	st     *link.Stats
	bots   int64
	accs   [numDims]*topAcc
	hourly *bolt.Bucket
	daily  *bolt.Bucket
	// hoursFrom is the first hour whose per-link hourly blobs are kept
	// (see RollUpLinkHours).
	hoursFrom uint32
}

func (q *statsQuery) run(tx *bolt.Tx) (*link.Stats, error) {
	q.st = &link.Stats{Hourly: []link.Bucket{}, Top: make(map[string][]link.TopEntry, numDims)}
	for _, name := range dimNames {
		q.st.Top[name] = []link.TopEntry{}
	}
	if q.end <= q.start {
		return q.st, nil
	}
	q.hourly, q.daily = tx.Bucket(bucketClicksHourly), tx.Bucket(bucketClicksDaily)
	q.hoursFrom = linkHoursFrom(tx)
	for d := q.firstDim; d < numDims; d++ {
		q.accs[d] = newTopAcc()
	}
	var err error
	if q.scope[0] == scopeKindLink {
		err = q.readLink()
	} else {
		err = q.readRanges()
	}
	if err != nil {
		return nil, err
	}
	q.st.BotClicks = q.bots
	if q.excludeBots {
		q.st.Clicks -= q.bots
	}
	for d := q.firstDim; d < numDims; d++ {
		q.st.Top[dimNames[d]] = q.accs[d].top(idsOf(tx), d, q.excludeBots, q.limit)
	}
	return q.st, nil
}

// The top lists sum the daily blobs of the UTC days wholly inside the
// range and the hourly blobs of the hours of the partial days at its
// edges; the hourly totals come from the hourly blobs' headers, the unique
// visitors from the daily blobs of every day the range touches.

// wholeDay reports whether the UTC day d lies inside the range.
func (q *statsQuery) wholeDay(d uint32) bool {
	return d*hoursPerDay >= q.start && (d+1)*hoursPerDay <= q.end
}

func (q *statsQuery) addHour(k, v []byte, h uint32, top bool) error {
	n, b, err := periodClicks(v)
	if err != nil {
		return fmt.Errorf("hourly clicks %x: %w", k, err)
	}
	q.st.Hourly = append(q.st.Hourly, link.Bucket{Start: hourTime(h), Clicks: int64(n), BotClicks: int64(b)})
	q.st.Clicks += int64(n)
	q.bots += int64(b)
	if top {
		return q.addTop(k, v, false)
	}
	return nil
}

func (q *statsQuery) addDay(k, v []byte, d uint32) error {
	h, _, err := parsePeriodBlob(v, true)
	if err != nil {
		return fmt.Errorf("daily clicks %x: %w", k, err)
	}
	if q.excludeBots {
		q.st.UniqueVisitors += int64(h.humans)
	} else {
		q.st.UniqueVisitors += int64(h.visitors)
	}
	if q.wholeDay(d) {
		return q.addTop(k, v, true)
	}
	return nil
}

func (q *statsQuery) addTop(k, v []byte, daily bool) error {
	_, sections, err := parsePeriodBlob(v, daily)
	if err != nil {
		return fmt.Errorf("clicks %x: %w", k, err)
	}
	for d := q.firstDim; d < numDims; d++ {
		if err := q.accs[d].addSection(d, sections[d]); err != nil {
			return fmt.Errorf("clicks %x: %w", k, err)
		}
	}
	return nil
}

// readRanges reads a workspace or campaign: its keys are scope first, so
// the hours and the days of the range are one walk each.
func (q *statsQuery) readRanges() error {
	c := q.hourly.Cursor()
	for k, v := c.Seek(periodBlobKey(q.scope, q.start)); k != nil && bytes.HasPrefix(k, q.scope); k, v = c.Next() {
		h, ok := periodOf(k, len(q.scope))
		if !ok {
			return fmt.Errorf("hourly clicks %x: malformed key", k)
		}
		if h >= q.end {
			break
		}
		if err := q.addHour(k, v, h, !q.wholeDay(h/hoursPerDay)); err != nil {
			return err
		}
	}
	lastDay := (q.end - 1) / hoursPerDay
	c = q.daily.Cursor()
	for k, v := c.Seek(periodBlobKey(q.scope, q.start/hoursPerDay)); k != nil && bytes.HasPrefix(k, q.scope); k, v = c.Next() {
		d, ok := periodOf(k, len(q.scope))
		if !ok {
			return fmt.Errorf("daily clicks %x: malformed key", k)
		}
		if d > lastDay {
			break
		}
		if err := q.addDay(k, v, d); err != nil {
			return err
		}
	}
	return nil
}

// addRolledDay adds a day of a link whose hours are rolled up (see
// RollUpLinkHours) from its daily blob: the whole day, even at an edge of
// the range, as one hour at 12:00 UTC in the time series (which folds it
// into that day in any time zone within 12 hours of UTC).
func (q *statsQuery) addRolledDay(k, v []byte, d uint32) error {
	h, _, err := parsePeriodBlob(v, true)
	if err != nil {
		return fmt.Errorf("daily clicks %x: %w", k, err)
	}
	q.st.Hourly = append(q.st.Hourly, link.Bucket{Start: hourTime(d*hoursPerDay + hoursPerDay/2), Clicks: int64(h.clicks), BotClicks: int64(h.bots)})
	q.st.Clicks += int64(h.clicks)
	q.bots += int64(h.bots)
	if q.excludeBots {
		q.st.UniqueVisitors += int64(h.humans)
	} else {
		q.st.UniqueVisitors += int64(h.visitors)
	}
	return q.addTop(k, v, true)
}

// readLink reads a link: its keys are time first, so it looks up each day
// of the range that any link has clicks on, and the hours of the days its
// link has clicks on (but for the days rolled up, see addRolledDay).
func (q *statsQuery) readLink() error {
	first, last, ok := linkDays(q.daily)
	if !ok {
		return nil
	}
	first, last = max(first, q.start/hoursPerDay), min(last, (q.end-1)/hoursPerDay)
	for d := first; d <= last && d >= first; d++ {
		k := periodBlobKey(q.scope, d)
		v := q.daily.Get(k)
		if v == nil {
			continue
		}
		if (d+1)*hoursPerDay <= q.hoursFrom {
			if err := q.addRolledDay(k, v, d); err != nil {
				return err
			}
			continue
		}
		if err := q.addDay(k, v, d); err != nil {
			return err
		}
		whole := q.wholeDay(d)
		for h := max(d*hoursPerDay, q.start); h < min((d+1)*hoursPerDay, q.end); h++ {
			k := periodBlobKey(q.scope, h)
			if v := q.hourly.Get(k); v != nil {
				if err := q.addHour(k, v, h, !whole); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// linkDays returns the first and the last period of the links' time-first
// keys in b (days in clicks.daily).
func linkDays(b *bolt.Bucket) (first, last uint32, ok bool) {
	c := b.Cursor()
	k, _ := c.Seek([]byte{scopeKindLink})
	if k == nil || k[0] != scopeKindLink || len(k) < 5 {
		return 0, 0, false
	}
	first = binary.BigEndian.Uint32(k[1:])
	if k, _ = c.Seek([]byte{scopeKindLink + 1}); k != nil {
		k, _ = c.Prev()
	} else {
		k, _ = c.Last()
	}
	if k == nil || k[0] != scopeKindLink || len(k) < 5 {
		return 0, 0, false
	}
	return first, binary.BigEndian.Uint32(k[1:]), true
}

// periodOf returns the 4-byte period after a prefix of n bytes.
func periodOf(k []byte, n int) (uint32, bool) {
	if len(k) != n+4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(k[n:]), true
}

// topAcc sums the entries of sections by value.
type topAcc struct {
	index map[string]int32
	ids   map[uint64]int32 // the links dimension
	items []topItem
}

type topItem struct {
	val        string
	id         uint64
	human, bot int64
}

func newTopAcc() *topAcc { return &topAcc{index: map[string]int32{}, ids: map[uint64]int32{}} }

func (a *topAcc) addSection(dim byte, sec section) error {
	r := newBlobReader(dim, sec)
	for {
		val, human, bot, ok, err := r.next()
		if err != nil || !ok {
			return err
		}
		var i int32
		var found bool
		if dim == dimLinks {
			if i, found = a.ids[r.prevID]; !found {
				i = int32(len(a.items))
				a.items = append(a.items, topItem{id: r.prevID})
				a.ids[r.prevID] = i
			}
		} else if i, found = a.index[string(val)]; !found {
			i = int32(len(a.items))
			a.items = append(a.items, topItem{val: string(val)})
			a.index[a.items[i].val] = i
		}
		a.items[i].human += int64(human)
		a.items[i].bot += int64(bot)
	}
}

// top returns the entries with clicks, most first, ties by value, at most
// limit of them (all when limit < 0). Link IDs cost an encryption each,
// so they are formatted only for the entries that can make the list: those
// above the cut, and those tied with the last one kept.
func (a *topAcc) top(ids *idCodec, dim byte, excludeBots bool, limit int) []link.TopEntry {
	type entry struct {
		id uint64
		link.TopEntry
	}
	es := make([]entry, 0, len(a.items))
	for _, it := range a.items {
		n := it.human
		if !excludeBots {
			n += it.bot
		}
		if n == 0 {
			continue
		}
		es = append(es, entry{id: it.id, TopEntry: link.TopEntry{Value: it.val, Clicks: n}})
	}
	if dim == dimLinks {
		slices.SortFunc(es, func(x, y entry) int { return cmp.Compare(y.Clicks, x.Clicks) })
		if limit >= 0 && len(es) > limit {
			n := limit
			for n > 0 && n < len(es) && es[n].Clicks == es[n-1].Clicks {
				n++
			}
			es = es[:n]
		}
		for i := range es {
			es[i].Value = ids.formatID(prefixLink, es[i].id)
		}
	}
	slices.SortFunc(es, func(x, y entry) int {
		return cmp.Or(cmp.Compare(y.Clicks, x.Clicks), cmp.Compare(x.Value, y.Value))
	})
	if limit >= 0 && len(es) > limit {
		es = es[:limit]
	}
	out := make([]link.TopEntry, len(es))
	for i, e := range es {
		out[i] = e.TopEntry
	}
	return out
}
