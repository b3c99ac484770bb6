package storage_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/linkbolt/linkbolt/storage"
)

// TestSpoolBackup: the spool holds the whole backup and never has a name
// a crash could leave behind.
func TestSpoolBackup(t *testing.T) {
	db, _ := MustOpenDB(t)
	var want bytes.Buffer
	if _, err := db.WriteBackup(&want); err != nil {
		t.Fatal(err)
	}
	spool, n, err := db.SpoolBackup()
	if err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(db.Path), storage.BackupTempPrefix+"*"))
	if len(left) != 0 {
		t.Fatalf("the spool has a name: %v", left)
	}
	got, err := io.ReadAll(spool)
	if err != nil {
		t.Fatal(err)
	}
	if err := spool.Close(); err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != n || n != int64(want.Len()) {
		t.Fatalf("spooled %d bytes, announced %d, want %d", len(got), n, want.Len())
	}
}

// TestRemoveBackupLeftovers removes unlocked files of the temporary
// backup name, and nothing else.
func TestRemoveBackupLeftovers(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, storage.BackupTempPrefix+"1")
	keep := []string{filepath.Join(dir, "linkbolt.db"), filepath.Join(dir, ".linkbolt-backup"), filepath.Join(dir, "x"+storage.BackupTempPrefix+"2")}
	for _, f := range append(keep, stale) {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(keep[0], filepath.Join(dir, storage.BackupTempPrefix+"link")); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, filepath.Join(dir, storage.BackupTempPrefix+"link"))
	live, err := storage.CreateBackupTemp(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	keep = append(keep, live.Name())
	removed, err := storage.RemoveBackupLeftovers(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != stale {
		t.Fatalf("removed %v, want only %s", removed, stale)
	}
	for _, f := range keep {
		if _, err := os.Lstat(f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
