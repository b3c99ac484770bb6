package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/linkbolt/linkbolt/analytics"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// withActor returns r with the caller's actor and the client's address in
// its context, so that every change made for the request records them in
// the audit log (see link.WithActor).
func (s *Server) withActor(r *http.Request, c *caller) *http.Request {
	var a link.Actor
	switch {
	case c.key != nil:
		a = link.Actor{Type: link.ActorKey, ID: c.key.ID, Name: c.key.Name}
	case c.user != nil:
		a = link.Actor{Type: link.ActorUser, ID: c.user.ID, Name: c.user.Email}
	default:
		return r
	}
	return r.WithContext(link.WithActor(r.Context(), a, s.clientAddress(r)))
}

// clientAddress is the client's address for the audit log, "" when unknown.
func (s *Server) clientAddress(r *http.Request) string {
	if a := s.clientAddr(r); a.IsValid() {
		return a.String()
	}
	return ""
}

// The methods of sign-in an auth.login_* entry names.
const (
	loginPassword = "password"
	loginOIDC     = "oidc"
)

// recordLogin records a sign-in, successful or not, in the audit log: in
// every workspace of the user, or for the instance when no user is known
// (u nil: an e-mail that names none, a single sign-on that failed before
// the provider named anyone). The actor is the account tried, named by
// the e-mail given ("" when none); the changes name the method and, for a
// failure, why, from a fixed list (see AuditAction in the OpenAPI
// document); the password never enters the log. A failure to record is
// logged, not shown: the login's answer does not depend on it.
func (s *Server) recordLogin(r *http.Request, u *link.User, email, method, failure string) {
	action := link.AuditLoginFailed
	if failure == "" {
		action = link.AuditLoginSucceeded
	}
	actor := link.Actor{Type: link.ActorUser, Name: email}
	target := link.AuditTarget{Type: "user"}
	changes := map[string]link.Change{"method": {After: &method}}
	if failure != "" {
		changes["reason"] = link.Change{After: &failure}
	}
	var err error
	if u == nil {
		ctx := link.WithActor(r.Context(), actor, s.clientAddress(r))
		err = s.audit.RecordAudit(ctx, nil, action, target, changes)
	} else {
		actor.ID, target.ID = u.ID, u.ID
		ctx := link.WithActor(r.Context(), actor, s.clientAddress(r))
		err = s.audit.RecordUserAudit(ctx, u.ID, action, target, changes)
	}
	if err != nil {
		s.logger.Error("audit log: recording a login", "err", err)
	}
}

// auditEntryResponse is an audit entry on the wire.
type auditEntryResponse struct {
	ID           string                `json:"id"`
	Time         string                `json:"time"`
	WorkspaceIDs []string              `json:"workspace_ids,omitempty"`
	Actor        auditActorResponse    `json:"actor"`
	Action       string                `json:"action"`
	Target       auditTargetResponse   `json:"target"`
	Address      *string               `json:"address"`
	Changes      map[string][2]*string `json:"changes"`
}

type auditActorResponse struct {
	Type string  `json:"type"`
	ID   *string `json:"id"`
	Name *string `json:"name"`
}

type auditTargetResponse struct {
	Type string  `json:"type"`
	ID   *string `json:"id"`
}

func newAuditEntryResponse(e *link.AuditEntry, admin bool) auditEntryResponse {
	out := auditEntryResponse{ID: e.ID, Time: e.Time.UTC().Format(millisFormat),
		Actor:  auditActorResponse{Type: e.Actor.Type, ID: optional(e.Actor.ID), Name: optional(e.Actor.Name)},
		Action: e.Action, Target: auditTargetResponse{Type: e.Target.Type, ID: optional(e.Target.ID)},
		Address: optional(e.Address), Changes: map[string][2]*string{}}
	if admin {
		// Only the admin sees where else an entry belongs: a sign-in is
		// recorded in each workspace of the user, and an owner of one
		// must not learn the others.
		out.WorkspaceIDs = append([]string{}, e.WorkspaceIDs...)
	}
	for f, c := range e.Changes {
		out.Changes[f] = [2]*string{c.Before, c.After}
	}
	return out
}

type auditPage struct {
	Data       []auditEntryResponse `json:"data"`
	NextCursor *string              `json:"next_cursor"`
}

// handleAuditLog answers an owner with the workspace's audit log. Members
// of other roles and API keys get 403: the log names every member and key
// and where they signed in from.
func (s *Server) handleAuditLog(w http.ResponseWriter, r *http.Request, c *caller) error {
	if c.key != nil {
		return link.Errorf(link.EFORBIDDEN, "API keys cannot read the audit log: sign in as an owner of the workspace")
	}
	m, err := s.workspaces.FindMembership(r.Context(), c.workspace.ID, c.user.ID)
	if err != nil {
		return err
	}
	if m.Role != link.RoleOwner {
		return link.Errorf(link.EFORBIDDEN, "your role in this workspace is %s; only an owner may read its audit log", m.Role)
	}
	f, err := s.parseAuditFilter(r, c.workspace)
	if err != nil {
		return err
	}
	f.WorkspaceID = c.workspace.ID
	return s.serveAudit(w, r, f, false)
}

// handleAdminAuditLog answers the instance admin with the audit log of
// every workspace and the instance's own entries, or of the workspace
// named by workspace_id.
func (s *Server) handleAdminAuditLog(w http.ResponseWriter, r *http.Request, _ *caller) error {
	f, err := s.parseAuditFilter(r, nil)
	if err != nil {
		return err
	}
	f.AllWorkspaces = true
	f.WorkspaceID = r.URL.Query().Get("workspace_id")
	return s.serveAudit(w, r, f, true)
}

