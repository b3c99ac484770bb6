package storetest

import (
	"testing"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

var blocklistTests = []test{
	{"AddListDelete", testBlocklist},
}

func testBlocklist(t *testing.T, e *env) {
	admin, _ := e.setup()
	if list, err := e.Blocklist.ListBlockEntries(e.ctx); err != nil || len(list) != 0 {
		t.Fatalf("a new store's blocklist = %+v, %v", list, err)
	}
	for _, entry := range []string{"evil.example", "bad.example/path*"} {
		if err := e.Blocklist.AddBlockEntry(e.ctx, &link.BlockEntry{Entry: entry, CreatedBy: admin.ID}); err != nil {
			t.Fatal(err)
		}
		e.clock.Add(time.Minute)
	}
	wantCode(t, e.Blocklist.AddBlockEntry(e.ctx, &link.BlockEntry{Entry: "evil.example", CreatedBy: admin.ID}), link.ECONFLICT)
	list, err := e.Blocklist.ListBlockEntries(e.ctx)
	if err != nil || len(list) != 2 || list[0].Entry != "bad.example/path*" || list[1].Entry != "evil.example" ||
		list[1].CreatedBy != admin.ID || !list[1].CreatedAt.Equal(t0) {
		t.Fatalf("ListBlockEntries = %+v, %v; want both, in entry order", list, err)
	}
	if err := e.Blocklist.DeleteBlockEntry(e.ctx, "evil.example"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.Blocklist.DeleteBlockEntry(e.ctx, "evil.example"), link.ENOTFOUND)
	e.restart()
	if list, err := e.Blocklist.ListBlockEntries(e.ctx); err != nil || len(list) != 1 || list[0].Entry != "bad.example/path*" {
		t.Fatalf("after a delete and a restart: %+v, %v", list, err)
	}
}
