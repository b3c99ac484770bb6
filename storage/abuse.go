package storage

import (
	"context"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// AbuseReportService keeps the instance's abuse reports.
type AbuseReportService struct {
	db *DB
}

var _ link.AbuseReportService = (*AbuseReportService)(nil)

// NewAbuseReportService returns the abuse report service of db.
func NewAbuseReportService(db *DB) *AbuseReportService { return &AbuseReportService{db: db} }

type reportRecord struct {
	Workspace   uint64    `json:"ws"`
	Link        uint64    `json:"link"`
	Domain      string    `json:"domain,omitempty"`
	Alias       string    `json:"alias"`
	Destination string    `json:"destination"`
	Reason      string    `json:"reason"`
	Details     string    `json:"details,omitempty"`
	Contact     string    `json:"contact,omitempty"`
	Count       int64     `json:"count"`
	Status      string    `json:"status"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func (r *reportRecord) report(ids *idCodec, id uint64) *link.AbuseReport {
	return &link.AbuseReport{
		ID: ids.formatID(link.PrefixReport, id), WorkspaceID: ids.formatID(prefixWorkspace, r.Workspace),
		LinkID: ids.formatID(prefixLink, r.Link), Domain: r.Domain, Alias: r.Alias, Destination: r.Destination,
		Reason: r.Reason, Details: r.Details, Contact: r.Contact, Count: r.Count, Status: r.Status,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

// openReportKey is the key of bucketReportsOpen: the link and the reason.
func openReportKey(lid uint64, reason string) []byte { return concat(itob(lid), []byte(reason)) }

// ReportAbuse records a report of a link (see link.AbuseReportService).
// ENOTFOUND for a link or workspace ID that is not the store's.
func (s *AbuseReportService) ReportAbuse(ctx context.Context, r *link.AbuseReport) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, r.WorkspaceID)
	lid, ok2 := s.db.ids.parseID(prefixLink, r.LinkID)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "link %q not found", r.LinkID)
	}
	now := s.db.now()
	var id uint64
	var out reportRecord
	err := s.db.update(func(tx *bolt.Tx) error {
		reports, open := tx.Bucket(bucketReports), tx.Bucket(bucketReportsOpen)
		key := openReportKey(lid, r.Reason)
		if v := open.Get(key); v != nil {
			id = btoi(v)
			var rec reportRecord
			if ok, err := getJSON(reports, v, &rec); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("abuse report index: report %d missing", id)
			}
			rec.Count++
			rec.UpdatedAt = now
			if r.Details != "" {
				rec.Details = r.Details
			}
			if r.Contact != "" {
				rec.Contact = r.Contact
			}
			out = rec
			return putJSON(reports, v, &rec)
		}
		if open.Stats().KeyN >= link.MaxOpenReports {
			return link.ErrTooManyReports
		}
		var err error
		if id, err = nextID(reports); err != nil {
			return err
		}
		out = reportRecord{Workspace: wid, Link: lid, Domain: r.Domain, Alias: r.Alias, Destination: r.Destination,
			Reason: r.Reason, Details: r.Details, Contact: r.Contact, Count: 1, Status: link.ReportOpen, CreatedAt: now, UpdatedAt: now}
		if err := putJSON(reports, itob(id), &out); err != nil {
			return err
		}
		return open.Put(key, itob(id))
	})
	if err != nil {
		return err
	}
	*r = *out.report(s.db.ids, id)
	return nil
}

// FindAbuseReports returns reports newest first (see
// link.AbuseReportService).
func (s *AbuseReportService) FindAbuseReports(ctx context.Context, status string, before time.Time, limit int) ([]*link.AbuseReport, error) {
	type item struct {
		id  uint64
		rec reportRecord
	}
	var all []item
	err := s.db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketReports).ForEach(func(k, v []byte) error {
			var rec reportRecord
			if err := decodeJSON(v, &rec); err != nil {
				return err
			}
			if (status == "" || rec.Status == status) && (before.IsZero() || rec.UpdatedAt.Before(before)) {
				all = append(all, item{btoi(k), rec})
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b item) int {
		if c := b.rec.UpdatedAt.Compare(a.rec.UpdatedAt); c != 0 {
			return c
		}
		return int(b.id) - int(a.id)
	})
	out := []*link.AbuseReport{}
	for _, it := range all[:min(len(all), max(limit, 0))] {
		out = append(out, it.rec.report(s.db.ids, it.id))
	}
	return out, nil
}

// SetAbuseReportStatus changes a report's status. ENOTFOUND; ECONFLICT
// when it is reopened while its link has an open report of the reason.
func (s *AbuseReportService) SetAbuseReportStatus(ctx context.Context, id, status string) (*link.AbuseReport, error) {
	rid, ok := s.db.ids.parseID(link.PrefixReport, id)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "abuse report %q not found", id)
	}
	now := s.db.now()
	var out *link.AbuseReport
	err := s.db.update(func(tx *bolt.Tx) error {
		reports, open := tx.Bucket(bucketReports), tx.Bucket(bucketReportsOpen)
		var rec reportRecord
		if ok, err := getJSON(reports, itob(rid), &rec); err != nil {
			return err
		} else if !ok {
			return link.Errorf(link.ENOTFOUND, "abuse report %q not found", id)
		}
		key := openReportKey(rec.Link, rec.Reason)
		switch {
		case rec.Status == status:
		case status == link.ReportOpen:
			if open.Get(key) != nil {
				return link.Errorf(link.ECONFLICT, "the link has an open report for %s already", rec.Reason)
			}
			if err := open.Put(key, itob(rid)); err != nil {
				return err
			}
		case rec.Status == link.ReportOpen:
			if err := open.Delete(key); err != nil {
				return err
			}
		}
		if rec.Status != status {
			rec.Status, rec.UpdatedAt = status, now
			if err := putJSON(reports, itob(rid), &rec); err != nil {
				return err
			}
		}
		out = rec.report(s.db.ids, rid)
		return nil
	})
	return out, err
}
