package storage_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// TestUnavailable: the write failures of the data file's disk, which pass
// when space comes back, are the store's unavailability (503 with
// Retry-After); domain errors and other faults are not.
func TestUnavailable(t *testing.T) {
	db, _ := MustOpenDB(t)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"domain", link.Errorf(link.ECONFLICT, "alias taken"), false},
		{"other", errors.New("bolt: damaged page"), false},
		{"full disk", fmt.Errorf("create link: %w", &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), true},
		{"read-only", fmt.Errorf("create link: %w", &fs.PathError{Op: "write", Path: "x", Err: syscall.EROFS}), true},
		{"quota", fmt.Errorf("create link: %w", syscall.EDQUOT), true},
		{"file size limit, as bbolt words its growth", errors.New("create link: file resize error: file too large"), true},
	}
	for _, tc := range tests {
		reason, got := db.Unavailable(tc.err)
		if got != tc.want || (got && reason == "") {
			t.Errorf("%s: Unavailable = %q, %v; want %v", tc.name, reason, got, tc.want)
		}
	}
}
