package storage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.UserService = (*UserService)(nil)

// UserService keeps users in bbolt. E-mail addresses are unique without
// regard to case.
type UserService struct{ db *DB }

// NewUserService returns the user service of db.
func NewUserService(db *DB) *UserService { return &UserService{db: db} }

type userRecord struct {
	Email        string    `json:"email"`
	PasswordHash []byte    `json:"password_hash"`
	Admin        bool      `json:"admin,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	Name         string    `json:"name,omitempty"`
	Disabled     bool      `json:"disabled,omitempty"`
	// TokenGeneration rises with each password change and log-out
	// everywhere (see auth.Sessions).
	TokenGeneration uint64 `json:"token_generation,omitempty"`
}

func (r *userRecord) user(ids *idCodec, id uint64) *link.User {
	return &link.User{
		ID:              ids.formatID(prefixUser, id),
		Email:           r.Email,
		PasswordHash:    cloneBytes(r.PasswordHash),
		Admin:           r.Admin,
		CreatedAt:       r.CreatedAt,
		Name:            r.Name,
		Disabled:        r.Disabled,
		TokenGeneration: r.TokenGeneration,
	}
}

// emailKey is the users.email key of an address: its normal form, so
// that two different addresses never share a key (see link.NormalizeEmail).
func emailKey(email string) []byte { return []byte(link.NormalizeEmail(email)) }

// FindUserByID returns a user. ENOTFOUND.
func (s *UserService) FindUserByID(ctx context.Context, id string) (*link.User, error) {
	uid, ok := s.db.ids.parseID(prefixUser, id)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "user %q not found", id)
	}
	var u *link.User
	err := s.db.db.View(func(tx *bolt.Tx) error {
		rec, err := findUser(tx, uid)
		if err != nil {
			return err
		}
		u = rec.user(s.db.ids, uid)
		return nil
	})
	return u, err
}

// FindUserByEmail returns a user by e-mail, ASCII letters in any case
// (link.NormalizeEmail). ENOTFOUND.
func (s *UserService) FindUserByEmail(ctx context.Context, email string) (*link.User, error) {
	var u *link.User
	err := s.db.db.View(func(tx *bolt.Tx) error {
		idb := tx.Bucket(bucketUsersEmail).Get(emailKey(email))
		if idb == nil {
			return link.Errorf(link.ENOTFOUND, "no user with e-mail %q", email)
		}
		uid := btoi(idb)
		rec, err := findUser(tx, uid)
		if err != nil {
			return err
		}
		u = rec.user(s.db.ids, uid)
		return nil
	})
	return u, err
}

// CountUsers returns the number of users.
func (s *UserService) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := s.db.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketUsers).Stats().KeyN
		return nil
	})
	return n, err
}

// Bootstrap creates the first user as instance admin and the workspace ws
// with the user as owner, in one transaction; sets their IDs and times.
// ECONFLICT if any user exists already; EINVALID for a bad e-mail or
// workspace.
func (s *UserService) Bootstrap(ctx context.Context, u *link.User, ws *link.Workspace) error {
	if msg := link.CheckEmail(u.Email); msg != "" {
		return &link.Error{Code: link.EINVALID, Message: "email: " + msg, Fields: []link.FieldError{{Field: "email", Message: msg}}}
	}
	w := *ws
	if err := w.Validate(); err != nil {
		return err
	}
	now := s.db.now()
	var uid, wid uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		if k, _ := tx.Bucket(bucketUsers).Cursor().First(); k != nil {
			return link.Errorf(link.ECONFLICT, "linkbolt is already set up: a user exists")
		}
		var err error
		uid, err = createUser(tx, &userRecord{Email: u.Email, PasswordHash: u.PasswordHash, Admin: true, CreatedAt: now})
		if err != nil {
			return err
		}
		if wid, err = createWorkspace(tx, &workspaceRecord{Name: w.Name, Plan: w.Plan, CreatedAt: now, UpdatedAt: now}, uid); err != nil {
			return err
		}
		// The set-up itself is audited, the system its actor: nobody is
		// signed in yet.
		id := s.db.ids.formatID(prefixUser, uid)
		if err := s.db.recordAudit(ctx, tx, wid, link.AuditUserCreated, link.AuditTarget{Type: "user", ID: id},
			link.AuditChanges("email", nil, u.Email, "admin", nil, "true", "via", nil, "setup")); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditWorkspaceCreated, workspaceTarget(s.db.ids, wid),
			link.AuditChanges("name", nil, w.Name, "plan", nil, string(w.Plan)))
	})
	if err != nil {
		return err
	}
	u.ID, u.Admin, u.CreatedAt = s.db.ids.formatID(prefixUser, uid), true, now
	w.ID, w.CreatedAt, w.UpdatedAt = s.db.ids.formatID(prefixWorkspace, wid), now, now
	*ws = w
	return nil
}

// CreateUser stores a further user (not an admin unless u.Admin), recording
// user.created; sets ID and CreatedAt. ECONFLICT if the e-mail is taken;
// EINVALID for a bad e-mail or name (a name is optional here).
func (s *UserService) CreateUser(ctx context.Context, u *link.User) error {
	if msg := link.CheckEmail(u.Email); msg != "" {
		return &link.Error{Code: link.EINVALID, Message: "email: " + msg, Fields: []link.FieldError{{Field: "email", Message: msg}}}
	}
	u.Name = strings.TrimSpace(u.Name)
	if msg := link.CheckUserName(u.Name); u.Name != "" && msg != "" {
		return &link.Error{Code: link.EINVALID, Message: "name: " + msg, Fields: []link.FieldError{{Field: "name", Message: msg}}}
	}
	now := s.db.now()
	var uid uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		var err error
		rec := &userRecord{Email: u.Email, PasswordHash: u.PasswordHash, Admin: u.Admin, CreatedAt: now, Name: u.Name}
		if uid, err = createUser(tx, rec); err != nil {
			return err
		}
		return s.recordCreated(ctx, tx, uid, rec)
	})
	if err != nil {
		return err
	}
	u.ID, u.CreatedAt = s.db.ids.formatID(prefixUser, uid), now
	return nil
}

// recordCreated records user.created for a user made by CreateUser: by
// the instance admin (via admin), or, for a user without a password, at
// their first single sign-on (via oidc), when the person is their own
// actor: ctx names them by e-mail only, having had no account yet. The
// entry is the instance's, as the new user is in no workspace.
func (s *UserService) recordCreated(ctx context.Context, tx *bolt.Tx, uid uint64, rec *userRecord) error {
	via := "admin"
	if len(rec.PasswordHash) == 0 {
		via = "oidc"
	}
	id := s.db.ids.formatID(prefixUser, uid)
	if actor, addr := link.ActorFrom(ctx); actor.Type == link.ActorUser && actor.ID == "" {
		ctx = link.WithActor(ctx, link.Actor{Type: link.ActorUser, ID: id, Name: rec.Email}, addr)
	}
	return s.db.recordUserAudit(ctx, tx, uid, link.AuditUserCreated, link.AuditTarget{Type: "user", ID: id},
		link.AuditChanges("email", nil, rec.Email, "name", nil, rec.Name, "admin", nil, fmt.Sprint(rec.Admin), "via", nil, via))
}

func findUser(tx *bolt.Tx, id uint64) (*userRecord, error) {
	var rec userRecord
	if ok, err := getJSON(tx.Bucket(bucketUsers), itob(id), &rec); err != nil {
		return nil, err
	} else if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "user %q not found", idsOf(tx).formatID(prefixUser, id))
	}
	return &rec, nil
}

func createUser(tx *bolt.Tx, rec *userRecord) (uint64, error) {
	idx := tx.Bucket(bucketUsersEmail)
	ekey := emailKey(rec.Email)
	if idx.Get(ekey) != nil {
		return 0, link.Errorf(link.ECONFLICT, "a user with e-mail %q exists already", rec.Email)
	}
	users := tx.Bucket(bucketUsers)
	id, err := nextID(users)
	if err != nil {
		return 0, err
	}
	if err := putJSON(users, itob(id), rec); err != nil {
		return 0, err
	}
	if err := idx.Put(ekey, itob(id)); err != nil {
		return 0, fmt.Errorf("index user e-mail: %w", err)
	}
	return id, nil
}
