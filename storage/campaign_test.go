package storage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
	"github.com/linkbolt/linkbolt/webhook"
)

// findCampaign returns a campaign, failing the test on any error.
func findCampaign(tb testing.TB, s *Services, wsID, id string) *link.Campaign {
	tb.Helper()
	c, err := s.Campaigns.FindCampaignByID(context.Background(), wsID, id)
	if err != nil {
		tb.Fatalf("find campaign %s: %v", id, err)
	}
	return c
}

// campaignLinks returns the IDs of the links FindLinkPage lists for a
// campaign filter, newest first, checking the total against them.
func campaignLinks(tb testing.TB, s *Services, wsID, campaignID string) []string {
	tb.Helper()
	links, total, err := findLinks(context.Background(), s.Links, link.LinkFilter{WorkspaceID: wsID, CampaignID: campaignID, Limit: link.MaxPageLimit})
	if err != nil {
		tb.Fatal(err)
	}
	ids := []string{}
	for _, l := range links {
		if l.CampaignID != campaignID || l.WorkspaceID != wsID {
			tb.Fatalf("filter %s/%s listed %+v", wsID, campaignID, l)
		}
		ids = append(ids, l.ID)
	}
	if total != len(ids) {
		tb.Fatalf("filter %s/%s: total %d, %d links", wsID, campaignID, total, len(ids))
	}
	return ids
}

// wantLinksCount fails unless the campaign counts n links, as
// FindCampaignByID and FindCampaigns say and the campaign filter lists.
func wantLinksCount(tb testing.TB, s *Services, c *link.Campaign, n int) {
	tb.Helper()
	if got := findCampaign(tb, s, c.WorkspaceID, c.ID).Links; got != n {
		tb.Fatalf("campaign %s: Links = %d, want %d", c.ID, got, n)
	}
	list, err := s.Campaigns.FindCampaigns(context.Background(), c.WorkspaceID)
	if err != nil {
		tb.Fatal(err)
	}
	i := slices.IndexFunc(list, func(x *link.Campaign) bool { return x.ID == c.ID })
	if i < 0 || list[i].Links != n {
		tb.Fatalf("campaign %s in the list: %v (index %d), want %d links", c.ID, list, i, n)
	}
	if got := campaignLinks(tb, s, c.WorkspaceID, c.ID); len(got) != n {
		tb.Fatalf("campaign %s: filter lists %v, want %d links", c.ID, got, n)
	}
}

// events returns every event of the workspace.
func events(tb testing.TB, s *Services, wsID string) []*link.Event {
	tb.Helper()
	evs, err := s.Campaigns.FindEvents(context.Background(), wsID, "", 1000)
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

// eventData is what eventRecorder encodes: the campaign as the API would
// show it, and the change.
type eventData struct {
	ID      string               `json:"id"`
	Name    string               `json:"name"`
	Status  string               `json:"status"`
	UTM     [3]string            `json:"utm"`
	Changes map[string][2]string `json:"changes"`
}

// eventRecorder is an event encoder that encodes campaign.updated events
// as eventData and remembers what it was called with; every other event
// is the real encoder's.
type eventRecorder struct {
	*webhook.Encoder
	calls   int
	changes map[string][2]string
	fail    error
}

// recordEvents makes the campaign service of s write its events through a
// new eventRecorder.
func recordEvents(tb testing.TB, s *Services) *eventRecorder {
	rec := &eventRecorder{Encoder: testEncoder(tb)}
	s.Campaigns.Events = rec
	return rec
}

func (r *eventRecorder) CampaignData(after *link.Campaign, changes map[string][2]string) ([]byte, error) {
	r.calls++
	r.changes = changes
	if r.fail != nil {
		return nil, r.fail
	}
	return json.Marshal(eventData{ID: after.ID, Name: after.Name, Status: string(after.Status),
		UTM: [3]string{after.UTMSource, after.UTMMedium, after.UTMCampaign}, Changes: changes})
}

func TestCampaigns_CreateFindList(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	empty := mustWorkspace(t, s, "Empty", admin.ID)
	ctx := context.Background()

	a := mustCampaign(t, s, ws.ID, &link.Campaign{Name: " Spring sale ", UTMSource: "news", UTMMedium: "email", UTMCampaign: "spring"})
	if !strings.HasPrefix(a.ID, "cmp_") || a.WorkspaceID != ws.ID || a.Name != "Spring sale" || a.Status != link.CampaignActive ||
		!a.CreatedAt.Equal(t0) || !a.UpdatedAt.Equal(t0) {
		t.Fatalf("created = %+v", a)
	}
	s.Clock.Add(time.Minute)
	o := mustCampaign(t, s, other.ID, &link.Campaign{Name: "Foreign"})
	s.Clock.Add(time.Minute)
	b := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Summer", Status: link.CampaignPaused})
	s.Clock.Add(time.Minute)
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Autumn", Status: link.CampaignArchived})
	if a.ID == b.ID || a.ID == o.ID || b.ID == c.ID {
		t.Fatalf("IDs not unique: %s %s %s %s", a.ID, b.ID, c.ID, o.ID)
	}

	for _, tt := range []struct {
		name string
		c    link.Campaign
	}{
		{"unknown workspace", link.Campaign{WorkspaceID: "ws_zzz", Name: "x", Status: link.CampaignActive}},
		{"malformed workspace", link.Campaign{WorkspaceID: "zzz", Name: "x", Status: link.CampaignActive}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.c
			err := s.Campaigns.CreateCampaign(ctx, &in)
			wantCode(t, err, link.ENOTFOUND)
			if in.ID != "" {
				t.Fatal("ID set on failure")
			}
		})
	}

	got := findCampaign(t, s, ws.ID, a.ID)
	if got.ID != a.ID || got.WorkspaceID != ws.ID || got.Name != "Spring sale" || got.Status != link.CampaignActive ||
		got.UTMSource != "news" || got.UTMMedium != "email" || got.UTMCampaign != "spring" || got.Links != 0 ||
		!got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t0) {
		t.Fatalf("found = %+v", got)
	}
	if got := findCampaign(t, s, ws.ID, b.ID); got.Status != link.CampaignPaused || got.Name != "Summer" {
		t.Fatalf("found = %+v", got)
	}

	// Links count per campaign: two in a, one in b, one in o, one in none.
	mustLink(t, s, ws.ID, &link.Link{CampaignID: a.ID})
	mustLink(t, s, ws.ID, &link.Link{CampaignID: a.ID})
	mustLink(t, s, ws.ID, &link.Link{CampaignID: b.ID})
	mustLink(t, s, ws.ID, &link.Link{})
	mustLink(t, s, other.ID, &link.Link{CampaignID: o.ID})

	list, err := s.Campaigns.FindCampaigns(ctx, ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	var counts []int
	for _, x := range list {
		ids = append(ids, x.ID)
		counts = append(counts, x.Links)
		if x.WorkspaceID != ws.ID {
			t.Fatalf("listed a campaign of another workspace: %+v", x)
		}
	}
	if !slices.Equal(ids, []string{c.ID, b.ID, a.ID}) || !slices.Equal(counts, []int{0, 1, 2}) {
		t.Fatalf("list = %v with links %v, want %v with [0 1 2]", ids, counts, []string{c.ID, b.ID, a.ID})
	}
	wantLinksCount(t, s, a, 2)
	wantLinksCount(t, s, b, 1)
	wantLinksCount(t, s, o, 1)

	// The newest workspace's list (the end of the index) and an empty one.
	if list, err := s.Campaigns.FindCampaigns(ctx, other.ID); err != nil || len(list) != 1 || list[0].ID != o.ID || list[0].Links != 1 {
		t.Fatalf("other's list = %v, %v", list, err)
	}
	if list, err := s.Campaigns.FindCampaigns(ctx, empty.ID); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("empty list = %#v, %v", list, err)
	}
	_, err = s.Campaigns.FindCampaigns(ctx, "zzz")
	wantCode(t, err, link.ENOTFOUND)

	for _, tt := range []struct{ name, ws, id string }{
		{"campaign of another workspace", other.ID, a.ID},
		{"unknown", ws.ID, s.DB.FormatID("cmp_", 1<<40)},
		{"malformed", ws.ID, "cmp_"},
		{"not a campaign id", ws.ID, "lnk_1"},
		{"malformed workspace", "zzz", a.ID},
	} {
		t.Run("find "+tt.name, func(t *testing.T) {
			_, err := s.Campaigns.FindCampaignByID(ctx, tt.ws, tt.id)
			wantCode(t, err, link.ENOTFOUND)
		})
	}
}

