package postgres

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// aliasLoader reads the links of redirects that miss the cache, many in
// one statement when many wait: while its readers are all busy, the
// lookups that come in wait together, and the next free reader takes them
// all (up to aliasBatch) in one round trip. A lookup that finds a reader
// free goes out at once, alone, so a quiet server pays no wait for the
// batching; under uniform traffic over many links (most redirects miss
// the cache), the database spends one statement's overhead on dozens of
// redirects instead of one each.
type aliasLoader struct {
	db      *DB
	readers int // statements in flight at most

	mu      sync.Mutex
	pending []*aliasLookup
	running int
}

// aliasBatch is the most lookups one statement reads.
const aliasBatch = 256

// aliasReadTimeout bounds a batch's statement: its lookups' requests may
// have ended, so it does not run on their contexts.
const aliasReadTimeout = 10 * time.Second

type aliasLookup struct {
	domain, alias string
	done          chan struct{}
	l             *link.Link
	err           error
}

func newAliasLoader(db *DB, readers int) *aliasLoader {
	return &aliasLoader{db: db, readers: max(readers, 1)}
}

// load returns the link of domain (lower case) and alias. ENOTFOUND.
func (a *aliasLoader) load(ctx context.Context, domain, alias string) (*link.Link, error) {
	w := &aliasLookup{domain: domain, alias: alias, done: make(chan struct{})}
	a.mu.Lock()
	a.pending = append(a.pending, w)
	if a.running < a.readers {
		a.running++
		go a.read()
	}
	a.mu.Unlock()
	select {
	case <-w.done:
		return w.l, w.err
	case <-ctx.Done():
		return nil, ctx.Err() // the batch answers no one then
	}
}

// read answers the waiting lookups, a batch a statement, until none wait.
func (a *aliasLoader) read() {
	for {
		a.mu.Lock()
		n := min(len(a.pending), aliasBatch)
		if n == 0 {
			a.running--
			a.pending = nil // let a long queue's array go
			a.mu.Unlock()
			return
		}
		batch := a.pending[:n:n]
		a.pending = a.pending[n:]
		a.mu.Unlock()
		a.answer(batch)
	}
}

// answer reads the batch's links and wakes its lookups.
func (a *aliasLoader) answer(batch []*aliasLookup) {
	ctx, cancel := context.WithTimeout(context.Background(), aliasReadTimeout)
	defer cancel()
	if len(batch) == 1 {
		w := batch[0]
		w.l, w.err = a.db.findLinkByAlias(ctx, w.domain, w.alias)
		if w.err == nil || link.ErrorCode(w.err) == link.ENOTFOUND {
			a.db.stall.saw(nil) // the database answers
		}
		close(w.done)
		return
	}
	found, err := a.db.findLinksByAlias(ctx, batch)
	if err == nil {
		a.db.stall.saw(nil)
	}
	for _, w := range batch {
		switch l, ok := found[aliasKey{w.domain, w.alias}]; {
		case err != nil:
			w.err = err
		case ok:
			// Lookups of one alias share the link, as the cache's
			// readers share what it keeps: redirects only read it.
			w.l = l
		default:
			w.err = link.Errorf(link.ENOTFOUND, "no link %q", w.alias)
		}
		close(w.done)
	}
}

type aliasKey struct{ domain, alias string }

// A redirect reads a link with its campaign's UTM values (redirectView):
// redirectLinkColumns from links l joined by campaignJoin.
const (
	redirectLinkColumns = linkColumns + `, c.utm_source, c.utm_medium, c.utm_campaign`
	campaignJoin        = `LEFT JOIN campaigns c ON c.id = l.campaign_id AND c.workspace_id = l.workspace_id`
)

// findLinkByAlias reads one link for a redirect. ENOTFOUND.
func (db *DB) findLinkByAlias(ctx context.Context, domain, alias string) (*link.Link, error) {
	var src, med, camp *string
	l, err := scanLink(db.pool.QueryRow(ctx, `SELECT `+redirectLinkColumns+` FROM links l `+campaignJoin+`
		WHERE l.domain = $1 AND l.alias = $2`, domain, alias), &src, &med, &camp)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "no link %q", alias)
	}
	if err != nil {
		return nil, err
	}
	redirectView(l, src, med, camp)
	return l, nil
}

// findLinksByAlias reads the links of a batch of lookups in one statement,
// by the (domain, alias) index: those found, by domain and alias.
func (db *DB) findLinksByAlias(ctx context.Context, batch []*aliasLookup) (map[aliasKey]*link.Link, error) {
	domains, aliases := make([]string, len(batch)), make([]string, len(batch))
	for i, w := range batch {
		domains[i], aliases[i] = w.domain, w.alias
	}
	rows, err := db.pool.Query(ctx, `SELECT `+redirectLinkColumns+` FROM unnest($1::text[], $2::text[]) AS q(domain, alias)
		JOIN links l ON l.domain = q.domain AND l.alias = q.alias `+campaignJoin, domains, aliases)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[aliasKey]*link.Link, len(batch))
	for rows.Next() {
		var src, med, camp *string
		l, err := scanLink(rows, &src, &med, &camp)
		if err != nil {
			return nil, err
		}
		redirectView(l, src, med, camp)
		out[aliasKey{l.Domain, l.Alias}] = l
	}
	return out, rows.Err()
}

// redirectView makes l as redirects read it: its campaign's UTM values
// where it has none of its own, its clicks left out (they change with
// every click; a redirect reads none).
func redirectView(l *link.Link, src, med, camp *string) {
	l.Clicks = 0
	if src != nil {
		l.UTMSource = cmp.Or(l.UTMSource, *src)
		l.UTMMedium = cmp.Or(l.UTMMedium, *med)
		l.UTMCampaign = cmp.Or(l.UTMCampaign, *camp)
	}
}
