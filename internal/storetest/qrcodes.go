package storetest

import (
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var qrTests = []test{
	{"CreateFindUpdateDelete", testQRCodes},
	{"Logo", testQRCodeLogo},
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

// testQRCodeLogo sets, reads, replaces and removes a design's logo: the
// digest is on every answer, the bytes come back with FindQRCodeLogo only,
// and deleting the design deletes its logo.
func testQRCodeLogo(t *testing.T, e *env) {
	admin, ws := e.setup()
	other := e.workspace("Other", admin)
	a := e.link(ws.ID, &link.Link{Alias: "a"})
	q := &link.QRCode{WorkspaceID: ws.ID, LinkID: a.ID, Name: "with logo", Format: "png", Size: 512, Margin: 4, Level: "M", Foreground: "#000000", Background: "#ffffff"}
	if err := e.QRCodes.CreateQRCode(e.ctx, q); err != nil {
		t.Fatal(err)
	}
	if q.LogoDigest != "" {
		t.Fatalf("a new design has logo digest %q", q.LogoDigest)
	}
	if got, logo, err := e.QRCodes.FindQRCodeLogo(e.ctx, ws.ID, q.ID); err != nil || logo != nil || got.LogoDigest != "" || got.Name != "with logo" {
		t.Fatalf("FindQRCodeLogo of a design without logo = %+v, %d bytes, %v", got, len(logo), err)
	}

	e.clock.Add(time.Minute)
	first := []byte("\x89PNG\r\n\x1a\nfirst logo \x00\xff")
	set, err := e.QRCodes.SetQRCodeLogo(e.ctx, ws.ID, q.ID, first)
	if err != nil {
		t.Fatal(err)
	}
	if set.LogoDigest != link.LogoDigest(first) || set.LogoDigest == "" || !set.UpdatedAt.After(q.UpdatedAt) || set.Name != "with logo" {
		t.Fatalf("SetQRCodeLogo = %+v; want digest %s and a later updated_at", set, link.LogoDigest(first))
	}
	got, logo, err := e.QRCodes.FindQRCodeLogo(e.ctx, ws.ID, q.ID)
	if err != nil || string(logo) != string(first) || got.LogoDigest != set.LogoDigest {
		t.Fatalf("FindQRCodeLogo = %+v, %q, %v", got, logo, err)
	}
	if byID, err := e.QRCodes.FindQRCodeByID(e.ctx, ws.ID, q.ID); err != nil || byID.LogoDigest != set.LogoDigest {
		t.Fatalf("FindQRCodeByID = %+v, %v; want the logo digest", byID, err)
	}
	if all, err := e.QRCodes.FindQRCodes(e.ctx, ws.ID, ""); err != nil || len(all) != 1 || all[0].LogoDigest != set.LogoDigest {
		t.Fatalf("FindQRCodes = %+v, %v; want the logo digest", all, err)
	}
	// Another workspace sees neither the design nor its logo.
	_, _, err = e.QRCodes.FindQRCodeLogo(e.ctx, other.ID, q.ID)
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.QRCodes.SetQRCodeLogo(e.ctx, other.ID, q.ID, first)
	wantCode(t, err, link.ENOTFOUND)
	_, err = e.QRCodes.SetQRCodeLogo(e.ctx, ws.ID, "qr_unknown", first)
	wantCode(t, err, link.ENOTFOUND)

	// An update of the options keeps the logo.
	if upd, err := e.QRCodes.UpdateQRCode(e.ctx, ws.ID, q.ID, link.QRCodeUpdate{Name: ptr("renamed")}, nil); err != nil || upd.LogoDigest != set.LogoDigest {
		t.Fatalf("UpdateQRCode = %+v, %v; want the logo kept", upd, err)
	}
	second := []byte("\x89PNG\r\n\x1a\nsecond")
	if set2, err := e.QRCodes.SetQRCodeLogo(e.ctx, ws.ID, q.ID, second); err != nil || set2.LogoDigest != link.LogoDigest(second) {
		t.Fatalf("replacing the logo = %+v, %v", set2, err)
	}
	if _, logo, _ := e.QRCodes.FindQRCodeLogo(e.ctx, ws.ID, q.ID); string(logo) != string(second) {
		t.Fatalf("after replacing, the logo is %q", logo)
	}

	removed, err := e.QRCodes.SetQRCodeLogo(e.ctx, ws.ID, q.ID, nil)
	if err != nil || removed.LogoDigest != "" {
		t.Fatalf("removing the logo = %+v, %v", removed, err)
	}
	if _, logo, err := e.QRCodes.FindQRCodeLogo(e.ctx, ws.ID, q.ID); err != nil || logo != nil {
		t.Fatalf("after removing, FindQRCodeLogo = %q, %v", logo, err)
	}

	// Deleting a design deletes its logo: a design created later has none.
	if _, err := e.QRCodes.SetQRCodeLogo(e.ctx, ws.ID, q.ID, first); err != nil {
		t.Fatal(err)
	}
	if err := e.QRCodes.DeleteQRCode(e.ctx, ws.ID, q.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = e.QRCodes.FindQRCodeLogo(e.ctx, ws.ID, q.ID)
	wantCode(t, err, link.ENOTFOUND)
}
