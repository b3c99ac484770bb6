package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// exportClick is one raw click of an export.
type exportClick struct {
	Time       string  `json:"time"`
	LinkID     string  `json:"link_id"`
	CampaignID *string `json:"campaign_id"`
	Referrer   string  `json:"referrer"`
	Country    string  `json:"country"`
	Device     string  `json:"device"`
	Browser    string  `json:"browser"`
	OS         string  `json:"os"`
	Bot        bool    `json:"bot"`
	Visitor    string  `json:"visitor"`
	// Variant is the link's A/B variant the click was sent to, from 1;
	// null (an empty CSV field) for none.
	Variant *int `json:"variant"`
}

var exportClickHeader = []string{"time", "link_id", "campaign_id", "referrer", "country", "device", "browser", "os", "bot", "visitor", "variant"}

func (e *exportClick) record() []string {
	cmp := ""
	if e.CampaignID != nil {
		cmp = *e.CampaignID
	}
	variant := ""
	if e.Variant != nil {
		variant = strconv.Itoa(*e.Variant)
	}
	return []string{e.Time, e.LinkID, cmp, e.Referrer, e.Country, e.Device, e.Browser, e.OS, strconv.FormatBool(e.Bot), e.Visitor, variant}
}

// handleExport streams the workspace's raw clicks of a range (data=clicks,
// CSV or JSON) or its aggregates as CSV (data=timeseries: one row a
// bucket; data=top: one row per dimension and value). Rows are written as
// they are read: an export is never held in memory whole.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request, c *caller) error {
	q, err := s.parseStatsQuery(r, c, link.ScopeWorkspace, "")
	if err != nil {
		return err
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "csv"
	}
	if format != "csv" && format != "json" {
		return link.Errorf(link.EINVALIDREQUEST, "format must be csv or json, not %q", format)
	}
	data := r.URL.Query().Get("data")
	switch data {
	case "", "clicks":
	case "timeseries", "top":
		if format != "csv" {
			return link.Errorf(link.EINVALIDREQUEST, "data=%s is exported as CSV; GET /v1/analytics/workspace answers it as JSON", data)
		}
	default:
		return link.Errorf(link.EINVALIDREQUEST, "data must be clicks, timeseries or top, not %q", data)
	}
	if err := s.exportScope(r, c, q); err != nil {
		return err
	}
	release, err := s.admit(w, r, costlyExport)
	if err != nil {
		return err
	}
	if data == "timeseries" || data == "top" {
		defer release()
		return s.work(costlyExport, func() error { return s.exportAggregates(w, r, q, data) })
	}
	// The slot is held while clicks are read and encoded, and given back
	// while a write to the client waits.
	gw := &gatedWriter{w: w, ctx: r.Context(), a: s.costly, class: costlyExport, release: release}
	defer gw.done()
	return s.work(costlyExport, func() error { return s.exportClicks(w, gw, r, c, q, format) })
}

// exportScope narrows an export to one link (link_id) or one campaign
// (campaign_id) of the workspace, which must exist.
func (s *Server) exportScope(r *http.Request, c *caller, q *statsQuery) error {
	linkID, campaignID := r.URL.Query().Get("link_id"), r.URL.Query().Get("campaign_id")
	switch {
	case linkID != "" && campaignID != "":
		return link.Errorf(link.EINVALIDREQUEST, "give link_id or campaign_id, not both")
	case linkID != "":
		if _, err := s.links.FindLinkByID(r.Context(), c.workspace.ID, linkID); err != nil {
			return err
		}
		q.filter.Scope, q.filter.ID = link.ScopeLink, linkID
	case campaignID != "":
		if _, err := s.campaigns.FindCampaignByID(r.Context(), c.workspace.ID, campaignID); err != nil {
			return err
		}
		q.filter.Scope, q.filter.ID = link.ScopeCampaign, campaignID
	}
	return nil
}

