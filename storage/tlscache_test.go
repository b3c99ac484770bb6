package storage_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// TestCertCache: automatic HTTPS keeps its account and certificates in the
// data file, so they outlive a restart (and travel in a backup).
func TestCertCache(t *testing.T) {
	ctx := context.Background()
	db, clock := MustOpenDB(t)
	c := storage.NewCertCache(db)
	if _, err := c.Get(ctx, "go.example.com"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("missing name: %v, want not_found", err)
	}
	pem := []byte("-----BEGIN EC PRIVATE KEY-----\n...")
	if err := c.Put(ctx, "go.example.com", pem); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "acme_account+key", []byte("account")); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "", []byte("x")); err == nil {
		t.Fatal("an empty name was stored")
	}
	db = MustReopen(t, db, clock)
	c = storage.NewCertCache(db)
	if got, err := c.Get(ctx, "go.example.com"); err != nil || !bytes.Equal(got, pem) {
		t.Fatalf("after a reopen: %q %v", got, err)
	}
	if err := c.Put(ctx, "go.example.com", []byte("renewed")); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Get(ctx, "go.example.com"); string(got) != "renewed" {
		t.Fatalf("replaced: %q", got)
	}
	if err := c.Delete(ctx, "go.example.com"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "never.example.com"); err != nil {
		t.Fatalf("deleting a missing name: %v", err)
	}
	if _, err := c.Get(ctx, "go.example.com"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("deleted name: %v", err)
	}
	if got, err := c.Get(ctx, "acme_account+key"); err != nil || string(got) != "account" {
		t.Fatalf("the other name: %q %v", got, err)
	}
}
