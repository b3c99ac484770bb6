package storetest

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var campaignTests = []test{
	{"CreateFindList", testCampaignsFind},
	{"Update", testCampaignsUpdate},
	{"Delete", testCampaignsDelete},
}

var qrTests = []test{
	{"CreateFindUpdateDelete", testQRCodes},
}

var domainTests = []test{
	{"CreateFindList", testDomainsFind},
	{"Verified", testDomainsVerified},
	{"Update", testDomainsUpdate},
	{"DeleteWithLinks", testDomainsDelete},
	{"TakeOverUnverified", testDomainsTakeOver},
}

var blocklistTests = []test{
	{"AddListDelete", testBlocklist},
}

var importTests = []test{
	{"DryRunRenameRerun", testImports},
}

var certTests = []test{
	{"GetPutDelete", testCerts},
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

func testQRCodes(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	a := e.link(ws.ID, &link.Link{Alias: "a"})
	b := e.link(ws.ID, &link.Link{Alias: "b"})
	foreign := e.link(other.ID, &link.Link{Alias: "f"})

	q1 := &link.QRCode{WorkspaceID: ws.ID, LinkID: a.ID, Name: "one", Format: "png", Size: 512, Margin: 4, Level: "M", Foreground: "#000000", Background: "#ffffff"}
	if err := e.QRCodes.CreateQRCode(e.ctx, q1); err != nil {
		t.Fatal(err)
	}
	if q1.ID == "" {
		t.Fatal("CreateQRCode set no ID")
	}
	e.clock.Add(time.Minute)
	q2 := *q1
	q2.ID, q2.LinkID, q2.Name = "", b.ID, "two"
	if err := e.QRCodes.CreateQRCode(e.ctx, &q2); err != nil {
		t.Fatal(err)
	}
	for _, lid := range []string{foreign.ID, "lnk_unknown"} {
		bad := *q1
		bad.ID, bad.LinkID = "", lid
		err := e.QRCodes.CreateQRCode(e.ctx, &bad)
		wantCode(t, err, link.EINVALID)
		if f := link.ErrorFields(err); len(f) != 1 || f[0].Field != "link_id" {
			t.Fatalf("a design of link %s: fields %v, want link_id", lid, f)
		}
	}
	got, err := e.QRCodes.FindQRCodeByID(e.ctx, ws.ID, q1.ID)
	if err != nil || got.Name != "one" || got.LinkID != a.ID || got.Size != 512 || got.Margin != 4 || got.Level != "M" ||
		got.Format != "png" || got.Foreground != "#000000" || got.Background != "#ffffff" {
		t.Fatalf("FindQRCodeByID = %+v, %v", got, err)
	}
	_, err = e.QRCodes.FindQRCodeByID(e.ctx, other.ID, q1.ID)
	wantCode(t, err, link.ENOTFOUND)
	if all, err := e.QRCodes.FindQRCodes(e.ctx, ws.ID, ""); err != nil || len(all) != 2 || all[0].ID != q2.ID || all[1].ID != q1.ID {
		t.Fatalf("FindQRCodes = %+v, %v; want two, one (newest first)", all, err)
	}
	if ofA, err := e.QRCodes.FindQRCodes(e.ctx, ws.ID, a.ID); err != nil || len(ofA) != 1 || ofA[0].ID != q1.ID {
		t.Fatalf("FindQRCodes of link a = %+v, %v", ofA, err)
	}
	if none, _ := e.QRCodes.FindQRCodes(e.ctx, other.ID, ""); len(none) != 0 {
		t.Fatalf("another workspace lists %+v", none)
	}

	upd, err := e.QRCodes.UpdateQRCode(e.ctx, ws.ID, q1.ID, link.QRCodeUpdate{Name: ptr("renamed"), Size: ptr(1024), LinkID: &b.ID}, nil)
	if err != nil || upd.Name != "renamed" || upd.Size != 1024 || upd.LinkID != b.ID || upd.Level != "M" {
		t.Fatalf("UpdateQRCode = %+v, %v", upd, err)
	}
	_, err = e.QRCodes.UpdateQRCode(e.ctx, ws.ID, q1.ID, link.QRCodeUpdate{LinkID: &foreign.ID}, nil)
	wantCode(t, err, link.EINVALID)
	refused := link.Errorf(link.EINVALID, "size: too large")
	_, err = e.QRCodes.UpdateQRCode(e.ctx, ws.ID, q1.ID, link.QRCodeUpdate{Size: ptr(99999)}, func(*link.QRCode) error { return refused })
	wantCode(t, err, link.EINVALID)
	_, err = e.QRCodes.UpdateQRCode(e.ctx, other.ID, q1.ID, link.QRCodeUpdate{Name: ptr("x")}, nil)
	wantCode(t, err, link.ENOTFOUND)
	if got, _ := e.QRCodes.FindQRCodeByID(e.ctx, ws.ID, q1.ID); got.LinkID != b.ID || got.Size != 1024 {
		t.Fatalf("after refused updates: %+v", got)
	}

	wantCode(t, e.QRCodes.DeleteQRCode(e.ctx, other.ID, q1.ID), link.ENOTFOUND)
	if err := e.QRCodes.DeleteQRCode(e.ctx, ws.ID, q1.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.QRCodes.DeleteQRCode(e.ctx, ws.ID, q1.ID), link.ENOTFOUND)
	e.restart()
	if all, _ := e.QRCodes.FindQRCodes(e.ctx, ws.ID, ""); len(all) != 1 || all[0].ID != q2.ID {
		t.Fatalf("after a delete and a restart: %+v", all)
	}
}

func testDomainsFind(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	a := &link.Domain{WorkspaceID: ws.ID, Hostname: "go.example.com", RootRedirectURL: "https://example.com/", VerificationToken: link.NewVerificationToken()}
	if err := e.Domains.CreateDomain(e.ctx, a, 0); err != nil {
		t.Fatal(err)
	}
	if a.ID == "" || a.Verified || !a.CreatedAt.Equal(e.now()) {
		t.Fatalf("created domain = %+v", a)
	}
	e.clock.Add(time.Minute)
	b := e.domain(ws.ID, "b.example.com", false)
	e.domain(other.ID, "other.example.com", false)

	got, err := e.Domains.FindDomainByID(e.ctx, ws.ID, a.ID)
	if err != nil || got.Hostname != "go.example.com" || got.RootRedirectURL != "https://example.com/" || got.VerificationToken != a.VerificationToken ||
		got.WorkspaceID != ws.ID || got.Verified || got.VerifiedAt != nil || got.Links != 0 {
		t.Fatalf("FindDomainByID = %+v, %v", got, err)
	}
	for _, tt := range [][2]string{{other.ID, a.ID}, {ws.ID, "dom_unknown"}} {
		_, err := e.Domains.FindDomainByID(e.ctx, tt[0], tt[1])
		wantCode(t, err, link.ENOTFOUND)
	}
	if list, err := e.Domains.FindDomains(e.ctx, ws.ID); err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("FindDomains = %+v, %v; want b, go (newest first)", list, err)
	}
	_, err = e.Domains.FindDomains(e.ctx, "ws_unknown")
	wantCode(t, err, link.ENOTFOUND)
	// A hostname is one workspace's in the whole instance.
	for _, wsID := range []string{ws.ID, other.ID} {
		err := e.Domains.CreateDomain(e.ctx, &link.Domain{WorkspaceID: wsID, Hostname: "go.example.com", VerificationToken: link.NewVerificationToken()}, 0)
		wantCode(t, err, link.ECONFLICT)
	}
	wantCode(t, e.Domains.CreateDomain(e.ctx, &link.Domain{WorkspaceID: "ws_unknown", Hostname: "new.example.com", VerificationToken: link.NewVerificationToken()}, 0), link.ENOTFOUND)
	if got, err := e.Domains.FindDomainByHostname(e.ctx, "other.example.com"); err != nil || got.WorkspaceID != other.ID || got.Verified {
		t.Fatalf("FindDomainByHostname = %+v, %v", got, err)
	}
	_, err = e.Domains.FindDomainByHostname(e.ctx, "nothing.example.com")
	wantCode(t, err, link.ENOTFOUND)
	if es := e.audit(link.AuditFilter{WorkspaceID: ws.ID, Action: link.AuditDomainAdded}); len(es) != 2 {
		t.Fatalf("%d domain.added entries, want 2", len(es))
	}
}

