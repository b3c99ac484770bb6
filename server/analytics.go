package server

import (
	"net/http"
	"strconv"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
)

type rangeResponse struct {
	Name     string `json:"name"`
	Start    string `json:"start"`
	End      string `json:"end"`
	TZ       string `json:"tz"`
	Interval string `json:"interval"`
}

type totalsResponse struct {
	Clicks         int64 `json:"clicks"`
	BotClicks      int64 `json:"bot_clicks"`
	UniqueVisitors int64 `json:"unique_visitors"`
}

type pointResponse struct {
	Start  string `json:"start"`
	Clicks int64  `json:"clicks"`
}

type topEntryResponse struct {
	Value    string `json:"value"`
	Clicks   int64  `json:"clicks"`
	ShortURL string `json:"short_url,omitempty"`
	// A link's variants list: where the variant sends visitors now, and
	// its weight.
	DestinationURL string `json:"destination_url,omitempty"`
	Weight         int    `json:"weight,omitempty"`
}

type analyticsResponse struct {
	Range      rangeResponse                 `json:"range"`
	Totals     totalsResponse                `json:"totals"`
	Timeseries []pointResponse               `json:"timeseries"`
	Top        map[string][]topEntryResponse `json:"top"`
	// TopOther holds, for each dimension, the clicks of the range that its
	// top list does not show: values past the limit, and values folded out
	// of the bounded lists of the aggregates. A list plus its other is the
	// clicks of the range.
	TopOther map[string]int64 `json:"top_other"`
}

// statsQuery is a parsed analytics request.
type statsQuery struct {
	rng    analytics.Range
	filter link.StatsFilter
}

// parseStatsQuery reads the parameters shared by the analytics endpoints
// and the export: range, start, end, tz, interval, exclude_bots, limit.
func (s *Server) parseStatsQuery(r *http.Request, c *caller, scope link.StatsScope, id string) (*statsQuery, error) {
	q := r.URL.Query()
	rg, err := analytics.ParseRange(analytics.RangeQuery{
		Name: q.Get("range"), Start: q.Get("start"), End: q.Get("end"),
		TZ: q.Get("tz"), Interval: q.Get("interval"), First: c.workspace.AnalyticsSince(),
	}, s.now())
	if err != nil {
		return nil, err
	}
	f := link.StatsFilter{WorkspaceID: c.workspace.ID, Scope: scope, ID: id, Start: rg.Start, End: rg.End, TopLimit: 10}
	switch v := q.Get("exclude_bots"); v {
	case "", "false", "0":
	case "true", "1":
		f.ExcludeBots = true
	default:
		return nil, link.Errorf(link.EINVALIDREQUEST, "exclude_bots must be true or false, not %q", v)
	}
	if f.TopLimit, err = positiveParam(q.Get("limit"), "limit", 10, 100); err != nil {
		return nil, err
	}
	return &statsQuery{rng: rg, filter: f}, nil
}

func (s *Server) handleWorkspaceAnalytics(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.serveStats(w, r, c, link.ScopeWorkspace, "")
}

func (s *Server) handleLinkAnalytics(w http.ResponseWriter, r *http.Request, c *caller) error {
	return s.serveStats(w, r, c, link.ScopeLink, c.params.ByName("id"))
}

// serveStats answers the analytics of a workspace, link or campaign from
// the aggregates: totals, a timeseries with every bucket of the range in
// its time zone (zeros included) and the top lists.
func (s *Server) serveStats(w http.ResponseWriter, r *http.Request, c *caller, scope link.StatsScope, id string) error {
	q, err := s.parseStatsQuery(r, c, scope, id)
	if err != nil {
		return err
	}
	release, err := s.admit(w, r, costlyAnalytics)
	if err != nil {
		return err
	}
	defer release()
	return s.work(costlyAnalytics, func() error { return s.writeStats(w, r, c, q, scope, id) })
}

