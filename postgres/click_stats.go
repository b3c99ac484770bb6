package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/linkbolt/linkbolt/link"
)

// defaultTopLimit is the length of top lists when the filter gives none.
const defaultTopLimit = 10

// Stats answers analytics from the aggregates in one read-only
// transaction, as the bbolt store does. The range is rounded out to whole
// UTC hours. Hourly holds each non-empty hour with all its clicks and its
// bot clicks, whatever ExcludeBots says, and for a link each day whose
// hours were rolled up as one point at the day's noon; Clicks,
// UniqueVisitors and the top lists leave bots out when it is set. The top
// lists sum the daily counts of the UTC days wholly inside the range and
// the hourly counts of the hours at its edges. A link's own top list of
// links is empty. TopLimit 0 means 10, and below 0 no limit. ENOTFOUND
// for an unknown workspace, and for a link or campaign ID not of the
// workspace; EINVALID for an unknown scope or an end before the start. A
// campaign answers from the aggregates of its ID in the workspace, zeros
// when there are none.
func (s *ClickService) Stats(ctx context.Context, f link.StatsFilter) (*link.Stats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.db.validID(link.PrefixWorkspace, f.WorkspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", f.WorkspaceID)
	}
	if f.End.Before(f.Start) {
		return nil, link.Errorf(link.EINVALID, "range end %s is before its start %s", f.End.Format(time.RFC3339), f.Start.Format(time.RFC3339))
	}
	var scope string
	switch f.Scope {
	case link.ScopeWorkspace:
		scope = "w:" + f.WorkspaceID
	case link.ScopeLink:
		if !s.db.validID(link.PrefixLink, f.ID) {
			return nil, link.Errorf(link.ENOTFOUND, "link %q not found", f.ID)
		}
		scope = "l:" + f.ID
	case link.ScopeCampaign:
		if !validCampaignID(f.ID) {
			return nil, link.Errorf(link.ENOTFOUND, "campaign %q not found", f.ID)
		}
		scope = "c:" + f.WorkspaceID + "/" + f.ID
	default:
		return nil, link.Errorf(link.EINVALID, "unknown analytics scope %q", f.Scope)
	}
	limit := f.TopLimit
	if limit == 0 {
		limit = defaultTopLimit
	}
	startH, endH := hourOf(f.Start, false), hourOf(f.End, true)
	st := &link.Stats{Hourly: []link.Bucket{}, Top: make(map[string][]link.TopEntry, numDims)}
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, f.WorkspaceID); err != nil {
			return err
		}
		if f.Scope == link.ScopeLink {
			var ok bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM links WHERE id = $1 AND workspace_id = $2)`, f.ID, f.WorkspaceID).Scan(&ok); err != nil {
				return err
			}
			if !ok {
				return link.Errorf(link.ENOTFOUND, "link %q not found", f.ID)
			}
		}
		if err := s.series(ctx, tx, st, scope, startH, endH, f.Scope == link.ScopeLink); err != nil {
			return err
		}
		if err := s.visitors(ctx, tx, st, scope, startH, endH, f.ExcludeBots); err != nil {
			return err
		}
		return s.top(ctx, tx, st, scope, startH, endH, f.ExcludeBots, limit, f.Scope == link.ScopeLink)
	})
	if err != nil {
		var le *link.Error
		if errors.As(err, &le) {
			return nil, err
		}
		return nil, fmt.Errorf("stats: %w", err)
	}
	if f.ExcludeBots {
		st.Clicks -= st.BotClicks
	}
	return st, nil
}

// hourOf is t in whole hours since the epoch, rounded up when up is set,
// clamped to the range clicks are kept in.
func hourOf(t time.Time, up bool) int32 {
	sec := t.Unix()
	if sec < 0 {
		return 0
	}
	if !t.Before(maxClickTime) {
		sec = maxClickTime.Unix()
	}
	h := sec / 3600
	if up && (sec%3600 != 0 || t.Nanosecond() != 0) {
		h++
	}
	return int32(h)
}

// series fills the totals and the time series; a link's days with
// clicks but no hours left (rolled up) that start in the range answer
// from their daily totals.
func (s *ClickService) series(ctx context.Context, tx pgx.Tx, st *link.Stats, scope string, startH, endH int32, isLink bool) error {
	rows, err := tx.Query(ctx, `SELECT hour, clicks, bots FROM click_hour_sums
		WHERE scope = $1 AND hour >= $2 AND hour < $3 ORDER BY hour`, scope, startH, endH)
	if err != nil {
		return err
	}
	var hour int32
	var clicks, bots int64
	hourly := map[int32]bool{}
	var buckets []link.Bucket
	if _, err := pgx.ForEachRow(rows, []any{&hour, &clicks, &bots}, func() error {
		buckets = append(buckets, link.Bucket{Start: time.Unix(int64(hour)*3600, 0).UTC(), Clicks: clicks, BotClicks: bots})
		hourly[hour/24] = true
		return nil
	}); err != nil {
		return err
	}
	if isLink && startH < endH {
		firstDay, lastDay := (startH+23)/24, (endH-1)/24
		rows, err := tx.Query(ctx, `SELECT day, clicks, bots FROM click_day_sums
			WHERE scope = $1 AND day >= $2 AND day <= $3 ORDER BY day`, scope, firstDay, lastDay)
		if err != nil {
			return err
		}
		if _, err := pgx.ForEachRow(rows, []any{&hour, &clicks, &bots}, func() error {
			if !hourly[hour] {
				buckets = append(buckets, link.Bucket{Start: time.Unix(int64(hour)*86400+12*3600, 0).UTC(), Clicks: clicks, BotClicks: bots})
			}
			return nil
		}); err != nil {
			return err
		}
		slices.SortFunc(buckets, func(x, y link.Bucket) int { return x.Start.Compare(y.Start) })
	}
	for _, b := range buckets {
		st.Clicks += b.Clicks
		st.BotClicks += b.BotClicks
	}
	if buckets != nil {
		st.Hourly = buckets
	}
	return nil
}

// visitors sums the distinct visitors of each UTC day the range touches.
func (s *ClickService) visitors(ctx context.Context, tx pgx.Tx, st *link.Stats, scope string, startH, endH int32, excludeBots bool) error {
	if startH >= endH {
		return nil
	}
	return tx.QueryRow(ctx, `SELECT coalesce(sum(CASE WHEN $4 THEN visitors - bot_visitors ELSE visitors END), 0)::bigint
		FROM click_day_sums WHERE scope = $1 AND day >= $2 AND day <= $3`,
		scope, startH/24, (endH-1)/24, excludeBots).Scan(&st.UniqueVisitors)
}

// top fills the top lists from the days wholly inside the range and the
// hours at its edges.
func (s *ClickService) top(ctx context.Context, tx pgx.Tx, st *link.Stats, scope string, startH, endH int32, excludeBots bool, limit int, isLink bool) error {
	firstDay, endDay := (startH+23)/24, endH/24 // the whole days: [firstDay, endDay)
	if firstDay >= endDay {
		firstDay, endDay = 0, 0
	}
	rows, err := tx.Query(ctx, `SELECT tops FROM click_hour_sums
		WHERE scope = $1 AND hour >= $2 AND hour < $3 AND NOT (hour >= $4 * 24 AND hour < $5 * 24) AND tops <> ''
		UNION ALL
		SELECT tops FROM click_day_sums WHERE scope = $1 AND day >= $4 AND day < $5 AND tops <> ''`,
		scope, startH, endH, firstDay, endDay)
	if err != nil {
		return err
	}
	var sums [numDims]map[string]int64
	var tops []byte
	if _, err := pgx.ForEachRow(rows, []any{&tops}, func() error {
		return eachTop(tops, func(dim int16, e topEntry) {
			n := e.clicks
			if excludeBots {
				n -= e.bots
			}
			if sums[dim] == nil {
				sums[dim] = map[string]int64{}
			}
			sums[dim][e.value] += n
		})
	}); err != nil {
		return err
	}
	lists := make([][]link.TopEntry, numDims)
	for dim, m := range sums {
		for v, n := range m {
			if n > 0 {
				lists[dim] = append(lists[dim], link.TopEntry{Value: v, Clicks: n})
			}
		}
	}
	for d := dimLinks; d < numDims; d++ {
		if d == dimVariants && !isLink {
			continue
		}
		l := lists[d]
		slices.SortFunc(l, func(x, y link.TopEntry) int {
			return cmp.Or(cmp.Compare(y.Clicks, x.Clicks), cmp.Compare(x.Value, y.Value))
		})
		if limit > 0 && len(l) > limit {
			l = l[:limit]
		}
		if l == nil {
			l = []link.TopEntry{}
		}
		st.Top[dimNames[d]] = l
	}
	return nil
}
