package storage

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.LinkService = (*LinkService)(nil)

// LinkService keeps links in bbolt with their indexes: alias (unique per
// domain), workspace and workspace+tag (newest first by reverse cursor),
// and the per-workspace and per-tag link counters that give list totals
// without counting.
type LinkService struct {
	db *DB
	// AliasHold is how long an alias freed by a deletion or a change of
	// alias stays held for its workspace (links.alias_hold); zero or less
	// holds nothing. NewLinkService sets DefaultAliasHold.
	AliasHold time.Duration
	// Events encodes the link.created, link.updated and link.deleted
	// events that every change of a link writes in its transaction; nil
	// writes none.
	Events link.EventEncoder
}

// emit writes the event of a change of l, when events are encoded.
func (s *LinkService) emit(tx *bolt.Tx, wid uint64, eventType string, l *link.Link) error {
	return appendLinkEvent(tx, s.Events, wid, eventType, l, s.db.now())
}

// NewLinkService returns the link service of db.
func NewLinkService(db *DB) *LinkService { return &LinkService{db: db, AliasHold: DefaultAliasHold} }

type linkRecord struct {
	Workspace    uint64    `json:"ws"`
	Alias        string    `json:"alias"`
	Domain       string    `json:"domain,omitempty"`
	Destination  string    `json:"dest"`
	Tags         []string  `json:"tags,omitempty"`
	UTMSource    string    `json:"utm_source,omitempty"`
	UTMMedium    string    `json:"utm_medium,omitempty"`
	UTMCampaign  string    `json:"utm_campaign,omitempty"`
	CampaignID   string    `json:"campaign_id,omitempty"`
	RedirectCode int       `json:"redirect_code"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	// link controls: password, rules, variants, social card
	linkControls

	linkLimitsRecord
}

func (r *linkRecord) link(ids *idCodec, id uint64, clicks uint64) *link.Link {
	l := &link.Link{
		ID:             ids.formatID(prefixLink, id),
		WorkspaceID:    ids.formatID(prefixWorkspace, r.Workspace),
		Alias:          r.Alias,
		Domain:         r.Domain,
		DestinationURL: r.Destination,
		Tags:           slices.Clone(r.Tags),
		UTMSource:      r.UTMSource,
		UTMMedium:      r.UTMMedium,
		UTMCampaign:    r.UTMCampaign,
		CampaignID:     r.CampaignID,
		RedirectCode:   r.RedirectCode,
		Clicks:         int64(clicks),
		CreatedAt:      r.CreatedAt,
		UpdatedAt:      r.UpdatedAt,
	}
	r.controls(l)
	l.LinkLimits = r.limits()
	return l
}

func aliasKey(domain, alias string) []byte {
	return concat([]byte(domain), []byte{0}, []byte(alias))
}

func tagPrefix(wid uint64, tag string) []byte {
	return concat(itob(wid), []byte(tag), []byte{0})
}

func tagCountKey(wid uint64, tag string) []byte {
	return concat(itob(wid), []byte(tag))
}

// FindLinkByID returns a link of the workspace. ENOTFOUND, also for a link
// of another workspace.
func (s *LinkService) FindLinkByID(ctx context.Context, workspaceID, id string) (*link.Link, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	lid, ok2 := s.db.ids.parseID(prefixLink, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	var l *link.Link
	err := s.db.db.View(func(tx *bolt.Tx) error {
		rec, err := findLink(tx, wid, lid)
		if err != nil {
			return err
		}
		l, err = linkWithClicks(tx, lid, rec)
		return err
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// FindLinkByAlias returns the link for a redirect, from the redirect cache
// or one short read transaction. Its UTM fields are the ones a redirect
// uses: the link's own, or its campaign's where it has none. Its Clicks is
// not filled in, and the link is shared with other redirects: callers must
// not modify it.
// ENOTFOUND.
func (s *LinkService) FindLinkByAlias(ctx context.Context, domain, alias string) (*link.Link, error) {
	domain = strings.ToLower(domain)
	key := string(aliasKey(domain, alias))
	cache := &s.db.aliases
	if l, ok := cache.get(key); ok {
		return l, nil
	}
	gen := cache.generation()
	var l *link.Link
	err := s.db.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketLinksAlias).Get([]byte(key))
		if v == nil {
			return link.Errorf(link.ENOTFOUND, "no link %q", alias)
		}
		lid := btoi(v)
		rec, err := findLink(tx, 0, lid)
		if err != nil {
			return fmt.Errorf("alias index: %w", err)
		}
		l = rec.link(s.db.ids, lid, 0)
		// A redirect uses the campaign's UTM values where the link has none.
		if cid, ok := s.db.ids.parseID(prefixCampaign, rec.CampaignID); ok {
			if c, err := findCampaign(tx, rec.Workspace, cid); err == nil {
				l.UTMSource = cmp.Or(l.UTMSource, c.UTMSource)
				l.UTMMedium = cmp.Or(l.UTMMedium, c.UTMMedium)
				l.UTMCampaign = cmp.Or(l.UTMCampaign, c.UTMCampaign)
			} else if link.ErrorCode(err) != link.ENOTFOUND {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	cache.put(key, l, gen)
	return l, nil
}

// FindLinkPage returns a page of the workspace's links, newest first, and
// the number of links matching the filter. ENOTFOUND for an unknown
// workspace.
//
// A search of 3 bytes or more without tags walks the search index's
// candidates (see search.go). Otherwise, with no tag it walks the
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
	if len(q.search) >= 3 && len(tags) == 0 {
		// The search index yields the candidates. With tags, the tags'
		// index does, as the scan limit has always bounded it.
		q.grams = trigrams(q.search)
	}
	if f.CampaignID != "" && q.grams == nil && len(tags) == 0 {
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
func (q *linkQuery) counted() bool { return q.match == nil && len(q.tags) <= 1 }

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

// linkCount says how many links n is, in words: "1 link", "2 links".
func linkCount(n int) string {
	if n == 1 {
		return "1 link"
	}
	return fmt.Sprintf("%d links", n)
}

// themFor is the pronoun of n links: "it" for one, "them" otherwise.
func themFor(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
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

// CreateLink stores a link, generating a code when the alias is empty;
// sets ID, Alias, CreatedAt, UpdatedAt (and the normalised fields) once
// the link is durable. ENOTFOUND for an unknown workspace; EINVALID
// (field domain) unless Domain is empty or a verified domain of the
// workspace; ECONFLICT if the alias is taken on the domain.
//
// Concurrent creations share one commit and one write of the search
// index (see creationBatch). The batch function may run more than once,
// so it computes everything from the input and the result reaches l only
// after success.
func (s *LinkService) CreateLink(ctx context.Context, l *link.Link) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	wid, ok := s.db.ids.parseID(prefixWorkspace, l.WorkspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", l.WorkspaceID)
	}
	in := *l
	in.Tags = slices.Clone(l.Tags)
	in.Normalize()
	now := s.db.now()

	var created *link.Link
	err := s.db.batchIndexed(func(tx *bolt.Tx, ix *searchIndexer) error {
		created = nil
		if err := workspaceExists(tx, wid); err != nil {
			return refusal{err}
		}
		rec := newLinkRecord(wid, &in, now)
		id, err := addLink(tx, rec, ix)
		if code := link.ErrorCode(err); code == link.ECONFLICT || code == link.EINVALID {
			return refusal{err} // addLink checks before it writes
		} else if err != nil {
			return err
		}
		created = rec.link(s.db.ids, id, 0)
		return s.emit(tx, wid, link.EventLinkCreated, created)
	})
	if err != nil {
		return err
	}
	*l = *created
	return nil
}

// newLinkRecord is the record of the new link in of workspace wid,
// created at now.
func newLinkRecord(wid uint64, in *link.Link, now time.Time) *linkRecord {
	rec := &linkRecord{
		Workspace:    wid,
		Alias:        in.Alias,
		Domain:       in.Domain,
		Destination:  in.DestinationURL,
		Tags:         in.Tags,
		UTMSource:    in.UTMSource,
		UTMMedium:    in.UTMMedium,
		UTMCampaign:  in.UTMCampaign,
		CampaignID:   in.CampaignID,
		RedirectCode: in.RedirectCode,
		CreatedAt:    now,
		UpdatedAt:    now,
	}
	rec.linkLimitsRecord = limitsRecord(in.LinkLimits)
	rec.setControls(in)
	return rec
}

// addLink stores a link record with all its index entries and counters;
// an empty alias is replaced by a generated code. A non-empty rec.Domain
// must be a verified domain of rec.Workspace, checked here, in the
// transaction that stores the link (EINVALID, field domain). The link's
// search index entries are gathered in ix, for the caller to write
// (several links' at once). It checks everything that can refuse the link
// (domain, campaign, alias) before it writes anything, so that a refused
// link leaves the transaction as it was.
func addLink(tx *bolt.Tx, rec *linkRecord, ix *searchIndexer) (uint64, error) {
	if rec.Domain != "" {
		if err := domainForLink(tx, rec.Workspace, rec.Domain); err != nil {
			return 0, err
		}
	}
	var cid uint64
	if rec.CampaignID != "" {
		var err error
		if cid, err = campaignForLink(tx, rec.Workspace, rec.CampaignID); err != nil {
			return 0, err
		}
	}
	aliases := tx.Bucket(bucketLinksAlias)
	if rec.Alias == "" {
		code, err := freeCode(tx, rec.Domain, rec.UpdatedAt) // now, also for an imported link's past CreatedAt
		if err != nil {
			return 0, err
		}
		rec.Alias = code
	} else if err := takeAlias(tx, aliasKey(rec.Domain, rec.Alias), rec.Alias, rec.Workspace, rec.UpdatedAt); err != nil {
		return 0, err
	}
	links := tx.Bucket(bucketLinks)
	id, err := nextID(links)
	if err != nil {
		return 0, err
	}
	idb := itob(id)
	// Links take ever larger IDs, so records and the indexes keyed by
	// workspace (or tag, or campaign) and then ID grow at the end of their
	// ranges: filling the pages before a split leaves them full rather
	// than half empty. Aliases come in any order and keep bolt's default.
	links.FillPercent = linkFill
	if err := putLink(links, idb, rec); err != nil {
		return 0, err
	}
	if err := aliases.Put(aliasKey(rec.Domain, rec.Alias), idb); err != nil {
		return 0, fmt.Errorf("index alias: %w", err)
	}
	byWorkspace := tx.Bucket(bucketLinksWorkspace)
	byWorkspace.FillPercent = linkFill
	tx.Bucket(bucketLinksCampaign).FillPercent = linkFill
	tx.Bucket(bucketLinksTag).FillPercent = linkFill
	if err := byWorkspace.Put(concat(itob(rec.Workspace), idb), []byte{}); err != nil {
		return 0, fmt.Errorf("index link workspace: %w", err)
	}
	if cid != 0 {
		if err := tx.Bucket(bucketLinksCampaign).Put(campaignLinkKey(rec.Workspace, cid, id), []byte{}); err != nil {
			return 0, fmt.Errorf("index link campaign: %w", err)
		}
	}
	if err := addCounter(tx.Bucket(bucketLinksCount), itob(rec.Workspace), 1); err != nil {
		return 0, err
	}
	if err := countArchived(tx, rec.Workspace, false, rec.Archived); err != nil {
		return 0, err
	}
	for _, t := range rec.Tags {
		if err := addTag(tx, rec.Workspace, t, idb); err != nil {
			return 0, err
		}
	}
	ix.add(id, rec)
	return id, nil
}

// linkFill is the fill of the pages of links and of their indexes by
// workspace, tag and campaign, which new links append to.
const linkFill = 0.9

func addTag(tx *bolt.Tx, wid uint64, tag string, idb []byte) error {
	if err := tx.Bucket(bucketLinksTag).Put(concat(tagPrefix(wid, tag), idb), []byte{}); err != nil {
		return fmt.Errorf("index tag: %w", err)
	}
	return addCounter(tx.Bucket(bucketLinksTagCount), tagCountKey(wid, tag), 1)
}

func removeTag(tx *bolt.Tx, wid uint64, tag string, idb []byte) error {
	if err := tx.Bucket(bucketLinksTag).Delete(concat(tagPrefix(wid, tag), idb)); err != nil {
		return fmt.Errorf("unindex tag: %w", err)
	}
	return addCounter(tx.Bucket(bucketLinksTagCount), tagCountKey(wid, tag), -1)
}

// codeAttempts bounds the search for a free generated code; with 62^7
// codes a second attempt is already rare.
const codeAttempts = 10

// freeCode returns a random code not taken nor held on the domain at now.
func freeCode(tx *bolt.Tx, domain string, now time.Time) (string, error) {
	aliases := tx.Bucket(bucketLinksAlias)
	for range codeAttempts {
		code := newCode()
		if link.IsReserved(code) {
			continue
		}
		if key := aliasKey(domain, code); aliases.Get(key) == nil && !aliasHeld(tx, key, now) {
			return code, nil
		}
	}
	return "", errors.New("storage: no free short code found")
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newCode returns link.GeneratedCodeLength random base62 characters from
// crypto/rand, without modulo bias.
func newCode() string {
	var out [link.GeneratedCodeLength]byte
	var buf [16]byte
	n := 0
	for n < len(out) {
		_, _ = rand.Read(buf[:]) // never fails (the program crashes instead)
		for _, b := range buf {
			if b >= 62*4 {
				continue
			}
			out[n] = base62[b%62]
			if n++; n == len(out) {
				break
			}
		}
	}
	return string(out[:])
}

// UpdateLink applies an update in one transaction: it loads the link,
// applies upd, calls validate (whose error is returned unchanged), moves
// the alias index if the alias changed (an empty alias gets a new code;
// the old alias is held for the workspace for AliasHold)
// and the tag indexes and counters if the tags changed, and sets
// UpdatedAt. validate runs inside the write transaction: it may read
// through the services but must not write. ENOTFOUND, ECONFLICT (alias).
func (s *LinkService) UpdateLink(ctx context.Context, workspaceID, id string, upd link.LinkUpdate, validate func(*link.Link) error) (*link.Link, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	lid, ok2 := s.db.ids.parseID(prefixLink, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	now := s.db.now()
	var out *link.Link
	var oldKey []byte
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findLink(tx, wid, lid)
		if err != nil {
			return err
		}
		oldKey = aliasKey(rec.Domain, rec.Alias)
		l, err := linkWithClicks(tx, lid, rec)
		if err != nil {
			return err
		}
		upd.Apply(l)
		if validate != nil {
			if err := validate(l); err != nil {
				return err
			}
		}
		idb := itob(lid)

		var ix searchIndexer
		ix.remove(lid, rec)
		alias, err := s.moveAlias(tx, wid, idb, rec, l.Alias, now)
		if err != nil {
			return err
		}
		if err := moveTags(tx, wid, idb, rec.Tags, l.Tags); err != nil {
			return err
		}

		rec.Alias = alias
		rec.Destination = l.DestinationURL
		rec.Tags = l.Tags
		rec.UTMSource, rec.UTMMedium, rec.UTMCampaign = l.UTMSource, l.UTMMedium, l.UTMCampaign
		if err := s.moveCampaign(tx, wid, lid, rec.CampaignID, l.CampaignID); err != nil {
			return err
		}
		rec.CampaignID = l.CampaignID
		rec.RedirectCode = l.RedirectCode
		// link controls: expiry and limits
		if err := countArchived(tx, wid, rec.Archived, l.Archived); err != nil {
			return err
		}
		rec.linkLimitsRecord = limitsRecord(l.LinkLimits)
		rec.setControls(l)
		rec.UpdatedAt = now
		if err := putLink(tx.Bucket(bucketLinks), idb, rec); err != nil {
			return err
		}
		ix.add(lid, rec)
		if err := ix.write(tx); err != nil {
			return err
		}
		out = rec.link(s.db.ids, lid, uint64(l.Clicks))
		return s.emit(tx, wid, link.EventLinkUpdated, out)
	})
	if oldKey != nil {
		s.db.aliases.forget(string(oldKey))
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// moveAlias gives the link idb of record rec the alias it is updated to
// (an empty alias gets a new code) and returns it. A changed alias takes
// the new index entry, and the old one is held for the workspace for
// AliasHold. ECONFLICT when the alias is taken.
func (s *LinkService) moveAlias(tx *bolt.Tx, wid uint64, idb []byte, rec *linkRecord, alias string, now time.Time) (string, error) {
	if alias == "" {
		var err error
		if alias, err = freeCode(tx, rec.Domain, now); err != nil {
			return "", err
		}
	}
	if alias == rec.Alias {
		return alias, nil
	}
	aliases := tx.Bucket(bucketLinksAlias)
	if err := takeAlias(tx, aliasKey(rec.Domain, alias), alias, wid, now); err != nil {
		return "", err
	}
	if err := aliases.Delete(aliasKey(rec.Domain, rec.Alias)); err != nil {
		return "", fmt.Errorf("unindex alias: %w", err)
	}
	if err := holdAlias(tx, aliasKey(rec.Domain, rec.Alias), wid, now.Add(s.AliasHold), s.AliasHold); err != nil {
		return "", err
	}
	if err := aliases.Put(aliasKey(rec.Domain, alias), idb); err != nil {
		return "", fmt.Errorf("index alias: %w", err)
	}
	return alias, nil
}

// moveTags moves the link idb's tag index entries and counters from the
// tags it had to the tags it has.
func moveTags(tx *bolt.Tx, wid uint64, idb []byte, had, has []string) error {
	for _, t := range had {
		if !slices.Contains(has, t) {
			if err := removeTag(tx, wid, t, idb); err != nil {
				return err
			}
		}
	}
	for _, t := range has {
		if !slices.Contains(had, t) {
			if err := addTag(tx, wid, t, idb); err != nil {
				return err
			}
		}
	}
	return nil
}

// moveCampaign moves the link lid's campaign index entry from the campaign
// it was in to the one it is in ("" for none). ENOTFOUND (field
// campaign_id) for a campaign not of the workspace.
func (s *LinkService) moveCampaign(tx *bolt.Tx, wid, lid uint64, was, is string) error {
	if is == was {
		return nil
	}
	idx := tx.Bucket(bucketLinksCampaign)
	if was != "" {
		if old, ok := s.db.ids.parseID(prefixCampaign, was); ok {
			if err := idx.Delete(campaignLinkKey(wid, old, lid)); err != nil {
				return fmt.Errorf("unindex link campaign: %w", err)
			}
		}
	}
	if is != "" {
		cid, err := campaignForLink(tx, wid, is)
		if err != nil {
			return err
		}
		if err := idx.Put(campaignLinkKey(wid, cid, lid), []byte{}); err != nil {
			return fmt.Errorf("index link campaign: %w", err)
		}
	}
	return nil
}

// DeleteLink removes a link, its index entries, its click counter and its
// link-scope click aggregates, and holds its alias for the workspace for
// AliasHold (a held alias redirects nowhere). The workspace's (and
// campaign's) aggregates and raw clicks keep its clicks. ENOTFOUND.
func (s *LinkService) DeleteLink(ctx context.Context, workspaceID, id string) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	lid, ok2 := s.db.ids.parseID(prefixLink, id)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	var oldKey []byte
	defer func() {
		if oldKey != nil {
			s.db.aliases.forget(string(oldKey))
		}
	}()
	return s.db.update(func(tx *bolt.Tx) error {
		rec, err := findLink(tx, wid, lid)
		if err != nil {
			return err
		}
		if s.Events != nil {
			clicks, err := linkClicks(tx, lid)
			if err != nil {
				return err
			}
			if err := s.emit(tx, wid, link.EventLinkDeleted, rec.link(s.db.ids, lid, clicks)); err != nil {
				return err
			}
		}
		oldKey = aliasKey(rec.Domain, rec.Alias)
		idb := itob(lid)
		if err := tx.Bucket(bucketLinks).Delete(idb); err != nil {
			return fmt.Errorf("delete link: %w", err)
		}
		if err := tx.Bucket(bucketLinksAlias).Delete(aliasKey(rec.Domain, rec.Alias)); err != nil {
			return fmt.Errorf("unindex alias: %w", err)
		}
		now := s.db.now()
		if err := holdAlias(tx, aliasKey(rec.Domain, rec.Alias), wid, now.Add(s.AliasHold), s.AliasHold); err != nil {
			return err
		}
		if err := tx.Bucket(bucketLinksWorkspace).Delete(concat(itob(wid), idb)); err != nil {
			return fmt.Errorf("unindex link workspace: %w", err)
		}
		if cid, ok := s.db.ids.parseID(prefixCampaign, rec.CampaignID); ok {
			if err := tx.Bucket(bucketLinksCampaign).Delete(campaignLinkKey(wid, cid, lid)); err != nil {
				return fmt.Errorf("unindex link campaign: %w", err)
			}
		}
		if err := addCounter(tx.Bucket(bucketLinksCount), itob(wid), -1); err != nil {
			return err
		}
		if err := countArchived(tx, wid, rec.Archived, false); err != nil {
			return err
		}
		for _, t := range rec.Tags {
			if err := removeTag(tx, wid, t, idb); err != nil {
				return err
			}
		}
		var ix searchIndexer
		ix.remove(lid, rec)
		if err := ix.write(tx); err != nil {
			return err
		}
		return deleteLinkStats(tx, lid)
	})
}

// findLink returns a link record of workspace wid (any workspace when wid
// is 0). ENOTFOUND.
func findLink(tx *bolt.Tx, wid, lid uint64) (*linkRecord, error) {
	var rec linkRecord
	ok, err := getLink(tx.Bucket(bucketLinks), itob(lid), &rec)
	if err != nil {
		return nil, err
	}
	if !ok || wid != 0 && rec.Workspace != wid {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", idsOf(tx).formatID(prefixLink, lid))
	}
	return &rec, nil
}

func linkWithClicks(tx *bolt.Tx, lid uint64, rec *linkRecord) (*link.Link, error) {
	n, err := linkClicks(tx, lid)
	if err != nil {
		return nil, err
	}
	return rec.link(idsOf(tx), lid, n), nil
}
