package pgtest

import (
	"slices"
	"testing"
)

// The second run writes its own coverage and profiles, and never the go
// command's test log, which the first run writes.
func TestSecondPassArgs(t *testing.T) {
	got := secondPassArgs([]string{"-test.testlogfile=/tmp/x/testlog.txt", "-test.coverprofile=/tmp/c.out",
		"-test.run=TestA", "-test.v=true", "-test.trace=t.out", "-test.paniconexit0"})
	want := []string{"-test.coverprofile=/tmp/c.out.postgres", "-test.run=TestA", "-test.v=true", "-test.trace=t.out.postgres", "-test.paniconexit0"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
