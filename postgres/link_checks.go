package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// LinkCheckService keeps the destination checks of links in PostgreSQL
// (link_checks, see 0025_link_checks.sql). Instances share the work: a
// claim takes due rows with FOR UPDATE SKIP LOCKED and moves them past
// the lease in the same statement, so no two instances check a link at
// once.
type LinkCheckService struct{ db *DB }

var _ link.LinkCheckService = (*LinkCheckService)(nil)

// setDestinationChecks turns the checks of workspace id on (its links are
// enrolled from the first by the next claims) or off (its checks are
// forgotten), in tx, the transaction that updates the workspace's row.
func setDestinationChecks(ctx context.Context, tx pgx.Tx, id string, on bool) error {
	if on {
		_, err := tx.Exec(ctx, `UPDATE workspaces SET link_checks_enrolled = 0 WHERE id = $1`, id)
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM link_checks WHERE workspace_id = $1`, id); err != nil {
		return fmt.Errorf("forget link checks: %w", err)
	}
	return nil
}

// claimLinkChecksSQL claims at most $2 checks due at $1, oldest due
// first, moving them to $3: it reads link_checks_due from its start and
// skips the rows another instance's claim holds.
const claimLinkChecksSQL = `WITH due AS (
		SELECT link_id FROM link_checks WHERE next_check_at <= $1
		ORDER BY next_check_at LIMIT $2 FOR UPDATE SKIP LOCKED)
	UPDATE link_checks c SET next_check_at = $3 FROM due, links l
	WHERE c.link_id = due.link_id AND l.id = c.link_id
	RETURNING c.link_id, c.workspace_id, l.destination_url, c.status, c.http_status, c.error,
		c.checked_at, c.failures, c.destination_url`

// ClaimDueLinkChecks enrolls new links and claims due ones (see
// link.LinkCheckService).
func (s *LinkCheckService) ClaimDueLinkChecks(ctx context.Context, now time.Time, limit int, lease time.Duration) ([]*link.LinkCheckTarget, error) {
	if limit <= 0 {
		return nil, nil
	}
	if err := s.enroll(ctx, now, limit); err != nil {
		return nil, err
	}
	var out []*link.LinkCheckTarget
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, claimLinkChecksSQL, dbTime(now), limit, dbTime(now.Add(lease)))
		if err != nil {
			return fmt.Errorf("claim link checks: %w", err)
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.LinkCheckTarget, error) {
			var t link.LinkCheckTarget
			var checked *time.Time
			p := &t.Previous
			if err := r.Scan(&t.LinkID, &t.WorkspaceID, &t.DestinationURL, &p.Status, &p.HTTPStatus, &p.Error,
				&checked, &p.Failures, &p.DestinationURL); err != nil {
				return nil, err
			}
			p.LinkID, p.WorkspaceID = t.LinkID, t.WorkspaceID
			if checked != nil {
				p.CheckedAt = checked.UTC()
			}
			if p.DestinationURL != t.DestinationURL {
				t.Previous = link.LinkCheck{LinkID: t.LinkID, WorkspaceID: t.WorkspaceID, Status: link.CheckUnchecked}
			}
			return &t, nil
		})
		if err != nil {
			return fmt.Errorf("claim link checks: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// enrollSettle is how old a link must be for the enrollment cursor to
// pass it: longer than any transaction that creates links.
const enrollSettle = time.Minute

// enrollWindow is how many links after its cursor a workspace's
// enrollment reads per poll.
const enrollWindow = 1000

// enroll gives at most limit links of the workspaces with checks on, not
// enrolled yet, a check due at now. A workspace's row is locked while its
// links are enrolled, so that turning its checks off waits, and another
// instance enrolls the other workspaces meanwhile.
func (s *LinkCheckService) enroll(ctx context.Context, now time.Time, limit int) error {
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, link_checks_enrolled FROM workspaces WHERE destination_checks
			ORDER BY id FOR NO KEY UPDATE SKIP LOCKED`)
		if err != nil {
			return fmt.Errorf("enroll link checks: %w", err)
		}
		type cursor struct {
			id   string
			last int64
		}
		cursors, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (cursor, error) {
			var c cursor
			return c, r.Scan(&c.id, &c.last)
		})
		if err != nil {
			return fmt.Errorf("enroll link checks: %w", err)
		}
		for _, c := range cursors {
			if limit <= 0 {
				return nil
			}
			var last *int64
			var n int
			// The links after the cursor, a window at a time: those not
			// enrolled yet are, and the cursor passes the window's prefix
			// of links enrolled and older than enrollSettle, so that a link
			// whose creation drew a lower seq but committed after a newer
			// one is enrolled by a later poll, not skipped.
			err := tx.QueryRow(ctx, `WITH win AS (
					SELECT l.id, l.seq, l.created_at, l.destination_url,
						EXISTS (SELECT 1 FROM link_checks c WHERE c.link_id = l.id) AS enrolled
					FROM links l WHERE l.workspace_id = $1 AND l.seq > $2 ORDER BY l.seq LIMIT `+strconv.Itoa(enrollWindow)+`),
				ins AS (
					INSERT INTO link_checks (link_id, workspace_id, destination_url, next_check_at)
					SELECT id, $1, destination_url, $4 FROM (SELECT * FROM win WHERE NOT enrolled ORDER BY seq LIMIT $3) todo
					ON CONFLICT (link_id) DO NOTHING RETURNING link_id),
				done AS (
					SELECT seq, created_at <= $5 AND (enrolled OR id IN (SELECT link_id FROM ins)) AS passed FROM win)
				SELECT (SELECT max(seq) FROM done WHERE seq < coalesce((SELECT min(seq) FROM done WHERE NOT passed), 9223372036854775807)),
					(SELECT count(*) FROM ins)`,
				c.id, c.last, limit, dbTime(now), dbTime(now.Add(-enrollSettle))).Scan(&last, &n)
			if err != nil {
				return fmt.Errorf("enroll link checks: %w", err)
			}
			if last == nil {
				continue
			}
			limit -= n
			if _, err := tx.Exec(ctx, `UPDATE workspaces SET link_checks_enrolled = $2 WHERE id = $1`, c.id, *last); err != nil {
				return fmt.Errorf("enroll link checks: %w", err)
			}
		}
		return nil
	})
}

