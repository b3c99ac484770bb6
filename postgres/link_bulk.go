package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/linkbolt/linkbolt/link"
)

// addLinks stores the new links ins of workspace wsID at now, in tx with
// their aliases locked, as addLink would one by one, in a handful of
// statements for the whole batch: the domains and campaigns checked once
// each, the holds of the given aliases read and released together,
// generated codes checked together, the IDs drawn together and the links
// inserted by one statement. It returns each link as stored, or the error
// that refused it (EINVALID, ECONFLICT); a generated code taken meanwhile
// by another transaction is drawn again by addLink.
func (s *LinkService) addLinks(ctx context.Context, tx pgx.Tx, wsID string, ins []link.Link, now time.Time) ([]*link.Link, []error, error) {
	created, errs := make([]*link.Link, len(ins)), make([]error, len(ins))
	ok := func(i int) bool { return errs[i] == nil && created[i] == nil }
	generated := make([]bool, len(ins))
	for i := range ins {
		generated[i] = ins[i].Alias == ""
	}

	// The domains and campaigns, each checked once.
	domains, campaigns := map[string]error{}, map[string]error{}
	for i := range ins {
		in := &ins[i]
		if in.Domain != "" {
			err, seen := domains[in.Domain]
			if !seen {
				err = domainForLink(ctx, tx, wsID, in.Domain)
				if link.ErrorCode(err) != link.EINVALID && err != nil {
					return nil, nil, err
				}
				domains[in.Domain] = err
			}
			if err != nil {
				errs[i] = err
				continue
			}
		}
		if in.CampaignID != "" {
			err, seen := campaigns[in.CampaignID]
			if !seen {
				err = s.db.campaignForLink(ctx, tx, wsID, in.CampaignID)
				if link.ErrorCode(err) != link.EINVALID && err != nil {
					return nil, nil, err
				}
				campaigns[in.CampaignID] = err
			}
			errs[i] = err
		}
	}

	// External IDs: another link's, or an earlier one's of the call,
	// refuses the link.
	if err := externalsFree(ctx, tx, wsID, ins, errs); err != nil {
		return nil, nil, err
	}

	// The holds of the given aliases: another workspace's refuses the
	// link, the others are released.
	if err := s.releaseHolds(ctx, tx, wsID, ins, errs, now); err != nil {
		return nil, nil, err
	}

	// Generated codes: free of links and holds on their domains.
	if err := s.drawCodes(ctx, tx, ins, errs, now); err != nil {
		return nil, nil, err
	}

	// The IDs, in the batch's order.
	var want int
	for i := range ins {
		if ok(i) {
			want++
		}
	}
	if want == 0 {
		return created, errs, nil
	}
	rows, err := tx.Query(ctx, `SELECT nextval('ids_lnk') FROM generate_series(1, $1)`, want)
	if err != nil {
		return nil, nil, fmt.Errorf("new link IDs: %w", err)
	}
	seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(seqs) != want {
		return nil, nil, fmt.Errorf("new link IDs: %d of %d, %v", len(seqs), want, err)
	}
	slices.Sort(seqs)

	// One insert; a link whose alias is taken is not inserted.
	batch := make([]*link.Link, 0, want)
	var r linkRows
	for i := range ins {
		if !ok(i) {
			continue
		}
		l := ins[i]
		l.WorkspaceID, l.Clicks, l.CreatedAt, l.UpdatedAt = wsID, 0, now, now
		if l.ExpiresAt != nil {
			t := dbTime(*l.ExpiresAt)
			l.ExpiresAt = &t
		}
		seq := seqs[len(batch)]
		l.ID = s.db.ids.FormatID(link.PrefixLink, uint64(seq))
		if err := r.add(&l, seq); err != nil {
			return nil, nil, err
		}
		batch = append(batch, &l)
	}
	inserted, err := r.insert(ctx, tx)
	if err != nil {
		return nil, nil, err
	}
	next := 0
	for i := range ins {
		if !ok(i) {
			continue
		}
		l := batch[next]
		next++
		switch {
		case inserted[l.ID]:
			created[i] = l
		case !generated[i]:
			errs[i] = takenError(l.Alias)
		default:
			// A code another transaction took since it was drawn.
			in := ins[i]
			in.Alias = ""
			if created[i], err = s.addLink(ctx, tx, wsID, &in, now); err != nil {
				if code := link.ErrorCode(err); code != link.ECONFLICT && code != link.EINVALID {
					return nil, nil, err
				}
				errs[i] = err
			}
		}
	}
	return created, errs, nil
}

