package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// RateBudget is link.RateBudget on PostgreSQL: each key's bucket is a row
// of rate_budgets holding the time at which it is full again (its
// theoretical arrival time, in the generic cell rate algorithm). An
// allowed request is one statement that moves that time on by one
// request's interval, under the row's lock, so that the processes on the
// database never spend more than the bucket holds together.
type RateBudget struct{ db *DB }

var _ link.RateBudget = (*RateBudget)(nil)

// fullAtRate is, for the row b, when its bucket is full at the rate $2 (a
// minute's requests) as of $3 (Unix nanoseconds), before any request of
// now: the stored time when the rate did not change; else the requests
// the bucket holds at its stored rate, at most $2, as a time at the new
// rate. Only the span to come (at most a minute) goes through float8,
// where it is exact to the nanosecond.
const fullAtRate = `CASE WHEN b.per_minute = $2::integer THEN greatest(b.full_ns, $3::bigint)
	ELSE $3::bigint + round(($2::integer - least($2::integer::float8,
		b.per_minute - greatest(b.full_ns - $3::bigint, 0)::float8 * b.per_minute / 60e9)) * 60e9 / $2::integer)::bigint END`

// takeRate takes one request of $1's bucket at $3 if the bucket holds one:
// a new key's bucket is full; $4 is one request's interval (a minute /
// $2). It returns the new full time, and no row when refused.
const takeRate = `INSERT INTO rate_budgets AS b (key, per_minute, full_ns) VALUES ($1::text, $2::integer, $3::bigint + $4::bigint)
ON CONFLICT (key) DO UPDATE SET per_minute = $2::integer, full_ns = (` + fullAtRate + `) + $4::bigint
WHERE (` + fullAtRate + `) + $4::bigint <= $3::bigint + 60000000000
RETURNING b.full_ns`

// refusedRate returns when $1's refused bucket is full at $2 as of $3,
// keeping that at the new rate when the rate changed, so that the
// requests the bucket holds refill at the new rate from now on, as in
// memory.
const refusedRate = `UPDATE rate_budgets AS b SET per_minute = $2::integer, full_ns = ` + fullAtRate + `
WHERE b.key = $1::text RETURNING b.full_ns`

// TakeRate takes one request of key's bucket (see link.RateBudget).
func (r *RateBudget) TakeRate(ctx context.Context, key string, perMinute int, now time.Time) (bool, time.Time, error) {
	if perMinute <= 0 {
		return false, time.Time{}, fmt.Errorf("rate budget of %q: rate %d is not positive", key, perMinute)
	}
	at, interval := now.UnixNano(), int64(time.Minute)/int64(perMinute)
	// A refused take finds its row in the second statement; the row is
	// gone only when the upkeep deleted it as full in between (an
	// instance's clock well behind the others'): take again.
	for range 2 {
		var full int64
		err := r.db.pool.QueryRow(ctx, takeRate, key, perMinute, at, interval).Scan(&full)
		if err == nil {
			return true, time.Unix(0, full), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return false, time.Time{}, fmt.Errorf("rate budget: %s", r.db.redact(err))
		}
		err = r.db.pool.QueryRow(ctx, refusedRate, key, perMinute, at).Scan(&full)
		if err == nil {
			return false, time.Unix(0, full), nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return false, time.Time{}, fmt.Errorf("rate budget: %s", r.db.redact(err))
		}
	}
	return false, time.Time{}, fmt.Errorf("rate budget of %q: its row keeps vanishing", key)
}

// pruneChunk bounds the rows one statement of PruneRateBudgets deletes,
// so that no statement holds many row locks or runs long.
const pruneChunk = 1000

// PruneRateBudgets deletes the rows of buckets full before before, in
// chunks. A row taken from in the meantime is full later and stays: the
// outer condition is checked again on the row's newest version.
func (r *RateBudget) PruneRateBudgets(ctx context.Context, before time.Time) (int, error) {
	n := 0
	for {
		tag, err := r.db.pool.Exec(ctx, `DELETE FROM rate_budgets WHERE full_ns < $1
			AND key IN (SELECT key FROM rate_budgets WHERE full_ns < $1 LIMIT $2)`, before.UnixNano(), pruneChunk)
		if err != nil {
			return n, fmt.Errorf("prune rate budgets: %s", r.db.redact(err))
		}
		n += int(tag.RowsAffected())
		if tag.RowsAffected() < pruneChunk {
			return n, nil
		}
	}
}
