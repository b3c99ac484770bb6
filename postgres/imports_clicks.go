package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// errNoClickImport refuses an import with clicks until the click tables
// exist: its links would count no clicks.
var errNoClickImport = errors.New("postgres: importing clicks needs the click tables, which this store does not have yet")

// writeImportedClicks writes an import batch's clicks in tx, as the click
// recorder writes them but without link.clicked events (they happened
// long ago, elsewhere): the dated ones whole, the undated ones in the
// links' totals and the aggregates only, at the hour of their UndatedAt.
// Until the click service keeps click tables it refuses any clicks.
func (db *DB) writeImportedClicks(ctx context.Context, tx pgx.Tx, wsID string, cs []importedClicks) error {
	if len(cs) > 0 {
		return errNoClickImport
	}
	return nil
}
