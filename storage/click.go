package storage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.ClickService = (*ClickService)(nil)

// ClickService keeps clicks in two forms. Raw clicks, one record each,
// serve exports and are pruned after the retention period; they name their
// referrer host in a per-day dictionary (see hostTable). Aggregates,
// kept for good, answer analytics: for each scope a click belongs to (its
// workspace, its link, its campaign) one period blob per hour and one per
// UTC day, each holding the totals and the counts of every dimension (and
// for a day the distinct visitors). A batch of clicks is summed in memory
// first, so each key is read and written once per batch.
type ClickService struct {
	db *DB
	// pruneChunk is the most keys a prune deletes in one transaction;
	// pruned, if set, is called after each such transaction (tests
	// interleave writes there).
	pruneChunk int
	pruned     func(bucket []byte)
	// drainMu holds one DrainClicks at a time.
	drainMu sync.Mutex
	// Events encodes the link.clicked events a batch writes for the
	// workspaces that subscribe to them; nil writes none.
	Events link.EventEncoder
}

// NewClickService returns the click service of db.
func NewClickService(db *DB) *ClickService { return &ClickService{db: db, pruneChunk: pruneChunk} }

// Sizes of the prune's write transactions: a big prune is many short
// transactions, so clicks keep being recorded meanwhile.
const pruneChunk = 10_000

// Visitor records are kept for the current UTC day and the two before
// it: clicks arrive late by at most a flush interval, so older records are
// never read again; the days' visitor counts stay.
const visitorRecordDays = 2

// parsedClick is a validated click in the form it is stored in.
type parsedClick struct {
	ws, link  uint64
	campaign  string
	nanos     int64
	hour, day uint32
	vals      [numDims]string // the string dimensions; vals[dimLinks] is unused
	bot       bool
	visitor   uint64
	// weight, when not 0, makes this one click count as weight clicks in
	// the link's total and the aggregates, with no raw click and no
	// visitor: the clicks an import knows only as a total.
	weight  uint64
	variant uint8 // the A/B variant, from 1; 0 for none
}

// parseClick validates c and returns it in the form it is stored in; ok
// is false for a click that cannot be stored (see RecordClicks).
func parseClick(ids *idCodec, c *link.Click) (p parsedClick, ok bool) {
	if p.ws, ok = ids.parseID(prefixWorkspace, c.WorkspaceID); !ok {
		return p, false
	}
	if p.link, ok = ids.parseID(prefixLink, c.LinkID); !ok {
		return p, false
	}
	if c.CampaignID != "" && !validCampaignID(c.CampaignID) {
		return p, false
	}
	return clickAt(p.ws, p.link, c)
}

// clickAt is click c of link lid in workspace wid, whose campaign is
// valid or none, in the form it is stored in; ok is false for a time out
// of range. RecordClicks and an import both store clicks so.
func clickAt(wid, lid uint64, c *link.Click) (p parsedClick, ok bool) {
	if c.Time.Unix() < 0 || !c.Time.Before(maxClickTime) {
		return p, false
	}
	p.ws, p.link = wid, lid
	p.campaign = c.CampaignID
	p.nanos = c.Time.UnixNano()
	sec := c.Time.Unix()
	p.hour, p.day = uint32(sec/secondsPerHour), uint32(sec/secondsPerDay)
	// A referrer is a dimension value: whoever hands clicks over (the
	// redirect, an import), only a host or (invalid) becomes one.
	p.vals[dimReferrers] = link.ClickValue(link.CanonicalReferrer(c.Referrer), directReferrer)
	p.vals[dimCountries] = link.ClickValue(c.Country, unknownValue)
	p.vals[dimDevices] = link.ClickValue(c.Device, unknownValue)
	p.vals[dimBrowsers] = link.ClickValue(c.Browser, unknownValue)
	p.vals[dimOS] = link.ClickValue(c.OS, unknownValue)
	p.bot, p.visitor = c.Bot, c.Visitor
	// A variant no link can have is no variant.
	if c.Variant <= link.MaxVariants {
		p.variant = c.Variant
	}
	if p.variant != 0 {
		p.vals[dimVariants] = strconv.Itoa(int(p.variant))
	}
	return p, true
}

