package server

import (
	"context"
	"html/template"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// Abuse reports: a visitor reports a short link to the instance admin,
// from the link's preview page (POST /{code}+, on whichever host serves
// it) or through the API (POST /v1/abuse-reports); the admin reads them
// (GET /v1/admin/abuse-reports), blocks the destination through the
// blocklist, and resolves or dismisses them (PATCH).

func (s *Server) abuseRoutes() {
	s.handle("POST", "/v1/abuse-reports", accessPublic, s.handleReportAbuse)
	s.handle("GET", "/v1/admin/abuse-reports", accessAdmin, s.handleListAbuseReports)
	s.handle("PATCH", "/v1/admin/abuse-reports/:id", accessAdmin, s.handleUpdateAbuseReport)
}

// reportsPerMinute is how many reports one address may send a minute.
const reportsPerMinute = 5

type abuseReportRequest struct {
	ShortURL string `json:"short_url"`
	Reason   string `json:"reason"`
	Details  string `json:"details"`
	Contact  string `json:"contact"`
}

// abuseReportResponse is a report as the admin API shows it.
type abuseReportResponse struct {
	ID          string  `json:"id"`
	WorkspaceID string  `json:"workspace_id"`
	LinkID      string  `json:"link_id"`
	ShortURL    string  `json:"short_url"`
	Destination string  `json:"destination"`
	Reason      string  `json:"reason"`
	Details     *string `json:"details"`
	Contact     *string `json:"contact"`
	Count       int64   `json:"count"`
	Status      string  `json:"status"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
}

func (s *Server) newAbuseReportResponse(r *link.AbuseReport) abuseReportResponse {
	opt := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	return abuseReportResponse{ID: r.ID, WorkspaceID: r.WorkspaceID, LinkID: r.LinkID,
		ShortURL: s.shortURL(&link.Link{Domain: r.Domain, Alias: r.Alias}), Destination: r.Destination,
		Reason: r.Reason, Details: opt(r.Details), Contact: opt(r.Contact), Count: r.Count, Status: r.Status,
		CreatedAt: ts(r.CreatedAt), UpdatedAt: ts(r.UpdatedAt)}
}

// reportLink records a report of l by the request's client. ERATELIMITED
// past reportsPerMinute from one address; EINVALID for bad fields.
func (s *Server) reportLink(w http.ResponseWriter, r *http.Request, l *link.Link, in abuseReportRequest) error {
	if d := s.limiters.Allow("report-ip:"+s.clientIP(r), reportsPerMinute); !d.Allowed {
		secs := retryAfter(w, d.RetryAfter)
		return link.Errorf(link.ERATELIMITED, "too many reports from your address; retry in %d s", secs)
	}
	rep := &link.AbuseReport{WorkspaceID: l.WorkspaceID, LinkID: l.ID, Domain: l.Domain, Alias: l.Alias,
		Destination: l.DestinationURL, Reason: in.Reason, Details: in.Details, Contact: in.Contact}
	rep.Normalize()
	if err := rep.Validate(); err != nil {
		return err
	}
	if err := s.abuseReports.ReportAbuse(r.Context(), rep); err != nil {
		return err
	}
	s.logger.LogAttrs(r.Context(), slog.LevelInfo, "abuse report", slog.String("report", rep.ID), slog.String("link", l.ID),
		slog.String("reason", rep.Reason), slog.Int64("count", rep.Count))
	return nil
}

// findReportedLink returns the link of a short URL on any host linkbolt
// serves (the primary or alternate host, or a verified custom domain).
// ENOTFOUND.
func (s *Server) findReportedLink(ctx context.Context, shortURL string) (*link.Link, error) {
	notFound := link.Errorf(link.ENOTFOUND, "no short link %q here: give the whole short URL, as https://host/alias", shortURL)
	u, err := url.Parse(strings.TrimSpace(shortURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &link.Error{Code: link.EINVALID, Message: "short_url: must be a short URL of this service, as https://host/alias",
			Fields: []link.FieldError{{Field: "short_url", Message: "must be a short URL of this service"}}}
	}
	host := strings.ToLower(u.Hostname())
	domain := ""
	if host != strings.ToLower(s.primary.Hostname()) && host != strings.ToLower(s.alt.Hostname()) {
		if s.domains == nil {
			return nil, notFound
		}
		d, err := s.domains.FindDomainByHostname(ctx, host)
		if isNotFound(err) || err == nil && !d.Verified {
			return nil, notFound
		} else if err != nil {
			return nil, err
		}
		domain = d.Hostname
	}
	alias := strings.TrimSuffix(strings.Trim(u.Path, "/"), "+")
	if !link.ValidCodeSyntax(alias) {
		return nil, notFound
	}
	l, err := s.links.FindLinkByAlias(ctx, domain, alias)
	if isNotFound(err) {
		return nil, notFound
	}
	return l, err
}

func (s *Server) handleReportAbuse(w http.ResponseWriter, r *http.Request, _ *caller) error {
	var in abuseReportRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	l, err := s.findReportedLink(r.Context(), in.ShortURL)
	if err != nil {
		return err
	}
	if err := s.reportLink(w, r, l, in); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "received",
		"message": "Thank you: the report is with this instance's admin."})
	return nil
}

func (s *Server) handleListAbuseReports(w http.ResponseWriter, r *http.Request, _ *caller) error {
	q := r.URL.Query()
	status := q.Get("status")
	switch status {
	case "all":
		status = ""
	case "":
		status = link.ReportOpen
	default:
		if !link.ValidReportStatus(status) {
			return link.Errorf(link.EINVALIDREQUEST, "status must be open, resolved, dismissed or all, not %q", status)
		}
	}
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > link.MaxReportsListed {
			return link.Errorf(link.EINVALIDREQUEST, "limit must be a whole number from 1 to %d", link.MaxReportsListed)
		}
		limit = n
	}
	var before time.Time
	if v := q.Get("before"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return link.Errorf(link.EINVALIDREQUEST, "before must be an RFC 3339 time (the updated_at of the last report of a page)")
		}
		before = t
	}
	reports, err := s.abuseReports.FindAbuseReports(r.Context(), status, before, limit)
	if err != nil {
		return err
	}
	out := make([]abuseReportResponse, 0, len(reports))
	for _, rep := range reports {
		out = append(out, s.newAbuseReportResponse(rep))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

type abuseReportUpdate struct {
	Status string `json:"status"`
}

func (s *Server) handleUpdateAbuseReport(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in abuseReportUpdate
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	if !link.ValidReportStatus(in.Status) {
		return &link.Error{Code: link.EINVALID, Message: "status: must be open, resolved or dismissed",
			Fields: []link.FieldError{{Field: "status", Message: "must be open, resolved or dismissed"}}}
	}
	rep, err := s.abuseReports.SetAbuseReportStatus(r.Context(), c.params.ByName("id"), in.Status)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newAbuseReportResponse(rep))
	return nil
}

// The preview page's report form posts back to the preview's own path,
// so that it works on every host that serves the link.

var reportedPage = template.Must(template.New("reported").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>{{if .Error}}Report not sent{{else}}Report sent{{end}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:12vh auto;padding:0 1rem;color:#222}.err{color:#a00}</style></head>
<body>{{if .Error}}<h1>The report was not sent</h1><p class="err" id="report-error">{{.Error}}</p>
{{else}}<h1>Thank you</h1><p id="report-sent">Your report of /{{.Code}} is with the admin of this service, who will look at it.</p>{{end}}
<p><a href="{{.Back}}">Back to the preview of /{{.Code}}</a></p></body></html>
`))

