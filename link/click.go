package link

import (
	"context"
	"time"
)

// Click is one followed short link (a GET redirect; HEAD is not a click).
type Click struct {
	LinkID      string
	WorkspaceID string
	Time        time.Time
	// Referrer is the host of the Referer header, or "" for direct visits.
	Referrer  string
	UserAgent string
}

// Bucket is the click count of one time bucket starting at Start.
type Bucket struct {
	Start  time.Time
	Clicks int64
}

// ClickService stores clicks and answers from their aggregates.
type ClickService interface {
	// RecordClicks writes a batch of clicks, their counters and aggregates
	// in one transaction.
	RecordClicks(ctx context.Context, clicks []Click) error
	// WorkspaceHourly returns the workspace's hourly click counts for the
	// hours in [start, end), only the non-empty hours, in order.
	WorkspaceHourly(ctx context.Context, workspaceID string, start, end time.Time) ([]Bucket, error)
}
