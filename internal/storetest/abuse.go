package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var abuseTests = []test{
	{"ReportCountListStatus", testAbuseReports},
}

func testAbuseReports(t *testing.T, e *env) {
	_, ws := e.setup()
	a := e.link(ws.ID, &link.Link{Alias: "a"})
	b := e.link(ws.ID, &link.Link{Alias: "b"})
	report := func(l *link.Link, reason, details string) *link.AbuseReport {
		t.Helper()
		r := &link.AbuseReport{WorkspaceID: ws.ID, LinkID: l.ID, Alias: l.Alias, Destination: l.DestinationURL, Reason: reason, Details: details}
		if err := e.AbuseReports.ReportAbuse(e.ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := report(a, link.AbusePhishing, "asks for my bank password")
	if first.ID == "" || first.Count != 1 || first.Status != link.ReportOpen || first.Alias != "a" || !first.CreatedAt.Equal(e.now()) {
		t.Fatalf("first report %+v", first)
	}
	// More reports of the open one are counted, many at once too; the
	// last details given are kept.
	e.clock.Add(time.Minute)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); report(a, link.AbusePhishing, "") }()
	}
	wg.Wait()
	again := report(a, link.AbusePhishing, "still there")
	if again.ID != first.ID || again.Count != 10 || again.Details != "still there" || !again.UpdatedAt.Equal(e.now()) || !again.CreatedAt.Equal(first.CreatedAt) {
		t.Fatalf("counted report %+v", again)
	}
	e.clock.Add(time.Minute)
	spam := report(a, link.AbuseSpam, "")
	e.clock.Add(time.Minute)
	other := report(b, link.AbusePhishing, "")
	if spam.ID == first.ID || other.ID == first.ID {
		t.Fatal("another reason or link counted on the first report")
	}
	all, err := e.AbuseReports.FindAbuseReports(e.ctx, "", time.Time{}, 10)
	if err != nil || len(all) != 3 || all[0].ID != other.ID || all[1].ID != spam.ID || all[2].ID != first.ID {
		t.Fatalf("newest first: %+v, %v", all, err)
	}
	if page, _ := e.AbuseReports.FindAbuseReports(e.ctx, "", all[1].UpdatedAt, 10); len(page) != 1 || page[0].ID != first.ID {
		t.Fatalf("before the second: %+v", page)
	}
	if one, _ := e.AbuseReports.FindAbuseReports(e.ctx, "", time.Time{}, 1); len(one) != 1 {
		t.Fatalf("limit 1: %d", len(one))
	}

	// Resolved: a new report of the link and reason opens a new one; the
	// old one cannot be reopened while it is open.
	e.clock.Add(time.Minute)
	done, err := e.AbuseReports.SetAbuseReportStatus(e.ctx, first.ID, link.ReportResolved)
	if err != nil || done.Status != link.ReportResolved || !done.UpdatedAt.Equal(e.now()) || done.Count != 10 {
		t.Fatalf("resolved: %+v, %v", done, err)
	}
	if open, _ := e.AbuseReports.FindAbuseReports(e.ctx, link.ReportOpen, time.Time{}, 10); len(open) != 2 {
		t.Fatalf("open after one resolved: %d", len(open))
	}
	fresh := report(a, link.AbusePhishing, "")
	if fresh.ID == first.ID || fresh.Count != 1 {
		t.Fatalf("a report after the resolution: %+v", fresh)
	}
	_, err = e.AbuseReports.SetAbuseReportStatus(e.ctx, first.ID, link.ReportOpen)
	wantCode(t, err, link.ECONFLICT)
	if _, err := e.AbuseReports.SetAbuseReportStatus(e.ctx, fresh.ID, link.ReportDismissed); err != nil {
		t.Fatal(err)
	}
	if reopened, err := e.AbuseReports.SetAbuseReportStatus(e.ctx, first.ID, link.ReportOpen); err != nil || reopened.Status != link.ReportOpen {
		t.Fatalf("reopened: %+v, %v", reopened, err)
	}
	if got := report(a, link.AbusePhishing, ""); got.ID != first.ID || got.Count != 11 {
		t.Fatalf("a report of the reopened one: %+v", got)
	}
	_, err = e.AbuseReports.SetAbuseReportStatus(e.ctx, "rpt_unknown", link.ReportResolved)
	wantCode(t, err, link.ENOTFOUND)
	// A report outlives its link.
	if err := e.Links.DeleteLink(e.ctx, ws.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	if all, _ := e.AbuseReports.FindAbuseReports(e.ctx, "", time.Time{}, 10); len(all) != 4 {
		t.Fatalf("after the link's deletion: %d reports", len(all))
	}
}
