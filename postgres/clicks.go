package postgres

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/linkbolt/linkbolt/link"
)

var _ link.ClickStore = (*ClickService)(nil)

// ClickService keeps clicks in two forms, as the bbolt store does: raw
// clicks, one row each, for exports, pruned after the retention period;
// and aggregates kept for good, per scope (workspace, link, campaign) per
// hour and per UTC day, a totals row and a row per dimension value,
// which answer analytics. A batch is summed in memory first, so each
// aggregate row is upserted once per batch, in one statement per table.
type ClickService struct {
	db *DB
}

// Limits of a batch and of a click, as in the bbolt store.
const (
	maxClickBatch  = 1 << 24
	directReferrer = "direct"
	unknownValue   = "unknown"
	// clickChunk is how many rows an export reads, and a prune or a
	// roll-up deletes, per statement.
	clickChunk = 4096
	saltSize   = 32
)

// Dimensions in the aggregate tables: 0 is the totals row.
const (
	dimTotals int16 = iota
	dimLinks
	dimReferrers
	dimCountries
	dimDevices
	dimBrowsers
	dimOS
	dimVariants
	numDims
)

var dimNames = [numDims]string{"", link.DimLinks, link.DimReferrers, link.DimCountries, link.DimDevices, link.DimBrowsers, link.DimOS, link.DimVariants}

// maxClickTime is the end of the times a click may have, as in the bbolt
// store: a click at or after it, or before 1970, is counted nowhere.
var maxClickTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// storedClick is a validated click in the form it is stored in.
type storedClick struct {
	WS, Link, Campaign string
	NS                 int64
	Vals               [numDims]string // dimLinks' is the link ID; dimVariants' empty for none
	Bot                bool
	Visitor            int64
	Variant            int16
	// Weight, when not 0, makes this one click count as Weight clicks in
	// the link's total and the aggregates, with no raw click and no
	// visitor: the clicks an import knows only as a total.
	Weight int64
}

// count is how many clicks c counts as.
func (c *storedClick) count() int64 {
	if c.Weight > 0 {
		return c.Weight
	}
	return 1
}

func (c *storedClick) hour() int32 { return int32(c.NS / 1e9 / 3600) }
func (c *storedClick) day() int32  { return int32(c.NS / 1e9 / 86400) }

// parseClick validates c, whose IDs are those of the codec ids; ok is
// false for a click that cannot be stored.
func parseClick(ids *link.IDCodec, c *link.Click) (p storedClick, ok bool) {
	if _, ok := ids.ParseID(link.PrefixWorkspace, c.WorkspaceID); !ok {
		return p, false
	}
	if _, ok := ids.ParseID(link.PrefixLink, c.LinkID); !ok {
		return p, false
	}
	if c.CampaignID != "" && !validCampaignID(c.CampaignID) {
		return p, false
	}
	if c.Time.Unix() < 0 || !c.Time.Before(maxClickTime) {
		return p, false
	}
	p.WS, p.Link, p.Campaign, p.NS = c.WorkspaceID, c.LinkID, c.CampaignID, c.Time.UnixNano()
	p.Vals[dimLinks] = c.LinkID
	p.Vals[dimReferrers] = link.ClickValue(link.CanonicalReferrer(c.Referrer), directReferrer)
	p.Vals[dimCountries] = link.ClickValue(c.Country, unknownValue)
	p.Vals[dimDevices] = link.ClickValue(c.Device, unknownValue)
	p.Vals[dimBrowsers] = link.ClickValue(c.Browser, unknownValue)
	p.Vals[dimOS] = link.ClickValue(c.OS, unknownValue)
	p.Bot, p.Visitor = c.Bot, int64(c.Visitor)
	if c.Variant != 0 && c.Variant <= link.MaxVariants {
		p.Variant = int16(c.Variant)
		p.Vals[dimVariants] = strconv.Itoa(int(c.Variant))
	}
	return p, true
}

