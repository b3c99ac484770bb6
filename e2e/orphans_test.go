package e2e

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/app"
)

// TestOrphanRetentionWired: orphan visits are written in the background,
// at most analytics.orphan_visits_per_hour kept an hour while all are
// counted, and the hourly job prunes them past analytics.orphan_retention
// at the time it is given.
func TestOrphanRetentionWired(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\nanalytics:\n  orphan_retention: 48h\n  orphan_visits_per_hour: 2\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + a.Addr()
	c := client{t, base}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	for _, p := range []string{"/a", "/b", "/c", "/d/e"} {
		visitHost(t, base, "", p)
	}
	var out map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out = c.must("GET", "/v1/admin/orphan-visits?range=24h", tok, "", 200)
		if out["totals"].(map[string]any)["visits"] == float64(4) || time.Now().After(deadline) {
			break
		}
	}
	if got := out["totals"].(map[string]any); got["visits"] != float64(4) || got["regular_404"] != float64(1) || len(out["visits"].([]any)) != 2 {
		t.Fatalf("before the clean-up: %v, %d kept", got, len(out["visits"].([]any)))
	}
	a.Upkeep(ctx, time.Now().Add(49*time.Hour))
	out = c.must("GET", "/v1/admin/orphan-visits?range=24h", tok, "", 200)
	if got := out["totals"].(map[string]any)["visits"]; got != float64(0) || len(out["visits"].([]any)) != 0 {
		t.Fatalf("after the clean-up: %v, %v", got, out["visits"])
	}
}
