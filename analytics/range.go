package analytics

import (
	"fmt"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// Interval is the width of a timeseries bucket.
type Interval string

// The intervals.
const (
	Hour Interval = "hour"
	Day  Interval = "day"
)

// Range is a half-open span of time [Start, End) in a time zone, cut into
// buckets of Interval.
type Range struct {
	Name     string
	Start    time.Time
	End      time.Time
	Location *time.Location
	Interval Interval
}

// MaxBuckets bounds the length of a timeseries.
const MaxBuckets = 20_000

// RangeQuery is the raw input of an analytics request.
type RangeQuery struct {
	Name, Start, End, TZ, Interval string
	// First is the earliest time the answer can hold data for (the
	// workspace's creation); it starts the range "all".
	First time.Time
}

// ParseRange turns a query into a Range at now. Named ranges follow the
// calendar of the time zone: "yesterday" in Europe/Berlin is Berlin's
// yesterday, and days are 23 or 25 hours long where the clocks change.
// Errors are link.EINVALIDREQUEST with a message naming the parameter.
func ParseRange(q RangeQuery, now time.Time) (Range, error) {
	loc := time.UTC
	if q.TZ != "" {
		l, err := time.LoadLocation(q.TZ)
		if err != nil || q.TZ == "Local" {
			return Range{}, link.Errorf(link.EINVALIDREQUEST, "tz must be an IANA time zone name like Europe/Berlin, not %q", q.TZ)
		}
		loc = l
	}
	r := Range{Name: q.Name, Location: loc}
	now = now.In(loc)
	today := midnight(now)
	switch {
	case q.Start != "" || q.End != "":
		if q.Name != "" {
			return Range{}, link.Errorf(link.EINVALIDREQUEST, "give either range or start and end, not both")
		}
		start, err1 := time.Parse(time.RFC3339, q.Start)
		end, err2 := time.Parse(time.RFC3339, q.End)
		if err1 != nil || err2 != nil {
			return Range{}, link.Errorf(link.EINVALIDREQUEST, "start and end must both be RFC 3339 times like 2026-01-31T00:00:00Z")
		}
		if !end.After(start) {
			return Range{}, link.Errorf(link.EINVALIDREQUEST, "end must be after start")
		}
		// Clicks are kept in hourly buckets: a custom range covers whole hours.
		if e := end.Truncate(time.Hour); !e.Equal(end) {
			end = e.Add(time.Hour)
		}
		r.Name, r.Start, r.End = "custom", start.Truncate(time.Hour).In(loc), end.In(loc)
	case q.Name == "today":
		r.Start, r.End = today, addDays(today, 1)
	case q.Name == "yesterday":
		r.Start, r.End = addDays(today, -1), today
	case q.Name == "24h":
		end := now.Truncate(time.Hour).Add(time.Hour)
		r.Start, r.End = end.Add(-24*time.Hour), end
	case q.Name == "7d", q.Name == "30d", q.Name == "90d", q.Name == "":
		days := map[string]int{"7d": 7, "30d": 30, "90d": 90, "": 30}[q.Name]
		if r.Name == "" {
			r.Name = "30d"
		}
		r.Start, r.End = addDays(today, 1-days), addDays(today, 1)
	case q.Name == "all":
		first := q.First.In(loc)
		if first.IsZero() || first.After(now) {
			first = now
		}
		r.Start, r.End = midnight(first), addDays(today, 1)
	default:
		return Range{}, link.Errorf(link.EINVALIDREQUEST, "range must be one of today, yesterday, 24h, 7d, 30d, 90d, all, not %q", q.Name)
	}
	switch q.Interval {
	case "":
		r.Interval = Day
		if r.Name == "today" || r.Name == "yesterday" || r.Name == "24h" || (r.Name == "custom" && r.End.Sub(r.Start) <= 48*time.Hour) {
			r.Interval = Hour
		}
	case "hour", "day":
		r.Interval = Interval(q.Interval)
	default:
		return Range{}, link.Errorf(link.EINVALIDREQUEST, "interval must be hour or day, not %q", q.Interval)
	}
	if n := r.bucketCount(); n > MaxBuckets {
		hint := "a shorter range or interval=day"
		if r.Interval == Day {
			hint = "a shorter range"
		}
		return Range{}, link.Errorf(link.EINVALIDREQUEST, "the range holds %d %s buckets; at most %d: use %s", n, r.Interval, MaxBuckets, hint)
	}
	return r, nil
}

func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

func addDays(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d+n, 0, 0, 0, 0, t.Location())
}

func (r Range) bucketCount() int {
	if r.Interval == Hour {
		return int(r.End.Sub(r.Start)/time.Hour) + 1
	}
	return int(r.End.Sub(r.Start)/(24*time.Hour)) + 2
}

// Buckets returns the start of every bucket of the range, in order. Day
// buckets start at local midnight; hour buckets are whole hours, so a day
// when the clocks change has 23 or 25 of them.
func (r Range) Buckets() []time.Time {
	var out []time.Time
	var t time.Time
	if r.Interval == Hour {
		// The first whole hour in the range: where the offset is not whole
		// hours, the hour before the start holds no clicks of the range.
		if t = r.Start.Truncate(time.Hour); t.Before(r.Start) {
			t = t.Add(time.Hour)
		}
	} else {
		t = midnight(r.Start)
	}
	for t.Before(r.End) {
		out = append(out, t)
		if r.Interval == Hour {
			t = t.Add(time.Hour)
		} else {
			t = addDays(t, 1)
		}
	}
	return out
}

// Fold sums hourly counts into the range's buckets. Hours outside the
// range are ignored. The result has one count per bucket, zeros included.
func (r Range) Fold(buckets []time.Time, hourly []link.Bucket) []int64 {
	out := make([]int64, len(buckets))
	i := 0
	for _, h := range hourly {
		if h.Start.Before(r.Start) || !h.Start.Before(r.End) {
			continue
		}
		for i+1 < len(buckets) && !h.Start.Before(buckets[i+1]) {
			i++
		}
		if !h.Start.Before(buckets[i]) {
			out[i] += h.Clicks
		}
	}
	return out
}

// String describes the range for logs.
func (r Range) String() string {
	return fmt.Sprintf("%s [%s, %s) %s by %s", r.Name, r.Start.Format(time.RFC3339), r.End.Format(time.RFC3339), r.Location, r.Interval)
}
