package server

import (
	"net/http"

	"github.com/linkbolt/linkbolt/analytics"
)

type rangeResponse struct {
	Name     string `json:"name"`
	Start    string `json:"start"`
	End      string `json:"end"`
	TZ       string `json:"tz"`
	Interval string `json:"interval"`
}

type totalsResponse struct {
	Clicks int64 `json:"clicks"`
}

type pointResponse struct {
	Start  string `json:"start"`
	Clicks int64  `json:"clicks"`
}

type analyticsResponse struct {
	Range      rangeResponse   `json:"range"`
	Totals     totalsResponse  `json:"totals"`
	Timeseries []pointResponse `json:"timeseries"`
}

// parseRange reads the range parameters of an analytics request.
func (s *Server) parseRange(r *http.Request, c *caller) (analytics.Range, error) {
	q := r.URL.Query()
	return analytics.ParseRange(analytics.RangeQuery{
		Name: q.Get("range"), Start: q.Get("start"), End: q.Get("end"),
		TZ: q.Get("tz"), Interval: q.Get("interval"), First: c.workspace.CreatedAt,
	}, s.now())
}

// handleWorkspaceAnalytics answers the workspace's clicks over a range from
// the hourly aggregates: the total and a timeseries with every bucket.
func (s *Server) handleWorkspaceAnalytics(w http.ResponseWriter, r *http.Request, c *caller) error {
	rg, err := s.parseRange(r, c)
	if err != nil {
		return err
	}
	hourly, err := s.clicks.WorkspaceHourly(r.Context(), c.workspace.ID, rg.Start, rg.End)
	if err != nil {
		return err
	}
	buckets := rg.Buckets()
	counts := rg.Fold(buckets, hourly)
	out := analyticsResponse{
		Range: rangeResponse{Name: rg.Name, Start: ts(rg.Start), End: ts(rg.End),
			TZ: rg.Location.String(), Interval: string(rg.Interval)},
		Timeseries: make([]pointResponse, len(buckets)),
	}
	for i, b := range buckets {
		out.Timeseries[i] = pointResponse{Start: ts(b), Clicks: counts[i]}
		out.Totals.Clicks += counts[i]
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
