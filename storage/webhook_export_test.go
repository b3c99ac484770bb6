package storage

// Test access to the insides of webhooks and their deliveries.

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// StartDeleteWebhook does the first step of DeleteWebhook only, as a crash
// right after it would leave the webhook.
func (s *WebhookService) StartDeleteWebhook(workspaceID, id string) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	whid, ok2 := s.db.ids.parseID(prefixWebhook, id)
	if !ok1 || !ok2 {
		return fmt.Errorf("bad id %q", id)
	}
	return s.markDeleting(context.Background(), wid, whid)
}

// CountDeliveryRecords returns the number of records in the deliveries,
// deliveries.queue and events buckets.
func (db *DB) CountDeliveryRecords() (deliveries, queued, events int) {
	_ = db.db.View(func(tx *bolt.Tx) error {
		deliveries = tx.Bucket(bucketDeliveries).Stats().KeyN
		queued = tx.Bucket(bucketDeliveriesQueue).Stats().KeyN
		events = tx.Bucket(bucketEvents).Stats().KeyN
		return nil
	})
	return
}
