package importer

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// csvFile reads the rows of a CSV file one at a time, telling a broken
// row (a stray quote, a field that is never closed) from a file that
// cannot be read.
type csvFile struct {
	r    *csv.Reader
	name string // "line" or "log line", for Where
}

func newCSVFile(ctx context.Context, r io.Reader, name string) *csvFile {
	cr := csv.NewReader(&fieldLimit{ctx: ctx, r: r, line: 1, started: 1})
	cr.FieldsPerRecord = -1 // rows of any length; each source checks its own
	return &csvFile{r: cr, name: name}
}

// each hands every row left in f to fn, with where it is or the RowError
// of a row that cannot be parsed, until the end of f (nil), the end of ctx
// or an error from the file or from fn.
func (f *csvFile) each(ctx context.Context, fn func(row []string, where string, rowErr *RowError) error) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		row, where, rowErr, err := f.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(row, where, rowErr); err != nil {
			return err
		}
	}
}

// next returns the next row and where it is, a RowError for a row that
// cannot be parsed, or the error io.EOF at the end. A leading byte order
// mark (spreadsheets write one) is dropped, "\N" (MySQL's NULL) read as
// empty, empty rows skipped.
func (f *csvFile) next() (row []string, where string, rowErr *RowError, err error) {
	for {
		row, err = f.r.Read()
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, "", rowErrorf(fmt.Sprintf("%s %d", f.name, pe.StartLine), "not valid CSV: %v", pe.Err), nil
		}
		if err != nil {
			return nil, "", nil, err
		}
		line, _ := f.r.FieldPos(0)
		where = fmt.Sprintf("%s %d", f.name, line)
		if len(row) > 0 {
			row[0] = strings.TrimPrefix(row[0], "\ufeff")
		}
		empty := true
		for i, v := range row {
			if v == `\N` {
				row[i] = ""
			}
			if strings.TrimSpace(row[i]) != "" {
				empty = false
			}
		}
		if !empty {
			return row, where, nil, nil
		}
	}
}

// headerName is a column name as matched: lower case, spaces and dashes
// as underscores.
func headerName(s string) string {
	s = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(s, "\ufeff")))
	return strings.NewReplacer(" ", "_", "-", "_").Replace(s)
}

// columns maps each field the source knows to its column in a header,
// taking the first of each field's names that the header has.
type columns map[string]int

func findColumns(header []string, names map[string][]string) columns {
	at := map[string]int{}
	for i, h := range header {
		if _, dup := at[headerName(h)]; !dup {
			at[headerName(h)] = i
		}
	}
	cols := columns{}
	for field, aliases := range names {
		for _, a := range aliases {
			if i, ok := at[a]; ok {
				cols[field] = i
				break
			}
		}
	}
	return cols
}

// get returns the field's value in row, trimmed, or "".
func (c columns) get(row []string, field string) string {
	i, ok := c[field]
	if !ok || i >= len(row) {
		return ""
	}
	return strings.TrimSpace(row[i])
}

// readCreatedAndClicks reads a row's creation date, from the field
// created, and its click total, from clicks, into l.
func (c columns) readCreatedAndClicks(l *Link, row []string, where, created string) *RowError {
	var ok bool
	if l.CreatedAt, ok = parseTime(c.get(row, created)); !ok {
		return rowErrorf(where, "%s %q is not a date", created, c.get(row, created))
	}
	if l.Clicks, ok = parseClicks(c.get(row, "clicks")); !ok {
		return rowErrorf(where, "clicks %q is not a number of clicks", c.get(row, "clicks"))
	}
	return nil
}

// timeLayouts are the forms of a date the file sources read, UTC unless
// they say otherwise.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
	"1/2/2006 15:04:05", // US spreadsheets (Bitly's dashboard export opened and saved)
	"1/2/2006 15:04",
	"1/2/2006",
}

// parseTime reads a date in one of timeLayouts; "" is the zero time.
func parseTime(s string) (time.Time, bool) {
	if s == "" || s == "0000-00-00 00:00:00" {
		return time.Time{}, true
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && n < 1<<33 {
		return time.Unix(n, 0).UTC(), true // unix seconds
	}
	return time.Time{}, false
}

// parseClicks reads a click total; "" is 0.
func parseClicks(s string) (int64, bool) {
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	return n, err == nil && n >= 0
}

// splitTags splits a tags field at "|" or ",", trimmed, empties dropped.
func splitTags(s string) []string {
	var tags []string
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == '|' || r == ',' }) {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags
}

// missingColumn is the error of a file without a column its source needs.
func missingColumn(source, what string, names []string) error {
	return link.Errorf(link.EINVALID, "%s: the file's header has no %s column (one of %s)", source, what, strings.Join(names, ", "))
}

// MaxCSVFields bounds the fields of one CSV row. encoding/csv keeps a row's
// fields in memory at 16 bytes or more each, so a line of 30 million
// commas would take gigabytes; no export this package reads has more than
// a few dozen columns.
const MaxCSVFields = 1000

// MaxCSVRow bounds the bytes of one CSV row. encoding/csv holds a row
// whole until its end, so a file without line breaks (/dev/zero) grew to
// gigabytes before anything was imported; no export this package reads
// has rows of more than a few kilobytes (a destination is at most 4 KB).
const MaxCSVRow = 1 << 20

// fieldLimit passes a CSV file through, counting the fields and bytes of
// each row as encoding/csv splits them (a delimiter or line break inside
// quotes does not count), and fails the file at a row of more than
// MaxCSVFields fields or MaxCSVRow bytes, before the CSV reader holds
// them. It stops at the end of ctx too: one read of the CSV reader may
// read a whole row, and a signal must not wait for it.
type fieldLimit struct {
	ctx     context.Context
	r       io.Reader
	quoted  bool
	fields  int
	bytes   int // of the row so far
	line    int // the line the bytes read are on, for the error
	started int // the line the row began on
}

func (f *fieldLimit) Read(p []byte) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := f.r.Read(p)
	for i, c := range p[:n] {
		if f.bytes++; f.bytes > MaxCSVRow {
			return i, link.Errorf(link.EINVALID, "line %d is longer than %d bytes: no export linkbolt imports has such rows (is it a CSV file?)", f.started, MaxCSVRow)
		}
		switch {
		case c == '"':
			f.quoted = !f.quoted // a doubled "" inside quotes flips twice
		case c == '\n':
			f.line++
			if !f.quoted {
				f.fields, f.bytes, f.started = 0, 0, f.line
			}
		case c == ',' && !f.quoted:
			if f.fields++; f.fields >= MaxCSVFields {
				return i, link.Errorf(link.EINVALID, "line %d has more than %d columns: no export linkbolt imports has so many", f.started, MaxCSVFields)
			}
		}
	}
	return n, err
}
