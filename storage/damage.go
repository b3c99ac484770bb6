package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/linkbolt/linkbolt/storage/internal/boltpage"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrDamaged matches (with errors.Is) the error Open returns for a data
// file that is not a whole bbolt file: empty, truncated, overwritten.
var ErrDamaged = errors.New("data file is damaged")

// DamagedError says which data file is damaged and how; it matches
// ErrDamaged. Its message is one line that tells the operator what to do.
type DamagedError struct {
	Path   string
	Reason string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("data file %s is damaged (%s): restore it from a backup; `linkbolt check` says more", e.Path, e.Reason)
}

func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

func damaged(path string, reason string) *DamagedError {
	reason = strings.Join(strings.Fields(reason), " ") // one line
	if len(reason) > 300 {
		reason = reason[:300] + "…"
	}
	return &DamagedError{Path: path, Reason: reason}
}

// inspectDataFile is the start-up check of an existing data file. It
// reads the header pages, checks that the file holds every page they
// record, and walks the free-page list and the branch pages of every
// bucket, so that bbolt, which trusts the file, never maps a page past
// its end or follows a damaged page while opening it. Leaf pages are left
// to CheckFile: reading them costs as much as reading the whole file. A
// missing file is fine (Open creates it); an empty one is damaged. A file
// with one damaged header page opens from the other and is not refused:
// warning then says so, for the log.
func inspectDataFile(path string) (warning string, err error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("data file %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("data file %s is not a regular file", path)
	}
	// bbolt's shared lock keeps a writer (a server) from changing the
	// file under the inspection; a server holding the file makes this
	// fail as locked, as the open itself would.
	ro, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, berrors.ErrTimeout) {
		return "", &lockedError{path: path}
	} else if errors.Is(err, fs.ErrPermission) {
		return "", fmt.Errorf("open data file %s: %w", path, err)
	} else if err == nil {
		defer ro.Close()
	}
	bf, d, ierr := boltpage.Open(path)
	if ierr != nil {
		return "", fmt.Errorf("data file %s: %w", path, ierr)
	}
	if d == nil {
		defer bf.Close()
		warning = bf.HeaderDamage()
		d = bf.Walk(false)
	}
	if d != nil {
		return "", damaged(path, d.Summary)
	}
	if err != nil { // bbolt refused a file the inspection found whole
		return "", damaged(path, err.Error())
	}
	return warning, nil
}

// catchDamage runs fn, turning a panic or a memory fault (bbolt reading a
// damaged page of the memory-mapped file) into a DamagedError for path.
func catchDamage(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = damaged(path, fmt.Sprintf("reading it failed: %v", v))
		}
	}()
	return fn()
}

// CatchDamage runs fn, which reads the data file, and turns a panic or a
// memory fault raised by a damaged page into an error matching ErrDamaged,
// so start-up ends with one clear line instead of a crash.
func (db *DB) CatchDamage(fn func() error) error { return catchDamage(db.Path, fn) }