// servePreviewReport answers POST /{code}+ (the preview's report form):
// a page that thanks the visitor or says what was wrong.
func (s *Server) servePreviewReport(w http.ResponseWriter, r *http.Request, d *link.Domain, code string) {
	host := ""
	if d != nil {
		host = d.Hostname
	}
	l, err := s.links.FindLinkByAlias(r.Context(), host, code)
	if isNotFound(err) {
		s.notFound(w, r, code+"+")
		return
	} else if err != nil {
		s.writeError(w, r, err)
		return
	}
	data := struct{ Code, Back, Error string }{Code: code, Back: "/" + code + "+"}
	status := http.StatusOK
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		status, data.Error = http.StatusUnsupportedMediaType, "The form must be sent as a web form."
	} else if err := r.ParseForm(); err != nil {
		status, data.Error = http.StatusBadRequest, "The form could not be read. Try again."
	} else if err := s.reportLink(w, r, l, abuseReportRequest{Reason: r.PostForm.Get("reason"),
		Details: r.PostForm.Get("details"), Contact: r.PostForm.Get("contact")}); err != nil {
		code := link.ErrorCode(err)
		st, ok := codeStatus[code]
		if !ok || code == link.EINTERNAL {
			s.writeError(w, r, err)
			return
		}
		status, data.Error = st, link.ErrorMessage(err)
	}
	writePage(w, r, status, pageCSP, reportedPage, data)
}
