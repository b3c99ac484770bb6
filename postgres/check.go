package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// CheckReport is what Check found in a database.
type CheckReport struct {
	// URL is the database's URL with its password hidden.
	URL string
	// Schema is the database's schema version; Want the binary's.
	Schema, Want int
	// What the database holds.
	Users, Workspaces, Links, Clicks, Keys, Webhooks int64
	// Problems are the broken invariants, each on one line.
	Problems []string
}

// OK reports whether Check found no problem.
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 }

// checkShown is the most problems of one kind a report lists.
const checkShown = 20

// invariant is one of linkbolt's invariants the schema does not enforce:
// a query answering a line for each row that breaks it.
type invariant struct {
	name  string
	query string
	// check, when set instead of query, answers the lines itself, at
	// most limit of them.
	check func(ctx context.Context, tx pgx.Tx, limit int) ([]string, error)
}

// Check checks linkbolt's own invariants in the database of url, those
// its schema's constraints do not enforce, in one read-only transaction
// that sees one state of the data while instances keep writing:
//
//   - the schema version is the one this linkbolt writes;
//   - every counter equals its records: a link's clicks its daily
//     aggregates' totals, each day's totals the sum of its hours (a
//     link's rolled-up hours aside), each top list at most its bound and
//     summing to at most its totals, each day's visitors at most its
//     clicks and at least its visitor records, each workspace hour's
//     total at least its raw clicks, the click backlog's size its clicks
//     and bytes, and the outbox's depth the pending deliveries;
//   - every reference resolves: a link's campaign and custom domain are
//     its workspace's, a raw click, an aggregate row and a delivery are
//     of their link's, campaign's or webhook's workspace, a rotated key's
//     successor is a key of its workspace, a key's or webhook's creating
//     user and an invitation's inviting and accepting users exist, an
//     alias hold and an audit entry name workspaces that exist;
//   - what must be one is one: a user's e-mail key is in normal form
//     (users_email_key holds it once), every workspace keeps an owner,
//     nobody is a member and a former member of one workspace at once, an
//     e-mail has at most one pending invitation per workspace, a link
//     names each of its tags once;
//   - only a link with max_clicks has its clicks counted against it
//     (click_reservations).
//
// It never writes. Its errors (an unreachable database, a failed query)
// never hold the URL's password; broken invariants are the report's
// Problems.
func Check(ctx context.Context, url string) (*CheckReport, error) {
	r := &CheckReport{URL: Redacted(url), Want: SchemaVersion()}
	fail := func(err error) (*CheckReport, error) {
		return nil, fmt.Errorf("postgres %s: %s", r.URL, redactErr(err, url))
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("storage.postgres_url %s: %s", r.URL, redactErr(err, url))
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	defer conn.Close(context.Background())
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if !r.checkSchema(ctx, tx) {
			return nil
		}
		if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM workspaces),
			(SELECT count(*) FROM links), (SELECT count(*) FROM clicks), (SELECT count(*) FROM keys), (SELECT count(*) FROM webhooks)`).
			Scan(&r.Users, &r.Workspaces, &r.Links, &r.Clicks, &r.Keys, &r.Webhooks); err != nil {
			return fmt.Errorf("count: %w", err)
		}
		for _, inv := range invariants() {
			if err := r.run(ctx, tx, inv); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	return r, nil
}

// checkSchema compares the database's schema version with the binary's
// and reports whether the invariants can be checked: only on the schema
// this linkbolt writes.
func (r *CheckReport) checkSchema(ctx context.Context, tx pgx.Tx) bool {
	var has bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('linkbolt_schema') IS NOT NULL`).Scan(&has); err != nil || !has {
		r.Problems = append(r.Problems, "the database holds no linkbolt schema (no table linkbolt_schema): is storage.postgres_url linkbolt's database?")
		return false
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0), count(*) FROM linkbolt_schema`).Scan(&r.Schema, &n); err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("the schema versions cannot be read: %v", err))
		return false
	}
	switch {
	case r.Schema > r.Want:
		r.Problems = append(r.Problems, fmt.Sprintf("schema version %d, newer than this linkbolt's %d: check it with the linkbolt that wrote it", r.Schema, r.Want))
		return false
	case r.Schema < r.Want:
		r.Problems = append(r.Problems, fmt.Sprintf("schema version %d, older than this linkbolt's %d: linkbolt serve upgrades it when it starts", r.Schema, r.Want))
		return false
	case n != r.Schema:
		r.Problems = append(r.Problems, fmt.Sprintf("linkbolt_schema holds %d versions up to %d: a migration is missing", n, r.Schema))
	}
	return true
}

// run adds the lines of inv's query to the problems, at most checkShown.
func (r *CheckReport) run(ctx context.Context, tx pgx.Tx, inv invariant) error {
	var lines []string
	var err error
	if inv.check != nil {
		lines, err = inv.check(ctx, tx, checkShown+1)
	} else {
		var rows pgx.Rows
		if rows, err = tx.Query(ctx, `SELECT * FROM (`+inv.query+`) AS p LIMIT $1`, checkShown+1); err == nil {
			lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
	}
	if err != nil {
		return fmt.Errorf("check %s: %w", inv.name, err)
	}
	for i, l := range lines {
		if i == checkShown {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: … and more", inv.name))
			break
		}
		r.Problems = append(r.Problems, inv.name+": "+l)
	}
	return nil
}

// invariants are the checks Check runs, in its report's order.
func invariants() []invariant {
	invs := []invariant{
		{name: "link clicks", query: `SELECT format('link %s: its counter says %s clicks, its daily aggregates %s', l.id, l.clicks, coalesce(d.n, 0))
			FROM links l LEFT JOIN (SELECT link_id, sum(clicks) AS n FROM click_day_sums WHERE link_id IS NOT NULL GROUP BY link_id) d
				ON d.link_id = l.id
			WHERE l.clicks <> coalesce(d.n, 0)`},
		{name: "day totals", query: `SELECT format('%s day %s: %s clicks (%s bots) in its hours, %s (%s) in the day', coalesce(d.scope, h.scope), coalesce(d.day, h.day),
				coalesce(h.c, 0), coalesce(h.b, 0), coalesce(d.clicks, 0), coalesce(d.bots, 0))
			FROM (SELECT scope, hour / 24 AS day, sum(clicks) AS c, sum(bots) AS b FROM click_hour_sums GROUP BY 1, 2) h
			FULL JOIN (SELECT scope, day, clicks, bots FROM click_day_sums) d ON d.scope = h.scope AND d.day = h.day
			WHERE d.scope IS NULL
				OR h.scope IS NULL AND d.scope NOT LIKE 'l:%'
				-- a link's hours are rolled up into its days
				OR d.scope LIKE 'l:%' AND (h.c > d.clicks OR h.b > d.bots)
				OR d.scope NOT LIKE 'l:%' AND (h.c <> d.clicks OR h.b <> d.bots)`},
	}
	for _, t := range []sumTable{hourSums, daySums} {
		invs = append(invs,
			invariant{name: t.name + " top lists", check: func(ctx context.Context, tx pgx.Tx, limit int) ([]string, error) {
				return checkTopLists(ctx, tx, t, limit)
			}},
			invariant{name: t.name + " totals", query: `SELECT format('%s ` + t.period + ` %s: %s clicks, %s bots', scope, ` + t.period + `, clicks, bots)
				FROM ` + t.name + ` WHERE clicks < 0 OR bots < 0 OR bots > clicks`},
			invariant{name: t.name + " scopes", query: `SELECT format('%s ` + t.period + ` %s: the row is of workspace %s, link %s, campaign %s', a.scope, a.` + t.period + `,
					coalesce(a.workspace_id, '-'), coalesce(a.link_id, '-'), coalesce(a.campaign_id, '-'))
				FROM ` + t.name + ` a LEFT JOIN campaigns c ON c.id = a.campaign_id
				WHERE NOT (a.workspace_id IS NOT NULL AND a.scope = 'w:' || a.workspace_id
					OR a.link_id IS NOT NULL AND a.scope = 'l:' || a.link_id
					OR a.campaign_id IS NOT NULL AND a.scope = 'c:' || c.workspace_id || '/' || a.campaign_id)`},
		)
	}
	return append(invs, []invariant{
		{name: "visitors", query: `SELECT format('%s day %s: %s visitors (%s bots) of %s clicks', scope, day, visitors, bot_visitors, clicks)
			FROM click_day_sums WHERE visitors > clicks OR bot_visitors > visitors OR visitors < 0 OR bot_visitors < 0`},
		{name: "visitor records", query: `SELECT format('%s day %s: %s visitor records, %s visitors counted', v.scope, v.day, v.n, coalesce(d.visitors, 0))
			FROM (SELECT scope, day, count(*) AS n FROM click_visitors GROUP BY 1, 2) v
			LEFT JOIN click_day_sums d ON d.scope = v.scope AND d.day = v.day
			WHERE v.n > coalesce(d.visitors, 0)`},
		{name: "raw clicks", query: `SELECT format('workspace %s hour %s: %s raw clicks, %s in its total', r.workspace_id, r.hour, r.n, coalesce(h.clicks, 0))
			FROM (SELECT workspace_id, at_ns / 3600000000000 AS hour, count(*) AS n FROM clicks GROUP BY 1, 2) r
			LEFT JOIN click_hour_sums h ON h.scope = 'w:' || r.workspace_id AND h.hour = r.hour
			WHERE r.n > coalesce(h.clicks, 0)`},
		{name: "click backlog", query: `SELECT format('its size says %s clicks of %s bytes, it holds %s of %s', s.clicks, s.bytes, b.n, b.bytes)
			FROM click_backlog_size s, (SELECT count(*) AS n, coalesce(sum(octet_length(click)), 0) AS bytes FROM click_backlog) b
			WHERE s.clicks <> b.n OR s.bytes <> b.bytes`},
		{name: "outbox", query: `SELECT format('its depth says %s pending deliveries, there are %s', o.n, d.n)
			FROM (SELECT coalesce(sum(pending), 0) AS n FROM outbox_depth) o, (SELECT count(*) AS n FROM deliveries WHERE status = 'pending') d
			WHERE o.n <> d.n`},
		{name: "deliveries", query: `SELECT format('delivery %s: %s', d.id, CASE WHEN d.workspace_id <> w.workspace_id THEN 'of workspace ' || d.workspace_id || ', its webhook of ' || w.workspace_id
				ELSE 'pending without a next attempt' END)
			FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
			WHERE d.workspace_id <> w.workspace_id OR d.status = 'pending' AND d.next_attempt_at IS NULL`},
		{name: "link campaigns", query: `SELECT format('link %s of workspace %s: campaign %s %s', l.id, l.workspace_id, l.campaign_id,
				CASE WHEN c.id IS NULL THEN 'does not exist' ELSE 'is of workspace ' || c.workspace_id END)
			FROM links l LEFT JOIN campaigns c ON c.id = l.campaign_id
			WHERE l.campaign_id <> '' AND (c.id IS NULL OR c.workspace_id <> l.workspace_id)`},
		{name: "link domains", query: `SELECT format('link %s of workspace %s: domain %s is no domain of its workspace', l.id, l.workspace_id, l.domain)
			FROM links l WHERE l.domain <> '' AND NOT EXISTS (SELECT 1 FROM domains d WHERE d.hostname = l.domain AND d.workspace_id = l.workspace_id)`},
		{name: "click reservations", query: `SELECT format('link %s: %s of its clicks counted against a max_clicks it has not', r.link_id, r.used)
			FROM click_reservations r JOIN links l ON l.id = r.link_id WHERE l.max_clicks <= 0`},
		{name: "link tags", query: `SELECT format('link %s: tags %s name one twice', id, tags)
			FROM links WHERE cardinality(tags) > 1 AND cardinality(tags) <> (SELECT count(DISTINCT t) FROM unnest(tags) AS t)`},
		{name: "clicks", query: `SELECT format('raw clicks of link %s: of workspace %s, the link of %s', c.link_id, c.workspace_id, l.workspace_id)
			FROM (SELECT DISTINCT link_id, workspace_id FROM clicks) c JOIN links l ON l.id = c.link_id
			WHERE c.workspace_id <> l.workspace_id`},
		{name: "key successors", query: `SELECT format('key %s of workspace %s: replaced by %s, %s', k.id, k.workspace_id, k.replaced_by,
				CASE WHEN n.id IS NULL THEN 'which does not exist' ELSE 'a key of workspace ' || n.workspace_id END)
			FROM keys k LEFT JOIN keys n ON n.id = k.replaced_by
			WHERE k.replaced_by IS NOT NULL AND k.replaced_by <> '' AND (n.id IS NULL OR n.workspace_id <> k.workspace_id)`},
		{name: "creators", query: `SELECT format('%s %s: made by user %s, who does not exist', what, id, creator_id) FROM (
				SELECT 'key' AS what, id, creator_type, creator_id FROM keys
				UNION ALL SELECT 'webhook', id, creator_type, creator_id FROM webhooks) m
			WHERE creator_type = 'user' AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = m.creator_id)`},
		{name: "alias holds", query: `SELECT format('alias %s%s held for workspace %s, which does not exist', CASE WHEN h.domain = '' THEN '' ELSE h.domain || '/' END, h.alias, h.workspace_id)
			FROM link_alias_holds h WHERE NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = h.workspace_id)`},
		{name: "audit", query: `SELECT format('audit entry %s: workspace %s does not exist', a.id, ws)
			FROM audit_entries a, unnest(a.workspace_ids) AS ws
			WHERE NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = ws)`},
		{name: "user e-mails", query: `SELECT format('user %s: e-mail key %s is not in normal form (ASCII letters lower-cased)', id, email_key)
			FROM users WHERE email_key COLLATE "C" ~ '[A-Z]'`},
		{name: "invitation users", query: `SELECT format('invitation %s: %s user %s does not exist', i.id, p.what, p.uid)
			FROM invitations i CROSS JOIN LATERAL (VALUES ('inviting', i.invited_by), ('accepting', i.accepted_by)) AS p(what, uid)
			WHERE p.uid IS NOT NULL AND p.uid <> '' AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = p.uid)`},
		{name: "owners", query: `SELECT format('workspace %s has no owner', w.id)
			FROM workspaces w WHERE NOT EXISTS (SELECT 1 FROM members m WHERE m.workspace_id = w.id AND m.role = 'owner')`},
		{name: "former members", query: `SELECT format('user %s is a member and a former member of workspace %s', f.user_id, f.workspace_id)
			FROM former_members f JOIN members m USING (workspace_id, user_id)`},
		{name: "invitations", query: `SELECT format('workspace %s: %s pending invitations of %s', workspace_id, count(*), lower(email COLLATE "C"))
			FROM invitations WHERE accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()
			GROUP BY workspace_id, lower(email COLLATE "C") HAVING count(*) > 1`},
	}...)
}

// checkTopLists reads every period of t with top lists and answers a
// line for each that breaks their rules (see periodSums.checkTops), at
// most limit.
func checkTopLists(ctx context.Context, tx pgx.Tx, t sumTable, limit int) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT scope, `+t.period+`, clicks, bots, tops FROM `+t.name+` WHERE tops <> ''`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() && len(lines) < limit {
		var scope string
		var period int32
		var p periodSums
		var tops []byte
		if err := rows.Scan(&scope, &period, &p.clicks, &p.bots, &tops); err != nil {
			return nil, err
		}
		problems := []string{"its top lists do not decode"}
		if p.decodeTops(tops) == nil {
			problems = p.checkTops(strings.HasPrefix(scope, "l:"))
		}
		for _, pr := range problems {
			lines = append(lines, fmt.Sprintf("%s %s %d %s", scope, t.period, period, pr))
		}
	}
	return lines, rows.Err()
}
