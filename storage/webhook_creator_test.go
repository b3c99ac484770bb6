package storage

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// TestWebhookRecordWithoutCreator: a webhook record written before
// webhooks recorded their creator (no creator_type, creator_id) reads as
// made by nobody known, stays sending, and a member's removal leaves it
// alone; a record written now keeps its creator.
func TestWebhookRecordWithoutCreator(t *testing.T) {
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
	wid, _ := db.ids.parseID(prefixWorkspace, ws.ID)
	// The bytes of a record of the version before, as it wrote them.
	old := []byte(`{"ws":1,"url":"https://hooks.example.com/old","events":["link.created"],"enabled":true,"secret":"whsec_old","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z"}`)
	if wid != 1 {
		t.Fatalf("workspace %d, the record names 1", wid)
	}
	err := db.db.Update(func(tx *bolt.Tx) error {
		id, err := nextID(tx.Bucket(bucketWebhooks))
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketWebhooks).Put(itob(id), old); err != nil {
			return err
		}
		if err := tx.Bucket(bucketWebhooksWorkspace).Put(concat(itob(wid), itob(id)), []byte{}); err != nil {
			return err
		}
		return tx.Bucket(bucketWebhooksEvent).Put(concat(subscriptionPrefix(wid, link.EventLinkCreated), itob(id)), []byte{})
	})
	if err != nil {
		t.Fatal(err)
	}
	hooks := NewWebhookService(db)
	whs, err := hooks.FindWebhooks(ctx, ws.ID)
	if err != nil || len(whs) != 1 {
		t.Fatalf("webhooks %v, %v", whs, err)
	}
	if w := whs[0]; w.CreatedBy != (link.KeyCreator{}) || !w.Enabled || w.URL != "https://hooks.example.com/old" {
		t.Fatalf("old record read as %+v", w)
	}
	if err := db.db.View(func(tx *bolt.Tx) error { return checkIndexes(tx) }); err != nil {
		t.Fatal(err)
	}

	// One made now keeps its creator.
	w := &link.Webhook{WorkspaceID: ws.ID, URL: "https://hooks.example.com/new", Events: []string{link.EventLinkCreated},
		Enabled: true, Secret: "whsec_new", CreatedBy: link.KeyCreator{Type: link.CreatorUser, ID: "usr_x"}}
	if err := hooks.CreateWebhook(ctx, w); err != nil {
		t.Fatal(err)
	}
	got, err := hooks.FindWebhookByID(ctx, ws.ID, w.ID)
	if err != nil || got.CreatedBy != w.CreatedBy {
		t.Fatalf("created_by %+v, %v; want %+v", got.CreatedBy, err, w.CreatedBy)
	}
}
