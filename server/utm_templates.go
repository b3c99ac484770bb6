package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// UTM templates: /v1/utm-templates, and utm_template_id on the creation of
// a link (alone or in bulk).

func (s *Server) utmTemplateRoutes() {
	s.handle("GET", "/v1/utm-templates", accessRead, s.handleListUTMTemplates)
	s.handle("POST", "/v1/utm-templates", accessWrite, s.handleCreateUTMTemplate)
	s.handle("GET", "/v1/utm-templates/:id", accessRead, s.handleGetUTMTemplate)
	s.handle("PATCH", "/v1/utm-templates/:id", accessWrite, s.handleUpdateUTMTemplate)
	s.handle("DELETE", "/v1/utm-templates/:id", accessWrite, s.handleDeleteUTMTemplate)
}

type utmTemplateRequest struct {
	Name        *string `json:"name"`
	UTMSource   *string `json:"utm_source"`
	UTMMedium   *string `json:"utm_medium"`
	UTMCampaign *string `json:"utm_campaign"`
}

func (in utmTemplateRequest) update() link.UTMTemplateUpdate {
	return link.UTMTemplateUpdate{Name: in.Name, UTMSource: in.UTMSource, UTMMedium: in.UTMMedium, UTMCampaign: in.UTMCampaign}
}

func (s *Server) handleListUTMTemplates(w http.ResponseWriter, r *http.Request, c *caller) error {
	ts, err := s.utmTemplates.FindUTMTemplates(r.Context(), c.workspace.ID)
	if err != nil {
		return err
	}
	out := make([]wire.UTMTemplate, 0, len(ts))
	for _, t := range ts {
		out = append(out, wire.NewUTMTemplate(t))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

func (s *Server) handleCreateUTMTemplate(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in utmTemplateRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	t := &link.UTMTemplate{WorkspaceID: c.workspace.ID}
	in.update().Apply(t)
	t.Normalize()
	if err := t.Validate(); err != nil {
		return err
	}
	if err := s.utmTemplates.CreateUTMTemplate(r.Context(), t); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.NewUTMTemplate(t))
	return nil
}

func (s *Server) handleGetUTMTemplate(w http.ResponseWriter, r *http.Request, c *caller) error {
	t, err := s.utmTemplates.FindUTMTemplateByID(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewUTMTemplate(t))
	return nil
}

func (s *Server) handleUpdateUTMTemplate(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in utmTemplateRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	t, err := s.utmTemplates.UpdateUTMTemplate(r.Context(), c.workspace.ID, c.params.ByName("id"), in.update())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewUTMTemplate(t))
	return nil
}

func (s *Server) handleDeleteUTMTemplate(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.utmTemplates.DeleteUTMTemplate(r.Context(), c.workspace.ID, c.params.ByName("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// utmTemplateCache holds the templates the links of one request name,
// read once each (nil: a template not found).
type utmTemplateCache map[string]*link.UTMTemplate

// applyUTMTemplate gives l the values of the workspace's template id for
// the UTM fields l leaves empty (nothing for id ""). EINVALID (field
// utm_template_id) for a template the workspace does not have.
func (s *Server) applyUTMTemplate(ctx context.Context, cache utmTemplateCache, id string, l *link.Link) error {
	if id == "" {
		return nil
	}
	t, ok := cache[id]
	if !ok {
		var err error
		t, err = s.utmTemplates.FindUTMTemplateByID(ctx, l.WorkspaceID, id)
		if isNotFound(err) {
			t = nil
		} else if err != nil {
			return err
		}
		if cache != nil {
			cache[id] = t
		}
	}
	if t == nil {
		const msg = "not found in this workspace"
		return &link.Error{Code: link.EINVALID, Message: "utm_template_id: UTM template " + strconv.Quote(id) + " " + msg,
			Fields: []link.FieldError{{Field: "utm_template_id", Message: msg}}}
	}
	t.Apply(l)
	return nil
}
