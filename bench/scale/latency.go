package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// latency is the median and the 99th percentile of several GETs of one
// kind.
type latency struct {
	name        string
	median, p99 time.Duration
	total       int64 // clicks in the answer (analytics) or links matched (search)
	detail      string
	err         error
}

// maxSeries bounds the time one series of GETs takes: a slow answer
// gets fewer GETs (the log says how many) rather than a run that does not
// end.
const maxSeries = time.Minute

// analyticsRanges are the ranges measured.
var analyticsRanges = []string{"30d", "all"}

// analyticsLatency times workspace analytics, then the analytics of the
// link linkID, over each range, gets times each.
func analyticsLatency(ctx context.Context, a *apiClient, gets int, linkID string) []latency {
	var out []latency
	for _, scope := range []struct{ name, path string }{
		{"workspace", "/v1/analytics/workspace?range="},
		{"link", "/v1/analytics/links/" + url.PathEscape(linkID) + "?range="},
	} {
		for _, rg := range analyticsRanges {
			l := latency{name: scope.name + " " + rg}
			var ds []time.Duration
			began := time.Now()
			for range gets {
				if time.Since(began) > maxSeries {
					break
				}
				var st struct {
					Totals struct{ Clicks int64 }
					Top    map[string][]any
				}
				t := time.Now()
				if err := a.call(ctx, "GET", scope.path+rg, nil, &st); err != nil {
					l.err = err
					break
				}
				ds = append(ds, time.Since(t))
				l.total = st.Totals.Clicks
				l.detail = fmt.Sprintf("%d top links", len(st.Top["links"]))
			}
			l.median, l.p99 = median(ds), percentile(ds, 99)
			logf("analytics %s range=%s: median %s p99 %s over %d GETs, %s clicks, %s", scope.name, rg, ms(l.median), ms(l.p99), len(ds), count(l.total), l.detail)
			out = append(out, l)
		}
	}
	return out
}

// searchTerms returns a few different terms of each kind the issue names:
// an alias substring, a destination host, a tag. Every term matches some
// of the N links (see linkBody); whether the server finds tags by search
// is its business.
func searchTerms(n int) map[string][]string {
	terms := map[string][]string{}
	for k := range 5 {
		i := (k*7919 + 4243) % n
		terms["alias"] = append(terms["alias"], "m"+strconv.Itoa(i/10)) // a prefix of mi: m<i/10> matches about 11 aliases and more
		terms["host"] = append(terms["host"], fmt.Sprintf("w%d.example.com", i%min(n, 1000)))
		terms["tag"] = append(terms["tag"], tagOf((k*37%max(1, min(100, n/100)))*100))
	}
	return terms
}

// searchKinds orders the kinds in the output.
var searchKinds = []string{"alias", "host", "tag"}

// searchLatency times GET /v1/links?search= for a page of 20: for each
// kind, o.gets GETs shared among its terms, and the median and the 99th
// percentile of them all.
func searchLatency(ctx context.Context, a *apiClient, o options) []latency {
	terms := searchTerms(o.n)
	var out []latency
	for _, kind := range searchKinds {
		l := latency{name: kind}
		var all []time.Duration
		truncated := false
		for _, term := range terms[kind] {
			var ds []time.Duration
			began := time.Now()
			for range max(1, o.gets/len(terms[kind])) {
				if time.Since(began) > maxSeries/time.Duration(len(terms[kind])) {
					break
				}
				var page struct {
					Data []any
					Meta struct {
						Total           int64
						SearchTruncated bool `json:"search_truncated"`
					}
				}
				t := time.Now()
				if err := a.call(ctx, "GET", "/v1/links?limit=20&search="+url.QueryEscape(term), nil, &page); err != nil {
					l.err = err
					break
				}
				ds = append(ds, time.Since(t))
				l.total += page.Meta.Total
				truncated = truncated || page.Meta.SearchTruncated
			}
			all = append(all, ds...)
		}
		l.median, l.p99 = median(all), percentile(all, 99)
		l.total /= int64(max(1, len(all)))
		l.detail = fmt.Sprintf("terms %v, %d matches each on average", terms[kind], l.total)
		if truncated {
			l.detail += ", search_truncated"
		}
		logf("search %s: median %s p99 %s over %d GETs (%s)", kind, ms(l.median), ms(l.p99), len(all), l.detail)
		out = append(out, l)
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}
