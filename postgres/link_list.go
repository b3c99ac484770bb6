package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// FindLinkPage returns a page of the workspace's links and the number of
// links matching the filter. ENOTFOUND for an unknown workspace.
//
// Every filter but a search is answered by an index: the workspace's
// links newest first (links_workspace), a tag's (links_tags), a
// campaign's (links_campaign), a domain's (links_alias_key); none of them
// reads a link to test it, so they never stop at the scan limit. A
// search of three characters or more is answered by the trigram index
// links_search where pg_trgm could be installed. A shorter search, any
// search without that index, and a sort by clicks (which no index holds:
// see 0006_links.sql) read the newest f.ScanLimit links the other filters
// (and an indexed search) select (all of them when it is 0), and the page
// says Truncated when there were more. An indexed search without a sort
// by clicks is whole: it reads no link the index did not name.
func (s *LinkService) FindLinkPage(ctx context.Context, f link.LinkFilter) (*link.LinkPage, error) {
	if !s.db.validID(link.PrefixWorkspace, f.WorkspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", f.WorkspaceID)
	}
	if f.Limit <= 0 {
		f.Limit = link.DefaultPageLimit
	}
	if f.Page <= 0 {
		f.Page = 1
	}
	offset := math.MaxInt64 - int64(f.Limit)
	if int64(f.Page-1) < offset/int64(f.Limit) {
		offset = int64(f.Offset())
	}

	var where []string
	args := []any{f.WorkspaceID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where = append(where, "l.workspace_id = $1")
	var tags []string
	for _, t := range f.Tags {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	if len(tags) > 0 {
		where = append(where, "l.tags && "+arg(tags)+"::text[]")
	}
	if f.CampaignID != "" {
		where = append(where, "l.campaign_id = "+arg(f.CampaignID))
	}
	if f.Domain != nil {
		where = append(where, "l.domain = "+arg(strings.ToLower(strings.TrimSpace(*f.Domain))))
	}
	if f.Broken {
		// The partial index link_checks_broken names them.
		where = append(where, "l.id IN (SELECT link_id FROM link_checks WHERE workspace_id = $1 AND status = 'broken')")
	}
	switch f.Archived {
	case link.ArchivedAll:
	case link.ArchivedOnly:
		where = append(where, "l.archived")
	default:
		where = append(where, "NOT l.archived")
	}
	order := "l.seq DESC"
	if f.Sort == link.SortClicks {
		order = "l.clicks DESC, l.seq DESC"
	}

	// The links tested: all those the filters select, or the newest
	// ScanLimit of them for a search the trigram index does not answer.
	// An indexed search names its candidates, as bbolt's search index
	// does: a sort by clicks ranks the newest ScanLimit of them.
	search := strings.ToLower(strings.TrimSpace(f.Search))
	match := "true"
	if search != "" {
		if strings.ContainsAny(search, "\n") {
			match = "false" // no field holds a line break
		} else {
			match = "l.search_text LIKE " + arg("%"+escapeLike(search)+"%")
		}
	}
	indexed := search != "" && utf8.RuneCountInString(search) >= 3 && s.hasTrigramIndex(ctx)
	bounded := f.ScanLimit > 0 && (f.Sort == link.SortClicks || search != "" && !indexed)
	if indexed {
		// The index is steered past the term's common words where it
		// can be (see drivePattern), and the whole term tested on the
		// links it names, after the fence below; a bounded scan counts
		// the links that match, so it looks the whole term up.
		drive, ok := "", false
		if !bounded {
			drive, ok = drivePattern(search, s.commonTrigrams(ctx))
		}
		if ok {
			where = append(where, "l.search_text LIKE "+arg(drive))
		} else {
			where = append(where, match)
			match = "true"
		}
	}
	from := "links l WHERE " + strings.Join(where, " AND ")
	scanned := "SELECT * FROM " + from
	if bounded {
		scanned += " ORDER BY l.seq DESC LIMIT " + strconv.Itoa(f.ScanLimit)
	}
	base := args
	if !indexed && search != "" && match != "false" {
		base = args[:len(args)-1] // the scan bound's query has no search
	}
	if indexed {
		// The matches first, then their order: without the fence
		// (OFFSET 0) the planner may read the workspace's links newest
		// first and test each, on an estimate of how many match.
		scanned += " OFFSET 0"
	}
	sel := "FROM (" + scanned + ") l WHERE " + match
	if search != "" {
		// Planned for this term, not once for any (a cached statement's
		// generic plan): a term the trigram index names a hundred links
		// for would be looked for by reading the workspace's links newest
		// first, 186 ms at a million of them instead of 1.
		args = append([]any{pgx.QueryExecModeExec}, args...)
		base = append([]any{pgx.QueryExecModeExec}, base...)
	}

	page := &link.LinkPage{Links: []*link.Link{}}
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, f.WorkspaceID); err != nil {
			return err
		}
		if indexed && !bounded {
			// One read of the matches for the page and their count; the
			// count alone when the page is past them.
			var total int64
			rows, err := tx.Query(ctx, "SELECT "+linkColumns+", count(*) OVER () "+sel+" ORDER BY "+order+
				" LIMIT "+strconv.Itoa(f.Limit)+" OFFSET "+strconv.FormatInt(offset, 10), args...)
			if err != nil {
				return fmt.Errorf("list links: %w", err)
			}
			links, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Link, error) { return scanLink(r, &total) })
			if err != nil {
				return fmt.Errorf("list links: %w", err)
			}
			if len(links) > 0 {
				page.Links, page.Total = links, int(total)
				return nil
			}
		}
		if err := tx.QueryRow(ctx, "SELECT count(*) "+sel, args...).Scan(&page.Total); err != nil {
			return fmt.Errorf("count links: %w", err)
		}
		if bounded {
			var more bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+from+" ORDER BY l.seq DESC OFFSET "+strconv.Itoa(f.ScanLimit)+")", base...).Scan(&more); err != nil {
				return fmt.Errorf("count links: %w", err)
			}
			page.Truncated = more
		}
		if offset >= int64(page.Total) || indexed && !bounded {
			return nil
		}
		rows, err := tx.Query(ctx, "SELECT "+linkColumns+" "+sel+" ORDER BY "+order+
			" LIMIT "+strconv.Itoa(f.Limit)+" OFFSET "+strconv.FormatInt(offset, 10), args...)
		if err != nil {
			return fmt.Errorf("list links: %w", err)
		}
		links, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Link, error) { return scanLink(r) })
		if err != nil {
			return fmt.Errorf("list links: %w", err)
		}
		page.Links = links
		return nil
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

// escapeLike escapes the wildcards of LIKE (and its escape character).
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// hasTrigramIndex reports whether the trigram index of searches exists
// (pg_trgm could be installed when the schema was made).
func (s *LinkService) hasTrigramIndex(ctx context.Context) bool {
	s.trgmMu.Lock()
	defer s.trgmMu.Unlock()
	if !s.trgmKnown {
		err := s.db.pool.QueryRow(ctx, `SELECT to_regclass('links_search') IS NOT NULL`).Scan(&s.trgm)
		s.trgmKnown = err == nil
	}
	return s.trgm
}