// validCampaignID reports whether id can name a campaign scope: 1 to 64
// characters of [A-Za-z0-9_-].
func validCampaignID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// RecordClicks writes a batch of clicks in one transaction: the raw
// clicks, the links' counters, the aggregates of every scope and the
// link.clicked events. A click of a link deleted meanwhile counts for its
// workspace and campaign only; one of a workspace deleted meanwhile is
// dropped. Malformed clicks are skipped and counted (see
// link.ClickService); EINVALID for a batch of more than 2^24 clicks.
func (s *ClickService) RecordClicks(ctx context.Context, clicks []link.Click) (skipped int, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if len(clicks) > maxClickBatch {
		return 0, link.Errorf(link.EINVALID, "batch of %d clicks: at most %d", len(clicks), maxClickBatch)
	}
	batch, skipped := s.parseClicks(clicks)
	if len(batch) == 0 {
		return skipped, nil
	}
	if err := s.db.tx(ctx, func(tx pgx.Tx) error { return s.write(ctx, tx, batch) }); err != nil {
		return skipped, fmt.Errorf("record clicks: %w", err)
	}
	return skipped, nil
}

func (s *ClickService) parseClicks(clicks []link.Click) (batch []storedClick, skipped int) {
	batch = make([]storedClick, 0, len(clicks))
	for i := range clicks {
		p, ok := parseClick(s.db.ids, &clicks[i])
		if !ok {
			skipped++
			continue
		}
		batch = append(batch, p)
	}
	return batch, skipped
}

// write stores batch in tx with its link.clicked events.
func (s *ClickService) write(ctx context.Context, tx pgx.Tx, batch []storedClick) error {
	kept, err := writeClickBatch(ctx, tx, batch)
	if err != nil {
		return err
	}
	return s.appendClickEvents(ctx, tx, kept)
}

// writeClickBatch stores batch in tx: the raw clicks, the links'
// counters and the aggregates, without events. It returns the clicks of
// workspaces that exist, those counted.
func writeClickBatch(ctx context.Context, tx pgx.Tx, batch []storedClick) (kept []storedClick, err error) {
	wss, campaigns, links, err := lockClickOwners(ctx, tx, batch)
	if err != nil {
		return nil, err
	}
	kept = batch[:0:0]
	for _, c := range batch {
		if wss[c.WS] {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	if err := insertRawClicks(ctx, tx, kept, links); err != nil {
		return nil, err
	}
	if err := countLinkClicks(ctx, tx, kept, links); err != nil {
		return nil, err
	}
	a := sumClicks(kept, campaigns, links)
	if err := a.countVisitors(ctx, tx); err != nil {
		return nil, err
	}
	if err := a.upsert(ctx, tx); err != nil {
		return nil, err
	}
	return kept, nil
}

// lockClickOwners returns which of the batch's workspaces, campaigns and
// links exist, keeping them until the commit: workspaces first, then
// campaigns, then links (in ID order, FOR NO KEY UPDATE, as the counters
// are written), the order the store's writes take them in.
func lockClickOwners(ctx context.Context, tx pgx.Tx, batch []storedClick) (wss, campaigns, links map[string]bool, err error) {
	var wsIDs, campaignIDs, linkIDs []string
	for _, c := range batch {
		wsIDs = append(wsIDs, c.WS)
		linkIDs = append(linkIDs, c.Link)
		if c.Campaign != "" {
			campaignIDs = append(campaignIDs, c.Campaign)
		}
	}
	sorted := func(ids []string) []string { slices.Sort(ids); return slices.Compact(ids) }
	wsIDs, campaignIDs, linkIDs = sorted(wsIDs), sorted(campaignIDs), sorted(linkIDs)
	collect := func(q string, ids []string) (map[string]bool, error) {
		rows, err := tx.Query(ctx, q, ids)
		if err != nil {
			return nil, err
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, err
		}
		m := make(map[string]bool, len(got))
		for _, id := range got {
			m[id] = true
		}
		return m, nil
	}
	if wss, err = collect(`SELECT id FROM workspaces WHERE id = ANY($1) ORDER BY id FOR KEY SHARE`, wsIDs); err != nil {
		return nil, nil, nil, fmt.Errorf("lock workspaces: %w", err)
	}
	if campaigns, err = collect(`SELECT id FROM campaigns WHERE id = ANY($1) ORDER BY id FOR KEY SHARE`, campaignIDs); err != nil {
		return nil, nil, nil, fmt.Errorf("lock campaigns: %w", err)
	}
	if links, err = collect(`SELECT id FROM links WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE`, linkIDs); err != nil {
		return nil, nil, nil, fmt.Errorf("lock links: %w", err)
	}
	return wss, campaigns, links, nil
}

// insertRawClicks copies the raw clicks of existing links (a weighted
// click has none).
func insertRawClicks(ctx context.Context, tx pgx.Tx, batch []storedClick, links map[string]bool) error {
	rows := make([][]any, 0, len(batch))
	for _, c := range batch {
		if !links[c.Link] || c.Weight > 0 {
			continue
		}
		rows = append(rows, []any{c.WS, c.Link, c.Campaign, c.NS, c.Vals[dimReferrers], c.Vals[dimCountries],
			c.Vals[dimDevices], c.Vals[dimBrowsers], c.Vals[dimOS], c.Bot, c.Visitor, c.Variant})
	}
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"clicks"},
		[]string{"workspace_id", "link_id", "campaign_id", "at_ns", "referrer", "country", "device", "browser", "os", "bot", "visitor", "variant"},
		pgx.CopyFromRows(rows))
	if err != nil {
		return fmt.Errorf("insert raw clicks: %w", err)
	}
	return nil
}

