package server

import (
	"fmt"
	"net/http"

	"github.com/linkbolt/linkbolt/link"
)

// MaxBulkLinks is how many links one POST /v1/links/bulk may create.
const MaxBulkLinks = 1000

// MaxBulkPasswords is how many links of one bulk request may have a
// password: each is a slow hash (about 50 ms of a core), so a request of
// a thousand would hold the server for a minute.
const MaxBulkPasswords = 20

// maxBulkBody is the body size a bulk creation accepts at least (the
// server's max_body when larger): a thousand links of 4 KB each.
const maxBulkBody = 4 << 20

type bulkCreateRequest struct {
	Links []createLinkRequest `json:"links"`
}

// bulkItem is the result of one link of a bulk creation: the link, or the
// problem that kept it from being created.
type bulkItem struct {
	Index int           `json:"index"`
	Link  *linkResponse `json:"link,omitempty"`
	Error *problem      `json:"error,omitempty"`
}

type bulkMeta struct {
	Created int `json:"created"`
	Failed  int `json:"failed"`
}

type bulkResponse struct {
	Data []bulkItem `json:"data"`
	Meta bulkMeta   `json:"meta"`
}

// handleBulkCreateLinks creates up to MaxBulkLinks links in one
// transaction. Each link is checked as POST /v1/links checks it; the ones
// that pass are stored together, and the answer (200) reports each link in
// the order sent: the link, or the problem that refused it, which refuses
// that link alone. Only a malformed request (no links, too many, not
// JSON) or a failed write refuses them all.
func (s *Server) handleBulkCreateLinks(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in bulkCreateRequest
	// The links decoded are held until the answer is written, and the
	// room their body took in the body gate with them.
	held, err := s.decodeJSONHeld(w, r, &in, max(s.cfg.MaxBody, maxBulkBody), heldBulk)
	if err != nil {
		return err
	}
	defer held()
	if len(in.Links) == 0 {
		return link.Errorf(link.EINVALIDREQUEST, "links: send at least one link to create")
	}
	if len(in.Links) > MaxBulkLinks {
		return link.Errorf(link.EINVALIDREQUEST, "links: at most %d links a request, not %d: send them in several requests", MaxBulkLinks, len(in.Links))
	}
	items := make([]bulkItem, len(in.Links))
	fail := func(i int, err error) {
		code := link.ErrorCode(err)
		status, ok := codeStatus[code]
		if !ok || code == link.EINTERNAL {
			return
		}
		p := newProblem(err, code, status)
		items[i].Error = &p
	}
	var valid []*link.Link
	var at []int // the index in the request of each valid link
	domains := map[string]string{}
	templates := utmTemplateCache{}
	now := s.now()
	passwords := 0
	for i, req := range in.Links {
		items[i].Index = i
		if req.Password != nil {
			if passwords++; passwords > MaxBulkPasswords {
				msg := fmt.Sprintf("at most %d links of a bulk request may have a password (each is a slow hash); send the others in another request", MaxBulkPasswords)
				fail(i, &link.Error{Code: link.EINVALID, Message: "password: " + msg, Fields: []link.FieldError{{Field: "password", Message: msg}}})
				continue
			}
		}
		domain, ok := domains[req.Domain]
		if !ok {
			d, err := s.linkDomain(r.Context(), c.workspace.ID, req.Domain, false)
			if err != nil {
				if link.ErrorCode(err) == link.EINTERNAL {
					return err
				}
				fail(i, err)
				continue
			}
			domain, domains[req.Domain] = d, d
		}
		l := req.link(c.workspace, domain, now)
		if err := s.applyUTMTemplate(r.Context(), templates, req.UTMTemplateID, l); err != nil {
			if link.ErrorCode(err) == link.EINTERNAL {
				return err
			}
			fail(i, err)
			continue
		}
		if err := req.linkLimitsRequest.applyTo(l, now); err != nil {
			fail(i, err)
			continue
		}
		if err := s.setControls(w, r, l, req.linkControlsRequest); err != nil {
			// A password the costly-work gate had no slot to hash for
			// refuses the request, not the link: nothing is created, and
			// the whole request is worth retrying.
			if code := link.ErrorCode(err); code == link.EINTERNAL || code == codeBusy {
				return err
			}
			fail(i, err)
			continue
		}
		if err := s.checkNewLink(l); err != nil {
			fail(i, err)
			continue
		}
		valid = append(valid, l)
		at = append(at, i)
	}
	if len(valid) > 0 {
		errs, err := s.links.CreateLinks(r.Context(), c.workspace.ID, valid)
		if err != nil {
			return err
		}
		for j, l := range valid {
			if errs[j] != nil {
				fail(at[j], errs[j])
				continue
			}
			resp := s.newLinkResponse(l)
			items[at[j]].Link = &resp
		}
	}
	out := bulkResponse{Data: items}
	for _, it := range items {
		switch {
		case it.Link != nil:
			out.Meta.Created++
		case it.Error != nil:
			out.Meta.Failed++
		default:
			return fmt.Errorf("bulk create: no result for link %d", it.Index)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