// TestCampaigns_CrossWorkspace checks that another workspace can neither
// read, change nor delete a campaign, and that nothing changes on trying.
func TestCampaigns_CrossWorkspace(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Mine", UTMSource: "news"})
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "mine", CampaignID: c.ID})
	rec := recordEvents(t, s)

	_, err := s.Campaigns.FindCampaignByID(ctx, other.ID, c.ID)
	wantCode(t, err, link.ENOTFOUND)
	s.Clock.Add(time.Hour)
	_, err = s.Campaigns.UpdateCampaign(ctx, other.ID, c.ID, link.CampaignUpdate{Name: ptr("Theirs"), UTMSource: ptr("x")})
	wantCode(t, err, link.ENOTFOUND)
	err = s.Campaigns.DeleteCampaign(ctx, other.ID, c.ID, false)
	wantCode(t, err, link.ENOTFOUND)
	err = s.Campaigns.DeleteCampaign(ctx, other.ID, c.ID, true)
	wantCode(t, err, link.ENOTFOUND)
	if list, err := s.Campaigns.FindCampaigns(ctx, other.ID); err != nil || len(list) != 0 {
		t.Fatalf("other's list = %v, %v", list, err)
	}

	got := findCampaign(t, s, ws.ID, c.ID)
	if got.Name != "Mine" || got.UTMSource != "news" || !got.UpdatedAt.Equal(t0) || got.Links != 1 {
		t.Fatalf("after cross-workspace attempts: %+v", got)
	}
	if rec.calls != 0 {
		t.Fatalf("event func called %d times", rec.calls)
	}
	if evs := events(t, s, ws.ID); len(evs) != 0 {
		t.Fatalf("events of ws: %v", evs)
	}
	if evs := events(t, s, other.ID); len(evs) != 0 {
		t.Fatalf("events of other: %v", evs)
	}
	if got, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID); err != nil || got.CampaignID != c.ID || !got.UpdatedAt.Equal(t0) {
		t.Fatalf("link = %+v, %v", got, err)
	}
}

