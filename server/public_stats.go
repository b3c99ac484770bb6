package server

// Public statistics of a link (link.Link.PublicStats): a read-only page at
// /{code}/stats, on the link's own host, and its JSON at
// GET /v1/public/links/{domain}/{alias}/stats, with no credential. Both
// show what the link's analytics show of the visits (clicks over time,
// referrers, countries, devices, browsers, systems) and nothing of where
// the link leads: not its destination, not its rules or variants, so a
// password-protected link's page tells a visitor no more than its password
// form. A link without the switch, archived, or that the blocklist turns
// off (any of its destinations on the list) answers exactly as an unknown
// code does. A link that
// expired or used up its clicks keeps its public statistics. A link
// without the switch never reaches this file on its redirect.

import (
	"html/template"
	"net/http"
	"strings"

	"github.com/linkbolt/linkbolt/link"
)

// publicStatsPerMinute bounds the public statistics one client address
// reads a minute (the page and the JSON together).
const publicStatsPerMinute = 60

// publicStatsCache is the Cache-Control of public statistics: shared
// caches may keep them a minute.
var publicStatsCache = []string{"public, max-age=60"}

// publicStatsDims are the top lists public statistics show, in order.
var publicStatsDims = []string{link.DimReferrers, link.DimCountries, link.DimDevices, link.DimBrowsers, link.DimOS}

// statsCode returns the code of a path /{code}/stats, or "".
func statsCode(p string) string {
	code, ok := strings.CutSuffix(p, "/stats")
	if !ok || len(code) < 2 || strings.IndexByte(code[1:], '/') >= 0 {
		return ""
	}
	return code[1:]
}

type publicLinkResponse struct {
	ShortURL  string  `json:"short_url"`
	Domain    string  `json:"domain"`
	Alias     string  `json:"alias"`
	Title     *string `json:"title"`
	CreatedAt string  `json:"created_at"`
}

type publicStatsResponse struct {
	Link       publicLinkResponse            `json:"link"`
	Range      rangeResponse                 `json:"range"`
	Totals     totalsResponse                `json:"totals"`
	Timeseries []pointResponse               `json:"timeseries"`
	Top        map[string][]topEntryResponse `json:"top"`
	TopOther   map[string]int64              `json:"top_other"`
}

// publicLink returns the link of code on host ("" the primary host) when
// its statistics are public, and ENOTFOUND (the error of an unknown code)
// when they are not.
func (s *Server) publicLink(r *http.Request, host, code string) (*link.Link, error) {
	unknown := link.Errorf(link.ENOTFOUND, "no short link %q", code)
	if !link.ValidCodeSyntax(code) || link.IsReserved(code) {
		return nil, unknown
	}
	l, err := s.links.FindLinkByAlias(r.Context(), host, code)
	if isNotFound(err) {
		return nil, unknown
	} else if err != nil {
		return nil, err
	}
	// Blocked as the redirect blocks it: any destination on the list
	// (a rule's, a variant's, an app's) turns the whole link off.
	if !l.PublicStats || l.Archived || s.blocklist.blocksLinkAt(l, s.now()) {
		return nil, unknown
	}
	return l, nil
}

