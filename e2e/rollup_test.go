package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// TestLinkHoursRolledUpWired: a server rolls a link's hours older than
// analytics.link_hours_retention (35 days by default) up into its days at
// start, and the link's analytics still count the old clicks.
func TestLinkHoursRolledUpWired(t *testing.T) {
	t.Parallel()
	cfg := boltConfig(t, "")
	ctx := context.Background()
	db, ws, l := offlineLink(t, cfg.Storage.Path, "old")
	old := time.Now().Add(-40 * 24 * time.Hour)
	clicks := storage.NewClickService(db)
	if _, err := clicks.RecordClicks(ctx, []link.Click{
		{LinkID: l.ID, WorkspaceID: ws.ID, Time: old, Country: "DE"},
		{LinkID: l.ID, WorkspaceID: ws.ID, Time: time.Now(), Country: "FR"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var logs syncWriter
	_, stop := startApp(t, cfg, &logs)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "rolled per-link hourly analytics up into days") {
		if time.Now().After(deadline) {
			t.Fatalf("no roll-up logged: %s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "hours=1 ") {
		t.Errorf("the roll-up did not delete the one old hour: %s", logs.String())
	}
	db = storage.NewDB(cfg.Storage.Path)
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := storage.NewClickService(db).Stats(ctx, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: l.ID,
		Start: old.Add(-48 * time.Hour), End: time.Now().Add(time.Hour)})
	if err != nil || st.Clicks != 2 || len(st.Hourly) != 2 {
		t.Fatalf("after the roll-up: %+v, %v; want 2 clicks in 2 points", st, err)
	}
	if want := old.Truncate(24 * time.Hour).Add(12 * time.Hour); !st.Hourly[0].Start.Equal(want) {
		t.Errorf("the old day's point at %s, want %s", st.Hourly[0].Start, want)
	}
}
