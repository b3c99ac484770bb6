package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// batchDB opens a data file whose creations gather in batches of size
// calls, started only once that many have come (the delay is far longer
// than any test), so that a test decides exactly what shares a commit.
func batchDB(t *testing.T, size int) (*DB, *link.Workspace) {
	t.Helper()
	db := NewDB(filepath.Join(t.TempDir(), "linkbolt.db"))
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ws := &link.Workspace{Name: "Default", Plan: link.PlanFree}
	if err := NewUserService(db).Bootstrap(context.Background(), &link.User{Email: "a@example.com", PasswordHash: []byte("h")}, ws); err != nil {
		t.Fatal(err)
	}
	db.db.MaxBatchSize, db.db.MaxBatchDelay = size, time.Hour
	return db, ws
}

// runBatch runs the calls at once, each in its own goroutine, and returns
// their errors.
func runBatch(db *DB, calls []func(*bolt.Tx, *searchIndexer) error) []error {
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, fn := range calls {
		wg.Go(func() { errs[i] = db.batchIndexed(fn) })
	}
	wg.Wait()
	return errs
}

// TestCreateLinksShareCommits creates links from 40 goroutines in batches
// of 8, some of them asking for the same alias: each batch is one commit,
// exactly one creation of each alias wins and the others are refused,
// and every link is in the search index and found by a search (the index
// was written once a batch, for all its links).
func TestCreateLinksShareCommits(t *testing.T) {
	db, ws := batchDB(t, 8)
	links := NewLinkService(db)
	ctx := context.Background()
	var mu sync.Mutex
	txs := map[int]int{} // transaction → creations in it
	var wg sync.WaitGroup
	errs := make([]error, 40)
	created := make([]*link.Link, 40)
	for i := range 40 {
		wg.Go(func() {
			alias := fmt.Sprintf("same%d", i%4) // 10 creations ask for each
			if i >= 16 {
				alias = fmt.Sprintf("own%02d", i)
			}
			l := &link.Link{WorkspaceID: ws.ID, Alias: alias, DestinationURL: fmt.Sprintf("https://shop.example.com/item/%d", i)}
			errs[i] = links.CreateLink(ctx, l)
			if errs[i] == nil {
				created[i] = l
				err := db.db.View(func(tx *bolt.Tx) error {
					mu.Lock()
					defer mu.Unlock()
					txs[int(tx.ID())]++
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	won := map[string]int{}
	for i, err := range errs {
		switch {
		case err == nil:
			won[created[i].Alias]++
		case link.ErrorCode(err) != link.ECONFLICT || i >= 16:
			t.Errorf("creation %d: %v", i, err)
		}
	}
	if len(won) != 4+24 {
		t.Errorf("%d aliases created, want 28", len(won))
	}
	for a, n := range won {
		if n != 1 {
			t.Errorf("alias %s created %d times", a, n)
		}
	}
	if err := db.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
	p, err := links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: ws.ID, Search: "shop.example", Limit: 100})
	if err != nil || p.Total != 28 {
		t.Fatalf("search: %d links, %v; want 28", p.Total, err)
	}
	// 40 calls in batches of 8: 5 commits (a refused creation commits
	// nothing of its own, but waits for its batch).
	if len(txs) > 5 {
		t.Errorf("the creations committed in %d transactions, want at most 5: %v", len(txs), txs)
	}
}

// TestBatchFailureRollsBack checks a batch whose calls fail: a refused
// call keeps nothing and the others commit; a call that fails after
// writing (or panics) is rolled back alone, its writes gone, while the
// other calls of its batch commit once; a failed call runs once.
func TestBatchFailureRollsBack(t *testing.T) {
	db, _ := batchDB(t, 5)
	put := func(key string) func(*bolt.Tx, *searchIndexer) error {
		return func(tx *bolt.Tx, _ *searchIndexer) error {
			return tx.Bucket(bucketMeta).Put([]byte(key), []byte("1"))
		}
	}
	boom := errors.New("boom")
	var runs sync.Map
	count := func(name string, fn func(*bolt.Tx, *searchIndexer) error) func(*bolt.Tx, *searchIndexer) error {
		return func(tx *bolt.Tx, ix *searchIndexer) error {
			n, _ := runs.LoadOrStore(name, new(int))
			*n.(*int)++
			return fn(tx, ix)
		}
	}
	errs := runBatch(db, []func(*bolt.Tx, *searchIndexer) error{
		count("a", put("test_a")),
		count("fails", func(tx *bolt.Tx, ix *searchIndexer) error {
			if err := put("test_fails")(tx, ix); err != nil {
				return err
			}
			return boom
		}),
		count("panics", func(tx *bolt.Tx, ix *searchIndexer) error {
			if err := put("test_panics")(tx, ix); err != nil {
				return err
			}
			panic("bad")
		}),
		// Refused were a failed call's key there; but a call that fails
		// ends its try at once, so this one never meets the key.
		count("refused", func(tx *bolt.Tx, ix *searchIndexer) error {
			if tx.Bucket(bucketMeta).Get([]byte("test_fails")) != nil {
				return refusal{link.Errorf(link.ECONFLICT, "taken")}
			}
			return put("test_refused")(tx, ix)
		}),
		count("b", put("test_b")),
	})
	if !errors.Is(errs[1], boom) || errs[2] == nil || errs[0] != nil || errs[3] != nil || errs[4] != nil {
		t.Fatalf("errors %v; want nil, boom, a panic, nil, nil", errs)
	}
	var refusalErr refusal
	if errors.As(errs[2], &refusalErr) {
		t.Fatalf("the panic came back as a refusal: %v", errs[2])
	}
	// A failed call has its answer and is not run again.
	for _, name := range []string{"fails", "panics"} {
		if n, _ := runs.Load(name); n == nil || *n.(*int) != 1 {
			t.Errorf("call %s ran more than once, or never", name)
		}
	}
	err := db.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		for key, want := range map[string]bool{"test_a": true, "test_b": true, "test_refused": true, "test_fails": false, "test_panics": false} {
			if got := meta.Get([]byte(key)) != nil; got != want {
				t.Errorf("key %s kept: %v, want %v", key, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A refusal alone keeps nothing and is answered as its own error.
	errs = runBatch(db, []func(*bolt.Tx, *searchIndexer) error{
		put("test_c"), put("test_d"), put("test_e"), put("test_f"),
		func(tx *bolt.Tx, ix *searchIndexer) error { return refusal{link.Errorf(link.ECONFLICT, "taken")} },
	})
	if link.ErrorCode(errs[4]) != link.ECONFLICT || errors.As(errs[4], &refusalErr) || errs[0] != nil || errs[3] != nil {
		t.Fatalf("errors %v; want nil ×4, a conflict", errs)
	}
}

// TestCreateLinkAtClose checks a creation still gathering its batch when
// the file closes (a request the shutdown's timeout left running): Close
// commits it before it closes the file, so its caller gets its answer
// and the link is there at the next start, instead of the batch running
// later against a closed file; a creation after Close is an error.
func TestCreateLinkAtClose(t *testing.T) {
	db, ws := batchDB(t, 100) // the batch starts only at Close
	done := make(chan error, 1)
	l := &link.Link{WorkspaceID: ws.ID, Alias: "closing", DestinationURL: "https://example.com/closing"}
	go func() { done <- NewLinkService(db).CreateLink(context.Background(), l) }()
	for waiting := false; !waiting; {
		db.creations.mu.Lock()
		waiting = db.creations.pending != nil && len(db.creations.pending.calls) == 1
		db.creations.mu.Unlock()
		runtime.Gosched()
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	again := NewDB(db.Path)
	if err := again.Open(); err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got, err := NewLinkService(again).FindLinkByAlias(context.Background(), "", "closing"); err != nil || got.DestinationURL != "https://example.com/closing" {
		t.Fatalf("after Close: %+v, %v; want the link created", got, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("creation: %v", err)
	}
	if err := db.batchIndexed(func(*bolt.Tx, *searchIndexer) error { return nil }); err == nil {
		t.Fatal("a creation after Close succeeded")
	}
}

// TestCreateLinkDamagedSearchPage checks a creation whose batch meets a
// damaged page of links.search when it writes the search index (bbolt
// panics on a page of an unknown type): the creation fails with an error
// and nothing of it is kept, as a creation that panics does, instead of
// the panic ending the process from the batch's goroutine.
func TestCreateLinkDamagedSearchPage(t *testing.T) {
	db, ws := batchDB(t, 1)
	links := NewLinkService(db)
	ctx := context.Background()
	var bulk []*link.Link
	for i := range 400 {
		// Aliases of its own, not random codes: the same pages every run.
		bulk = append(bulk, &link.Link{Alias: fmt.Sprintf("s%03d", i), DestinationURL: fmt.Sprintf("https://shop%d.example.com/item/%d", i%37, i*7919)})
	}
	if errs, err := links.CreateLinks(ctx, ws.ID, bulk); err != nil || errors.Join(errs...) != nil {
		t.Fatal(err, errs)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Give the leaf pages of links.search but the first (which the check
	// at start reads) a page type bbolt does not know.
	bdb, err := bolt.Open(db.Path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	_ = bdb.View(func(tx *bolt.Tx) error { root = uint64(tx.Bucket(bucketLinksSearch).Root()); return nil })
	pageSize := bdb.Info().PageSize
	bdb.Close()
	file, err := os.ReadFile(db.Path)
	if err != nil {
		t.Fatal(err)
	}
	var leaves []uint64
	var walk func(id uint64)
	walk = func(id uint64) { // a page: id, flags, count, overflow; a branch's elements: pos, ksize, pgid
		p := file[int(id)*pageSize:]
		switch flags := binary.LittleEndian.Uint16(p[8:]); flags {
		case 0x01:
			for i := range int(binary.LittleEndian.Uint16(p[10:])) {
				walk(binary.LittleEndian.Uint64(p[16+16*i+8:]))
			}
		case 0x02:
			leaves = append(leaves, id)
		default:
			t.Fatalf("page %d of links.search has flags %#x", id, flags)
		}
	}
	if root == 0 {
		t.Fatal("links.search is inline")
	}
	walk(root)
	if len(leaves) < 2 {
		t.Fatalf("leaf pages %v", leaves)
	}
	f, err := os.OpenFile(db.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range leaves[1:] {
		if _, err := f.WriteAt([]byte{0x40, 0}, int64(id)*int64(pageSize)+8); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Open(); err != nil {
		t.Fatal(err)
	}
	db.db.MaxBatchSize, db.db.MaxBatchDelay = 1, time.Hour
	err = links.CreateLink(ctx, &link.Link{WorkspaceID: ws.ID, Alias: "after", DestinationURL: "https://shop1.example.com/item/1"})
	if err == nil || link.ErrorCode(err) != link.EINTERNAL {
		t.Fatalf("creation on a damaged index: %v, want an internal error", err)
	}
	if _, err := links.FindLinkByAlias(ctx, "", "after"); link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("the failed creation left its link: %v", err)
	}
}

// TestRefusedCreationCommitsNothing checks that a batch whose creations
// are all refused (a taken alias, an unknown workspace) commits no
// transaction: a client sending taken aliases costs the file no write.
func TestRefusedCreationCommitsNothing(t *testing.T) {
	db, ws := batchDB(t, 1)
	links := NewLinkService(db)
	ctx := context.Background()
	if err := links.CreateLink(ctx, &link.Link{WorkspaceID: ws.ID, Alias: "taken", DestinationURL: "https://example.com/"}); err != nil {
		t.Fatal(err)
	}
	txid := func() int {
		var id int
		_ = db.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil })
		return id
	}
	before := txid()
	err := links.CreateLink(ctx, &link.Link{WorkspaceID: ws.ID, Alias: "taken", DestinationURL: "https://example.com/again"})
	if link.ErrorCode(err) != link.ECONFLICT {
		t.Fatalf("a taken alias: %v, want a conflict", err)
	}
	err = links.CreateLink(ctx, &link.Link{WorkspaceID: db.ids.formatID(prefixWorkspace, 999), Alias: "other", DestinationURL: "https://example.com/"})
	if link.ErrorCode(err) != link.ENOTFOUND {
		t.Fatalf("an unknown workspace: %v, want not found", err)
	}
	if after := txid(); after != before {
		t.Errorf("refused creations committed %d transactions", after-before)
	}
	if _, failing := db.WriteFailing(); failing {
		t.Error("refused creations count as failed writes")
	}
}
