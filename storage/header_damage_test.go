package storage_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/storage"
)

// headerTxid reads the transaction id of the header page in file b.
func headerTxid(b []byte, page int) uint64 {
	const pageSize, txidAt = 4096, 16 + 48 // page header, then the meta's txid
	return binary.NativeEndian.Uint64(b[page*pageSize+txidAt:])
}

// TestDamagedHeaderPage reproduces a header page overwritten as with
// `dd if=/dev/urandom of=m0.db bs=1 seek=16 count=64 conv=notrunc`: bbolt
// opens the file from the other header page without a word, and when the
// damaged page held the newer transaction that transaction is gone.
// check must list it as a problem, and start-up must warn in one line that
// says so; both for page 0 and page 1, holding the newer and the older
// transaction.
func TestDamagedHeaderPage(t *testing.T) {
	ctx := context.Background()
	s, u, _ := mustSetup(t)
	// Two files, each a snapshot right after the write that created a
	// workspace: in the first the newer header is on one page, in the
	// second on the other.
	type snapshot struct {
		file []byte
		last string // the workspace the last transaction created
	}
	var snaps []snapshot
	for _, name := range []string{"First", "Second"} {
		ws := mustWorkspace(t, s, name, u.ID)
		b, err := os.ReadFile(s.DB.Path)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, snapshot{b, ws.ID})
	}
	if a, b := headerTxid(snaps[0].file, 0) > headerTxid(snaps[0].file, 1), headerTxid(snaps[1].file, 0) > headerTxid(snaps[1].file, 1); a == b {
		t.Fatal("both snapshots have their newer header on the same page")
	}
	rng := rand.New(rand.NewPCG(16, 64))
	for i, snap := range snaps {
		for page := 0; page < 2; page++ {
			newer := headerTxid(snap.file, page) > headerTxid(snap.file, 1-page)
			name := fmt.Sprintf("page %d holding the %s header", page, map[bool]string{true: "newer", false: "older"}[newer])
			t.Run(name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "linkbolt.db")
				b := bytes.Clone(snap.file)
				for j := page*4096 + 16; j < page*4096+16+64; j++ {
					b[j] = byte(rng.Uint32())
				}
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}

				r, err := storage.CheckFile(path)
				if err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprintf("header page %d is damaged", page)
				if r.OK() || !strings.Contains(r.Problems[0], want) ||
					!strings.Contains(r.Problems[0], fmt.Sprintf("opens from header page %d", 1-page)) ||
					!strings.Contains(r.Problems[0], "the last transaction may be lost") {
					t.Fatalf("check (snapshot %d): %+v", i, r)
				}
				if len(r.Problems) != 1 || r.HeaderDamage != r.Problems[0] {
					t.Errorf("check found more than the header page: %+v", r)
				}
				if r.Keys == 0 {
					t.Errorf("check stopped counting at the damaged header: %+v", r)
				}

				var logs bytes.Buffer
				db := storage.NewDB(path)
				db.Logger = slog.New(slog.NewTextHandler(&logs, nil))
				if err := db.Open(); err != nil {
					t.Fatalf("open: %v", err)
				}
				lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
				if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], want) ||
					!strings.Contains(lines[0], path) || !strings.Contains(lines[0], "the last transaction may be lost") {
					t.Errorf("start-up log: %q", logs.String())
				}
				// What the warning says is what happened: the newer
				// header's transaction is gone, the older's costs nothing.
				_, err = storage.NewWorkspaceService(db).FindWorkspaceByID(ctx, snap.last)
				if got, want := link.ErrorCode(err), map[bool]string{true: link.ENOTFOUND, false: ""}[newer]; got != want {
					t.Errorf("the last transaction's workspace: %v, want code %q", err, want)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				// The open wrote a new header over the damaged one.
				if r, err := storage.CheckFile(path); err != nil || !r.OK() {
					t.Errorf("check after the open: %v %+v", err, r)
				}
			})
		}
	}

	// The undamaged file: no problem, no warning.
	path := filepath.Join(t.TempDir(), "linkbolt.db")
	if err := os.WriteFile(path, snaps[1].file, 0o600); err != nil {
		t.Fatal(err)
	}
	if r, err := storage.CheckFile(path); err != nil || !r.OK() {
		t.Fatalf("check of the whole file: %v %+v", err, r)
	}
	var logs bytes.Buffer
	db := storage.NewDB(path)
	db.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if strings.Contains(logs.String(), "WARN") {
		t.Errorf("the whole file warned: %s", logs.String())
	}
}
