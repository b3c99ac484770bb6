package link

import (
	"context"
	"strings"
	"time"
)

// Plan is a workspace's plan; it sets the API rate limit.
type Plan string

// The plans.
const (
	PlanFree       Plan = "free"
	PlanPro        Plan = "pro"
	PlanEnterprise Plan = "enterprise"
)

// Valid reports whether p is a known plan.
func (p Plan) Valid() bool { return p == PlanFree || p == PlanPro || p == PlanEnterprise }

// Role is a user's role in a workspace.
type Role string

// The roles, from least to most.
const (
	RoleRead      Role = "read"
	RoleReadWrite Role = "read_write"
	RoleOwner     Role = "owner"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == RoleRead || r == RoleReadWrite || r == RoleOwner }

// Scope is what a credential may do in its workspace.
type Scope string

// The scopes. ScopeRead lists and gets; ScopeReadWrite adds create, update and delete.
const (
	ScopeRead      Scope = "read"
	ScopeReadWrite Scope = "read_write"
)

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return s == ScopeRead || s == ScopeReadWrite }

// Allows reports whether a credential of scope s may act with scope need.
func (s Scope) Allows(need Scope) bool {
	return s == ScopeReadWrite || need == ScopeRead && s == ScopeRead
}

// Scope maps a role onto the scope model: owners and read_write members write.
func (r Role) Scope() Scope {
	if r == RoleOwner || r == RoleReadWrite {
		return ScopeReadWrite
	}
	return ScopeRead
}

// Workspace holds links, keys and members; every object belongs to one.
type Workspace struct {
	ID        string
	Name      string
	Plan      Plan
	CreatedAt time.Time
	UpdatedAt time.Time
	// DataSince is the earliest time an imported link or click of the
	// workspace is dated, when that is before CreatedAt; zero otherwise.
	DataSince time.Time
	// ForwardPath and ForwardQuery are the defaults of the links created
	// in the workspace that do not say (link.Link's).
	ForwardPath  bool
	ForwardQuery bool
	// DestinationChecks turns on the background check of the workspace's
	// destinations (link_check.go); off by default.
	DestinationChecks bool
	// Pixels are the retargeting pixels that the links of the workspace
	// with Retargeting fire (pixels.go).
	Pixels Pixels
}

// AnalyticsSince returns the earliest time the workspace's analytics can
// hold clicks for, where the range "all" starts: its creation, or the
// earliest imported link or click before it. Every click of every link
// of the workspace is at or after it, so a link's clicks equal its
// analytics for range=all.
func (w *Workspace) AnalyticsSince() time.Time {
	if !w.DataSince.IsZero() && w.DataSince.Before(w.CreatedAt) {
		return w.DataSince
	}
	return w.CreatedAt
}

// MaxNameLength bounds names of workspaces and keys.
const MaxNameLength = 100

// DefaultMaxWorkspacesPerUser is workspaces.max_per_user's default: how
// many workspaces a user may own and still create one. Each workspace has
// its own rate budget, so without a bound one account could multiply its
// requests a minute at will.
const DefaultMaxWorkspacesPerUser = 10

// Validate checks a workspace.
func (w *Workspace) Validate() error {
	var v validation
	w.Name = strings.TrimSpace(w.Name)
	checkName(&v, "name", w.Name, MaxNameLength)
	if !w.Plan.Valid() {
		v.add("plan", "must be one of free, pro, enterprise")
	}
	w.Pixels.validate(&v)
	return v.err()
}

// WorkspaceUpdate holds the fields of a PATCH; nil means "not given".
type WorkspaceUpdate struct {
	Name              *string
	Plan              *Plan
	ForwardPath       *bool
	ForwardQuery      *bool
	DestinationChecks *bool
	// Pixels replaces the workspace's pixels (nil: kept).
	Pixels *Pixels
}

// Membership is a user's role in a workspace.
type Membership struct {
	Workspace *Workspace
	UserID    string
	Role      Role
	CreatedAt time.Time
}

// User is a person who logs in to the dashboard.
type User struct {
	ID    string
	Email string
	// PasswordHash is the slow hash of the password; never shown.
	PasswordHash []byte
	// Admin marks the instance admin, who manages plans and backups.
	Admin     bool
	CreatedAt time.Time
	// Name is how the user is shown to others; "" for users made before
	// names were kept.
	Name string
	// Disabled users cannot log in and their tokens stop at once.
	Disabled bool
	// TokenGeneration rises on every password change and "log out
	// everywhere"; a token issued under an older generation is refused.
	TokenGeneration uint64
}

// WorkspaceService keeps workspaces and memberships.
type WorkspaceService interface {
	// CreateWorkspace stores a validated workspace with ownerID as its
	// owner. ECONFLICT when the owner owns maxOwned workspaces already
	// (0: no bound), counted in the same transaction.
	CreateWorkspace(ctx context.Context, w *Workspace, ownerID string, maxOwned int) error
	// FindWorkspaceByID returns a workspace. ENOTFOUND.
	FindWorkspaceByID(ctx context.Context, id string) (*Workspace, error)
	// FindMemberships returns the user's workspaces with roles, oldest first.
	FindMemberships(ctx context.Context, userID string) ([]*Membership, error)
	// FindMembership returns the user's role in a workspace. ENOTFOUND if
	// the user is not a member.
	FindMembership(ctx context.Context, workspaceID, userID string) (*Membership, error)
	// UpdateWorkspace applies an update, validating the result. ENOTFOUND, EINVALID.
	UpdateWorkspace(ctx context.Context, id string, upd WorkspaceUpdate) (*Workspace, error)
}

// UserService keeps users.
type UserService interface {
	// FindUserByID returns a user. ENOTFOUND.
	FindUserByID(ctx context.Context, id string) (*User, error)
	// FindUserByEmail returns a user by e-mail, compared in normal form
	// (NormalizeEmail: ASCII letters in any case). ENOTFOUND.
	FindUserByEmail(ctx context.Context, email string) (*User, error)
	// Bootstrap creates the first user as instance admin and the workspace
	// ws with the user as owner, in one transaction. ECONFLICT if any user
	// exists already.
	Bootstrap(ctx context.Context, u *User, ws *Workspace) error
	// CountUsers returns the number of users.
	CountUsers(ctx context.Context) (int, error)
	// CreateUser stores a further user (not an admin unless u.Admin),
	// recording user.created; sets ID and CreatedAt. An empty
	// PasswordHash is a user without a password,
	// who signs in with single sign-on only. ECONFLICT if the e-mail is
	// taken; EINVALID for a bad e-mail.
	CreateUser(ctx context.Context, u *User) error
}

// AdminSetup sets up a fresh instance (auth.Setup): the setup page and the
// admin.* configuration both go through it.
type AdminSetup interface {
	// Bootstrap creates the instance admin with a hashed password and a
	// first workspace named name ("Default" when empty). EINVALID,
	// ECONFLICT once any user exists.
	Bootstrap(ctx context.Context, email, password, name string) (*User, error)
}