// RecordClicks writes a batch of clicks in one transaction: the raw
// clicks, the per-link counters, and the aggregates of every scope. A
// click of a link deleted meanwhile counts for its workspace and campaign
// only. An empty referrer is stored as "direct", other empty values as
// "unknown", values longer than 253 bytes cut. A visitor counts once a
// UTC day in each scope, as a bot or not by its first click of the day in
// the workspace. Each period keeps bounded top lists (see topCap). For a
// workspace with an enabled webhook subscribed to link.clicked it also
// writes one event per click, and its deliveries, in the same transaction
// (see appendClickEvents).
//
// A click with a malformed workspace, link or campaign ID or a time
// before 1970 or after 2199 is skipped and counted in skipped, and the
// rest of the batch is written: the recorder retries a failed batch
// first, so failing the batch for one such click would stall every click
// after it. EINVALID, with nothing written, for a batch of more than
// maxBatch clicks.
func (s *ClickService) RecordClicks(ctx context.Context, clicks []link.Click) (skipped int, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if len(clicks) > maxBatch {
		return 0, link.Errorf(link.EINVALID, "batch of %d clicks: at most %d", len(clicks), maxBatch)
	}
	b := newClickBatch(len(clicks))
	for i := range clicks {
		p, ok := parseClick(s.db.ids, &clicks[i])
		if !ok {
			skipped++
			continue
		}
		b.clicks = append(b.clicks, p)
	}
	if len(b.clicks) == 0 {
		return skipped, nil
	}
	if err := s.write(b, nil); err != nil {
		return skipped, fmt.Errorf("record clicks: %w", err)
	}
	return skipped, nil
}

// write stores the clicks of b in one transaction, in which also runs too
// when it is not nil (a drain takes its clicks out of the backlog there).
func (s *ClickService) write(b *clickBatch, also func(tx *bolt.Tx) error) error {
	for i := range b.clicks {
		b.add(&b.clicks[i])
	}
	w := b.plan()
	now := s.db.now()
	return s.db.db.Update(func(tx *bolt.Tx) error {
		if err := w.write(tx); err != nil {
			return err
		}
		if also != nil {
			if err := also(tx); err != nil {
				return err
			}
		}
		// link.clicked events for the workspaces that subscribe to them.
		return appendClickEvents(tx, s.Events, w.clicks, now)
	})
}

