package importer

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
)

// OnConflict says what an import does with a link whose alias another
// link already has.
type OnConflict string

// The ways to handle a taken alias.
const (
	ConflictSkip   OnConflict = "skip"   // leave the link out, saying why
	ConflictRename OnConflict = "rename" // give it alias-2, alias-3, …
)

// ParseOnConflict checks an on_conflict value; "" is skip.
func ParseOnConflict(s string) (OnConflict, error) {
	switch OnConflict(s) {
	case "", ConflictSkip:
		return ConflictSkip, nil
	case ConflictRename:
		return ConflictRename, nil
	}
	return "", link.Errorf(link.EINVALID, "on_conflict %q: must be skip or rename", s)
}

// Options are an import's settings.
type Options struct {
	WorkspaceID string
	DryRun      bool
	OnConflict  OnConflict
	// Rules are the rules of destinations, as link creation checks them
	// (nil: no IDNA, no own hosts).
	Rules *link.URLRules
	// Blocked reports whether a destination is on the blocklist; nil
	// blocks nothing.
	Blocked func(dest string) bool
	// BatchSize is the most links written in one transaction; 0 is
	// DefaultBatchSize.
	BatchSize int
	// MaxItems bounds Report.Items (the counts go on); 0 keeps them all.
	MaxItems int
	// OnItem, when set, is handed each row's item as it is decided, in
	// the source's order, and Report.Items keeps none: a file of millions
	// of rows is reported as it is read, not held.
	OnItem func(Item)
	// MaxLinks stops the import, with an error, once about this many rows
	// were imported (in a dry run, would be), skipped or failed, or ten
	// times as many rows were read counting those imported before, so
	// that a source without end ends; running it again carries on past
	// the links imported before. 0 is no bound.
	MaxLinks int
	// Now is the clock (the time of links and clicks a source does not
	// date); nil is time.Now.
	Now func() time.Time
}

// DefaultBatchSize is how many links an import writes in one transaction.
const DefaultBatchSize = 1000

// maxBatchClicks ends a batch early once its links carry this many dated
// clicks, so a batch's transaction stays small.
const maxBatchClicks = 200_000

// A Report says what an import did (or, in a dry run, would do).
type Report struct {
	DryRun bool
	// Imported links were created; Skipped ones were not (their alias
	// taken, their URL bad, or imported before: Status "exists", counted
	// in Exists too); Failed rows could not be read from the source.
	Imported, Skipped, Failed int
	Exists                    int
	// Clicks is the imported links' clicks, dated and undated.
	Clicks int64
	// ClicksRedated counts, of Clicks, the dated clicks whose date was in
	// the future (after the import) or before Earliest: each was counted
	// as an undated click instead, on its link's creation day, so the
	// link's total still matches its source and no click lies beyond the
	// range analytics read.
	ClicksRedated int64
	// Items are the rows in the source's order, at most Options.MaxItems;
	// MoreItems counts those left out.
	Items     []Item
	MoreItems int
}

// An Item is one row of the report.
type Item struct {
	Where  string
	Key    string
	Alias  string
	Status link.ImportStatus
	Reason string
	LinkID string
}

// Run reads src and imports its links into the workspace through store,
// a batch of links per transaction, and returns what it did. A link
// imported before (by this source, under the same key) is reported as
// "exists" and adds nothing, so Run may be repeated, and after a source
// that stopped half-way it carries on where that run stopped. When the
// source stops with an error, the links read before it are imported, and
// Run returns the report so far with that error. A dry run reads
// everything, checks it against the data, and writes nothing.
func Run(ctx context.Context, store link.ImportService, src Source, opts Options) (*Report, error) {
	r := &run{
		store: store, src: src, opts: opts,
		report: &Report{DryRun: opts.DryRun},
		batch:  link.ImportBatch{Source: src.Name(), DryRun: opts.DryRun},
	}
	if r.opts.BatchSize <= 0 {
		r.opts.BatchSize = DefaultBatchSize
	}
	if r.opts.Now == nil {
		r.opts.Now = time.Now
	}
	if opts.DryRun {
		r.batch.Claimed = link.NewNameSet()
		r.seen = link.NewNameSet()
	}
	srcErr := src.Each(ctx, func(l Link, rowErr *RowError) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if rows := r.report.Imported + r.report.Skipped + r.report.Failed; opts.MaxLinks > 0 &&
			(rows-r.report.Exists >= opts.MaxLinks || rows >= 10*opts.MaxLinks) {
			return fmt.Errorf("stopped after %d rows, the most one import reads: run it again to carry on", rows)
		}
		r.add(l, rowErr)
		// Rows decided without storage (failed, skipped, met before in a
		// dry run) wait in pending too: a batch's worth flushes, whatever
		// the kind, so that a source of such rows without end holds no
		// more than that.
		if len(r.pending) >= r.opts.BatchSize || r.batchClicks >= maxBatchClicks {
			return r.flush(ctx)
		}
		return nil
	})
	if err := r.flush(ctx); err != nil && srcErr == nil {
		srcErr = err
	}
	return r.report, srcErr
}

