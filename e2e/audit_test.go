package e2e

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/app"
)

// TestAuditRetentionWired: the hourly job records the keys whose grace
// ended and prunes the entries past audit.retention, at the time it is
// given (the clock moved, not waited for).
func TestAuditRetentionWired(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, "admin:\n  email: admin@example.com\n  password: a long password\naudit:\n  retention: 720h\n")
	if got := cfg.Audit.Retention; got != 720*time.Hour {
		t.Fatalf("audit.retention = %v", got)
	}
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
	c := client{t, "http://" + a.Addr()}
	tok := c.must("POST", "/v1/auth/login", "", `{"email":"admin@example.com","password":"a long password"}`, 200)["token"].(string)
	key := c.must("POST", "/v1/keys", tok, `{"name":"k","scope":"read"}`, 201)["id"].(string)
	c.must("POST", "/v1/keys/"+key+"/rotate", tok, "", 201)

	entries := func(query string) []any {
		return c.must("GET", "/v1/admin/audit-log?limit=500&"+query, tok, "", 200)["data"].([]any)
	}
	start := len(entries(""))
	if start < 3 {
		t.Fatalf("%d entries after a login, a key and a rotation", start)
	}

	// A day and an hour later: the rotation's grace (auth.rotation_grace,
	// 24h) is over and recorded; nothing is old enough to prune.
	now := time.Now()
	a.Upkeep(ctx, now.Add(25*time.Hour))
	if got := entries("action=key.grace_ended"); len(got) != 1 {
		t.Fatalf("%d key.grace_ended entries, want 1", len(got))
	}
	if got := len(entries("")); got != start+1 {
		t.Fatalf("%d entries, want %d", got, start+1)
	}

	// Past the retention, everything recorded so far goes, the entry of
	// the grace's end (timed when it ended) with it.
	a.Upkeep(ctx, now.Add(721*time.Hour).Add(25*time.Hour))
	if got := entries(""); len(got) != 0 {
		t.Fatalf("%d entries left past the retention: %v", len(got), got)
	}
}