// ExportClicks calls fn for each raw click of the workspace in [start,
// end), oldest first, inside one read transaction. It stops at fn's first
// error and returns it, and returns ctx's error once ctx is done.
// ENOTFOUND for an unknown workspace.
func (s *ClickService) ExportClicks(ctx context.Context, workspaceID string, start, end time.Time, fn func(*link.Click) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	e := &clickExport{wid: wid, prefix: itob(wid), to: rawNanos(end), ids: newIDMemo(s.db.ids),
		str: stringMemo(), hosts: map[uint64]string{}, chunk: make([]*link.Click, 0, exportChunk)}
	e.seek = concat(e.prefix, itob(uint64(rawNanos(start))))
	for first := true; ; first = false {
		// Each chunk is read in its own short transaction and handed to fn
		// outside it: a slow client must not hold a read transaction, which
		// would keep the file from growing and stall every write.
		var next []byte
		err := s.db.db.View(func(tx *bolt.Tx) error {
			if first {
				if err := workspaceExists(tx, wid); err != nil {
					return err
				}
			}
			var err error
			next, err = e.readChunk(tx)
			return err
		})
		if err != nil {
			return err
		}
		for _, click := range e.chunk {
			if err := fn(click); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		e.seek = next
	}
}

// clickExport is one ExportClicks walk: where the next chunk starts, and
// what its chunks share. Repeated values (hosts, countries, browsers, IDs)
// share one string.
type clickExport struct {
	wid    uint64
	prefix []byte // the workspace's raw clicks
	seek   []byte // the next chunk's first key
	to     int64  // the end, in unix nanoseconds
	ids    *idMemo
	str    func([]byte) string
	hosts  map[uint64]string
	chunk  []*link.Click
}

// readChunk reads the next at most exportChunk clicks into e.chunk and
// returns the key of the one after them, nil at the end.
func (e *clickExport) readChunk(tx *bolt.Tx) ([]byte, error) {
	e.chunk = e.chunk[:0]
	c := tx.Bucket(bucketClicksRaw).Cursor()
	host := hostIn(tx, e.wid, e.hosts)
	for k, v := c.Seek(e.seek); k != nil && bytes.HasPrefix(k, e.prefix); k, v = c.Next() {
		if int64(btoi(k[8:16])) >= e.to {
			return nil, nil
		}
		if len(e.chunk) == exportChunk {
			return cloneBytes(k), nil
		}
		click := new(link.Click)
		if err := decodeRawClick(e.ids, k, v, click, e.str, host); err != nil {
			return nil, fmt.Errorf("raw click %x: %w", k, err)
		}
		e.chunk = append(e.chunk, click)
	}
	return nil, nil
}

// stringMemo returns a function that turns bytes into a string, the same
// string for the same bytes (for the first 100,000 values).
func stringMemo() func([]byte) string {
	strs := map[string]string{}
	return func(b []byte) string {
		if s, ok := strs[string(b)]; ok {
			return s
		}
		s := string(b)
		if len(strs) < 100_000 {
			strs[s] = s
		}
		return s
	}
}

// hostIn returns a function that looks the referrer hosts of a
// workspace's raw clicks up in tx, through cache (day << 32 | id → host).
func hostIn(tx *bolt.Tx, wid uint64, cache map[uint64]string) func(day uint32, id uint64) (string, error) {
	b := tx.Bucket(bucketClicksHosts)
	return func(day uint32, id uint64) (string, error) {
		ck := uint64(day)<<32 | id&math.MaxUint32
		if h, ok := cache[ck]; ok && id <= math.MaxUint32 {
			return h, nil
		}
		h, err := hostOf(b, day, wid, id)
		if err != nil {
			return "", err
		}
		if len(cache) < 100_000 {
			cache[ck] = h
		}
		return h, nil
	}
}

// exportChunk is the number of raw clicks ExportClicks reads per
// transaction.
const exportChunk = 4096

// rawNanos returns t in Unix nanoseconds, clamped to what raw keys hold.
func rawNanos(t time.Time) int64 {
	if t.Unix() < 0 {
		return 0
	}
	if !t.Before(maxClickTime) {
		return maxClickTime.UnixNano()
	}
	return t.UnixNano()
}

// PruneClicks deletes the raw clicks before before, in every workspace,
// in transactions of at most 10,000 deletions; the referrer hosts of the
// UTC days before the day of before (their raw clicks are all gone); the
// visitor records of UTC days more than two days before today; and the
// salts of days before yesterday. Aggregates, visitor counts included, are kept. It returns the
// number of raw clicks deleted, also when it stops early on an error.
//
// Clicks keep being recorded between its transactions, late ones for the
// days being pruned too. So that none of them names a host in a
// dictionary that is half deleted, or about to be, the first transaction
// moves hostsFrom to the day of before: from then on raw clicks of earlier
// days keep their referrer inline, and nothing reads or writes those
// days' dictionaries but the prune.
func (s *ClickService) PruneClicks(ctx context.Context, before time.Time) (int, error) {
	cut := rawNanos(before)
	cutDay := uint32(cut / 1e9 / secondsPerDay)
	if err := s.db.db.Update(func(tx *bolt.Tx) error { return raiseHostsFrom(tx, cutDay) }); err != nil {
		return 0, fmt.Errorf("prune clicks: %w", err)
	}
	deleted, err := s.pruneRawClicks(ctx, cut)
	if err != nil {
		return deleted, err
	}

	today := uint32(max(s.db.now().Unix(), 0) / secondsPerDay)
	if err := s.deleteDaysBefore(ctx, bucketClicksVisitors, today-min(today, visitorRecordDays)); err != nil {
		return deleted, fmt.Errorf("prune visitor records: %w", err)
	}
	if err := s.deleteDaysBefore(ctx, bucketClicksSalts, today-min(today, 1)); err != nil {
		return deleted, fmt.Errorf("prune salts: %w", err)
	}
	// The hosts of the days whose raw clicks are all gone.
	if err := s.deleteDaysBefore(ctx, bucketClicksHosts, cutDay); err != nil {
		return deleted, fmt.Errorf("prune referrer hosts: %w", err)
	}
	return deleted, nil
}

// pruneRawClicks deletes each workspace's raw clicks from its first to the
// cut (unix nanoseconds), in transactions of at most pruneChunk clicks,
// and returns how many it deleted.
func (s *ClickService) pruneRawClicks(ctx context.Context, cut int64) (int, error) {
	deleted := 0
	var pos []byte
	for {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		var done bool
		var n int
		err := s.db.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketClicksRaw)
			c := b.Cursor()
			var dels [][]byte
			k, _ := c.Seek(pos)
			for k != nil && len(dels) < s.pruneChunk {
				if len(k) != 20 {
					return fmt.Errorf("raw click %x: malformed key", k)
				}
				if int64(btoi(k[8:16])) < cut {
					dels = append(dels, cloneBytes(k))
					k, _ = c.Next()
					continue
				}
				end := prefixEnd(k[:8]) // the next workspace
				if end == nil {
					k = nil
					break
				}
				k, _ = c.Seek(end)
			}
			pos, done = cloneBytes(k), k == nil
			for _, k := range dels {
				if err := b.Delete(k); err != nil {
					return fmt.Errorf("delete raw click: %w", err)
				}
			}
			n = len(dels)
			return nil
		})
		if err != nil {
			// The transaction rolled back: its deletions did not happen.
			return deleted, fmt.Errorf("prune clicks: %w", err)
		}
		deleted += n
		if s.pruned != nil {
			s.pruned(bucketClicksRaw)
		}
		if done {
			return deleted, nil
		}
	}
}

