package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

func TestDeleteLink(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "bye", Tags: []string{"a"}})
	if _, err := s.Clicks.RecordClicks(ctx, []link.Click{{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0}}); err != nil {
		t.Fatal(err)
	}

	wantCode(t, s.Links.DeleteLink(ctx, other.ID, l.ID), link.ENOTFOUND)
	wantCode(t, s.Links.DeleteLink(ctx, ws.ID, "lnk_"), link.ENOTFOUND)
	if err := s.Links.DeleteLink(ctx, ws.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Links.DeleteLink(ctx, ws.ID, l.ID), link.ENOTFOUND)
	_, err := s.Links.FindLinkByAlias(ctx, "", "bye")
	wantCode(t, err, link.ENOTFOUND)
	wantTotals(t, s, ws.ID, map[string]int{"": 0, "a": 0})

	again := mustLink(t, s, ws.ID, &link.Link{Alias: "bye"})
	if again.ID == l.ID || again.Clicks != 0 {
		t.Fatalf("recreated = %+v", again)
	}
	// The workspace keeps the deleted link's clicks.
	st, err := s.Clicks.Stats(ctx, link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeWorkspace, Start: t0, End: t0.Add(time.Hour)})
	if err != nil || st.Clicks != 1 || len(st.Hourly) != 1 || st.Hourly[0].Clicks != 1 {
		t.Fatalf("workspace stats = %+v, %v", st, err)
	}
}
