package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/linkbolt/linkbolt/auth"
	"github.com/linkbolt/linkbolt/internal/app"
	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// stdinKey holds, in a command's context, where --password-stdin reads
// (Run puts it there).
type stdinKey struct{}

// stdinOf is where --password-stdin reads for the command of ctx.
func stdinOf(ctx context.Context) io.Reader {
	if r, ok := ctx.Value(stdinKey{}).(io.Reader); ok {
		return r
	}
	return os.Stdin
}

// instance is what the admin commands (users, workspaces, keys, export)
// work on. On PostgreSQL (storage.postgres_url) store is the database
// itself, which any number of processes use at once: every change is made
// there directly, no server needed. On the bbolt file, when no server
// holds it, store is the data file itself and every change is made there.
// While a running server holds the file, store is a snapshot of it (a hot
// backup through the server's admin API, opened from a temporary
// directory) that the command reads, and api makes the changes through
// the server, which records them in its audit log.
type instance struct {
	store *link.Store
	api   *adminAPI // nil when changes go to the store
	dir   string    // the snapshot's temporary directory; "" otherwise
	// passwords hashes the passwords the commands set offline.
	passwords auth.Passwords
	// baseURL is server.base_url, where one-time password links lead.
	baseURL string
}

// statDataFile reports when cfg's data file is missing or cannot be
// read, saying how a new instance gets one.
func statDataFile(cfg *config.Config) error {
	_, err := os.Stat(cfg.Storage.Path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no data file at %s (storage.path): start linkbolt serve once to make one, or give --config with the instance's configuration", cfg.Storage.Path)
	}
	if err != nil {
		return fmt.Errorf("the data file: %w", err)
	}
	return nil
}

