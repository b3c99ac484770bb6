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
// made by nobody known and stays sending (its indexes whole); a record
// written now keeps its creator.
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

// TestWritesOfAnActorWhoLeft: a key or webhook is saved only while the
// actor of ctx may act in the workspace, checked in the transaction that
// saves it, so that a member's request that began before their removal
// and saves after it leaves nothing behind that the removal ended.
func TestWritesOfAnActorWhoLeft(t *testing.T) {
	db := NewDB(filepath.Join(t.TempDir(), "linkbolt.db"))
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	users := NewUserService(db)
	owner := &link.User{Email: "a@example.com", PasswordHash: []byte("h")}
	ws := &link.Workspace{Name: "W", Plan: link.PlanFree}
	if err := users.Bootstrap(ctx, owner, ws); err != nil {
		t.Fatal(err)
	}
	gone := &link.User{Email: "gone@example.com", PasswordHash: []byte("h")}
	if err := users.CreateUser(ctx, gone); err != nil {
		t.Fatal(err)
	}
	keys, hooks := NewKeyService(db), NewWebhookService(db)
	as := func(id string) context.Context {
		return link.WithActor(ctx, link.Actor{Type: link.ActorUser, ID: id}, "")
	}
	key := func(h string) *link.APIKey {
		return &link.APIKey{WorkspaceID: ws.ID, Name: h, Scope: link.ScopeReadWrite, Hash: []byte(h), Start: "lb_" + h}
	}
	hook := func() *link.Webhook {
		return &link.Webhook{WorkspaceID: ws.ID, URL: "https://hooks.example.com/x", Events: []string{link.EventLinkCreated}, Enabled: true, Secret: "whsec_x"}
	}

	if err := keys.CreateKey(as(gone.ID), key("gone"), 0); link.ErrorCode(err) != link.EFORBIDDEN {
		t.Fatalf("a key made by a non-member: %v, want EFORBIDDEN", err)
	}
	if err := hooks.CreateWebhook(as(gone.ID), hook()); link.ErrorCode(err) != link.EFORBIDDEN {
		t.Fatalf("a webhook made by a non-member: %v, want EFORBIDDEN", err)
	}
	k := key("owner")
	if err := keys.CreateKey(as(owner.ID), k, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.RotateKey(as(gone.ID), ws.ID, k.ID, &link.APIKey{Hash: []byte("next"), Start: "lb_next"}, db.now(), 0); link.ErrorCode(err) != link.EFORBIDDEN {
		t.Fatalf("a key rotated by a non-member: %v, want EFORBIDDEN", err)
	}
	w := hook()
	if err := hooks.CreateWebhook(as(owner.ID), w); err != nil {
		t.Fatal(err)
	}
	url := "https://hooks.example.com/theirs"
	if _, err := hooks.UpdateWebhook(as(gone.ID), ws.ID, w.ID, link.WebhookUpdate{URL: &url}, nil); link.ErrorCode(err) != link.EFORBIDDEN {
		t.Fatalf("a webhook changed by a non-member: %v, want EFORBIDDEN", err)
	}
	if _, err := hooks.RollSecret(as(gone.ID), ws.ID, w.ID, "whsec_y", db.now()); link.ErrorCode(err) != link.EFORBIDDEN {
		t.Fatalf("a secret rolled by a non-member: %v, want EFORBIDDEN", err)
	}

	// A key acts while its member does; revoked, it saves nothing more.
	byKey := link.WithActor(ctx, link.Actor{Type: link.ActorKey, ID: k.ID}, "")
	if err := hooks.CreateWebhook(byKey, hook()); err != nil {
		t.Fatal(err)
	}
	if err := keys.RevokeKey(ctx, ws.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	if err := keys.CreateKey(byKey, key("minted"), 0); link.ErrorCode(err) != link.EFORBIDDEN {
		t.Fatalf("a key made by a revoked key: %v, want EFORBIDDEN", err)
	}
	// The system and the command line act without an actor.
	if err := keys.CreateKey(ctx, key("cli"), 0); err != nil {
		t.Fatal(err)
	}
}
