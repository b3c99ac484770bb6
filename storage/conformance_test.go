package storage_test

import (
	"path/filepath"
	"testing"

	"github.com/linkbolt/linkbolt/internal/storetest"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// TestConformance runs the stores' conformance suite on bbolt: each
// subtest on a data file of its own under t.TempDir(), whose indexes and
// bolt consistency are checked when the subtest ends.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, c storetest.Config) (*link.Store, func() *link.Store) {
		path := filepath.Join(t.TempDir(), "linkbolt.db")
		open := func() *link.Store {
			t.Helper()
			db := storage.NewDB(path)
			db.Now = c.Now
			if err := db.Open(); err != nil {
				t.Fatalf("open: %v", err)
			}
			t.Cleanup(func() {
				if db.Opened() {
					if err := db.CheckIndexes(); err != nil {
						t.Error(err)
					}
				}
				if err := db.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
				checkFile(t, path)
			})
			return db.Store(storage.Options{Events: c.Events, AliasHold: c.AliasHold})
		}
		return open(), open
	})
}
