package analytics

import (
	"context"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// clickBytes returns what c costs in a queue whose intern tables hold
// its strings already, as a usual click's are.
func clickBytes(c *link.Click) int64 {
	in := newInterner()
	in.put(c, math.MaxInt64)
	_, cost, _ := in.put(c, math.MaxInt64)
	return cost
}

// TestQueuedClickKeepsEveryField: a click comes out of the queue as it
// went in, every field of link.Click, whether it fits the compact form
// or is kept whole.
func TestQueuedClickKeepsEveryField(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	base := link.Click{LinkID: "lnk_1", WorkspaceID: "ws_1", CampaignID: "cmp_1", Time: clickTime,
		Referrer: "t.co", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0",
		Addr: netip.MustParseAddr("192.0.2.7"), Variant: 3}
	cases := map[string]func(c *link.Click){
		"compact, IPv4":         func(*link.Click) {},
		"compact, IPv6":         func(c *link.Click) { c.Addr = netip.MustParseAddr("2001:db8::1") },
		"compact, IPv4 in IPv6": func(c *link.Click) { c.Addr = netip.MustParseAddr("::ffff:192.0.2.7") },
		"compact, no address":   func(c *link.Click) { c.Addr = netip.Addr{} },
		"compact, local time":   func(c *link.Click) { c.Time = time.Unix(1_700_000_000, 123_456_789) },
		"compact, no strings":   func(c *link.Click) { c.Referrer, c.UserAgent, c.CampaignID, c.Variant = "", "", "", 0 },
		"whole, zoned address":  func(c *link.Click) { c.Addr = netip.MustParseAddr("fe80::1%eth0") },
		"whole, other location": func(c *link.Click) { c.Time = clickTime.In(berlin) },
		"whole, time out of range": func(c *link.Click) {
			c.Time = time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
		},
		"whole, classified": func(c *link.Click) {
			c.Browser, c.OS, c.Device, c.Country, c.Bot, c.Visitor = "Firefox", "Linux", "desktop", "DE", true, 42
		},
		"whole, long workspace ID": func(c *link.Click) { c.WorkspaceID = strings.Repeat("w", internIDLen+1) },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			in := newInterner()
			want := base
			edit(&want)
			q, cost, ok := in.put(&want, math.MaxInt64)
			if !ok {
				t.Fatal("put refused a click with all the room there is")
			}
			got := q.click()
			if got != want || got.Time.Location() != want.Time.Location() {
				t.Fatalf("queued and back:\n got %+v\nwant %+v", got, want)
			}
			whole := strings.HasPrefix(name, "whole")
			if (q.full != nil) != whole {
				t.Fatalf("kept whole = %v, want %v", q.full != nil, whole)
			}
			if cost != q.cost()+in.bytes || cost < clickSize+int64(len(want.LinkID)) {
				t.Fatalf("cost = %d, q.cost() = %d, tables %d", cost, q.cost(), in.bytes)
			}
			if _, _, ok := newInterner().put(&want, cost-1); ok {
				t.Fatalf("put took a click of %d bytes into %d", cost, cost-1)
			}
		})
	}
}

