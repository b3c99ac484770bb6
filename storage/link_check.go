package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// The destination checks of links (link.LinkCheckService) live in four
// buckets of their own, so that the link records, and so the redirects,
// never carry them:
//
//   - link_checks: workspace id + link id → linkCheckRecord
//   - link_checks.due: unix nanos(8) + workspace id + link id → "", the
//     next check of each enrolled link, read from its start by a claim
//   - link_checks.broken: workspace id + link id → "", the links a list
//     filtered by broken walks
//   - link_checks.enroll: workspace id → the highest link id enrolled,
//     for each workspace with checks on; links are enrolled in id order,
//     so a new link (a higher id) is enrolled by the next claim.
var (
	bucketLinkChecks       = []byte("link_checks")
	bucketLinkChecksDue    = []byte("link_checks.due")
	bucketLinkChecksBroken = []byte("link_checks.broken")
	bucketLinkChecksEnroll = []byte("link_checks.enroll")
)

var _ link.LinkCheckService = (*LinkCheckService)(nil)

// LinkCheckService keeps the destination checks of links in bbolt.
type LinkCheckService struct {
	db *DB
	// Events encodes the link.broken and link.fixed events; nil writes
	// none.
	Events link.EventEncoder
}

// NewLinkCheckService returns the link check service of db.
func NewLinkCheckService(db *DB) *LinkCheckService { return &LinkCheckService{db: db} }

type linkCheckRecord struct {
	Status      link.CheckStatus `json:"status"`
	HTTPStatus  int              `json:"http_status,omitempty"`
	Error       string           `json:"error,omitempty"`
	CheckedAt   time.Time        `json:"checked_at,omitzero"`
	Failures    int              `json:"failures,omitempty"`
	Destination string           `json:"dest,omitempty"`
	// Due is the next check, the key of its link_checks.due entry.
	Due int64 `json:"due"`
}

func dueKey(due int64, wid, lid uint64) []byte {
	k := make([]byte, 24)
	binary.BigEndian.PutUint64(k, uint64(due))
	binary.BigEndian.PutUint64(k[8:], wid)
	binary.BigEndian.PutUint64(k[16:], lid)
	return k
}

func (r *linkCheckRecord) check(ids *idCodec, wid, lid uint64) *link.LinkCheck {
	return &link.LinkCheck{
		LinkID: ids.formatID(prefixLink, lid), WorkspaceID: ids.formatID(prefixWorkspace, wid),
		Status: r.Status, HTTPStatus: r.HTTPStatus, Error: r.Error, CheckedAt: r.CheckedAt,
		Failures: r.Failures, DestinationURL: r.Destination,
	}
}

// putLinkCheck writes rec as the check of link lid of workspace wid, and
// its due and broken entries; old is the record it replaces, or nil.
func putLinkCheck(tx *bolt.Tx, wid, lid uint64, old, rec *linkCheckRecord) error {
	key := concat(itob(wid), itob(lid))
	due := tx.Bucket(bucketLinkChecksDue)
	if old != nil {
		if err := due.Delete(dueKey(old.Due, wid, lid)); err != nil {
			return err
		}
	}
	if err := due.Put(dueKey(rec.Due, wid, lid), []byte{}); err != nil {
		return err
	}
	broken := tx.Bucket(bucketLinkChecksBroken)
	var err error
	if rec.Status == link.CheckBroken {
		err = broken.Put(key, []byte{})
	} else if old != nil && old.Status == link.CheckBroken {
		err = broken.Delete(key)
	}
	if err != nil {
		return err
	}
	return putJSON(tx.Bucket(bucketLinkChecks), key, rec)
}

// findLinkCheck returns the check record of a link, or nil.
func findLinkCheck(tx *bolt.Tx, wid, lid uint64) (*linkCheckRecord, error) {
	var rec linkCheckRecord
	ok, err := getJSON(tx.Bucket(bucketLinkChecks), concat(itob(wid), itob(lid)), &rec)
	if err != nil || !ok {
		return nil, err
	}
	return &rec, nil
}

// forgetLinkCheck deletes the check of a link, if it has one (the link is
// deleted, or its workspace turned checks off).
func forgetLinkCheck(tx *bolt.Tx, wid, lid uint64) error {
	rec, err := findLinkCheck(tx, wid, lid)
	if err != nil || rec == nil {
		return err
	}
	key := concat(itob(wid), itob(lid))
	if err := tx.Bucket(bucketLinkChecksDue).Delete(dueKey(rec.Due, wid, lid)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketLinkChecksBroken).Delete(key); err != nil {
		return err
	}
	return tx.Bucket(bucketLinkChecks).Delete(key)
}

