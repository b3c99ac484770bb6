package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/storage"
)

var backupCommand = &command{
	name:     "backup",
	synopsis: "backup --out FILE [--config FILE] [--token TOKEN]",
	summary:  "write a consistent copy of the data file",
	about: `Write a consistent copy of the data file (storage.path) to FILE. When no
server holds the data file, it is copied directly and only read. When a
running server holds it, the copy is a hot backup through that server's
admin API (GET /v1/admin/backup at server.base_url), signed in with
--token, LINKBOLT_TOKEN, or admin.email and admin.password from the
configuration. The copy is written to a temporary file beside FILE and
renamed into place only when complete; FILE may not be the data file,
nor a directory, device or pipe.

On PostgreSQL (storage.postgres_url) there is no data file to copy: it
refuses, writing nothing, and names pg_dump, with which PostgreSQL backs
up its databases while linkbolt runs (see docs/operations.md).`,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		configPath := configFlag(fs)
		out := fs.String("out", "", "`FILE` to write the backup to (required)")
		token := tokenFlag(fs)
		return func(ctx context.Context, stdout, stderr io.Writer) error {
			return runBackup(ctx, *configPath, *out, *token, stdout, stderr)
		}
	},
}

// runBackup writes a consistent copy of the data file to out. When no
// server holds the file it copies it directly; when a running server holds
// it (the file is locked) it asks that server's admin API for the copy,
// logging in with token, or admin.email and admin.password.
func runBackup(ctx context.Context, configPath, out, token string, stdout, stderr io.Writer) error {
	if out == "" {
		return usageError{"--out FILE is required"}
	}
	cfg, err := config.Load(configPath)
	if err != nil {
		return err
	}
	if err := refuseOnPostgres("backup", cfg, ""); err != nil {
		return err
	}
	if err := statDataFile(cfg); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := refuseDataFile(out, cfg.Storage.Path); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := refuseSpecialFile(out); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if removed, err := storage.RemoveBackupLeftovers(filepath.Dir(out)); err != nil {
		fmt.Fprintln(stderr, "could not remove an earlier backup's leftovers:", err)
	} else if len(removed) > 0 {
		fmt.Fprintln(stderr, "removed what an interrupted backup left behind:", strings.Join(removed, ", "))
	}
	n, err := writeAtomically(out, func(w io.Writer) (int64, error) {
		n, err := storage.BackupFile(cfg.Storage.Path, w)
		if errors.Is(err, storage.ErrLocked) {
			fmt.Fprintln(stderr, "the data file is in use; asking the running server at", cfg.Server.BaseURL)
			return backupOverHTTP(ctx, cfg, token, w)
		}
		return n, err
	})
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %d bytes to %s\n", n, out)
	return nil
}

// refuseDataFile returns an error when out is the data file itself, or a
// lock file beside it, however it is spelled: the same path, a relative or
// absolute spelling, a path through "..", a symbolic link or a hard link.
// Renaming a copy onto the data file would swap a running server's file
// out from under it (its later writes would go to the unlinked old file)
// and leave the path unlocked for a second server.
func refuseDataFile(out, data string) error {
	outInfo, err := os.Stat(out)
	if err != nil {
		return nil // nothing there yet (or unreadable: the write will say)
	}
	for _, p := range append([]string{data}, dataSidecars(data)...) {
		if info, err := os.Stat(p); err == nil && os.SameFile(outInfo, info) {
			if p == data {
				return fmt.Errorf("--out %s is the data file itself (%s): write the backup to another file", out, data)
			}
			return fmt.Errorf("--out %s is the data file's lock file (%s): write the backup to another file", out, p)
		}
	}
	return nil
}

// refuseSpecialFile returns an error when out names something other than
// a regular file: a directory, a device such as /dev/null or /dev/stdout,
// a pipe or a socket. The copy is renamed into place, which would replace
// that very entry with a plain file (run as root, --out /dev/null would
// swap the system's /dev/null for a copy of the data) rather than write
// into it.
func refuseSpecialFile(out string) error {
	info, err := os.Stat(out)
	if err != nil || info.Mode().IsRegular() {
		return nil // nothing there yet (or unreadable: the write will say)
	}
	what := "a device, pipe or socket"
	if info.IsDir() {
		what = "a directory"
	}
	return fmt.Errorf("--out %s is %s, not a file: the backup is written to a new file and renamed into place, so name a file", out, what)
}

// dataSidecars are the files that may sit beside the data file for it.
// bbolt locks the data file itself and keeps none, but a backup must not
// land on one that packaging or another tool keeps.
func dataSidecars(data string) []string {
	return []string{data + "-lock", data + ".lock"}
}

// writeAtomically writes to a temporary file beside path and renames it
// into place only when everything was written and synced. The temporary
// file is locked while written, so RemoveBackupLeftovers of another backup
// leaves it alone, and removed on every failure; a crash leaves it to the
// next backup into the same directory (or the next server start).
func writeAtomically(path string, write func(io.Writer) (int64, error)) (int64, error) {
	f, err := storage.CreateBackupTemp(filepath.Dir(path))
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	n, err := write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	return n, os.Rename(f.Name(), path)
}

func backupOverHTTP(ctx context.Context, cfg *config.Config, token string, w io.Writer) (int64, error) {
	base := cfg.Server.BaseURL.String()
	token, err := serverToken(ctx, cfg, token, adminCredential)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/admin/backup", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("the server answered %s: %s", resp.Status, problemDetail(resp.Body))
	}
	n, err := io.Copy(w, resp.Body)
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = fmt.Errorf("the backup was cut short: %d of %d bytes", n, resp.ContentLength)
	}
	return n, err
}

// adminCredential is what --token takes for the admin API.
const adminCredential = "an instance admin's token from POST /v1/auth/login"

// serverToken returns token, the command's --token or LINKBOLT_TOKEN, or
// when it is empty a login token of admin.email and admin.password from
// the running server at server.base_url. credential says what --token
// may be, for the error when there is neither.
func serverToken(ctx context.Context, cfg *config.Config, token, credential string) (string, error) {
	if token != "" {
		return token, nil
	}
	if cfg.Admin.Email == "" {
		return "", fmt.Errorf("a server holds the data file: pass --token (%s) or set admin.email and admin.password", credential)
	}
	return login(ctx, cfg.Server.BaseURL.String(), cfg.Admin.Email, cfg.Admin.Password)
}

func login(ctx context.Context, base, email, password string) (string, error) {
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/auth/login", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("logging in as %s: %s: %s", email, resp.Status, problemDetail(resp.Body))
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		return "", err
	}
	return tok.Token, nil
}

func problemDetail(r io.Reader) string {
	var p struct {
		Detail string `json:"detail"`
	}
	b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	if json.Unmarshal(b, &p) == nil && p.Detail != "" {
		return p.Detail
	}
	return strings.TrimSpace(string(b))
}
