package storage_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// mustFullFile writes a closed data file with something in every index
// the invariants cover: two users, a workspace, a key, a campaign, a
// verified domain, tagged and archived links and a click, and returns its
// path.
func mustFullFile(t *testing.T) string {
	t.Helper()
	s, admin, ws := mustSetup(t)
	ctx := context.Background()
	b := &link.User{Email: "b@example.com", Name: "B", PasswordHash: []byte("h")}
	if err := s.Users.CreateUser(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Users.CreatePasswordReset(ctx, b.ID, []byte("a token's hash"), t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	mustKey(t, s, newKey(ws.ID, "lb_live_check"))
	c := mustCampaign(t, s, ws.ID, &link.Campaign{Name: "Spring"})
	mustVerifiedDomain(t, s, ws.ID, "go.example.com")
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "tagged", Tags: []string{"news"}, CampaignID: c.ID})
	mustLink(t, s, ws.ID, &link.Link{Alias: "custom", Domain: "go.example.com"})
	archived := &link.Link{Alias: "old"}
	archived.Archived = true
	mustLink(t, s, ws.ID, archived)
	mustRecord(t, s, link.Click{LinkID: l.ID, WorkspaceID: ws.ID, Time: t0, Country: "DE", Device: "desktop", Visitor: 1})
	_ = admin
	if err := s.DB.Close(); err != nil {
		t.Fatal(err)
	}
	return s.DB.Path
}

// TestCheckFile_Invariants damages a real data file's indexes and
// counters one at a time, as a bug or a hand edit would, and checks that
// CheckFile reports each damage readably, and nothing on the whole file.
func TestCheckFile_Invariants(t *testing.T) {
	good := mustFullFile(t)
	if r, err := storage.CheckFile(good); err != nil || !r.OK() {
		t.Fatalf("the whole file: %v %+v", err, r)
	}
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	first := func(tx *bolt.Tx, bucket string) (k, v []byte) {
		k, v = tx.Bucket([]byte(bucket)).Cursor().First()
		if k == nil {
			t.Fatalf("bucket %s is empty", bucket)
		}
		return k, v
	}
	del := func(bucket string) func(tx *bolt.Tx) error {
		return func(tx *bolt.Tx) error {
			k, _ := first(tx, bucket)
			return tx.Bucket([]byte(bucket)).Delete(k)
		}
	}
	bump := func(bucket string) func(tx *bolt.Tx) error {
		return func(tx *bolt.Tx) error {
			k, v := first(tx, bucket)
			return tx.Bucket([]byte(bucket)).Put(k, binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(v)+1))
		}
	}
	for _, tt := range []struct {
		name   string
		damage func(tx *bolt.Tx) error
		want   string
	}{
		{"an alias entry missing", del("links.alias"), "alias"},
		{"an alias for no link", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("links.alias")).Put([]byte("\x00ghost"), binary.BigEndian.AppendUint64(nil, 999))
		}, "dangling"},
		{"a workspace's link count off", bump("links.count"), "links.count"},
		{"the archived counter off", del("links.archived"), "links.archived"},
		{"a tag entry missing", del("links.tag"), "links.tag"},
		{"a tag count off", bump("links.tag_count"), "links.tag_count"},
		{"a link's workspace entry missing", del("links.workspace"), "links.workspace"},
		{"a campaign's link entry missing", del("links.campaign"), "links.campaign"},
		{"a campaign's workspace entry missing", del("campaigns.workspace"), "campaigns.workspace"},
		{"a domain's hostname entry missing", del("domains.hostname"), "domains.hostname"},
		{"a key's hash entry missing", del("keys.hash"), "keys.hash"},
		{"a key's hash entry for no key", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("keys.hash")).Put([]byte("not a hash of any key"), binary.BigEndian.AppendUint64(nil, 999))
		}, "keys.hash"},
		{"a key's workspace entry missing", del("keys.workspace"), "keys.workspace"},
		{"a user's e-mail entry missing", del("users.email"), "users.email"},
		{"a membership one way only", del("users.workspaces"), "users.workspaces"},
		{"a link's click counter off", func(tx *bolt.Tx) error {
			k, v := first(tx, "clicks.totals")
			v = append([]byte{}, v...)
			for i := 0; i < len(v); i += 8 {
				if n := binary.BigEndian.Uint64(v[i:]); n != 0 {
					binary.BigEndian.PutUint64(v[i:], n+5)
				}
			}
			return tx.Bucket([]byte("clicks.totals")).Put(k, v)
		}, "daily totals"},
		{"a search entry missing", del("links.search"), "links.search"},
		{"a password link of nobody", func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("users.reset")).Put([]byte("another hash"), make([]byte, 16))
		}, "users.reset"},
		{"an audit index entry missing", del("audit.time"), "audit.time"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "damaged.db")
			if err := os.WriteFile(path, orig, 0o600); err != nil {
				t.Fatal(err)
			}
			bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if err := bdb.Update(tt.damage); err != nil {
				t.Fatal(err)
			}
			if err := bdb.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := storage.CheckFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() {
				t.Fatalf("damage not reported")
			}
			if !strings.Contains(strings.Join(r.Problems, "\n"), tt.want) {
				t.Errorf("problems %q, want one naming %q", r.Problems, tt.want)
			}
			if r.HeaderDamage != "" {
				t.Errorf("header damage %q for a damaged index", r.HeaderDamage)
			}
		})
	}
}

// TestCheckFile_NotLinkbolt: a bbolt file that is no linkbolt data file
// has only bbolt's structure to check.
func TestCheckFile_NotLinkbolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("links.alias"))
		if err != nil {
			return err
		}
		return b.Put([]byte("x"), []byte("y"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := storage.CheckFile(path); err != nil || !r.OK() {
		t.Fatalf("CheckFile = %+v, %v; want OK", r, err)
	}
}
