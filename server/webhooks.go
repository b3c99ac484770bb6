package server

import (
	"context"
	"crypto/rand"
	"net/http"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// webhookRoutes registers the routes of webhooks and their delivery log.
func (s *Server) webhookRoutes() {
	s.handle("GET", "/v1/webhooks", accessRead, s.handleListWebhooks)
	s.handle("POST", "/v1/webhooks", accessWrite, s.handleCreateWebhook)
	s.handle("GET", "/v1/webhooks/:id", accessRead, s.handleGetWebhook)
	s.handle("PATCH", "/v1/webhooks/:id", accessWrite, s.handleUpdateWebhook)
	s.handle("DELETE", "/v1/webhooks/:id", accessWrite, s.handleDeleteWebhook)
	s.handle("POST", "/v1/webhooks/:id/secret", accessWrite, s.handleRollWebhookSecret)
	s.handle("GET", "/v1/webhooks/:id/deliveries", accessRead, s.handleListDeliveries)
	s.handle("POST", "/v1/webhooks/:id/test", accessWrite, s.handleTestWebhook)
	s.handle("POST", "/v1/webhooks/:id/deliveries/:delivery/retry", accessWrite, s.handleRetryDelivery)
}

// secretGrace is how long a rolled secret keeps signing beside the new one.
const secretGrace = 24 * time.Hour

type webhookResponse struct {
	ID                      string        `json:"id"`
	URL                     string        `json:"url"`
	Events                  []string      `json:"events"`
	Enabled                 bool          `json:"enabled"`
	Description             *string       `json:"description"`
	DisabledReason          *string       `json:"disabled_reason"`
	SecretStart             string        `json:"secret_start"`
	PreviousSecretExpiresAt *string       `json:"previous_secret_expires_at"`
	CreatedAt               string        `json:"created_at"`
	UpdatedAt               string        `json:"updated_at"`
	CreatedBy               *namedCreator `json:"created_by"`
	// Secret is present only in the answers of create and of a roll.
	Secret string `json:"secret,omitempty"`
}

// namedCreator is the created_by of a webhook: who made it, with the
// user's e-mail or the key's name, so that an owner can tell a former
// member's webhooks (a member list no longer names them).
type namedCreator struct {
	Type string  `json:"type"`
	ID   string  `json:"id"`
	Name *string `json:"name"`
}

// creatorNames looks up the names of creators for one answer, each once.
type creatorNames struct {
	s     *Server
	ctx   context.Context
	ws    string
	names map[link.KeyCreator]*string
}

func (s *Server) creatorNames(ctx context.Context, workspaceID string) *creatorNames {
	return &creatorNames{s: s, ctx: ctx, ws: workspaceID, names: map[link.KeyCreator]*string{}}
}

// of returns c with its name, or nil for an unknown creator. A creator
// that cannot be read (deleted, or a read error) keeps its ID and no name:
// the answer is for telling webhooks apart.
func (n *creatorNames) of(c link.KeyCreator) *namedCreator {
	if c.Type == "" {
		return nil
	}
	name, ok := n.names[c]
	if !ok {
		switch c.Type {
		case link.CreatorUser:
			if u, err := n.s.users.FindUserByID(n.ctx, c.ID); err == nil {
				name = &u.Email
			}
		case link.CreatorKey:
			if k, err := n.s.keys.FindKeyByID(n.ctx, n.ws, c.ID); err == nil {
				name = &k.Name
			}
		}
		n.names[c] = name
	}
	return &namedCreator{Type: c.Type, ID: c.ID, Name: name}
}

func (s *Server) newWebhookResponse(names *creatorNames, w *link.Webhook) webhookResponse {
	out := webhookResponse{ID: w.ID, URL: w.URL, Events: w.Events, Enabled: w.Enabled,
		Description: optional(w.Description), DisabledReason: optional(w.DisabledReason),
		SecretStart: secretStart(w.Secret), CreatedAt: ts(w.CreatedAt), UpdatedAt: ts(w.UpdatedAt),
		CreatedBy: names.of(w.CreatedBy)}
	if w.PreviousSecretExpiresAt != nil && w.PreviousSecretExpiresAt.After(s.now()) {
		out.PreviousSecretExpiresAt = tsp(w.PreviousSecretExpiresAt)
	}
	if out.Events == nil {
		out.Events = []string{}
	}
	return out
}

func secretStart(secret string) string {
	if len(secret) > 10 {
		return secret[:10]
	}
	return secret
}

// newSecret returns a webhook signing secret: whsec_ and 130 random bits.
func newSecret() string { return "whsec_" + rand.Text() }

type webhookRequest struct {
	URL         *string   `json:"url"`
	Events      *[]string `json:"events"`
	Enabled     *bool     `json:"enabled"`
	Description *string   `json:"description"`
}

func (in webhookRequest) update() link.WebhookUpdate {
	return link.WebhookUpdate{URL: in.URL, Events: in.Events, Enabled: in.Enabled, Description: in.Description}
}

// checkTarget refuses a webhook URL whose host resolves to a loopback,
// private, link-local or other special address, unless the configuration
// allows them. The dispatcher checks again at every connection.
func (s *Server) checkTarget(r *http.Request, w *link.Webhook) error {
	if err := w.Validate(); err != nil {
		return err
	}
	if err := s.webhookTargets.CheckWebhookTarget(r.Context(), w.URL); err != nil {
		return &link.Error{Code: link.EINVALID, Message: "url: " + err.Error(),
			Fields: []link.FieldError{{Field: "url", Message: err.Error()}}}
	}
	return nil
}

func (s *Server) handleCreateWebhook(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in webhookRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	now := s.now()
	wh := &link.Webhook{WorkspaceID: c.workspace.ID, Enabled: true, Secret: newSecret(), CreatedAt: now, UpdatedAt: now,
		CreatedBy: c.creator()}
	in.update().Apply(wh)
	if err := s.checkTarget(r, wh); err != nil {
		return err
	}
	if err := s.webhooks.CreateWebhook(r.Context(), wh); err != nil {
		return err
	}
	out := s.newWebhookResponse(s.creatorNames(r.Context(), c.workspace.ID), wh)
	out.Secret = wh.Secret
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *Server) handleListWebhooks(w http.ResponseWriter, r *http.Request, c *caller) error {
	whs, err := s.webhooks.FindWebhooks(r.Context(), c.workspace.ID)
	if err != nil {
		return err
	}
	out := make([]webhookResponse, 0, len(whs))
	for _, wh := range whs {
		out = append(out, s.newWebhookResponse(s.creatorNames(r.Context(), c.workspace.ID), wh))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

func (s *Server) handleGetWebhook(w http.ResponseWriter, r *http.Request, c *caller) error {
	wh, err := s.webhooks.FindWebhookByID(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newWebhookResponse(s.creatorNames(r.Context(), c.workspace.ID), wh))
	return nil
}

func (s *Server) handleUpdateWebhook(w http.ResponseWriter, r *http.Request, c *caller) error {
	var in webhookRequest
	if err := s.decodeJSON(w, r, &in); err != nil {
		return err
	}
	wh, err := s.webhooks.UpdateWebhook(r.Context(), c.workspace.ID, c.params.ByName("id"), in.update(),
		func(wh *link.Webhook) error { return s.checkTarget(r, wh) })
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.newWebhookResponse(s.creatorNames(r.Context(), c.workspace.ID), wh))
	return nil
}

func (s *Server) handleDeleteWebhook(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := s.webhooks.DeleteWebhook(r.Context(), c.workspace.ID, c.params.ByName("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleRollWebhookSecret makes a new signing secret, shown once; the old
// one keeps signing beside it for 24 hours so receivers can switch.
func (s *Server) handleRollWebhookSecret(w http.ResponseWriter, r *http.Request, c *caller) error {
	secret := newSecret()
	wh, err := s.webhooks.RollSecret(r.Context(), c.workspace.ID, c.params.ByName("id"), secret, s.now().Add(secretGrace))
	if err != nil {
		return err
	}
	out := s.newWebhookResponse(s.creatorNames(r.Context(), c.workspace.ID), wh)
	out.Secret = secret
	writeJSON(w, http.StatusOK, out)
	return nil
}

type deliveryResponse struct {
	ID            string  `json:"id"`
	EventID       string  `json:"event_id"`
	EventType     string  `json:"event_type"`
	Status        string  `json:"status"`
	Attempts      int     `json:"attempts"`
	ResponseCode  *int    `json:"response_code"`
	DurationMS    int64   `json:"duration_ms"`
	LastError     *string `json:"last_error"`
	NextAttemptAt *string `json:"next_attempt_at"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
}

func newDeliveryResponse(d *link.Delivery) deliveryResponse {
	out := deliveryResponse{ID: d.ID, EventID: d.EventID, EventType: d.EventType, Status: string(d.Status),
		Attempts: d.Attempts, DurationMS: d.Duration.Milliseconds(), LastError: optional(d.LastError),
		CreatedAt: ts(d.CreatedAt), UpdatedAt: ts(d.UpdatedAt)}
	if d.ResponseCode != 0 {
		code := d.ResponseCode
		out.ResponseCode = &code
	}
	if d.Status == link.DeliveryPending {
		out.NextAttemptAt = tsp(d.NextAttemptAt)
	}
	return out
}

func (s *Server) handleListDeliveries(w http.ResponseWriter, r *http.Request, c *caller) error {
	limit, err := positiveParam(r.URL.Query().Get("limit"), "limit", 50, 500)
	if err != nil {
		return err
	}
	ds, err := s.webhooks.FindDeliveries(r.Context(), c.workspace.ID, c.params.ByName("id"), limit)
	if err != nil {
		return err
	}
	out := make([]deliveryResponse, 0, len(ds))
	for _, d := range ds {
		out = append(out, newDeliveryResponse(d))
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

// handleTestWebhook queues a ping to the webhook.
func (s *Server) handleTestWebhook(w http.ResponseWriter, r *http.Request, c *caller) error {
	d, err := s.webhooks.Ping(r.Context(), c.workspace.ID, c.params.ByName("id"))
	if err != nil {
		return err
	}
	if s.dispatcher != nil {
		s.dispatcher.Kick()
	}
	writeJSON(w, http.StatusAccepted, newDeliveryResponse(d))
	return nil
}

func (s *Server) handleRetryDelivery(w http.ResponseWriter, r *http.Request, c *caller) error {
	d, err := s.webhooks.RetryDelivery(r.Context(), c.workspace.ID, c.params.ByName("id"), c.params.ByName("delivery"))
	if err != nil {
		return err
	}
	if s.dispatcher != nil {
		s.dispatcher.Kick()
	}
	writeJSON(w, http.StatusAccepted, newDeliveryResponse(d))
	return nil
}
