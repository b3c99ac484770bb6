package storage

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// FindLinkPage returns a page of the workspace's links, newest first, and
// the number of links matching the filter. ENOTFOUND for an unknown
// workspace.
//
// A search of 3 bytes or more without tags walks the search index's
// candidates (see link_search.go). Otherwise, with no tag it walks the
// campaign's index when a campaign is asked for, else the workspace
// index; with one tag that tag's index, with several tags a merge of
// their indexes (each link once). Search, campaign and domain are
// checked on the records met on that walk, at most f.ScanLimit of them. Without those filters, and with at most one tag,
// the total is read from a counter and the walk stops at the end of the
// page.
func (s *LinkService) FindLinkPage(ctx context.Context, f link.LinkFilter) (*link.LinkPage, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, f.WorkspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", f.WorkspaceID)
	}
	q := newLinkQuery(f)
	// Here rather than in newLinkQuery, so that the list stays on the stack.
	var tags []string
	for _, t := range f.Tags {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	q.tags = tags
	if f.Broken {
		// The broken links' index yields the candidates; the other
		// filters are tested on the records.
		q.broken = true
		q.match = brokenMatcher(tags, q.match)
	}
	if len(q.search) >= 3 && len(tags) == 0 && !q.broken {
		// The search index yields the candidates. With tags, the tags'
		// index does, as the scan limit has always bounded it.
		q.grams = trigrams(q.search)
	}
	if f.CampaignID != "" && q.grams == nil && len(tags) == 0 && !q.broken {
		// The campaign's index yields its links, however old: the
		// workspace's newest ScanLimit links may hold none of them. An id
		// that is no campaign's names no link (campaign ids start at 1).
		cid, _ := s.db.ids.parseID(prefixCampaign, f.CampaignID)
		q.campaign = concat(itob(wid), itob(cid))
	}
	page := &link.LinkPage{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		if err := q.filterArchived(tx, wid, f.Archived); err != nil {
			return err
		}
		var it linkIndex
		total, err := q.index(tx, wid, &it)
		if err != nil {
			return err
		}
		if f.Sort == link.SortClicks {
			page.Total, err = q.walkByClicks(tx, wid, &it, page)
			return err
		}
		n, err := q.walk(tx, wid, &it, page)
		if !q.counted() {
			total = n
		}
		page.Total = total
		return err
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

// linkQuery is a LinkFilter made ready for FindLinkPage's walk; the
// caller adds the tags.
type linkQuery struct {
	offset, limit, scanLimit int
	tags                     []string // trimmed, each once
	search                   string   // lower-cased
	grams                    []string // of search, when the search index finds the candidates
	campaign                 []byte   // the links.campaign prefix, when that index finds the candidates
	match                    func(*linkRecord) bool
	broken                   bool // the links_checks.broken index finds the candidates
}

func newLinkQuery(f link.LinkFilter) linkQuery {
	if f.Limit <= 0 {
		f.Limit = link.DefaultPageLimit
	}
	if f.Page <= 0 {
		f.Page = 1
	}
	offset := math.MaxInt - f.Limit // a page past any workspace, without overflow
	if f.Page-1 < offset/f.Limit {
		offset = f.Offset()
	}
	q := linkQuery{offset: offset, limit: f.Limit, scanLimit: f.ScanLimit,
		search: strings.ToLower(strings.TrimSpace(f.Search))}
	q.match = linkMatcher(f)
	return q
}

// counted reports whether the total is read from a counter, so that the
// walk stops at the end of the page: with no filter that needs the record
// and at most one tag.
func (q *linkQuery) counted() bool { return q.match == nil && len(q.tags) <= 1 && !q.broken }

// index sets it to the walk of the index the query reads, newest first:
// the workspace's, a campaign's, one tag's, or a merge of several tags'.
// When counted, it returns the total from that index's counter.
func (q *linkQuery) index(tx *bolt.Tx, wid uint64, it *linkIndex) (int, error) {
	var total uint64
	var err error
	if q.grams != nil {
		it.search = newSearchWalk(tx, wid, q.grams)
		return 0, nil
	}
	if q.campaign != nil {
		it.one.start(tx.Bucket(bucketLinksCampaign), q.campaign)
		return 0, nil
	}
	if q.broken {
		it.one.start(tx.Bucket(bucketLinkChecksBroken), itob(wid))
		return 0, nil
	}
	switch len(q.tags) {
	case 0:
		it.one.start(tx.Bucket(bucketLinksWorkspace), itob(wid))
		if q.counted() {
			total, err = counter(tx.Bucket(bucketLinksCount), itob(wid))
		}
	case 1:
		it.one.start(tx.Bucket(bucketLinksTag), tagPrefix(wid, q.tags[0]))
		if q.counted() {
			total, err = counter(tx.Bucket(bucketLinksTagCount), tagCountKey(wid, q.tags[0]))
		}
	default:
		it.merged = &mergedIndex{}
		for _, t := range q.tags {
			it.merged.its = append(it.merged.its, newReverseIndex(tx.Bucket(bucketLinksTag), tagPrefix(wid, t)))
		}
	}
	return int(total), err
}

// walk reads the links it yields, checks them against the filters, and
// puts the ones of the page in page.Links; it returns the number of
// matching links it met (all of them unless counted or truncated) and
// sets page.Truncated when it stopped at the scan limit.
func (q *linkQuery) walk(tx *bolt.Tx, wid uint64, it *linkIndex, page *link.LinkPage) (int, error) {
	page.Links = []*link.Link{}
	counted := q.counted()
	links := linkReader{c: tx.Bucket(bucketLinks).Cursor()}
	n, scanned := 0, 0
	for idb := it.next(); idb != nil; idb = it.next() {
		if counted && n >= q.offset+q.limit {
			break
		}
		if q.match != nil && q.scanLimit > 0 && scanned == q.scanLimit {
			page.Truncated = true
			break
		}
		// Records are read only where needed: to filter, or for the page.
		inPage := n >= q.offset && len(page.Links) < q.limit
		if q.match == nil && !inPage {
			n++
			continue
		}
		raw, err := links.get(idb)
		if err != nil {
			return n, err
		}
		scanned++
		var rec linkRecord
		if err := decodeLink(raw, &rec); err != nil {
			return n, fmt.Errorf("link %x: %w", idb, err)
		}
		if rec.Workspace != wid {
			return n, fmt.Errorf("link index: link %x belongs to workspace %d, not %d", idb, rec.Workspace, wid)
		}
		if q.match != nil && !q.match(&rec) {
			continue
		}
		if inPage {
			l, err := linkWithClicks(tx, btoi(idb), &rec)
			if err != nil {
				return n, err
			}
			page.Links = append(page.Links, l)
		}
		n++
	}
	return n, it.err
}

// walkByClicks is walk for SortClicks: it reads the click counter of
// every link the index yields (checking the filters that need the record
// first), at most scanLimit links, and puts the page of the most clicked
// in page.Links, the newest first among links with as many clicks. It
// returns the number of matching links it met and sets page.Truncated when
// it stopped at the scan limit. It holds 16 bytes per matching link.
func (q *linkQuery) walkByClicks(tx *bolt.Tx, wid uint64, it *linkIndex, page *link.LinkPage) (int, error) {
	page.Links = []*link.Link{}
	type ranked struct {
		clicks uint64
		id     uint64
	}
	var all []ranked
	links := linkReader{c: tx.Bucket(bucketLinks).Cursor()}
	scanned := 0
	for idb := it.next(); idb != nil; idb = it.next() {
		if q.scanLimit > 0 && scanned == q.scanLimit {
			page.Truncated = true
			break
		}
		scanned++
		if q.match != nil {
			raw, err := links.get(idb)
			if err != nil {
				return len(all), err
			}
			var rec linkRecord
			if err := decodeLink(raw, &rec); err != nil {
				return len(all), fmt.Errorf("link %x: %w", idb, err)
			}
			if rec.Workspace != wid {
				return len(all), fmt.Errorf("link index: link %x belongs to workspace %d, not %d", idb, rec.Workspace, wid)
			}
			if !q.match(&rec) {
				continue
			}
		}
		n, err := linkClicks(tx, btoi(idb))
		if err != nil {
			return len(all), err
		}
		all = append(all, ranked{clicks: n, id: btoi(idb)})
	}
	if it.err != nil {
		return len(all), it.err
	}
	// Stable: the walk met the links newest first.
	slices.SortStableFunc(all, func(a, b ranked) int { return cmp.Compare(b.clicks, a.clicks) })
	if q.offset >= len(all) {
		return len(all), nil
	}
	for _, r := range all[q.offset:min(len(all), q.offset+q.limit)] {
		rec, err := findLink(tx, wid, r.id)
		if err != nil {
			return len(all), fmt.Errorf("link index: %w", err)
		}
		page.Links = append(page.Links, rec.link(idsOf(tx), r.id, r.clicks))
	}
	return len(all), nil
}

// linkReader reads link records by ID through one cursor (a Get per link
// would allocate a cursor each time). Walking newest first, the wanted
// link is often the one before the last, which Prev reaches cheaply.
type linkReader struct {
	c      *bolt.Cursor
	seeked bool
}

// get returns the encoded record of the link idb; an index entry with no
// record is an error.
func (r *linkReader) get(idb []byte) ([]byte, error) {
	var k, raw []byte
	if r.seeked {
		k, raw = r.c.Prev()
	}
	if !bytes.Equal(k, idb) {
		k, raw = r.c.Seek(idb)
		r.seeked = true
	}
	if !bytes.Equal(k, idb) {
		return nil, fmt.Errorf("link index: link %x missing", idb)
	}
	return raw, nil
}

// linkMatcher returns the test of the filters that need the record, or
// nil when there are none.
func linkMatcher(f link.LinkFilter) func(*linkRecord) bool {
	search := strings.ToLower(strings.TrimSpace(f.Search))
	campaign := f.CampaignID
	domain := f.Domain
	if search == "" && campaign == "" && domain == nil {
		return nil
	}
	if domain != nil {
		d := strings.ToLower(strings.TrimSpace(*domain))
		domain = &d
	}
	return func(r *linkRecord) bool {
		if campaign != "" && r.CampaignID != campaign {
			return false
		}
		if domain != nil && r.Domain != *domain {
			return false
		}
		if search != "" && !searchMatches(r, search) {
			return false
		}
		return true
	}
}

// brokenMatcher returns match with the tags tested too: a list of broken
// links walks their index, not the tags'.
func brokenMatcher(tags []string, match func(*linkRecord) bool) func(*linkRecord) bool {
	if len(tags) == 0 {
		return match
	}
	return func(r *linkRecord) bool {
		for _, t := range tags {
			if slices.Contains(r.Tags, t) {
				return match == nil || match(r)
			}
		}
		return false
	}
}

// linkIndex yields link IDs (8-byte keys) newest first, nil at the end:
// from one index, merged from several, or from the search index (whose
// error, if any, ends the walk and is kept in err).
type linkIndex struct {
	one    reverseIndex
	merged *mergedIndex // when set, the walk
	search *searchWalk  // when set, the walk
	err    error
}

func (it *linkIndex) next() []byte {
	if it.search != nil {
		id, err := it.search.next()
		if err != nil {
			it.err = err
			return nil
		}
		return id
	}
	if it.merged != nil {
		return it.merged.next()
	}
	return it.one.next()
}

// mergedIndex merges reverse index walks into one, newest first, each ID once.
type mergedIndex struct {
	its []*reverseIndex
	cur [8]byte
}

func (m *mergedIndex) next() []byte {
	var max []byte
	for _, it := range m.its {
		if id := it.peek(); id != nil && (max == nil || bytes.Compare(id, max) > 0) {
			max = id
		}
	}
	if max == nil {
		return nil
	}
	copy(m.cur[:], max) // the cursors move below
	for _, it := range m.its {
		if id := it.peek(); id != nil && bytes.Equal(id, m.cur[:]) {
			it.next()
		}
	}
	return m.cur[:]
}
