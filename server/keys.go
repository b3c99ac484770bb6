package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// creator names the user or key that made a key.
type creator struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

type keyResponse struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Scope        string   `json:"scope"`
	State        string   `json:"state"`
	Start        string   `json:"start"`
	WorkspaceID  string   `json:"workspace_id"`
	CreatedAt    string   `json:"created_at"`
	ExpiresAt    *string  `json:"expires_at"`
	LastUsedAt   *string  `json:"last_used_at"`
	RequestCount int64    `json:"request_count"`
	RevokedAt    *string  `json:"revoked_at"`
	GraceEndsAt  *string  `json:"grace_ends_at"`
	ReplacedBy   *string  `json:"replaced_by"`
	CreatedBy    *creator `json:"created_by"`
	// KeepWhenCreatorDisabled and CreatorDisabled: see keyScope.
	KeepWhenCreatorDisabled bool `json:"keep_when_creator_disabled"`
	CreatorDisabled         bool `json:"creator_disabled"`
	// Resources limits the key; null: every resource.
	Resources []string `json:"resources"`
	// Key is the token, present only in the answers of create and rotate.
	Key string `json:"key,omitempty"`
}

func (s *Server) newKeyResponse(k *link.APIKey) keyResponse { return s.keyResponseIn(k, nil) }

// keyResponseIn is newKeyResponse reading creators through memo (see
// creatorMemo; nil: none).
func (s *Server) keyResponseIn(k *link.APIKey, memo *creatorMemo) keyResponse {
	out := keyResponse{
		ID: k.ID, Name: k.Name, Scope: string(k.Scope), State: string(k.State(s.now())),
		Start: k.Start, WorkspaceID: k.WorkspaceID, CreatedAt: ts(k.CreatedAt),
		ExpiresAt: tsp(k.ExpiresAt), LastUsedAt: tsp(k.LastUsedAt), RequestCount: k.RequestCount,
		RevokedAt: tsp(k.RevokedAt), GraceEndsAt: tsp(k.GraceEndsAt),
	}
	if k.ReplacedBy != "" {
		out.ReplacedBy = &k.ReplacedBy
	}
	if k.CreatedBy.Type != "" {
		out.CreatedBy = &creator{Type: k.CreatedBy.Type, ID: k.CreatedBy.ID}
	}
	out.KeepWhenCreatorDisabled, out.CreatorDisabled = k.KeepWhenCreatorDisabled, s.creatorDisabled(k, memo)
	if len(k.Resources) > 0 {
		out.Resources = k.Resources
	}
	return out
}