// TestQueuedClickInterns: clicks with the same user agent, referrer,
// workspace and campaign share them, so a queued click costs clickSize and
// its link ID; a user agent is kept cut to MaxUALength; the tables stop
// growing at their bounds, and clicks past them own (and are charged for)
// their strings.
func TestQueuedClickInterns(t *testing.T) {
	in := newInterner()
	ua := strings.Repeat("u", 2*MaxUALength)
	c := link.Click{LinkID: "lnk_1", WorkspaceID: "ws_1", Time: clickTime, Referrer: "example.com", UserAgent: ua}
	q1, cost1, _ := in.put(&c, math.MaxInt64)
	c.LinkID = "lnk_2"
	q2, cost2, _ := in.put(&c, math.MaxInt64)
	if q1.ua != q2.ua || q1.ref != q2.ref || q1.ids != q2.ids {
		t.Fatal("two clicks with the same strings do not share them")
	}
	if got := len(*q1.ua); got != MaxUALength {
		t.Fatalf("queued user agent of %d bytes, want it cut to %d", got, MaxUALength)
	}
	if want := clickSize + 5; cost2 != want {
		t.Fatalf("the second click costs %d, want %d", cost2, want)
	}
	if want := clickSize + 5 + 3*entryCost + int64(len("ws_1")+len("example.com")+MaxUALength); cost1 != want || in.bytes != want-clickSize-5 {
		t.Fatalf("the first click costs %d and the tables %d, want %d with its new entries", cost1, in.bytes, want)
	}
	// A click that does not fit changes nothing.
	before := *in
	c.UserAgent, c.Referrer = "curl/8.0", "other.example"
	if _, _, ok := in.put(&c, clickSize+5+entryCost); ok || len(in.uas) != 1 || len(in.refs) != 1 || in.bytes != before.bytes {
		t.Fatalf("a click that does not fit: put = %v, tables %d user agents, %d referrers, %d bytes", ok, len(in.uas), len(in.refs), in.bytes)
	}
	if clickSize > 80 {
		t.Fatalf("a queued click takes %d bytes, want at most 80", clickSize)
	}

	// Distinct user agents of the largest size fill the table's bytes.
	var last int64
	for i := range 3 * internBytes / MaxUALength {
		c.UserAgent = strings.Repeat(string(rune('a'+i%26)), MaxUALength-8) + strings.Repeat("0", 8-len(strconv.Itoa(i))) + strconv.Itoa(i)
		q, cost, _ := in.put(&c, math.MaxInt64)
		if got := q.click(); got.UserAgent != c.UserAgent {
			t.Fatalf("user agent %d changed in the queue", i)
		}
		last = cost
	}
	if in.uaBytes > internBytes || len(in.uas) > internUAs || !in.full {
		t.Fatalf("user agent table holds %d entries, %d bytes, full %v; want at most %d bytes and full", len(in.uas), in.uaBytes, in.full, internBytes)
	}
	if want := clickSize + 5 + 16 + MaxUALength; last != want {
		t.Fatalf("a click past the table costs %d, want %d (its own user agent)", last, want)
	}
}

// TestRecorderFloodOfDistinctUserAgents: a flood in which every click has
// its own user agent and referrer of the largest size stays within the
// queue's byte bound, and every click is written or counted as dropped.
func TestRecorderFloodOfDistinctUserAgents(t *testing.T) {
	const bound = 1 << 20
	store := &memStore{}
	r := NewRecorder(store, time.Hour, 0, discardLogger())
	r.SetQueueBytes(bound)
	const n = 10_000
	for i := range n {
		c := bigClick(i)
		c.UserAgent = c.UserAgent[:MaxUALength-10] + strings.Repeat("0", 10-len(strconv.Itoa(i))) + strconv.Itoa(i)
		c.Referrer = c.Referrer[:240] + strconv.Itoa(i)
		r.Record(c)
		if got := r.PendingBytes(); got > bound {
			t.Fatalf("after %d records: PendingBytes = %d, over the bound %d", i+1, got, bound)
		}
	}
	if r.Dropped() == 0 {
		t.Fatalf("no click dropped after %d clicks of ~%d bytes each into %d bytes", n, MaxUALength+253, bound)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Written()+r.Dropped(), int64(n); got != want {
		t.Fatalf("Written + Dropped = %d, want %d", got, want)
	}
	for _, c := range store.Clicks() {
		if len(c.UserAgent) != MaxUALength || !strings.HasPrefix(c.Referrer, "rrr") {
			t.Fatalf("click %s written with a user agent of %d bytes, referrer %q", c.LinkID, len(c.UserAgent), c.Referrer)
		}
	}
}
