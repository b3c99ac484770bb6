package importer

import (
	"context"
	"errors"
	"io"
	"strings"
)

// csvColumns are the generic CSV's columns and the header names each is
// found under (matched without case, spaces or dashes counting as
// underscores), the documented one first.
var csvColumns = map[string][]string{
	"url":        {"url", "long_url", "destination_url", "destination", "original_url"},
	"alias":      {"alias", "short_code", "keyword", "slug", "code"},
	"tags":       {"tags", "tag"},
	"title":      {"title", "name"},
	"created_at": {"created_at", "created", "date"},
	"clicks":     {"clicks", "visits"},
}

// CSV reads a generic CSV file: a header row naming its columns, in any
// order, of which only url is required: url, alias, tags (separated by
// "|", or by "," inside a quoted field), title, created_at (RFC 3339,
// "2006-01-02 15:04:05" or a date, UTC unless it says otherwise) and
// clicks (a total). A row's key is its alias, or without one its URL and
// creation time, so a file imported twice adds nothing.
type CSV struct{ r io.Reader }

// NewCSV returns the generic CSV source reading r.
func NewCSV(r io.Reader) *CSV { return &CSV{r: r} }

// Name implements Source.
func (*CSV) Name() string { return "csv" }

// Each implements Source.
func (s *CSV) Each(ctx context.Context, fn func(Link, *RowError) error) error {
	return eachHeaderRow(ctx, s.r, "csv", csvColumns, "url", func(cols columns, row []string, where string) (Link, *RowError) {
		l := Link{Where: where, URL: cols.get(row, "url"), Alias: cols.get(row, "alias"), Title: cols.get(row, "title"),
			Tags: splitTags(cols.get(row, "tags"))}
		if l.URL == "" {
			return l, rowErrorf(where, "no URL")
		}
		if rowErr := cols.readCreatedAndClicks(&l, row, where, "created_at"); rowErr != nil {
			return l, rowErr
		}
		l.Key = l.Alias
		if l.Key == "" {
			l.Key = "url " + l.URL + " " + cols.get(row, "created_at")
		}
		return l, nil
	}, fn)
}

// eachHeaderRow reads a CSV file with a header row: it finds the columns
// of names in the header (required among them, else an EINVALID error),
// then hands each row to read and what read makes of it to fn.
func eachHeaderRow(ctx context.Context, r io.Reader, source string, names map[string][]string, required string,
	read func(cols columns, row []string, where string) (Link, *RowError), fn func(Link, *RowError) error) error {
	if r == nil {
		return missingColumn(source, required, names[required])
	}
	f := newCSVFile(ctx, r, "line")
	var cols columns
	for cols == nil {
		header, _, rowErr, err := f.next()
		if errors.Is(err, io.EOF) {
			return nil // an empty file: nothing to import
		}
		if err != nil {
			return err
		}
		if rowErr != nil {
			return missingColumn(source, required, names[required])
		}
		cols = findColumns(header, names)
		if _, ok := cols[required]; !ok {
			return missingColumn(source, required, names[required])
		}
	}
	return f.each(ctx, func(row []string, where string, rowErr *RowError) error {
		if rowErr != nil {
			return fn(Link{}, rowErr)
		}
		l, rowErr := read(cols, row, where)
		if rowErr != nil {
			l = Link{}
		}
		return fn(l, rowErr)
	})
}

// trimScheme drops a URL's scheme: "https://bit.ly/x" → "bit.ly/x".
func trimScheme(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		return s[i+3:]
	}
	return s
}
