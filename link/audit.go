package link

import (
	"context"
	"time"
)

// The kinds of Actor.
const (
	ActorUser   = "user"   // a person signed in with a JWT (or trying to)
	ActorKey    = "key"    // an API key
	ActorSystem = "system" // linkbolt itself: the webhook dispatcher, a grace period ending
)

// Actor is who made a change the audit log records: a user or an API key
// by ID and name (a user's name is their e-mail address), or the system.
type Actor struct {
	Type string
	ID   string
	Name string
}

// SystemActor is the actor of changes linkbolt makes on its own.
var SystemActor = Actor{Type: ActorSystem}

// The actions the audit log records, as dotted names: the kind of object,
// then what happened to it. Every one is listed in the OpenAPI document
// (AuditEntry.action).
const (
	AuditLoginSucceeded    = "auth.login_succeeded"
	AuditLoginFailed       = "auth.login_failed"
	AuditLogout            = "auth.logout"
	AuditLogoutAll         = "auth.logout_all"
	AuditPasswordChanged   = "user.password_changed"
	AuditUserCreated       = "user.created"
	AuditUserDisabled      = "user.disabled"
	AuditUserEnabled       = "user.enabled"
	AuditUserRenamed       = "user.renamed"
	AuditKeyCreated        = "key.created"
	AuditKeyRotated        = "key.rotated"
	AuditKeyRevoked        = "key.revoked"
	AuditKeyGraceEnded     = "key.grace_ended"
	AuditKeyExpired        = "key.expired"
	AuditKeyUpdated        = "key.updated"
	AuditMemberInvited     = "member.invited"
	AuditMemberJoined      = "member.joined"
	AuditMemberRoleChanged = "member.role_changed"
	AuditMemberRemoved     = "member.removed"
	AuditMemberLeft        = "member.left"
	AuditInvitationRevoked = "invitation.revoked"
	AuditWebhookCreated    = "webhook.created"
	AuditWebhookSecretRoll = "webhook.secret_rolled"
	AuditWebhookDisabled   = "webhook.disabled"
	AuditWebhookEnabled    = "webhook.enabled"
	AuditWebhookUpdated    = "webhook.updated"
	AuditWebhookDeleted    = "webhook.deleted"
	AuditDomainAdded       = "domain.added"
	AuditDomainVerified    = "domain.verified"
	AuditDomainUnverified  = "domain.unverified"
	AuditDomainUpdated     = "domain.updated"
	AuditDomainRemoved     = "domain.removed"
	AuditWorkspaceCreated  = "workspace.created"
	AuditWorkspaceRenamed  = "workspace.renamed"
	AuditWorkspacePlan     = "workspace.plan_changed"
	AuditBackupDownloaded  = "backup.downloaded"
	AuditLinksImported     = "links.imported"
)

// AuditActions lists every action, in the order of the constants; the
// action filter accepts these only.
var AuditActions = []string{
	AuditLoginSucceeded, AuditLoginFailed, AuditLogout, AuditLogoutAll, AuditPasswordChanged, AuditUserCreated, AuditUserDisabled, AuditUserEnabled, AuditUserRenamed,
	AuditKeyCreated, AuditKeyRotated, AuditKeyRevoked, AuditKeyGraceEnded, AuditKeyExpired, AuditKeyUpdated,
	AuditMemberInvited, AuditMemberJoined, AuditMemberRoleChanged, AuditMemberRemoved, AuditMemberLeft, AuditInvitationRevoked,
	AuditWebhookCreated, AuditWebhookSecretRoll, AuditWebhookDisabled, AuditWebhookEnabled, AuditWebhookUpdated, AuditWebhookDeleted,
	AuditDomainAdded, AuditDomainVerified, AuditDomainUnverified, AuditDomainUpdated, AuditDomainRemoved,
	AuditWorkspaceCreated, AuditWorkspaceRenamed, AuditWorkspacePlan, AuditBackupDownloaded,
	AuditLinksImported,
}

// AuditTarget is the object an audit entry is about: Type is a kind of
// object ("key", "webhook", "domain", "workspace", "user", "instance") and
// ID its wire ID.
type AuditTarget struct {
	Type string
	ID   string
}

// Change is one changed field of an audited object: its value before and
// after, as text (a list is comma-separated, a time RFC 3339); nil before
// a creation, after a removal, or for an empty value. Never a secret.
type Change struct {
	Before *string
	After  *string
}

// AuditEntry is one recorded security-relevant change. WorkspaceIDs are
// the workspaces it belongs to: one for a change in a workspace, every
// workspace of the user for a sign-in, none for an instance-level entry (a
// failed login of an unknown e-mail, a backup).
type AuditEntry struct {
	ID           string
	WorkspaceIDs []string
	Time         time.Time
	Actor        Actor
	Action       string
	Target       AuditTarget
	// Address is the client address of the request, "" when the change
	// came from no request.
	Address string
	Changes map[string]Change
}

// AuditFilter selects audit entries. Empty fields match everything.
type AuditFilter struct {
	// WorkspaceID limits the entries to one workspace; with AllWorkspaces
	// unset and WorkspaceID "" only instance-level entries match.
	WorkspaceID   string
	AllWorkspaces bool
	// Actor, Action and Target match an actor's ID, an action, a target's ID.
	Actor, Action, Target string
	// Start and End bound the time, [Start, End); zero is unbounded.
	Start, End time.Time
	// Cursor continues a listing where the page before ended ("" starts);
	// Limit is the page size.
	Cursor string
	Limit  int
}

// MaxAuditPage is the largest page FindAuditEntries returns.
const MaxAuditPage = 500

// AuditService keeps the audit log. Changes record their entry through
// their own service, in the transaction of the change; RecordAudit is for
// actions that change nothing else (a login, a backup download).
type AuditService interface {
	// RecordAudit stores an entry for the workspaces named (none: the
	// instance), with the actor and address of ctx (see WithActor).
	RecordAudit(ctx context.Context, workspaceIDs []string, action string, target AuditTarget, changes map[string]Change) error
	// RecordUserAudit stores an entry of an action on a user's account in
	// every workspace of the user (the instance's when none), with the
	// actor and address of ctx.
	RecordUserAudit(ctx context.Context, userID, action string, target AuditTarget, changes map[string]Change) error
	// FindAuditEntries returns a page of matching entries, newest first,
	// and the cursor of the next page ("" at the end). EINVALIDREQUEST for
	// a malformed cursor.
	FindAuditEntries(ctx context.Context, f AuditFilter) ([]*AuditEntry, string, error)
	// PruneAudit deletes the entries older than before and returns how many.
	PruneAudit(ctx context.Context, before time.Time) (int, error)
}

type actorKey struct{}

type actorValue struct {
	actor   Actor
	address string
}

// WithActor returns ctx carrying the actor of a request and the client's
// address, which every audit entry recorded under ctx names.
func WithActor(ctx context.Context, a Actor, address string) context.Context {
	return context.WithValue(ctx, actorKey{}, actorValue{actor: a, address: address})
}

// ActorFrom returns the actor and address WithActor put in ctx; without
// one, the system actor and no address.
func ActorFrom(ctx context.Context) (Actor, string) {
	if v, ok := ctx.Value(actorKey{}).(actorValue); ok {
		return v.actor, v.address
	}
	return SystemActor, ""
}
