package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/internal/pgtest"
)

// TestClaimLinkChecksPlan: with a hundred thousand enrolled links, a
// claim reads the due ones by the index of the next check's time, never
// the whole table.
func TestClaimLinkChecksPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := OpenDB(ctx, Options{URL: pgtest.URL(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, err = db.pool.Exec(ctx, `
		INSERT INTO workspaces (id, seq, name, plan, created_at, updated_at, destination_checks) VALUES ('ws_a', 1, 'A', 'free', now(), now(), true);
		INSERT INTO links (id, seq, workspace_id, alias, destination_url, redirect_code, created_at, updated_at)
			SELECT 'lnk_' || i, i, 'ws_a', 'a' || i, 'https://example.com/' || i, 302, now(), now() FROM generate_series(1, 100000) i;
		INSERT INTO link_checks (link_id, workspace_id, status, next_check_at)
			SELECT 'lnk_' || i, 'ws_a', 'ok', now() + (i || ' seconds')::interval FROM generate_series(1, 100000) i;
		ANALYZE links; ANALYZE link_checks`)
	if err != nil {
		t.Fatal(err)
	}
	var plan []map[string]any
	at := time.Now().Add(100 * time.Second)
	if err := db.pool.QueryRow(ctx, `EXPLAIN (FORMAT JSON) `+claimLinkChecksSQL, at, 100, at.Add(time.Hour)).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if n["Relation Name"] == "link_checks" && n["Node Type"] == "Seq Scan" {
			t.Errorf("a claim reads link_checks by a sequential scan: %v", plan)
		}
		if n["Relation Name"] == "links" && n["Node Type"] == "Seq Scan" {
			t.Errorf("a claim reads links by a sequential scan: %v", plan)
		}
		subs, _ := n["Plans"].([]any)
		for _, sub := range subs {
			walk(sub.(map[string]any))
		}
	}
	walk(plan[0]["Plan"].(map[string]any))
}