func TestUpdateCampaign_Validation(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring", UTMSource: "news"})
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "spring", CampaignID: c.ID})
	if got, err := s.Links.FindLinkByAlias(ctx, "", "spring"); err != nil || got.UTMSource != "news" {
		t.Fatalf("by alias = %+v, %v", got, err)
	}
	s.Clock.Add(time.Hour)
	rec := recordEvents(t, s)
	long := strings.Repeat("x", link.MaxUTMLength+1)
	for _, tt := range []struct {
		name  string
		upd   link.CampaignUpdate
		field string
	}{
		{"empty name", link.CampaignUpdate{Name: ptr("")}, "name"},
		{"blank name", link.CampaignUpdate{Name: ptr("   "), UTMSource: ptr("ok")}, "name"},
		{"long name", link.CampaignUpdate{Name: ptr(strings.Repeat("n", link.MaxNameLength+1))}, "name"},
		{"control character in name", link.CampaignUpdate{Name: ptr("a\x00b")}, "name"},
		{"unknown status", link.CampaignUpdate{Status: ptr(link.CampaignStatus("deleted"))}, "status"},
		{"long utm_source", link.CampaignUpdate{UTMSource: &long}, "utm_source"},
		{"long utm_medium", link.CampaignUpdate{Name: ptr("Valid"), UTMMedium: &long}, "utm_medium"},
		{"control character in utm_campaign", link.CampaignUpdate{UTMCampaign: ptr("a\nb")}, "utm_campaign"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, tt.upd)
			wantCode(t, err, link.EINVALID)
			if fields := link.ErrorFields(err); !slices.ContainsFunc(fields, func(f link.FieldError) bool { return f.Field == tt.field }) {
				t.Fatalf("fields = %v, want %s", fields, tt.field)
			}
			got := findCampaign(t, s, ws.ID, c.ID)
			if got.Name != "Spring" || got.Status != link.CampaignActive || got.UTMSource != "news" || got.UTMMedium != "" ||
				got.UTMCampaign != "" || !got.UpdatedAt.Equal(t0) {
				t.Fatalf("written on failure: %+v", got)
			}
		})
	}
	if rec.calls != 0 {
		t.Fatalf("event func called %d times on invalid updates", rec.calls)
	}
	if evs := events(t, s, ws.ID); len(evs) != 0 {
		t.Fatalf("events written on invalid updates: %v", evs)
	}
	if got, err := s.Links.FindLinkByAlias(ctx, "", "spring"); err != nil || got.UTMSource != "news" || got.ID != l.ID {
		t.Fatalf("by alias = %+v, %v", got, err)
	}

	_, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, s.DB.FormatID("cmp_", 1<<40), link.CampaignUpdate{Name: ptr("x")})
	wantCode(t, err, link.ENOTFOUND)
	_, err = s.Campaigns.UpdateCampaign(ctx, ws.ID, "nope", link.CampaignUpdate{Name: ptr("x")})
	wantCode(t, err, link.ENOTFOUND)
}

