package storage

import (
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// outboxDepths holds, for each open data file, the number of pending
// webhook deliveries (the entries of deliveries.queue), so that metrics
// read the outbox's depth without scanning it. It is counted once at Open
// and then moved by every transaction that queues or dequeues a delivery,
// when that transaction commits (a rolled-back or retried one moves
// nothing). It is keyed by the bolt file because the helpers that queue
// deliveries see only the transaction.
var outboxDepths sync.Map // *bolt.DB → *atomic.Int64

// countOutbox counts the pending deliveries of a file being opened, before
// any other transaction runs.
func countOutbox(bdb *bolt.DB) error {
	var n int64
	err := bdb.View(func(tx *bolt.Tx) error {
		n = int64(tx.Bucket(bucketDeliveriesQueue).Stats().KeyN)
		return nil
	})
	if err != nil {
		return err
	}
	c := new(atomic.Int64)
	c.Store(n)
	outboxDepths.Store(bdb, c)
	return nil
}

// forgetOutbox drops the count of a file being closed.
func forgetOutbox(bdb *bolt.DB) { outboxDepths.Delete(bdb) }

// outboxDepth returns the counter of tx's file, or nil.
func outboxDepth(tx *bolt.Tx) *atomic.Int64 {
	c, ok := outboxDepths.Load(tx.DB())
	if !ok {
		return nil
	}
	return c.(*atomic.Int64)
}

// queuedDeliveries moves the outbox depth by n once tx commits.
func queuedDeliveries(tx *bolt.Tx, n int64) {
	if n == 0 {
		return
	}
	if c := outboxDepth(tx); c != nil {
		tx.OnCommit(func() { c.Add(n) })
	}
}

var _ link.OutboxCounter = (*WebhookService)(nil)

// PendingDeliveries returns the depth of the webhook outbox: the
// deliveries waiting to be sent or retried. It reads a counter, never the
// file.
func (s *WebhookService) PendingDeliveries() int64 {
	if s.db.db == nil {
		return 0
	}
	if c, ok := outboxDepths.Load(s.db.db); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
}