// countLinkClicks adds the batch's clicks to its links' counters, in one
// statement.
func countLinkClicks(ctx context.Context, tx pgx.Tx, batch []storedClick, links map[string]bool) error {
	n := map[string]int64{}
	for _, c := range batch {
		if links[c.Link] {
			n[c.Link] += c.count()
		}
	}
	if len(n) == 0 {
		return nil
	}
	ids := make([]string, 0, len(n))
	for id := range n {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	counts := make([]int64, len(ids))
	for i, id := range ids {
		counts[i] = n[id]
	}
	_, err := tx.Exec(ctx, `UPDATE links SET clicks = links.clicks + v.n
		FROM unnest($1::text[], $2::bigint[]) AS v(id, n) WHERE links.id = v.id`, ids, counts)
	if err != nil {
		return fmt.Errorf("count link clicks: %w", err)
	}
	return nil
}

// aggKey is one aggregate row: period is the hour or the day.
type aggKey struct {
	scope  string
	period int32
	dim    int16
	value  string
}

type aggRow struct {
	clicks, bots, visitors, botVisitors int64
	ws, campaign, link                  string
}

type visitorKey struct {
	scope   string
	day     int32
	visitor int64
}

type visitorRow struct {
	ws, campaign, link string
	bot                bool
}

// clickSums is a batch summed per aggregate row.
type clickSums struct {
	hours, days map[aggKey]*aggRow
	visitors    map[visitorKey]visitorRow
}

// clickScope is a scope a click counts in.
type clickScope struct{ key, ws, campaign, link string }

// sumClicks sums the batch per aggregate row: a click counts in its
// workspace, its link and its campaign, those of them that exist.
func sumClicks(batch []storedClick, campaigns, links map[string]bool) *clickSums {
	a := &clickSums{hours: map[aggKey]*aggRow{}, days: map[aggKey]*aggRow{}, visitors: map[visitorKey]visitorRow{}}
	add := func(m map[aggKey]*aggRow, k aggKey, sc clickScope, bot bool, n int64) {
		r := m[k]
		if r == nil {
			r = &aggRow{ws: sc.ws, campaign: sc.campaign, link: sc.link}
			m[k] = r
		}
		r.clicks += n
		if bot {
			r.bots += n
		}
	}
	scopes := make([]clickScope, 0, 3)
	for i := range batch {
		c := &batch[i]
		scopes = append(scopes[:0], clickScope{"w:" + c.WS, c.WS, "", ""})
		if links[c.Link] {
			scopes = append(scopes, clickScope{"l:" + c.Link, c.WS, "", c.Link})
		}
		if campaigns[c.Campaign] {
			scopes = append(scopes, clickScope{"c:" + c.WS + "/" + c.Campaign, c.WS, c.Campaign, ""})
		}
		h, d, n := c.hour(), c.day(), c.count()
		for _, sc := range scopes {
			for dim := dimTotals; dim < numDims; dim++ {
				v := c.Vals[dim]
				if dim == dimVariants && (v == "" || sc.link == "") || dim == dimLinks && sc.link != "" {
					continue // a link's own list of links would be itself
				}
				add(a.hours, aggKey{sc.key, h, dim, v}, sc, c.Bot, n)
				add(a.days, aggKey{sc.key, d, dim, v}, sc, c.Bot, n)
			}
			if c.Weight > 0 {
				continue // no visitor
			}
			vk := visitorKey{sc.key, d, c.Visitor}
			if _, ok := a.visitors[vk]; !ok {
				// As a bot or not by its first click of the day in the
				// workspace (scopes[0]).
				bot := c.Bot
				if first, ok := a.visitors[visitorKey{scopes[0].key, d, c.Visitor}]; ok {
					bot = first.bot
				}
				a.visitors[vk] = visitorRow{sc.ws, sc.campaign, sc.link, bot}
			}
		}
	}
	return a
}

// countVisitors records the batch's visitors of each scope and day and
// counts those not seen before in the days' totals, each as a bot or not
// as the workspace's record of the visitor that day says (the statement
// reads the records made before it; the batch's own carry the flag of its
// first click).
func (a *clickSums) countVisitors(ctx context.Context, tx pgx.Tx) error {
	keys := make([]visitorKey, 0, len(a.visitors))
	for k := range a.visitors {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y visitorKey) int {
		return cmp.Or(cmp.Compare(x.day, y.day), cmp.Compare(x.scope, y.scope), cmp.Compare(x.visitor, y.visitor))
	})
	n := len(keys)
	scopes, days, visitors, bots := make([]string, n), make([]int32, n), make([]int64, n), make([]bool, n)
	wss, campaigns, links := make([]string, n), make([]string, n), make([]string, n)
	for i, k := range keys {
		r := a.visitors[k]
		scopes[i], days[i], visitors[i], bots[i] = k.scope, k.day, k.visitor, r.bot
		wss[i], campaigns[i], links[i] = r.ws, r.campaign, r.link
	}
	rows, err := tx.Query(ctx, `WITH v AS (
			SELECT * FROM unnest($1::text[], $2::integer[], $3::bigint[], $4::text[], $5::text[], $6::boolean[], $7::text[])
				AS v(scope, day, visitor, ws, link, bot, campaign)
		), ins AS (
			INSERT INTO click_visitors (scope, day, visitor, bot, workspace_id, campaign_id, link_id)
			SELECT scope, day, visitor, bot, ws, NULLIF(campaign, ''), NULLIF(link, '') FROM v
			ON CONFLICT DO NOTHING
			RETURNING scope, day, visitor
		)
		SELECT ins.scope, ins.day, count(*), count(*) FILTER (WHERE coalesce(w.bot, v.bot))
		FROM ins JOIN v USING (scope, day, visitor)
		LEFT JOIN click_visitors w ON w.day = v.day AND w.scope = 'w:' || v.ws AND w.visitor = v.visitor
		GROUP BY ins.scope, ins.day`,
		scopes, days, visitors, wss, links, bots, campaigns)
	if err != nil {
		return fmt.Errorf("record visitors: %w", err)
	}
	var scope string
	var day int32
	var nv, nb int64
	_, err = pgx.ForEachRow(rows, []any{&scope, &day, &nv, &nb}, func() error {
		r := a.days[aggKey{scope, day, dimTotals, ""}]
		if r == nil {
			return fmt.Errorf("visitors of %s day %d without clicks", scope, day)
		}
		r.visitors += nv
		r.botVisitors += nb
		return nil
	})
	if err != nil {
		return fmt.Errorf("record visitors: %w", err)
	}
	return nil
}