func TestUpdateCampaign_Events(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring", UTMSource: "news"})
	o := mustCampaign(t, s, other.ID, &link.Campaign{Name: "Foreign"})
	rec := recordEvents(t, s)
	// The outbox keeps the events a webhook is subscribed to.
	hooks := storage.NewWebhookService(s.DB)
	mustWebhook(t, hooks, ws.ID, true, link.EventCampaignUpdated)
	mustWebhook(t, hooks, other.ID, true, link.EventCampaignUpdated)

	var ev *link.Event     // the first event of ws
	var want []string      // ws's event IDs, oldest first
	var wantOther []string // other's event IDs, oldest first

	mustRun(t, "an update that changes nothing writes no event", func(t *testing.T) {
		// Nothing changed: the campaign comes back as it is, no event.
		s.Clock.Add(time.Hour)
		for _, upd := range []link.CampaignUpdate{
			{},
			{Name: ptr("Spring"), Status: ptr(link.CampaignActive), UTMSource: ptr("news"), UTMMedium: ptr("")},
			{Name: ptr("  Spring ")}, // the same once normalised
		} {
			got, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, upd)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != c.ID || got.Name != "Spring" || got.UTMSource != "news" || !got.UpdatedAt.Equal(t0) {
				t.Fatalf("unchanged update = %+v", got)
			}
		}
		if rec.calls != 0 {
			t.Fatalf("event func called %d times without a change", rec.calls)
		}
		if got := findCampaign(t, s, ws.ID, c.ID); !got.UpdatedAt.Equal(t0) {
			t.Fatalf("UpdatedAt moved without a change: %+v", got)
		}
		if evs := events(t, s, ws.ID); len(evs) != 0 {
			t.Fatalf("events without a change: %v", evs)
		}
	})

	mustRun(t, "a change is written with its event", func(t *testing.T) {
		// A change: written with its event, which holds the change.
		at1 := s.Clock.Now()
		got, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{Name: ptr(" Spring 2025 "), UTMSource: ptr(""), UTMMedium: ptr("email")})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Spring 2025" || got.UTMSource != "" || got.UTMMedium != "email" || !got.UpdatedAt.Equal(at1) || !got.CreatedAt.Equal(t0) {
			t.Fatalf("updated = %+v", got)
		}
		wantChanges := map[string][2]string{"name": {"Spring", "Spring 2025"}, "utm_source": {"news", ""}, "utm_medium": {"", "email"}}
		if rec.calls != 1 || fmt.Sprint(rec.changes) != fmt.Sprint(wantChanges) {
			t.Fatalf("event func: %d calls, changes %v, want %v", rec.calls, rec.changes, wantChanges)
		}
		if found := findCampaign(t, s, ws.ID, c.ID); found.Name != "Spring 2025" || found.UTMMedium != "email" || !found.UpdatedAt.Equal(at1) {
			t.Fatalf("found = %+v", found)
		}
		evs := events(t, s, ws.ID)
		if len(evs) != 1 {
			t.Fatalf("events = %v", evs)
		}
		ev = evs[0]
		if !strings.HasPrefix(ev.ID, "evt_") || ev.Type != link.EventCampaignUpdated || ev.WorkspaceID != ws.ID || !ev.CreatedAt.Equal(at1) {
			t.Fatalf("event = %+v", ev)
		}
		var data eventData
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatalf("event data %s: %v", ev.Data, err)
		}
		if data.ID != c.ID || data.Name != "Spring 2025" || data.UTM != [3]string{"", "email", ""} || fmt.Sprint(data.Changes) != fmt.Sprint(wantChanges) {
			t.Fatalf("event data = %+v", data)
		}
	})

	mustRun(t, "events interleave with another workspace's", func(t *testing.T) {
		// More events, interleaved with the other workspace's.
		want = append(want, ev.ID)
		for i := range 5 {
			s.Clock.Add(time.Minute)
			got, err := s.Campaigns.UpdateCampaign(ctx, other.ID, o.ID, link.CampaignUpdate{UTMCampaign: ptr(fmt.Sprint("o", i))})
			if err != nil {
				t.Fatal(err)
			}
			if got.UTMCampaign != fmt.Sprint("o", i) {
				t.Fatalf("other updated = %+v", got)
			}
			wantOther = append(wantOther, events(t, s, other.ID)[i].ID)
			status := []link.CampaignStatus{link.CampaignPaused, link.CampaignArchived, link.CampaignActive}[i%3]
			if _, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{Status: &status}); err != nil {
				t.Fatal(err)
			}
			evs := events(t, s, ws.ID)
			if len(evs) != len(want)+1 {
				t.Fatalf("%d events after %d changes", len(evs), len(want)+1)
			}
			last := evs[len(evs)-1]
			if slices.Contains(want, last.ID) || !last.CreatedAt.Equal(s.Clock.Now()) {
				t.Fatalf("last event %+v", last)
			}
			want = append(want, last.ID)
		}
		var gotIDs []string
		for _, e := range events(t, s, ws.ID) {
			gotIDs = append(gotIDs, e.ID)
			if e.WorkspaceID != ws.ID {
				t.Fatalf("event of another workspace listed: %+v", e)
			}
		}
		if !slices.Equal(gotIDs, want) {
			t.Fatalf("events = %v, want %v", gotIDs, want)
		}
		for i := 1; i < len(want); i++ {
			a, _ := s.DB.ParseID("evt_", want[i-1])
			b, _ := s.DB.ParseID("evt_", want[i])
			if a >= b {
				t.Fatalf("events not oldest first: %v", want)
			}
		}
		if gotOther := events(t, s, other.ID); len(gotOther) != 5 || gotOther[0].ID != wantOther[0] || gotOther[4].ID != wantOther[4] {
			t.Fatalf("other's events = %v, want %v", gotOther, wantOther)
		}
	})

	mustRun(t, "paging with after and limit", func(t *testing.T) {
		// Paging with after and limit.
		var paged []string
		after := ""
		for range 10 {
			page, err := s.Campaigns.FindEvents(ctx, ws.ID, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > 2 {
				t.Fatalf("page of %d events, limit 2", len(page))
			}
			if len(page) == 0 {
				break
			}
			for _, e := range page {
				paged = append(paged, e.ID)
			}
			after = page[len(page)-1].ID
		}
		if !slices.Equal(paged, want) {
			t.Fatalf("paged = %v, want %v", paged, want)
		}
		// After an event of another workspace: from that position on.
		page, err := s.Campaigns.FindEvents(ctx, ws.ID, wantOther[2], 100)
		if err != nil || len(page) != 3 || page[0].ID != want[3] {
			t.Fatalf("after another workspace's event: %v, %v", page, err)
		}
		if page, err := s.Campaigns.FindEvents(ctx, ws.ID, want[len(want)-1], 100); err != nil || len(page) != 0 {
			t.Fatalf("after the last: %v, %v", page, err)
		}
		if page, err := s.Campaigns.FindEvents(ctx, ws.ID, s.DB.FormatID("evt_", 1<<40), 0); err != nil || len(page) != 0 {
			t.Fatalf("after a future event: %v, %v", page, err)
		}
		_, err = s.Campaigns.FindEvents(ctx, ws.ID, "nope", 10)
		wantCode(t, err, link.EINVALIDREQUEST)
		_, err = s.Campaigns.FindEvents(ctx, "zzz", "", 10)
		wantCode(t, err, link.ENOTFOUND)
	})

	mustRun(t, "an encoder error rolls the change back", func(t *testing.T) {
		// An encoder error rolls the change back: no campaign change, no event.
		before := findCampaign(t, s, ws.ID, c.ID)
		boom := errors.New("boom")
		failing := &eventRecorder{Encoder: testEncoder(t), fail: boom}
		s.Clock.Add(time.Minute)
		s.Campaigns.Events = failing
		_, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{Name: ptr("Rolled back"), UTMSource: ptr("gone")})
		if !errors.Is(err, boom) || failing.calls != 1 {
			t.Fatalf("update with a failing event: %v (%d calls)", err, failing.calls)
		}
		if after := findCampaign(t, s, ws.ID, c.ID); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("rolled back update written: %+v, was %+v", after, before)
		}
		if got := events(t, s, ws.ID); len(got) != len(want) {
			t.Fatalf("%d events after a rolled back update, want %d", len(got), len(want))
		}
	})

	mustRun(t, "without an event encoder no event is written", func(t *testing.T) {
		// Without an event encoder the change is written, with no event.
		s.Campaigns.Events = nil
		if got, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{Name: ptr("Quiet")}); err != nil || got.Name != "Quiet" {
			t.Fatalf("update without event: %+v, %v", got, err)
		}
		if got := events(t, s, ws.ID); len(got) != len(want) {
			t.Fatalf("%d events after an update without an event encoder, want %d", len(got), len(want))
		}
	})

	mustRun(t, "the next event follows the last one", func(t *testing.T) {
		// The next event still follows the last one.
		s.Campaigns.Events = rec
		if _, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{Name: ptr("Loud")}); err != nil {
			t.Fatal(err)
		}
		page, err := s.Campaigns.FindEvents(ctx, ws.ID, want[len(want)-1], 100)
		if err != nil || len(page) != 1 || page[0].Type != link.EventCampaignUpdated {
			t.Fatalf("after the last: %v, %v", page, err)
		}
	})

	mustRun(t, "events outlive a reopen", func(t *testing.T) {
		// Events outlive a reopen.
		db := MustReopen(t, s.DB, s.Clock)
		if got, err := storage.NewCampaignService(db).FindEvents(ctx, ws.ID, "", 0); err != nil || len(got) != len(want)+1 {
			t.Fatalf("after reopen: %d events, %v", len(got), err)
		}
	})
}

