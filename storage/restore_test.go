package storage_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/linkbolt/linkbolt/storage"
)

// TestRestoreFile_TwiceInASecond: each restore keeps the file it replaced
// under a name of its own, even within the same second.
func TestRestoreFile_TwiceInASecond(t *testing.T) {
	path := mustFullFile(t)
	backup := filepath.Join(t.TempDir(), "backup.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(backup, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for range 2 {
		r, err := storage.RestoreFile(backup, path, t0)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, r.Replaced)
	}
	if kept[0] == kept[1] {
		t.Fatalf("both restores kept the replaced file as %s", kept[0])
	}
	for _, k := range kept {
		if r, err := storage.CheckFile(k); err != nil || !r.OK() {
			t.Fatalf("kept file %s: %v %+v", k, err, r)
		}
	}
	if r, err := storage.CheckFile(path); err != nil || !r.OK() {
		t.Fatalf("restored file: %v %+v", err, r)
	}
}
