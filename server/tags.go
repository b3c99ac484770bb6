package server

import (
	"net/http"
	"strings"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// Tags: /v1/tags lists the workspace's tags (those its links carry and
// those with a colour or description); /v1/tags/{name} reads, sets (PUT)
// and clears (DELETE) a tag's colour and description. The name is the
// rest of the path, percent-encoded: a tag may hold a slash.

func (s *Server) tagRoutes() {
	s.handle("GET", "/v1/tags", accessRead, s.handleListTags)
	s.handle("GET", "/v1/tags/*name", accessRead, s.handleGetTag)
	s.handle("PUT", "/v1/tags/*name", accessWrite, s.handlePutTag)
	s.handle("DELETE", "/v1/tags/*name", accessWrite, s.handleDeleteTag)
}

// tagName is the tag named by the rest of the path; ENOTFOUND for one
// that cannot be a tag.
func tagName(r *http.Request, c *caller) (string, error) {
	name := strings.TrimPrefix(c.params.ByName("name"), "/")
	if name == "" {
		return "", noTagRoute(r)
	}
	if msg := link.CheckTag(name); msg != "" || strings.TrimSpace(name) != name {
		return "", link.TagNotFound(name)
	}
	return name, nil
}

// noTagRoute is the answer of /v1/tags/, which names no tag: the 404 of
// a path the router does not know, whatever the method.
func noTagRoute(r *http.Request) error {
	return link.Errorf(link.ENOTFOUND, "no route for %s %s", r.Method, r.URL.Path)
}

type tagRequest struct {
	Color       *string `json:"color"`
	Description *string `json:"description"`
}

// handleListTags counts the tags of the workspace's links, which reads
// them all on PostgreSQL: costly work, as a search is.
func (s *Server) handleListTags(w http.ResponseWriter, r *http.Request, c *caller) error {
	release, err := s.admit(w, r, costlySearch)
	if err != nil {
		return err
	}
	defer release()
	var ts []*link.Tag
	if err := s.work(costlySearch, func() error {
		ts, err = s.tags.FindTags(r.Context(), c.workspace.ID)
		return err
	}); err != nil {
		return err
	}
	out := make([]wire.Tag, 0, len(ts))
	for _, t := range ts {
		out = append(out, wire.NewTag(t))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out, "colors": link.TagColors})
	return nil
}

func (s *Server) handleGetTag(w http.ResponseWriter, r *http.Request, c *caller) error {
	name, err := tagName(r, c)
	if err != nil {
		return err
	}
	t, err := s.tags.FindTag(r.Context(), c.workspace.ID, name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewTag(t))
	return nil
}

// handlePutTag sets a tag's colour and description: what the body leaves
// out (or sends null) is cleared, as a PUT replaces; both cleared forget
// the tag's own data (its links keep it).
func (s *Server) handlePutTag(w http.ResponseWriter, r *http.Request, c *caller) error {
	name := strings.TrimPrefix(c.params.ByName("name"), "/")
	if name == "" {
		return noTagRoute(r)
	}
	var in tagRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	t := &link.Tag{WorkspaceID: c.workspace.ID, Name: name}
	if in.Color != nil {
		t.Color = *in.Color
	}
	if in.Description != nil {
		t.Description = *in.Description
	}
	t.Normalize()
	if t.Name != name {
		return &link.Error{Code: link.EINVALID, Message: "name: a tag does not start or end with a space",
			Fields: []link.FieldError{{Field: "name", Message: "must not start or end with a space"}}}
	}
	if err := t.Validate(); err != nil {
		return err
	}
	if err := s.tags.PutTag(r.Context(), t); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.NewTag(t))
	return nil
}

func (s *Server) handleDeleteTag(w http.ResponseWriter, r *http.Request, c *caller) error {
	name, err := tagName(r, c)
	if err != nil {
		return err
	}
	if err := s.tags.DeleteTag(r.Context(), c.workspace.ID, name); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
