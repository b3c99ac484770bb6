package link

import (
	"context"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// KeyState is where an API key is in its life.
type KeyState string

// The key states. Only KeyActive and KeyGrace authenticate.
const (
	KeyActive  KeyState = "active"
	KeyGrace   KeyState = "grace"
	KeyRevoked KeyState = "revoked"
	KeyExpired KeyState = "expired"
)

// Authenticates reports whether a key in state s may authenticate.
func (s KeyState) Authenticates() bool { return s == KeyActive || s == KeyGrace }

// APIKey is a workspace credential for scripts. The token itself is never
// stored; Hash is the SHA-256 of the whole token.
type APIKey struct {
	ID          string
	WorkspaceID string
	Name        string
	Scope       Scope
	Hash        []byte
	// Start is the token's prefix and first characters, to tell keys apart.
	Start     string
	CreatedAt time.Time
	ExpiresAt *time.Time
	RevokedAt *time.Time
	// GraceEndsAt and ReplacedBy are set when the key was rotated.
	GraceEndsAt *time.Time
	ReplacedBy  string
	// CreatedBy is the user or key that made the key (by creation or
	// rotation); zero for keys made before it was recorded.
	CreatedBy KeyCreator
	// KeepWhenCreatorDisabled, set by an owner, keeps the key working when
	// the user who made it (directly or through keys they made) is
	// disabled; otherwise such a key stops with its user.
	KeepWhenCreatorDisabled bool
	// LastUsedAt and RequestCount include uses not yet written to disk.
	LastUsedAt   *time.Time
	RequestCount int64
	// Resources, when not empty, limits the key to those kinds of the
	// workspace's records (KeyResources; sorted, each once): its scope
	// then applies to them alone. Empty: every kind, as keys had before.
	Resources []string
}

// The resources a key may be limited to: each names the API routes of
// one kind of record (see the server's route table).
const (
	ResourceLinks        = "links"         // links, their QR images, bulk creation, the simple and compatible APIs
	ResourceAnalytics    = "analytics"     // analytics, exports, the live click stream
	ResourceCampaigns    = "campaigns"     // campaigns
	ResourceDomains      = "domains"       // custom domains
	ResourceWebhooks     = "webhooks"      // webhooks and their deliveries
	ResourceQRCodes      = "qr_codes"      // saved QR code designs
	ResourceUTMTemplates = "utm_templates" // UTM templates
	ResourceKeys         = "keys"          // API keys
	ResourceMembers      = "members"       // members and invitations
	ResourceAudit        = "audit"         // the workspace's audit log
	ResourceImports      = "imports"       // imports from other shorteners
)

// KeyResources are the resources a key may be limited to, in order.
var KeyResources = []string{ResourceLinks, ResourceAnalytics, ResourceCampaigns, ResourceDomains, ResourceWebhooks,
	ResourceQRCodes, ResourceUTMTemplates, ResourceKeys, ResourceMembers, ResourceAudit, ResourceImports}

// Allows reports whether the key may reach resource at all (its scope
// says how).
func (k *APIKey) Allows(resource string) bool {
	return len(k.Resources) == 0 || slices.Contains(k.Resources, resource)
}

// ResourcesWithin reports whether a key limited to inner reaches no
// more than one limited to outer (empty: every resource).
func ResourcesWithin(inner, outer []string) bool {
	if len(outer) == 0 {
		return true
	}
	if len(inner) == 0 {
		return false
	}
	for _, r := range inner {
		if !slices.Contains(outer, r) {
			return false
		}
	}
	return true
}

// The kinds of KeyCreator.
const (
	CreatorUser = "user"
	CreatorKey  = "key"
)

// KeyCreator names who made a key: Type is CreatorUser or CreatorKey and ID
// the user's or key's ID. Zero means unknown.
type KeyCreator struct {
	Type string
	ID   string
}

// DefaultMaxKeysPerWorkspace is keys.max_per_workspace's default: how many
// keys of a workspace may be active or in grace at once.
const DefaultMaxKeysPerWorkspace = 100

// State returns the key's state at now. A revoked key stays revoked; a
// rotated key is in grace until its grace period ends and revoked after;
// an expired key is expired even during a grace period.
func (k *APIKey) State(now time.Time) KeyState {
	switch {
	case k.RevokedAt != nil:
		return KeyRevoked
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return KeyExpired
	case k.GraceEndsAt != nil && !now.Before(*k.GraceEndsAt):
		return KeyRevoked
	case k.GraceEndsAt != nil:
		return KeyGrace
	}
	return KeyActive
}

// Validate checks a new key's fields at now.
func (k *APIKey) Validate(now time.Time) error {
	var v validation
	k.Name = strings.TrimSpace(k.Name)
	checkName(&v, "name", k.Name, MaxNameLength)
	if !k.Scope.Valid() {
		v.add("scope", "must be read or read_write")
	}
	for _, r := range k.Resources {
		if !slices.Contains(KeyResources, r) {
			v.add("resources", "%q is not a resource; the resources are %s", r, strings.Join(KeyResources, ", "))
			break
		}
	}
	if len(k.Resources) > 0 {
		slices.Sort(k.Resources)
		k.Resources = slices.Compact(k.Resources)
	}
	if k.ExpiresAt != nil && !k.ExpiresAt.After(now) {
		v.add("expires_at", "must be in the future")
	}
	return v.err()
}

// KeyService keeps API keys.
type KeyService interface {
	// CreateKey stores a validated key; sets ID. ECONFLICT when the
	// workspace already has max keys active or in grace (max <= 0: no cap),
	// checked in the transaction that stores the key.
	CreateKey(ctx context.Context, k *APIKey, max int) error
	// FindKeyByID returns a key of the workspace with its usage. ENOTFOUND.
	FindKeyByID(ctx context.Context, workspaceID, id string) (*APIKey, error)
	// FindKeyByHash returns the key with the token hash, of any state. ENOTFOUND.
	FindKeyByHash(ctx context.Context, hash []byte) (*APIKey, error)
	// FindKeys returns the workspace's keys, newest first, with their usage.
	FindKeys(ctx context.Context, workspaceID string) ([]*APIKey, error)
	// RotateKey stores next (same name, scope and expiry as the old key) and
	// puts the old key in grace until graceEnds. Rotation may pass max, so
	// that every key can be rotated at the cap, but not twice max (max <= 0:
	// no cap). ENOTFOUND; ECONFLICT unless the old key is active, or at
	// twice max.
	RotateKey(ctx context.Context, workspaceID, id string, next *APIKey, graceEnds time.Time, max int) (*APIKey, error)
	// RevokeKey revokes a key at once. ENOTFOUND. Revoking a revoked key is a no-op.
	RevokeKey(ctx context.Context, workspaceID, id string) error
	// SetKeepWhenCreatorDisabled sets whether the key keeps working when
	// its creator is disabled, recording key.updated when that changes,
	// and returns the key. ENOTFOUND.
	SetKeepWhenCreatorDisabled(ctx context.Context, workspaceID, id string, keep bool) (*APIKey, error)
	// TouchKey counts one use of the key at the given time, in memory; the
	// counts are written in batches and merged into what Find returns.
	TouchKey(id string, at time.Time)
}

// CheckEmail returns what is wrong with an e-mail address, or "".
func CheckEmail(email string) string {
	if email == "" {
		return "is required"
	}
	if len(email) > 254 {
		return "must be at most 254 characters"
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || a.Name != "" {
		return "is not a valid e-mail address"
	}
	return ""
}

// MinPasswordLength is the shortest password accepted.
const MinPasswordLength = 10

// CheckPassword returns what is wrong with a new password, or "". The
// length counts characters, not bytes, and not the spaces at either end, so
// that neither accents nor padding make a short password long enough.
func CheckPassword(pw string) string {
	if utf8.RuneCountInString(strings.TrimSpace(pw)) < MinPasswordLength {
		return "must be at least 10 characters"
	}
	if len(pw) > 72 {
		return "must be at most 72 bytes"
	}
	return ""
}

// ValidateCredentials checks a new user's e-mail and password.
func ValidateCredentials(email, password string) error {
	var v validation
	if msg := CheckEmail(email); msg != "" {
		v.add("email", "%s", msg)
	}
	if msg := CheckPassword(password); msg != "" {
		v.add("password", "%s", msg)
	}
	return v.err()
}