// publicStats reads the public statistics of l for the request's range
// (the parameters of the analytics API but limit: ten of each).
func (s *Server) publicStats(w http.ResponseWriter, r *http.Request, l *link.Link) (*publicStatsResponse, error) {
	if d := s.limiters.Allow("public-stats-ip:"+s.clientIP(r), publicStatsPerMinute); !d.Allowed {
		secs := retryAfter(w, d.RetryAfter)
		return nil, link.Errorf(link.ERATELIMITED, "too many requests for statistics from your address; retry in %d s", secs)
	}
	ws, err := s.workspaces.FindWorkspaceByID(r.Context(), l.WorkspaceID)
	if err != nil {
		return nil, err
	}
	q, err := s.parseStatsQuery(r, &caller{workspace: ws}, link.ScopeLink, l.ID)
	if err != nil {
		return nil, err
	}
	q.filter.TopLimit = 10
	release, err := s.admit(w, r, costlyAnalytics)
	if err != nil {
		return nil, err
	}
	defer release()
	var out *publicStatsResponse
	err = s.work(costlyAnalytics, func() error {
		st, err := s.clicks.Stats(r.Context(), q.filter)
		if err != nil {
			return err
		}
		domain := l.Domain
		if domain == "" {
			domain = s.primary.Host
		}
		out = &publicStatsResponse{
			Link: publicLinkResponse{ShortURL: s.shortURL(l), Domain: domain, Alias: l.Alias,
				Title: optional(l.Title), CreatedAt: ts(l.CreatedAt)},
			Range: rangeResponse{Name: q.rng.Name, Start: ts(q.rng.Start), End: ts(q.rng.End),
				TZ: q.rng.Location.String(), Interval: string(q.rng.Interval)},
			Totals:     totalsResponse{Clicks: st.Clicks, BotClicks: st.BotClicks, UniqueVisitors: st.UniqueVisitors},
			Timeseries: s.timeseries(q, st),
			Top:        make(map[string][]topEntryResponse, len(publicStatsDims)),
			TopOther:   make(map[string]int64, len(publicStatsDims)),
		}
		other := topOther(st)
		for _, dim := range publicStatsDims {
			entries := make([]topEntryResponse, 0, len(st.Top[dim]))
			for _, e := range st.Top[dim] {
				entries = append(entries, topEntryResponse{Value: e.Value, Clicks: e.Clicks})
			}
			out.Top[dim], out.TopOther[dim] = entries, other[dim]
		}
		return nil
	})
	return out, err
}

// handlePublicLinkStats answers GET /v1/public/links/{domain}/{alias}/stats:
// domain is the primary host or a custom domain.
func (s *Server) handlePublicLinkStats(w http.ResponseWriter, r *http.Request, c *caller) error {
	host := strings.ToLower(c.params.ByName("domain"))
	if host == strings.ToLower(s.primary.Host) {
		host = ""
	}
	l, err := s.publicLink(r, host, c.params.ByName("alias"))
	if err != nil {
		return err
	}
	out, err := s.publicStats(w, r, l)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h["Cache-Control"] = publicStatsCache
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_ = jsonEncode(w, out)
	return nil
}

// servePublicStatsPage answers GET and HEAD /{code}/stats on the primary
// host (d nil) or the custom domain d: the statistics page, or the 404 of
// an unknown code.
func (s *Server) servePublicStatsPage(w http.ResponseWriter, r *http.Request, d *link.Domain, code string) {
	host := ""
	if d != nil {
		host = d.Hostname
	}
	l, err := s.publicLink(r, host, code)
	if isNotFound(err) {
		s.linkNotFound(w, r, d, code)
		return
	} else if err != nil {
		s.writeError(w, r, err)
		return
	}
	st, err := s.publicStats(w, r, l)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header()["Cache-Control"] = publicStatsCache
	writePage(w, r, http.StatusOK, pageCSP, publicStatsPage, newPublicStatsData(code, st))
}

// publicStatsData is what the statistics page shows.
type publicStatsData struct {
	Code, ShortURL, Title, Range string
	Clicks, Unique               int64
	Points                       []statsBar
	Lists                        []statsList
}

// statsBar is a bar of the page's charts: its label, clicks and width in
// per cent of the largest.
type statsBar struct {
	Label  string
	Clicks int64
	Width  int
}

type statsList struct {
	Title string
	Bars  []statsBar
}

// rangeNames are the page's words for the analytics' ranges.
var rangeNames = map[string]string{"today": "Today", "yesterday": "Yesterday", "24h": "The last 24 hours",
	"7d": "The last 7 days", "30d": "The last 30 days", "90d": "The last 90 days", "all": "All time"}

var publicStatsTitles = map[string]string{link.DimReferrers: "Referrers", link.DimCountries: "Countries",
	link.DimDevices: "Devices", link.DimBrowsers: "Browsers", link.DimOS: "Systems"}