// run is one import under way.
type run struct {
	store  link.ImportService
	src    Source
	opts   Options
	report *Report

	// pending are the rows since the last flush, in order: decided ones
	// (failed, bad) and those waiting in batch (index >= 0).
	pending     []pendingRow
	batch       link.ImportBatch
	batchClicks int
	// seen holds the keys a dry run met, which a real run finds in the
	// imports bucket.
	seen *link.NameSet
}

type pendingRow struct {
	item    Item
	index   int // in batch.Items, or -1 when decided
	where   string
	redated int64 // the item's dated clicks counted undated (see Report)
}

// add decides a row or queues it for the next batch.
func (r *run) add(l Link, rowErr *RowError) {
	if rowErr != nil {
		r.pending = append(r.pending, pendingRow{index: -1, item: Item{Where: rowErr.Where, Status: link.ImportFailed, Reason: rowErr.Reason}})
		return
	}
	it, redated, reason := r.item(&l)
	if reason != "" {
		r.pending = append(r.pending, pendingRow{index: -1, item: Item{Where: l.Where, Key: l.Key, Alias: l.Alias, Status: link.ImportSkipped, Reason: reason}})
		return
	}
	if r.seen != nil {
		if !r.seen.Add(l.Key) {
			r.pending = append(r.pending, pendingRow{index: -1, item: Item{Where: l.Where, Key: l.Key, Alias: l.Alias, Status: link.ImportExists, Reason: "imported before"}})
			return
		}
	}
	r.pending = append(r.pending, pendingRow{index: len(r.batch.Items), where: l.Where, redated: redated})
	r.batch.Items = append(r.batch.Items, *it)
	r.batchClicks += len(it.Clicks)
}

// item turns a source's link into what storage creates, or says why it
// cannot be: a bad URL, alias, tag or title.
func (r *run) item(l *Link) (it *link.ImportItem, redated int64, reason string) {
	if l.Key == "" {
		l.Key = l.Where
	}
	nl := link.Link{
		WorkspaceID: r.opts.WorkspaceID, DestinationURL: l.URL, Alias: l.Alias, Domain: l.Domain,
		CreatedAt: l.CreatedAt,
	}
	nl.Title = cut(clean(l.Title), link.MaxTitleLength)
	for _, tag := range l.Tags {
		if tag = clean(tag); tag != "" {
			nl.Tags = append(nl.Tags, tag)
		}
	}
	nl.Normalize()
	// Tags beyond linkbolt's limits are cut rather than the link left out.
	for i := range nl.Tags {
		nl.Tags[i] = cut(nl.Tags[i], link.MaxTagLength)
	}
	if len(nl.Tags) > link.MaxTags {
		nl.Tags = nl.Tags[:link.MaxTags]
	}
	if nl.Alias != "" {
		if msg := link.CheckAlias(nl.Alias); msg != "" {
			if r.opts.OnConflict != ConflictRename {
				return nil, 0, fmt.Sprintf("alias %q %s", nl.Alias, msg)
			}
			nl.Alias = "" // a generated code instead
		}
	}
	if err := nl.Validate(r.opts.Rules); err != nil {
		if fs := link.ErrorFields(err); len(fs) > 0 && fs[0].Field == "destination_url" {
			return nil, 0, "bad URL: " + fs[0].Message
		}
		return nil, 0, link.ErrorMessage(err)
	}
	if r.opts.Blocked != nil && r.opts.Blocked(nl.DestinationURL) {
		return nil, 0, "bad URL: is on this service's blocklist"
	}
	now := r.opts.Now()
	if !l.CreatedAt.IsZero() && (l.CreatedAt.Before(Earliest) || l.CreatedAt.After(now.Add(24*time.Hour))) {
		return nil, 0, fmt.Sprintf("created_at %s is before 2000 or in the future", l.CreatedAt.UTC().Format(time.RFC3339))
	}
	if l.CreatedAt.After(now) {
		// Up to a day ahead is a source's local time read as UTC: the link
		// is made now, so that nothing of it is dated after the import.
		nl.CreatedAt = now
	}
	if l.Clicks > MaxLinkClicks {
		return nil, 0, fmt.Sprintf("clicks %d is more than linkbolt counts on one link (%d)", l.Clicks, int64(MaxLinkClicks))
	}
	it = &link.ImportItem{Key: l.Key, Link: nl, Rename: r.opts.OnConflict == ConflictRename}
	dated := visitClicks(l.Key, l.Visits)
	// A click dated after the import, or before any shortener, is a
	// source's error (a clock, a unit): stored at its date it would count
	// in the link's total and in no range analytics read. It is counted as
	// the source's undated clicks are.
	for _, c := range dated {
		if c.Time.Before(Earliest) || c.Time.After(now) {
			redated++
			continue
		}
		it.Clicks = append(it.Clicks, c)
	}
	if rest := max(l.Clicks-int64(len(dated)), 0) + redated; rest > 0 {
		it.Undated = rest
		it.UndatedAt = nl.CreatedAt
		if it.UndatedAt.IsZero() {
			it.UndatedAt = now
		}
	}
	return it, redated, ""
}

