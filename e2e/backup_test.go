package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/storage"
)

// runBinary runs the linkbolt binary in dir with env added to the
// environment and returns its exit code, stdout and stderr.
func runBinary(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("run linkbolt %v: %v", args, err)
	return 0, "", ""
}

// childEnv is the environment that points a linkbolt command at the
// child's data file and server.
func childEnv(p *child, data string) []string {
	return []string{"LINKBOLT_STORAGE_PATH=" + data, "LINKBOLT_SERVER_BASE_URL=http://" + p.addr,
		"LINKBOLT_ADMIN_EMAIL=admin@example.com", "LINKBOLT_ADMIN_PASSWORD=a long password"}
}

// TestProcessBackupOntoDataFile reproduces the attack of a backup written
// onto the live data file, spelled every way that names the same file,
// while a server holds it: each is refused with a clear message, the
// server keeps its file and every acknowledged write, and a second server
// still cannot open the path.
func TestProcessBackupOntoDataFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "linkbolt.db")
	p := startBoltChild(t, dir, "50ms")
	c := p.client()
	key, id, _ := setupLink(c)
	ids := []string{id}
	before, err := os.Stat(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, filepath.Join(dir, "symlink.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(data, filepath.Join(dir, "hardlink.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.Symlink(dir, filepath.Join(other, "datadir")); err != nil {
		t.Fatal(err)
	}
	lock := data + "-lock"
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, cwd, data, out, want string
	}{
		{"the same path", dir, data, data, "is the data file itself"},
		{"a symbolic link", dir, data, filepath.Join(dir, "symlink.db"), "is the data file itself"},
		{"a hard link", dir, data, filepath.Join(dir, "hardlink.db"), "is the data file itself"},
		{"a path through ..", dir, data, filepath.Join(dir, "sub") + "/../linkbolt.db", "is the data file itself"},
		{"a relative out, an absolute data path", dir, data, "linkbolt.db", "is the data file itself"},
		{"an absolute out, a relative data path", dir, "./sub/../linkbolt.db", data, "is the data file itself"},
		{"through a symlinked directory", other, data, "datadir/linkbolt.db", "is the data file itself"},
		{"the lock file beside it", dir, data, lock, "lock file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := append(childEnv(p, tc.data), "LINKBOLT_STORAGE_PATH="+tc.data)
			code, stdout, stderr := runBinary(t, tc.cwd, env, "backup", "--out", tc.out)
			if code == 0 {
				t.Fatalf("backup --out %s succeeded: %s", tc.out, stdout)
			}
			if !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "write the backup to another file") ||
				strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Fatalf("backup --out %s: want one line saying it %s, got:\n%s", tc.out, tc.want, stderr)
			}
			// The server still has its file and takes (and keeps) writes.
			l := client{t, c.base}.must("POST", "/v1/links", key, `{"destination_url":"https://example.com/`+url.PathEscape(tc.name)+`"}`, 201)
			ids = append(ids, l["id"].(string))
		})
	}

	after, err := os.Stat(data)
	if err != nil || !os.SameFile(before, after) {
		t.Fatalf("the data file was replaced: %v", err)
	}
	if got, _ := os.ReadFile(lock); len(got) != 0 {
		t.Fatalf("the lock file was written over: %d bytes", len(got))
	}
	// A second server still finds the path locked.
	env := append(childEnv(p, data), "LINKBOLT_SERVER_LISTEN="+freePort(t))
	if code, _, stderr := runBinary(t, dir, env, "serve"); code == 0 || !strings.Contains(stderr, "locked") {
		t.Fatalf("a second server on the path: exit %d: %s", code, stderr)
	}
	// A backup to another file works and holds every acknowledged write.
	out := filepath.Join(t.TempDir(), "copy.db")
	if code, _, stderr := runBinary(t, dir, childEnv(p, data), "backup", "--out", out); code != 0 {
		t.Fatalf("backup to another file: exit %d: %s", code, stderr)
	}
	if got := countLinks(t, out); got != len(ids) {
		t.Fatalf("the backup holds %d links, want %d", got, len(ids))
	}
	// After a restart every acknowledged write is still there.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("stop: %v\n%s", err, p.logs.String())
	}
	c = startBoltChild(t, dir, "50ms").client()
	for _, id := range ids {
		c.must("GET", "/v1/links/"+id, key, "", 200)
	}
}