// bars scales values against their largest.
func bars(labels []string, clicks []int64) []statsBar {
	var most int64
	for _, c := range clicks {
		most = max(most, c)
	}
	out := make([]statsBar, len(labels))
	for i := range labels {
		w := 0
		if most > 0 {
			w = int(clicks[i] * 100 / most)
		}
		out[i] = statsBar{Label: labels[i], Clicks: clicks[i], Width: w}
	}
	return out
}

func newPublicStatsData(code string, st *publicStatsResponse) publicStatsData {
	d := publicStatsData{Code: code, ShortURL: st.Link.ShortURL, Clicks: st.Totals.Clicks, Unique: st.Totals.UniqueVisitors,
		Range: rangeNames[st.Range.Name]}
	if d.Range == "" {
		d.Range = st.Range.Start[:10] + " to " + st.Range.End[:10]
	}
	d.Range += " (" + st.Range.TZ + ")"
	if st.Link.Title != nil {
		d.Title = *st.Link.Title
	}
	labels, clicks := make([]string, len(st.Timeseries)), make([]int64, len(st.Timeseries))
	for i, p := range st.Timeseries {
		labels[i], clicks[i] = p.Start[:10], p.Clicks
		if st.Range.Interval == "hour" {
			labels[i] = p.Start[:16]
		}
	}
	d.Points = bars(labels, clicks)
	for _, dim := range publicStatsDims {
		entries := st.Top[dim]
		labels, clicks := make([]string, len(entries)), make([]int64, len(entries))
		for i, e := range entries {
			labels[i], clicks[i] = e.Value, e.Clicks
			if labels[i] == "" {
				labels[i] = "(none)"
			}
		}
		if n := st.TopOther[dim]; n > 0 {
			labels, clicks = append(labels, "Other"), append(clicks, n)
		}
		d.Lists = append(d.Lists, statsList{Title: publicStatsTitles[dim], Bars: bars(labels, clicks)})
	}
	return d
}

var publicStatsPage = template.Must(template.New("stats").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>Statistics of /{{.Code}}</title>
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:4vh auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem;margin-bottom:.2rem}.sub{color:#555;margin-top:0;word-break:break-all}
.totals{display:flex;gap:2rem;margin:1rem 0}.totals strong{display:block;font-size:1.8rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(17rem,1fr));gap:1.2rem}
section{border:1px solid #ddd;border-radius:6px;padding:.6rem .9rem}#stats-timeseries{margin-bottom:1.2rem}h2{font-size:1rem;margin:.2rem 0 .6rem}
.row{display:grid;grid-template-columns:minmax(0,9rem) 1fr 3.5rem;gap:.5rem;align-items:center;margin:.2rem 0;font-size:.9rem}
.row span:first-child{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}.row span:last-child{text-align:right}
.bar{background:#e8eef8;border-radius:3px;height:.8rem}.bar i{display:block;height:100%;background:#1f5fbf;border-radius:3px}
.empty{color:#777}footer{margin-top:2rem;color:#777;font-size:.85rem}</style></head>
<body><h1 id="stats-title">{{if .Title}}{{.Title}}{{else}}Statistics of /{{.Code}}{{end}}</h1>
<p class="sub" id="stats-link">{{.ShortURL}} · {{.Range}}</p>
<div class="totals"><div><strong id="stats-clicks">{{.Clicks}}</strong>clicks</div><div><strong id="stats-unique">{{.Unique}}</strong>unique visitors</div></div>
<section id="stats-timeseries"><h2>Clicks over time</h2>
{{range .Points}}<div class="row"><span>{{.Label}}</span><div class="bar"><i style="width:{{.Width}}%"></i></div><span>{{.Clicks}}</span></div>{{end}}
</section>
<div class="grid">{{range .Lists}}<section><h2>{{.Title}}</h2>
{{range .Bars}}<div class="row"><span title="{{.Label}}">{{.Label}}</span><div class="bar"><i style="width:{{.Width}}%"></i></div><span>{{.Clicks}}</span></div>
{{else}}<p class="empty">No clicks yet.</p>{{end}}</section>{{end}}</div>
<footer>Public statistics of a short link, shared by its owner. Where the link leads is not shown here.</footer>
</body></html>
`))
