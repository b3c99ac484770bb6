package storage

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.ClickService = (*ClickService)(nil)

// ClickService stores clicks as counters: a total per link, and click
// counts per hour and per UTC day for each workspace and each link. Time
// bucket keys are the owner's 8-byte ID followed by the bucket's start in
// Unix seconds (8 bytes, big-endian), so a range is one Seek and a walk.
type ClickService struct{ db *DB }

// NewClickService returns the click service of db.
func NewClickService(db *DB) *ClickService { return &ClickService{db: db} }

func hourStart(t time.Time) int64 { return t.Unix() - mod(t.Unix(), 3600) }
func dayStart(t time.Time) int64  { return t.Unix() - mod(t.Unix(), 86400) }

func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// RecordClicks writes a batch of clicks in one transaction: the per-link
// counter and the hourly and daily buckets of the workspace and the link.
// A click of a link deleted meanwhile counts for its workspace only.
// EINVALID, with nothing written, if a click has a malformed link or
// workspace ID or a time before 1970.
func (s *ClickService) RecordClicks(ctx context.Context, clicks []link.Click) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(clicks) == 0 {
		return nil
	}
	// Sum up in memory first so each counter is read and written once.
	type key struct {
		bucket string
		id     uint64
		start  int64 // -1 for the per-link total
	}
	sums := make(map[key]uint64)
	links := make(map[uint64]bool) // link IDs to check for existence
	for i, c := range clicks {
		wid, ok := parseID(prefixWorkspace, c.WorkspaceID)
		if !ok {
			return link.Errorf(link.EINVALID, "click %d: workspace ID %q is malformed", i, c.WorkspaceID)
		}
		lid, ok := parseID(prefixLink, c.LinkID)
		if !ok {
			return link.Errorf(link.EINVALID, "click %d: link ID %q is malformed", i, c.LinkID)
		}
		if c.Time.Unix() < 0 {
			return link.Errorf(link.EINVALID, "click %d: time %s is before 1970", i, c.Time.Format(time.RFC3339))
		}
		h, d := hourStart(c.Time), dayStart(c.Time)
		sums[key{string(bucketClicksWorkspaceHour), wid, h}]++
		sums[key{string(bucketClicksWorkspaceDay), wid, d}]++
		sums[key{string(bucketClicksLinkHour), lid, h}]++
		sums[key{string(bucketClicksLinkDay), lid, d}]++
		sums[key{string(bucketClicksLink), lid, -1}]++
		links[lid] = false
	}
	return s.db.db.Update(func(tx *bolt.Tx) error {
		lb := tx.Bucket(bucketLinks)
		exists := make(map[uint64]bool, len(links))
		for lid := range links {
			exists[lid] = lb.Get(itob(lid)) != nil
		}
		for k, n := range sums {
			perLink := k.bucket != string(bucketClicksWorkspaceHour) && k.bucket != string(bucketClicksWorkspaceDay)
			if perLink && !exists[k.id] {
				continue
			}
			ck := itob(k.id)
			if k.start >= 0 {
				ck = concat(ck, itob(uint64(k.start)))
			}
			if err := addCounter(tx.Bucket([]byte(k.bucket)), ck, int64(n)); err != nil {
				return fmt.Errorf("count clicks: %w", err)
			}
		}
		return nil
	})
}

// WorkspaceHourly returns the workspace's non-empty hours whose start lies
// in [start, end), in order. ENOTFOUND for an unknown workspace.
func (s *ClickService) WorkspaceHourly(ctx context.Context, workspaceID string, start, end time.Time) ([]link.Bucket, error) {
	return s.workspaceBuckets(workspaceID, bucketClicksWorkspaceHour, start, end)
}

// WorkspaceDaily returns the workspace's non-empty UTC days whose start
// lies in [start, end), in order. ENOTFOUND for an unknown workspace.
func (s *ClickService) WorkspaceDaily(ctx context.Context, workspaceID string, start, end time.Time) ([]link.Bucket, error) {
	return s.workspaceBuckets(workspaceID, bucketClicksWorkspaceDay, start, end)
}

// LinkHourly returns the link's non-empty hours whose start lies in
// [start, end), in order. ENOTFOUND, also for a link of another workspace.
func (s *ClickService) LinkHourly(ctx context.Context, workspaceID, linkID string, start, end time.Time) ([]link.Bucket, error) {
	return s.linkBuckets(workspaceID, linkID, bucketClicksLinkHour, start, end)
}

// LinkDaily returns the link's non-empty UTC days whose start lies in
// [start, end), in order. ENOTFOUND, also for a link of another workspace.
func (s *ClickService) LinkDaily(ctx context.Context, workspaceID, linkID string, start, end time.Time) ([]link.Bucket, error) {
	return s.linkBuckets(workspaceID, linkID, bucketClicksLinkDay, start, end)
}

func (s *ClickService) workspaceBuckets(workspaceID string, name []byte, start, end time.Time) ([]link.Bucket, error) {
	wid, ok := parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	var out []link.Bucket
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		var err error
		out, err = readBuckets(tx.Bucket(name), itob(wid), start, end)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *ClickService) linkBuckets(workspaceID, linkID string, name []byte, start, end time.Time) ([]link.Bucket, error) {
	wid, ok1 := parseID(prefixWorkspace, workspaceID)
	lid, ok2 := parseID(prefixLink, linkID)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", linkID)
	}
	var out []link.Bucket
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if _, err := findLink(tx, wid, lid); err != nil {
			return err
		}
		var err error
		out, err = readBuckets(tx.Bucket(name), itob(lid), start, end)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readBuckets walks the time buckets of owner (an 8-byte ID) whose start is
// in [start, end).
func readBuckets(b *bolt.Bucket, owner []byte, start, end time.Time) ([]link.Bucket, error) {
	out := []link.Bucket{}
	from := start.Unix()
	if start.Nanosecond() != 0 {
		from++ // a bucket starting in the same second but before start is out
	}
	if from < 0 {
		from = 0
	}
	c := b.Cursor()
	for k, v := c.Seek(concat(owner, itob(uint64(from)))); k != nil && bytes.HasPrefix(k, owner); k, v = c.Next() {
		if len(k) != 16 || len(v) != 8 {
			return nil, fmt.Errorf("click bucket %x: malformed", k)
		}
		t := time.Unix(int64(btoi(k[8:])), 0).UTC()
		if !t.Before(end) {
			break
		}
		out = append(out, link.Bucket{Start: t, Clicks: int64(btoi(v))})
	}
	return out, nil
}
