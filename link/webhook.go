package link

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The event types a webhook may subscribe to, besides campaign.updated.
const (
	EventLinkClicked = "link.clicked"
	EventLinkCreated = "link.created"
	EventLinkUpdated = "link.updated"
	EventLinkDeleted = "link.deleted"
	// EventLinkBroken and EventLinkFixed are sent when a link's
	// destination check turns broken, and ok again (link_check.go).
	EventLinkBroken = "link.broken"
	EventLinkFixed  = "link.fixed"
	// EventPing is sent only by POST /v1/webhooks/{id}/test.
	EventPing = "ping"
)

// WebhookCreatorRemoved is the DisabledReason of a webhook that linkbolt
// disabled because the member who made it (directly, or through keys they
// made) left or was removed from the workspace: the workspace's events
// would otherwise keep going to a receiver of someone it let go. Unlike a
// webhook disabled after failed deliveries, it queues no events meanwhile.
// Enabling it again takes a PATCH, like any enabling, by any member or
// key who may write (read_write), not only an owner.
const WebhookCreatorRemoved = "disabled when the member who made it left or was removed from the workspace; enable it again to keep sending it events"

// EventTypes lists the events a webhook may subscribe to.
var EventTypes = []string{EventLinkClicked, EventLinkCreated, EventLinkUpdated, EventLinkDeleted, EventLinkBroken, EventLinkFixed, EventCampaignUpdated}