// SaveLinkCheck records a check (see link.LinkCheckService).
func (s *LinkCheckService) SaveLinkCheck(ctx context.Context, c *link.LinkCheck, next time.Time) error {
	if !s.db.validID(link.PrefixWorkspace, c.WorkspaceID) || !s.db.validID(link.PrefixLink, c.LinkID) {
		return link.Errorf(link.ENOTFOUND, "link %q not found", c.LinkID)
	}
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		l, err := scanLink(tx.QueryRow(ctx, `SELECT `+linkColumns+` FROM links l WHERE l.id = $1 AND l.workspace_id = $2`, c.LinkID, c.WorkspaceID))
		if errors.Is(err, pgx.ErrNoRows) {
			return link.Errorf(link.ENOTFOUND, "link %q not found", c.LinkID)
		}
		if err != nil {
			return err
		}
		var before link.CheckStatus
		var checkedDest string
		err = tx.QueryRow(ctx, `SELECT status, destination_url FROM link_checks WHERE link_id = $1 FOR UPDATE`, c.LinkID).Scan(&before, &checkedDest)
		if errors.Is(err, pgx.ErrNoRows) || err == nil && l.DestinationURL != c.DestinationURL {
			return nil // checks turned off, or the destination changed: a stale result
		}
		if err != nil {
			return fmt.Errorf("save link check: %w", err)
		}
		if checkedDest != l.DestinationURL {
			before = link.CheckUnchecked
		}
		at := dbTime(c.CheckedAt)
		if _, err := tx.Exec(ctx, `UPDATE link_checks SET status = $2, http_status = $3, error = $4, checked_at = $5,
				failures = $6, destination_url = $7, next_check_at = $8 WHERE link_id = $1`,
			c.LinkID, string(c.Status), c.HTTPStatus, c.Error, at, c.Failures, c.DestinationURL, dbTime(next)); err != nil {
			return fmt.Errorf("save link check: %w", err)
		}
		event := link.CheckEvent(before, c.Status)
		if event == "" || s.db.events == nil {
			return nil
		}
		saved := *c
		saved.CheckedAt = at.UTC()
		l.Check = &saved
		return s.db.appendEvent(ctx, tx, l.WorkspaceID, event, c.CheckedAt, func() ([]byte, error) { return s.db.events.LinkData(l) })
	})
}

// FindLinkChecks returns the checks of links of a workspace.
func (s *LinkCheckService) FindLinkChecks(ctx context.Context, workspaceID string, ids []string) (map[string]*link.LinkCheck, error) {
	out := make(map[string]*link.LinkCheck, len(ids))
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.pool.Query(ctx, `SELECT link_id, status, http_status, error, checked_at, failures, destination_url
		FROM link_checks WHERE workspace_id = $1 AND link_id = ANY($2)`, workspaceID, ids)
	if err != nil {
		return nil, fmt.Errorf("find link checks: %w", err)
	}
	checks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.LinkCheck, error) {
		c := &link.LinkCheck{WorkspaceID: workspaceID}
		var checked *time.Time
		if err := r.Scan(&c.LinkID, &c.Status, &c.HTTPStatus, &c.Error, &checked, &c.Failures, &c.DestinationURL); err != nil {
			return nil, err
		}
		if checked != nil {
			c.CheckedAt = checked.UTC()
		}
		return c, nil
	})
	if err != nil {
		return nil, fmt.Errorf("find link checks: %w", err)
	}
	for _, c := range checks {
		out[c.LinkID] = c
	}
	return out, nil
}

// ResetLinkCheck forgets the check of a link, due at now (see
// link.LinkCheckService).
func (s *LinkCheckService) ResetLinkCheck(ctx context.Context, workspaceID, id string, now time.Time) error {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixLink, id) {
		return link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	_, err := s.db.pool.Exec(ctx, `UPDATE link_checks c SET status = 'unchecked', http_status = 0, error = '', checked_at = NULL,
			failures = 0, destination_url = l.destination_url, next_check_at = $3
		FROM links l WHERE c.link_id = $1 AND c.workspace_id = $2 AND l.id = c.link_id`, id, workspaceID, dbTime(now))
	if err != nil {
		return fmt.Errorf("reset link check: %w", err)
	}
	return nil
}
