package importer

import (
	"context"
	"io"
	"strings"
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
	visits := map[string][]Visit{}
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
func yourlsLink(cols columns, row []string, where string, visits map[string][]Visit) (Link, *RowError) {
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
	l.Visits = visits[kw]
	delete(visits, kw)
	return l, nil
}

// readLog reads yourls_log into visits by keyword; a broken row is handed
// to fn as a RowError.
func (s *YOURLS) readLog(ctx context.Context, visits map[string][]Visit, fn func(Link, *RowError) error) error {
	f := newCSVFile(ctx, s.log, "log line")
	// Keywords, user agents, referrers and countries are kept once each,
	// and as copies: a field is part of its row's one string, which a
	// visit holding the field would keep whole (a log of 3 million rows
	// took 7.7 GB).
	shared := map[string]string{}
	intern := func(v string) string {
		if w, ok := shared[v]; ok {
			return w
		}
		v = strings.Clone(v)
		shared[v] = v
		return v
	}
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
				kw = intern(kw)
				visits[kw] = append(visits[kw], Visit{At: at, Referrer: intern(cols.get(row, "referrer")),
					UserAgent: intern(cols.get(row, "user_agent")), Country: intern(cols.get(row, "country_code"))})
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