// countLinks opens a data file read-only and counts its links.
func countLinks(t *testing.T, path string) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		n = tx.Bucket([]byte("links")).Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// backupLeftovers lists the backup temporary files in dir.
func backupLeftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, storage.BackupTempPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestProcessKilledDuringBackup reproduces kill -9 during GET
// /v1/admin/backup: the spool is never a named file while the download
// runs, so the kill leaves nothing behind, and a spool file some older
// crash left is removed at the next start (and nothing else is).
func TestProcessKilledDuringBackup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "linkbolt.db")
	// 16 MB in a bucket of its own makes a backup bigger than any socket
	// buffer, so the download below is still running at the kill.
	padData(t, data, 16)
	p := startBoltChild(t, dir, "50ms")
	c := p.client()
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	req, _ := http.NewRequest("GET", "http://"+p.addr+"/v1/admin/backup", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength < 16<<20 {
		t.Fatalf("backup: %d, %d bytes", resp.StatusCode, resp.ContentLength)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	// The download is under way: the spool is open but has no name.
	if got := backupLeftovers(t, dir); len(got) != 0 {
		t.Fatalf("a named spool file exists during the download: %v", got)
	}
	if fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", p.cmd.Process.Pid)); len(fds) > 0 {
		spooling := false
		for _, fd := range fds {
			if target, _ := os.Readlink(fd); strings.Contains(target, storage.BackupTempPrefix) && strings.HasSuffix(target, "(deleted)") {
				spooling = true
			}
		}
		if !spooling {
			t.Fatalf("the server holds no unlinked spool file during the download")
		}
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	if got := backupLeftovers(t, dir); len(got) != 0 {
		t.Fatalf("kill -9 during a backup left %v", got)
	}

	// A spool an older linkbolt left (a named file) goes at the next
	// start; files that only look alike stay.
	stale := filepath.Join(dir, storage.BackupTempPrefix+"123456")
	keep := []string{filepath.Join(dir, ".linkbolt-backup"), filepath.Join(dir, "linkbolt-backup-1"), filepath.Join(dir, "notes.txt")}
	for _, f := range append(keep, stale) {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, storage.BackupTempPrefix+"dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, filepath.Join(dir, storage.BackupTempPrefix+"dir"))
	p = startBoltChild(t, dir, "50ms")
	p.client().must("GET", "/healthz", "", "", 200)
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the stale spool is still there: %v", err)
	}
	for _, f := range keep {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s was removed: %v", f, err)
		}
	}
}

// TestBackupRemovesLeftoversBesideOut: a backup command removes what a
// crashed backup left beside its output, but not the file of a backup
// still running there.
func TestBackupRemovesLeftoversBesideOut(t *testing.T) {
	t.Parallel()
	cfg := boltConfig(t, "")
	cfgPath := filepath.Join(filepath.Dir(filepath.Dir(cfg.Storage.Path)), "config.yaml")
	db := storage.NewDB(cfg.Storage.Path)
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	outDir := t.TempDir()
	stale := filepath.Join(outDir, storage.BackupTempPrefix+"999")
	if err := os.WriteFile(stale, []byte("half a backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	running, err := storage.CreateBackupTemp(outDir)
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"backup", "--config", cfgPath, "--out", filepath.Join(outDir, "b.db")}, &stdout, &stderr); code != 0 {
		t.Fatalf("backup: exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the stale backup file is still there: %v", err)
	}
	if _, err := os.Stat(running.Name()); err != nil {
		t.Fatalf("the running backup's file was removed: %v", err)
	}
	if got := backupLeftovers(t, outDir); len(got) != 1 || got[0] != running.Name() {
		t.Fatalf("left beside the output: %v", got)
	}
}

// padData creates a data file holding mb megabytes in a bucket linkbolt
// does not use.
func padData(t *testing.T, path string, mb int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("test.padding"))
		if err != nil {
			return err
		}
		v := bytes.Repeat([]byte{0xa5}, 1<<20)
		for i := 0; i < mb; i++ {
			if err := b.Put(fmt.Appendf(nil, "%04d", i), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBackupOntoDataFileOffline: with no server running, a backup onto
// the data file (by path or through a symbolic link) is refused just the
// same, and the file is left as it was.
func TestBackupOntoDataFileOffline(t *testing.T) {
	t.Parallel()
	cfg := boltConfig(t, "")
	cfgPath := filepath.Join(filepath.Dir(filepath.Dir(cfg.Storage.Path)), "config.yaml")
	db := storage.NewDB(cfg.Storage.Path)
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(cfg.Storage.Path)
	info, _ := os.Stat(cfg.Storage.Path)
	link := filepath.Join(t.TempDir(), "link.db")
	if err := os.Symlink(cfg.Storage.Path, link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{cfg.Storage.Path, link} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"backup", "--config", cfgPath, "--out", out}, &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), "is the data file itself") {
			t.Fatalf("backup --out %s: exit %d: %s%s", out, code, stdout.String(), stderr.String())
		}
	}
	after, _ := os.ReadFile(cfg.Storage.Path)
	info2, _ := os.Stat(cfg.Storage.Path)
	if !bytes.Equal(before, after) || !os.SameFile(info, info2) {
		t.Fatal("the data file changed")
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symbolic link was replaced: %v", err)
	}
}