// deleteDaysBefore deletes the keys of a day-first bucket before day, in
// chunks.
func (s *ClickService) deleteDaysBefore(ctx context.Context, name []byte, day uint32) error {
	_, err := s.deleteRange(ctx, name, nil, be32(day))
	return err
}

// deleteRange deletes the keys of a bucket from from (nil: the first) up
// to before end, in transactions of at most pruneChunk keys so that
// clicks keep being recorded meanwhile, and returns how many it deleted.
func (s *ClickService) deleteRange(ctx context.Context, name, from, end []byte) (int, error) {
	deleted := 0
	for {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		var more bool
		var n int
		err := s.db.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(name)
			c := b.Cursor()
			k, _ := c.First()
			if from != nil {
				k, _ = c.Seek(from)
			}
			var dels [][]byte
			for ; k != nil && bytes.Compare(k, end) < 0; k, _ = c.Next() {
				if len(dels) == s.pruneChunk {
					more = true
					break
				}
				dels = append(dels, cloneBytes(k))
			}
			for _, k := range dels {
				if err := b.Delete(k); err != nil {
					return fmt.Errorf("delete %x: %w", k, err)
				}
			}
			n = len(dels)
			return nil
		})
		if err != nil {
			return deleted, err
		}
		deleted += n
		if s.pruned != nil {
			s.pruned(name)
		}
		if !more {
			return deleted, nil
		}
	}
}

