package postgres

import (
	"context"
	"sync"
	"time"
)

// analyzeMin and analyzeShare say when the links added through this
// process call for fresh planner statistics of the links table: at
// least analyzeMin links, and at least 1/analyzeShare of the rows the
// table had at the last ANALYZE. autovacuum analyses a table too, but
// only on its next round (a minute apart by default) and after a tenth of
// it changed: a search right after a bulk load or an import was planned
// on the statistics of an empty or much smaller table, read the
// workspace's every link instead of the trigram index, and took 38-225 ms
// instead of 1-18.
const (
	analyzeMin   = 5000
	analyzeShare = 5
)

// analyzer runs ANALYZE links in the background when enough links were
// added, one at a time.
type analyzer struct {
	mu      sync.Mutex
	added   int64
	rows    int64 // the table's rows at the last ANALYZE (its estimate)
	running bool
	closed  bool               // the store is closing: no ANALYZE starts
	cancel  context.CancelFunc // ends the running ANALYZE
	wg      sync.WaitGroup
}

// linksAdded counts n links added through this process, and starts an
// ANALYZE of links when they call for one.
func (db *DB) linksAdded(n int) {
	a := &db.analyze
	a.mu.Lock()
	defer a.mu.Unlock()
	a.added += int64(n)
	if a.running || a.closed || a.added < max(analyzeMin, a.rows/analyzeShare) {
		return
	}
	a.running = true
	added := a.added
	a.added = 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	a.cancel = cancel
	a.wg.Go(func() {
		defer cancel()
		var rows float32
		_, err := db.pool.Exec(ctx, `ANALYZE links`)
		if err == nil {
			err = db.pool.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'links'::regclass`).Scan(&rows)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.running = false
		if err != nil {
			// autovacuum will; the next links added try again.
			a.added += added
			db.logger.Debug("postgres: ANALYZE links after a bulk load failed", "err", db.redact(err))
			return
		}
		a.rows = int64(rows)
	})
}

// stopAnalyze ends an ANALYZE started by linksAdded, waits for it, and
// starts no other.
func (db *DB) stopAnalyze() {
	a := &db.analyze
	a.mu.Lock()
	a.closed = true
	if a.running && a.cancel != nil {
		a.cancel()
	}
	a.mu.Unlock()
	a.wg.Wait()
}