// Webhook sends a workspace's events to a URL, signed with its secret.
type Webhook struct {
	ID          string
	WorkspaceID string
	URL         string
	Events      []string
	Enabled     bool
	Description string
	// Secret signs deliveries; PreviousSecret signs alongside it until
	// PreviousSecretExpiresAt after a roll.
	Secret                  string
	PreviousSecret          string
	PreviousSecretExpiresAt *time.Time
	// DisabledReason says why linkbolt disabled the webhook, if it did.
	DisabledReason string
	// CreatedBy names the user or key that made the webhook; zero for
	// webhooks made before linkbolt recorded it.
	CreatedBy KeyCreator
	// ConsecutiveFailures counts the failed attempts, of any of its
	// deliveries, since the last success; re-enabling resets it.
	ConsecutiveFailures int
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// MaxWebhookURLLength bounds a webhook's URL.
const MaxWebhookURLLength = 2048

// Normalize trims the input and removes duplicate events.
func (w *Webhook) Normalize() {
	w.URL = strings.TrimSpace(w.URL)
	w.Description = strings.TrimSpace(w.Description)
	seen := map[string]bool{}
	ev := w.Events[:0:0]
	for _, e := range w.Events {
		e = strings.TrimSpace(e)
		if !seen[e] {
			seen[e] = true
			ev = append(ev, e)
		}
	}
	w.Events = ev
}

// Validate checks a webhook's fields (the address it resolves to is
// checked apart, at creation and at every connection).
func (w *Webhook) Validate() error {
	var v validation
	if msg := CheckWebhookURL(w.URL); msg != "" {
		v.add("url", "%s", msg)
	}
	if len(w.Events) == 0 {
		v.add("events", "must name at least one of %s", strings.Join(EventTypes, ", "))
	}
	for _, e := range w.Events {
		if !slices.Contains(EventTypes, e) {
			v.add("events", "unknown event %q: use %s", e, strings.Join(EventTypes, ", "))
			break
		}
	}
	if len(w.Description) > 500 {
		v.add("description", "must be at most 500 characters")
	} else if msg := checkText(w.Description); msg != "" {
		v.add("description", "%s", msg)
	}
	return v.err()
}

// CheckWebhookURL returns what is wrong with a webhook URL, or "".
func CheckWebhookURL(raw string) string {
	if raw == "" {
		return "is required"
	}
	if len(raw) > MaxWebhookURLLength {
		return "must be at most 2048 characters"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return "must be an absolute http or https URL"
	}
	if u.User != nil {
		return "must not contain credentials (user@host)"
	}
	if u.Fragment != "" {
		return "must not have a fragment"
	}
	return ""
}

// WebhookUpdate holds the fields of a PATCH; nil means "not given".
type WebhookUpdate struct {
	URL         *string
	Events      *[]string
	Enabled     *bool
	Description *string
}

// Apply copies the given fields onto w. Enabling a webhook clears the
// reason it was disabled for.
func (u WebhookUpdate) Apply(w *Webhook) {
	if u.URL != nil {
		w.URL = *u.URL
	}
	if u.Events != nil {
		w.Events = slices.Clone(*u.Events)
	}
	if u.Enabled != nil {
		w.Enabled = *u.Enabled
		if w.Enabled {
			w.DisabledReason = ""
		}
	}
	if u.Description != nil {
		w.Description = *u.Description
	}
	w.Normalize()
}

// DeliveryStatus is where a delivery is.
type DeliveryStatus string

// The delivery statuses.
const (
	DeliveryPending   DeliveryStatus = "pending"   // not tried yet, or waiting for a retry
	DeliverySucceeded DeliveryStatus = "succeeded" // the receiver answered 2xx
	DeliveryFailed    DeliveryStatus = "failed"    // given up (24 h of retries, or the webhook was disabled)
)

// Delivery is one event on its way to one webhook, and its log.
type Delivery struct {
	ID            string // dlv_…, sent as Linkbolt-Delivery: receivers de-duplicate by it
	WebhookID     string
	WorkspaceID   string
	EventID       string
	EventType     string
	Payload       []byte // the JSON body, fixed when the event was written
	Status        DeliveryStatus
	Attempts      int
	ResponseCode  int
	Duration      time.Duration
	LastError     string
	NextAttemptAt *time.Time
	// QueuedAt is when the delivery last entered its webhook's queue: at
	// creation, or when it was retried by hand. Retries run for 24 h from it.
	QueuedAt  time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Attempt is the outcome of one try of a delivery.
type Attempt struct {
	At           time.Time
	ResponseCode int // 0 when no answer came
	Duration     time.Duration
	Error        string // "" for a 2xx answer
}

// AttemptRecord is a finished try of a pending delivery and its next
// step, as RecordAttempts takes them: done on success; a retry at Next;
// failed, and the webhook disabled with Disable as the reason, when
// Disable is not "".
type AttemptRecord struct {
	Delivery *Delivery
	Attempt  Attempt
	Next     *time.Time
	Disable  string
}

// EventEncoder is the wire format of webhook events (webhook.Encoder):
// the storage services call it inside the transaction of the change that
// causes an event, and keep what it returns as the body of the event's
// deliveries. It must not call back into them. Its errors are internal
// (EINTERNAL) and roll the change back.
type EventEncoder interface {
	// LinkData returns the data of a link.created, link.updated or
	// link.deleted event: the link (after the change; before it, for a
	// delete) as the API shows it.
	LinkData(l *Link) ([]byte, error)
	// CampaignData returns the data of a campaign.updated event: the
	// campaign after the change and each changed field's value before and
	// after.
	CampaignData(after *Campaign, changes map[string][2]string) ([]byte, error)
	// AppendClickData appends the data of a link.clicked event to b.
	AppendClickData(b []byte, c *ClickEvent) []byte
	// PingData returns the data of a ping.
	PingData() ([]byte, error)
	// AppendEvent appends the body of a delivery of ev to b: its ID, Type,
	// CreatedAt, WorkspaceID and Data (JSON; empty is null).
	AppendEvent(b []byte, ev *Event) []byte
}

// ClickEvent is what a link.clicked event tells of a click: its
// dimensions as analytics store them ("direct", "unknown" for missing
// values), never its address, user agent or visitor hash.
type ClickEvent struct {
	LinkID   string
	Time     time.Time
	Referrer string
	Country  string
	Device   string
	Browser  string
	OS       string
	Bot      bool
}

// Event returns what a link.clicked event (and the live click stream)
// tells of c, classified, with missing values as analytics store them: a
// direct visit's referrer is "direct", any other missing value "unknown".
func (c *Click) Event() ClickEvent {
	or := func(v, missing string) string {
		if v == "" {
			return missing
		}
		return v
	}
	return ClickEvent{LinkID: c.LinkID, Time: c.Time.UTC(), Referrer: or(c.Referrer, "direct"),
		Country: or(c.Country, "unknown"), Device: or(c.Device, "unknown"), Browser: or(c.Browser, "unknown"),
		OS: or(c.OS, "unknown"), Bot: c.Bot}
}

// WebhookService keeps webhooks and their deliveries (the outbox).
type WebhookService interface {
	CreateWebhook(ctx context.Context, w *Webhook) error
	FindWebhookByID(ctx context.Context, workspaceID, id string) (*Webhook, error)
	FindWebhooks(ctx context.Context, workspaceID string) ([]*Webhook, error)
	UpdateWebhook(ctx context.Context, workspaceID, id string, upd WebhookUpdate, validate func(*Webhook) error) (*Webhook, error)
	// RollSecret makes newSecret the signing secret and keeps the old one
	// signing until graceEnds.
	RollSecret(ctx context.Context, workspaceID, id, newSecret string, graceEnds time.Time) (*Webhook, error)
	DeleteWebhook(ctx context.Context, workspaceID, id string) error
	// FindDeliveries returns a webhook's deliveries, newest first.
	FindDeliveries(ctx context.Context, workspaceID, webhookID string, limit int) ([]*Delivery, error)
	// Ping queues a ping delivery to the webhook, behind its queue: its
	// delivery's EventID is the id in its body. ECONFLICT when the webhook
	// is disabled, ENOTFOUND.
	Ping(ctx context.Context, workspaceID, id string) (*Delivery, error)
	// RetryDelivery queues a finished delivery again, now.
	RetryDelivery(ctx context.Context, workspaceID, webhookID, deliveryID string) (*Delivery, error)

	// DueDeliveries returns, for each enabled webhook, the oldest pending
	// delivery when it is due at now: at most one per webhook, so each
	// webhook's deliveries go out in order.
	DueDeliveries(ctx context.Context, now time.Time, limit int) ([]*Delivery, error)
	// NextDeliveries returns the first (at most n) pending deliveries of a
	// webhook's queue, in order, up to the first that is not due at now:
	// none when the webhook is disabled or its head waits for a retry.
	NextDeliveries(ctx context.Context, webhookID string, now time.Time, n int) ([]*Delivery, error)
	// RecordAttempts writes the outcomes of tries and their next steps,
	// in order, in one transaction: done on success; a retry at Next; when
	// Disable is not "", the webhook disabled with Disable as the reason,
	// its delivery kept pending at the head of its queue (nothing of the
	// webhook is due until it is enabled again).
	RecordAttempts(ctx context.Context, rs []AttemptRecord) error
	// PruneDeliveries deletes finished deliveries older than before.
	PruneDeliveries(ctx context.Context, before time.Time) (int, error)
}

// OutboxCounter counts the webhook deliveries waiting to be sent or
// retried (storage.WebhookService), for the metrics: it reads a counter,
// never the data file, so a scrape costs nothing.
type OutboxCounter interface {
	// PendingDeliveries returns the deliveries queued and not yet
	// finished. It returns no error: 0 when the data file is closed.
	PendingDeliveries() int64
}

// WebhookTargetChecker checks where a webhook's URL leads when the webhook
// is saved (webhook.TargetGuard); the dispatcher checks again at every
// connection.
type WebhookTargetChecker interface {
	// CheckWebhookTarget returns why rawURL may not be a webhook's target
	// (its host is or resolves to a private address, or does not
	// resolve), in words a client may read, or nil.
	CheckWebhookTarget(ctx context.Context, rawURL string) error
}
