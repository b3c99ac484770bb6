package storage

import (
	"encoding/binary"
	"fmt"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// splitPeriodKey returns the scope and the period of a period blob's key.
func splitPeriodKey(k []byte) (scope []byte, period uint32, ok bool) {
	if len(k) > 0 && k[0] == scopeKindLink {
		if len(k) != 13 {
			return nil, 0, false
		}
		return linkScope(btoi(k[5:])), binary.BigEndian.Uint32(k[1:5]), true
	}
	n, ok := scopeLen(k)
	if !ok || len(k) != n+4 {
		return nil, 0, false
	}
	return k[:n], binary.BigEndian.Uint32(k[n:]), true
}

// scopeLen returns the length of the scope key k starts with.
func scopeLen(k []byte) (int, bool) {
	if len(k) < 9 {
		return 0, false
	}
	switch k[0] {
	case scopeKindWorkspace, scopeKindLink:
		return 9, true
	case scopeKindCampaign:
		if len(k) < 10 || len(k) < 10+int(k[9]) {
			return 0, false
		}
		return 10 + int(k[9]), true
	}
	return 0, false
}

type pair struct{ all, bots uint64 }

// checkClicks recomputes the click aggregates from each other by brute
// force: every link-scope key belongs to an existing link; each link's
// counter equals its hourly totals; every blob is sound, each of its
// dimension sections sums to its totals (so every top list sums to the
// clicks, with what a bounded list folded into other) and holds at most
// topCap entries, and each day's totals are the sum of its hours; no scope's day
// has more visitor records than its visitor count, nor more visitors than
// clicks; and no workspace hour has more raw clicks than its total (a
// prune, and clicks arriving late for pruned hours, leave fewer).
func checkClicks(tx *bolt.Tx) []error {
	c := &clickCheck{tx: tx, links: tx.Bucket(bucketLinks)}
	counters := c.linkCounters()
	hourly, linkTotals, visitorCounts := c.periods()
	c.countersMatchHours(counters, linkTotals)
	c.visitorRecords(visitorCounts)
	raw := c.rawClicks()
	c.hosts()
	c.errs = append(c.errs, checkBacklog(tx)...)
	for k, n := range raw {
		if p := hourly[k]; n > p.all {
			c.fail("workspace hour %x: %d raw clicks, total %d", k, n, p.all)
		}
	}
	return c.errs
}

// clickCheck is one run of checkClicks: the transaction and what it found.
type clickCheck struct {
	tx    *bolt.Tx
	links *bolt.Bucket
	errs  []error
}

func (c *clickCheck) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func (c *clickCheck) linkGone(scope []byte) bool {
	return scope[0] == scopeKindLink && c.links.Get(scope[1:9]) == nil
}

// linkCounters returns the per-link click counters, each of a link that
// exists.
func (c *clickCheck) linkCounters() map[string]uint64 {
	counters := map[string]uint64{}
	_ = c.tx.Bucket(bucketClicksTotals).ForEach(func(k, v []byte) error {
		if len(k) != 8 || len(v) != totalsValueSize {
			c.fail("clicks.totals %x: malformed block of %d bytes", k, len(v))
			return nil
		}
		zero := true
		for slot := range uint64(totalsBlock) {
			n := binary.BigEndian.Uint64(v[slot*8:])
			if n == 0 {
				continue
			}
			zero = false
			lid := itob(btoi(k)*totalsBlock + slot)
			if c.links.Get(lid) == nil {
				c.fail("clicks.totals %x: counter of link %x that does not exist", k, lid)
			}
			counters[string(lid)] = n
		}
		if zero {
			c.fail("clicks.totals %x: a block of zeros", k)
		}
		return nil
	})
	return counters
}

// blob checks one period blob and returns its header, scope and period.
func (c *clickCheck) blob(name []byte, k, v []byte, daily bool) (periodHeader, []byte, uint32, bool) {
	scope, period, ok := splitPeriodKey(k)
	if !ok {
		c.fail("%s %x: malformed key", name, k)
		return periodHeader{}, nil, 0, false
	}
	if c.linkGone(scope) {
		c.fail("%s %x: clicks of a link that does not exist", name, k)
	}
	h, sections, err := parsePeriodBlob(v, daily)
	if err != nil || h.clicks == 0 || h.visitors > h.clicks {
		c.fail("%s %x: header %+v, %v", name, k, h, err)
		return h, nil, 0, false
	}
	for d := range numDims {
		if k[0] == scopeKindLink && d == dimLinks {
			if len(sections[d].entries) != 0 {
				c.fail("%s %x: a link's own links", name, k)
			}
			continue
		}
		if d == dimVariants && k[0] != scopeKindLink && len(sections[d].entries) != 0 {
			c.fail("%s %x: variants outside a link", name, k)
		}
		c.section(name, k, d, sections[d], h)
	}
	return h, scope, period, true
}

// section checks one dimension's section of the blob k: entries in order
// and not empty, at most topCap of them, summing (with what a bounded list
// folded into other) to the blob's totals.
func (c *clickCheck) section(name, k []byte, d byte, sec section, h periodHeader) {
	r := newBlobReader(d, sec)
	var prev []byte
	// The values folded out of a bounded list count as other.
	sum := pair{sec.other[0] + sec.other[1], sec.other[1]}
	n := 0
	for i := 0; ; i++ {
		val, human, bot, ok, err := r.next()
		if err != nil {
			c.fail("%s %x dim %d: %v", name, k, d, err)
			break
		}
		if !ok {
			break
		}
		if i > 0 && string(val) <= string(prev) || human == 0 && bot == 0 {
			c.fail("%s %x dim %d: entry %d out of order or empty", name, k, d, i)
		}
		prev = append(prev[:0], val...)
		sum.all += human + bot
		sum.bots += bot
		n++
	}
	if n > topCap[d] || sec.v2 && uint64(n) != sec.n {
		c.fail("%s %x dim %d: %d entries, cap %d, prefix says %d", name, k, d, n, topCap[d], sec.n)
	}
	if d == dimVariants {
		// Only the clicks sent to a variant are in it.
		if sum.all > h.clicks || sum.bots > h.bots {
			c.fail("%s %x dim %d: counts sum to %v, more than the totals %d, %d", name, k, d, sum, h.clicks, h.bots)
		}
	} else if sum != (pair{h.clicks, h.bots}) {
		c.fail("%s %x dim %d: counts sum to %v, totals %d, %d", name, k, d, sum, h.clicks, h.bots)
	}
}

// periods checks every hourly and daily blob, and each day's totals
// against the sum of its hours (but a link's days rolled up, see
// RollUpLinkHours). It returns the totals of each scope's hour, each
// link's daily totals, and each scope's day's visitor counts.
func (c *clickCheck) periods() (hourly map[string]pair, linkTotals map[string]uint64, visitorCounts map[string]pair) {
	days := map[string]pair{} // scope + day, summed from the hours
	linkTotals = map[string]uint64{}
	hourly = map[string]pair{} // scope + hour
	_ = c.tx.Bucket(bucketClicksHourly).ForEach(func(k, v []byte) error {
		h, scope, hour, ok := c.blob(bucketClicksHourly, k, v, false)
		if !ok {
			return nil
		}
		hourly[string(concat(scope, be32(hour)))] = pair{h.clicks, h.bots}
		dk := string(concat(scope, be32(hour/hoursPerDay)))
		d := days[dk]
		days[dk] = pair{d.all + h.clicks, d.bots + h.bots}
		return nil
	})
	// The days before it of a link have no hours to sum (or only those of
	// clicks that came late, which the next roll-up deletes).
	hoursFrom := linkHoursFrom(c.tx)
	visitorCounts = map[string]pair{} // scope + day → visitors, humans
	_ = c.tx.Bucket(bucketClicksDaily).ForEach(func(k, v []byte) error {
		h, scope, day, ok := c.blob(bucketClicksDaily, k, v, true)
		if !ok {
			return nil
		}
		sk := string(concat(scope, be32(day)))
		rolled := scope[0] == scopeKindLink && (day+1)*hoursPerDay <= hoursFrom
		if got, want := (pair{h.clicks, h.bots}), days[sk]; got != want && !rolled {
			c.fail("clicks.daily %x: totals %v, its hours %v", k, got, want)
		}
		if scope[0] == scopeKindLink {
			linkTotals[string(scope[1:9])] += h.clicks
		}
		delete(days, sk)
		visitorCounts[sk] = pair{h.visitors, h.humans}
		return nil
	})
	for k, p := range days {
		c.fail("clicks.hourly of %x: %v in hours without their day", k, p)
	}
	return hourly, linkTotals, visitorCounts
}

// countersMatchHours checks each link's counter against its daily totals
// (which the days' checks tie to the hours).
func (c *clickCheck) countersMatchHours(counters, linkTotals map[string]uint64) {
	for id, n := range counters {
		if linkTotals[id] != n {
			c.fail("link %x: counter %d, daily totals %d", id, n, linkTotals[id])
		}
	}
	for id, n := range linkTotals {
		if counters[id] != n {
			c.fail("link %x: daily totals %d, counter %d", id, n, counters[id])
		}
	}
}

// visitorRecords checks the visitor records against the days' visitor
// counts: never more (a pruned day may take late clicks into new
// records). Records name deleted links and campaigns too; those are left
// out.
func (c *clickCheck) visitorRecords(visitorCounts map[string]pair) {
	records := map[string]pair{} // scope + day → records, human records
	var rec visitorRecord
	_ = c.tx.Bucket(bucketClicksVisitors).ForEach(func(k, v []byte) error {
		err := rec.decode(v)
		if len(k) != 20 || err != nil {
			c.fail("clicks.visitors %x: malformed, %v", k, err)
			return nil
		}
		human := uint64(1)
		if rec.bot {
			human = 0
		}
		day, ws := k[:4], btoi(k[4:12])
		count := func(scope []byte) {
			sk := string(concat(scope, day))
			p := records[sk]
			records[sk] = pair{p.all + 1, p.bots + human}
		}
		count(workspaceScope(ws))
		for _, l := range rec.links {
			if c.links.Get(itob(l)) != nil {
				count(linkScope(l))
			}
		}
		for _, cid := range rec.campaigns {
			count(campaignScope(ws, cid))
		}
		return nil
	})
	for k, p := range records {
		vc, ok := visitorCounts[k]
		if !ok {
			continue // the scope's aggregates were deleted (a campaign)
		}
		if p.all > vc.all || p.bots > vc.bots {
			c.fail("visitors of %x: %d records (%d human), counts %d (%d human)", k, p.all, p.bots, vc.all, vc.bots)
		}
	}
}

// rawClicks decodes every raw click and returns their number per
// workspace hour, for the workspace totals.
func (c *clickCheck) rawClicks() map[string]uint64 {
	raw := map[string]uint64{} // workspace scope + hour
	_ = c.tx.Bucket(bucketClicksRaw).ForEach(func(k, v []byte) error {
		var cl link.Click
		if err := decodeRawClick(idsOf(c.tx), k, v, &cl, func(b []byte) string { return string(b) }, hostIn(c.tx, btoi(k[:8]), map[uint64]string{})); err != nil {
			c.fail("clicks.raw %x: %v", k, err)
			return nil
		}
		raw[string(concat(workspaceScope(btoi(k[:8])), be32(uint32(cl.Time.Unix()/secondsPerHour))))]++
		return nil
	})
	return raw
}

// hosts checks the referrer hosts: each id of a day and workspace once,
// below the cap, named back by its host.
func (c *clickCheck) hosts() {
	hostIDs := map[string]int{} // day + workspace → hosts
	hosts := c.tx.Bucket(bucketClicksHosts)
	_ = hosts.ForEach(func(k, v []byte) error {
		if len(k) < 13 || k[12] > 1 || k[12] == 0 && len(k) != 17 {
			c.fail("clicks.hosts %x: malformed key", k)
			return nil
		}
		if k[12] == 1 {
			id, n := binary.Uvarint(v)
			rev := concat(k[:12], []byte{0}, be32(uint32(id)))
			if n <= 0 || string(hosts.Get(rev)) != string(k[13:]) {
				c.fail("clicks.hosts %x: id %d names %q", k, id, hosts.Get(rev))
			}
			return nil
		}
		hostIDs[string(k[:12])]++
		if id := binary.BigEndian.Uint32(k[13:]); id >= maxHostsPerDay {
			c.fail("clicks.hosts %x: id %d past the cap", k, id)
		}
		return nil
	})
	for p, n := range hostIDs {
		if n > maxHostsPerDay {
			c.fail("clicks.hosts %x: %d hosts", p, n)
		}
	}
}
