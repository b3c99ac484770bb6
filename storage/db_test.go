package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
	bolt "go.etcd.io/bbolt"
)

func TestOpen_CreatesDirectoryAndPings(t *testing.T) {
	db, _ := MustOpenDB(t)
	if _, err := os.Stat(db.Path); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(context.Background()); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func TestOpen_LockedFile(t *testing.T) {
	t.Parallel() // most of it is the one-second wait for the lock, which other tests can use
	db, _ := MustOpenDB(t)
	second := storage.NewDB(db.Path)
	start := time.Now()
	err := second.Open()
	elapsed := time.Since(start)
	if err == nil {
		second.Close()
		t.Fatal("second open of a locked file succeeded")
	}
	if !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if got, want := err.Error(), "data file "+db.Path+" is locked: another linkbolt process is using it"; got != want {
		t.Fatalf("message = %q, want %q", got, want)
	}
	if elapsed > 3*time.Second {
		t.Fatalf("locked open took %s, want about 1s", elapsed)
	}
	// The first handle is untouched.
	if err := db.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestOpen_SchemaVersion(t *testing.T) {
	db, _ := MustOpenDB(t)
	path := db.Path
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		if got, want := string(meta.Get([]byte("schema_version"))), strconv.Itoa(storage.SchemaVersion); got != want {
			t.Errorf("schema_version = %q, want %q", got, want)
		}
		return meta.Put([]byte("schema_version"), []byte(strconv.Itoa(storage.SchemaVersion+1)))
	})
	bdb.Close()
	if err != nil {
		t.Fatal(err)
	}

	newer := storage.NewDB(path)
	err = newer.Open()
	if err == nil {
		newer.Close()
		t.Fatal("opened a file of a newer schema")
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("schema version %d", storage.SchemaVersion+1)) || !strings.Contains(msg, "upgrade linkbolt") {
		t.Fatalf("message = %q", msg)
	}

	// Put the version back so the cleanup's checks can open the file.
	bdb, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if err := bdb.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema_version"), []byte(strconv.Itoa(storage.SchemaVersion)))
	}); err != nil {
		t.Fatal(err)
	}
}

func TestJWTSecret(t *testing.T) {
	db, clock := MustOpenDB(t)
	calls := 0
	gen := func() []byte { calls++; return []byte("secret-" + string(rune('0'+calls))) }

	first, err := db.JWTSecret(gen)
	if err != nil {
		t.Fatal(err)
	}
	second, err := db.JWTSecret(gen)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || !bytes.Equal(first, second) || string(first) != "secret-1" {
		t.Fatalf("calls=%d first=%q second=%q", calls, first, second)
	}

	db = MustReopen(t, db, clock)
	third, err := db.JWTSecret(gen)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || !bytes.Equal(first, third) {
		t.Fatalf("after reopen: calls=%d secret=%q, want %q", calls, third, first)
	}

	if _, err := db.JWTSecret(func() []byte { return nil }); err != nil {
		t.Fatalf("stored secret must win over an empty generator: %v", err)
	}
}

func TestJWTSecret_EmptyGenerated(t *testing.T) {
	db, _ := MustOpenDB(t)
	if _, err := db.JWTSecret(func() []byte { return nil }); err == nil {
		t.Fatal("empty secret accepted")
	}
}

func TestBackup(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	l := mustLink(t, s, ws.ID, &link.Link{Alias: "kept", DestinationURL: "https://example.com/kept", Tags: []string{"x"}})

	var announced int64
	var buf2 bytes.Buffer
	n2, err := s.DB.StreamBackup(func(size int64) (io.Writer, error) { announced = size; return &buf2, nil })
	if err != nil || n2 != announced || int64(buf2.Len()) != n2 {
		t.Fatalf("stream: n=%d announced=%d len=%d err=%v", n2, announced, buf2.Len(), err)
	}

	// With no write between them, both backups are the same size.
	var buf bytes.Buffer
	n, err := s.DB.WriteBackup(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || n != announced {
		t.Fatalf("wrote %d bytes, buffer %d, streamed size %d", n, buf.Len(), announced)
	}

	path := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	restored := mustOpenPath(t, path, s.Clock)
	got, err := storage.NewLinkService(restored).FindLinkByAlias(ctx, "", "kept")
	if err != nil {
		t.Fatalf("backup lacks the link: %v", err)
	}
	if got.ID != l.ID || got.DestinationURL != l.DestinationURL {
		t.Fatalf("backup link = %+v, want %+v", got, l)
	}
	if n, err := storage.NewUserService(restored).CountUsers(ctx); err != nil || n != 1 {
		t.Fatalf("backup users = %d, %v", n, err)
	}
}
