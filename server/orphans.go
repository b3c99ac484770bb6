package server

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
)

// recordOrphan hands a visit that found no link on d (nil: the primary
// host) to the orphan recorder: GETs only, never from an untracked client
// or with the untracked parameter, never of the paths browsers and
// crawlers ask every host for. It costs a channel send.
func (s *Server) recordOrphan(r *http.Request, d *link.Domain, typ string) {
	if s.orphans == nil || r.Method != http.MethodGet || s.untracked(r) {
		return
	}
	p := r.URL.Path
	switch {
	case p == "/favicon.ico" || p == "/robots.txt" || p == "/healthz":
		return
	case strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/app/"):
		return
	}
	host := ""
	if d != nil {
		host = d.Hostname
	}
	s.orphans.Record(analytics.OrphanHit{Time: s.now(), Domain: host, Type: typ, Path: orphanPath(p),
		Referrer: link.ReferrerHost(r.Header.Get("Referer")), UserAgent: clickUA(r.Header.Get("User-Agent")), Addr: s.clientAddr(r)})
}

// orphanPath returns what an orphan visit keeps of a path: its first
// link.MaxOrphanPath bytes, cut at a character, copied off the request.
func orphanPath(p string) string {
	if len(p) <= link.MaxOrphanPath {
		return strings.Clone(p)
	}
	p = p[:link.MaxOrphanPath]
	for len(p) > 0 && !utf8.ValidString(p) {
		p = p[:len(p)-1]
	}
	return strings.Clone(p)
}

// orphanScan bounds the kept visits the top lists of an answer read.
const orphanScan = 5000

type orphanVisitResponse struct {
	Time     string `json:"time"`
	Type     string `json:"type"`
	Path     string `json:"path"`
	Referrer string `json:"referrer"`
	Country  string `json:"country"`
	Device   string `json:"device"`
	Browser  string `json:"browser"`
	OS       string `json:"os"`
	Bot      bool   `json:"bot"`
}

type orphanPointResponse struct {
	Start  string `json:"start"`
	Visits int64  `json:"visits"`
}

type orphanTopResponse struct {
	Value  string `json:"value"`
	Visits int64  `json:"visits"`
}

type orphanVisitsResponse struct {
	Domain     string                         `json:"domain"`
	Domains    []string                       `json:"domains"`
	Range      rangeResponse                  `json:"range"`
	Totals     map[string]int64               `json:"totals"`
	Timeseries []orphanPointResponse          `json:"timeseries"`
	Top        map[string][]orphanTopResponse `json:"top"`
	Visits     []orphanVisitResponse          `json:"visits"`
	NextCursor string                         `json:"next_cursor,omitempty"`
}

// handleOrphanVisits answers GET /v1/analytics/orphan-visits: the orphan
// visits of one of the workspace's verified custom domains (domain=, by
// default the first by name).
func (s *Server) handleOrphanVisits(w http.ResponseWriter, r *http.Request, c *caller) error {
	ds, err := s.domains.FindDomains(r.Context(), c.workspace.ID)
	if err != nil {
		return err
	}
	names := []string{}
	for _, d := range ds {
		if d.Verified {
			names = append(names, d.Hostname)
		}
	}
	slices.Sort(names)
	host := r.URL.Query().Get("domain")
	if host != "" && !slices.Contains(names, host) {
		return link.Errorf(link.EINVALIDREQUEST, "domain %q is not a verified domain of this workspace", host)
	}
	if host == "" && len(names) > 0 {
		host = names[0]
	}
	return s.serveOrphanVisits(w, r, host, names, len(names) > 0, c.workspace.AnalyticsSince())
}

// handleAdminOrphanVisits answers GET /v1/admin/orphan-visits: the orphan
// visits of the primary host (by default) or of any verified domain.
func (s *Server) handleAdminOrphanVisits(w http.ResponseWriter, r *http.Request, c *caller) error {
	host := r.URL.Query().Get("domain")
	if host != "" {
		if _, err := s.domains.FindVerifiedDomain(r.Context(), host); isNotFound(err) {
			return link.Errorf(link.EINVALIDREQUEST, "domain %q is not a verified domain of this instance", host)
		} else if err != nil {
			return err
		}
	}
	return s.serveOrphanVisits(w, r, host, []string{}, true, time.Time{})
}

