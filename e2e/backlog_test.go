package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// leaveBacklog makes the data file at path with one link whose n clicks
// wait in the click backlog, as a run stopped during a flood leaves it,
// and returns the link's workspace and ID.
func leaveBacklog(t *testing.T, path string, n int) (ws, id string) {
	t.Helper()
	db, w, l := offlineLink(t, path, "flooded")
	defer db.Close()
	ctx := context.Background()
	clicks := make([]link.Click, n)
	for i := range clicks {
		clicks[i] = link.Click{LinkID: l.ID, WorkspaceID: w.ID, Time: time.Now(), Country: "unknown",
			Device: "desktop", Browser: "Other", OS: "Other", Referrer: "direct"}
	}
	if spilled, _, err := storage.NewClickService(db).SpillClicks(ctx, clicks, 0); err != nil || spilled != n {
		t.Fatalf("spilled %d of %d: %v", spilled, n, err)
	}
	return w.ID, l.ID
}

// offlineLink opens a new data file at path with the storage package, as
// a server would, with an admin, a workspace and a link of alias; the
// caller closes it.
func offlineLink(t *testing.T, path, alias string) (*storage.DB, *link.Workspace, *link.Link) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db := storage.NewDB(path)
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u := &link.User{Email: "admin@example.com", PasswordHash: []byte("hash")}
	w := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := storage.NewUserService(db).Bootstrap(ctx, u, w); err != nil {
		db.Close()
		t.Fatal(err)
	}
	l := &link.Link{WorkspaceID: w.ID, Alias: alias, DestinationURL: "https://example.com/"}
	if err := storage.NewLinkService(db).CreateLink(ctx, l); err != nil {
		db.Close()
		t.Fatal(err)
	}
	return db, w, l
}

// metric returns the line of the metric name on /metrics.
func metric(t *testing.T, base, name string) string {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+" ") {
			return line
		}
		// On PostgreSQL each metric carries the instance's label.
		if rest, ok := strings.CutPrefix(line, name+"{"); ok {
			if _, v, ok := strings.Cut(rest, "} "); ok {
				return name + " " + v
			}
		}
	}
	t.Fatalf("no metric %s in:\n%s", name, b)
	return ""
}

// TestBacklogDrainedWhenOff: a server started with the click backlog off
// (clicks.backlog_bytes 0), or writing each click at once
// (clicks.flush_interval 0s), on a file whose last run left clicks in the
// backlog drains them into analytics instead of stranding them.
func TestBacklogDrainedWhenOff(t *testing.T) {
	t.Parallel()
	for _, yaml := range []string{
		"clicks:\n  backlog_bytes: 0\n",
		"clicks:\n  flush_interval: 0s\n",
	} {
		cfg := boltConfig(t, yaml)
		ws, id := leaveBacklog(t, cfg.Storage.Path, 100)
		base, stop := startApp(t, cfg, nil)
		for i := 0; metric(t, base, "linkbolt_clicks_backlog") != "linkbolt_clicks_backlog 0"; i++ {
			if i > 500 {
				t.Fatalf("%s: the backlog was never drained", yaml)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		db := storage.NewDB(cfg.Storage.Path)
		if err := db.Open(); err != nil {
			t.Fatal(err)
		}
		l, err := storage.NewLinkService(db).FindLinkByID(context.Background(), ws, id)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if l.Clicks != 100 {
			t.Fatalf("%s: %d clicks counted, want 100", yaml, l.Clicks)
		}
	}
}
