package postgres

// API key usage: TouchKey counts a use in memory; a goroutine of the store
// adds the counts to key_usage every KeyUsageFlush, and Close writes what
// is left. Every read adds the uses in memory its statement's snapshot
// does not hold, so that an instance's counts are exact however a read
// and a flush interleave (the uses another instance holds in memory show
// once it has written them).
//
// A read takes the batches of uses it may have to add (the one counting
// and the one being written) and, after its statement, asks of each
// whether the statement's snapshot holds it: a batch is in the database
// once the flush transaction that wrote it (or, if that failed, the one
// that wrote the batch it went back into) committed, and the snapshot
// (pg_current_snapshot) tells which transactions had ended when it was
// taken.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// DefaultKeyUsageFlush is how often key usage is written when
// Options.KeyUsageFlush is zero.
const DefaultKeyUsageFlush = time.Second

// keyUse is a number of uses and the latest of them.
type keyUse struct {
	count int64
	last  time.Time
}

func (u keyUse) add(v keyUse) keyUse {
	u.count += v.count
	if v.last.After(u.last) {
		u.last = v.last
	}
	return u
}

// usageBatch is uses counted together and written in one transaction.
// Its fields but uses are guarded by usageBuffer.mu; uses is too while
// the batch counts, and is read-only once it is being written.
type usageBatch struct {
	uses      map[string]keyUse
	xid       uint64 // the flush transaction's ID, once it has one
	committed bool   // the flush committed
	failed    bool   // the flush failed; the uses went into into
	into      *usageBatch
}

// usageBuffer is the key usage in memory of one store.
type usageBuffer struct {
	flushMu sync.Mutex // one flush at a time

	mu       sync.Mutex
	cur      *usageBatch // counting
	flushing *usageBatch // being written, or nil

	// failWrite, when set (by tests, before any flush), is called in each
	// flush's transaction after it has its ID; an error fails the flush.
	failWrite func() error

	startOnce sync.Once
	stopOnce  sync.Once
	stop      chan struct{}
	done      chan struct{}
}

func newUsageBuffer() *usageBuffer {
	return &usageBuffer{cur: &usageBatch{uses: map[string]keyUse{}}}
}

// touch counts one use of key id at at.
func (b *usageBuffer) touch(id string, at time.Time) {
	b.mu.Lock()
	b.cur.uses[id] = b.cur.uses[id].add(keyUse{count: 1, last: at.UTC()})
	b.mu.Unlock()
}

// usageRead is the batches of uses in memory when a read began (before
// its statement): the one counting and the one being written, if any.
type usageRead struct {
	cur, flushing *usageBatch
}

// begin takes the batches in memory for a read, before its statement.
func (b *usageBuffer) begin() usageRead {
	b.mu.Lock()
	defer b.mu.Unlock()
	return usageRead{cur: b.cur, flushing: b.flushing}
}

// merge adds to keys, read by a statement whose snapshot is snap, the uses
// of the batches r took that the snapshot does not hold. The uses of the
// batch that was counting are read now, not copied when the read began:
// any it counted since are later than the read's start, and they reach
// the database only with the batch, so they are counted once either way;
// this keeps a read of one key from copying every key's uses.
func (b *usageBuffer) merge(ctx context.Context, db *DB, r usageRead, snap string, keys []*link.APIKey) error {
	b.mu.Lock()
	curUses := pick(r.cur.uses, keys)
	var flushUses map[string]keyUse
	// A flush that failed since the read began put its uses into the
	// batch that was counting (flushes run one at a time, so no other
	// batch took over meanwhile): they are among curUses then.
	if f := r.flushing; f != nil && !(f.failed && f.into == r.cur) {
		flushUses = pick(f.uses, keys)
	}
	b.mu.Unlock()

	var add []map[string]keyUse
	if len(curUses) > 0 {
		in, err := b.inSnapshot(ctx, db, r.cur, snap)
		if err != nil {
			return err
		}
		if !in {
			add = append(add, curUses)
		}
	}
	if len(flushUses) > 0 {
		in, err := b.inSnapshot(ctx, db, r.flushing, snap)
		if err != nil {
			return err
		}
		if !in {
			add = append(add, flushUses)
		}
	}
	for _, uses := range add {
		for _, k := range keys {
			u, ok := uses[k.ID]
			if !ok {
				continue
			}
			cur := keyUse{count: k.RequestCount}
			if k.LastUsedAt != nil {
				cur.last = *k.LastUsedAt
			}
			cur = cur.add(u)
			k.RequestCount = cur.count
			if !cur.last.IsZero() {
				last := cur.last
				k.LastUsedAt = &last
			}
		}
	}
	return nil
}

// pick copies the uses of keys out of uses.
func pick(uses map[string]keyUse, keys []*link.APIKey) map[string]keyUse {
	var out map[string]keyUse
	for _, k := range keys {
		if u, ok := uses[k.ID]; ok {
			if out == nil {
				out = make(map[string]keyUse)
			}
			out[k.ID] = u
		}
	}
	return out
}