// TestCampaign_LinkOfAnotherWorkspace checks that a link joins only a
// campaign of its own workspace, on create and on update.
func TestCampaign_LinkOfAnotherWorkspace(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	mine := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Mine"})
	theirs := mustCampaign(t, s, other.ID, &link.Campaign{Name: "Theirs", UTMSource: "leak"})
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "mine", CampaignID: mine.ID})

	for _, id := range []string{theirs.ID, s.DB.FormatID("cmp_", 1<<40), "nope", l.ID} {
		t.Run("create "+id, func(t *testing.T) {
			in := &link.Link{WorkspaceID: ws.ID, Alias: "x", DestinationURL: "https://example.com/x", CampaignID: id}
			err := s.Links.CreateLink(ctx, in)
			wantCode(t, err, link.EINVALID)
			if fields := link.ErrorFields(err); len(fields) != 1 || fields[0].Field != "campaign_id" {
				t.Fatalf("fields = %v", fields)
			}
			if in.ID != "" {
				t.Fatal("ID set on failure")
			}
		})
		t.Run("update "+id, func(t *testing.T) {
			_, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{CampaignID: ptr(id), UTMMedium: ptr("m")}, nil)
			wantCode(t, err, link.EINVALID)
			if fields := link.ErrorFields(err); len(fields) != 1 || fields[0].Field != "campaign_id" {
				t.Fatalf("fields = %v", fields)
			}
		})
	}
	if _, err := s.Links.FindLinkByAlias(ctx, "", "x"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("refused link stored: %v", err)
	}
	got, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
	if err != nil || got.CampaignID != mine.ID || got.UTMMedium != "" || !got.UpdatedAt.Equal(t0) {
		t.Fatalf("link after refused updates = %+v, %v", got, err)
	}
	if got, err := s.Links.FindLinkByAlias(ctx, "", "mine"); err != nil || got.UTMSource != "" {
		t.Fatalf("by alias = %+v, %v", got, err)
	}
	wantLinksCount(t, s, mine, 1)
	wantLinksCount(t, s, theirs, 0)
	if ids := campaignLinks(t, s, other.ID, theirs.ID); len(ids) != 0 {
		t.Fatalf("other's campaign lists %v", ids)
	}
}