// upsert adds the sums to the hourly and daily aggregates, one statement
// each, rows in key order (so two batches never wait on each other in a
// circle), and then holds the top lists that took new values to their
// bounds (see boundSections).
func (a *clickSums) upsert(ctx context.Context, tx pgx.Tx) error {
	for _, t := range []struct {
		table, period string
		m             map[aggKey]*aggRow
	}{{"click_hours", "hour", a.hours}, {"click_days", "day", a.days}} {
		keys := make([]aggKey, 0, len(t.m))
		for k := range t.m {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareAggKeys)
		n := len(keys)
		scopes, periods, dims, values := make([]string, n), make([]int32, n), make([]int16, n), make([]string, n)
		clicks, bots, visitors, botVisitors := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		wss, campaigns, links := make([]string, n), make([]string, n), make([]string, n)
		for i, k := range keys {
			r := t.m[k]
			scopes[i], periods[i], dims[i], values[i] = k.scope, k.period, k.dim, k.value
			clicks[i], bots[i], visitors[i], botVisitors[i] = r.clicks, r.bots, r.visitors, r.botVisitors
			wss[i], campaigns[i], links[i] = r.ws, r.campaign, r.link
		}
		// The statement answers the dimension values it inserted.
		var rows pgx.Rows
		var err error
		if t.table == "click_hours" {
			rows, err = tx.Query(ctx, `WITH up AS (
					INSERT INTO click_hours (scope, hour, dim, value, clicks, bots, workspace_id, link_id, campaign_id)
					SELECT s, p, d, v, c, b, w, NULLIF(l, ''), NULLIF(cm, '')
					FROM unnest($1::text[], $2::integer[], $3::smallint[], $4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[])
						AS u(s, p, d, v, c, b, w, l, cm)
					ON CONFLICT (scope, hour, dim, value) DO UPDATE
					SET clicks = click_hours.clicks + excluded.clicks, bots = click_hours.bots + excluded.bots
					RETURNING scope, hour, dim, value, xmax = 0 AS inserted
				)
				SELECT scope, hour, dim, value FROM up WHERE inserted AND dim > 0`,
				scopes, periods, dims, values, clicks, bots, wss, links, campaigns)
		} else {
			rows, err = tx.Query(ctx, `WITH up AS (
					INSERT INTO click_days (scope, day, dim, value, clicks, bots, visitors, bot_visitors, workspace_id, link_id, campaign_id)
					SELECT s, p, d, v, c, b, vi, bv, w, NULLIF(l, ''), NULLIF(cm, '')
					FROM unnest($1::text[], $2::integer[], $3::smallint[], $4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::text[])
						AS u(s, p, d, v, c, b, w, l, vi, bv, cm)
					ON CONFLICT (scope, day, dim, value) DO UPDATE
					SET clicks = click_days.clicks + excluded.clicks, bots = click_days.bots + excluded.bots,
						visitors = click_days.visitors + excluded.visitors, bot_visitors = click_days.bot_visitors + excluded.bot_visitors
					RETURNING scope, day, dim, value, xmax = 0 AS inserted
				)
				SELECT scope, day, dim, value FROM up WHERE inserted AND dim > 0`,
				scopes, periods, dims, values, clicks, bots, wss, links, visitors, botVisitors, campaigns)
		}
		if err != nil {
			return fmt.Errorf("upsert %s: %w", t.table, err)
		}
		fresh := map[aggKey][]string{} // a section (value "") → its new values
		var k aggKey
		if _, err := pgx.ForEachRow(rows, []any{&k.scope, &k.period, &k.dim, &k.value}, func() error {
			sec := aggKey{k.scope, k.period, k.dim, ""}
			fresh[sec] = append(fresh[sec], k.value)
			return nil
		}); err != nil {
			return fmt.Errorf("upsert %s: %w", t.table, err)
		}
		if err := boundSections(ctx, tx, t.table, t.period, fresh); err != nil {
			return fmt.Errorf("bound %s: %w", t.table, err)
		}
	}
	return nil
}

