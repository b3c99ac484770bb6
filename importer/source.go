// Package importer moves links, their click totals and, where the source
// keeps them, their dated clicks from another shortener into linkbolt.
//
// A Source reads one shortener's data (a file it exported or its API) and
// hands each link over whole; the engine (importer.go) decides what to
// create, skip or rename and records what it did, so an import can be run
// twice, or again after a source failed half-way, without adding anything
// twice.
package importer

import (
	"context"
	"fmt"
	"time"
)

// A Link is one short link as another shortener keeps it.
type Link struct {
	// Key identifies the link at its source, stable across runs: the
	// YOURLS keyword, the Shlink domain and short code, the Kutt id, the
	// Bitly link, or for a generic CSV the alias (else the row's content).
	// The engine remembers it so a second run adds nothing.
	Key string
	// Alias is the short code to keep ("" lets linkbolt make one).
	Alias string
	// Domain is the custom domain the link was served on at its source
	// ("" for the primary host). The engine keeps it only when it is a
	// verified domain of the workspace.
	Domain    string
	URL       string
	Title     string
	Tags      []string
	CreatedAt time.Time // zero when the source does not say
	// Clicks is the link's click total at its source. When Visits holds
	// fewer dated clicks than that, the rest count in the link's total
	// and in analytics on its creation day (the import's day when the
	// source gives none), as direct clicks of unknown clients, so a
	// link's total always equals the sum of its aggregates.
	Clicks int64
	// Visits are the link's dated clicks, in any order; nil when the
	// source keeps only totals.
	Visits []Visit
	// Where says where in the source the link came from, for the report:
	// "line 12", "short URL abc".
	Where string
}

// MaxLinkVisits bounds the dated clicks one link brings from an API (a
// file's log is read whole): the source stops reading a link's visits
// there, so one that lies about its pages, or counts more views than
// memory holds, cannot exhaust the server; the rest of the link's total
// counts undated.
const MaxLinkVisits = 100_000

// MaxLinkClicks is the largest click total an imported link may carry; a
// link claiming more is skipped, so that no count overflows.
const MaxLinkClicks = 1_000_000_000_000

// Earliest is the earliest time an imported link or click may be dated:
// no shortener served a link before 2000 (TinyURL began in 2002), and a
// workspace's analytics for range=all run from its earliest data in day
// buckets, of which a range holds at most analytics.MaxBuckets (54
// years). A link created earlier is skipped; a click dated earlier is
// counted as an undated one.
var Earliest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// A Visit is one dated click kept by the source.
type Visit struct {
	At        time.Time
	Referrer  string // the referring URL or "" (direct)
	UserAgent string
	Country   string // ISO 3166-1 alpha-2 when the source knows it, else ""
}

// A Source yields a shortener's links one at a time, each with all of its
// visits (a link is handed over whole or not at all).
type Source interface {
	// Name is the source's name as --from takes it: "yourls", "shlink",
	// "kutt", "bitly", "csv".
	Name() string
	// Each calls fn for every link in the source's order. A row or item
	// that cannot be read is handed to fn as a *RowError and the rest
	// follow; an error from fn, or one that stops the source (the file
	// cannot be read, the API answers 500 after its retries), ends Each
	// with that error, after the links read so far were handed over.
	Each(ctx context.Context, fn func(Link, *RowError) error) error
}

// A RowError is one row or item of the source that could not be read.
type RowError struct {
	Where  string // "line 7", "short URL abc"
	Reason string // "no URL", "created_at is not a date"
}

func (e *RowError) Error() string { return fmt.Sprintf("%s: %s", e.Where, e.Reason) }
