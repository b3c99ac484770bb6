package server

import (
	"net/http"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

type keyResponse struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Scope        string  `json:"scope"`
	State        string  `json:"state"`
	Start        string  `json:"start"`
	WorkspaceID  string  `json:"workspace_id"`
	CreatedAt    string  `json:"created_at"`
	ExpiresAt    *string `json:"expires_at"`
	LastUsedAt   *string `json:"last_used_at"`
	RequestCount int64   `json:"request_count"`
	RevokedAt    *string `json:"revoked_at"`
	GraceEndsAt  *string `json:"grace_ends_at"`
	ReplacedBy   *string `json:"replaced_by"`
	// Key is the token, present only in the answers of create and rotate.
	Key string `json:"key,omitempty"`
}

func (s *Server) newKeyResponse(k *link.APIKey) keyResponse {
	out := keyResponse{
		ID: k.ID, Name: k.Name, Scope: string(k.Scope), State: string(k.State(s.now())),
		Start: k.Start, WorkspaceID: k.WorkspaceID, CreatedAt: ts(k.CreatedAt),
		ExpiresAt: tsp(k.ExpiresAt), LastUsedAt: tsp(k.LastUsedAt), RequestCount: k.RequestCount,
		RevokedAt: tsp(k.RevokedAt), GraceEndsAt: tsp(k.GraceEndsAt),
	}
	if k.ReplacedBy != "" {
		out.ReplacedBy = &k.ReplacedBy
	}
	return out
}

func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request, c *caller) error {
	keys, err := s.keys.FindKeys(r.Context(), c.workspace.ID)
	if err != nil {
		return err
	}
	out := make([]keyResponse, 0, len(keys))
	for _, k := range keys {
		out = append(out, s.newKeyResponse(k))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

func (s *Server) handleGetKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	k, err := s.keys.FindKeyByID(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newKeyResponse(k))
	return nil
}

type createKeyRequest struct {
	Name      string     `json:"name"`
	Scope     string     `json:"scope"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// handleCreateKey mints a key and shows its token once. A key never
// creates a key of a wider scope than its own.
func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in createKeyRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	now := s.now()
	k := &link.APIKey{WorkspaceID: c.workspace.ID, Name: in.Name, Scope: link.Scope(in.Scope), CreatedAt: now}
	if in.Scope == "" {
		k.Scope = link.ScopeReadWrite
	}
	if in.ExpiresAt != nil {
		t := in.ExpiresAt.UTC()
		k.ExpiresAt = &t
	}
	if err := k.Validate(now); err != nil {
		return err
	}
	// The route needs read_write, the widest scope, so a key never mints a
	// key wider than its own: a read key is refused before it gets here.
	token, err := s.mintToken(k)
	if err != nil {
		return err
	}
	if err := s.keys.CreateKey(r.Context(), k); err != nil {
		return err
	}
	out := s.newKeyResponse(k)
	out.Key = token
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) mintToken(k *link.APIKey) (string, error) {
	token, hash, start, err := s.tokens.Generate()
	if err != nil {
		return "", err
	}
	k.Hash, k.Start = hash, start
	return token, nil
}

// handleRotateKey makes a new key with the old one's name, scope and expiry
// and leaves the old key working for the grace period.
func (s *Server) handleRotateKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	old, err := s.keys.FindKeyByID(ctx, c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	now := s.now()
	next := &link.APIKey{WorkspaceID: old.WorkspaceID, Name: old.Name, Scope: old.Scope,
		ExpiresAt: old.ExpiresAt, CreatedAt: now}
	token, err := s.mintToken(next)
	if err != nil {
		return err
	}
	if _, err := s.keys.RotateKey(ctx, c.workspace.ID, old.ID, next, now.Add(s.cfg.RotationGrace)); err != nil {
		return err
	}
	out := s.newKeyResponse(next)
	out.Key = token
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) handleRevokeKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.keys.RevokeKey(r.Context(), c.workspace.ID, c.params.ByName("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
