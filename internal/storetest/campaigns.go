package storetest

import (
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var campaignTests = []test{
	{"CreateFindList", testCampaignsFind},
	{"Update", testCampaignsUpdate},
	{"Delete", testCampaignsDelete},
}

func testCampaignsFind(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	a := e.campaign(ws.ID, &link.Campaign{Name: " Spring ", UTMSource: "news"})
	if a.ID == "" || a.Name != "Spring" || a.Status != link.CampaignActive || !a.CreatedAt.Equal(e.now()) {
		t.Fatalf("created campaign = %+v", a)
	}
	e.clock.Add(time.Minute)
	b := e.campaign(ws.ID, &link.Campaign{Name: "Summer", Status: link.CampaignPaused})
	e.campaign(other.ID, &link.Campaign{Name: "Theirs"})
	e.link(ws.ID, &link.Link{CampaignID: a.ID})
	e.link(ws.ID, &link.Link{CampaignID: a.ID})

	got, err := e.Campaigns.FindCampaignByID(e.ctx, ws.ID, a.ID)
	if err != nil || got.Name != "Spring" || got.UTMSource != "news" || got.Links != 2 || got.WorkspaceID != ws.ID {
		t.Fatalf("FindCampaignByID = %+v, %v; want Spring with 2 links", got, err)
	}
	for _, tt := range [][2]string{{other.ID, a.ID}, {ws.ID, "cmp_unknown"}} {
		_, err := e.Campaigns.FindCampaignByID(e.ctx, tt[0], tt[1])
		wantCode(t, err, link.ENOTFOUND)
	}
	list, err := e.Campaigns.FindCampaigns(e.ctx, ws.ID)
	if err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID || list[1].Links != 2 || list[0].Status != link.CampaignPaused {
		t.Fatalf("FindCampaigns = %+v, %v; want Summer, Spring (newest first)", list, err)
	}
	e.restart()
	if got, err := e.Campaigns.FindCampaignByID(e.ctx, ws.ID, b.ID); err != nil || got.Name != "Summer" || got.Status != link.CampaignPaused {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
}

func testCampaignsUpdate(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	c := e.campaign(ws.ID, &link.Campaign{Name: "Spring", UTMSource: "news"})
	e.clock.Add(time.Minute)
	got, err := e.Campaigns.UpdateCampaign(e.ctx, ws.ID, c.ID, link.CampaignUpdate{Name: ptr(" Autumn "), Status: ptr(link.CampaignArchived)})
	if err != nil || got.Name != "Autumn" || got.Status != link.CampaignArchived || got.UTMSource != "news" || !got.UpdatedAt.Equal(e.now()) {
		t.Fatalf("UpdateCampaign = %+v, %v", got, err)
	}
	for _, upd := range []link.CampaignUpdate{{Name: ptr("")}, {Status: ptr(link.CampaignStatus("gone"))}, {Status: ptr(link.CampaignStatus(""))}} {
		_, err := e.Campaigns.UpdateCampaign(e.ctx, ws.ID, c.ID, upd)
		wantCode(t, err, link.EINVALID)
	}
	_, err = e.Campaigns.UpdateCampaign(e.ctx, other.ID, c.ID, link.CampaignUpdate{Name: ptr("X")})
	wantCode(t, err, link.ENOTFOUND)
	if got, _ := e.Campaigns.FindCampaignByID(e.ctx, ws.ID, c.ID); got.Name != "Autumn" || got.Status != link.CampaignArchived {
		t.Fatalf("after refused updates: %+v", got)
	}
}

func testCampaignsDelete(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	c := e.campaign(ws.ID, &link.Campaign{Name: "Spring"})
	l := e.link(ws.ID, &link.Link{CampaignID: c.ID})
	wantCode(t, e.Campaigns.DeleteCampaign(e.ctx, ws.ID, c.ID, false), link.ECONFLICT)
	wantCode(t, e.Campaigns.DeleteCampaign(e.ctx, other.ID, c.ID, true), link.ENOTFOUND)
	if err := e.Campaigns.DeleteCampaign(e.ctx, ws.ID, c.ID, true); err != nil {
		t.Fatal(err)
	}
	_, err := e.Campaigns.FindCampaignByID(e.ctx, ws.ID, c.ID)
	wantCode(t, err, link.ENOTFOUND)
	wantCode(t, e.Campaigns.DeleteCampaign(e.ctx, ws.ID, c.ID, true), link.ENOTFOUND)
	if got, err := e.Links.FindLinkByID(e.ctx, ws.ID, l.ID); err != nil || got.CampaignID != "" {
		t.Fatalf("the detached link = %+v, %v; want it out of the campaign", got, err)
	}
	// An empty campaign goes without detach.
	empty := e.campaign(ws.ID, &link.Campaign{Name: "Empty"})
	if err := e.Campaigns.DeleteCampaign(e.ctx, ws.ID, empty.ID, false); err != nil {
		t.Fatal(err)
	}
	if list, _ := e.Campaigns.FindCampaigns(e.ctx, ws.ID); len(list) != 0 {
		t.Fatalf("campaigns left: %+v", list)
	}
}