// parseAuditFilter reads actor, action, target, range (or start and end,
// as in analytics), cursor and limit.
func (s *Server) parseAuditFilter(r *http.Request, ws *link.Workspace) (link.AuditFilter, error) {
	q := r.URL.Query()
	f := link.AuditFilter{Actor: q.Get("actor"), Action: q.Get("action"), Target: q.Get("target"), Cursor: q.Get("cursor")}
	if f.Action != "" && !slices.Contains(link.AuditActions, f.Action) {
		return f, link.Errorf(link.EINVALIDREQUEST, "action must be one of %s, not %q", strings.Join(link.AuditActions, ", "), f.Action)
	}
	if q.Get("range") != "" || q.Get("start") != "" || q.Get("end") != "" {
		rq := analytics.RangeQuery{Name: q.Get("range"), Start: q.Get("start"), End: q.Get("end"), TZ: q.Get("tz"), Interval: "day"}
		if ws != nil {
			rq.First = ws.CreatedAt
		}
		rg, err := analytics.ParseRange(rq, s.now())
		if err != nil {
			return f, err
		}
		if rg.Name != "all" { // all: every entry kept
			f.Start, f.End = rg.Start, rg.End
		}
	}
	var err error
	f.Limit, err = positiveParam(q.Get("limit"), "limit", 50, link.MaxAuditPage)
	return f, err
}

// serveAudit answers a page of entries as JSON, or every matching entry
// as an export (format=csv or jsonl, or an Accept header naming either).
func (s *Server) serveAudit(w http.ResponseWriter, r *http.Request, f link.AuditFilter, admin bool) error {
	format, err := auditFormat(r)
	if err != nil {
		return err
	}
	if format != "" {
		return s.exportAudit(w, r, f, admin, format)
	}
	entries, next, err := s.audit.FindAuditEntries(r.Context(), f)
	if err != nil {
		return err
	}
	page := auditPage{Data: make([]auditEntryResponse, 0, len(entries)), NextCursor: optional(next)}
	for _, e := range entries {
		page.Data = append(page.Data, newAuditEntryResponse(e, admin))
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// auditFormat returns the export format a request asks for: format=csv or
// jsonl, else an Accept header of text/csv or application/x-ndjson
// (application/jsonl too); "" for a page of JSON.
func auditFormat(r *http.Request) (string, error) {
	switch v := r.URL.Query().Get("format"); v {
	case "csv", "jsonl":
		return v, nil
	case "json":
		return "", nil
	case "":
	default:
		return "", link.Errorf(link.EINVALIDREQUEST, "format must be json, csv or jsonl, not %q", v)
	}
	accept := r.Header.Get("Accept")
	switch {
	case strings.Contains(accept, "text/csv"):
		return "csv", nil
	case strings.Contains(accept, "application/x-ndjson"), strings.Contains(accept, "application/jsonl"):
		return "jsonl", nil
	}
	return "", nil
}

var auditCSVHeader = []string{"id", "time", "workspace_ids", "actor_type", "actor_id", "actor_name", "action", "target_type", "target_id", "address", "changes"}

// exportAudit streams every entry f matches, newest first, a page at a
// time (each page its own short read), through the costly-work gate like
// the click export.
func (s *Server) exportAudit(w http.ResponseWriter, r *http.Request, f link.AuditFilter, admin bool, format string) error {
	// The first page is read before the answer starts, so that a bad
	// cursor is still a clean 400.
	f.Limit = link.MaxAuditPage
	release, err := s.admit(w, r, costlyExport)
	if err != nil {
		return err
	}
	gw := &gatedWriter{w: w, ctx: r.Context(), a: s.costly, class: costlyExport, release: release}
	defer gw.done()
	return s.work(costlyExport, func() error {
		entries, next, err := s.audit.FindAuditEntries(r.Context(), f)
		if err != nil {
			return err
		}
		h := w.Header()
		name := "linkbolt-audit-log." + format
		if format == "csv" {
			h.Set("Content-Type", "text/csv; charset=utf-8")
		} else {
			h.Set("Content-Type", "application/x-ndjson")
		}
		h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		err = writeAuditExport(r.Context(), gw, format, admin, entries, next, func(cursor string) ([]*link.AuditEntry, string, error) {
			f.Cursor = cursor
			return s.audit.FindAuditEntries(r.Context(), f)
		})
		if err != nil {
			// Part of the body is sent: cut the connection so the client
			// sees a broken download, not a complete-looking partial one.
			s.logger.Warn("audit log export cut off", "err", err)
			panic(http.ErrAbortHandler)
		}
		return nil
	})
}

// writeAuditExport writes the entries and the pages after them to body.
func writeAuditExport(ctx context.Context, body io.Writer, format string, admin bool, entries []*link.AuditEntry, next string,
	more func(cursor string) ([]*link.AuditEntry, string, error)) error {
	bw := bufio.NewWriterSize(body, 32<<10)
	cw := wire.NewCSVWriter(bw)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if format == "csv" {
		if err := cw.Write(auditCSVHeader); err != nil {
			return err
		}
	}
	for {
		for _, e := range entries {
			out := newAuditEntryResponse(e, admin)
			if format == "jsonl" {
				if err := enc.Encode(&out); err != nil {
					return err
				}
				continue
			}
			changes, err := json.Marshal(out.Changes)
			if err != nil {
				return err
			}
			if err := cw.Write([]string{out.ID, out.Time, strings.Join(out.WorkspaceIDs, " "), e.Actor.Type, e.Actor.ID, e.Actor.Name,
				e.Action, e.Target.Type, e.Target.ID, e.Address, string(changes)}); err != nil {
				return err
			}
		}
		if next == "" {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if entries, next, err = more(next); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}
