package storage

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var errRollback = errors.New("rollback")

// TestCheckIndexes_Campaigns checks that CheckIndexes notices each kind of
// damage to the campaign indexes, so that the cleanup of every test would.
func TestCheckIndexes_Campaigns(t *testing.T) {
	db := NewDB(filepath.Join(t.TempDir(), "linkbolt.db"))
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	ws := &link.Workspace{Name: "W", Plan: link.PlanFree}
	if err := NewUserService(db).Bootstrap(ctx, &link.User{Email: "a@example.com", PasswordHash: []byte("h")}, ws); err != nil {
		t.Fatal(err)
	}
	other := &link.Workspace{Name: "O", Plan: link.PlanFree}
	if err := NewWorkspaceService(db).CreateWorkspace(ctx, other, db.ids.formatID(prefixUser, 1), 0); err != nil {
		t.Fatal(err)
	}
	camps := NewCampaignService(db)
	a := &link.Campaign{WorkspaceID: ws.ID, Name: "A", Status: link.CampaignActive}
	b := &link.Campaign{WorkspaceID: ws.ID, Name: "B", Status: link.CampaignActive}
	for _, c := range []*link.Campaign{a, b} {
		if err := camps.CreateCampaign(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	l := &link.Link{WorkspaceID: ws.ID, Alias: "x", DestinationURL: "https://example.com/", CampaignID: a.ID}
	if err := NewLinkService(db).CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
	wid, _ := db.ids.parseID(prefixWorkspace, ws.ID)
	owid, _ := db.ids.parseID(prefixWorkspace, other.ID)
	aid, _ := db.ids.parseID(prefixCampaign, a.ID)
	bid, _ := db.ids.parseID(prefixCampaign, b.ID)
	lid, _ := db.ids.parseID(prefixLink, l.ID)

	// setLink rewrites the link record's campaign and workspace.
	setLink := func(tx *bolt.Tx, campaign string, ws uint64) error {
		rec, err := findLink(tx, 0, lid)
		if err != nil {
			return err
		}
		rec.CampaignID, rec.Workspace = campaign, ws
		return putLink(tx.Bucket(bucketLinks), itob(lid), rec)
	}
	for _, tt := range []struct {
		name   string
		damage func(tx *bolt.Tx) error
		want   string
	}{
		{"entry missing", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLinksCampaign).Delete(campaignLinkKey(wid, aid, lid))
		}, "links.campaign"},
		{"entry of another campaign", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLinksCampaign).Put(campaignLinkKey(wid, bid, lid), []byte{})
		}, "is in campaign"},
		{"entry of a missing link", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLinksCampaign).Put(campaignLinkKey(wid, aid, lid+1), []byte{})
		}, "not found"},
		{"entry of another workspace", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLinksCampaign).Put(campaignLinkKey(owid, aid, lid), []byte{})
		}, "belongs to workspace"},
		{"link out of its campaign, entry left", func(tx *bolt.Tx) error { return setLink(tx, "", wid) }, "is in campaign"},
		{"link of a missing campaign", func(tx *bolt.Tx) error { return setLink(tx, db.ids.formatID(prefixCampaign, 1295), wid) }, "not found"},
		{"link of a malformed campaign", func(tx *bolt.Tx) error { return setLink(tx, "c&<x>", wid) }, "malformed campaign id"},
		{"undamaged (a write of what is there)", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLinksCampaign).Put(campaignLinkKey(wid, aid, lid), []byte{})
		}, ""},
		{"campaign without workspace entry", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketCampaignsWorkspace).Delete(concat(itob(wid), itob(bid)))
		}, "no campaigns.workspace entry"},
		{"workspace entry of a missing campaign", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketCampaignsWorkspace).Put(concat(itob(wid), itob(bid+5)), []byte{})
		}, "campaigns.workspace"},
		{"workspace entry of another workspace", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketCampaignsWorkspace).Put(concat(itob(owid), itob(bid)), []byte{})
		}, "campaigns.workspace"},
		{"campaign record of another workspace", func(tx *bolt.Tx) error {
			rec, err := findCampaign(tx, wid, aid)
			if err != nil {
				return err
			}
			rec.Workspace = owid
			return putJSON(tx.Bucket(bucketCampaigns), itob(aid), rec)
		}, "campaign"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := db.db.Update(func(tx *bolt.Tx) error {
				if err := tt.damage(tx); err != nil {
					return err
				}
				checkErr := checkIndexes(tx)
				switch {
				case tt.want == "" && checkErr != nil:
					t.Errorf("undamaged: %v", checkErr)
				case tt.want != "" && checkErr == nil:
					t.Errorf("damage not noticed")
				case tt.want != "" && !strings.Contains(checkErr.Error(), tt.want):
					t.Errorf("check = %v, want %q", checkErr, tt.want)
				}
				return errRollback
			})
			if err != errRollback {
				t.Fatal(err)
			}
		})
	}
	if err := db.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
}
