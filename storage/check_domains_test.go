package storage

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// TestCheckIndexes_Domains checks that CheckIndexes notices each kind of
// damage to the domain indexes, so that the cleanup of every test would.
func TestCheckIndexes_Domains(t *testing.T) {
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
	ds := NewDomainService(db)
	a := &link.Domain{WorkspaceID: ws.ID, Hostname: "a.example.com"}
	b := &link.Domain{WorkspaceID: ws.ID, Hostname: "b.example.com"}
	for _, d := range []*link.Domain{a, b} {
		if err := ds.CreateDomain(ctx, d, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ds.SetDomainVerified(ctx, ws.ID, b.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
	wid, _ := db.ids.parseID(prefixWorkspace, ws.ID)
	aid, _ := db.ids.parseID(prefixDomain, a.ID)
	bid, _ := db.ids.parseID(prefixDomain, b.ID)
	rewrite := func(tx *bolt.Tx, id uint64, f func(*domainRecord)) error {
		rec, err := findDomain(tx, 0, id)
		if err != nil {
			return err
		}
		f(rec)
		return putJSON(tx.Bucket(bucketDomains), itob(id), rec)
	}
	for _, tt := range []struct {
		name   string
		damage func(tx *bolt.Tx) error
		want   string
	}{
		{"hostname entry missing", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketDomainsHostname).Delete([]byte("a.example.com"))
		}, "domains.hostname"},
		{"hostname entry of another domain", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketDomainsHostname).Put([]byte("a.example.com"), itob(bid))
		}, "names the domain of"},
		{"hostname entry dangling", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketDomainsHostname).Put([]byte("c.example.com"), itob(bid+1))
		}, "dangling"},
		{"workspace entry missing", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketDomainsWorkspace).Delete(concat(itob(wid), itob(aid)))
		}, "no domains.workspace entry"},
		{"workspace entry of another workspace", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketDomainsWorkspace).Put(concat(itob(wid+1), itob(aid)), []byte{})
		}, "dangling"},
		{"record of an unknown workspace", func(tx *bolt.Tx) error {
			return rewrite(tx, aid, func(r *domainRecord) { r.Workspace = wid + 7 })
		}, "workspace"},
		{"bad hostname", func(tx *bolt.Tx) error {
			return rewrite(tx, aid, func(r *domainRecord) { r.Hostname = "A.example.com" })
		}, "lower case"},
		{"verified without a time", func(tx *bolt.Tx) error {
			return rewrite(tx, bid, func(r *domainRecord) { r.VerifiedAt = nil })
		}, "verified true"},
		{"short token", func(tx *bolt.Tx) error {
			return rewrite(tx, aid, func(r *domainRecord) { r.Token = "abc" })
		}, "token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := db.db.Update(func(tx *bolt.Tx) error {
				if err := tt.damage(tx); err != nil {
					return err
				}
				if err := checkIndexes(tx); err == nil {
					t.Errorf("damage not noticed")
				} else if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %v, want it to mention %q", err, tt.want)
				}
				return errRollback
			})
			if err != errRollback {
				t.Fatal(err)
			}
		})
	}
}
