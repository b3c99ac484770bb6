package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// AbuseReportService keeps the instance's abuse reports in abuse_reports.
type AbuseReportService struct {
	db *DB
}

var _ link.AbuseReportService = (*AbuseReportService)(nil)

const reportColumns = `id, workspace_id, link_id, domain, alias, destination, reason, details, contact, count, status, created_at, updated_at`

func scanReport(row pgx.Row) (*link.AbuseReport, error) {
	r := &link.AbuseReport{}
	if err := row.Scan(&r.ID, &r.WorkspaceID, &r.LinkID, &r.Domain, &r.Alias, &r.Destination, &r.Reason, &r.Details,
		&r.Contact, &r.Count, &r.Status, &r.CreatedAt, &r.UpdatedAt); err != nil {
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r, nil
}

// ReportAbuse records a report of a link (see link.AbuseReportService).
func (s *AbuseReportService) ReportAbuse(ctx context.Context, r *link.AbuseReport) error {
	if !s.db.validID(link.PrefixWorkspace, r.WorkspaceID) || !s.db.validID(link.PrefixLink, r.LinkID) {
		return link.Errorf(link.ENOTFOUND, "link %q not found", r.LinkID)
	}
	now := dbTime(s.db.now())
	var out *link.AbuseReport
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		// One more of the open report, when there is one.
		got, err := scanReport(tx.QueryRow(ctx, `UPDATE abuse_reports SET count = count + 1, updated_at = $3,
				details = CASE WHEN $4 = '' THEN details ELSE $4 END, contact = CASE WHEN $5 = '' THEN contact ELSE $5 END
			WHERE link_id = $1 AND reason = $2 AND status = 'open' RETURNING `+reportColumns,
			r.LinkID, r.Reason, now, r.Details, r.Contact))
		if err == nil {
			out = got
			return nil
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("count abuse report: %w", err)
		}
		var open int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM abuse_reports WHERE status = 'open'`).Scan(&open); err != nil {
			return fmt.Errorf("count open abuse reports: %w", err)
		}
		if open >= link.MaxOpenReports {
			return link.ErrTooManyReports
		}
		id, seq, err := s.db.newID(ctx, tx, link.PrefixReport)
		if err != nil {
			return err
		}
		// Two first reports at once: the second counts on the first.
		got, err = scanReport(tx.QueryRow(ctx, `INSERT INTO abuse_reports (id, seq, workspace_id, link_id, domain, alias, destination,
				reason, details, contact, count, status, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, 'open', $11, $11)
			ON CONFLICT (link_id, reason) WHERE status = 'open' DO UPDATE SET count = abuse_reports.count + 1, updated_at = $11,
				details = CASE WHEN $9 = '' THEN abuse_reports.details ELSE $9 END,
				contact = CASE WHEN $10 = '' THEN abuse_reports.contact ELSE $10 END
			RETURNING `+reportColumns,
			id, seq, r.WorkspaceID, r.LinkID, r.Domain, r.Alias, r.Destination, r.Reason, r.Details, r.Contact, now))
		if err != nil {
			return fmt.Errorf("insert abuse report: %w", err)
		}
		out = got
		return nil
	})
	if err != nil {
		return err
	}
	*r = *out
	return nil
}

// FindAbuseReports returns reports newest first (see
// link.AbuseReportService).
func (s *AbuseReportService) FindAbuseReports(ctx context.Context, status string, before time.Time, limit int) ([]*link.AbuseReport, error) {
	var b *time.Time
	if !before.IsZero() {
		t := dbTime(before)
		b = &t
	}
	rows, err := s.db.pool.Query(ctx, `SELECT `+reportColumns+` FROM abuse_reports
		WHERE ($1 = '' OR status = $1) AND ($2::timestamptz IS NULL OR updated_at < $2)
		ORDER BY updated_at DESC, seq DESC LIMIT $3`, status, b, max(limit, 0))
	if err != nil {
		return nil, fmt.Errorf("find abuse reports: %w", err)
	}
	defer rows.Close()
	out := []*link.AbuseReport{}
	for rows.Next() {
		r, err := scanReport(rows)
		if err != nil {
			return nil, fmt.Errorf("find abuse reports: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// SetAbuseReportStatus changes a report's status. ENOTFOUND; ECONFLICT
// when it is reopened while its link has an open report of the reason.
func (s *AbuseReportService) SetAbuseReportStatus(ctx context.Context, id, status string) (*link.AbuseReport, error) {
	if !s.db.validID(link.PrefixReport, id) {
		return nil, link.Errorf(link.ENOTFOUND, "abuse report %q not found", id)
	}
	now := dbTime(s.db.now())
	var out *link.AbuseReport
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		r, err := scanReport(tx.QueryRow(ctx, `UPDATE abuse_reports SET status = $2,
				updated_at = CASE WHEN status = $2 THEN updated_at ELSE $3 END
			WHERE id = $1 RETURNING `+reportColumns, id, status, now))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return link.Errorf(link.ENOTFOUND, "abuse report %q not found", id)
		case isUnique(err, "abuse_reports_open"):
			return link.Errorf(link.ECONFLICT, "the link has an open report for this reason already")
		case err != nil:
			return fmt.Errorf("set abuse report status: %w", err)
		}
		out = r
		return nil
	})
	return out, err
}