// TestUpdateLink_MoveCampaign moves links between campaigns and out of
// them; the counts and the filter follow (the cleanup checks the index).
func TestUpdateLink_MoveCampaign(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	a := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "A"})
	b := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "B"})
	l1 := mustLink(t, s, ws.ID, &link.Link{Alias: "l1", CampaignID: a.ID})
	s.Clock.Add(time.Second)
	l2 := mustLink(t, s, ws.ID, &link.Link{Alias: "l2", CampaignID: a.ID})
	s.Clock.Add(time.Second)
	l3 := mustLink(t, s, ws.ID, &link.Link{Alias: "l3"})
	wantLinksCount(t, s, a, 2)
	wantLinksCount(t, s, b, 0)
	if got := campaignLinks(t, s, ws.ID, a.ID); !slices.Equal(got, []string{l2.ID, l1.ID}) {
		t.Fatalf("a lists %v", got)
	}

	update := func(l *link.Link, upd link.LinkUpdate) *link.Link {
		t.Helper()
		got, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, upd, nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := update(l1, link.LinkUpdate{CampaignID: &b.ID}); got.CampaignID != b.ID {
		t.Fatalf("moved = %+v", got)
	}
	wantLinksCount(t, s, a, 1)
	wantLinksCount(t, s, b, 1)
	if got := campaignLinks(t, s, ws.ID, b.ID); !slices.Equal(got, []string{l1.ID}) {
		t.Fatalf("b lists %v", got)
	}
	// Another field changes; the campaign stays.
	if got := update(l1, link.LinkUpdate{DestinationURL: ptr("https://example.com/new"), Tags: &[]string{"t"}}); got.CampaignID != b.ID {
		t.Fatalf("updated = %+v", got)
	}
	wantLinksCount(t, s, b, 1)
	// Into the campaign it is in already.
	update(l1, link.LinkUpdate{CampaignID: &b.ID})
	wantLinksCount(t, s, b, 1)
	// Out of a campaign.
	if got := update(l2, link.LinkUpdate{CampaignID: ptr("")}); got.CampaignID != "" {
		t.Fatalf("out = %+v", got)
	}
	wantLinksCount(t, s, a, 0)
	// Into one from none.
	update(l3, link.LinkUpdate{CampaignID: &a.ID})
	update(l2, link.LinkUpdate{CampaignID: &b.ID})
	wantLinksCount(t, s, a, 1)
	wantLinksCount(t, s, b, 2)
	if got := campaignLinks(t, s, ws.ID, b.ID); !slices.Equal(got, []string{l2.ID, l1.ID}) {
		t.Fatalf("b lists %v", got)
	}
	if err := s.DB.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
	// Deleting a link takes it out of its campaign.
	if err := s.Links.DeleteLink(ctx, ws.ID, l1.ID); err != nil {
		t.Fatal(err)
	}
	wantLinksCount(t, s, b, 1)
	// And with the campaign emptied it may go without detach.
	if err := s.Links.DeleteLink(ctx, ws.ID, l2.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Campaigns.DeleteCampaign(ctx, ws.ID, b.ID, false); err != nil {
		t.Fatal(err)
	}
	wantLinksCount(t, s, a, 1)
}

// TestFindLinkByAlias_CampaignUTM checks that a redirect takes the
// campaign's UTM values where the link has none, and sees a change of the
// campaign at once, also through other services over the same file.
func TestFindLinkByAlias_CampaignUTM(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring", UTMSource: "c-src", UTMMedium: "c-med", UTMCampaign: "c-name"})
	mustLink(t, s, ws.ID, &link.Link{Alias: "bare", CampaignID: c.ID})
	mustLink(t, s, ws.ID, &link.Link{Alias: "part", CampaignID: c.ID, UTMSource: "own-src"})
	mustLink(t, s, ws.ID, &link.Link{Alias: "full", CampaignID: c.ID, UTMSource: "own-src", UTMMedium: "own-med", UTMCampaign: "own-name"})
	mustVerifiedDomain(t, s, ws.ID, "go.example.com")
	mustLink(t, s, ws.ID, &link.Link{Alias: "none", Domain: "go.example.com"})
	links2 := storage.NewLinkService(s.DB)
	campaigns2 := storage.NewCampaignService(s.DB)

	want := func(alias string, utm [3]string) {
		t.Helper()
		domain := ""
		if alias == "none" {
			domain = "go.example.com"
		}
		for i, svc := range []*storage.LinkService{s.Links, links2} {
			for range 2 { // from the file, then from the cache
				got, err := svc.FindLinkByAlias(ctx, domain, alias)
				if err != nil {
					t.Fatal(err)
				}
				if g := [3]string{got.UTMSource, got.UTMMedium, got.UTMCampaign}; g != utm {
					t.Fatalf("%s (service %d): utm %q, want %q", alias, i+1, g, utm)
				}
			}
		}
	}
	want("bare", [3]string{"c-src", "c-med", "c-name"})
	want("part", [3]string{"own-src", "c-med", "c-name"})
	want("full", [3]string{"own-src", "own-med", "own-name"})
	want("none", [3]string{})

	// The link's own fields stay its own elsewhere.
	links, _, err := findLinks(ctx, s.Links, link.LinkFilter{WorkspaceID: ws.ID, CampaignID: c.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if l.Alias == "bare" && (l.UTMSource != "" || l.UTMMedium != "" || l.UTMCampaign != "") {
			t.Fatalf("listed with the campaign's UTM values: %+v", l)
		}
		if got, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID); err != nil || got.UTMSource != l.UTMSource || got.UTMMedium != l.UTMMedium {
			t.Fatalf("by ID = %+v, %v", got, err)
		}
	}

	// A campaign change is seen at once, through either service.
	if _, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{UTMSource: ptr("new-src"), UTMMedium: ptr("")}); err != nil {
		t.Fatal(err)
	}
	want("bare", [3]string{"new-src", "", "c-name"})
	want("part", [3]string{"own-src", "", "c-name"})
	want("full", [3]string{"own-src", "own-med", "own-name"})
	if _, err := campaigns2.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{UTMCampaign: ptr("other-name"), UTMMedium: ptr("m2")}); err != nil {
		t.Fatal(err)
	}
	want("bare", [3]string{"new-src", "m2", "other-name"})
	want("part", [3]string{"own-src", "m2", "other-name"})

	// The link's own value wins once set, and the campaign's is back once
	// cleared; out of the campaign nothing is inherited.
	bare, err := s.Links.FindLinkByAlias(ctx, "", "bare")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := links2.UpdateLink(ctx, ws.ID, bare.ID, link.LinkUpdate{UTMMedium: ptr("own")}, nil); err != nil {
		t.Fatal(err)
	}
	want("bare", [3]string{"new-src", "own", "other-name"})
	if _, err := s.Links.UpdateLink(ctx, ws.ID, bare.ID, link.LinkUpdate{UTMMedium: ptr("")}, nil); err != nil {
		t.Fatal(err)
	}
	want("bare", [3]string{"new-src", "m2", "other-name"})
	if _, err := links2.UpdateLink(ctx, ws.ID, bare.ID, link.LinkUpdate{CampaignID: ptr("")}, nil); err != nil {
		t.Fatal(err)
	}
	want("bare", [3]string{})
	d := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "D", UTMSource: "d-src"})
	if _, err := s.Links.UpdateLink(ctx, ws.ID, bare.ID, link.LinkUpdate{CampaignID: &d.ID}, nil); err != nil {
		t.Fatal(err)
	}
	want("bare", [3]string{"d-src", "", ""})

	// Concurrent lookups while the campaign changes: once the updates are
	// done, a lookup sees the last one.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range 4 {
		svc := []*storage.LinkService{s.Links, links2}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					svc.FindLinkByAlias(ctx, "", "bare")
				}
			}
		}()
	}
	var last string
	for i := range 200 {
		last = fmt.Sprint("src-", i)
		svc := []*storage.CampaignService{s.Campaigns, campaigns2}[i%2]
		if _, err := svc.UpdateCampaign(ctx, ws.ID, d.ID, link.CampaignUpdate{UTMSource: &last}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	want("bare", [3]string{last, "", ""})
}

func TestDeleteCampaign(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	a := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "A", UTMSource: "a-src", UTMMedium: "a-med"})
	b := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "B", UTMSource: "b-src"})
	l1 := mustLink(t, s, ws.ID, &link.Link{Alias: "l1", CampaignID: a.ID})
	l2 := mustLink(t, s, ws.ID, &link.Link{Alias: "l2", CampaignID: a.ID, UTMSource: "own"})
	l3 := mustLink(t, s, ws.ID, &link.Link{Alias: "l3", CampaignID: b.ID})
	l4 := mustLink(t, s, ws.ID, &link.Link{Alias: "l4"})
	all := []*link.Link{l1, l2, l3, l4}

	var clicks []link.Click
	for i, l := range []*link.Link{l1, l1, l2, l3, l3, l3, l4} {
		clicks = append(clicks, link.Click{LinkID: l.ID, WorkspaceID: ws.ID, CampaignID: l.CampaignID,
			Time: t0.Add(time.Duration(i) * time.Minute), Visitor: uint64(i + 1)})
	}
	mustRecord(t, s, clicks...)
	end := t0.Add(24 * time.Hour)
	stats := func(scope link.StatsScope, id string) *link.Stats {
		t.Helper()
		return statsOf(t, s, link.StatsFilter{WorkspaceID: ws.ID, Scope: scope, ID: id, Start: t0.Add(-time.Hour), End: end})
	}
	if got := stats(link.ScopeCampaign, a.ID); got.Clicks != 3 || got.UniqueVisitors != 3 {
		t.Fatalf("campaign a: %+v", got)
	}
	if got := stats(link.ScopeCampaign, b.ID); got.Clicks != 3 {
		t.Fatalf("campaign b: %+v", got)
	}
	clicksBefore := map[string]int64{}
	for _, l := range all {
		got, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		clicksBefore[l.ID] = got.Clicks
	}
	if clicksBefore[l1.ID] != 2 || clicksBefore[l3.ID] != 3 {
		t.Fatalf("clicks = %v", clicksBefore)
	}
	// Cache the redirects.
	if got, err := s.Links.FindLinkByAlias(ctx, "", "l1"); err != nil || got.UTMSource != "a-src" || got.UTMMedium != "a-med" {
		t.Fatalf("l1 by alias = %+v, %v", got, err)
	}
	if got, err := s.Links.FindLinkByAlias(ctx, "", "l2"); err != nil || got.UTMSource != "own" || got.UTMMedium != "a-med" {
		t.Fatalf("l2 by alias = %+v, %v", got, err)
	}

	// With links and without detach: refused, nothing changed.
	s.Clock.Add(time.Hour)
	err := s.Campaigns.DeleteCampaign(ctx, ws.ID, a.ID, false)
	wantCode(t, err, link.ECONFLICT)
	wantLinksCount(t, s, a, 2)
	if got := findCampaign(t, s, ws.ID, a.ID); got.Name != "A" || !got.UpdatedAt.Equal(t0) {
		t.Fatalf("after refused delete: %+v", got)
	}
	for _, l := range []*link.Link{l1, l2} {
		got, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
		if err != nil || got.CampaignID != a.ID || !got.UpdatedAt.Equal(t0) {
			t.Fatalf("link after refused delete: %+v, %v", got, err)
		}
	}
	if got := stats(link.ScopeCampaign, a.ID); got.Clicks != 3 {
		t.Fatalf("campaign a after refused delete: %+v", got)
	}
	if got, err := s.Links.FindLinkByAlias(ctx, "", "l1"); err != nil || got.UTMSource != "a-src" {
		t.Fatalf("l1 by alias = %+v, %v", got, err)
	}

	// With detach: the links stay, out of the campaign, and redirect.
	if err := s.Campaigns.DeleteCampaign(ctx, ws.ID, a.ID, true); err != nil {
		t.Fatal(err)
	}
	_, err = s.Campaigns.FindCampaignByID(ctx, ws.ID, a.ID)
	wantCode(t, err, link.ENOTFOUND)
	if list, err := s.Campaigns.FindCampaigns(ctx, ws.ID); err != nil || len(list) != 1 || list[0].ID != b.ID {
		t.Fatalf("list after delete = %v, %v", list, err)
	}
	for _, l := range []*link.Link{l1, l2} {
		got, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
		if err != nil || got.CampaignID != "" || !got.UpdatedAt.Equal(s.Clock.Now()) {
			t.Fatalf("detached link = %+v, %v", got, err)
		}
	}
	for _, l := range all {
		got, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
		if err != nil || got.Clicks != clicksBefore[l.ID] {
			t.Fatalf("%s: clicks %+v, %v, want %d", l.Alias, got, err, clicksBefore[l.ID])
		}
		if st := stats(link.ScopeLink, l.ID); st.Clicks != clicksBefore[l.ID] {
			t.Fatalf("%s: link analytics %d clicks, want %d", l.Alias, st.Clicks, clicksBefore[l.ID])
		}
	}
	if got, err := s.Links.FindLinkByAlias(ctx, "", "l1"); err != nil || got.ID != l1.ID || got.CampaignID != "" ||
		got.UTMSource != "" || got.UTMMedium != "" || got.UTMCampaign != "" {
		t.Fatalf("l1 by alias after detach = %+v, %v", got, err)
	}
	if got, err := s.Links.FindLinkByAlias(ctx, "", "l2"); err != nil || got.CampaignID != "" || got.UTMSource != "own" || got.UTMMedium != "" {
		t.Fatalf("l2 by alias after detach = %+v, %v", got, err)
	}
	if got, err := s.Links.FindLinkByAlias(ctx, "", "l3"); err != nil || got.CampaignID != b.ID || got.UTMSource != "b-src" {
		t.Fatalf("l3 by alias = %+v, %v", got, err)
	}
	if ids := campaignLinks(t, s, ws.ID, a.ID); len(ids) != 0 {
		t.Fatalf("deleted campaign lists %v", ids)
	}
	if got := stats(link.ScopeCampaign, a.ID); got.Clicks != 0 || got.BotClicks != 0 || got.UniqueVisitors != 0 || len(got.Hourly) != 0 {
		t.Fatalf("deleted campaign's analytics: %+v", got)
	}
	if got := stats(link.ScopeCampaign, b.ID); got.Clicks != 3 {
		t.Fatalf("campaign b after a's delete: %+v", got)
	}
	if got := stats(link.ScopeWorkspace, ""); got.Clicks != int64(len(clicks)) {
		t.Fatalf("workspace after delete: %+v", got)
	}
	wantLinksCount(t, s, b, 1)

	// Gone: a second delete, an update, a link joining it.
	wantCode(t, s.Campaigns.DeleteCampaign(ctx, ws.ID, a.ID, true), link.ENOTFOUND)
	_, err = s.Campaigns.UpdateCampaign(ctx, ws.ID, a.ID, link.CampaignUpdate{Name: ptr("x")})
	wantCode(t, err, link.ENOTFOUND)
	_, err = s.Links.UpdateLink(ctx, ws.ID, l1.ID, link.LinkUpdate{CampaignID: &a.ID}, nil)
	wantCode(t, err, link.EINVALID)

	// An empty campaign goes without detach; a new one gets a new ID.
	e := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Empty"})
	if e.ID == a.ID {
		t.Fatalf("campaign ID %s reused", e.ID)
	}
	if err := s.Campaigns.DeleteCampaign(ctx, ws.ID, e.ID, false); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.Campaigns.DeleteCampaign(ctx, ws.ID, "cmp_", false), link.ENOTFOUND)
}

