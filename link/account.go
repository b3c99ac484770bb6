package link

import (
	"context"
	"strings"
	"time"
)

// MaxUserNameLength bounds a user's name.
const MaxUserNameLength = 100

// CheckUserName returns what is wrong with a user's name, or "". A name is
// required, at most MaxUserNameLength characters, with no control
// characters.
func CheckUserName(name string) string {
	var v validation
	checkName(&v, "name", strings.TrimSpace(name), MaxUserNameLength)
	if len(v.fields) > 0 {
		return v.fields[0].Message
	}
	return ""
}

// UserUpdate holds the changes to a user; nil and false mean "not given".
type UserUpdate struct {
	Name *string
	// PasswordHash, when set, replaces the slow hash of the password.
	PasswordHash []byte
	Disabled     *bool
	// EndTokens raises the user's token generation, so that every token
	// issued before the update is refused. A password change sets it.
	EndTokens bool
}

// UserSession is what authentication needs of a user on every request,
// kept in memory (auth.Sessions) so that checking it reads no disk.
type UserSession struct {
	UserID          string
	TokenGeneration uint64
	Disabled        bool
}

// RevokedToken is a logged-out JWT, named by its ID (jti), kept until the
// token would expire anyway.
type RevokedToken struct {
	ID        string
	ExpiresAt time.Time
}

// AccountService keeps what the instance admin and each user change about
// accounts, and the state that ends tokens early.
type AccountService interface {
	// ListUsers returns every user, oldest first.
	ListUsers(ctx context.Context) ([]*User, error)
	// CreateUser stores a further user with a hashed password (never an
	// admin), recording user.created; sets ID and CreatedAt. ECONFLICT if
	// the e-mail is taken;
	// EINVALID for a bad e-mail or name.
	CreateUser(ctx context.Context, u *User) error
	// UpdateUser applies upd to a user in one transaction, with an audit
	// entry for each change (user.renamed, user.password_changed,
	// user.disabled, user.enabled, or auth.logout_all for EndTokens
	// alone), and returns the user as stored. ENOTFOUND, EINVALID.
	UpdateUser(ctx context.Context, id string, upd UserUpdate) (*User, error)
	// LoadSessions returns the token generation and disabled flag of every
	// user whose sessions were ever ended or who is disabled (a user it
	// leaves out is at generation 0 and enabled), and the revoked tokens
	// that have not expired at now.
	LoadSessions(ctx context.Context, now time.Time) ([]UserSession, []RevokedToken, error)
	// RevokeToken records a logged-out token until it expires, with an
	// auth.logout entry for the user of ctx, and forgets the revoked
	// tokens that expired before now.
	RevokeToken(ctx context.Context, t RevokedToken, now time.Time) error
}
