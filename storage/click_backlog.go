package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// The click backlog holds classified clicks on disk, in the order they
// came, until they are written into the aggregates.
//
// Writing a click into the aggregates costs tens of microseconds when
// traffic spreads over a million links (a period blob of each link it
// touches is merged at a random place of a big tree), while appending it
// to the backlog costs about a microsecond: keys are a sequence, so a
// spill's records lie side by side at the end of the bucket. When clicks
// come faster than the aggregates take them, the recorder spills them here
// instead of dropping them, and drains the backlog into the aggregates in
// order, as fast as traffic allows (see analytics.Recorder). Each drain
// writes its clicks and deletes them from the backlog in one transaction,
// so every click is counted exactly once, across crashes too.
//
// A record holds what RecordClicks stores of a click, never an address or
// a user agent: the clicks are classified before they are spilled.

// metaClickBacklog is the meta key of the backlog's size: clicks(8) +
// bytes(8) of keys and values, kept by every spill and drain.
var metaClickBacklog = []byte("click_backlog")

// BacklogSize is what the click backlog holds.
type BacklogSize struct {
	Clicks int64
	Bytes  int64 // of its keys and values
}

func readBacklogSize(tx *bolt.Tx) BacklogSize {
	v := tx.Bucket(bucketMeta).Get(metaClickBacklog)
	if len(v) != 16 {
		return BacklogSize{}
	}
	return BacklogSize{Clicks: int64(binary.BigEndian.Uint64(v)), Bytes: int64(binary.BigEndian.Uint64(v[8:]))}
}

func putBacklogSize(tx *bolt.Tx, n BacklogSize) error {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, uint64(max(n.Clicks, 0)))
	binary.BigEndian.PutUint64(v[8:], uint64(max(n.Bytes, 0)))
	return tx.Bucket(bucketMeta).Put(metaClickBacklog, v)
}

// Backlog returns the clicks the backlog holds and the bytes of their
// keys and values.
func (s *ClickService) Backlog(ctx context.Context) (clicks, bytes int64, err error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	var n BacklogSize
	err = s.db.db.View(func(tx *bolt.Tx) error {
		n = readBacklogSize(tx)
		return nil
	})
	return n.Clicks, n.Bytes, err
}