func compareAggKeys(x, y aggKey) int {
	return cmp.Or(cmp.Compare(x.scope, y.scope), cmp.Compare(x.period, y.period), cmp.Compare(x.dim, y.dim), cmp.Compare(x.value, y.value))
}

// appendClickEvents writes a link.clicked event for each click of a
// workspace with a webhook subscribed to them.
func (s *ClickService) appendClickEvents(ctx context.Context, tx pgx.Tx, batch []storedClick) error {
	if s.db.events == nil {
		return nil
	}
	now := s.db.now().UTC()
	subs := map[string][]string{}
	for i := range batch {
		c := &batch[i]
		hooks, ok := subs[c.WS]
		if !ok {
			var err error
			if hooks, err = subscribedWebhooks(ctx, tx, c.WS, link.EventLinkClicked); err != nil {
				return err
			}
			subs[c.WS] = hooks
		}
		if len(hooks) == 0 {
			continue
		}
		ce := link.ClickEvent{LinkID: c.Link, Time: time.Unix(0, c.NS).UTC(), Referrer: c.Vals[dimReferrers],
			Country: c.Vals[dimCountries], Device: c.Vals[dimDevices], Browser: c.Vals[dimBrowsers], OS: c.Vals[dimOS], Bot: c.Bot}
		ev := &link.Event{Type: link.EventLinkClicked, WorkspaceID: c.WS, CreatedAt: now, Data: s.db.events.AppendClickData(nil, &ce)}
		if _, err := s.db.writeEvent(ctx, tx, ev, false, hooks); err != nil {
			return err
		}
	}
	return nil
}