// setDestinationChecks turns the checks of workspace wid on (enrolling its
// links from the first at the next claim) or off (forgetting its checks).
func setDestinationChecks(tx *bolt.Tx, wid uint64, on bool) error {
	enroll := tx.Bucket(bucketLinkChecksEnroll)
	if on {
		if enroll.Get(itob(wid)) != nil {
			return nil
		}
		return enroll.Put(itob(wid), itob(0))
	}
	if err := enroll.Delete(itob(wid)); err != nil {
		return err
	}
	var lids []uint64
	c := tx.Bucket(bucketLinkChecks).Cursor()
	prefix := itob(wid)
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		lids = append(lids, btoi(k[8:]))
	}
	for _, lid := range lids {
		if err := forgetLinkCheck(tx, wid, lid); err != nil {
			return err
		}
	}
	return nil
}

// ClaimDueLinkChecks enrolls new links and claims due ones (see
// link.LinkCheckService), in one write transaction.
func (s *LinkCheckService) ClaimDueLinkChecks(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]*link.LinkCheckTarget, error) {
	if limit <= 0 {
		return nil, nil
	}
	idle := false
	if err := s.db.db.View(func(tx *bolt.Tx) error {
		idle = s.idle(tx, now)
		return nil
	}); err != nil || idle {
		return nil, err // an idle poll writes nothing
	}
	var out []*link.LinkCheckTarget
	err := s.db.update(func(tx *bolt.Tx) error {
		out = out[:0]
		if err := s.enroll(tx, now, limit); err != nil {
			return err
		}
		return s.claim(tx, now, limit, lease, &out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// idle reports whether a claim at now would find nothing to do: no link
// due and no link to enroll (every workspace with checks on has its
// newest link enrolled).
func (s *LinkCheckService) idle(tx *bolt.Tx, now time.Time) bool {
	if k, _ := tx.Bucket(bucketLinkChecksDue).Cursor().First(); k != nil && (len(k) != 24 || int64(btoi(k[:8])) <= now.UnixNano()) {
		return false
	}
	byWorkspace := tx.Bucket(bucketLinksWorkspace).Cursor()
	c := tx.Bucket(bucketLinkChecksEnroll).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 || len(v) != 8 {
			continue
		}
		if last := lastWithPrefix(byWorkspace, k); len(last) == 16 && bytes.HasPrefix(last, k) && btoi(last[8:]) > btoi(v) {
			return false
		}
	}
	return true
}

// enroll gives at most limit links of the workspaces with checks on, not
// enrolled yet, a check due at now.
func (s *LinkCheckService) enroll(tx *bolt.Tx, now time.Time, limit int) error {
	type cursor struct{ wid, last uint64 }
	var cursors []cursor
	_ = tx.Bucket(bucketLinkChecksEnroll).ForEach(func(k, v []byte) error {
		if len(k) == 8 && len(v) == 8 {
			cursors = append(cursors, cursor{btoi(k), btoi(v)})
		}
		return nil
	})
	byWorkspace := tx.Bucket(bucketLinksWorkspace)
	for _, cur := range cursors {
		if limit == 0 {
			return nil
		}
		prefix := itob(cur.wid)
		last := cur.last
		c := byWorkspace.Cursor()
		for k, _ := c.Seek(concat(prefix, itob(cur.last+1))); k != nil && bytes.HasPrefix(k, prefix) && limit > 0; k, _ = c.Next() {
			lid := btoi(k[8:])
			last = lid
			old, err := findLinkCheck(tx, cur.wid, lid)
			if err != nil {
				return err
			}
			if old != nil {
				continue
			}
			rec, err := findLink(tx, cur.wid, lid)
			if err != nil {
				return err
			}
			if err := putLinkCheck(tx, cur.wid, lid, nil, &linkCheckRecord{Status: link.CheckUnchecked, Destination: rec.Destination, Due: now.UnixNano()}); err != nil {
				return err
			}
			limit--
		}
		if last != cur.last {
			if err := tx.Bucket(bucketLinkChecksEnroll).Put(prefix, itob(last)); err != nil {
				return err
			}
		}
	}
	return nil
}

// claim moves at most limit due checks to now+lease and appends them to
// out; the checks of deleted links are dropped on the way.
func (s *LinkCheckService) claim(tx *bolt.Tx, now time.Time, limit int, lease time.Duration, out *[]*link.LinkCheckTarget) error {
	c := tx.Bucket(bucketLinkChecksDue).Cursor()
	type due struct {
		key      []byte
		wid, lid uint64
	}
	var dues []due
	for k, _ := c.First(); k != nil && len(dues) < limit; k, _ = c.Next() {
		if len(k) != 24 || int64(btoi(k[:8])) > now.UnixNano() {
			break
		}
		dues = append(dues, due{cloneBytes(k), btoi(k[8:16]), btoi(k[16:])})
	}
	for _, d := range dues {
		rec, err := findLinkCheck(tx, d.wid, d.lid)
		if err != nil {
			return err
		}
		if rec == nil {
			if err := tx.Bucket(bucketLinkChecksDue).Delete(d.key); err != nil {
				return err
			}
			continue
		}
		lrec, err := findLink(tx, d.wid, d.lid)
		if link.ErrorCode(err) == link.ENOTFOUND {
			if err := forgetLinkCheck(tx, d.wid, d.lid); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		next := *rec
		next.Due = now.Add(lease).UnixNano()
		if err := putLinkCheck(tx, d.wid, d.lid, rec, &next); err != nil {
			return err
		}
		prev := rec.check(s.db.ids, d.wid, d.lid)
		if rec.Destination != lrec.Destination {
			prev = &link.LinkCheck{LinkID: prev.LinkID, WorkspaceID: prev.WorkspaceID, Status: link.CheckUnchecked}
		}
		*out = append(*out, &link.LinkCheckTarget{LinkID: prev.LinkID, WorkspaceID: prev.WorkspaceID,
			DestinationURL: lrec.Destination, Previous: *prev})
	}
	return nil
}

// SaveLinkCheck records a check (see link.LinkCheckService).
func (s *LinkCheckService) SaveLinkCheck(ctx context.Context, c *link.LinkCheck, next time.Time) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, c.WorkspaceID)
	lid, ok2 := s.db.ids.parseID(prefixLink, c.LinkID)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "link %q not found", c.LinkID)
	}
	return s.db.update(func(tx *bolt.Tx) error {
		lrec, err := findLink(tx, wid, lid)
		if err != nil {
			return err
		}
		old, err := findLinkCheck(tx, wid, lid)
		if err != nil {
			return err
		}
		if old == nil || lrec.Destination != c.DestinationURL {
			return nil // checks turned off, or the destination changed: a stale result
		}
		before := old.Status
		if old.Destination != lrec.Destination {
			before = link.CheckUnchecked
		}
		rec := &linkCheckRecord{Status: c.Status, HTTPStatus: c.HTTPStatus, Error: c.Error, CheckedAt: c.CheckedAt.UTC(),
			Failures: c.Failures, Destination: c.DestinationURL, Due: next.UnixNano()}
		if err := putLinkCheck(tx, wid, lid, old, rec); err != nil {
			return err
		}
		event := link.CheckEvent(before, rec.Status)
		if event == "" || s.Events == nil {
			return nil
		}
		clicks, err := linkClicks(tx, lid)
		if err != nil {
			return err
		}
		l := lrec.link(s.db.ids, lid, clicks)
		l.Check = rec.check(s.db.ids, wid, lid)
		return appendLinkEvent(tx, s.Events, wid, event, l, c.CheckedAt)
	})
}

