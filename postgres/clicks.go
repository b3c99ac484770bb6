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

// sumKey is a scope's period: period is the hour or the day.
type sumKey struct {
	scope  string
	period int32
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

// clickSums is a batch summed per scope's period.
type clickSums struct {
	hours, days map[sumKey]*sumsDelta
	visitors    map[visitorKey]visitorRow
}

// clickScope is a scope a click counts in.
type clickScope struct{ key, ws, campaign, link string }

// sumClicks sums the batch per scope's period: a click counts in its
// workspace, its link and its campaign, those of them that exist.
func sumClicks(batch []storedClick, campaigns, links map[string]bool) *clickSums {
	a := &clickSums{hours: map[sumKey]*sumsDelta{}, days: map[sumKey]*sumsDelta{}, visitors: map[visitorKey]visitorRow{}}
	delta := func(m map[sumKey]*sumsDelta, k sumKey, sc clickScope) *sumsDelta {
		d := m[k]
		if d == nil {
			d = &sumsDelta{campaign: sc.campaign, link: sc.link}
			if sc.campaign == "" && sc.link == "" {
				d.ws = sc.ws
			}
			m[k] = d
		}
		return d
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
			for _, sd := range [2]*sumsDelta{delta(a.hours, sumKey{sc.key, h}, sc), delta(a.days, sumKey{sc.key, d}, sc)} {
				sd.clicks += n
				if c.Bot {
					sd.bots += n
				}
				for dim := dimLinks; dim < numDims; dim++ {
					v := c.Vals[dim]
					if dim == dimVariants && (v == "" || sc.link == "") || dim == dimLinks && sc.link != "" {
						continue // a link's own list of links would be itself
					}
					sd.addValue(dim, v, c.Bot, n)
				}
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
		d := a.days[sumKey{scope, day}]
		if d == nil {
			return fmt.Errorf("visitors of %s day %d without clicks", scope, day)
		}
		d.visitors += nv
		d.botVisitors += nb
		return nil
	})
	if err != nil {
		return fmt.Errorf("record visitors: %w", err)
	}
	return nil
}

// sumTable is one of the aggregate tables.
type sumTable struct {
	name, period string
	daily        bool
}

var (
	hourSums = sumTable{"click_hour_sums", "hour", false}
	daySums  = sumTable{"click_day_sums", "day", true}
)

// totalsColumns are the table's totals columns, in the order they are
// read and written.
func (t sumTable) totalsColumns() string {
	if t.daily {
		return "clicks, bots, visitors, bot_visitors"
	}
	return "clicks, bots"
}

// upsert adds the sums to the hourly and daily aggregates (see sumTable
// and addSums).
func (a *clickSums) upsert(ctx context.Context, tx pgx.Tx) error {
	if err := addSums(ctx, tx, hourSums, a.hours); err != nil {
		return err
	}
	return addSums(ctx, tx, daySums, a.days)
}

// addSums adds each delta to its scope's period in t: the periods new to
// the table are inserted in one statement, and those it has are read
// locked, added to in memory and written back in two, all in key order
// (so two batches never wait on each other in a circle). A period
// another batch inserted meanwhile, or one rolled up meanwhile, is taken
// again the other way.
func addSums(ctx context.Context, tx pgx.Tx, t sumTable, deltas map[sumKey]*sumsDelta) error {
	keys := make([]sumKey, 0, len(deltas))
	for k := range deltas {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareSumKeys)
	for try := 0; len(keys) > 0; try++ {
		if try == 8 {
			return fmt.Errorf("add to %s: %d periods still changing under this batch", t.name, len(keys))
		}
		var err error
		if keys, err = insertSums(ctx, tx, t, keys, deltas); err != nil {
			return fmt.Errorf("add to %s: %w", t.name, err)
		}
		if len(keys) == 0 {
			break
		}
		if keys, err = updateSums(ctx, tx, t, keys, deltas); err != nil {
			return fmt.Errorf("add to %s: %w", t.name, err)
		}
	}
	return nil
}

// insertSums inserts the periods of keys the table lacks and returns the
// others.
func insertSums(ctx context.Context, tx pgx.Tx, t sumTable, keys []sumKey, deltas map[sumKey]*sumsDelta) (left []sumKey, err error) {
	n := len(keys)
	scopes, periods := make([]string, n), make([]int32, n)
	clicks, bots, visitors, botVisitors := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	tops := make([][]byte, n)
	wss, campaigns, links := make([]string, n), make([]string, n), make([]string, n)
	for i, k := range keys {
		d := deltas[k]
		var p periodSums
		p.add(d)
		scopes[i], periods[i], tops[i] = k.scope, k.period, encodeTops(&p.tops)
		clicks[i], bots[i], visitors[i], botVisitors[i] = p.clicks, p.bots, p.visitors, p.botVisitors
		wss[i], campaigns[i], links[i] = d.ws, d.campaign, d.link
	}
	var rows pgx.Rows
	if t.daily {
		rows, err = tx.Query(ctx, `INSERT INTO click_day_sums (scope, day, clicks, bots, visitors, bot_visitors, tops, workspace_id, campaign_id, link_id)
			SELECT s, p, c, b, v, bv, tp, NULLIF(w, ''), NULLIF(cm, ''), NULLIF(l, '')
			FROM unnest($1::text[], $2::integer[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bytea[], $8::text[], $9::text[], $10::text[])
				AS u(s, p, c, b, v, bv, tp, w, cm, l)
			ON CONFLICT (scope, day) DO NOTHING
			RETURNING scope, day`,
			scopes, periods, clicks, bots, visitors, botVisitors, tops, wss, campaigns, links)
	} else {
		rows, err = tx.Query(ctx, `INSERT INTO click_hour_sums (scope, hour, clicks, bots, tops, workspace_id, campaign_id, link_id)
			SELECT s, p, c, b, tp, NULLIF(w, ''), NULLIF(cm, ''), NULLIF(l, '')
			FROM unnest($1::text[], $2::integer[], $3::bigint[], $4::bigint[], $5::bytea[], $6::text[], $7::text[], $8::text[])
				AS u(s, p, c, b, tp, w, cm, l)
			ON CONFLICT (scope, hour) DO NOTHING
			RETURNING scope, hour`,
			scopes, periods, clicks, bots, tops, wss, campaigns, links)
	}
	if err != nil {
		return nil, err
	}
	inserted := make(map[sumKey]bool, n)
	var k sumKey
	if _, err := pgx.ForEachRow(rows, []any{&k.scope, &k.period}, func() error {
		inserted[k] = true
		return nil
	}); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if !inserted[k] {
			left = append(left, k)
		}
	}
	return left, nil
}