// serveOrphanVisits answers the orphan visits of host over the range of
// r's query; with hasDomain false, the workspace has no domain and the answer
// is empty.
func (s *Server) serveOrphanVisits(w http.ResponseWriter, r *http.Request, host string, domains []string, hasDomain bool, first time.Time) error {
	q := r.URL.Query()
	if first.IsZero() || first.Before(s.now().Add(-s.cfg.OrphanRetention)) {
		first = s.now().Add(-s.cfg.OrphanRetention)
	}
	rg, err := analytics.ParseRange(analytics.RangeQuery{
		Name: q.Get("range"), Start: q.Get("start"), End: q.Get("end"),
		TZ: q.Get("tz"), Interval: q.Get("interval"), First: first,
	}, s.now())
	if err != nil {
		return err
	}
	typ := q.Get("type")
	if typ != "" && !link.ValidOrphanType(typ) {
		return link.Errorf(link.EINVALIDREQUEST, "type must be one of %s, not %q", strings.Join(link.OrphanTypes, ", "), typ)
	}
	limit, err := positiveParam(q.Get("limit"), "limit", 20, 100)
	if err != nil {
		return err
	}
	out := orphanVisitsResponse{Domain: host, Domains: domains,
		Range:  rangeResponse{Name: rg.Name, Start: ts(rg.Start), End: ts(rg.End), TZ: rg.Location.String(), Interval: string(rg.Interval)},
		Totals: map[string]int64{"visits": 0}, Top: map[string][]orphanTopResponse{"paths": {}, "referrers": {}},
		Visits: []orphanVisitResponse{}}
	for _, t := range link.OrphanTypes {
		out.Totals[t] = 0
	}
	var hourly []link.Bucket
	if hasDomain && s.orphanStore != nil {
		counts, err := s.orphanStore.OrphanCounts(r.Context(), host, rg.Start, rg.End)
		if err != nil {
			return err
		}
		for _, c := range counts {
			out.Totals[c.Type] += c.Count
			if typ != "" && c.Type != typ {
				continue
			}
			out.Totals["visits"] += c.Count
			if n := len(hourly); n > 0 && hourly[n-1].Start.Equal(c.Hour) {
				hourly[n-1].Clicks += c.Count
			} else {
				hourly = append(hourly, link.Bucket{Start: c.Hour, Clicks: c.Count})
			}
		}
		if err := s.orphanPage(r, &out, link.OrphanVisitFilter{Domain: host, Type: typ, Start: rg.Start, End: rg.End,
			Cursor: q.Get("cursor"), Limit: limit}); err != nil {
			return err
		}
	}
	buckets := rg.Buckets()
	folded := rg.Fold(buckets, hourly)
	out.Timeseries = make([]orphanPointResponse, len(buckets))
	for i, b := range buckets {
		out.Timeseries[i] = orphanPointResponse{Start: ts(b), Visits: folded[i]}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// orphanPage fills out's page of visits and its top lists, read from the
// latest orphanScan kept visits of f.
func (s *Server) orphanPage(r *http.Request, out *orphanVisitsResponse, f link.OrphanVisitFilter) error {
	page, next, err := s.orphanStore.FindOrphanVisits(r.Context(), f)
	if err != nil {
		return err
	}
	for _, v := range page {
		out.Visits = append(out.Visits, orphanVisitResponse{Time: ts(v.Time), Type: v.Type, Path: v.Path, Referrer: v.Referrer,
			Country: v.Country, Device: v.Device, Browser: v.Browser, OS: v.OS, Bot: v.Bot})
	}
	out.NextCursor = next
	f.Cursor, f.Limit = "", orphanScan
	all, _, err := s.orphanStore.FindOrphanVisits(r.Context(), f)
	if err != nil {
		return err
	}
	paths, refs := map[string]int64{}, map[string]int64{}
	for _, v := range all {
		paths[v.Path]++
		refs[v.Referrer]++
	}
	out.Top["paths"], out.Top["referrers"] = orphanTop(paths), orphanTop(refs)
	return nil
}

// orphanTop returns the 10 values counted most, most first, ties by value.
func orphanTop(m map[string]int64) []orphanTopResponse {
	out := make([]orphanTopResponse, 0, len(m))
	for v, n := range m {
		out = append(out, orphanTopResponse{Value: v, Visits: n})
	}
	slices.SortFunc(out, func(a, b orphanTopResponse) int {
		if a.Visits != b.Visits {
			return cmp.Compare(b.Visits, a.Visits)
		}
		return strings.Compare(a.Value, b.Value)
	})
	return out[:min(len(out), 10)]
}