// FindLinkChecks returns the checks of links of a workspace.
func (s *LinkCheckService) FindLinkChecks(ctx context.Context, workspaceID string, ids []string) (map[string]*link.LinkCheck, error) {
	out := make(map[string]*link.LinkCheck, len(ids))
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return out, nil
	}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		for _, id := range ids {
			lid, ok := s.db.ids.parseID(prefixLink, id)
			if !ok {
				continue
			}
			rec, err := findLinkCheck(tx, wid, lid)
			if err != nil {
				return fmt.Errorf("link check %s: %w", id, err)
			}
			if rec != nil {
				out[id] = rec.check(s.db.ids, wid, lid)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ResetLinkCheck forgets the check of a link, due at now (see
// link.LinkCheckService).
func (s *LinkCheckService) ResetLinkCheck(ctx context.Context, workspaceID, id string, now time.Time) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	lid, ok2 := s.db.ids.parseID(prefixLink, id)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	return s.db.update(func(tx *bolt.Tx) error {
		old, err := findLinkCheck(tx, wid, lid)
		if err != nil || old == nil {
			return err
		}
		lrec, err := findLink(tx, wid, lid)
		if err != nil {
			return err
		}
		return putLinkCheck(tx, wid, lid, old, &linkCheckRecord{Status: link.CheckUnchecked, Destination: lrec.Destination, Due: now.UnixNano()})
	})
}