// writeStats reads the analytics that q asks for and writes them.
func (s *Server) writeStats(w http.ResponseWriter, r *http.Request, c *caller, q *statsQuery, scope link.StatsScope, id string) error {
	st, err := s.clicks.Stats(r.Context(), q.filter)
	if err != nil {
		return err
	}
	if st.Top == nil {
		st.Top = map[string][]link.TopEntry{}
	}
	if scope == link.ScopeLink && st.Clicks > 0 {
		// A link's top list of links is the link itself.
		st.Top[link.DimLinks] = []link.TopEntry{{Value: id, Clicks: st.Clicks}}
	}
	out := analyticsResponse{
		Range: rangeResponse{Name: q.rng.Name, Start: ts(q.rng.Start), End: ts(q.rng.End),
			TZ: q.rng.Location.String(), Interval: string(q.rng.Interval)},
		Totals:     totalsResponse{Clicks: st.Clicks, BotClicks: st.BotClicks, UniqueVisitors: st.UniqueVisitors},
		Timeseries: s.timeseries(q, st),
		Top:        make(map[string][]topEntryResponse, len(link.Dimensions)),
		TopOther:   topOther(st),
	}
	for _, dim := range link.Dimensions {
		entries := make([]topEntryResponse, 0, len(st.Top[dim]))
		for _, e := range st.Top[dim] {
			te := topEntryResponse{Value: e.Value, Clicks: e.Clicks}
			if dim == link.DimLinks {
				te.ShortURL = s.shortURLOf(r, c.workspace.ID, e.Value)
			}
			entries = append(entries, te)
		}
		out.Top[dim] = entries
	}
	if scope == link.ScopeLink {
		if err := s.addVariantsTop(r, &out, st, c.workspace.ID, id); err != nil {
			return err
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// topOther returns, for each dimension, the clicks its top list leaves
// out.
func topOther(st *link.Stats) map[string]int64 {
	out := make(map[string]int64, len(link.Dimensions))
	for _, dim := range link.Dimensions {
		n := st.Clicks
		if dim == link.DimLinks && len(st.Top[dim]) == 0 {
			n = 0 // a link's own list of links is empty without clicks
		}
		for _, e := range st.Top[dim] {
			n -= e.Clicks
		}
		out[dim] = max(n, 0)
	}
	return out
}

// timeseries folds the hourly totals into the range's buckets.
func (s *Server) timeseries(q *statsQuery, st *link.Stats) []pointResponse {
	hourly := st.Hourly
	if q.filter.ExcludeBots {
		hourly = make([]link.Bucket, len(st.Hourly))
		for i, b := range st.Hourly {
			hourly[i] = link.Bucket{Start: b.Start, Clicks: b.Clicks - b.BotClicks}
		}
	}
	buckets := q.rng.Buckets()
	counts := q.rng.Fold(buckets, hourly)
	out := make([]pointResponse, len(buckets))
	for i, b := range buckets {
		out[i] = pointResponse{Start: ts(b), Clicks: counts[i]}
	}
	return out
}

// shortURLOf returns the short URL of a link of the workspace, or "" when
// the link was deleted since its clicks were counted.
func (s *Server) shortURLOf(r *http.Request, workspaceID, id string) string {
	l, err := s.links.FindLinkByID(r.Context(), workspaceID, id)
	if err != nil {
		return ""
	}
	return s.shortURL(l)
}

// addVariantsTop adds a link's variants top list: its clicks by A/B
// variant ("1" is the first of the link's variants), each with the
// destination and weight the variant has now (none for a number the link
// no longer has). Its other is the clicks sent to no variant: those a rule
// took, a preview bot's, those from before the split.
func (s *Server) addVariantsTop(r *http.Request, out *analyticsResponse, st *link.Stats, wsID, id string) error {
	var variants []link.Variant
	if len(st.Top[link.DimVariants]) > 0 {
		l, err := s.links.FindLinkByID(r.Context(), wsID, id)
		if err != nil && !isNotFound(err) {
			return err
		}
		if l != nil {
			variants = l.Variants
		}
	}
	entries := make([]topEntryResponse, 0, len(st.Top[link.DimVariants]))
	other := st.Clicks
	for _, e := range st.Top[link.DimVariants] {
		te := topEntryResponse{Value: e.Value, Clicks: e.Clicks}
		if n, err := strconv.Atoi(e.Value); err == nil && n >= 1 && n <= len(variants) {
			te.DestinationURL, te.Weight = variants[n-1].DestinationURL, variants[n-1].Weight
		}
		entries = append(entries, te)
		other -= e.Clicks
	}
	out.Top[link.DimVariants] = entries
	out.TopOther[link.DimVariants] = max(other, 0)
	return nil
}
