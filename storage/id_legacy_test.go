package storage

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// openLegacyFile makes a data file as linkbolt wrote it before IDs were
// opaque (schema version 1: every wire ID the bucket sequence in base 36,
// no ID key in the meta bucket), with a user, a workspace, a campaign and
// three links, one in the campaign. It returns the file's path. Only the
// IDs are as version 1 had them: the rest of the file is today's; see
// TestUpgradeVersion1File for a file the old code wrote.
func openLegacyFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "linkbolt.db")
	db := NewDB(path)
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	// The old scheme: base 36 for every sequence there will ever be.
	all := map[string]uint64{}
	for p := range idBuckets {
		all[p] = math.MaxUint64
	}
	old, err := newIDCodec(make([]byte, 16), all)
	if err != nil {
		t.Fatal(err)
	}
	db.ids = old
	codecs.Store(db.db, old)

	ctx := context.Background()
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := NewUserService(db).Bootstrap(ctx, &link.User{Email: "a@example.com", PasswordHash: []byte("h")}, ws); err != nil {
		t.Fatal(err)
	}
	c := &link.Campaign{WorkspaceID: ws.ID, Name: "Spring", Status: link.CampaignActive}
	if err := NewCampaignService(db).CreateCampaign(ctx, c); err != nil {
		t.Fatal(err)
	}
	links := NewLinkService(db)
	for i, l := range []*link.Link{
		{Alias: "one", CampaignID: c.ID}, {Alias: "two"}, {Alias: "three"},
	} {
		l.WorkspaceID, l.DestinationURL = ws.ID, "https://example.com/"+l.Alias
		if err := links.CreateLink(ctx, l); err != nil {
			t.Fatal(err)
		}
		if want := "lnk_" + string(rune('1'+i)); l.ID != want {
			t.Fatalf("legacy link id %q, want %q", l.ID, want)
		}
	}
	if ws.ID != "ws_1" || c.ID != "cmp_1" {
		t.Fatalf("legacy ids %s, %s", ws.ID, c.ID)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// What version 1 had in the meta bucket.
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	err = bdb.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if err := meta.Delete(metaIDKey); err != nil {
			return err
		}
		if err := meta.Delete(metaIDLegacyMax); err != nil {
			return err
		}
		return meta.Put(metaSchemaVersion, []byte("1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLegacyIDsKeepWorking upgrades a schema version 1 file: the IDs
// clients hold (lnk_1, ws_1, cmp_1, usr_1) still find their records and
// are still the records' IDs, the legacy form of a sequence never given
// out is not found, new records get opaque IDs, lists keep newest first,
// and all of it holds across a restart.
func TestLegacyIDsKeepWorking(t *testing.T) {
	path := openLegacyFile(t)
	ctx := context.Background()
	var created string
	for round := range 2 {
		db := NewDB(path)
		if err := db.Open(); err != nil {
			t.Fatal(err)
		}
		links := NewLinkService(db)
		l, err := links.FindLinkByID(ctx, "ws_1", "lnk_2")
		if err != nil || l.ID != "lnk_2" || l.Alias != "two" || l.WorkspaceID != "ws_1" {
			t.Fatalf("round %d: legacy link: %+v, %v", round, l, err)
		}
		if l, err := links.FindLinkByID(ctx, "ws_1", "lnk_1"); err != nil || l.CampaignID != "cmp_1" {
			t.Fatalf("round %d: link in a legacy campaign: %+v, %v", round, l, err)
		}
		if c, err := NewCampaignService(db).FindCampaignByID(ctx, "ws_1", "cmp_1"); err != nil || c.ID != "cmp_1" {
			t.Fatalf("round %d: legacy campaign: %+v, %v", round, c, err)
		}
		if u, err := NewUserService(db).FindUserByID(ctx, "usr_1"); err != nil || u.ID != "usr_1" {
			t.Fatalf("round %d: legacy user: %+v, %v", round, u, err)
		}
		if round == 0 {
			// Sequence 4 was never given a legacy ID: lnk_4 is nothing.
			if _, err := links.FindLinkByID(ctx, "ws_1", "lnk_4"); link.ErrorCode(err) != link.ENOTFOUND {
				t.Fatalf("lnk_4: %v, want not found", err)
			}
			l := &link.Link{WorkspaceID: "ws_1", Alias: "four", DestinationURL: "https://example.com/4", CampaignID: "cmp_1"}
			if err := links.CreateLink(ctx, l); err != nil {
				t.Fatal(err)
			}
			created = l.ID
			if seq, ok := db.ids.parseID(prefixLink, created); len(created) != len(prefixLink)+opaqueLen || !ok || seq != 4 {
				t.Fatalf("new link id %q (%d, %v), want an opaque id of sequence 4", created, seq, ok)
			}
		}
		if _, err := links.FindLinkByID(ctx, "ws_1", "lnk_4"); link.ErrorCode(err) != link.ENOTFOUND {
			t.Fatalf("round %d: lnk_4 names the new link: %v", round, err)
		}
		list, err := links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: "ws_1", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, l := range list.Links {
			ids = append(ids, l.ID)
		}
		if want := []string{created, "lnk_3", "lnk_2", "lnk_1"}; !slices.Equal(ids, want) {
			t.Fatalf("round %d: list %v, want %v (newest first)", round, ids, want)
		}
		inCampaign, err := links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: "ws_1", CampaignID: "cmp_1", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(inCampaign.Links) != 2 {
			t.Fatalf("round %d: links of cmp_1: %d", round, len(inCampaign.Links))
		}
		if err := db.CheckIndexes(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNewFileHasNoLegacyIDs: a file created opaque gives out no legacy
// ID, even for its first records.
func TestNewFileHasNoLegacyIDs(t *testing.T) {
	db := NewDB(filepath.Join(t.TempDir(), "linkbolt.db"))
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	u := &link.User{Email: "a@example.com", PasswordHash: []byte("h")}
	if err := NewUserService(db).Bootstrap(ctx, u, ws); err != nil {
		t.Fatal(err)
	}
	if len(ws.ID) != len(prefixWorkspace)+opaqueLen || len(u.ID) != len(prefixUser)+opaqueLen {
		t.Fatalf("first ids %s, %s", ws.ID, u.ID)
	}
	if _, err := NewWorkspaceService(db).FindWorkspaceByID(ctx, "ws_1"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("ws_1 on a new file: %v, want not found", err)
	}
	if len(db.ids.legacy) != 0 {
		t.Fatalf("legacy maxima on a new file: %v", db.ids.legacy)
	}
}
