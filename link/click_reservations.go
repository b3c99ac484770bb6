package link

import "context"

// ClickReservations counts the clicks of links with max_clicks in the
// store itself, so that every linkbolt instance on one database reserves
// from the same count and the instances together let exactly max_clicks
// through (the PostgreSQL store). The server uses it when its click
// service provides it; without it (the bbolt store: one process) the
// server counts in its own memory.
type ClickReservations interface {
	// ReserveClick takes one of the clicks the link id has left under
	// its max_clicks as stored now (consume), or only looks whether one
	// is left. ok says there was one, or that the stored link has no
	// max_clicks any more. started is false when the link's count has
	// not been started: nothing was taken or looked at, and
	// StartClickReservations starts it. A click taken is never given
	// back. ENOTFOUND when the link is gone.
	ReserveClick(ctx context.Context, linkID string, consume bool) (ok, started bool, err error)
	// StartClickReservations starts the count of the link id at its
	// stored click total (the click backlog's included), unless it has
	// been started; a link without max_clicks gets none. The caller
	// writes the clicks it holds first. ENOTFOUND.
	StartClickReservations(ctx context.Context, linkID string) error
}
