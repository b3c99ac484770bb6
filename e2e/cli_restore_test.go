package e2e

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/internal/config"
)

// editBolt changes the bbolt file at path with f, as a bug or a hand edit
// would.
func editBolt(t *testing.T, path string, f func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(f); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies the file from to a new file to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRestore: a backup goes back in place of the data file, the replaced
// file kept beside it; a running server, a damaged backup, one with broken
// indexes, a file that is no linkbolt data file and one of a newer schema
// are each refused with the data file untouched.
func TestRestore(t *testing.T) {
	t.Parallel()
	in := newBoltAdminInstance(t)
	data := in.cfg.Storage.Path
	backup := filepath.Join(t.TempDir(), "backup.db")
	in.mustCLI("backup", "--out", backup)
	in.serve(func(c client) {
		c.must("POST", "/v1/links", in.key, `{"destination_url":"https://example.com/later","alias":"later"}`, 201)
	})
	if got := countLinks(t, data); got != 2 {
		t.Fatalf("%d links before the restore, want 2", got)
	}

	refused := func(t *testing.T, from, say string) {
		t.Helper()
		before, err := os.ReadFile(data)
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := in.cli("", "restore", "--from", from)
		if code != 1 || !strings.Contains(stdout+stderr, say) {
			t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, say)
		}
		if after, err := os.ReadFile(data); err != nil || !bytes.Equal(before, after) {
			t.Fatalf("the data file changed (%v)", err)
		}
		entries, _ := os.ReadDir(filepath.Dir(data))
		for _, e := range entries {
			if e.Name() != filepath.Base(data) {
				t.Fatalf("a refused restore left %s beside the data file", e.Name())
			}
		}
	}
	t.Run("a damaged backup", func(t *testing.T) {
		damaged := filepath.Join(t.TempDir(), "damaged.db")
		b, _ := os.ReadFile(backup)
		for i := 2 * 4096; i < len(b); i++ { // every page but the two headers
			b[i] = 0xa5
		}
		if err := os.WriteFile(damaged, b, 0o600); err != nil {
			t.Fatal(err)
		}
		refused(t, damaged, "is refused")
	})
	t.Run("a backup with a broken index", func(t *testing.T) {
		broken := filepath.Join(t.TempDir(), "broken.db")
		copyFile(t, backup, broken)
		editBolt(t, broken, func(tx *bolt.Tx) error { return tx.Bucket([]byte("links.alias")).Delete([]byte("\x00kept")) })
		refused(t, broken, "alias")
	})
	t.Run("no linkbolt data file", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other.db")
		editBolt(t, other, func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("things")); return err })
		refused(t, other, "no linkbolt data file")
	})
	t.Run("a newer schema", func(t *testing.T) {
		newer := filepath.Join(t.TempDir(), "newer.db")
		copyFile(t, backup, newer)
		editBolt(t, newer, func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("schema_version"), []byte("99")) })
		refused(t, newer, "newer than this linkbolt supports")
	})
	t.Run("not a file", func(t *testing.T) {
		refused(t, t.TempDir(), "not a regular file")
	})
	t.Run("while a server holds the data file", func(t *testing.T) {
		cfg, err := config.Load(in.cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		_, stop := startApp(t, cfg, nil)
		defer stop()
		code, _, stderr := in.cli("", "restore", "--from", backup)
		if code != 1 || !strings.Contains(stderr, "in use by a running linkbolt: stop it first") {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
	})

	out := in.mustCLI("restore", "--from", backup)
	if !strings.Contains(out, "restored "+backup) || !strings.Contains(out, "schema version") {
		t.Fatalf("restore said %q", out)
	}
	if got := countLinks(t, data); got != 1 {
		t.Fatalf("%d links after the restore, want the backup's 1", got)
	}
	kept, _ := filepath.Glob(data + ".replaced-*")
	if len(kept) != 1 || !strings.Contains(out, kept[0]) {
		t.Fatalf("replaced files %v, restore said %q", kept, out)
	}
	if got := countLinks(t, kept[0]); got != 2 {
		t.Fatalf("the replaced file has %d links, want 2", got)
	}
	if b, _ := os.ReadFile(backup); len(b) == 0 {
		t.Fatal("the backup is gone")
	}
	// The server starts on the restored file and finds the backup's link.
	in.serve(func(c client) {
		c.must("GET", "/v1/links?q=kept", in.key, "", 200)
		if status, _, _ := c.call("GET", "/kept", "", ""); status/100 != 3 {
			t.Fatalf("GET /kept: %d", status)
		}
	})
	if code, _, stderr := in.cli("", "restore"); code != 2 || !strings.Contains(stderr, "--from FILE is required") {
		t.Fatalf("restore without --from: exit %d, %q", code, stderr)
	}
}

// TestCheckReportsInvariants: linkbolt check reports a broken index or
// counter readably and exits 1, and a whole file with 0.
func TestCheckReportsInvariants(t *testing.T) {
	t.Parallel()
	in := newBoltAdminInstance(t)
	if out := in.mustCLI("check"); !strings.Contains(out, "is OK") {
		t.Fatalf("check said %q", out)
	}
	editBolt(t, in.cfg.Storage.Path, func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("links.alias")).Delete([]byte("\x00kept")); err != nil {
			return err
		}
		c := tx.Bucket([]byte("links.count")).Cursor()
		k, _ := c.First()
		return tx.Bucket([]byte("links.count")).Put(k, []byte{0, 0, 0, 0, 0, 0, 0, 7})
	})
	code, stdout, _ := in.cli("", "check")
	if code != 1 || !strings.Contains(stdout, "is damaged:") {
		t.Fatalf("exit %d, %q", code, stdout)
	}
	for _, want := range []string{`alias "\x00kept": no links.alias entry`, "links.count", "counter 7, brute force 1"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the report does not say %q:\n%s", want, stdout)
		}
	}
}

