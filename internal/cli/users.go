package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/server"
)

const onlineNote = `

On PostgreSQL (storage.postgres_url) it works on the database directly,
with or without servers running on it, and no --token is needed; a change
is in the audit log as the system's. On the bbolt data file (storage.path)
it works on the file offline; while a running server holds the file, it
reads a hot backup taken through that server's admin API and makes any
change through that API, signed in with --token, LINKBOLT_TOKEN, or
admin.email and admin.password.`

var usersListCommand = &command{
	name:     "users list",
	synopsis: "users list [--config FILE] [--token TOKEN]",
	summary:  "list the instance's users",
	about:    "List every user of the instance: ID, e-mail, name, admin, disabled." + onlineNote,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		return instanceCommand(fs, nil, func(ctx context.Context, in *instance, stdout io.Writer) error {
			users, err := in.store.Accounts.ListUsers(ctx)
			if err != nil {
				return err
			}
			rows := make([][]string, 0, len(users))
			for _, u := range users {
				rows = append(rows, []string{u.ID, u.Email, orDash(u.Name), yesNo(u.Admin), yesNo(u.Disabled), day(&u.CreatedAt)})
			}
			return table(stdout, "ID EMAIL NAME ADMIN DISABLED CREATED", rows)
		})
	},
}

var usersCreateCommand = &command{
	name:     "users create",
	synopsis: "users create --email EMAIL [--name NAME] [--admin] [--password-stdin] [--config FILE] [--token TOKEN]",
	summary:  "create a user; prints a new password once",
	about: `Create a user. Without --password-stdin a random password is made and
printed once: hand it on, and the user changes it (POST /v1/me/password or
the dashboard's account page). With --password-stdin the password is the
first line of stdin, so it stays out of the shell's history. --admin makes
an instance admin.` + onlineNote,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		email := fs.String("email", "", "the user's `EMAIL` (required)")
		name := fs.String("name", "", "the user's `NAME`")
		admin := fs.Bool("admin", false, "make the user an instance admin")
		fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of stdin instead of making one")
		var pw string
		var made bool
		check := func(ctx context.Context) (err error) {
			if *email == "" {
				return usageError{"--email EMAIL is required"}
			}
			pw, made, err = choosePassword(ctx, *fromStdin)
			return err
		}
		return instanceCommand(fs, check, func(ctx context.Context, in *instance, stdout io.Writer) error {
			u, err := createUser(ctx, in, link.NormalizeEmail(*email), strings.TrimSpace(*name), pw, *admin)
			if err != nil {
				return err
			}
			role := "user"
			if u.Admin {
				role = "instance admin"
			}
			fmt.Fprintf(stdout, "created %s %s (%s)\n", role, u.Email, u.ID)
			if made {
				fmt.Fprintf(stdout, "password: %s\n(shown once: hand it on; they change it when they sign in)\n", pw)
			}
			return nil
		})
	},
}

var usersDisableCommand = &command{
	name:     "users disable",
	synopsis: "users disable --user EMAIL|ID [--config FILE] [--token TOKEN]",
	summary:  "disable a user and end their sessions",
	about: `Disable a user: they can no longer sign in, every token they hold ends at
once, and the API keys they made stop unless an owner keeps them. The only
enabled instance admin cannot be disabled: nobody would be left to undo it.` + onlineNote,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		ref := fs.String("user", "", "the user's `EMAIL or ID` (required)")
		check := func(context.Context) error {
			if *ref == "" {
				return usageError{"--user EMAIL|ID is required"}
			}
			return nil
		}
		return instanceCommand(fs, check, func(ctx context.Context, in *instance, stdout io.Writer) error {
			u, err := disableUser(ctx, in, *ref)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "disabled %s (%s); their sessions have ended\n", u.Email, u.ID)
			return nil
		})
	},
}

var usersResetPasswordCommand = &command{
	name:     "users reset-password",
	synopsis: "users reset-password --user EMAIL|ID [--password-stdin | --setup-link] [--config FILE] [--token TOKEN]",
	summary:  "give a user a new password, or a link to choose one; printed once",
	about: `Give a user a new password and end every session they hold. Without
--password-stdin a random password is made and printed once; with it, the
password is the first line of stdin. With --setup-link the password is left
as it is and a one-time link is printed instead (server.base_url +
/auth/reset-password?token=…, valid for 24 hours, replacing any earlier
link of the user): the user opens it and chooses a password, which ends
their sessions then.` + onlineNote,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		ref := fs.String("user", "", "the user's `EMAIL or ID` (required)")
		fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of stdin instead of making one")
		setupLink := fs.Bool("setup-link", false, "print a one-time link with which the user chooses a password")
		var pw string
		var made bool
		check := func(ctx context.Context) (err error) {
			if *ref == "" {
				return usageError{"--user EMAIL|ID is required"}
			}
			if *setupLink && *fromStdin {
				return usageError{"give --password-stdin or --setup-link, not both"}
			}
			if *setupLink {
				return nil
			}
			pw, made, err = choosePassword(ctx, *fromStdin)
			return err
		}
		return instanceCommand(fs, check, func(ctx context.Context, in *instance, stdout io.Writer) error {
			if *setupLink {
				return printPasswordLink(ctx, in, *ref, stdout)
			}
			u, err := resetPassword(ctx, in, *ref, pw)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "new password for %s (%s); their sessions have ended\n", u.Email, u.ID)
			if made {
				fmt.Fprintf(stdout, "password: %s\n(shown once: hand it on; they change it when they sign in)\n", pw)
			}
			return nil
		})
	},
}

