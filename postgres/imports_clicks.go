package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/linkbolt/linkbolt/link"
)

// writeImportedClicks writes an import batch's clicks in tx, as the click
// recorder writes them but without link.clicked events (they happened
// long ago, elsewhere): the dated ones whole, the undated ones in the
// links' totals and the aggregates only, at the hour of their UndatedAt,
// as direct clicks of unknown clients.
func (db *DB) writeImportedClicks(ctx context.Context, tx pgx.Tx, wsID string, cs []importedClicks) error {
	if len(cs) == 0 {
		return nil
	}
	var batch []storedClick
	for i := range cs {
		ic := &cs[i]
		for j := range ic.Clicks {
			if p, ok := parseClick(db.ids, &ic.Clicks[j]); ok {
				batch = append(batch, p)
			}
		}
		if ic.Undated > 0 {
			c := link.Click{WorkspaceID: wsID, LinkID: ic.LinkID, Time: ic.UndatedAt}
			if p, ok := parseClick(db.ids, &c); ok {
				p.Weight = ic.Undated
				batch = append(batch, p)
			}
		}
	}
	if len(batch) == 0 {
		return nil
	}
	_, err := writeClickBatch(ctx, tx, batch)
	return err
}
