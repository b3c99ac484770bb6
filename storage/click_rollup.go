package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A link's hourly blobs are rolled up into its daily ones after a while.
//
// Every click writes an hourly and a daily blob of its link, so with
// traffic spread over many links the per-link hourly blobs are the
// largest part of the file: 2 GB of 5.2 at a million links and ten
// million clicks over 90 days. Past the days a link's hours are kept for
// (analytics.link_hours_retention), RollUpLinkHours deletes them; the
// link's daily blobs already hold the same totals and top lists, day by
// day. metaLinkHoursFrom records the first hour still kept (a UTC
// midnight, only ever moved on): for the UTC days before it, a link's
// analytics read its daily blobs only (see statsQuery.readLink) and the
// checker does not sum its hours. Workspaces and campaigns keep their
// hours for good: they are a handful of keys an hour.
var metaLinkHoursFrom = []byte("link_hours_from") // unix hour(4)

// linkHoursFrom returns the first hour whose per-link hourly blobs are
// kept (0: all are).
func linkHoursFrom(tx *bolt.Tx) uint32 {
	if v := tx.Bucket(bucketMeta).Get(metaLinkHoursFrom); len(v) == 4 {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

// RollUpLinkHours deletes the per-link hourly blobs of the UTC days before
// the one holding before, in transactions of at most pruneChunk keys so
// that clicks keep being recorded meanwhile, and returns how many it
// deleted. A link's analytics then answer those days from its daily
// blobs: totals, top lists and unique visitors of whole days are exact, a
// range starting or ending inside such a day counts the whole day, and
// the day's clicks come as one hour at 12:00 UTC in the time series. Late
// clicks for those days (an import) are counted in the daily blobs, and
// their hourly blobs are deleted by the next roll-up.
func (s *ClickService) RollUpLinkHours(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	from := floorHour(before) / hoursPerDay * hoursPerDay
	// The mark moves first: from then on readers take those days from
	// the daily blobs, whether their hours are deleted yet or not.
	err := s.db.db.Update(func(tx *bolt.Tx) error {
		if mark := linkHoursFrom(tx); mark >= from {
			from = mark // delete the late clicks' hours up to it
			return nil
		}
		return tx.Bucket(bucketMeta).Put(metaLinkHoursFrom, be32(from))
	})
	if err != nil {
		return 0, fmt.Errorf("roll up link hours: %w", err)
	}
	deleted, err := s.deleteRange(ctx, bucketClicksHourly, []byte{scopeKindLink}, append([]byte{scopeKindLink}, be32(from)...))
	if err != nil {
		return deleted, fmt.Errorf("roll up link hours: %w", err)
	}
	return deleted, nil
}