// updateSums adds the deltas of keys to the periods the table has,
// locked in key order, and returns the keys of periods it no longer has.
func updateSums(ctx context.Context, tx pgx.Tx, t sumTable, keys []sumKey, deltas map[sumKey]*sumsDelta) (left []sumKey, err error) {
	n := len(keys)
	scopes, periods := make([]string, n), make([]int32, n)
	for i, k := range keys {
		scopes[i], periods[i] = k.scope, k.period
	}
	rows, err := tx.Query(ctx, `SELECT t.scope, t.`+t.period+`, `+t.totalsColumns()+`, t.tops
		FROM `+t.name+` t JOIN unnest($1::text[], $2::integer[]) AS k(s, p) ON t.scope = k.s AND t.`+t.period+` = k.p
		ORDER BY t.scope, t.`+t.period+` FOR UPDATE OF t`, scopes, periods)
	if err != nil {
		return nil, err
	}
	found := make(map[sumKey]*periodSums, n)
	for rows.Next() {
		var k sumKey
		var p periodSums
		var tops []byte
		dest := []any{&k.scope, &k.period, &p.clicks, &p.bots, &tops}
		if t.daily {
			dest = []any{&k.scope, &k.period, &p.clicks, &p.bots, &p.visitors, &p.botVisitors, &tops}
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, err
		}
		if err := p.decodeTops(tops); err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s %d: %w", k.scope, k.period, err)
		}
		found[k] = &p
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	m := len(found)
	scopes, periods = scopes[:0], periods[:0]
	clicks, bots, visitors, botVisitors := make([]int64, 0, m), make([]int64, 0, m), make([]int64, 0, m), make([]int64, 0, m)
	tops := make([][]byte, 0, m)
	for _, k := range keys {
		p := found[k]
		if p == nil {
			left = append(left, k)
			continue
		}
		p.add(deltas[k])
		scopes, periods = append(scopes, k.scope), append(periods, k.period)
		clicks, bots = append(clicks, p.clicks), append(bots, p.bots)
		visitors, botVisitors = append(visitors, p.visitors), append(botVisitors, p.botVisitors)
		tops = append(tops, encodeTops(&p.tops))
	}
	if len(scopes) == 0 {
		return left, nil
	}
	if t.daily {
		_, err = tx.Exec(ctx, `UPDATE click_day_sums t SET clicks = u.c, bots = u.b, visitors = u.v, bot_visitors = u.bv, tops = u.tp
			FROM unnest($1::text[], $2::integer[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bytea[]) AS u(s, p, c, b, v, bv, tp)
			WHERE t.scope = u.s AND t.day = u.p`, scopes, periods, clicks, bots, visitors, botVisitors, tops)
	} else {
		_, err = tx.Exec(ctx, `UPDATE click_hour_sums t SET clicks = u.c, bots = u.b, tops = u.tp
			FROM unnest($1::text[], $2::integer[], $3::bigint[], $4::bigint[], $5::bytea[]) AS u(s, p, c, b, tp)
			WHERE t.scope = u.s AND t.hour = u.p`, scopes, periods, clicks, bots, tops)
	}
	return left, err
}

func compareSumKeys(x, y sumKey) int {
	return cmp.Or(cmp.Compare(x.scope, y.scope), cmp.Compare(x.period, y.period))
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
