package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// BackupTempPrefix starts the name of every temporary file a backup writes:
// the spool of a hot backup beside the data file, and the copy a backup
// command writes beside its output before renaming it into place.
// RemoveBackupLeftovers removes only files whose names start with it.
const BackupTempPrefix = ".linkbolt-backup-"

// CreateBackupTemp creates a temporary backup file in dir and locks it, so
// that RemoveBackupLeftovers in another process (or another backup) leaves
// it alone while it is written. Closing the file releases the lock.
func CreateBackupTemp(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, BackupTempPrefix+"*")
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return f, nil
}

// RemoveBackupLeftovers removes the temporary backup files in dir that a
// crashed backup left behind (a kill -9 skips every deferred removal), and
// returns their names. It removes only regular files named
// BackupTempPrefix+"…" that no running backup holds locked.
func RemoveBackupLeftovers(dir string) ([]string, error) {
	return removeLeftovers(dir, BackupTempPrefix)
}

// RemoveRestoreLeftovers removes the copies of a backup that a crashed
// restore into the data file at dataPath left beside it (a kill -9 during
// a restore left a full-size dataPath.restoring-… for good), and returns
// their names. Call it holding the data file (a server that opened it,
// or a restore that locked it): a restore holds it while its copy exists,
// so the copies found then are a crash's.
func RemoveRestoreLeftovers(dataPath string) ([]string, error) {
	return removeLeftovers(filepath.Dir(dataPath), filepath.Base(dataPath)+restoringInfix)
}

// restoringInfix follows the data file's name in the name of a restore's
// copy of the backup.
const restoringInfix = ".restoring-"

// removeLeftovers removes the regular files in dir whose names start with
// prefix and that no process holds locked.
func removeLeftovers(dir, prefix string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		ok, err := removeIfUnlocked(path)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			removed = append(removed, path)
		}
	}
	return removed, errors.Join(errs...)
}

// removeIfUnlocked removes path unless a live backup holds it locked.
func removeIfUnlocked(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // its backup finished meanwhile
	} else if err != nil {
		return false, err
	}
	defer f.Close()
	free, err := tryLockFile(f)
	if err != nil || !free {
		return false, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, nil
}

// SpoolBackup writes a consistent copy of the data file into a temporary
// file beside it and returns a reader of that copy and its size; close the
// reader when done. The file is unlinked as soon as it is created, so no
// crash can leave it behind, and closing the reader frees its space.
// Spooling keeps the read transaction as short as the local disk allows,
// however slowly the copy is then read: an open read transaction stops the
// file from growing and stalls every write.
func (db *DB) SpoolBackup() (io.ReadCloser, int64, error) {
	f, err := os.CreateTemp(filepath.Dir(db.Path), BackupTempPrefix+"*")
	if err != nil {
		return nil, 0, fmt.Errorf("backup spool: %w", err)
	}
	s := &backupSpool{File: f}
	if err := os.Remove(f.Name()); err != nil {
		// Where an open file cannot be unlinked (Windows) the spool
		// keeps its name until closed; a crash leaves it to
		// RemoveBackupLeftovers at the next start.
		s.name = f.Name()
		if err := lockFile(f); err != nil {
			s.Close()
			return nil, 0, fmt.Errorf("backup spool: %w", err)
		}
	}
	n, err := db.WriteBackup(f)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		s.Close()
		return nil, 0, fmt.Errorf("backup spool: %w", err)
	}
	return s, n, nil
}

// backupSpool is the spool file of SpoolBackup; name is set only while
// the file still has one.
type backupSpool struct {
	*os.File
	name string
}

func (s *backupSpool) Close() error {
	err := s.File.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
	return err
}

// BackupFile writes a consistent copy of the data file at path to w
// without opening it for writing: no schema upgrade, no bucket created,
// nothing written, so an offline backup taken before an upgrade is the file
// as the old version left it, and the file itself stays byte for byte as it
// was. It fails with an error matching ErrLocked while a server holds the
// file, and with one matching ErrDamaged when the file is damaged.
func BackupFile(path string, w io.Writer) (int64, error) {
	// A damaged header page is no reason to refuse: the copy is of the
	// state the file opens in, with both its header pages whole.
	if _, err := inspectDataFile(path); err != nil {
		return 0, err
	}
	var n int64
	err := catchDamage(path, func() error {
		ro, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if errors.Is(err, berrors.ErrTimeout) {
			return &lockedError{path: path}
		} else if err != nil {
			return fmt.Errorf("open data file %s: %w", path, err)
		}
		defer ro.Close()
		return ro.View(func(tx *bolt.Tx) error {
			var err error
			if n, err = tx.WriteTo(w); err != nil {
				return fmt.Errorf("write backup: %w", err)
			}
			return nil
		})
	})
	return n, err
}
