package storage

import (
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// PruneDeliveries deletes the finished (succeeded or failed) deliveries
// last updated before before, and the events created before it (a pending
// delivery holds its own copy of its event's body, so it outlives its
// event). Both buckets are read oldest first and the scan stops at the
// first record created at or after before, so each run reads what it
// deletes and the pending deliveries older than before. It works in
// transactions of at most 10,000 records, and first finishes any webhook
// deletion a crash cut short. It returns the number of deliveries deleted.
func (s *WebhookService) PruneDeliveries(ctx context.Context, before time.Time) (int, error) {
	if err := s.finishDeletions(); err != nil {
		return 0, err
	}

	deleted := 0
	var rec deliveryRecord
	err := s.pruneOldest(ctx, bucketDeliveries, func(tx *bolt.Tx, k, v []byte) (bool, bool, error) {
		if err := rec.decode(v); err != nil {
			return false, false, fmt.Errorf("delivery %x: %w", k, err)
		}
		if !rec.CreatedAt.Before(before) {
			return false, true, nil
		}
		if rec.Status == string(link.DeliveryPending) || !rec.UpdatedAt.Before(before) {
			return false, false, nil
		}
		if err := tx.Bucket(bucketDeliveriesWebhook).Delete(concat(itob(rec.Webhook), k)); err != nil {
			return false, false, fmt.Errorf("unindex delivery: %w", err)
		}
		deleted++
		return true, false, nil
	})
	if err != nil {
		return deleted, fmt.Errorf("prune deliveries: %w", err)
	}
	err = s.pruneOldest(ctx, bucketEvents, func(tx *bolt.Tx, k, v []byte) (bool, bool, error) {
		var rec struct {
			CreatedAt time.Time `json:"created_at"`
		}
		if err := decodeJSON(v, &rec); err != nil {
			return false, false, fmt.Errorf("event %x: %w", k, err)
		}
		if !rec.CreatedAt.Before(before) {
			return false, true, nil
		}
		return true, false, nil
	})
	if err != nil {
		return deleted, fmt.Errorf("prune events: %w", err)
	}
	return deleted, nil
}

// finishDeletions purges the webhooks whose deletion a crash cut short.
func (s *WebhookService) finishDeletions() error {
	var deleting []uint64
	err := s.db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWebhooks).ForEach(func(k, v []byte) error {
			var rec webhookRecord
			if err := decodeJSON(v, &rec); err != nil {
				return fmt.Errorf("webhook %x: %w", k, err)
			}
			if rec.Deleting {
				deleting = append(deleting, btoi(k))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, whid := range deleting {
		if err := s.purgeWebhook(whid); err != nil {
			return err
		}
	}
	return nil
}

// pruneOldest walks a bucket from its first key in transactions of at most
// pruneChunk records, deleting the records for which fn says del, until fn
// says stop or the bucket ends.
func (s *WebhookService) pruneOldest(ctx context.Context, name []byte, fn func(tx *bolt.Tx, k, v []byte) (del, stop bool, err error)) error {
	var pos []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		done := false
		err := s.db.update(func(tx *bolt.Tx) error {
			b := tx.Bucket(name)
			c := b.Cursor()
			var dels [][]byte
			var k, v []byte
			if pos == nil {
				k, v = c.First()
			} else {
				k, v = c.Seek(pos)
			}
			for n := 0; ; n++ {
				if k == nil {
					done = true
					break
				}
				if n == pruneChunk {
					break
				}
				del, stop, err := fn(tx, k, v)
				if err != nil {
					return err
				}
				if stop {
					done = true
					break
				}
				if del {
					dels = append(dels, cloneBytes(k))
				}
				k, v = c.Next()
			}
			pos = cloneBytes(k)
			for _, k := range dels {
				if err := b.Delete(k); err != nil {
					return fmt.Errorf("delete %s %x: %w", name, k, err)
				}
			}
			return nil
		})
		if err != nil || done {
			return err
		}
	}
}