// inSnapshot reports whether the uses of batch are in the database as the
// snapshot snap sees it.
func (b *usageBuffer) inSnapshot(ctx context.Context, db *DB, batch *usageBatch, snap string) (bool, error) {
	for range 64 { // a failed flush's uses go into the next batch; the chain is short
		b.mu.Lock()
		xid, committed, failed, into := batch.xid, batch.committed, batch.failed, batch.into
		b.mu.Unlock()
		switch {
		case xid != 0 && !snapshotSees(snap, xid):
			// Still being written when the snapshot was taken (or being
			// written now: not before).
			return false, nil
		case failed:
			batch = into
			continue
		case xid == 0:
			return false, nil // not being written yet
		case committed:
			return true, nil
		}
		// Ended before the snapshot, but the flush has not heard how yet.
		var status string
		if err := db.pool.QueryRow(ctx, `SELECT pg_xact_status($1::text::xid8)`, strconv.FormatUint(xid, 10)).Scan(&status); err != nil {
			return false, fmt.Errorf("key usage: %w", err)
		}
		if status != "aborted" {
			return status == "committed", nil
		}
		// Aborted: its uses are going back into the counting batch.
		b.mu.Lock()
		for !batch.failed && !batch.committed {
			b.mu.Unlock()
			time.Sleep(time.Millisecond)
			b.mu.Lock()
		}
		b.mu.Unlock()
	}
	return false, errors.New("key usage: a chain of failed flushes too long to follow")
}

// snapshotSees reports whether transaction xid had ended when the
// snapshot snap ("xmin:xmax:xip,…", pg_current_snapshot's text) was
// taken.
func snapshotSees(snap string, xid uint64) bool {
	parts := strings.SplitN(snap, ":", 3)
	if len(parts) != 3 {
		return false
	}
	xmin, err1 := strconv.ParseUint(parts[0], 10, 64)
	xmax, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	switch {
	case xid < xmin:
		return true
	case xid >= xmax:
		return false
	}
	for _, s := range strings.Split(parts[2], ",") {
		if s == strconv.FormatUint(xid, 10) {
			return false
		}
	}
	return true
}

// flushKeyUsage adds the uses counted in memory to key_usage in one
// transaction. The uses being written stay visible to reads until the
// write commits; if it fails they are put back for the next flush.
func (db *DB) flushKeyUsage(ctx context.Context) error {
	b := db.usage
	b.flushMu.Lock()
	defer b.flushMu.Unlock()

	b.mu.Lock()
	batch := b.cur
	if len(batch.uses) == 0 {
		b.mu.Unlock()
		return nil
	}
	b.cur = &usageBatch{uses: map[string]keyUse{}}
	b.flushing = batch
	b.mu.Unlock()

	ids := make([]string, 0, len(batch.uses))
	for id := range batch.uses {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	counts := make([]int64, len(ids))
	lasts := make([]time.Time, len(ids))
	for i, id := range ids {
		counts[i], lasts[i] = batch.uses[id].count, batch.uses[id].last
	}
	err := db.tx(ctx, func(tx pgx.Tx) error {
		var xid string
		if err := tx.QueryRow(ctx, `SELECT pg_current_xact_id()::text`).Scan(&xid); err != nil {
			return fmt.Errorf("key usage: %w", err)
		}
		x, err := strconv.ParseUint(xid, 10, 64)
		if err != nil {
			return fmt.Errorf("key usage: transaction ID %q: %w", xid, err)
		}
		b.mu.Lock()
		batch.xid = x
		b.mu.Unlock()
		if b.failWrite != nil {
			if err := b.failWrite(); err != nil {
				return err
			}
		}
		// Rows in the keys' order, which a member's removal locks them
		// in too; a use of a key that does not exist counts nothing.
		_, err = tx.Exec(ctx, `INSERT INTO key_usage (key_id, request_count, last_used_at)
			SELECT u.id, u.n, u.last FROM unnest($1::text[], $2::bigint[], $3::timestamptz[]) AS u (id, n, last)
				JOIN keys k ON k.id = u.id ORDER BY k.seq
			ON CONFLICT (key_id) DO UPDATE SET request_count = key_usage.request_count + excluded.request_count,
				last_used_at = GREATEST(key_usage.last_used_at, excluded.last_used_at)`, ids, counts, lasts)
		if err != nil {
			return fmt.Errorf("key usage: %w", err)
		}
		return nil
	})
	if err != nil && batch.xid != 0 {
		// The commit's answer may have been lost with the connection:
		// the database knows whether it happened.
		var status string
		if qerr := db.pool.QueryRow(context.Background(), `SELECT pg_xact_status($1::text::xid8)`,
			strconv.FormatUint(batch.xid, 10)).Scan(&status); qerr == nil && status == "committed" {
			err = nil
		}
	}

	b.mu.Lock()
	if err != nil {
		for id, u := range batch.uses {
			b.cur.uses[id] = b.cur.uses[id].add(u)
		}
		batch.failed, batch.into = true, b.cur
	} else {
		batch.committed = true
	}
	b.flushing = nil
	b.mu.Unlock()
	return err
}

// startKeyUsageFlush starts the goroutine that writes key usage every
// interval (DefaultKeyUsageFlush when not positive), once; Close stops it.
func (db *DB) startKeyUsageFlush(interval time.Duration) {
	if interval <= 0 {
		interval = DefaultKeyUsageFlush
	}
	b := db.usage
	b.startOnce.Do(func() {
		b.stop, b.done = make(chan struct{}), make(chan struct{})
		go func() {
			defer close(b.done)
			t := time.NewTicker(interval)
			defer t.Stop()
			for {
				select {
				case <-b.stop:
					return
				case <-t.C:
					if err := db.flushKeyUsage(context.Background()); err != nil {
						// The uses were put back and are written by the next
						// flush; an unavailable database is logged once, by
						// the write health (noteWrite).
						if _, down := unavailable(err); !down {
							db.logger.Error("flush key usage", "err", err)
						}
					}
				}
			}
		}()
	})
}

// closeKeyUsage stops the flush goroutine and writes what is left.
func (db *DB) closeKeyUsage() error {
	b := db.usage
	b.stopOnce.Do(func() {
		if b.stop != nil {
			close(b.stop)
			<-b.done
		}
	})
	if err := db.flushKeyUsage(context.Background()); err != nil {
		return fmt.Errorf("flush key usage: %w", err)
	}
	return nil
}