// SpillClicks appends clicks to the backlog in one transaction, as long as
// it holds at most limit bytes after (limit <= 0: no bound); spilled is
// how many it took, in order, so clicks[spilled:] did not fit. Clicks that
// cannot be stored are skipped and counted in skipped, as RecordClicks
// does. EINVALID, with nothing written, for more than maxBatch clicks.
func (s *ClickService) SpillClicks(ctx context.Context, clicks []link.Click, limit int64) (spilled, skipped int, err error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	if len(clicks) > maxBatch {
		return 0, 0, link.Errorf(link.EINVALID, "batch of %d clicks: at most %d", len(clicks), maxBatch)
	}
	err = s.db.db.Update(func(tx *bolt.Tx) error {
		spilled, skipped = 0, 0
		b := tx.Bucket(bucketClicksBacklog)
		b.FillPercent = 1 // appended in key order, never changed in place
		size := readBacklogSize(tx)
		seq := b.Sequence()
		var mem arena
		var enc []byte
		for i := range clicks {
			p, ok := parseClick(s.db.ids, &clicks[i])
			if !ok {
				skipped++
				spilled++
				continue
			}
			enc = appendBacklogClick(enc[:0], &p)
			cost := int64(8 + len(enc))
			if limit > 0 && size.Bytes+cost > limit {
				break
			}
			seq++
			if err := b.Put(mem.copy(itob(seq)), mem.copy(enc)); err != nil {
				return fmt.Errorf("spill click: %w", err)
			}
			size.Clicks++
			size.Bytes += cost
			spilled++
		}
		if err := b.SetSequence(seq); err != nil {
			return fmt.Errorf("backlog sequence: %w", err)
		}
		return putBacklogSize(tx, size)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("spill clicks: %w", err)
	}
	return spilled, skipped, nil
}

// DrainClicks writes the oldest clicks of the backlog, at most most, into the
// aggregates, as RecordClicks writes clicks, and takes them out of the
// backlog in the same transaction. It returns how many it took; a record
// that cannot be read (a damaged file) is taken out and counted in
// skipped rather than stall every click after it. A size in the meta
// that says more than the backlog holds (a damaged file) is set to
// nothing once the backlog is empty.
func (s *ClickService) DrainClicks(ctx context.Context, most int) (taken, skipped int, err error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	most = min(most, maxBatch)
	if most <= 0 {
		return 0, 0, nil
	}
	// One drain at a time: what a drain read is still the front of the
	// backlog when it deletes it (spills only append).
	s.drainMu.Lock()
	defer s.drainMu.Unlock()
	var first, last uint64
	var bytesRead int64
	var size BacklogSize
	b := newClickBatch(most)
	err = s.db.db.View(func(tx *bolt.Tx) error {
		size = readBacklogSize(tx)
		c := tx.Bucket(bucketClicksBacklog).Cursor()
		for k, v := c.First(); k != nil && taken < most; k, v = c.Next() {
			if taken == 0 {
				first = btoi(k)
			}
			last = btoi(k)
			taken++
			bytesRead += int64(len(k) + len(v))
			p, err := decodeBacklogClick(v)
			if err != nil {
				skipped++
				continue
			}
			b.clicks = append(b.clicks, p)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if taken == 0 {
		if size != (BacklogSize{}) { // a damaged size: the recorder would drain for ever
			err = s.db.db.Update(func(tx *bolt.Tx) error {
				if k, _ := tx.Bucket(bucketClicksBacklog).Cursor().First(); k != nil {
					return nil // a spill came meanwhile
				}
				return putBacklogSize(tx, BacklogSize{})
			})
		}
		if err != nil {
			return 0, 0, fmt.Errorf("drain clicks: %w", err)
		}
		return 0, 0, nil
	}
	err = s.write(b, func(tx *bolt.Tx) error {
		bl := tx.Bucket(bucketClicksBacklog)
		c := bl.Cursor()
		n := 0
		for k, _ := c.First(); k != nil && btoi(k) <= last; k, _ = c.First() {
			if n == 0 && btoi(k) != first {
				return errors.New("click backlog changed during a drain")
			}
			if err := c.Delete(); err != nil {
				return fmt.Errorf("drain backlog: %w", err)
			}
			n++
		}
		if n != taken {
			return fmt.Errorf("click backlog changed during a drain: %d records, %d read", n, taken)
		}
		size := readBacklogSize(tx)
		size.Clicks -= int64(taken)
		size.Bytes -= bytesRead
		if k, _ := c.First(); size.Clicks <= 0 || k == nil {
			size = BacklogSize{}
		}
		return putBacklogSize(tx, size)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("drain clicks: %w", err)
	}
	return taken, skipped, nil
}

// LinkClicks returns what a link has been clicked of the clicks on disk:
// its stored total and its clicks waiting in the backlog, read in one
// transaction, so that a drain moving clicks from one to the other never
// hides them. The backlog is read whole; it is empty but under floods.
// ENOTFOUND for a link not of the workspace.
func (s *ClickService) LinkClicks(ctx context.Context, workspaceID, linkID string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return 0, link.Errorf(link.ENOTFOUND, "link %q not found", linkID)
	}
	lid, ok := s.db.ids.parseID(prefixLink, linkID)
	if !ok {
		return 0, link.Errorf(link.ENOTFOUND, "link %q not found", linkID)
	}
	var n int64
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if _, err := findLink(tx, wid, lid); err != nil {
			return err
		}
		stored, err := linkClicks(tx, lid)
		if err != nil {
			return err
		}
		n = int64(stored)
		if readBacklogSize(tx).Clicks == 0 {
			return nil
		}
		c := tx.Bucket(bucketClicksBacklog).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if w, l, ok := backlogClickLink(v); ok && w == wid && l == lid {
				n++
			}
		}
		return nil
	})
	return n, err
}

// A backlog record: workspace id, link id (uvarints), unix nanos(8),
// visitor(8), flags(1: bot), variant(1), then the campaign and the string
// dimensions (referrer, country, device, browser, OS), each a uvarint
// length and its bytes.
const backlogFlagBot = 1

func appendBacklogClick(b []byte, c *parsedClick) []byte {
	b = binary.AppendUvarint(b, c.ws)
	b = binary.AppendUvarint(b, c.link)
	b = binary.BigEndian.AppendUint64(b, uint64(c.nanos))
	b = binary.BigEndian.AppendUint64(b, c.visitor)
	var flags byte
	if c.bot {
		flags |= backlogFlagBot
	}
	b = append(b, flags, c.variant)
	b = appendLenString(b, c.campaign)
	for _, d := range rawStrings {
		b = appendLenString(b, c.vals[d])
	}
	return b
}

var errBadBacklogClick = errors.New("malformed click backlog record")

// backlogClickLink reads the workspace and link of a record.
func backlogClickLink(v []byte) (ws, lid uint64, ok bool) {
	ws, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, 0, false
	}
	lid, m := binary.Uvarint(v[n:])
	return ws, lid, m > 0
}

