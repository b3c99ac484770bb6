package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestProcessCompact: linkbolt compact refuses the data file a running
// server holds and leaves no output; once the server stopped it writes
// the copy, which checks clean and serves the link and its clicks; it
// refuses to overwrite an existing file.
func TestProcessCompact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "linkbolt.db")
	out := filepath.Join(dir, "compact.db")
	p := startBoltChild(t, dir, "50ms")
	c := p.client()
	key, id, alias := setupLink(c)
	for range 3 {
		if status, _, _ := c.call("GET", "/"+alias, "", ""); status != 302 {
			t.Fatalf("redirect: %d", status)
		}
	}
	code, stdout, stderr := runBinary(t, dir, childEnv(p, data), "compact", "--out", out)
	if code != 1 || !strings.Contains(stderr, "in use by a running linkbolt") {
		t.Fatalf("compact while serving: exit %d:\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the refused compact left %s: %v", out, err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()

	code, stdout, stderr = runBinary(t, dir, childEnv(p, data), "compact", "--out", out)
	if code != 0 || !strings.Contains(stdout, "compacted "+data) || stderr != "" {
		t.Fatalf("compact: exit %d:\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runBinary(t, dir, nil, "check", "--file", out)
	if code != 0 || !strings.Contains(stdout, out+" is OK") {
		t.Fatalf("check of the copy: exit %d:\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runBinary(t, dir, childEnv(p, data), "compact", "--out", out)
	if code != 1 || !strings.Contains(stderr, "already exists") {
		t.Fatalf("compact onto an existing file: exit %d: %s", code, stderr)
	}

	// The copy in the data file's place serves the link with its clicks.
	if err := os.Rename(out, data); err != nil {
		t.Fatal(err)
	}
	p = startBoltChild(t, dir, "50ms")
	l := p.client().must("GET", "/v1/links/"+id, key, "", 200)
	if l["clicks"] != float64(3) {
		t.Fatalf("link after compaction: %v", l)
	}
}