// releaseHolds checks the holds of the given aliases of ins (those not
// refused in errs yet), in tx under their locks, as claimHold does:
// another workspace's hold that has not ended refuses the link
// (ECONFLICT), the others are deleted. Of two links of the batch with one
// alias the second is refused by the insert.
func (s *LinkService) releaseHolds(ctx context.Context, tx pgx.Tx, wsID string, ins []link.Link, errs []error, now time.Time) error {
	var domains, aliases []string
	for i := range ins {
		if errs[i] == nil && ins[i].Alias != "" {
			domains, aliases = append(domains, ins[i].Domain), append(aliases, ins[i].Alias)
		}
	}
	if len(aliases) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT h.domain, h.alias, h.workspace_id, h.until FROM link_alias_holds h
		JOIN unnest($1::text[], $2::text[]) AS a(domain, alias) ON h.domain = a.domain AND h.alias = a.alias`, domains, aliases)
	if err != nil {
		return fmt.Errorf("alias holds: %w", err)
	}
	held := map[string]bool{} // held for another workspace
	var freeDomains, freeAliases []string
	var domain, alias, holder string
	var until time.Time
	if _, err := pgx.ForEachRow(rows, []any{&domain, &alias, &holder, &until}, func() error {
		if heldForOther(holder, wsID, until, now) {
			held[aliasLockKey(domain, alias)] = true
		} else {
			freeDomains, freeAliases = append(freeDomains, domain), append(freeAliases, alias)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("alias holds: %w", err)
	}
	for i := range ins {
		if errs[i] == nil && ins[i].Alias != "" && held[aliasLockKey(ins[i].Domain, ins[i].Alias)] {
			errs[i] = takenError(ins[i].Alias)
		}
	}
	if len(freeAliases) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM link_alias_holds h USING unnest($1::text[], $2::text[]) AS a(domain, alias)
			WHERE h.domain = a.domain AND h.alias = a.alias`, freeDomains, freeAliases); err != nil {
			return fmt.Errorf("release alias holds: %w", err)
		}
	}
	return nil
}

// drawCodes gives each link of ins without an alias (and not refused in
// errs) a generated code that no link has and no hold covers on its
// domain at now, drawing again the few that are taken.
func (s *LinkService) drawCodes(ctx context.Context, tx pgx.Tx, ins []link.Link, errs []error, now time.Time) error {
	var need []int
	for i := range ins {
		if errs[i] == nil && ins[i].Alias == "" {
			need = append(need, i)
		}
	}
	for attempt := 0; len(need) > 0; attempt++ {
		if attempt == codeAttempts {
			return fmt.Errorf("postgres: no free short code found for %d links", len(need))
		}
		domains, codes := make([]string, 0, len(need)), make([]string, 0, len(need))
		drawn := map[string]bool{}
		for _, i := range need {
			code := newCode()
			for link.IsReserved(code) || drawn[aliasLockKey(ins[i].Domain, code)] {
				code = newCode()
			}
			drawn[aliasLockKey(ins[i].Domain, code)] = true
			ins[i].Alias = code
			domains, codes = append(domains, ins[i].Domain), append(codes, code)
		}
		rows, err := tx.Query(ctx, `SELECT a.domain, a.alias FROM unnest($1::text[], $2::text[]) AS a(domain, alias)
			WHERE EXISTS (SELECT 1 FROM links l WHERE l.domain = a.domain AND l.alias = a.alias)
				OR EXISTS (SELECT 1 FROM link_alias_holds h WHERE h.domain = a.domain AND h.alias = a.alias AND h.until > $3)`,
			domains, codes, now)
		if err != nil {
			return fmt.Errorf("free codes: %w", err)
		}
		used, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
			var d, a string
			err := r.Scan(&d, &a)
			return aliasLockKey(d, a), err
		})
		if err != nil {
			return fmt.Errorf("free codes: %w", err)
		}
		taken := map[string]bool{}
		for _, k := range used {
			taken[k] = true
		}
		again := need[:0]
		for _, i := range need {
			if taken[aliasLockKey(ins[i].Domain, ins[i].Alias)] {
				ins[i].Alias = ""
				again = append(again, i)
			}
		}
		need = again
	}
	return nil
}

