package storage

import (
	"fmt"
	"testing"
)

func TestVisitorRecord(t *testing.T) {
	in := visitorRecord{bot: true, links: []uint64{3, 9, 1 << 40}, campaigns: []string{"cmp_a", "cmp_b"}}
	var out visitorRecord
	err := out.decode(in.appendTo(nil))
	if err != nil || fmt.Sprint(out) != fmt.Sprint(in) {
		t.Fatalf("round trip %+v, %v", out, err)
	}
	bad := visitorRecord{campaigns: []string{"b", "a"}}
	if err := new(visitorRecord).decode(bad.appendTo(nil)); err == nil {
		t.Fatal("decoded campaigns out of order")
	}
}