// TestCampaign_StatusKeepsLinksWorking checks that the links of a paused
// or archived campaign still redirect, with the campaign's UTM values.
func TestCampaign_StatusKeepsLinksWorking(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring", UTMCampaign: "spring"})
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "spring", CampaignID: c.ID, DestinationURL: "https://example.com/spring"})
	for _, st := range []link.CampaignStatus{link.CampaignPaused, link.CampaignArchived, link.CampaignActive} {
		got, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{Status: &st})
		if err != nil || got.Status != st {
			t.Fatalf("status %s: %+v, %v", st, got, err)
		}
		r, err := s.Links.FindLinkByAlias(ctx, "", "spring")
		if err != nil || r.ID != l.ID || r.DestinationURL != "https://example.com/spring" || r.UTMCampaign != "spring" {
			t.Fatalf("status %s: by alias = %+v, %v", st, r, err)
		}
		if got.Links != 1 {
			t.Fatalf("status %s: updated campaign counts %d links", st, got.Links)
		}
		if got := findCampaign(t, s, ws.ID, c.ID); got.Status != st || got.Links != 1 {
			t.Fatalf("status %s: found %+v", st, got)
		}
	}
}

// TestUpdateCampaign_EmptyStatus checks that a PATCH giving an empty
// status is refused like any other unknown status, rather than turned into
// the default: a paused or archived campaign must not become active.
func TestUpdateCampaign_EmptyStatus(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Old", Status: link.CampaignArchived})
	recordEvents(t, s)
	_, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{Status: ptr(link.CampaignStatus(""))})
	wantCode(t, err, link.EINVALID)
	if got := findCampaign(t, s, ws.ID, c.ID); got.Status != link.CampaignArchived {
		t.Fatalf("status = %q, want archived", got.Status)
	}
	if evs := events(t, s, ws.ID); len(evs) != 0 {
		t.Fatalf("events = %v", evs)
	}
}