// raiseHostsFrom moves the first day whose raw clicks name their referrer
// host by id (see hostTable) on to day; it never moves back.
func raiseHostsFrom(tx *bolt.Tx, day uint32) error {
	meta := tx.Bucket(bucketMeta)
	if v := meta.Get(metaHostsFrom); len(v) == 4 && binary.BigEndian.Uint32(v) >= day {
		return nil
	}
	if err := meta.Put(metaHostsFrom, be32(day)); err != nil {
		return fmt.Errorf("put hosts_from: %w", err)
	}
	return nil
}

// hostsFrom returns the first day whose raw clicks may name their
// referrer host by id.
func hostsFrom(tx *bolt.Tx) uint32 {
	if v := tx.Bucket(bucketMeta).Get(metaHostsFrom); len(v) == 4 {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

// saltSize is the length of a daily salt.
const saltSize = 32

// DailySalt returns the salt of the UTC day of day, creating it the first
// time; callers racing to create it get the same salt. EINVALID for a day
// before 1970.
func (s *ClickService) DailySalt(ctx context.Context, day time.Time) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if day.Unix() < 0 || !day.Before(maxClickTime) {
		return nil, link.Errorf(link.EINVALID, "day %s is out of range", day.Format(time.RFC3339))
	}
	k := be32(uint32(day.Unix() / secondsPerDay))
	var salt []byte
	err := s.db.db.View(func(tx *bolt.Tx) error {
		salt = cloneBytes(tx.Bucket(bucketClicksSalts).Get(k))
		return nil
	})
	if err != nil || salt != nil {
		return salt, err
	}
	err = s.db.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketClicksSalts)
		if v := b.Get(k); v != nil { // created since the View
			salt = cloneBytes(v)
			return nil
		}
		salt = make([]byte, saltSize)
		if _, err := rand.Read(salt); err != nil {
			return fmt.Errorf("generate salt: %w", err)
		}
		return b.Put(k, salt)
	})
	if err != nil {
		return nil, fmt.Errorf("daily salt: %w", err)
	}
	return salt, nil
}

// deleteLinkStats deletes a link's click counter and its link-scope
// aggregates. Its clicks stay in the raw clicks and in the aggregates of
// its workspace and campaign; the visitor records of the day may still
// name it (link IDs are never reused). The link's keys are time first:
// it looks up each day any link has clicks on (a Get a day).
func deleteLinkStats(tx *bolt.Tx, lid uint64) error {
	if err := deleteLinkTotal(tx, lid); err != nil {
		return fmt.Errorf("delete click counter: %w", err)
	}
	hourly, daily := tx.Bucket(bucketClicksHourly), tx.Bucket(bucketClicksDaily)
	first, last, ok := linkDays(daily)
	if !ok {
		return nil
	}
	scope := linkScope(lid)
	for d := first; d <= last && d >= first; d++ {
		k := periodBlobKey(scope, d)
		if daily.Get(k) == nil {
			continue
		}
		if err := daily.Delete(k); err != nil {
			return fmt.Errorf("delete daily clicks: %w", err)
		}
		for h := d * hoursPerDay; h < (d+1)*hoursPerDay; h++ {
			if err := hourly.Delete(periodBlobKey(scope, h)); err != nil {
				return fmt.Errorf("delete hourly clicks: %w", err)
			}
		}
	}
	return nil
}

// deleteCampaignStats deletes a campaign's aggregates, for the deletion of
// a campaign. Its clicks stay in the raw clicks and in the aggregates of
// its workspace and links.
func deleteCampaignStats(tx *bolt.Tx, wid uint64, campaignID string) error {
	if !validCampaignID(campaignID) {
		return nil // no clicks were ever recorded under it
	}
	scope := campaignScope(wid, campaignID)
	for _, name := range [][]byte{bucketClicksHourly, bucketClicksDaily} {
		if err := deletePrefix(tx.Bucket(name), scope); err != nil {
			return err
		}
	}
	return nil
}
