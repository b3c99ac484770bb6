package analytics

import (
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, whatever the machine has installed

	"github.com/linkbolt/linkbolt/link"
)

func mustLoad(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatalf("LoadLocation(%q): %v", name, err)
	}
	return loc
}

var (
	berlin  = loadZone("Europe/Berlin")
	newYork = loadZone("America/New_York")
)

// loadZone is mustLoad for package variables; time/tzdata makes sure the
// zones are there.
func loadZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// wall returns the wall-clock time in loc.
func wall(loc *time.Location, y int, m time.Month, d, h, min, s int) time.Time {
	return time.Date(y, m, d, h, min, s, 0, loc)
}

// hourlyOnes returns one bucket with one click for every whole UTC hour
// starting in [start, end): what the store holds when every hour had a click.
func hourlyOnes(start, end time.Time) []link.Bucket {
	var out []link.Bucket
	h := start.UTC().Truncate(time.Hour)
	if h.Before(start) {
		h = h.Add(time.Hour)
	}
	for ; h.Before(end); h = h.Add(time.Hour) {
		out = append(out, link.Bucket{Start: h, Clicks: 1})
	}
	return out
}

// checkRange checks what must hold for every range: the buckets tile the
// range in local midnights or whole hours, and folding one click per hour
// counts every hour of the range exactly once, in the bucket it falls in.
func checkRange(t *testing.T, r Range) {
	t.Helper()
	errorf := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%v: "+format, append([]any{r}, args...)...)
	}
	if !r.Start.Before(r.End) {
		errorf("start not before end")
		return
	}
	if got, want := r.Start.Location(), r.Location; got != want {
		errorf("Start in %v, want %v", got, want)
	}
	if got, want := r.End.Location(), r.Location; got != want {
		errorf("End in %v, want %v", got, want)
	}
	buckets := r.Buckets()
	if len(buckets) == 0 || len(buckets) > MaxBuckets {
		errorf("%d buckets", len(buckets))
		return
	}
	if buckets[0].After(r.Start) {
		errorf("first bucket %v after range start", buckets[0])
	}
	for i, b := range buckets {
		if !b.Before(r.End) {
			errorf("bucket %d at %v not before range end", i, b)
		}
		switch r.Interval {
		case Hour:
			if !b.Equal(b.Truncate(time.Hour)) {
				errorf("hour bucket %d at %v is not a whole hour", i, b)
			}
			if i > 0 && b.Sub(buckets[i-1]) != time.Hour {
				errorf("hour bucket %d at %v is %v after the one before", i, b, b.Sub(buckets[i-1]))
			}
		case Day:
			l := b.In(r.Location)
			if l.Hour() != 0 || l.Minute() != 0 || l.Second() != 0 || l.Nanosecond() != 0 {
				errorf("day bucket %d at %v is not local midnight", i, l)
			}
			if i > 0 {
				py, pm, pd := buckets[i-1].In(r.Location).Date()
				if y, m, d := l.Date(); time.Date(py, pm, pd+1, 0, 0, 0, 0, time.UTC) != time.Date(y, m, d, 0, 0, 0, 0, time.UTC) {
					errorf("day bucket %d at %v does not follow %v", i, l, buckets[i-1])
				}
			}
		default:
			errorf("interval %q", r.Interval)
			return
		}
		if t.Failed() {
			return
		}
	}

	hourly := hourlyOnes(r.Start, r.End)
	counts := r.Fold(buckets, hourly)
	if got, want := len(counts), len(buckets); got != want {
		errorf("Fold returned %d counts for %d buckets", got, want)
		return
	}
	// Where each hour belongs: the last bucket starting at or before it.
	want := make([]int64, len(buckets))
	i := 0
	for _, h := range hourly {
		if h.Start.Before(buckets[0]) {
			errorf("hour %v before the first bucket %v", h.Start, buckets[0])
			return
		}
		for i+1 < len(buckets) && !buckets[i+1].After(h.Start) {
			i++
		}
		want[i]++
	}
	var total int64
	for i, c := range counts {
		total += c
		if c != want[i] {
			errorf("bucket %d at %v: %d clicks, want %d (one per hour)", i, buckets[i].In(r.Location), c, want[i])
			return
		}
	}
	if got, want := total, int64(len(hourly)); got != want {
		errorf("Fold total %d, want %d: an hour was lost or counted twice", got, want)
	}
}