// externalsFree sets errs[i] (when nil) to the ECONFLICT of a link of ins
// whose external ID another link of the workspace has, or an earlier
// link of ins not refused.
func externalsFree(ctx context.Context, tx pgx.Tx, wsID string, ins []link.Link, errs []error) error {
	var ext []string
	for i := range ins {
		if errs[i] == nil && ins[i].ExternalID != "" {
			ext = append(ext, ins[i].ExternalID)
		}
	}
	if len(ext) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT external_id, id FROM links WHERE workspace_id = $1 AND external_id = ANY($2)`, wsID, ext)
	if err != nil {
		return fmt.Errorf("external IDs: %w", err)
	}
	taken := map[string]string{}
	var e, id string
	if _, err := pgx.ForEachRow(rows, []any{&e, &id}, func() error { taken[e] = id; return nil }); err != nil {
		return fmt.Errorf("external IDs: %w", err)
	}
	seen := map[string]bool{}
	for i := range ins {
		x := ins[i].ExternalID
		if errs[i] != nil || x == "" {
			continue
		}
		if by, ok := taken[x]; ok {
			errs[i] = externalTakenError(x, by)
		} else if seen[x] {
			errs[i] = externalTakenError(x, "")
		}
		seen[x] = true
	}
	return nil
}

// linkRows are links as the columns of one insert.
type linkRows struct {
	ids, wss, domains, aliases, dests, tags         []string
	utmSources, utmMediums, utmCampaigns, campaigns []string
	passwords, expiredURLs, titles, searches, notes []string
	seqs, maxClicks                                 []int64
	codes                                           []int32
	created, updated                                []time.Time
	rules, variants, og                             []pgtype.Text
	expires                                         []pgtype.Timestamptz
	archived                                        []bool
	forward, interstitial                           []int16
	externals                                       []pgtype.Text
	ios, android                                    []string
	crawlable                                       []bool
}

// add appends l of sequence seq. A link's tags travel as one text, one a
// line: no tag holds a line break (see searchText).
func (r *linkRows) add(l *link.Link, seq int64) error {
	rules, variants, og, err := controls(l)
	if err != nil {
		return err
	}
	text := func(b []byte) pgtype.Text { return pgtype.Text{String: string(b), Valid: b != nil} }
	var expires pgtype.Timestamptz
	if l.ExpiresAt != nil {
		expires = pgtype.Timestamptz{Time: *l.ExpiresAt, Valid: true}
	}
	r.ids, r.seqs, r.wss, r.domains, r.aliases = append(r.ids, l.ID), append(r.seqs, seq), append(r.wss, l.WorkspaceID), append(r.domains, l.Domain), append(r.aliases, l.Alias)
	r.dests, r.tags = append(r.dests, l.DestinationURL), append(r.tags, strings.Join(l.Tags, "\n"))
	r.utmSources, r.utmMediums, r.utmCampaigns = append(r.utmSources, l.UTMSource), append(r.utmMediums, l.UTMMedium), append(r.utmCampaigns, l.UTMCampaign)
	r.campaigns, r.codes = append(r.campaigns, l.CampaignID), append(r.codes, int32(l.RedirectCode))
	r.created, r.updated = append(r.created, l.CreatedAt), append(r.updated, l.UpdatedAt)
	r.passwords, r.rules, r.variants, r.og = append(r.passwords, l.PasswordHash), append(r.rules, text(rules)), append(r.variants, text(variants)), append(r.og, text(og))
	r.expires, r.maxClicks, r.expiredURLs = append(r.expires, expires), append(r.maxClicks, l.MaxClicks), append(r.expiredURLs, l.ExpiredURL)
	r.archived, r.titles, r.searches = append(r.archived, l.Archived), append(r.titles, l.Title), append(r.searches, searchText(l))
	r.forward, r.interstitial = append(r.forward, forwardBits(l)), append(r.interstitial, interstitialBits(l))
	r.externals = append(r.externals, pgtype.Text{String: l.ExternalID, Valid: l.ExternalID != ""})
	r.ios, r.android = append(r.ios, l.IOSURL), append(r.android, l.AndroidURL)
	r.crawlable = append(r.crawlable, l.Crawlable)
	r.notes = append(r.notes, l.Note)
	return nil
}

// insert inserts the links whose aliases are free on their domains and
// returns their IDs.
func (r *linkRows) insert(ctx context.Context, tx pgx.Tx) (map[string]bool, error) {
	rows, err := tx.Query(ctx, `INSERT INTO links (`+linkInsertColumns+`)
		SELECT id, seq, ws, domain, alias, dest, CASE WHEN tags = '' THEN '{}'::text[] ELSE string_to_array(tags, E'\n') END,
			utm_source, utm_medium, utm_campaign, campaign, code, created, updated,
			password, rules::jsonb, variants::jsonb, og::jsonb, expires, max_clicks, expired_url, archived, title, search, forward, external, ios, android, crawlable, interstitial, note
		FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
			$8::text[], $9::text[], $10::text[], $11::text[], $12::integer[], $13::timestamptz[], $14::timestamptz[],
			$15::text[], $16::text[], $17::text[], $18::text[], $19::timestamptz[], $20::bigint[], $21::text[], $22::boolean[], $23::text[], $24::text[], $25::smallint[], $26::text[], $27::text[], $28::text[], $29::boolean[], $30::smallint[], $31::text[])
			AS u(id, seq, ws, domain, alias, dest, tags, utm_source, utm_medium, utm_campaign, campaign, code, created, updated,
				password, rules, variants, og, expires, max_clicks, expired_url, archived, title, search, forward, external, ios, android, crawlable, interstitial, note)
		ON CONFLICT (domain, alias) DO NOTHING
		RETURNING id`,
		r.ids, r.seqs, r.wss, r.domains, r.aliases, r.dests, r.tags,
		r.utmSources, r.utmMediums, r.utmCampaigns, r.campaigns, r.codes, r.created, r.updated,
		r.passwords, r.rules, r.variants, r.og, r.expires, r.maxClicks, r.expiredURLs, r.archived, r.titles, r.searches, r.forward, r.externals, r.ios, r.android, r.crawlable, r.interstitial, r.notes)
	if isUnique(err, "links_external_key") {
		return nil, link.Errorf(link.ECONFLICT, "an external ID of these links was given to another link meanwhile; try again")
	} else if err != nil {
		return nil, fmt.Errorf("insert links: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("insert links: %w", err)
	}
	inserted := make(map[string]bool, len(ids))
	for _, id := range ids {
		inserted[id] = true
	}
	return inserted, nil
}