// runOffline runs op on the configuration of a command that works on the
// data file only while no server holds it (restore, compact), once the
// command's required file flag (flagUsage, "--out FILE") was given; on
// PostgreSQL it refuses (refuseOnPostgres). A running server in the way is
// said as such, why saying why the command does not go through it; other
// errors of op are prefixed with the command's name.
func runOffline(name, configPath, file, flagUsage, why string, op func(*config.Config) error) error {
	if file == "" {
		return usageError{flagUsage + " is required"}
	}
	cfg, err := config.Load(configPath)
	if err != nil {
		return err
	}
	if err := refuseOnPostgres(name, cfg, file); err != nil {
		return err
	}
	err = op(cfg)
	if errors.Is(err, storage.ErrLocked) {
		return fmt.Errorf("%s: %s is in use by a running linkbolt: stop it first (%s)", name, cfg.Storage.Path, why)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// openInstance opens the PostgreSQL database of cfg, or the data file of
// cfg, or a snapshot of it through the running server that holds it
// (signed in with token, else admin.email and admin.password).
func openInstance(ctx context.Context, cfg *config.Config, token string, stderr io.Writer) (*instance, error) {
	if cfg.Postgres() {
		store, err := openStore(ctx, cfg, "", stderr)
		if err != nil {
			return nil, err
		}
		return &instance{store: store}, nil
	}
	if err := statDataFile(cfg); err != nil {
		return nil, err
	}
	store, err := openStore(ctx, cfg, cfg.Storage.Path, stderr)
	if err == nil {
		return &instance{store: store}, nil
	}
	if !errors.Is(err, storage.ErrLocked) {
		return nil, err
	}
	fmt.Fprintln(stderr, "the data file is in use; working through the running server at", cfg.Server.BaseURL)
	api, err := newAdminAPI(ctx, cfg, token)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "linkbolt-snapshot-")
	if err != nil {
		return nil, err
	}
	in := &instance{api: api, dir: dir}
	path := filepath.Join(dir, "linkbolt.db")
	if err := api.snapshot(ctx, cfg, path); err != nil {
		in.close()
		return nil, err
	}
	if in.store, err = openStore(ctx, cfg, path, stderr); err != nil {
		in.close()
		return nil, fmt.Errorf("open the server's snapshot: %w", err)
	}
	return in, nil
}

// openStore opens the store of cfg for a command, as a server does
// (app.OpenStore): the PostgreSQL database of storage.postgres_url when it
// is set, else the bbolt file at path (the data file, or a snapshot of
// it), which fails with an error matching storage.ErrLocked while a
// running server holds it. Only warnings (a damaged header page) are
// logged, to stderr.
func openStore(ctx context.Context, cfg *config.Config, path string, stderr io.Writer) (*link.Store, error) {
	return app.OpenStore(ctx, cfg, path, warnLogger(stderr))
}

// warnLogger logs warnings and errors only, to w.
func warnLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// close closes the store, and removes the snapshot.
func (in *instance) close() error {
	var err error
	if in.store != nil {
		err = in.store.Data.Close()
	}
	if in.dir != "" {
		if rerr := os.RemoveAll(in.dir); err == nil {
			err = rerr
		}
	}
	return err
}

// withInstance opens the instance, runs f on it and closes it.
func withInstance(ctx context.Context, configPath, token string, stderr io.Writer, f func(context.Context, *instance) error) error {
	cfg, err := config.Load(configPath)
	if err != nil {
		return err
	}
	in, err := openInstance(ctx, cfg, token, stderr)
	if err != nil {
		return err
	}
	in.passwords = auth.Passwords{Cost: cfg.Auth.PasswordCost}
	in.baseURL = cfg.Server.BaseURL.String()
	ctx = link.WithActor(ctx, link.SystemActor, "")
	err = f(ctx, in)
	if cerr := in.close(); err == nil {
		err = cerr
	}
	return err
}

// adminFlags declares --config and --token, which every admin command
// takes.
func adminFlags(fs *flag.FlagSet) (configPath, token *string) {
	return configFlag(fs), tokenFlag(fs)
}

// instanceCommand declares --config and --token and returns the run of an
// admin command: check (when not nil) looks at the command's own flags
// before anything is opened, then f runs on the instance.
func instanceCommand(fs *flag.FlagSet, check func(context.Context) error, f func(ctx context.Context, in *instance, stdout io.Writer) error) func(context.Context, io.Writer, io.Writer) error {
	configPath, token := adminFlags(fs)
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		if check != nil {
			if err := check(ctx); err != nil {
				return err
			}
		}
		return withInstance(ctx, *configPath, *token, stderr, func(ctx context.Context, in *instance) error {
			return f(ctx, in, stdout)
		})
	}
}

// adminAPI is the admin API of the running server that holds the data
// file, signed in as an instance admin.
type adminAPI struct {
	base  string
	token string
}

func newAdminAPI(ctx context.Context, cfg *config.Config, token string) (*adminAPI, error) {
	token, err := serverToken(ctx, cfg, token, adminCredential)
	if err != nil {
		return nil, err
	}
	return &adminAPI{base: cfg.Server.BaseURL.String(), token: token}, nil
}

// snapshot writes a hot backup of the data file to path.
func (a *adminAPI) snapshot(ctx context.Context, cfg *config.Config, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = backupOverHTTP(ctx, cfg, a.token, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// call sends in (when not nil) as JSON and decodes the answer into out
// (when not nil); an answer other than 2xx is an error with the problem's
// detail.
func (a *adminAPI) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the server answered %s: %s", resp.Status, problemDetail(resp.Body))
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// newPassword returns a random password of 24 characters (144 bits).
func newPassword() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// readPasswordStdin reads a password from the first line of stdin.
func readPasswordStdin(ctx context.Context) (string, error) {
	b, err := io.ReadAll(io.LimitReader(stdinOf(ctx), 4096))
	if err != nil {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	pw, _, _ := strings.Cut(string(b), "\n")
	pw = strings.TrimSuffix(pw, "\r")
	if pw == "" {
		return "", usageError{"--password-stdin: stdin holds no password"}
	}
	return pw, nil
}

// table writes rows under a header, in aligned columns.
func table(w io.Writer, header string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ReplaceAll(header, " ", "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// day formats a time for a table; "-" for none.
func day(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}
