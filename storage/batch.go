package storage

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// creationBatch gathers concurrent calls into one write transaction, as
// bolt's Batch does (at most MaxBatchSize calls, waiting at most
// MaxBatchDelay for more), and lets them share one searchIndexer that is
// written once before the commit: the links one commit creates rewrite
// each search set they have in common (a trigram such as "htt" is in
// every link of a block) once, not once a link.
//
// A call that fails with a refusal (see refusal) leaves the transaction
// as it was and gets its error once the others commit. Any other failure
// of a call rolls the transaction back; that call gets its error and the
// others run again without it. A panic in a call is such a failure; a
// panic while writing the shared index fails every call.
//
// Close commits the calls still gathering (see closeCreations): a group
// must not run once the file is closed.
type creationBatch struct {
	mu      sync.Mutex
	pending *creationGroup
	groups  sync.WaitGroup // the groups not yet run to their end
	closed  bool           // Close began: no new calls
}

type creationGroup struct {
	calls []creationCall
	timer *time.Timer
	start sync.Once
}

type creationCall struct {
	fn  func(*bolt.Tx, *searchIndexer) error
	err chan error
}

// refusal wraps an error a call returns before it wrote anything in the
// transaction (a taken alias, an unknown workspace): the batch need not
// roll back the other calls' writes for it.
type refusal struct{ error }

func (r refusal) Unwrap() error { return r.error }

// errAllRefused rolls back the transaction of a batch whose calls were
// all refused: it wrote nothing, and a commit would cost a write of the
// file for nothing.
var errAllRefused = errors.New("every creation of the batch was refused")

// batchIndexed runs fn in a write transaction shared with concurrent
// callers (see creationBatch) and notes whether the write failed. fn may
// run more than once: it must compute everything from its input, and
// hand out its result only once batchIndexed returns nil.
func (db *DB) batchIndexed(fn func(*bolt.Tx, *searchIndexer) error) error {
	errc := make(chan error, 1)
	b := &db.creations
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return errors.New("storage: data file not open")
	}
	g := b.pending
	if g == nil {
		g = &creationGroup{}
		b.groups.Add(1)
		g.timer = time.AfterFunc(db.db.MaxBatchDelay, func() { db.runCreations(g) })
		b.pending = g
	}
	g.calls = append(g.calls, creationCall{fn: fn, err: errc})
	full := db.db.MaxBatchSize > 0 && len(g.calls) >= db.db.MaxBatchSize
	if full {
		b.pending = nil // later callers start a new group
	}
	b.mu.Unlock()
	if full {
		go db.runCreations(g)
	}
	err := <-errc
	var r refusal
	if errors.As(err, &r) {
		return r.error
	}
	return err
}

// runCreations runs the calls of g, once, whichever of its timer and its
// last caller comes first.
func (db *DB) runCreations(g *creationGroup) {
	g.start.Do(func() {
		b := &db.creations
		defer b.groups.Done()
		b.mu.Lock()
		if b.pending == g {
			b.pending = nil
		}
		b.mu.Unlock()
		g.timer.Stop()
		calls := g.calls
		for len(calls) > 0 {
			failed := -1
			refused := make([]error, len(calls))
			err := db.db.Update(func(tx *bolt.Tx) error {
				clear(refused)
				var ix searchIndexer
				wrote := false
				for i, c := range calls {
					err := callSafely(c.fn, tx, &ix)
					if errors.As(err, new(refusal)) {
						refused[i] = err
						continue
					}
					if err != nil {
						failed = i
						return err
					}
					wrote = true
				}
				if !wrote {
					return errAllRefused // nothing to commit
				}
				// A damaged page of the index panics here, in this
				// goroutine: every call gets the error, as a call that
				// panics does, and the process goes on.
				return callSafely(func(tx *bolt.Tx, ix *searchIndexer) error { return ix.write(tx) }, tx, &ix)
			})
			if err == errAllRefused {
				err = nil
			} else {
				db.writes.note(err, db.Now)
			}
			if failed >= 0 {
				// Rolled back: the failed call has its answer, the others
				// run again (a refusal too: a call before it may take
				// another path the second time, a new code say).
				calls[failed].err <- err
				calls = slices.Delete(calls, failed, failed+1)
				continue
			}
			for i, c := range calls {
				if refused[i] != nil {
					c.err <- refused[i]
				} else {
					c.err <- err
				}
			}
			return
		}
	})
}

// closeCreations takes no new calls and runs the calls gathered so far,
// for Close: it returns once every group has committed or failed.
func (db *DB) closeCreations() {
	b := &db.creations
	b.mu.Lock()
	b.closed = true
	g := b.pending
	b.mu.Unlock()
	if g != nil {
		db.runCreations(g)
	}
	b.groups.Wait()
}

// callSafely runs fn, turning a panic into an error.
func callSafely(fn func(*bolt.Tx, *searchIndexer) error, tx *bolt.Tx, ix *searchIndexer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic while creating: %v", p)
		}
	}()
	return fn(tx, ix)
}
