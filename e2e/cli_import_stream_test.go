package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// offlineImportSetup returns the config file of a data file with a
// workspace, its id, and no server holding the file.
func offlineImportSetup(t *testing.T) (cfgPath, ws string) {
	t.Helper()
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\n")
	base, stop := startApp(t, cfg, nil)
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	ws = c.must("GET", "/v1/me", tok, "", 200)["workspaces"].([]any)[0].(map[string]any)["id"].(string)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(filepath.Dir(filepath.Dir(cfg.Storage.Path)), "config.yaml"), ws
}

// endlessFile is a named pipe fed by write until the reader goes away or
// limit bytes were written; it returns the pipe's path and the bytes
// written so far.
func endlessFile(t *testing.T, limit int64, write func(n int64) []byte) (string, *atomic.Int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "endless.csv")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		for written.Load() < limit {
			n, err := f.Write(write(written.Load()))
			written.Add(int64(n))
			if err != nil {
				return // the import closed the file
			}
		}
	}()
	return path, &written
}

// linkbolt import --file /dev/zero grew to 23 GB, reading one line whole,
// and ignored SIGTERM while it did. A row is bounded (importer.MaxCSVRow):
// a file without line breaks is refused with a clear error after 1 MiB of
// it, not 64.
func TestImportCommand_EndlessLine(t *testing.T) {
	t.Parallel()
	cfgPath, ws := offlineImportSetup(t)
	zeros := make([]byte, 64<<10)
	path, written := endlessFile(t, 64<<20, func(int64) []byte { return zeros })

	code, stdout, stderr := runCLI(t, "import", "--config", cfgPath, "--from", "csv", "--workspace", ws, "--file", path, "--dry-run")
	if code == 0 || !strings.Contains(stderr, "line 1 is longer than 1048576 bytes") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if n := written.Load(); n > 4<<20 {
		t.Fatalf("the import read %d bytes of a file without line breaks before it stopped", n)
	}
}

// A cancelled context (SIGINT or SIGTERM, through main's
// signal.NotifyContext) stops an import of a file without end.
func TestImportCommand_Cancelled(t *testing.T) {
	t.Parallel()
	cfgPath, ws := offlineImportSetup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rows atomic.Int64
	path, written := endlessFile(t, 1<<40, func(int64) []byte {
		n := rows.Add(1)
		if n == 1 {
			return []byte("url,alias\n")
		}
		if n == 20_000 {
			cancel() // as a signal would, part way through
		}
		return fmt.Appendf(nil, "https://example.com/%d,row-%d\n", n, n)
	})

	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"import", "--config", cfgPath, "--from", "csv", "--workspace", ws, "--file", path, "--dry-run"}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "context canceled") {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if n := written.Load(); n > 16<<20 {
		t.Fatalf("the import read %d bytes after it was cancelled", n)
	}
}
