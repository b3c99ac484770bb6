package server

import (
	"net/http"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// campaignResponse is a campaign as the API shows it, as campaign.updated
// events do.
type campaignResponse = wire.Campaign

func newCampaignResponse(c *link.Campaign) campaignResponse { return wire.NewCampaign(c) }

type campaignRequest struct {
	Name        *string `json:"name"`
	Status      *string `json:"status"`
	UTMSource   *string `json:"utm_source"`
	UTMMedium   *string `json:"utm_medium"`
	UTMCampaign *string `json:"utm_campaign"`
}

func (in campaignRequest) update() link.CampaignUpdate {
	u := link.CampaignUpdate{Name: in.Name, UTMSource: in.UTMSource, UTMMedium: in.UTMMedium, UTMCampaign: in.UTMCampaign}
	if in.Status != nil {
		st := link.CampaignStatus(*in.Status)
		u.Status = &st
	}
	return u
}

func (s *Server) handleListCampaigns(w http.ResponseWriter, r *http.Request, c *caller) error {
	cs, err := s.campaigns.FindCampaigns(r.Context(), c.workspace.ID)
	if err != nil {
		return err
	}
	out := make([]campaignResponse, 0, len(cs))
	for _, cmp := range cs {
		out = append(out, newCampaignResponse(cmp))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

func (s *Server) handleCreateCampaign(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in campaignRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	now := s.now()
	cmp := &link.Campaign{WorkspaceID: c.workspace.ID, CreatedAt: now, UpdatedAt: now}
	in.update().Apply(cmp)
	cmp.Normalize()
	if err := cmp.Validate(); err != nil {
		return err
	}
	if err := s.campaigns.CreateCampaign(r.Context(), cmp); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, newCampaignResponse(cmp))
	return nil
}

func (s *Server) handleGetCampaign(w http.ResponseWriter, r *http.Request, c *caller) error {
	cmp, err := s.campaigns.FindCampaignByID(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newCampaignResponse(cmp))
	return nil
}

func (s *Server) handleUpdateCampaign(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in campaignRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	cmp, err := s.campaigns.UpdateCampaign(r.Context(), c.workspace.ID, c.params.ByName("id"), in.update())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newCampaignResponse(cmp))
	return nil
}

func (s *Server) handleDeleteCampaign(w http.ResponseWriter, r *http.Request, c *caller) error {
	detach := false
	switch v := r.URL.Query().Get("detach"); v {
	case "", "false", "0":
	case "true", "1":
		detach = true
	default:
		return link.Errorf(link.EINVALIDREQUEST, "detach must be true or false, not %q", v)
	}
	if err := s.campaigns.DeleteCampaign(r.Context(), c.workspace.ID, c.params.ByName("id"), detach); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleCampaignAnalytics answers a campaign's analytics: the clicks of its
// links while they were in it.
func (s *Server) handleCampaignAnalytics(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := c.params.ByName("id")
	if _, err := s.campaigns.FindCampaignByID(r.Context(), c.workspace.ID, id); err != nil {
		return err
	}
	return s.serveStats(w, r, c, link.ScopeCampaign, id)
}
