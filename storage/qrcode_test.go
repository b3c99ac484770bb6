package storage_test

import (
	"context"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

func TestQRCodes(t *testing.T) {
	s, admin, ws := mustSetup(t)
	other := mustWorkspace(t, s, "Other", admin.ID)
	ctx := context.Background()
	svc := storage.NewQRCodeService(s.DB)
	a := mustLink(t, s, ws.ID, &link.Link{Alias: "a"})
	b := mustLink(t, s, ws.ID, &link.Link{Alias: "b"})
	foreign := mustLink(t, s, other.ID, &link.Link{Alias: "f"})

	q1 := &link.QRCode{WorkspaceID: ws.ID, LinkID: a.ID, Name: "one", Format: "png", Size: 512, Margin: 4, Level: "M", Foreground: "#000000", Background: "#ffffff"}
	if err := svc.CreateQRCode(ctx, q1); err != nil {
		t.Fatal(err)
	}
	q2 := *q1
	q2.ID, q2.LinkID, q2.Name = "", b.ID, "two"
	if err := svc.CreateQRCode(ctx, &q2); err != nil {
		t.Fatal(err)
	}
	// A link of another workspace, or none, cannot be used.
	for _, lid := range []string{foreign.ID, "lnk_zzz", "nope"} {
		bad := *q1
		bad.ID, bad.LinkID = "", lid
		err := svc.CreateQRCode(ctx, &bad)
		wantCode(t, err, link.EINVALID)
		if f := link.ErrorFields(err); len(f) != 1 || f[0].Field != "link_id" {
			t.Fatalf("fields: %v", f)
		}
	}
	all, err := svc.FindQRCodes(ctx, ws.ID, "")
	if err != nil || len(all) != 2 || all[0].Name != "two" || all[1].Name != "one" {
		t.Fatalf("list: %v %v", all, err)
	}
	ofA, _ := svc.FindQRCodes(ctx, ws.ID, a.ID)
	if len(ofA) != 1 || ofA[0].ID != q1.ID {
		t.Fatalf("list of a: %v", ofA)
	}
	if none, _ := svc.FindQRCodes(ctx, other.ID, ""); len(none) != 0 {
		t.Fatalf("other workspace lists %v", none)
	}
	_, err = svc.FindQRCodeByID(ctx, other.ID, q1.ID)
	wantCode(t, err, link.ENOTFOUND)

	name, size := "renamed", 1024
	got, err := svc.UpdateQRCode(ctx, ws.ID, q1.ID, link.QRCodeUpdate{Name: &name, Size: &size, LinkID: &b.ID}, nil)
	if err != nil || got.Name != "renamed" || got.Size != 1024 || got.LinkID != b.ID || got.Level != "M" {
		t.Fatalf("update: %+v %v", got, err)
	}
	// A refused update changes nothing.
	_, err = svc.UpdateQRCode(ctx, ws.ID, q1.ID, link.QRCodeUpdate{LinkID: &foreign.ID}, nil)
	wantCode(t, err, link.EINVALID)
	empty := ""
	_, err = svc.UpdateQRCode(ctx, ws.ID, q1.ID, link.QRCodeUpdate{Name: &empty}, nil)
	wantCode(t, err, link.EINVALID)
	if got, _ := svc.FindQRCodeByID(ctx, ws.ID, q1.ID); got.Name != "renamed" || got.LinkID != b.ID {
		t.Fatalf("after refused updates: %+v", got)
	}
	_, err = svc.UpdateQRCode(ctx, other.ID, q1.ID, link.QRCodeUpdate{Name: &name}, nil)
	wantCode(t, err, link.ENOTFOUND)

	wantCode(t, svc.DeleteQRCode(ctx, other.ID, q1.ID), link.ENOTFOUND)
	if err := svc.DeleteQRCode(ctx, ws.ID, q1.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, svc.DeleteQRCode(ctx, ws.ID, q1.ID), link.ENOTFOUND)
	if left, _ := svc.FindQRCodes(ctx, ws.ID, ""); len(left) != 1 {
		t.Fatalf("left: %v", left)
	}
}