// TestCheckDamagedAdvice: check's last line says what to do with a
// damaged data file (restore a backup) and with a damaged backup (do not
// restore from it).
func TestCheckDamagedAdvice(t *testing.T) {
	t.Parallel()
	in := newBoltAdminInstance(t)
	raw, err := os.ReadFile(in.cfg.Storage.Path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.db")
	if err := os.WriteFile(cut, raw[:len(raw)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := in.cli("", "check", "--file", cut)
	if code != 1 || !strings.Contains(stdout, "is damaged:") || !strings.HasSuffix(stdout, "Do not restore from this file: check another backup.\n") {
		t.Fatalf("a damaged backup: exit %d\n%s", code, stdout)
	}
	if err := os.WriteFile(in.cfg.Storage.Path, raw[:len(raw)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check"}, {"check", "--file", in.cfg.Storage.Path}} {
		code, stdout, _ = in.cli("", args...)
		if code != 1 || !strings.HasSuffix(stdout, "Restore it from a backup: stop the server and run linkbolt restore --from BACKUP.\n") {
			t.Fatalf("%v on a damaged data file: exit %d\n%s", args, code, stdout)
		}
	}
}

// TestRestoreCraftedBackup: restore and check --file panicked (index out
// of range) on a backup whose keys.hash named a 5-byte key id, and a
// backup without users.email passed check and was restored, after which
// nobody could sign in. Both are refused, with what is wrong, and the
// data file is untouched.
func TestRestoreCraftedBackup(t *testing.T) {
	t.Parallel()
	in := newBoltAdminInstance(t)
	data := in.cfg.Storage.Path
	backup := filepath.Join(t.TempDir(), "backup.db")
	in.mustCLI("backup", "--out", backup)
	in.serve(func(c client) {
		c.must("POST", "/v1/keys", in.key, `{"name":"second","scope":"read"}`, 201)
	})
	for _, tt := range []struct {
		name, say string
		edit      func(tx *bolt.Tx) error
	}{
		{"a 5-byte key id in keys.hash", "keys.hash", func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("keys.hash"))
			k, _ := b.Cursor().First()
			return b.Put(append([]byte(nil), k...), []byte{0, 0, 0, 0, 1})
		}},
		{"a 5-byte key in keys.hash", "keys.hash", func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("keys.hash"))
			k, v := b.Cursor().First()
			k, v = append([]byte(nil), k...), append([]byte(nil), v...)
			if err := b.Delete(k); err != nil {
				return err
			}
			return b.Put(k[:5], v)
		}},
		{"no users.email", "bucket users.email is missing", func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("users.email")) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			crafted := filepath.Join(t.TempDir(), "crafted.db")
			copyFile(t, backup, crafted)
			editBolt(t, crafted, tt.edit)
			code, stdout, stderr := in.cli("", "check", "--file", crafted)
			if code != 1 || !strings.Contains(stdout, tt.say) || strings.Contains(stdout+stderr, "panic") {
				t.Fatalf("check --file: exit %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, tt.say)
			}
			before, err := os.ReadFile(data)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr = in.cli("", "restore", "--from", crafted)
			if code != 1 || !strings.Contains(stdout, "is refused") || !strings.Contains(stdout, tt.say) {
				t.Fatalf("restore: exit %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, tt.say)
			}
			if after, err := os.ReadFile(data); err != nil || !bytes.Equal(before, after) {
				t.Fatalf("the data file changed (%v)", err)
			}
		})
	}
}

// TestRestoreLeftovers: a kill -9 during a restore left its full-size copy
// of the backup (linkbolt.db.restoring-…) beside the data file for good.
// The next restore removes it, as does the next start of the server, as
// both remove what a crashed backup left.
func TestRestoreLeftovers(t *testing.T) {
	t.Parallel()
	in := newBoltAdminInstance(t)
	data := in.cfg.Storage.Path
	backup := filepath.Join(t.TempDir(), "backup.db")
	in.mustCLI("backup", "--out", backup)
	leave := func() string {
		t.Helper()
		path := data + ".restoring-1234567"
		copyFile(t, backup, path) // a copy killed part way is as big
		return path
	}
	gone := func(path, after string) {
		t.Helper()
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("after %s, %s is still there (%v)", after, filepath.Base(path), err)
		}
	}

	left := leave()
	if err := os.WriteFile(filepath.Join(filepath.Dir(data), "notes.restoring-1"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout := in.mustCLI("restore", "--from", backup)
	if !strings.Contains(stdout, "removed what an interrupted restore left behind: "+left) {
		t.Fatalf("restore said %q", stdout)
	}
	gone(left, "a restore")
	if _, err := os.Stat(filepath.Join(filepath.Dir(data), "notes.restoring-1")); err != nil {
		t.Fatalf("a file of another name was removed: %v", err)
	}

	left = leave()
	in.serve(func(c client) {})
	gone(left, "a start of the server")
}
