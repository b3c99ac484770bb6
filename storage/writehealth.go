package storage

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// writeHealth remembers whether writes to the data file fail: from the
// first write transaction that fails for a reason of the file (a full disk,
// a read-only file system, an I/O error; not a domain error such as a
// taken alias) until one succeeds.
type writeHealth struct {
	mu    sync.Mutex
	since time.Time // zero while writes succeed
}

func (h *writeHealth) note(err error, now func() time.Time) {
	if err != nil && (link.ErrorCode(err) != link.EINTERNAL ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return // the write was refused or given up, not failed
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err == nil:
		h.since = time.Time{}
	case h.since.IsZero():
		h.since = now()
	}
}

// The server sees the data file's health and backups through link.DataFile.
var _ link.DataFile = (*DB)(nil)

// WriteFailing reports whether the last write transaction of the API or
// a background job failed for a reason of the data file, and since when
// writes have been failing.
func (db *DB) WriteFailing() (time.Time, bool) {
	db.writes.mu.Lock()
	defer db.writes.mu.Unlock()
	return db.writes.since, !db.writes.since.IsZero()
}

// update runs fn in a write transaction, like bolt's Update, and notes
// whether the write failed.
func (db *DB) update(fn func(*bolt.Tx) error) error {
	err := db.db.Update(fn)
	db.writes.note(err, db.Now)
	return err
}

// Unavailable reports whether err failed for a reason of the data file's
// disk that passes when space comes back (a full disk or quota, a file
// size limit, a read-only file system, an I/O error), rather than a fault
// of the request: the server answers it 503 with Retry-After.
func (db *DB) Unavailable(err error) (string, bool) {
	if err == nil || link.ErrorCode(err) != link.EINTERNAL {
		return "", false
	}
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG, syscall.EROFS, syscall.EIO} {
		if errors.Is(err, errno) {
			return reasonWritesFail, true
		}
	}
	// bbolt words the failures of growing the file without their errno.
	msg := err.Error()
	for _, s := range []string{"file resize error", "file sync error", "mmap allocate error"} {
		if strings.Contains(msg, s) {
			return reasonWritesFail, true
		}
	}
	return "", false
}

// reasonWritesFail is what a client is told of a write the data file's
// disk refused.
const reasonWritesFail = "the data file cannot be written (its disk is full or read-only): changes cannot be saved"