func testDomainsVerified(t *testing.T, e *env) {
	_, ws := e.setup()
	d := e.domain(ws.ID, "go.example.com", false)
	_, err := e.Domains.FindVerifiedDomain(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)

	e.clock.Add(time.Hour)
	at := e.now()
	v, err := e.Domains.SetDomainVerified(e.ctx, ws.ID, d.ID, true)
	if err != nil || !v.Verified || v.VerifiedAt == nil || !v.VerifiedAt.Equal(at) {
		t.Fatalf("SetDomainVerified = %+v, %v", v, err)
	}
	if got, err := e.Domains.FindVerifiedDomain(e.ctx, "go.example.com"); err != nil || got.ID != d.ID {
		t.Fatalf("FindVerifiedDomain = %+v, %v", got, err)
	}
	// Verifying again keeps the first time.
	e.clock.Add(time.Hour)
	if v, err := e.Domains.SetDomainVerified(e.ctx, ws.ID, d.ID, true); err != nil || !v.VerifiedAt.Equal(at) {
		t.Fatalf("verified again: %+v, %v", v, err)
	}
	// A change is seen by the next lookup.
	nf := "https://example.com/404"
	if _, err := e.Domains.UpdateDomain(e.ctx, ws.ID, d.ID, link.DomainUpdate{NotFoundURL: &nf}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Domains.FindVerifiedDomain(e.ctx, "go.example.com"); err != nil || got.NotFoundURL != nf {
		t.Fatalf("FindVerifiedDomain after an update = %+v, %v", got, err)
	}
	e.restart()
	if got, err := e.Domains.FindVerifiedDomain(e.ctx, "go.example.com"); err != nil || !got.Verified || !got.VerifiedAt.Equal(at) {
		t.Fatalf("after a restart: %+v, %v", got, err)
	}
	v, err = e.Domains.SetDomainVerified(e.ctx, ws.ID, d.ID, false)
	if err != nil || v.Verified || v.VerifiedAt != nil {
		t.Fatalf("unverified = %+v, %v", v, err)
	}
	_, err = e.Domains.FindVerifiedDomain(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.Domains.SetDomainVerified(e.ctx, ws.ID, "dom_unknown", true)
	wantCode(t, err, link.ENOTFOUND)
	if got := actions(e.audit(link.AuditFilter{WorkspaceID: ws.ID, Target: d.ID})); !slices.Contains(got, link.AuditDomainVerified) || !slices.Contains(got, link.AuditDomainUnverified) {
		t.Fatalf("the domain's entries %v lack domain.verified or domain.unverified", got)
	}
}

func testDomainsUpdate(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	d := e.domain(ws.ID, "go.example.com", false)
	root := "https://example.com/"
	bad := errors.New("refused")
	var seen *link.Domain
	_, err := e.Domains.UpdateDomain(e.ctx, ws.ID, d.ID, link.DomainUpdate{RootRedirectURL: &root}, func(d *link.Domain) error { seen = d; return bad })
	if err != bad {
		t.Fatalf("UpdateDomain = %v, want validate's error unchanged", err)
	}
	if seen == nil || seen.RootRedirectURL != root {
		t.Fatalf("validate saw %+v, want the domain after the update", seen)
	}
	if got, _ := e.Domains.FindDomainByID(e.ctx, ws.ID, d.ID); got.RootRedirectURL != "" {
		t.Fatalf("an update validate refused was written: %+v", got)
	}
	e.clock.Add(time.Minute)
	got, err := e.Domains.UpdateDomain(e.ctx, ws.ID, d.ID, link.DomainUpdate{RootRedirectURL: &root, Verified: ptr(true)}, nil)
	if err != nil || got.RootRedirectURL != root || !got.Verified || got.VerifiedAt == nil || !got.UpdatedAt.Equal(e.now()) {
		t.Fatalf("UpdateDomain = %+v, %v", got, err)
	}
	if got, err := e.Domains.UpdateDomain(e.ctx, ws.ID, d.ID, link.DomainUpdate{RootRedirectURL: ptr("")}, nil); err != nil || got.RootRedirectURL != "" {
		t.Fatalf("cleared = %+v, %v", got, err)
	}
	_, err = e.Domains.UpdateDomain(e.ctx, other.ID, d.ID, link.DomainUpdate{RootRedirectURL: &root}, nil)
	wantCode(t, err, link.ENOTFOUND)
}

func testDomainsDelete(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	d := e.domain(ws.ID, "go.example.com", true)
	l1 := e.link(ws.ID, &link.Link{Alias: "x", Domain: "go.example.com"})
	l2 := e.link(ws.ID, &link.Link{Domain: "go.example.com"})
	e.link(ws.ID, &link.Link{Alias: "x"})
	if got, err := e.Domains.FindDomainByID(e.ctx, ws.ID, d.ID); err != nil || got.Links != 2 {
		t.Fatalf("the domain's links = %+v, %v; want 2", got, err)
	}
	if list, _ := e.Domains.FindDomains(e.ctx, ws.ID); len(list) != 1 || list[0].Links != 2 {
		t.Fatalf("FindDomains counts %+v", list)
	}
	wantCode(t, e.Domains.DeleteDomain(e.ctx, ws.ID, d.ID), link.ECONFLICT)
	wantCode(t, e.Domains.DeleteDomain(e.ctx, other.ID, d.ID), link.ENOTFOUND)
	for _, l := range []*link.Link{l1, l2} {
		if err := e.Links.DeleteLink(e.ctx, ws.ID, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := e.Domains.FindDomainByID(e.ctx, ws.ID, d.ID); got.Links != 0 {
		t.Fatalf("the domain counts %d links after their deletion", got.Links)
	}
	if err := e.Domains.DeleteDomain(e.ctx, ws.ID, d.ID); err != nil {
		t.Fatal(err)
	}
	_, err := e.Domains.FindDomainByID(e.ctx, ws.ID, d.ID)
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.Domains.FindVerifiedDomain(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.Domains.FindDomainByHostname(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	wantCode(t, e.Domains.DeleteDomain(e.ctx, ws.ID, d.ID), link.ENOTFOUND)
	// The hostname is free again, for any workspace.
	e.domain(other.ID, "go.example.com", false)
}

func testDomainsTakeOver(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	held := e.domain(ws.ID, "go.example.com", false)
	const ttl = 24 * time.Hour
	claim := func() error {
		return e.Domains.CreateDomain(e.ctx, &link.Domain{WorkspaceID: other.ID, Hostname: "go.example.com", VerificationToken: link.NewVerificationToken()}, ttl)
	}
	e.clock.Add(ttl - time.Second)
	wantCode(t, claim(), link.ECONFLICT)
	e.clock.Add(time.Second)
	if err := claim(); err != nil {
		t.Fatalf("a claim past the unverified TTL: %v", err)
	}
	if got, err := e.Domains.FindDomainByHostname(e.ctx, "go.example.com"); err != nil || got.WorkspaceID != other.ID {
		t.Fatalf("the hostname after a take-over = %+v, %v; want the other workspace's", got, err)
	}
	_, err := e.Domains.FindDomainByID(e.ctx, ws.ID, held.ID)
	wantCode(t, err, link.ENOTFOUND)
	// A verified domain is never taken over.
	e.domain(ws.ID, "b.example.com", true)
	e.clock.Add(10 * ttl)
	err = e.Domains.CreateDomain(e.ctx, &link.Domain{WorkspaceID: other.ID, Hostname: "b.example.com", VerificationToken: link.NewVerificationToken()}, ttl)
	wantCode(t, err, link.ECONFLICT)
}

func testBlocklist(t *testing.T, e *env) {
	admin, _ := e.setup()
	if list, err := e.Blocklist.ListBlockEntries(e.ctx); err != nil || len(list) != 0 {
		t.Fatalf("a new store's blocklist = %+v, %v", list, err)
	}
	for _, entry := range []string{"evil.example", "bad.example/path*"} {
		if err := e.Blocklist.AddBlockEntry(e.ctx, &link.BlockEntry{Entry: entry, CreatedBy: admin.ID}); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(time.Minute)
	}
	wantCode(t, e.Blocklist.AddBlockEntry(e.ctx, &link.BlockEntry{Entry: "evil.example", CreatedBy: admin.ID}), link.ECONFLICT)
	list, err := e.Blocklist.ListBlockEntries(e.ctx)
	if err != nil || len(list) != 2 || list[0].Entry != "bad.example/path*" || list[1].Entry != "evil.example" ||
		list[1].CreatedBy != admin.ID || !list[1].CreatedAt.Equal(t0) {
		t.Fatalf("ListBlockEntries = %+v, %v; want both, in entry order", list, err)
	}
	if err := e.Blocklist.DeleteBlockEntry(e.ctx, "evil.example"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Blocklist.DeleteBlockEntry(e.ctx, "evil.example"), link.ENOTFOUND)
	e.restart()
	if list, err := e.Blocklist.ListBlockEntries(e.ctx); err != nil || len(list) != 1 || list[0].Entry != "bad.example/path*" {
		t.Fatalf("after a delete and a restart: %+v, %v", list, err)
	}
}

func testImports(t *testing.T, e *env) {
	_, ws := e.setup()
	e.webhook(ws.ID, link.EventTypes...)
	created := time.Date(2021, 4, 1, 8, 30, 0, 0, time.UTC)
	clickAt := time.Date(2021, 4, 2, 9, 15, 0, 0, time.UTC)
	batch := func(dry bool) *link.ImportBatch {
		b := &link.ImportBatch{Source: "test", DryRun: dry, Items: []link.ImportItem{
			{Key: "a", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/a", Alias: "a", CreatedAt: created, Tags: []string{"old"}, RedirectCode: 302},
				Clicks:  []link.Click{{Time: clickAt, Referrer: "direct", Browser: "Firefox", OS: "Linux", Device: "desktop", Country: "DE", Visitor: 1}},
				Undated: 1000, UndatedAt: created},
			{Key: "b", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/b", Alias: "a", RedirectCode: 302}, Rename: true},
			{Key: "c", Link: link.Link{WorkspaceID: ws.ID, DestinationURL: "https://example.com/c", Alias: "a", RedirectCode: 302}},
		}}
		if dry {
			b.Claimed = link.NewNameSet()
		}
		return b
	}
	dry := batch(true)
	if err := e.Imports.ImportLinks(e.ctx, ws.ID, dry); err != nil {
		t.Fatal(err)
	}
	if got := []link.ImportStatus{dry.Items[0].Status, dry.Items[1].Status, dry.Items[2].Status}; !slices.Equal(got, []link.ImportStatus{link.ImportImported, link.ImportImported, link.ImportSkipped}) {
		t.Fatalf("dry run: %v", got)
	}
	if _, err := e.Links.FindLinkByAlias(e.ctx, "", "a"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("a dry run stored a link: %v", err)
	}

	b := batch(false)
	if err := e.Imports.ImportLinks(e.ctx, ws.ID, b); err != nil {
		t.Fatal(err)
	}
	if b.Items[0].Status != link.ImportImported || b.Items[0].Alias != "a" || b.Items[0].LinkID == "" ||
		b.Items[1].Status != link.ImportImported || b.Items[1].Alias == "a" || b.Items[1].Alias == "" ||
		b.Items[2].Status != link.ImportSkipped || b.Items[2].Reason == "" {
		t.Fatalf("imported items: %+v", b.Items)
	}
	l, err := e.Links.FindLinkByID(e.ctx, ws.ID, b.Items[0].LinkID)
	if err != nil || l.Clicks != 1001 || !l.CreatedAt.Equal(created) || !slices.Equal(l.Tags, []string{"old"}) {
		t.Fatalf("imported link = %+v, %v; want 1001 clicks, created %v", l, err, created)
	}
	if got, err := e.Links.FindLinkByAlias(e.ctx, "", b.Items[1].Alias); err != nil || got.ID != b.Items[1].LinkID || got.DestinationURL != "https://example.com/b" {
		t.Fatalf("the renamed link = %+v, %v", got, err)
	}
	st := e.stats(link.StatsFilter{WorkspaceID: ws.ID, Scope: link.ScopeLink, ID: l.ID,
		Start: time.Date(2021, 4, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2021, 4, 3, 0, 0, 0, 0, time.UTC)})
	if st.Clicks != 1001 || len(st.Hourly) != 2 || st.Hourly[0].Clicks != 1000 || st.Hourly[1].Clicks != 1 {
		t.Fatalf("imported analytics = %+v", st)
	}
	if ws, err := e.Workspaces.FindWorkspaceByID(e.ctx, ws.ID); err != nil || !ws.AnalyticsSince().Equal(created) {
		t.Fatalf("the workspace's analytics start at %v, %v; want the imported link's creation %v", ws.AnalyticsSince(), err, created)
	}

	// A rerun adds nothing.
	again := batch(false)
	if err := e.Imports.ImportLinks(e.ctx, ws.ID, again); err != nil {
		t.Fatal(err)
	}
	for i, it := range again.Items[:2] {
		if it.Status != link.ImportExists || it.LinkID != b.Items[i].LinkID {
			t.Fatalf("rerun item %d: %+v", i, it)
		}
	}
	if got := e.clicksOf(l); got != 1001 {
		t.Fatalf("after a rerun the link counts %d clicks", got)
	}
	if p := e.page(link.LinkFilter{WorkspaceID: ws.ID}); p.Total != 2 {
		t.Fatalf("%d links after a rerun, want 2", p.Total)
	}
	// Imports send no webhook events.
	if evs := e.eventsOf(ws.ID); len(evs) != 0 {
		t.Fatalf("an import wrote events: %+v", evs)
	}
	wantCode(t, e.Imports.ImportLinks(e.ctx, "ws_unknown", batch(false)), link.ENOTFOUND)
}

func testCerts(t *testing.T, e *env) {
	_, err := e.Certs.Get(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	pem := []byte("-----BEGIN EC PRIVATE KEY-----\n...")
	if err := e.Certs.Put(e.ctx, "go.example.com", pem); err != nil {
		t.Fatal(err)
	}
	if err := e.Certs.Put(e.ctx, "acme_account+key", []byte("account")); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if got, err := e.Certs.Get(e.ctx, "go.example.com"); err != nil || !bytes.Equal(got, pem) {
		t.Fatalf("after a restart: %q, %v", got, err)
	}
	if err := e.Certs.Put(e.ctx, "go.example.com", []byte("renewed")); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.Certs.Get(e.ctx, "go.example.com"); string(got) != "renewed" {
		t.Fatalf("replaced: %q", got)
	}
	if err := e.Certs.Delete(e.ctx, "go.example.com"); err != nil {
		t.Fatal(err)
	}
	if err := e.Certs.Delete(e.ctx, "never.example.com"); err != nil {
		t.Fatalf("deleting a missing name: %v", err)
	}
	_, err = e.Certs.Get(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	if got, err := e.Certs.Get(e.ctx, "acme_account+key"); err != nil || string(got) != "account" {
		t.Fatalf("the other name: %q, %v", got, err)
	}
}
