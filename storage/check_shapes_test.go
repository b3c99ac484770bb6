package storage_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/storage"
)

// bucketPaths lists every bucket of the file at path that holds keys, as
// paths of nested bucket names.
func bucketPaths(t *testing.T, path string) [][]string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var paths [][]string
	var walk func(b *bolt.Bucket, at []string)
	walk = func(b *bolt.Bucket, at []string) {
		if k, _ := b.Cursor().First(); k != nil {
			paths = append(paths, at)
		}
		_ = b.ForEachBucket(func(name []byte) error {
			walk(b.Bucket(name), append(append([]string(nil), at...), string(name)))
			return nil
		})
	}
	_ = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			walk(b, []string{string(name)})
			return nil
		})
	})
	return paths
}

func bucketAt(tx *bolt.Tx, path []string) *bolt.Bucket {
	b := tx.Bucket([]byte(path[0]))
	for _, name := range path[1:] {
		b = b.Bucket([]byte(name))
	}
	return b
}

// TestCheckFile_Shapes damages, in every bucket of a real data file that
// holds keys, the first plain key's length (a 5-byte key, as a crafted
// backup's keys.hash held: check and restore panicked, index out of
// range) and then its value's, and checks that CheckFile never panics and
// reports each damage. It also drops each bucket in turn: a backup without
// users.email passed the check and was restored, after which nobody could
// sign in.
func TestCheckFile_Shapes(t *testing.T) {
	good := mustFullFile(t)
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	var damagedPath string // of the last file damaged
	damaged := func(t *testing.T, change func(tx *bolt.Tx) error) *storage.CheckReport {
		t.Helper()
		path := filepath.Join(t.TempDir(), "damaged.db")
		damagedPath = path
		if err := os.WriteFile(path, orig, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := bolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(change); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := storage.CheckFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// A password reset's key is the hash its caller chose (storage takes
	// any length) and is only ever matched whole.
	anyShape := map[string]bool{"users.reset key": true}
	for _, path := range bucketPaths(t, good) {
		name := strings.Join(path, "/")
		for _, what := range []string{"key", "value"} {
			t.Run(fmt.Sprintf("%s %s of 5 bytes", name, what), func(t *testing.T) {
				var changed bool
				r := damaged(t, func(tx *bolt.Tx) error {
					b := bucketAt(tx, path)
					c := b.Cursor()
					for k, v := c.First(); k != nil; k, v = c.Next() {
						if v == nil {
							continue // a nested bucket
						}
						nk, nv := k, v
						if what == "key" {
							if len(k) == 5 {
								continue
							}
							nk = append(append([]byte(nil), k...), 0, 0, 0, 0, 0)[:5]
						} else {
							if len(v) == 5 {
								continue
							}
							nv = append(append([]byte(nil), v...), 0, 0, 0, 0, 0)[:5]
						}
						nk, nv = append([]byte(nil), nk...), append([]byte(nil), nv...)
						if err := b.Delete(k); err != nil {
							return err
						}
						changed = true
						return b.Put(nk, nv)
					}
					return nil
				})
				if !changed {
					return // a bucket of nested buckets, or of 5-byte keys already
				}
				if anyShape[name+" "+what] {
					return // checked not to panic, above
				}
				if r.OK() {
					t.Fatalf("a %s of 5 bytes in %s: no problem found", what, name)
				}
				t.Log(r.Problems[0])
			})
		}
	}
	for _, path := range bucketPaths(t, good) {
		if len(path) > 1 {
			continue
		}
		name := path[0]
		t.Run("without "+name, func(t *testing.T) {
			r := damaged(t, func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte(name)) })
			if name == "meta" {
				// Without it the file is no linkbolt data file to check
				// (a bbolt file may hold anything); a restore refuses it.
				path := filepath.Join(t.TempDir(), "data.db")
				_, err := storage.RestoreFile(damagedPath, path, t0)
				if refused := (*storage.RefusedBackupError)(nil); !errors.As(err, &refused) {
					t.Fatalf("restoring a file without meta: %v", err)
				}
				return
			}
			if name == "users.reset" || name == "clicks.backlog" || name == "orphans.counts" || name == "orphans.visits" {
				// They came without a schema change: a file no server
				// has opened since lacks them, and a server adds them.
				if !r.OK() {
					t.Fatalf("a file without %s: %v", name, r.Problems)
				}
				return
			}
			if r.OK() {
				t.Fatalf("a file without %s: no problem found", name)
			}
			t.Log(r.Problems[0])
		})
	}
}
