package importer

import (
	"context"
	"io"
	"strings"
	"time"
)

// The columns of YOURLS's tables, in the order its schema creates them
// (includes/functions-install.php): a CSV export of a table without a
// header row has them in this order.
var (
	yourlsURLColumns = []string{"keyword", "url", "title", "timestamp", "ip", "clicks"}
	yourlsLogColumns = []string{"click_id", "click_time", "shorturl", "referrer", "user_agent", "ip_address", "country_code"}
)

// YOURLS reads YOURLS's yourls_url table as CSV (keyword, url, title,
// timestamp, ip, clicks: with that header row in any order, or without a
// header in that order) and, when given, its yourls_log table as CSV
// (click_id, click_time, shorturl, referrer, user_agent, ip_address,
// country_code) for the dated clicks. A link's key and alias are its
// keyword. Times are read as UTC (YOURLS stores the server's local time
// unless configured otherwise). A log row for a keyword the url table
// does not have is left out.
type YOURLS struct {
	urls, log io.Reader
}

// NewYOURLS returns the YOURLS source reading the url table's CSV and,
// when log is not nil, the log table's.
func NewYOURLS(urls, log io.Reader) *YOURLS { return &YOURLS{urls: urls, log: log} }

// Name implements Source.
func (*YOURLS) Name() string { return "yourls" }

// Each implements Source. The log is read first, whole, into each
// keyword's visits (user agents and referrers are shared, not copied).
func (s *YOURLS) Each(ctx context.Context, fn func(Link, *RowError) error) error {
	visits := &loggedVisits{byKeyword: map[string][]loggedVisit{}, index: map[string]uint32{}}
	if s.log != nil {
		if err := s.readLog(ctx, visits, fn); err != nil {
			return err
		}
	}
	f := newCSVFile(ctx, s.urls, "line")
	var cols *yourlsCols
	return f.each(ctx, func(row []string, where string, rowErr *RowError) error {
		if rowErr == nil && cols == nil {
			c := yourlsHeader(row, yourlsURLColumns)
			if cols = &c; c.header {
				return nil
			}
		}
		var l Link
		if rowErr == nil {
			l, rowErr = yourlsLink(cols.columns, row, where, visits)
		}
		return fn(l, rowErr)
	})
}

// yourlsLink reads one row of yourls_url.
func yourlsLink(cols columns, row []string, where string, visits *loggedVisits) (Link, *RowError) {
	kw := cols.get(row, "keyword")
	l := Link{Key: kw, Alias: kw, URL: cols.get(row, "url"), Title: cols.get(row, "title"), Where: where}
	switch {
	case kw == "":
		return Link{}, rowErrorf(where, "no keyword")
	case l.URL == "":
		return Link{}, rowErrorf(where, "no URL")
	}
	l.Where = where + " (" + kw + ")"
	if rowErr := cols.readCreatedAndClicks(&l, row, where, "timestamp"); rowErr != nil {
		return Link{}, rowErr
	}
	l.Visits = visits.take(kw)
	return l, nil
}

// loggedVisits are the visits of yourls_log by keyword until their link is
// read: the whole log is held, so each visit is 24 bytes, its strings
// numbers in a table where each user agent, referrer and country is kept
// once (a Visit is 72 bytes, and a log of 3 million clicks took 7.7 GB
// when each kept its row's string).
type loggedVisits struct {
	byKeyword map[string][]loggedVisit
	strings   []string
	index     map[string]uint32 // of strings
}

type loggedVisit struct {
	sec                                int64 // unix seconds (nanoseconds would overflow past 2262)
	nsec, referrer, userAgent, country uint32
}

// add keeps a visit of kw.
func (v *loggedVisits) add(kw string, at time.Time, referrer, userAgent, country string) {
	if _, ok := v.byKeyword[kw]; !ok {
		kw = strings.Clone(kw) // not the row's string, which it is part of
	}
	v.byKeyword[kw] = append(v.byKeyword[kw], loggedVisit{sec: at.Unix(), nsec: uint32(at.Nanosecond()),
		referrer: v.intern(referrer), userAgent: v.intern(userAgent), country: v.intern(country)})
}

func (v *loggedVisits) intern(s string) uint32 {
	if i, ok := v.index[s]; ok {
		return i
	}
	s = strings.Clone(s)
	i := uint32(len(v.strings))
	v.strings = append(v.strings, s)
	v.index[s] = i
	return i
}

// take returns the visits of kw and forgets them.
func (v *loggedVisits) take(kw string) []Visit {
	logged, ok := v.byKeyword[kw]
	if !ok {
		return nil
	}
	delete(v.byKeyword, kw)
	out := make([]Visit, len(logged))
	for i, lv := range logged {
		out[i] = Visit{At: time.Unix(lv.sec, int64(lv.nsec)).UTC(), Referrer: v.strings[lv.referrer],
			UserAgent: v.strings[lv.userAgent], Country: v.strings[lv.country]}
	}
	return out
}

// readLog reads yourls_log into visits by keyword; a broken row is handed
// to fn as a RowError.
func (s *YOURLS) readLog(ctx context.Context, visits *loggedVisits, fn func(Link, *RowError) error) error {
	f := newCSVFile(ctx, s.log, "log line")
	var cols *yourlsCols
	return f.each(ctx, func(row []string, where string, rowErr *RowError) error {
		if rowErr == nil && cols == nil {
			c := yourlsHeader(row, yourlsLogColumns)
			if cols = &c; c.header {
				return nil
			}
		}
		if rowErr == nil {
			kw := cols.get(row, "shorturl")
			at, ok := parseTime(cols.get(row, "click_time"))
			switch {
			case kw == "":
				rowErr = rowErrorf(where, "no shorturl")
			case !ok || at.IsZero():
				rowErr = rowErrorf(where, "click_time %q is not a date", cols.get(row, "click_time"))
			default:
				visits.add(kw, at, cols.get(row, "referrer"), cols.get(row, "user_agent"), cols.get(row, "country_code"))
				return nil
			}
		}
		return fn(Link{}, rowErr)
	})
}

// yourlsCols are a table's columns, and whether they came from a header
// row.
type yourlsCols struct {
	columns
	header bool
}

// yourlsHeader reads the first row of a table's CSV: a header row when
// its first field names a column of the table, else the table's columns
// in schema order.
func yourlsHeader(row []string, names []string) yourlsCols {
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	if len(row) > 0 && known[headerName(row[0])] {
		cols := columns{}
		for i, h := range row {
			if n := headerName(h); known[n] {
				cols[n] = i
			}
		}
		return yourlsCols{columns: cols, header: true}
	}
	cols := columns{}
	for i, n := range names {
		cols[n] = i
	}
	return yourlsCols{columns: cols}
}
