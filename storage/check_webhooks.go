package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// checkWebhooks checks the webhook and delivery buckets by brute force:
// every webhook record decodes and, unless it is being deleted, has an
// existing workspace and its webhooks.workspace entry; webhooks.event
// holds exactly one entry per event of each enabled webhook and
// webhooks.workspace one per webhook; every delivery decodes, names an
// existing webhook, has its deliveries.webhook entry, and is pending if
// and only if its queue entry exists (webhook id + its Queue → its id),
// with a NextAttemptAt; deliveries.queue and deliveries.webhook hold
// nothing else.
func checkWebhooks(tx *bolt.Tx) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	hooks := map[uint64]*webhookRecord{}
	wantWS := map[string]bool{}
	wantEvent := map[string]bool{}
	_ = tx.Bucket(bucketWebhooks).ForEach(func(k, v []byte) error {
		var rec webhookRecord
		if err := decodeJSON(v, &rec); err != nil || len(k) != 8 {
			fail("webhook %x: malformed (%v)", k, err)
			return nil
		}
		hooks[btoi(k)] = &rec
		if rec.Deleting {
			return nil
		}
		if rec.Secret == "" {
			fail("webhook %x: no secret", k)
		}
		if err := workspaceExists(tx, rec.Workspace); err != nil {
			fail("webhook %x: workspace %d: %v", k, rec.Workspace, err)
		}
		if rec.Failures < 0 {
			fail("webhook %x: negative failures", k)
		}
		wantWS[string(concat(itob(rec.Workspace), k))] = true
		if rec.subscribed() {
			for _, e := range rec.Events {
				wantEvent[string(concat(subscriptionPrefix(rec.Workspace, e), k))] = true
			}
		}
		return nil
	})
	compareSet := func(name []byte, want map[string]bool) {
		n := 0
		_ = tx.Bucket(name).ForEach(func(k, v []byte) error {
			n++
			if !want[string(k)] || len(v) != 0 {
				fail("%s %x: dangling (value %x)", name, k, v)
			}
			return nil
		})
		if n != len(want) {
			fail("%s: %d entries, want %d", name, n, len(want))
		}
	}
	compareSet(bucketWebhooksWorkspace, wantWS)
	compareSet(bucketWebhooksEvent, wantEvent)

	wantByWebhook := map[string]bool{}
	wantQueue := map[string][]byte{}
	_ = tx.Bucket(bucketDeliveries).ForEach(func(k, v []byte) error {
		var rec deliveryRecord
		if err := rec.decode(v); err != nil || len(k) != 8 {
			fail("delivery %x: malformed (%v)", k, err)
			return nil
		}
		wh := hooks[rec.Webhook]
		switch {
		case wh == nil:
			fail("delivery %x: webhook %d does not exist", k, rec.Webhook)
		case wh.Workspace != rec.Workspace:
			fail("delivery %x: workspace %d, its webhook's is %d", k, rec.Workspace, wh.Workspace)
		}
		if !json.Valid(rec.Payload) {
			fail("delivery %x: payload is not JSON", k)
		}
		wantByWebhook[string(concat(itob(rec.Webhook), k))] = true
		switch link.DeliveryStatus(rec.Status) {
		case link.DeliveryPending:
			if rec.Queue == 0 || rec.NextAttemptAt == nil {
				fail("delivery %x: pending with queue %d, next attempt %v", k, rec.Queue, rec.NextAttemptAt)
				return nil
			}
			wantQueue[string(queueKey(rec.Webhook, rec.Queue))] = cloneBytes(k)
		case link.DeliverySucceeded, link.DeliveryFailed:
			if rec.Queue != 0 || rec.NextAttemptAt != nil {
				fail("delivery %x: %s with queue %d, next attempt %v", k, rec.Status, rec.Queue, rec.NextAttemptAt)
			}
		default:
			fail("delivery %x: unknown status %q", k, rec.Status)
		}
		return nil
	})
	compareSet(bucketDeliveriesWebhook, wantByWebhook)
	n := 0
	_ = tx.Bucket(bucketDeliveriesQueue).ForEach(func(k, v []byte) error {
		n++
		if want, ok := wantQueue[string(k)]; !ok || !bytes.Equal(v, want) {
			fail("deliveries.queue %x: names %x, want %x", k, v, want)
		}
		return nil
	})
	if n != len(wantQueue) {
		fail("deliveries.queue: %d entries, %d pending deliveries", n, len(wantQueue))
	}
	slices.SortFunc(errs, func(a, b error) int { return bytes.Compare([]byte(a.Error()), []byte(b.Error())) })
	return errs
}
