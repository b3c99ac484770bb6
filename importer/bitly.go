package importer

import (
	"context"
	"io"
	"net/url"
	"strings"
)

// bitlyColumns are the columns of Bitly's CSV export of links, under the
// names its exports use (its API's field names, which the links export
// follows, and the dashboard's headings): the bitlink, the long URL, the
// title, the tags, the creation time and the click total.
var bitlyColumns = map[string][]string{
	"link":     {"link", "bitlink", "short_url", "short_link", "id"},
	"long_url": {"long_url", "original_url", "destination", "destination_url", "url"},
	"title":    {"title"},
	"tags":     {"tags"},
	"created":  {"created_at", "created", "date_created", "creation_date"},
	"clicks":   {"clicks", "total_clicks", "engagements", "total_engagements", "user_clicks"},
}

// bitlyHosts are Bitly's own short domains: a link on them lands on the
// primary host; a link on a branded domain keeps that domain when it is a
// verified domain of the workspace.
var bitlyHosts = map[string]bool{"bit.ly": true, "j.mp": true, "bitly.com": true, "bitly.is": true}

// Bitly reads Bitly's CSV export of links. Bitly exports totals only, so
// a link's clicks count on the day it was created. A link's key is its
// bitlink ("bit.ly/3abcXYZ"), its alias the bitlink's back-half.
type Bitly struct{ r io.Reader }

// NewBitly returns the Bitly source reading r.
func NewBitly(r io.Reader) *Bitly { return &Bitly{r: r} }

// Name implements Source.
func (*Bitly) Name() string { return "bitly" }

// Each implements Source.
func (s *Bitly) Each(ctx context.Context, fn func(Link, *RowError) error) error {
	return eachHeaderRow(ctx, s.r, "bitly", bitlyColumns, "long_url", func(cols columns, row []string, where string) (Link, *RowError) {
		l := Link{Where: where, URL: cols.get(row, "long_url"), Title: cols.get(row, "title"),
			Tags: splitTags(cols.get(row, "tags"))}
		if l.URL == "" {
			return l, rowErrorf(where, "no long_url")
		}
		bitlink := trimScheme(cols.get(row, "link"))
		if bitlink != "" {
			u, err := url.Parse("https://" + bitlink)
			if err != nil || u.Host == "" || strings.Trim(u.Path, "/") == "" {
				return l, rowErrorf(where, "link %q is not a bitlink", bitlink)
			}
			l.Key, l.Alias = u.Host+u.Path, strings.Trim(u.Path, "/")
			if !bitlyHosts[strings.ToLower(u.Host)] {
				l.Domain = strings.ToLower(u.Host)
			}
			l.Where = where + " (" + l.Key + ")"
		}
		if rowErr := cols.readCreatedAndClicks(&l, row, where, "created"); rowErr != nil {
			return l, rowErr
		}
		if l.Key == "" {
			l.Key = "url " + l.URL + " " + cols.get(row, "created")
		}
		return l, nil
	}, fn)
}