// TestBackupOutNotAFile: --out naming a directory, a device or a pipe is
// refused with one line and exit code 1, and the entry is left as it was:
// the copy is renamed into place, which would otherwise replace a FIFO
// (or, run as root, /dev/null) with a plain file holding the data.
func TestBackupOutNotAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data", "linkbolt.db")
	db := storage.NewDB(data)
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"LINKBOLT_STORAGE_PATH=" + data}
	for _, tc := range []struct{ out, want string }{
		{fifo, "is a device, pipe or socket, not a file"},
		{sub, "is a directory, not a file"},
		{sub + "/", "is a directory, not a file"},
	} {
		code, stdout, stderr := runBinary(t, dir, env, "backup", "--out", tc.out)
		if code != 1 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Fatalf("backup --out %s: exit %d, want 1 and one line saying it %s; stdout %q, stderr %q",
				tc.out, code, tc.want, stdout, stderr)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v, %v", fi.Mode(), err)
	}
	if fi, err := os.Lstat(sub); err != nil || !fi.IsDir() {
		t.Fatalf("the directory was replaced: %v", err)
	}
	if got := backupLeftovers(t, dir); len(got) != 0 {
		t.Fatalf("temporary files left: %v", got)
	}
	// A regular file is still written over, as before.
	out := filepath.Join(dir, "backup.db")
	if err := os.WriteFile(out, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runBinary(t, dir, env, "backup", "--out", out); code != 0 {
		t.Fatalf("backup over a regular file: exit %d: %s", code, stderr)
	}
	b, err := bolt.Open(out, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("the backup does not open: %v", err)
	}
	defer b.Close()
	if err := b.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}); err != nil {
		t.Fatalf("the backup is damaged: %v", err)
	}
}

// TestFlagGivenAsValue: a flag whose value is left out before another
// flag ("backup --out --token SECRET") is a usage error naming the flag
// with no value. The flag package alone would back up to a file named
// "--token" or print the token to stderr as an unexpected argument.
func TestFlagGivenAsValue(t *testing.T) {
	t.Parallel()
	const secret = "lb_live_notreallyasecrettokenvalue"
	for _, tc := range []struct {
		args []string
		say  string
	}{
		{[]string{"backup", "--out", "--token", secret}, "linkbolt backup: flag --out needs a value"},
		{[]string{"backup", "--out", "-token=" + secret}, "linkbolt backup: flag --out needs a value"},
		{[]string{"backup", "--out", "--help"}, "linkbolt backup: flag --out needs a value"},
		{[]string{"check", "--file", "--token", secret}, "linkbolt check: flag --file needs a value"},
		{[]string{"check", "--config", "--file", "x.db"}, "linkbolt check: flag --config needs a value"},
		{[]string{"backup", "--token", "--out", "x.db"}, "linkbolt backup: flag --token needs a value"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			code, stdout, stderr := runBinary(t, dir, []string{"LINKBOLT_STORAGE_PATH=" + filepath.Join(dir, "none.db")}, tc.args...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.say) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and one line starting %q", code, stdout, stderr, tc.say)
			}
			if strings.Contains(stderr, secret) {
				t.Fatalf("the token is on stderr: %q", stderr)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("a usage error left files behind: %v", entries)
			}
		})
	}
	// A value that only starts with a dash is still a value.
	dir := t.TempDir()
	data := filepath.Join(dir, "linkbolt.db")
	db := storage.NewDB(data)
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if code, _, stderr := runBinary(t, dir, []string{"LINKBOLT_STORAGE_PATH=" + data}, "backup", "--out", "-nightly.db"); code != 0 {
		t.Fatalf("backup --out -nightly.db: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "-nightly.db")); err != nil {
		t.Fatal(err)
	}
}
