package link

import (
	"context"
	"time"
)

// The types of orphan visits: requests to a short-link host that found no
// link.
const (
	// OrphanBaseURL is a GET of a host's root "/".
	OrphanBaseURL = "base_url"
	// OrphanInvalidShortURL is a one-segment path that is no link (also a
	// deleted or held alias).
	OrphanInvalidShortURL = "invalid_short_url"
	// OrphanRegular404 is any other path answered 404 by the short-link
	// side.
	OrphanRegular404 = "regular_404"
)

// OrphanTypes lists the orphan visit types in the order answers show them.
var OrphanTypes = []string{OrphanBaseURL, OrphanInvalidShortURL, OrphanRegular404}

// ValidOrphanType reports whether t is one of OrphanTypes.
func ValidOrphanType(t string) bool {
	return t == OrphanBaseURL || t == OrphanInvalidShortURL || t == OrphanRegular404
}

// MaxOrphanPath is how many bytes of a visited path an orphan visit keeps.
const MaxOrphanPath = 200

// OrphanVisit is one visit to a short-link host that found no link,
// classified: it never keeps the address or the user agent.
type OrphanVisit struct {
	Time time.Time
	// Domain is the custom domain's hostname, "" for the primary host.
	Domain string
	Type   string
	// Path is the visited path without its query, at most MaxOrphanPath
	// bytes.
	Path     string
	Referrer string
	Country  string
	Device   string
	Browser  string
	OS       string
	Bot      bool
}

// OrphanCount is the number of orphan visits of one type in one hour.
type OrphanCount struct {
	Hour  time.Time
	Type  string
	Count int64
}

// OrphanVisitFilter selects the kept orphan visits of one domain, newest
// first.
type OrphanVisitFilter struct {
	Domain     string
	Type       string // "" for every type
	Start, End time.Time
	// Cursor is where the previous page ended ("" for the first page), as
	// FindOrphanVisits returned it.
	Cursor string
	Limit  int
}

// OrphanVisitStore keeps orphan visits: hourly counters per domain and
// type, which count every visit, and at most a given number of visit
// records per domain and hour.
type OrphanVisitStore interface {
	// AddOrphanVisits counts every visit of the batch and keeps the
	// record of those that find fewer than perHour visits of their
	// domain already counted in their hour.
	AddOrphanVisits(ctx context.Context, visits []OrphanVisit, perHour int) error
	// OrphanCounts returns the hourly counters of domain from start
	// (inclusive) to end (exclusive), in hour order.
	OrphanCounts(ctx context.Context, domain string, start, end time.Time) ([]OrphanCount, error)
	// FindOrphanVisits returns a page of the kept visits of f, newest
	// first, and the cursor of the next page ("" after the last).
	// EINVALIDREQUEST for a cursor it did not make.
	FindOrphanVisits(ctx context.Context, f OrphanVisitFilter) ([]OrphanVisit, string, error)
	// PruneOrphanVisits deletes the visit records and the counters from
	// before before, and returns how many records it deleted.
	PruneOrphanVisits(ctx context.Context, before time.Time) (int, error)
}
