package storage_test

import "testing"

// mustRun runs fn as the subtest name and stops t if it fails: the steps
// of a story build on each other.
func mustRun(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, fn) {
		t.FailNow()
	}
}
