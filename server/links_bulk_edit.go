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

// bulkEditItems are the results of a bulk edit, one per ID: errs[i]'s
// problem, or what done adds for an item edited. It counts both; an
// internal error fails the whole request instead.
func bulkEditItems(errs []error, done func(i int, item *bulkItem)) (items []bulkItem, edited, failed int, err error) {
	items = make([]bulkItem, len(errs))
	for i, e := range errs {
		items[i].Index = i
		if e == nil {
			done(i, &items[i])
			edited++
			continue
		}
		code := link.ErrorCode(e)
		status, ok := codeStatus[code]
		if !ok || code == link.EINTERNAL {
			return nil, 0, 0, e
		}
		p := newProblem(e, code, status)
		items[i].Error = &p
		failed++
	}
	return items, edited, failed, nil
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
	if in.Data.ExternalID.Set && in.Data.ExternalID.Value != "" {
		return &link.Error{Code: link.EINVALID, Message: "data.external_id: a bulk update cannot set external IDs (each is a link's own); set them one by one",
			Fields: []link.FieldError{{Field: "data.external_id", Message: "cannot be set in bulk"}}}
	}
	upd, validate, err := s.linkUpdate(w, r, in.Data)
	if err != nil {
		return err
	}
	links, errs, err := s.links.UpdateLinks(r.Context(), c.workspace.ID, in.IDs, upd, validate)
	if err != nil {
		return err
	}
	if upd.DestinationURL != nil {
		var updated []*link.Link
		for _, l := range links {
			if l != nil {
				updated = append(updated, l)
			}
		}
		if err := s.updatedChecks(r.Context(), c.workspace, updated...); err != nil {
			return err
		}
	}
	items, done, failed, err := bulkEditItems(errs, func(i int, item *bulkItem) {
		lr := s.newLinkResponse(links[i])
		item.Link = &lr
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Data []bulkItem     `json:"data"`
		Meta bulkUpdateMeta `json:"meta"`
	}{items, bulkUpdateMeta{Updated: done, Failed: failed}})
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
	items, done, failed, err := bulkEditItems(errs, func(int, *bulkItem) {})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Data []bulkItem     `json:"data"`
		Meta bulkDeleteMeta `json:"meta"`
	}{items, bulkDeleteMeta{Deleted: done, Failed: failed}})
	return nil
}
