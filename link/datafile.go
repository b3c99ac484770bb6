package link

import (
	"context"
	"io"
	"time"
)

// DataFile is what the HTTP face needs of the data file itself (the
// storage.DB): its health and hot backups. Its errors are infrastructure
// errors (EINTERNAL), never shown to clients.
type DataFile interface {
	// Ping checks that the data file can be read.
	Ping(ctx context.Context) error
	// WriteFailing reports whether writes to the data file are failing,
	// and since when.
	WriteFailing() (since time.Time, failing bool)
	// Unavailable reports whether err, an infrastructure error of one of
	// the store's services, says that the store cannot serve for now (its
	// database unreachable, its disk full, a statement past its timeout)
	// rather than a fault of the request, and why, in words fit for a
	// client: the server answers such errors 503 with Retry-After.
	Unavailable(err error) (reason string, ok bool)
	// SpoolBackup writes a consistent copy of the data file to a spool
	// and returns it to read, with its size; closing it removes the spool.
	SpoolBackup() (io.ReadCloser, int64, error)
}
