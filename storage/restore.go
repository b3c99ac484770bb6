package storage

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// RestoreReport is what RestoreFile did.
type RestoreReport struct {
	From     string
	To       string // the data file
	Size     int64
	Schema   uint64 // the schema version of the restored file
	Replaced string // where the replaced data file was kept; "" when there was none
	// Removed are the copies an interrupted restore had left beside the
	// data file (see RemoveRestoreLeftovers).
	Removed []string
}

// ErrBackupRefused matches (with errors.Is) the error of RestoreFile when
// the backup is damaged or no linkbolt data file; the data file is then
// untouched.
var ErrBackupRefused = errors.New("backup refused")

// RefusedBackupError says why RestoreFile refused a backup. It matches
// ErrBackupRefused.
type RefusedBackupError struct {
	Path     string
	Problems []string
}

func (e *RefusedBackupError) Error() string {
	return fmt.Sprintf("%s is not a whole linkbolt data file (%d problems): the data file was not touched", e.Path, len(e.Problems))
}

func (e *RefusedBackupError) Is(target error) bool { return target == ErrBackupRefused }

// RestoreFile puts a copy of the backup file from in the place of the
// data file to. It refuses, before touching the data file, while a server
// holds it (an error matching ErrLocked) and when the copy is damaged or no
// linkbolt data file of a schema this code knows (a *RefusedBackupError:
// CheckFile's problems, bbolt's and linkbolt's). The backup is copied into
// a temporary file beside the data file and checked there, so what is
// checked is what is installed; the data file is kept beside itself as
// to+".replaced-"+a UTC timestamp (a hard link, so the path names a whole
// file at every moment) and the copy renamed over it. The backup itself
// is only read.
func RestoreFile(from, to string, now time.Time) (*RestoreReport, error) {
	info, err := os.Stat(from)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", from)
	}
	if toInfo, err := os.Stat(to); err == nil && os.SameFile(info, toInfo) {
		return nil, fmt.Errorf("%s is the data file itself: restore from a backup of it", from)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	unlock, held, err := holdDataFile(to)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var removed []string
	if held {
		// Without a data file there is no lock to exclude another
		// restore's copy; the server removes those when it starts.
		if removed, err = RemoveRestoreLeftovers(to); err != nil {
			return nil, fmt.Errorf("remove what an interrupted restore left behind: %w", err)
		}
	}
	tmp, err := copyBeside(from, to)
	if err != nil {
		return nil, err
	}
	installed := false
	defer func() {
		if !installed {
			os.Remove(tmp)
		}
	}()
	r := &RestoreReport{From: from, To: to, Removed: removed}
	if r.Schema, err = checkBackup(from, tmp); err != nil {
		return nil, err
	}
	if st, err := os.Stat(tmp); err == nil {
		r.Size = st.Size()
	}
	if _, err := os.Stat(to); err == nil {
		if r.Replaced, err = keepReplaced(to, now); err != nil {
			return nil, fmt.Errorf("keep the replaced data file: %w", err)
		}
	}
	if err := os.Rename(tmp, to); err != nil {
		return nil, fmt.Errorf("put the backup in place: %w", err)
	}
	installed = true
	syncDir(filepath.Dir(to))
	return r, nil
}

// keepReplaced hard-links the data file at path to
// path+".replaced-"+now (UTC, to the second; a second restore within the
// same second adds "-2", "-3", ...) and returns that name.
func keepReplaced(path string, now time.Time) (string, error) {
	base := path + ".replaced-" + now.UTC().Format("20060102T150405Z")
	name := base
	for i := 2; ; i++ {
		err := os.Link(path, name)
		if !errors.Is(err, os.ErrExist) || i > 100 {
			return name, err
		}
		name = base + "-" + strconv.Itoa(i)
	}
}

// holdDataFile locks the data file at path, when there is one (held),
// until unlock is called, so that no server opens it while it is
// replaced; a server holding it already is an error matching ErrLocked.
func holdDataFile(path string) (unlock func(), held bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, false, nil
	} else if err != nil {
		return nil, false, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, &lockedError{path: path}
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, true, nil
}

// copyBeside copies from into a new temporary file in to's directory and
// returns its name.
func copyBeside(from, to string) (string, error) {
	src, err := os.Open(from)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp(filepath.Dir(to), filepath.Base(to)+restoringInfix+"*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(dst.Name(), 0o600)
	}
	if err != nil {
		os.Remove(dst.Name())
		return "", fmt.Errorf("copy %s: %w", from, err)
	}
	return dst.Name(), nil
}

// checkBackup checks the copy at path of the backup from: CheckFile, then
// that it is a linkbolt data file of a schema version this code opens. It
// returns the schema version.
func checkBackup(from, path string) (uint64, error) {
	r, err := CheckFile(path)
	if err != nil {
		return 0, fmt.Errorf("check %s: %w", from, err)
	}
	if !r.OK() {
		return 0, &RefusedBackupError{Path: from, Problems: r.Problems}
	}
	ro, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if errors.Is(err, berrors.ErrTimeout) {
		return 0, &lockedError{path: path}
	} else if err != nil {
		return 0, &RefusedBackupError{Path: from, Problems: []string{"bbolt cannot open it: " + err.Error()}}
	}
	defer ro.Close()
	var version uint64
	problem := ""
	_ = ro.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil || meta.Get(metaSchemaVersion) == nil {
			problem = "it is a bbolt file but no linkbolt data file (no schema version)"
			return nil
		}
		v, err := strconv.ParseUint(string(meta.Get(metaSchemaVersion)), 10, 64)
		switch {
		case err != nil || v == 0:
			problem = fmt.Sprintf("unreadable schema version %q", meta.Get(metaSchemaVersion))
		case v > SchemaVersion:
			problem = fmt.Sprintf("schema version %d, newer than this linkbolt supports (%d): restore it with a newer linkbolt", v, SchemaVersion)
		}
		version = v
		return nil
	})
	if problem != "" {
		return 0, &RefusedBackupError{Path: from, Problems: []string{problem}}
	}
	return version, nil
}

// syncDir makes a rename in dir durable where the system allows it; a
// failure only means the rename may be lost with a crash of the machine.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
