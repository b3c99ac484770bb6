package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

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

// TestAppendJSONTime checks the hand-written times against encoding/json.
func TestAppendJSONTime(t *testing.T) {
	for _, at := range []time.Time{time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC), time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC), time.Unix(0, 0).UTC()} {
		want, _ := json.Marshal(at)
		if got := appendJSONTime(nil, at); !bytes.Equal(got, want) {
			t.Errorf("appendJSONTime(%v) = %s, want %s", at, got, want)
		}
	}
}