// visitClicks classifies a link's dated visits as the click recorder
// classifies live clicks. A source keeps no addresses, so a visitor is
// told apart by what is left: the same user agent, country and referrer
// on one link on one UTC day count as one visitor.
func visitClicks(key string, visits []Visit) []link.Click {
	if len(visits) == 0 {
		return nil
	}
	cs := make([]link.Click, 0, len(visits))
	for _, v := range visits {
		if v.At.IsZero() {
			continue
		}
		ua := analytics.ClassifyUA(v.UserAgent)
		country := strings.ToUpper(strings.TrimSpace(v.Country))
		if len(country) != 2 {
			country = analytics.Unknown
		}
		ref := strings.TrimSpace(v.Referrer)
		if strings.EqualFold(ref, "direct") {
			ref = ""
		}
		if strings.Contains(ref, "://") {
			ref = link.ReferrerHost(ref)
		}
		at := v.At.UTC()
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\x00%s", key, at.Unix()/86400, v.UserAgent, country, ref)
		cs = append(cs, link.Click{
			Time: at, Referrer: ref, Browser: ua.Browser, OS: ua.OS, Device: ua.Device, Bot: ua.Bot,
			Country: country, Visitor: h.Sum64(),
		})
	}
	return cs
}

// flush writes the batch and reports the pending rows.
func (r *run) flush(ctx context.Context) error {
	var err error
	if len(r.batch.Items) > 0 {
		err = r.store.ImportLinks(ctx, r.opts.WorkspaceID, &r.batch)
	}
	for _, p := range r.pending {
		if p.index < 0 {
			r.record(p.item)
			continue
		}
		it := &r.batch.Items[p.index]
		if err != nil {
			continue // nothing of the batch was written; Run returns err
		}
		alias := it.Alias
		if alias == "" {
			alias = it.Link.Alias // the source's, where storage took none
		}
		r.record(Item{Where: p.where, Key: it.Key, Alias: alias, Status: it.Status, Reason: it.Reason, LinkID: it.LinkID})
		if it.Status == link.ImportImported {
			r.report.Clicks += int64(len(it.Clicks)) + it.Undated
			r.report.ClicksRedated += p.redated
		}
	}
	r.pending, r.batch.Items, r.batchClicks = r.pending[:0], r.batch.Items[:0], 0
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

func (r *run) record(it Item) {
	if it.Status == link.ImportExists {
		r.report.Exists++
	}
	switch it.Status {
	case link.ImportImported:
		r.report.Imported++
	case link.ImportFailed:
		r.report.Failed++
	default:
		r.report.Skipped++
	}
	if r.opts.OnItem != nil {
		r.opts.OnItem(it)
		return
	}
	if r.opts.MaxItems > 0 && len(r.report.Items) >= r.opts.MaxItems {
		r.report.MoreItems++
		return
	}
	r.report.Items = append(r.report.Items, it)
}

// clean makes a source's title or tag fit for a link rather than leave
// the link out: a page title often holds line breaks and tabs. Whitespace
// runs become one space, other control characters and bytes that are not
// UTF-8 are dropped.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	return strings.Join(strings.Fields(s), " ")
}

// cut shortens s to at most n characters.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// IsInputError reports whether err says the source's input itself is
// unusable (a file without a url column): a link.Error, which a source
// returns for what its user must fix, as opposed to a source that stopped.
func IsInputError(err error) bool {
	var e *link.Error
	return errors.As(err, &e)
}
