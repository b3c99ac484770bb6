package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// TestCheckIndexes_Members checks that CheckIndexes notices damage to the
// memberships and invitations, so that the cleanup of every test would.
func TestCheckIndexes_Members(t *testing.T) {
	db := NewDB(filepath.Join(t.TempDir(), "linkbolt.db"))
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	ws := &link.Workspace{Name: "W", Plan: link.PlanFree}
	admin := &link.User{Email: "a@example.com", PasswordHash: []byte("h")}
	if err := NewUserService(db).Bootstrap(ctx, admin, ws); err != nil {
		t.Fatal(err)
	}
	invs := NewInvitationService(db)
	hash := sha256.Sum256([]byte("tok"))
	inv := &link.Invitation{WorkspaceID: ws.ID, Email: "b@example.com", Role: link.RoleRead, TokenHash: hash[:],
		InvitedBy: admin.ID, ExpiresAt: time.Now().Add(time.Hour)}
	if err := invs.CreateInvitation(ctx, inv); err != nil {
		t.Fatal(err)
	}
	u, _, err := invs.AcceptInvitation(ctx, hash[:], link.Acceptance{Name: "B", PasswordHash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
	wid, _ := db.ids.parseID(prefixWorkspace, ws.ID)
	aid, _ := db.ids.parseID(prefixUser, admin.ID)
	uid, _ := db.ids.parseID(prefixUser, u.ID)
	iid, _ := db.ids.parseID(prefixInvitation, inv.ID)
	for _, tt := range []struct {
		name   string
		damage func(tx *bolt.Tx) error
		want   string
	}{
		{"one direction missing", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketUserWorkspaces).Delete(concat(itob(uid), itob(wid)))
		}, "users.workspaces"},
		{"directions disagree", func(tx *bolt.Tx) error {
			return putJSON(tx.Bucket(bucketUserWorkspaces), concat(itob(uid), itob(wid)), &memberRecord{Role: link.RoleOwner})
		}, "users.workspaces"},
		{"no owner", func(tx *bolt.Tx) error {
			return putMembership(tx, wid, aid, &memberRecord{Role: link.RoleRead})
		}, "no owner"},
		{"member and former member", func(tx *bolt.Tx) error {
			return putJSON(tx.Bucket(bucketWorkspaceFormer), concat(itob(wid), itob(uid)), &formerRecord{})
		}, "former"},
		{"token index missing", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketInvitationsHash).Delete(hash[:])
		}, "invitations.hash"},
		{"token index dangling", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketInvitationsHash).Put(bytes.Repeat([]byte{1}, 32), itob(iid+1))
		}, "dangling"},
		{"workspace index missing", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketInvitationsWorkspace).Delete(concat(itob(wid), itob(iid)))
		}, "invitations.workspace"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tx, err := db.db.Begin(true)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if err := tt.damage(tx); err != nil {
				t.Fatal(err)
			}
			err = checkIndexes(tx)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("check = %v, want an error naming %q", err, tt.want)
			}
		})
	}
}