func exportHeaders(w http.ResponseWriter, format, name string) {
	h := w.Header()
	if format == "json" {
		h.Set("Content-Type", "application/json")
	} else {
		h.Set("Content-Type", "text/csv; charset=utf-8")
	}
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, name, format))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// exportClicks writes the headers on w and the body through body.
func (s *Server) exportClicks(w http.ResponseWriter, body io.Writer, r *http.Request, c *caller, q *statsQuery, format string) error {
	bw := bufio.NewWriterSize(body, 32<<10)
	cw := wire.NewCSVWriter(bw)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	started := false
	start := func() {
		started = true
		exportHeaders(w, format, "linkbolt-clicks")
		w.WriteHeader(http.StatusOK)
		if format == "json" {
			bw.WriteString("[")
		} else {
			cw.Write(exportClickHeader)
		}
	}
	n := 0
	f := q.filter
	err := s.clicks.ExportClicks(r.Context(), c.workspace.ID, q.rng.Start, q.rng.End, func(clk *link.Click) error {
		if (f.Scope == link.ScopeLink && clk.LinkID != f.ID) || (f.Scope == link.ScopeCampaign && clk.CampaignID != f.ID) {
			return nil
		}
		if !started {
			start()
		}
		e := exportClick{Time: clk.Time.UTC().Format(millisFormat), LinkID: clk.LinkID, CampaignID: optional(clk.CampaignID),
			Referrer: clk.Referrer, Country: clk.Country, Device: clk.Device, Browser: clk.Browser, OS: clk.OS, Bot: clk.Bot,
			Visitor: fmt.Sprintf("%016x", clk.Visitor)}
		if clk.Variant != 0 {
			v := int(clk.Variant)
			e.Variant = &v
		}
		if format == "json" {
			if n > 0 {
				bw.WriteString(",")
			}
			if err := enc.Encode(&e); err != nil {
				return err
			}
		} else if err := cw.Write(e.record()); err != nil {
			return err
		}
		n++
		return nil
	})
	if err != nil && !started {
		return err
	}
	if err != nil {
		// Part of the body is sent: cut the connection so the client sees a
		// broken download, not a complete-looking partial one.
		if r.Context().Err() != nil {
			s.logger.Warn("export cut off: the client left", "workspace", c.workspace.ID, "err", err)
		} else {
			s.logger.Error("export failed", "workspace", c.workspace.ID, "err", err)
		}
		panic(http.ErrAbortHandler)
	}
	if !started {
		start()
	}
	if format == "json" {
		bw.WriteString("]\n")
	}
	cw.Flush()
	return bw.Flush()
}

// exportTopLimit is the most values of each dimension data=top exports;
// the clicks of the rest are one row of value otherValue, so each
// dimension's rows sum to the range's clicks.
const exportTopLimit = 1000

// otherValue is the value of the row of the clicks no other row shows. No
// dimension value looks like it: referrers are host names, links ids, the
// rest classifier names.
const otherValue = "(other)"

func (s *Server) exportAggregates(w http.ResponseWriter, r *http.Request, q *statsQuery, data string) error {
	f := q.filter
	if data == "top" {
		f.TopLimit = exportTopLimit
	}
	st, err := s.clicks.Stats(r.Context(), f)
	if err != nil {
		return err
	}
	exportHeaders(w, "csv", "linkbolt-"+data)
	w.WriteHeader(http.StatusOK)
	cw := wire.NewCSVWriter(w)
	if data == "timeseries" {
		cw.Write([]string{"start", "clicks"})
		for _, p := range s.timeseries(q, st) {
			cw.Write([]string{p.Start, strconv.FormatInt(p.Clicks, 10)})
		}
	} else {
		cw.Write([]string{"dimension", "value", "clicks"})
		other := topOther(st)
		dims := link.Dimensions
		if f.Scope == link.ScopeLink { // a link's export has its variants too
			dims = append(dims[:len(dims):len(dims)], link.DimVariants)
		}
		for _, dim := range dims {
			if dim == link.DimVariants {
				n := st.Clicks
				for _, e := range st.Top[dim] {
					n -= e.Clicks
				}
				other[dim] = max(n, 0)
			}
			for _, e := range st.Top[dim] {
				cw.Write([]string{dim, e.Value, strconv.FormatInt(e.Clicks, 10)})
			}
			if other[dim] > 0 {
				cw.Write([]string{dim, otherValue, strconv.FormatInt(other[dim], 10)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