// TestFindEvents_AfterLastPossibleID checks that paging after the largest
// event ID does not wrap around to the first event.
func TestFindEvents_AfterLastPossibleID(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "A"})
	recordEvents(t, s)
	if _, err := s.Campaigns.UpdateCampaign(ctx, ws.ID, c.ID, link.CampaignUpdate{Name: ptr("B")}); err != nil {
		t.Fatal(err)
	}
	last := s.DB.FormatID("evt_", math.MaxUint64)
	if _, ok := s.DB.ParseID("evt_", last); !ok {
		t.Fatalf("%s does not parse", last)
	}
	page, err := s.Campaigns.FindEvents(ctx, ws.ID, last, 10)
	if err != nil || len(page) != 0 {
		t.Fatalf("after %s: %v, %v; want no events", last, page, err)
	}
}

// TestDeleteCampaign_ConflictMessage checks that the refusal counts the
// campaign's links in words: "1 link", "2 links".
func TestDeleteCampaign_ConflictMessage(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	for _, want := range []string{"still has 1 link:", "still has 2 links:"} {
		mustLink(t, s, ws.ID, &link.Link{CampaignID: c.ID})
		err := s.Campaigns.DeleteCampaign(ctx, ws.ID, c.ID, false)
		wantCode(t, err, link.ECONFLICT)
		if msg := link.ErrorMessage(err); !strings.Contains(msg, want) {
			t.Fatalf("conflict message %q, want it to say %q", msg, want)
		}
	}
}
