package storetest

import (
	"bytes"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

var certTests = []test{
	{"GetPutDelete", testCerts},
}

func testCerts(t *testing.T, e *env) {
	_, err := e.Certs.Get(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	pem := []byte("-----BEGIN EC PRIVATE KEY-----\n...")
	if err := e.Certs.Put(e.ctx, "go.example.com", pem); err != nil {
		t.Fatal(err)
	}
	if err := e.Certs.Put(e.ctx, "acme_account+key", []byte("account")); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if got, err := e.Certs.Get(e.ctx, "go.example.com"); err != nil || !bytes.Equal(got, pem) {
		t.Fatalf("after a restart: %q, %v", got, err)
	}
	if err := e.Certs.Put(e.ctx, "go.example.com", []byte("renewed")); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.Certs.Get(e.ctx, "go.example.com"); string(got) != "renewed" {
		t.Fatalf("replaced: %q", got)
	}
	if err := e.Certs.Delete(e.ctx, "go.example.com"); err != nil {
		t.Fatal(err)
	}
	if err := e.Certs.Delete(e.ctx, "never.example.com"); err != nil {
		t.Fatalf("deleting a missing name: %v", err)
	}
	_, err = e.Certs.Get(e.ctx, "go.example.com")
	wantCode(t, err, link.ENOTFOUND)
	if got, err := e.Certs.Get(e.ctx, "acme_account+key"); err != nil || string(got) != "account" {
		t.Fatalf("the other name: %q, %v", got, err)
	}
}