func (s *Server) handleListKeys(w http.ResponseWriter, r *http.Request, c *caller) error {
	keys, err := s.keys.FindKeys(r.Context(), c.workspace.ID)
	if err != nil {
		return err
	}
	out := make([]keyResponse, 0, len(keys))
	memo := newCreatorMemo(keys)
	for _, k := range keys {
		out = append(out, s.keyResponseIn(k, memo))
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
	// Resources limits the key; absent, null or empty: every resource
	// (of a limited key's own, the key that makes it).
	Resources []string `json:"resources"`
}

// handleCreateKey mints a key and shows its token once. A key never mints
// a key of a wider scope or a later expiry than its own, and a key in
// grace mints none; a user is bound by their role only.
func (s *Server) handleCreateKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in createKeyRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	now := s.now()
	if err := refuseGraceKey(c, now, "create keys"); err != nil {
		return err
	}
	k := &link.APIKey{WorkspaceID: c.workspace.ID, Name: in.Name, Scope: link.Scope(in.Scope),
		CreatedAt: now, CreatedBy: c.creator()}
	if in.Scope == "" {
		k.Scope = link.ScopeReadWrite
	}
	if in.ExpiresAt != nil {
		t := in.ExpiresAt.UTC()
		k.ExpiresAt = &t
	}
	k.Resources = in.Resources
	if len(k.Resources) == 0 && c.key != nil {
		k.Resources = slices.Clone(c.key.Resources) // a limited key makes keys as limited
	}
	if err := k.Validate(now); err != nil {
		return err
	}
	if err := checkMintedByKey(c, k); err != nil {
		return err
	}
	if err := s.checkChainDepth(r.Context(), c, k); err != nil {
		return err
	}
	token, err := s.mintToken(k)
	if err != nil {
		return err
	}
	if err := s.keys.CreateKey(r.Context(), k, s.cfg.MaxKeysPerWorkspace); err != nil {
		return err
	}
	out := s.newKeyResponse(k)
	out.Key = token
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// checkChainDepth refuses (403) a key k that the caller's API key would
// make or rotate past the maxCreatorChain keys that the walk to the member
// it acts for reaches, since such a key could not be used (creatorTooDeep).
func (s *Server) checkChainDepth(ctx context.Context, c *caller, k *link.APIKey) error {
	if c.key == nil {
		return nil
	}
	if stop, _, err := s.keyCreatorStop(ctx, k, nil); err != nil {
		return err
	} else if stop == creatorTooDeep {
		return link.Errorf(link.EFORBIDDEN, "this API key was minted through %d keys, each by the one before, the most allowed: create or rotate the key signed in, or with a key made closer to a person", maxCreatorChain-1)
	}
	return nil
}

// creator names the caller as the maker of a key.
func (c *caller) creator() link.KeyCreator {
	if c.key != nil {
		return link.KeyCreator{Type: link.CreatorKey, ID: c.key.ID}
	}
	return link.KeyCreator{Type: link.CreatorUser, ID: c.user.ID}
}

// refuseGraceKey answers 403 when the caller is an API key in its grace
// period: whoever holds an old, possibly leaked, key must not use it to
// make keys that outlive it or to manage its replacement.
func refuseGraceKey(c *caller, now time.Time, what string) error {
	if c.key == nil || c.key.State(now) != link.KeyGrace {
		return nil
	}
	return link.Errorf(link.EFORBIDDEN, "this API key was rotated and is in its grace period until %s: it still works for everything else but cannot %s; use its replacement %s",
		ts(*c.key.GraceEndsAt), what, c.key.ReplacedBy)
}

// checkMintedByKey holds a key made by an API key to its maker's bounds:
// no wider scope (403) and no later expiry (422 on expires_at; an expiring
// key cannot mint a key that never expires, and an omitted expires_at is
// refused rather than filled in, so that nobody gets a shorter key than
// they asked for without knowing).
func checkMintedByKey(c *caller, k *link.APIKey) error {
	if c.key == nil {
		return nil
	}
	if !c.key.Scope.Allows(k.Scope) {
		return link.Errorf(link.EFORBIDDEN, "this API key has the %s scope; it cannot create a key with the %s scope", c.key.Scope, k.Scope)
	}
	if !link.ResourcesWithin(k.Resources, c.key.Resources) {
		return link.Errorf(link.EFORBIDDEN, "this API key is limited to %s; it cannot create a key that reaches more (resources: %s)",
			strings.Join(c.key.Resources, ", "), strings.Join(k.Resources, ", "))
	}
	parent := c.key.ExpiresAt
	if parent == nil {
		return nil
	}
	msg := ""
	switch {
	case k.ExpiresAt == nil:
		msg = "is required: this API key expires at " + ts(*parent) + " and cannot create a key that never expires; give a time no later than that"
	case k.ExpiresAt.After(*parent):
		msg = "must be no later than " + ts(*parent) + ", when the API key creating it expires"
	default:
		return nil
	}
	return &link.Error{Code: link.EINVALID, Message: "expires_at " + msg,
		Fields: []link.FieldError{{Field: "expires_at", Message: msg}}}
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
// and leaves the old key working for the grace period. A key in grace
// rotates nothing (not even its replacement), and an API key cannot rotate
// a key that outlives it, since the new token would.
func (s *Server) handleRotateKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	ctx := r.Context()
	now := s.now()
	if err := refuseGraceKey(c, now, "rotate keys"); err != nil {
		return err
	}
	old, err := s.keys.FindKeyByID(ctx, c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	if c.key != nil && outlives(old, c.key) {
		return link.Errorf(link.EFORBIDDEN, "this API key expires at %s and cannot rotate key %s, which expires later or never: its replacement would outlive this key",
			ts(*c.key.ExpiresAt), old.ID)
	}
	if err := checkKeyWithin(c, old, "rotate"); err != nil {
		return err
	}
	next := &link.APIKey{WorkspaceID: old.WorkspaceID, Name: old.Name, Scope: old.Scope,
		ExpiresAt: old.ExpiresAt, CreatedAt: now, CreatedBy: c.creator(), Resources: old.Resources}
	if err := s.checkChainDepth(ctx, c, next); err != nil {
		return err
	}
	token, err := s.mintToken(next)
	if err != nil {
		return err
	}
	if _, err := s.keys.RotateKey(ctx, c.workspace.ID, old.ID, next, now.Add(s.cfg.RotationGrace), s.cfg.MaxKeysPerWorkspace); err != nil {
		return err
	}
	out := s.newKeyResponse(next)
	out.Key = token
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// checkKeyWithin answers 403 when the caller is an API key limited to
// fewer resources than key k, which it would act on (what): a limited key
// manages only keys that reach no more than it does.
func checkKeyWithin(c *caller, k *link.APIKey, what string) error {
	if c.key == nil || link.ResourcesWithin(k.Resources, c.key.Resources) {
		return nil
	}
	reach := "every resource"
	if len(k.Resources) > 0 {
		reach = strings.Join(k.Resources, ", ")
	}
	return link.Errorf(link.EFORBIDDEN, "this API key is limited to %s and cannot %s key %s, which reaches %s",
		strings.Join(c.key.Resources, ", "), what, k.ID, reach)
}

// outlives reports whether key k expires later than key by, or never
// while by does.
func outlives(k, by *link.APIKey) bool {
	if by.ExpiresAt == nil {
		return false
	}
	return k.ExpiresAt == nil || k.ExpiresAt.After(*by.ExpiresAt)
}

// handleRevokeKey revokes a key at once. A key in grace may revoke only
// itself: a leaked old key must not revoke its replacement (or any other
// key) and lock the owner out.
func (s *Server) handleRevokeKey(w http.ResponseWriter, r *http.Request, c *caller) error {
	id := c.params.ByName("id")
	if c.key != nil && id != c.key.ID {
		if err := refuseGraceKey(c, s.now(), "revoke keys other than itself"); err != nil {
			return err
		}
		if len(c.key.Resources) > 0 {
			k, err := s.keys.FindKeyByID(r.Context(), c.workspace.ID, id)
			if err != nil {
				return err
			}
			if err := checkKeyWithin(c, k, "revoke"); err != nil {
				return err
			}
		}
	}
	if err := s.keys.RevokeKey(r.Context(), c.workspace.ID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