// choosePassword returns the password from stdin, or a new random one
// (made true).
func choosePassword(ctx context.Context, fromStdin bool) (pw string, made bool, err error) {
	if !fromStdin {
		return newPassword(), true, nil
	}
	if pw, err = readPasswordStdin(ctx); err != nil {
		return "", false, err
	}
	if msg := auth.CheckPassword(pw); msg != "" {
		return "", false, fmt.Errorf("the password %s", msg)
	}
	return pw, false, nil
}

// findUser finds a user by e-mail (when ref has an @) or ID.
func findUser(ctx context.Context, store *link.Store, ref string) (*link.User, error) {
	users := store.Users
	if strings.Contains(ref, "@") {
		return users.FindUserByEmail(ctx, link.NormalizeEmail(ref))
	}
	return users.FindUserByID(ctx, ref)
}

// adminUserRequest is the body of POST /v1/admin/users.
type adminUserRequest struct {
	Email    string `json:"email"`
	Name     string `json:"name"`
	Password string `json:"password"`
	Admin    bool   `json:"admin"`
}

// apiUser is a user as the API answers it.
type apiUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Admin bool   `json:"admin"`
}

func createUser(ctx context.Context, in *instance, email, name, pw string, admin bool) (*link.User, error) {
	if in.api != nil {
		var out apiUser
		err := in.api.call(ctx, "POST", "/v1/admin/users", adminUserRequest{Email: email, Name: name, Password: pw, Admin: admin}, &out)
		return &link.User{ID: out.ID, Email: out.Email, Admin: out.Admin}, err
	}
	if msg := link.CheckUserName(name); name != "" && msg != "" {
		return nil, fmt.Errorf("--name %s", msg)
	}
	hash, err := in.passwords.Hash(pw)
	if err != nil {
		return nil, err
	}
	u := &link.User{Email: email, Name: name, PasswordHash: hash, Admin: admin}
	return u, in.store.Users.CreateUser(ctx, u)
}

func disableUser(ctx context.Context, in *instance, ref string) (*link.User, error) {
	u, err := findUser(ctx, in.store, ref)
	if err != nil {
		return nil, err
	}
	if u.Admin && !u.Disabled {
		users, err := in.store.Accounts.ListUsers(ctx)
		if err != nil {
			return nil, err
		}
		admins := 0
		for _, o := range users {
			if o.Admin && !o.Disabled {
				admins++
			}
		}
		if admins == 1 {
			return nil, fmt.Errorf("%s is the only enabled instance admin: nobody would be left to enable them again (create another admin first)", u.Email)
		}
	}
	if in.api != nil {
		return u, in.api.call(ctx, "PATCH", "/v1/users/"+u.ID, map[string]bool{"disabled": true}, nil)
	}
	disabled := true
	return in.store.Accounts.UpdateUser(ctx, u.ID, link.UserUpdate{Disabled: &disabled, EndTokens: true})
}

func resetPassword(ctx context.Context, in *instance, ref, pw string) (*link.User, error) {
	u, err := findUser(ctx, in.store, ref)
	if err != nil {
		return nil, err
	}
	if in.api != nil {
		return u, in.api.call(ctx, "POST", "/v1/admin/users/"+u.ID+"/password", map[string]string{"password": pw}, nil)
	}
	hash, err := in.passwords.Hash(pw)
	if err != nil {
		return nil, err
	}
	return in.store.Accounts.UpdateUser(ctx, u.ID, link.UserUpdate{PasswordHash: hash, EndTokens: true})
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printPasswordLink makes a one-time link for the user ref to choose a
// password and prints it.
func printPasswordLink(ctx context.Context, in *instance, ref string, stdout io.Writer) error {
	u, err := findUser(ctx, in.store, ref)
	if err != nil {
		return err
	}
	var out struct {
		URL       string    `json:"url"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if in.api != nil {
		err = in.api.call(ctx, "POST", "/v1/admin/users/"+u.ID+"/password-link", nil, &out)
	} else {
		token, hash := server.NewPasswordLinkToken()
		out.URL, out.ExpiresAt = server.PasswordLinkURL(in.baseURL, token), time.Now().Add(server.PasswordLinkTTL)
		err = in.store.Accounts.CreatePasswordReset(ctx, u.ID, hash, out.ExpiresAt)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "one-time link for %s (%s) to choose a password, valid until %s:\n%s\n(shown once; their current password works until the link is used)\n",
		u.Email, u.ID, out.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"), out.URL)
	return nil
}