func TestParseRangeNamed(t *testing.T) {
	utcNow := time.Date(2026, 5, 14, 15, 37, 12, 0, time.UTC)
	tests := []struct {
		name      string
		q         RangeQuery
		now       time.Time
		wantName  string
		wantStart time.Time
		wantEnd   time.Time
		wantIvl   Interval
		wantN     int // buckets
		wantHours int
	}{
		{"utc today", RangeQuery{Name: "today"}, utcNow, "today",
			wall(time.UTC, 2026, 5, 14, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Hour, 24, 24},
		{"utc today at midnight", RangeQuery{Name: "today"}, wall(time.UTC, 2026, 5, 14, 0, 0, 0), "today",
			wall(time.UTC, 2026, 5, 14, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Hour, 24, 24},
		{"utc today last nanosecond", RangeQuery{Name: "today"}, wall(time.UTC, 2026, 5, 15, 0, 0, 0).Add(-1), "today",
			wall(time.UTC, 2026, 5, 14, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Hour, 24, 24},
		{"utc yesterday", RangeQuery{Name: "yesterday"}, utcNow, "yesterday",
			wall(time.UTC, 2026, 5, 13, 0, 0, 0), wall(time.UTC, 2026, 5, 14, 0, 0, 0), Hour, 24, 24},
		{"utc yesterday across a month", RangeQuery{Name: "yesterday"}, wall(time.UTC, 2026, 3, 1, 8, 0, 0), "yesterday",
			wall(time.UTC, 2026, 2, 28, 0, 0, 0), wall(time.UTC, 2026, 3, 1, 0, 0, 0), Hour, 24, 24},
		{"utc 24h", RangeQuery{Name: "24h"}, utcNow, "24h",
			wall(time.UTC, 2026, 5, 13, 16, 0, 0), wall(time.UTC, 2026, 5, 14, 16, 0, 0), Hour, 24, 24},
		{"utc 24h on the hour", RangeQuery{Name: "24h"}, wall(time.UTC, 2026, 5, 14, 15, 0, 0), "24h",
			wall(time.UTC, 2026, 5, 13, 16, 0, 0), wall(time.UTC, 2026, 5, 14, 16, 0, 0), Hour, 24, 24},
		{"utc 7d", RangeQuery{Name: "7d"}, utcNow, "7d",
			wall(time.UTC, 2026, 5, 8, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Day, 7, 7 * 24},
		{"utc 30d", RangeQuery{Name: "30d"}, utcNow, "30d",
			wall(time.UTC, 2026, 4, 15, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Day, 30, 30 * 24},
		{"utc default is 30d", RangeQuery{}, utcNow, "30d",
			wall(time.UTC, 2026, 4, 15, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Day, 30, 30 * 24},
		{"utc 90d", RangeQuery{Name: "90d"}, utcNow, "90d",
			wall(time.UTC, 2026, 2, 14, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Day, 90, 90 * 24},
		{"utc all", RangeQuery{Name: "all", First: wall(time.UTC, 2026, 5, 1, 10, 0, 0)}, utcNow, "all",
			wall(time.UTC, 2026, 5, 1, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Day, 14, 14 * 24},
		{"utc all, First in another zone", RangeQuery{Name: "all", First: wall(berlin, 2026, 5, 2, 1, 0, 0)}, utcNow, "all",
			wall(time.UTC, 2026, 5, 1, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Day, 14, 14 * 24},
		{"utc all without First", RangeQuery{Name: "all"}, utcNow, "all",
			wall(time.UTC, 2026, 5, 14, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Day, 1, 24},
		{"utc all with First in the future", RangeQuery{Name: "all", First: utcNow.Add(48 * time.Hour)}, utcNow, "all",
			wall(time.UTC, 2026, 5, 14, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Day, 1, 24},
		{"tz UTC by name", RangeQuery{Name: "today", TZ: "UTC"}, utcNow, "today",
			wall(time.UTC, 2026, 5, 14, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Hour, 24, 24},
		{"now given in another zone", RangeQuery{Name: "today"}, wall(berlin, 2026, 5, 15, 1, 0, 0), "today",
			wall(time.UTC, 2026, 5, 14, 0, 0, 0), wall(time.UTC, 2026, 5, 15, 0, 0, 0), Hour, 24, 24},

		// Europe/Berlin: clocks go forward on 2026-03-29 and back on 2026-10-25.
		{"berlin today", RangeQuery{Name: "today", TZ: "Europe/Berlin"}, utcNow, "today",
			wall(berlin, 2026, 5, 14, 0, 0, 0), wall(berlin, 2026, 5, 15, 0, 0, 0), Hour, 24, 24},
		{"berlin today, UTC still yesterday", RangeQuery{Name: "today", TZ: "Europe/Berlin"}, time.Date(2026, 5, 13, 22, 30, 0, 0, time.UTC), "today",
			wall(berlin, 2026, 5, 14, 0, 0, 0), wall(berlin, 2026, 5, 15, 0, 0, 0), Hour, 24, 24},
		{"berlin today, spring forward", RangeQuery{Name: "today", TZ: "Europe/Berlin"}, wall(berlin, 2026, 3, 29, 12, 0, 0), "today",
			wall(berlin, 2026, 3, 29, 0, 0, 0), wall(berlin, 2026, 3, 30, 0, 0, 0), Hour, 23, 23},
		{"berlin today, spring forward, before the change", RangeQuery{Name: "today", TZ: "Europe/Berlin"}, wall(berlin, 2026, 3, 29, 1, 30, 0), "today",
			wall(berlin, 2026, 3, 29, 0, 0, 0), wall(berlin, 2026, 3, 30, 0, 0, 0), Hour, 23, 23},
		{"berlin today, fall back", RangeQuery{Name: "today", TZ: "Europe/Berlin"}, wall(berlin, 2026, 10, 25, 12, 0, 0), "today",
			wall(berlin, 2026, 10, 25, 0, 0, 0), wall(berlin, 2026, 10, 26, 0, 0, 0), Hour, 25, 25},
		{"berlin today, fall back, in the repeated hour", RangeQuery{Name: "today", TZ: "Europe/Berlin"}, time.Date(2026, 10, 25, 1, 30, 0, 0, time.UTC), "today",
			wall(berlin, 2026, 10, 25, 0, 0, 0), wall(berlin, 2026, 10, 26, 0, 0, 0), Hour, 25, 25},
		{"berlin yesterday is Berlin's", RangeQuery{Name: "yesterday", TZ: "Europe/Berlin"}, time.Date(2026, 5, 13, 22, 30, 0, 0, time.UTC), "yesterday",
			wall(berlin, 2026, 5, 13, 0, 0, 0), wall(berlin, 2026, 5, 14, 0, 0, 0), Hour, 24, 24},
		{"utc yesterday at the same instant", RangeQuery{Name: "yesterday"}, time.Date(2026, 5, 13, 22, 30, 0, 0, time.UTC), "yesterday",
			wall(time.UTC, 2026, 5, 12, 0, 0, 0), wall(time.UTC, 2026, 5, 13, 0, 0, 0), Hour, 24, 24},
		{"berlin yesterday, spring forward", RangeQuery{Name: "yesterday", TZ: "Europe/Berlin"}, wall(berlin, 2026, 3, 30, 0, 30, 0), "yesterday",
			wall(berlin, 2026, 3, 29, 0, 0, 0), wall(berlin, 2026, 3, 30, 0, 0, 0), Hour, 23, 23},
		{"berlin yesterday, fall back", RangeQuery{Name: "yesterday", TZ: "Europe/Berlin"}, wall(berlin, 2026, 10, 26, 9, 0, 0), "yesterday",
			wall(berlin, 2026, 10, 25, 0, 0, 0), wall(berlin, 2026, 10, 26, 0, 0, 0), Hour, 25, 25},
		{"berlin 24h across spring forward", RangeQuery{Name: "24h", TZ: "Europe/Berlin"}, wall(berlin, 2026, 3, 29, 4, 10, 0), "24h",
			wall(berlin, 2026, 3, 28, 4, 0, 0), wall(berlin, 2026, 3, 29, 5, 0, 0), Hour, 24, 24},
		{"berlin 24h across fall back", RangeQuery{Name: "24h", TZ: "Europe/Berlin"}, wall(berlin, 2026, 10, 25, 4, 10, 0), "24h",
			wall(berlin, 2026, 10, 24, 6, 0, 0), wall(berlin, 2026, 10, 25, 5, 0, 0), Hour, 24, 24},
		{"berlin 7d across spring forward", RangeQuery{Name: "7d", TZ: "Europe/Berlin"}, wall(berlin, 2026, 3, 31, 12, 0, 0), "7d",
			wall(berlin, 2026, 3, 25, 0, 0, 0), wall(berlin, 2026, 4, 1, 0, 0, 0), Day, 7, 7*24 - 1},
		{"berlin 7d across fall back", RangeQuery{Name: "7d", TZ: "Europe/Berlin"}, wall(berlin, 2026, 10, 27, 12, 0, 0), "7d",
			wall(berlin, 2026, 10, 21, 0, 0, 0), wall(berlin, 2026, 10, 28, 0, 0, 0), Day, 7, 7*24 + 1},
		{"berlin 7d hourly across fall back", RangeQuery{Name: "7d", TZ: "Europe/Berlin", Interval: "hour"}, wall(berlin, 2026, 10, 27, 12, 0, 0), "7d",
			wall(berlin, 2026, 10, 21, 0, 0, 0), wall(berlin, 2026, 10, 28, 0, 0, 0), Hour, 7*24 + 1, 7*24 + 1},
		{"berlin 30d across fall back", RangeQuery{Name: "30d", TZ: "Europe/Berlin"}, wall(berlin, 2026, 11, 10, 12, 0, 0), "30d",
			wall(berlin, 2026, 10, 12, 0, 0, 0), wall(berlin, 2026, 11, 11, 0, 0, 0), Day, 30, 30*24 + 1},
		{"berlin 90d across spring forward", RangeQuery{Name: "90d", TZ: "Europe/Berlin"}, utcNow, "90d",
			wall(berlin, 2026, 2, 14, 0, 0, 0), wall(berlin, 2026, 5, 15, 0, 0, 0), Day, 90, 90*24 - 1},
		{"berlin all, First on Berlin's next day", RangeQuery{Name: "all", TZ: "Europe/Berlin", First: time.Date(2026, 3, 28, 23, 30, 0, 0, time.UTC)}, wall(berlin, 2026, 3, 31, 12, 0, 0), "all",
			wall(berlin, 2026, 3, 29, 0, 0, 0), wall(berlin, 2026, 4, 1, 0, 0, 0), Day, 3, 3*24 - 1},

		// America/New_York: clocks go forward on 2026-03-08 and back on 2026-11-01.
		{"new york today, spring forward", RangeQuery{Name: "today", TZ: "America/New_York"}, wall(newYork, 2026, 3, 8, 12, 0, 0), "today",
			wall(newYork, 2026, 3, 8, 0, 0, 0), wall(newYork, 2026, 3, 9, 0, 0, 0), Hour, 23, 23},
		{"new york today, fall back", RangeQuery{Name: "today", TZ: "America/New_York"}, wall(newYork, 2026, 11, 1, 12, 0, 0), "today",
			wall(newYork, 2026, 11, 1, 0, 0, 0), wall(newYork, 2026, 11, 2, 0, 0, 0), Hour, 25, 25},
		{"new york today, UTC already tomorrow", RangeQuery{Name: "today", TZ: "America/New_York"}, time.Date(2026, 5, 15, 2, 0, 0, 0, time.UTC), "today",
			wall(newYork, 2026, 5, 14, 0, 0, 0), wall(newYork, 2026, 5, 15, 0, 0, 0), Hour, 24, 24},
		{"new york yesterday is New York's", RangeQuery{Name: "yesterday", TZ: "America/New_York"}, time.Date(2026, 5, 14, 2, 0, 0, 0, time.UTC), "yesterday",
			wall(newYork, 2026, 5, 12, 0, 0, 0), wall(newYork, 2026, 5, 13, 0, 0, 0), Hour, 24, 24},
		{"new york yesterday, fall back", RangeQuery{Name: "yesterday", TZ: "America/New_York"}, wall(newYork, 2026, 11, 2, 8, 0, 0), "yesterday",
			wall(newYork, 2026, 11, 1, 0, 0, 0), wall(newYork, 2026, 11, 2, 0, 0, 0), Hour, 25, 25},
		{"new york 24h", RangeQuery{Name: "24h", TZ: "America/New_York"}, wall(newYork, 2026, 3, 8, 3, 30, 0), "24h",
			wall(newYork, 2026, 3, 7, 3, 0, 0), wall(newYork, 2026, 3, 8, 4, 0, 0), Hour, 24, 24},
		{"new york 7d across spring forward", RangeQuery{Name: "7d", TZ: "America/New_York"}, wall(newYork, 2026, 3, 10, 9, 0, 0), "7d",
			wall(newYork, 2026, 3, 4, 0, 0, 0), wall(newYork, 2026, 3, 11, 0, 0, 0), Day, 7, 7*24 - 1},
		{"new york 7d across fall back", RangeQuery{Name: "7d", TZ: "America/New_York"}, wall(newYork, 2026, 11, 3, 9, 0, 0), "7d",
			wall(newYork, 2026, 10, 28, 0, 0, 0), wall(newYork, 2026, 11, 4, 0, 0, 0), Day, 7, 7*24 + 1},
		{"new york 30d", RangeQuery{Name: "30d", TZ: "America/New_York"}, utcNow, "30d",
			wall(newYork, 2026, 4, 15, 0, 0, 0), wall(newYork, 2026, 5, 15, 0, 0, 0), Day, 30, 30 * 24},
		{"new york 90d across spring forward", RangeQuery{Name: "90d", TZ: "America/New_York"}, utcNow, "90d",
			wall(newYork, 2026, 2, 14, 0, 0, 0), wall(newYork, 2026, 5, 15, 0, 0, 0), Day, 90, 90*24 - 1},
		{"new york all", RangeQuery{Name: "all", TZ: "America/New_York", First: time.Date(2026, 5, 10, 3, 0, 0, 0, time.UTC)}, utcNow, "all",
			wall(newYork, 2026, 5, 9, 0, 0, 0), wall(newYork, 2026, 5, 15, 0, 0, 0), Day, 6, 6 * 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRange(tt.q, tt.now)
			if err != nil {
				t.Fatalf("ParseRange(%+v) = %v", tt.q, err)
			}
			if got, want := r.Name, tt.wantName; got != want {
				t.Errorf("Name = %q, want %q", got, want)
			}
			if got, want := r.Start, tt.wantStart; !got.Equal(want) {
				t.Errorf("Start = %v, want %v", got, want)
			}
			if got, want := r.End, tt.wantEnd; !got.Equal(want) {
				t.Errorf("End = %v, want %v", got, want)
			}
			if got, want := r.Interval, tt.wantIvl; got != want {
				t.Errorf("Interval = %q, want %q", got, want)
			}
			wantLoc := "UTC"
			if tt.q.TZ != "" {
				wantLoc = tt.q.TZ
			}
			if got, want := r.Location.String(), wantLoc; got != want {
				t.Errorf("Location = %q, want %q", got, want)
			}
			if got, want := int(r.End.Sub(r.Start)/time.Hour), tt.wantHours; got != want {
				t.Errorf("range holds %d hours, want %d", got, want)
			}
			if got, want := len(r.Buckets()), tt.wantN; got != want {
				t.Errorf("%d buckets, want %d", got, want)
			}
			checkRange(t, r)
		})
	}
}

// TestFoldCountsEveryHourOnce sweeps every named range and interval over
// the days around clock changes in several zones.
func TestFoldCountsEveryHourOnce(t *testing.T) {
	t.Parallel()
	zones := []string{"", "Europe/Berlin", "America/New_York", "Australia/Sydney"}
	names := []string{"today", "yesterday", "24h", "7d", "30d", "90d", "all"}
	changes := []time.Time{
		time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC),   // New York forward
		time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC),  // Berlin forward
		time.Date(2026, 4, 5, 0, 0, 0, 0, time.UTC),   // Sydney back
		time.Date(2026, 10, 4, 0, 0, 0, 0, time.UTC),  // Sydney forward
		time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC), // Berlin back
		time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),  // New York back
	}
	for _, tz := range zones {
		for _, name := range names {
			for _, ivl := range []string{"", "hour", "day"} {
				for _, c := range changes {
					// Every 7 hours from the day before to the day after
					// meets the change from every side, in every zone.
					first := c.AddDate(0, 0, -10).Add(9 * time.Hour)
					for now := c.Add(-24 * time.Hour); now.Before(c.Add(48 * time.Hour)); now = now.Add(7 * time.Hour) {
						q := RangeQuery{Name: name, TZ: tz, Interval: ivl, First: first}
						r, err := ParseRange(q, now)
						if err != nil {
							t.Fatalf("ParseRange(%+v, %v) = %v", q, now, err)
						}
						checkRange(t, r)
						if t.Failed() {
							t.Fatalf("ParseRange(%+v, %v)", q, now)
						}
					}
				}
			}
		}
	}
}

func TestParseRangeCustom(t *testing.T) {
	utc := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	tests := []struct {
		name      string
		q         RangeQuery
		wantStart time.Time
		wantEnd   time.Time
		wantIvl   Interval
		wantN     int
	}{
		{"whole hours stay", RangeQuery{Start: "2026-05-14T10:00:00Z", End: "2026-05-14T12:00:00Z"},
			utc("2026-05-14T10:00:00Z"), utc("2026-05-14T12:00:00Z"), Hour, 2},
		{"rounded out to whole hours", RangeQuery{Start: "2026-05-14T10:15:00Z", End: "2026-05-14T12:05:00Z"},
			utc("2026-05-14T10:00:00Z"), utc("2026-05-14T13:00:00Z"), Hour, 3},
		{"last second of an hour", RangeQuery{Start: "2026-05-14T10:59:59Z", End: "2026-05-14T11:00:01Z"},
			utc("2026-05-14T10:00:00Z"), utc("2026-05-14T12:00:00Z"), Hour, 2},
		{"fractional seconds", RangeQuery{Start: "2026-05-14T10:00:00.5Z", End: "2026-05-14T10:00:00.75Z"},
			utc("2026-05-14T10:00:00Z"), utc("2026-05-14T11:00:00Z"), Hour, 1},
		{"within one hour", RangeQuery{Start: "2026-05-14T10:10:00Z", End: "2026-05-14T10:20:00Z"},
			utc("2026-05-14T10:00:00Z"), utc("2026-05-14T11:00:00Z"), Hour, 1},
		{"offset times", RangeQuery{Start: "2026-05-14T10:15:00+02:00", End: "2026-05-14T11:45:00+02:00", TZ: "Europe/Berlin"},
			utc("2026-05-14T08:00:00Z"), utc("2026-05-14T10:00:00Z"), Hour, 2},
		{"48 hours are hourly", RangeQuery{Start: "2026-05-14T00:00:00Z", End: "2026-05-16T00:00:00Z"},
			utc("2026-05-14T00:00:00Z"), utc("2026-05-16T00:00:00Z"), Hour, 48},
		{"49 hours are daily", RangeQuery{Start: "2026-05-14T00:00:00Z", End: "2026-05-16T01:00:00Z"},
			utc("2026-05-14T00:00:00Z"), utc("2026-05-16T01:00:00Z"), Day, 3},
		{"rounding decides the default interval", RangeQuery{Start: "2026-05-14T00:30:00Z", End: "2026-05-16T00:30:00Z"},
			utc("2026-05-14T00:00:00Z"), utc("2026-05-16T01:00:00Z"), Day, 3},
		{"daily in Berlin starts at Berlin midnight", RangeQuery{Start: "2026-05-14T00:00:00Z", End: "2026-05-17T00:00:00Z", TZ: "Europe/Berlin"},
			utc("2026-05-14T00:00:00Z"), utc("2026-05-17T00:00:00Z"), Day, 4},
		{"hourly by request", RangeQuery{Start: "2026-05-01T00:00:00Z", End: "2026-05-06T00:00:00Z", Interval: "hour"},
			utc("2026-05-01T00:00:00Z"), utc("2026-05-06T00:00:00Z"), Hour, 120},
		{"daily by request", RangeQuery{Start: "2026-05-14T10:00:00Z", End: "2026-05-14T12:00:00Z", Interval: "day"},
			utc("2026-05-14T10:00:00Z"), utc("2026-05-14T12:00:00Z"), Day, 1},
		{"hourly across Berlin fall back", RangeQuery{Start: "2026-10-25T00:00:00+02:00", End: "2026-10-26T00:00:00+01:00", TZ: "Europe/Berlin"},
			utc("2026-10-24T22:00:00Z"), utc("2026-10-25T23:00:00Z"), Hour, 25},
		{"longest hourly range", RangeQuery{Start: "2026-01-01T00:00:00Z", End: time.Date(2026, 1, 1, 19_999, 0, 0, 0, time.UTC).Format(time.RFC3339), Interval: "hour"},
			utc("2026-01-01T00:00:00Z"), time.Date(2026, 1, 1, 19_999, 0, 0, 0, time.UTC), Hour, 19_999},
	}
	now := time.Date(2026, 5, 20, 0, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRange(tt.q, now)
			if err != nil {
				t.Fatalf("ParseRange(%+v) = %v", tt.q, err)
			}
			if got, want := r.Name, "custom"; got != want {
				t.Errorf("Name = %q, want %q", got, want)
			}
			if got, want := r.Start, tt.wantStart; !got.Equal(want) {
				t.Errorf("Start = %v, want %v", got, want)
			}
			if got, want := r.End, tt.wantEnd; !got.Equal(want) {
				t.Errorf("End = %v, want %v", got, want)
			}
			if got, want := r.Interval, tt.wantIvl; got != want {
				t.Errorf("Interval = %q, want %q", got, want)
			}
			if got, want := len(r.Buckets()), tt.wantN; got != want {
				t.Errorf("%d buckets, want %d", got, want)
			}
			checkRange(t, r)
		})
	}
}

func TestParseRangeIntervalDefaults(t *testing.T) {
	now := time.Date(2026, 5, 14, 15, 0, 0, 0, time.UTC)
	tests := []struct {
		q     RangeQuery
		want  Interval
		wantN int
	}{
		{RangeQuery{Name: "today"}, Hour, 24},
		{RangeQuery{Name: "yesterday"}, Hour, 24},
		{RangeQuery{Name: "24h"}, Hour, 24},
		{RangeQuery{Name: "7d"}, Day, 7},
		{RangeQuery{Name: "30d"}, Day, 30},
		{RangeQuery{Name: "90d"}, Day, 90},
		{RangeQuery{Name: "all", First: now.AddDate(-1, 0, 0)}, Day, 366},
		{RangeQuery{}, Day, 30},
		{RangeQuery{Name: "today", Interval: "day"}, Day, 1},
		{RangeQuery{Name: "24h", Interval: "day"}, Day, 2},
		{RangeQuery{Name: "7d", Interval: "hour"}, Hour, 7 * 24},
		{RangeQuery{Name: "90d", Interval: "hour"}, Hour, 90 * 24},
		{RangeQuery{Name: "30d", Interval: "day"}, Day, 30},
	}
	for _, tt := range tests {
		r, err := ParseRange(tt.q, now)
		if err != nil {
			t.Fatalf("ParseRange(%+v) = %v", tt.q, err)
		}
		if got, want := r.Interval, tt.want; got != want {
			t.Errorf("ParseRange(%+v).Interval = %q, want %q", tt.q, got, want)
		}
		if got, want := len(r.Buckets()), tt.wantN; got != want {
			t.Errorf("ParseRange(%+v): %d buckets, want %d", tt.q, got, want)
		}
	}
}

func TestParseRangeErrors(t *testing.T) {
	now := time.Date(2026, 5, 14, 15, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		q       RangeQuery
		mention string // the message names the parameter
	}{
		{"unknown range", RangeQuery{Name: "week"}, "range"},
		{"range in capitals", RangeQuery{Name: "Today"}, "range"},
		{"range custom", RangeQuery{Name: "custom"}, "range"},
		{"unknown zone", RangeQuery{Name: "today", TZ: "Mars/Olympus_Mons"}, "tz"},
		{"zone path", RangeQuery{Name: "today", TZ: "../../etc/passwd"}, "tz"},
		{"Local", RangeQuery{Name: "today", TZ: "Local"}, "tz"},
		{"offset is no zone", RangeQuery{Name: "today", TZ: "+02:00"}, "tz"},
		{"unknown interval", RangeQuery{Name: "today", Interval: "minute"}, "interval"},
		{"interval in capitals", RangeQuery{Name: "today", Interval: "Hour"}, "interval"},
		{"start without end", RangeQuery{Start: "2026-05-14T10:00:00Z"}, "end"},
		{"end without start", RangeQuery{End: "2026-05-14T10:00:00Z"}, "start"},
		{"start not RFC 3339", RangeQuery{Start: "2026-05-14", End: "2026-05-15T00:00:00Z"}, "start"},
		{"end not RFC 3339", RangeQuery{Start: "2026-05-14T00:00:00Z", End: "tomorrow"}, "end"},
		{"end before start", RangeQuery{Start: "2026-05-14T10:00:00Z", End: "2026-05-14T09:00:00Z"}, "end"},
		{"end equals start", RangeQuery{Start: "2026-05-14T10:00:00Z", End: "2026-05-14T10:00:00Z"}, "end"},
		{"end equals start in another offset", RangeQuery{Start: "2026-05-14T10:00:00Z", End: "2026-05-14T12:00:00+02:00"}, "end"},
		{"range and start together", RangeQuery{Name: "7d", Start: "2026-05-01T00:00:00Z", End: "2026-05-02T00:00:00Z"}, "range"},
		{"range and end", RangeQuery{Name: "7d", End: "2026-05-02T00:00:00Z"}, "range"},
		{"too many hourly buckets", RangeQuery{Start: "2026-01-01T00:00:00Z", End: time.Date(2026, 1, 1, 20_001, 0, 0, 0, time.UTC).Format(time.RFC3339), Interval: "hour"}, "buckets"},
		{"years of hours", RangeQuery{Start: "2020-01-01T00:00:00Z", End: "2026-01-01T00:00:00Z", Interval: "hour"}, "buckets"},
		{"all since long ago by the hour", RangeQuery{Name: "all", First: now.AddDate(-3, 0, 0), Interval: "hour"}, "buckets"},
		{"too many daily buckets", RangeQuery{Start: "1900-01-01T00:00:00Z", End: "2026-01-01T00:00:00Z"}, "buckets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRange(tt.q, now)
			if err == nil {
				t.Fatalf("ParseRange(%+v) = %v, want an error", tt.q, r)
			}
			if got, want := link.ErrorCode(err), link.EINVALIDREQUEST; got != want {
				t.Errorf("ErrorCode = %q, want %q (%v)", got, want, err)
			}
			if msg := link.ErrorMessage(err); !strings.Contains(msg, tt.mention) {
				t.Errorf("ErrorMessage = %q, want it to mention %q", msg, tt.mention)
			}
		})
	}
}

func TestFoldDayBoundary(t *testing.T) {
	for _, tz := range []string{"", "Europe/Berlin", "America/New_York"} {
		t.Run(tz, func(t *testing.T) {
			loc := time.UTC
			if tz != "" {
				loc = mustLoad(t, tz)
			}
			now := wall(loc, 2026, 5, 14, 12, 0, 0)
			r, err := ParseRange(RangeQuery{Name: "7d", TZ: tz}, now)
			if err != nil {
				t.Fatal(err)
			}
			buckets := r.Buckets()
			hourly := []link.Bucket{
				{Start: wall(loc, 2026, 5, 11, 23, 59, 59), Clicks: 5},
				{Start: wall(loc, 2026, 5, 12, 0, 0, 0), Clicks: 7},
				{Start: wall(loc, 2026, 5, 12, 23, 0, 0), Clicks: 11},
				{Start: wall(loc, 2026, 5, 13, 0, 0, 0), Clicks: 13},
			}
			got := r.Fold(buckets, hourly)
			want := []int64{0, 0, 0, 5, 7 + 11, 13, 0} // 05-08 … 05-14
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("Fold = %v, want %v", got, want)
			}
		})
	}
}

func TestFoldIgnoresHoursOutsideRange(t *testing.T) {
	r, err := ParseRange(RangeQuery{Name: "today"}, time.Date(2026, 5, 14, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	buckets := r.Buckets()
	hourly := []link.Bucket{
		{Start: r.Start.Add(-24 * time.Hour), Clicks: 100},
		{Start: r.Start.Add(-time.Hour), Clicks: 200},
		{Start: r.Start.Add(-time.Nanosecond), Clicks: 300},
		{Start: r.Start, Clicks: 1},
		{Start: r.Start.Add(5 * time.Hour), Clicks: 2},
		{Start: r.End.Add(-time.Hour), Clicks: 3},
		{Start: r.End, Clicks: 400},
		{Start: r.End.Add(time.Hour), Clicks: 500},
	}
	got := r.Fold(buckets, hourly)
	if got, want := len(got), 24; got != want {
		t.Fatalf("Fold returned %d counts, want %d", got, want)
	}
	want := make([]int64, 24)
	want[0], want[5], want[23] = 1, 2, 3
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Fold = %v, want %v", got, want)
	}
}

func TestFoldEmpty(t *testing.T) {
	r, err := ParseRange(RangeQuery{Name: "7d"}, time.Date(2026, 5, 14, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	got := r.Fold(r.Buckets(), nil)
	if fmt.Sprint(got) != fmt.Sprint([]int64{0, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("Fold of nothing = %v, want seven zeros", got)
	}
}

// TestBucketsHalfHourZone: in a zone whose offset is not a whole number of
// hours, a day's hourly series should still have one bucket per stored hour
// of the day, none of them before the range starts.
func TestBucketsHalfHourZone(t *testing.T) {
	for _, tz := range []string{"Asia/Kolkata", "Asia/Kathmandu", "America/St_Johns"} {
		t.Run(tz, func(t *testing.T) {
			r, err := ParseRange(RangeQuery{Name: "today", TZ: tz}, time.Date(2026, 5, 14, 12, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			buckets := r.Buckets()
			if got, want := len(buckets), 24; got != want {
				t.Errorf("%d hour buckets on a 24-hour day, want %d (first %v, range start %v)",
					got, want, buckets[0].In(r.Location), r.Start)
			}
			if buckets[0].Before(r.Start) {
				t.Errorf("first bucket %v is before the range start %v: Fold can never fill it",
					buckets[0].In(r.Location), r.Start)
			}
			// Whatever the buckets, every stored hour of the range counts once.
			counts := r.Fold(buckets, hourlyOnes(r.Start, r.End))
			var total int64
			for _, c := range counts {
				total += c
			}
			if got, want := total, int64(24); got != want {
				t.Errorf("Fold total %d, want %d", got, want)
			}
		})
	}
}

func TestRangeString(t *testing.T) {
	r, err := ParseRange(RangeQuery{Name: "today", TZ: "Europe/Berlin"}, time.Date(2026, 5, 14, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.String(), "today [2026-05-14T00:00:00+02:00, 2026-05-15T00:00:00+02:00) Europe/Berlin by hour"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
}
