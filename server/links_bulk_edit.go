package server

import (
	"net/http"

	"github.com/linkbolt/linkbolt/link"
)

// Bulk edits: POST /v1/links/bulk-update applies one change to many links
// of the workspace, POST /v1/links/bulk-delete removes many; each in one
// transaction, with a result for each link in the order sent, as the bulk
// creation answers.

type bulkUpdateRequest struct {
	IDs  []string          `json:"ids"`
	Data updateLinkRequest `json:"data"`
}

type bulkIDsRequest struct {
	IDs []string `json:"ids"`
}

type bulkUpdateMeta struct {
	Updated int `json:"updated"`
	Failed  int `json:"failed"`
}

type bulkDeleteMeta struct {
	Deleted int `json:"deleted"`
	Failed  int `json:"failed"`
}

// checkBulkIDs refuses a request without IDs or with more than
// MaxBulkLinks.
func checkBulkIDs(ids []string) error {
	if len(ids) == 0 {
		return link.Errorf(link.EINVALIDREQUEST, "ids: send the IDs of at least one link")
	}
	if len(ids) > MaxBulkLinks {
		return link.Errorf(link.EINVALIDREQUEST, "ids: at most %d links a request, not %d: send them in several requests", MaxBulkLinks, len(ids))
	}
	return nil
}

// itemProblem is the problem of one link of a bulk edit (nil for an
// internal error, which fails the whole request instead).
func itemProblem(err error) *problem {
	code := link.ErrorCode(err)
	status, ok := codeStatus[code]
	if !ok || code == link.EINTERNAL {
		return nil
	}
	p := newProblem(err, code, status)
	return &p
}

func (s *Server) handleBulkUpdateLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in bulkUpdateRequest
	held, err := s.decodeJSONHeld(w, r, &in, max(s.cfg.MaxBody, maxBulkBody), heldBulk)
	if err != nil {
		return err
	}
	defer held()
	if err := checkBulkIDs(in.IDs); err != nil {
		return err
	}
	if in.Data.Alias != nil {
		return &link.Error{Code: link.EINVALID, Message: "data.alias: a bulk update cannot change aliases (each is a link's own); change them one by one",
			Fields: []link.FieldError{{Field: "data.alias", Message: "cannot be changed in bulk"}}}
	}
	upd, validate, err := s.linkUpdate(w, r, in.Data)
	if err != nil {
		return err
	}
	links, errs, err := s.links.UpdateLinks(r.Context(), c.workspace.ID, in.IDs, upd, validate)
	if err != nil {
		return err
	}
	out := struct {
		Data []bulkItem     `json:"data"`
		Meta bulkUpdateMeta `json:"meta"`
	}{Data: make([]bulkItem, len(in.IDs))}
	for i := range in.IDs {
		out.Data[i].Index = i
		if errs[i] != nil {
			p := itemProblem(errs[i])
			if p == nil {
				return errs[i]
			}
			out.Data[i].Error = p
			out.Meta.Failed++
			continue
		}
		lr := s.newLinkResponse(links[i])
		out.Data[i].Link = &lr
		out.Meta.Updated++
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) handleBulkDeleteLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in bulkIDsRequest
	held, err := s.decodeJSONHeld(w, r, &in, max(s.cfg.MaxBody, maxBulkBody), heldBulk)
	if err != nil {
		return err
	}
	defer held()
	if err := checkBulkIDs(in.IDs); err != nil {
		return err
	}
	errs, err := s.links.DeleteLinks(r.Context(), c.workspace.ID, in.IDs)
	if err != nil {
		return err
	}
	out := struct {
		Data []bulkItem     `json:"data"`
		Meta bulkDeleteMeta `json:"meta"`
	}{Data: make([]bulkItem, len(in.IDs))}
	for i := range in.IDs {
		out.Data[i].Index = i
		if errs[i] != nil {
			p := itemProblem(errs[i])
			if p == nil {
				return errs[i]
			}
			out.Data[i].Error = p
			out.Meta.Failed++
			continue
		}
		out.Meta.Deleted++
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
