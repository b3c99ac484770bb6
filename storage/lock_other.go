//go:build !unix

package storage

import "os"

// lockFile does nothing where advisory locks are not available.
func lockFile(*os.File) error { return nil }

// tryLockFile reports every file as held where advisory locks are not
// available, so RemoveBackupLeftovers never removes a live backup's file.
func tryLockFile(*os.File) (bool, error) { return false, nil }
