package link

import (
	"context"
	"time"
)

// RateBudget keeps the request budgets of workspaces (and of users outside
// any workspace) in the store, so that every process on the store draws
// from one budget per key. A store whose processes share nothing (bbolt,
// one process) has none: the server then keeps the budgets in memory.
//
// A key's budget is a bucket of perMinute requests that refills at
// perMinute a minute, kept as the time at which the bucket is full again
// (a generic cell rate algorithm): that time in the past is a full bucket,
// the same as a key never seen.
type RateBudget interface {
	// TakeRate takes one request at now from key's bucket, which holds
	// perMinute (> 0) requests. When the key's rate changed (its
	// workspace changed plan), the bucket keeps its requests, at most the
	// new perMinute. It reports whether the request is allowed and when
	// the bucket is full again if no request comes: after this request
	// when allowed. Concurrent takes of one key, from any process, never
	// spend more than the bucket holds. Its errors are internal: the
	// store could not answer.
	TakeRate(ctx context.Context, key string, perMinute int, now time.Time) (allowed bool, full time.Time, err error)
	// PruneRateBudgets deletes the budgets full before before (as good
	// as none) and returns how many it deleted.
	PruneRateBudgets(ctx context.Context, before time.Time) (int, error)
}
