//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package storage

import "os"

// lockFile does nothing: this build takes no advisory locks.
func lockFile(*os.File) error { return nil }

// tryLockFile reports every file as held where advisory locks are not
// available, so RemoveBackupLeftovers never removes a live backup's file.
func tryLockFile(*os.File) (bool, error) { return false, nil }
