package storetest

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

var dataTests = []test{
	{"Ping", testDataPing},
	{"JWTSecretMadeOnce", testDataJWTSecret},
	{"SpoolBackup", testDataBackup},
	{"BackupRefused", testDataBackupRefused},
	{"WriteFailing", testDataWriteFailing},
	{"CatchDamage", testDataCatchDamage},
	{"CloseAndReopen", testDataClose},
}

func testDataPing(t *testing.T, e *env) {
	if err := e.Data.Ping(e.ctx); err != nil {
		t.Fatalf("Ping of a new store: %v", err)
	}
	e.setup()
	if err := e.Data.Ping(e.ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

func testDataJWTSecret(t *testing.T, e *env) {
	calls := 0
	gen := func() []byte {
		calls++
		return []byte("a secret of thirty-two bytes....")
	}
	first, err := e.Data.JWTSecret(gen)
	if err != nil || string(first) != "a secret of thirty-two bytes...." || calls != 1 {
		t.Fatalf("JWTSecret = %q, %v after %d calls of generate", first, err, calls)
	}
	again, err := e.Data.JWTSecret(gen)
	if err != nil || string(again) != string(first) || calls != 1 {
		t.Fatalf("JWTSecret again = %q, %v after %d calls of generate; want the same, made once", again, err, calls)
	}
	e.restart()
	after, err := e.Data.JWTSecret(func() []byte { calls++; return []byte("another") })
	if err != nil || string(after) != string(first) || calls != 1 {
		t.Fatalf("JWTSecret after a restart = %q, %v; want the first, without generating", after, err)
	}
}

// backupTests are the Data tests of one way of backing up, each run on
// the stores of that way only: true for a store that spools a copy of its
// data file, false for one backed up with its database's own tool
// (Traits.BackupTool).
var backupTests = map[string]bool{
	"Data/SpoolBackup":   true,
	"Data/BackupRefused": false,
}

func testDataBackup(t *testing.T, e *env) {
	e.setup()
	r, size, err := e.Data.SpoolBackup()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if size <= 0 || int64(len(b)) != size {
		t.Fatalf("backup of %d bytes read, %d said", len(b), size)
	}
	// The store goes on after a backup.
	if _, err := e.Users.FindUserByEmail(e.ctx, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
}

func testDataWriteFailing(t *testing.T, e *env) {
	e.setup()
	if since, failing := e.Data.WriteFailing(); failing || !since.IsZero() {
		t.Fatalf("WriteFailing = %v, %v after good writes", since, failing)
	}
}

func testDataCatchDamage(t *testing.T, e *env) {
	if err := e.Data.CatchDamage(func() error { return nil }); err != nil {
		t.Fatalf("CatchDamage of a good fn: %v", err)
	}
	own := errors.New("own")
	if err := e.Data.CatchDamage(func() error { return own }); !errors.Is(err, own) {
		t.Fatalf("CatchDamage = %v, want fn's error", err)
	}
	ran := false
	if err := e.Data.CatchDamage(func() error { ran = true; _, err := e.Users.CountUsers(e.ctx); return err }); err != nil || !ran {
		t.Fatalf("CatchDamage of a read: %v, ran %v", err, ran)
	}
}

func testDataClose(t *testing.T, e *env) {
	_, ws := e.setup()
	e.webhook(ws.ID, link.EventLinkCreated)
	l := e.link(ws.ID, &link.Link{Alias: "kept"})
	if got := e.Webhooks.PendingDeliveries(); got != 1 {
		t.Fatalf("PendingDeliveries = %d, want 1", got)
	}
	if err := e.Data.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Data.Ping(e.ctx); err == nil {
		t.Fatal("Ping of a closed store succeeded")
	}
	if got := e.Webhooks.PendingDeliveries(); got != 0 {
		t.Fatalf("PendingDeliveries of a closed store = %d, want 0", got)
	}
	e.Store = e.reopen()
	if err := e.Data.Ping(e.ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.Webhooks.PendingDeliveries(); got != 1 {
		t.Fatalf("PendingDeliveries after a reopen = %d, want 1", got)
	}
	if got, err := e.Links.FindLinkByAlias(e.ctx, "", "kept"); err != nil || got.ID != l.ID {
		t.Fatalf("after a reopen: %+v, %v", got, err)
	}
}

// testDataBackupRefused: a store backed up with its database's own tool
// refuses SpoolBackup with ECONFLICT, in a message naming the tool, and
// goes on: it answers, reads, and its writes are not failing.
func testDataBackupRefused(t *testing.T, e *env) {
	e.setup()
	r, size, err := e.Data.SpoolBackup()
	if r != nil {
		r.Close()
	}
	wantCode(t, err, link.ECONFLICT)
	if r != nil || size != 0 || !strings.Contains(link.ErrorMessage(err), e.traits.BackupTool) {
		t.Fatalf("SpoolBackup = %v, %d, %q; want nothing and a message naming %s", r, size, link.ErrorMessage(err), e.traits.BackupTool)
	}
	if err := e.Data.Ping(e.ctx); err != nil {
		t.Fatalf("Ping after a refused backup: %v", err)
	}
	if _, err := e.Users.FindUserByEmail(e.ctx, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	if since, failing := e.Data.WriteFailing(); failing {
		t.Fatalf("WriteFailing = %v, %v after a refused backup", since, failing)
	}
}