func decodeBacklogClick(v []byte) (p parsedClick, err error) {
	var n int
	if p.ws, n = binary.Uvarint(v); n <= 0 {
		return p, errBadBacklogClick
	}
	v = v[n:]
	if p.link, n = binary.Uvarint(v); n <= 0 {
		return p, errBadBacklogClick
	}
	v = v[n:]
	if len(v) < 18 {
		return p, errBadBacklogClick
	}
	p.nanos = int64(binary.BigEndian.Uint64(v))
	p.visitor = binary.BigEndian.Uint64(v[8:])
	flags, variant := v[16], v[17]
	v = v[18:]
	if p.nanos < 0 || p.nanos >= maxClickTime.UnixNano() || flags&^backlogFlagBot != 0 || variant > link.MaxVariants {
		return p, errBadBacklogClick
	}
	p.bot, p.variant = flags&backlogFlagBot != 0, variant
	sec := p.nanos / 1e9
	p.hour, p.day = uint32(sec/secondsPerHour), uint32(sec/secondsPerDay)
	if p.campaign, v, err = readBacklogString(v); err != nil {
		return p, err
	}
	if p.campaign != "" && !validCampaignID(p.campaign) {
		return p, errBadBacklogClick
	}
	for _, d := range rawStrings {
		if p.vals[d], v, err = readBacklogString(v); err != nil {
			return p, err
		}
		if p.vals[d] == "" || len(p.vals[d]) > link.MaxClickValueLength {
			return p, errBadBacklogClick
		}
	}
	if len(v) != 0 {
		return p, errBadBacklogClick
	}
	if p.variant != 0 {
		p.vals[dimVariants] = strconv.Itoa(int(p.variant))
	}
	return p, nil
}

func readBacklogString(v []byte) (string, []byte, error) {
	b, rest, ok := readLenBytes(v)
	if !ok {
		return "", nil, errBadBacklogClick
	}
	return string(b), rest, nil
}

// checkBacklog reads every record of the backlog and compares the count
// with the meta's.
func checkBacklog(tx *bolt.Tx) []error {
	var errs []error
	var got BacklogSize
	b := tx.Bucket(bucketClicksBacklog)
	if b == nil { // a file no server of this version has opened
		return nil
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		got.Clicks++
		got.Bytes += int64(len(k) + len(v))
		if len(errs) >= maxProblems {
			continue
		}
		if len(k) != 8 {
			errs = append(errs, fmt.Errorf("click backlog: key %x is not a sequence", k))
		} else if _, err := decodeBacklogClick(v); err != nil {
			errs = append(errs, fmt.Errorf("click backlog: record %d: %w", btoi(k), err))
		}
	}
	if want := readBacklogSize(tx); want != got {
		errs = append(errs, fmt.Errorf("click backlog: the meta says %d clicks (%d bytes), the bucket holds %d (%d bytes)", want.Clicks, want.Bytes, got.Clicks, got.Bytes))
	}
	return errs
}
