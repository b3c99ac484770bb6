package postgres

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"
)

// topCap is the most entries a period's top list of each dimension keeps,
// as in the bbolt store.
var topCap = [numDims]int{dimLinks: 1024, dimReferrers: 256, dimCountries: 256, dimDevices: 256, dimBrowsers: 256, dimOS: 256, dimVariants: 16}

// boundSections holds each section (a scope's period's dimension) that
// took new values in this batch to topCap entries by the Space-Saving
// rule, as the bbolt store does: the entries of the smallest estimates
// (clicks and inherited) are dropped, and the new values that stay
// inherit the largest estimate dropped, so that every value with more
// than clicks/topCap clicks in the period stays listed. An entry's clicks
// and bots stay the exact clicks since it took its place.
//
// No other batch changes a section meanwhile: each batch upserts a
// scope's period's totals row (dim 0) before its dimension rows, so the
// batches touching a section wait for one another on that row.
func boundSections(ctx context.Context, tx pgx.Tx, table, period string, fresh map[aggKey][]string) error {
	if len(fresh) == 0 {
		return nil
	}
	secs := make([]aggKey, 0, len(fresh))
	for k := range fresh {
		secs = append(secs, k)
	}
	slices.SortFunc(secs, compareAggKeys)
	n := len(secs)
	scopes, periods, dims, caps := make([]string, n), make([]int32, n), make([]int16, n), make([]int64, n)
	for i, k := range secs {
		scopes[i], periods[i], dims[i], caps[i] = k.scope, k.period, k.dim, int64(topCap[k.dim])
	}
	// The sections over their bound: read by the primary key.
	rows, err := tx.Query(ctx, `SELECT s.scope, s.p, s.d FROM unnest($1::text[], $2::integer[], $3::smallint[], $4::bigint[]) AS s(scope, p, d, cap)
		CROSS JOIN LATERAL (SELECT count(*) AS n FROM `+table+` t WHERE t.scope = s.scope AND t.`+period+` = s.p AND t.dim = s.d) c
		WHERE c.n > s.cap`, scopes, periods, dims, caps)
	if err != nil {
		return err
	}
	over, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (aggKey, error) {
		var k aggKey
		return k, r.Scan(&k.scope, &k.period, &k.dim)
	})
	if err != nil {
		return err
	}
	for _, sec := range over {
		if err := boundSection(ctx, tx, table, period, sec, fresh[sec]); err != nil {
			return err
		}
	}
	return nil
}

// boundSection drops the smallest entries of one section over its bound.
func boundSection(ctx context.Context, tx pgx.Tx, table, period string, sec aggKey, fresh []string) error {
	rows, err := tx.Query(ctx, `SELECT value, clicks + inherited FROM `+table+`
		WHERE scope = $1 AND `+period+` = $2 AND dim = $3
		ORDER BY clicks + inherited, value DESC`, sec.scope, sec.period, sec.dim)
	if err != nil {
		return err
	}
	type entry struct {
		value    string
		estimate int64
	}
	ents, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (entry, error) {
		var e entry
		return e, r.Scan(&e.value, &e.estimate)
	})
	if err != nil {
		return err
	}
	excess := len(ents) - topCap[sec.dim]
	if excess <= 0 {
		return nil
	}
	gone := make([]string, excess)
	for i, e := range ents[:excess] {
		gone[i] = e.value
	}
	inherit := ents[excess-1].estimate
	var stay []string
	for _, v := range fresh {
		if !slices.Contains(gone, v) {
			stay = append(stay, v)
		}
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE scope = $1 AND `+period+` = $2 AND dim = $3 AND value = ANY($4)`,
		sec.scope, sec.period, sec.dim, gone); err != nil {
		return err
	}
	if len(stay) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE `+table+` SET inherited = inherited + $5 WHERE scope = $1 AND `+period+` = $2 AND dim = $3 AND value = ANY($4)`,
			sec.scope, sec.period, sec.dim, stay, inherit); err != nil {
			return err
		}
	}
	return nil
}
