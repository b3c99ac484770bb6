package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeCurlSession runs the README's first session with curl, as
// written, against a real server started as its first block starts one
// (an admin from the environment), and checks that every answer the
// README shows under a command ("#   ...", "…" for what varies) is
// printed, and that no call is refused.
func TestReadmeCurlSession(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to run the README's shell session")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("curl is needed to run the README's curl session (.ci/run installs it)")
		}
		t.Skip("curl not found: the README's curl session is not run")
	}
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	start, ok := strings.CutPrefix(string(raw)[strings.Index(string(raw), "## A first session with curl"):], "## A first session with curl")
	if !ok {
		t.Fatal(`README.md has no "## A first session with curl"`)
	}
	section, _, _ := strings.Cut(start, "\n## ")
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) < 3 {
		t.Fatalf("%d sh blocks in the curl session, want the server's and at least two of curl", len(blocks))
	}
	server := blocks[0][1]
	if !strings.Contains(server, "LINKBOLT_ADMIN_EMAIL=me@example.com") || !strings.Contains(server, "LINKBOLT_ADMIN_PASSWORD='a long password'") {
		t.Fatalf("the session's server is not started as the test starts it:\n%s", server)
	}
	t.Setenv("LINKBOLT_ADMIN_EMAIL", "me@example.com")
	t.Setenv("LINKBOLT_ADMIN_PASSWORD", "a long password")
	cfg := testConfig(t, "")
	base, _ := startApp(t, cfg, nil)
	addr := strings.TrimPrefix(base, "http://")

	var script strings.Builder
	var want []string
	for _, b := range blocks[1:] {
		for _, line := range strings.Split(b[1], "\n") {
			if shown, ok := strings.CutPrefix(line, "#   "); ok {
				want = append(want, shown)
			}
		}
		script.WriteString(strings.ReplaceAll(b[1], "localhost:8080/", addr+"/"))
		script.WriteString("\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-e", "-c", script.String())
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the session failed: %v\n%s", err, out)
	}
	printed := strings.ReplaceAll(string(out), addr, "localhost:8080")
	for _, w := range want {
		parts := strings.Split(w, "…")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re := regexp.MustCompile(`(?m)^` + strings.Join(parts, ".*") + `\r?$`)
		if !re.MatchString(printed) {
			t.Errorf("the README shows %q, the session printed no such line", w)
		}
	}
	if len(want) < 4 {
		t.Errorf("%d answers shown in the README's session, want the link, the HEAD and the GET", len(want))
	}
	if m := regexp.MustCompile(`"status":\s*[45]\d\d`).FindString(printed); m != "" {
		t.Errorf("a call of the session was refused (%s):\n%s", m, printed)
	}
}
