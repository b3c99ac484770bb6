package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// The clicks of links with max_clicks are counted in click_reservations,
// one row per limited link, so that the instances on one database let
// exactly max_clicks through between them:
//
//   - A click is reserved by one statement (reserveClickSQL) that
//     increments the row's used while it is below the link's max_clicks
//     as stored now: of any number of concurrent clicks through any
//     number of instances, the row lock lets exactly the rest through. A
//     limit raised or lowered counts at once, even on an instance whose
//     redirect cache still holds the link as it was (but for a link that
//     instance found used up in the last second: see the server's
//     usedUpFor).
//   - The row is started at the link's stored click total (its counter
//     and its clicks in the click backlog) the first time the link is
//     clicked with a limit, after the clicking instance has written the
//     clicks it holds (the server persists its recorder first). Clicks of
//     the link another instance still holds in its queue then (taken
//     while the link had no limit, at most about one clicks.flush_interval
//     of them) are not in it: the limit lets that many more through, once.
//     So do the clicks an instance serves before it hears that the link
//     has a limit (its redirect cache: until the change's notification
//     arrives, milliseconds), as it does not ask the database then.
//   - It lives while the link has max_clicks: removing the limit deletes
//     it (UpdateLink), so that a limit set again starts from the stored
//     total, with the clicks made meanwhile; deleting the link deletes it
//     (a new link on the same alias has a new ID, and a row of its own).
//   - A reserved click is never given back, also when the redirect then
//     fails or the recorder drops the click: the count errs on the side of
//     fewer redirects, and is ahead of the stored total by such clicks.
//   - `linkbolt copy` carries used (dump.Link.ClicksReserved), so that a
//     copied instance stays exact.

var _ link.ClickReservations = (*ClickService)(nil)

// reserveClickSQL takes a click of the link $1 when $2 (consume) and one
// is left, and answers the link's max_clicks, its count as the statement
// found it (NULL: not started) and whether a click was taken. Under READ
// COMMITTED an UPDATE that waited for the row's lock compares the
// newest used, so the count never passes max_clicks.
const reserveClickSQL = `WITH l AS (SELECT max_clicks FROM links WHERE id = $1),
	taken AS (UPDATE click_reservations r SET used = r.used + 1 FROM l
		WHERE $2 AND r.link_id = $1 AND r.used < l.max_clicks RETURNING r.used)
	SELECT l.max_clicks, (SELECT used FROM click_reservations WHERE link_id = $1), EXISTS (SELECT 1 FROM taken)
	FROM l`

// ReserveClick takes one of the clicks the link id has left, or with
// consume false looks whether one is left, in one statement. ENOTFOUND.
func (s *ClickService) ReserveClick(ctx context.Context, linkID string, consume bool) (ok, started bool, err error) {
	if !s.db.validID(link.PrefixLink, linkID) {
		return false, false, link.Errorf(link.ENOTFOUND, "link %q not found", linkID)
	}
	var max int64
	var used *int64
	var taken bool
	err = s.db.pool.QueryRow(ctx, reserveClickSQL, linkID, consume).Scan(&max, &used, &taken)
	if consume && !errors.Is(err, pgx.ErrNoRows) {
		s.db.noteWrite(err)
	}
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, false, link.Errorf(link.ENOTFOUND, "link %q not found", linkID)
	case err != nil:
		return false, false, fmt.Errorf("reserve a click: %w", err)
	case max <= 0: // the limit was removed: nothing to count
		return true, true, nil
	case taken:
		return true, true, nil
	case used == nil:
		return false, false, nil
	case consume:
		// Used up, or the row went with the limit while the statement
		// ran (a click refused as the limit is removed).
		return false, true, nil
	}
	return *used < max, true, nil
}

// StartClickReservations starts the count of the link id at its stored
// click total, unless it has been started or the link has no max_clicks.
// The link's row is read FOR SHARE, so that an update removing its limit
// (which deletes the count) either comes after it or is seen by it.
// ENOTFOUND.
func (s *ClickService) StartClickReservations(ctx context.Context, linkID string) error {
	if !s.db.validID(link.PrefixLink, linkID) {
		return link.Errorf(link.ENOTFOUND, "link %q not found", linkID)
	}
	var found bool
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		var limited bool
		err := tx.QueryRow(ctx, `SELECT max_clicks > 0 FROM links WHERE id = $1 FOR SHARE`, linkID).Scan(&limited)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		} else if err != nil {
			return err
		}
		found = true
		if !limited {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO click_reservations (link_id, used)
			SELECT l.id, l.clicks + (SELECT count(*) FROM click_backlog b WHERE b.link_id = l.id) FROM links l WHERE l.id = $1
			ON CONFLICT (link_id) DO NOTHING`, linkID)
		return err
	})
	if err != nil {
		return fmt.Errorf("start the click reservations: %w", err)
	}
	if !found {
		return link.Errorf(link.ENOTFOUND, "link %q not found", linkID)
	}
	return nil
}

// clearClickReservations deletes the count of the link id in tx: its
// limit was removed or set anew (UpdateLink), and a limit set again starts
// from the stored total.
func clearClickReservations(ctx context.Context, tx pgx.Tx, linkID string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM click_reservations WHERE link_id = $1`, linkID); err != nil {
		return fmt.Errorf("clear the click reservations: %w", err)
	}
	return nil
}