// LinkClicks returns the link's stored total and its clicks waiting in
// the backlog, read by one statement. ENOTFOUND for a link not of the
// workspace.
func (s *ClickService) LinkClicks(ctx context.Context, workspaceID, linkID string) (int64, error) {
	if !s.db.validID(link.PrefixLink, linkID) {
		return 0, link.Errorf(link.ENOTFOUND, "link %q not found", linkID)
	}
	var n int64
	err := s.db.pool.QueryRow(ctx, `SELECT l.clicks + (SELECT count(*) FROM click_backlog b WHERE b.link_id = l.id)
		FROM links l WHERE l.id = $1 AND l.workspace_id = $2`, linkID, workspaceID).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, link.Errorf(link.ENOTFOUND, "link %q not found", linkID)
	}
	if err != nil {
		return 0, fmt.Errorf("link clicks: %w", err)
	}
	return n, nil
}

// DailySalt returns the salt of the UTC day of day, creating it the first
// time; instances racing to create it get the same salt (the day is the
// key). EINVALID for a day before 1970 or after 2199.
func (s *ClickService) DailySalt(ctx context.Context, day time.Time) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if day.Unix() < 0 || !day.Before(maxClickTime) {
		return nil, link.Errorf(link.EINVALID, "day %s is out of range", day.Format(time.RFC3339))
	}
	d := int32(day.Unix() / 86400)
	read := func() ([]byte, error) {
		var salt []byte
		err := s.db.pool.QueryRow(ctx, `SELECT salt FROM click_salts WHERE day = $1`, d).Scan(&salt)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		return salt, err
	}
	salt, err := read()
	if err != nil || salt != nil {
		return salt, err
	}
	salt = make([]byte, saltSize)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("generate salt: %w", err)
	}
	// A salt inserted meanwhile wins; the read after sees it.
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO click_salts (day, salt) VALUES ($1, $2) ON CONFLICT (day) DO NOTHING`, d, salt); err != nil {
		return nil, fmt.Errorf("daily salt: %w", err)
	}
	if salt, err = read(); err != nil {
		return nil, fmt.Errorf("daily salt: %w", err)
	}
	if salt == nil {
		return nil, errors.New("daily salt: not stored")
	}
	return salt, nil
}
