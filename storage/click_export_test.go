package storage

// Test access to the insides of click analytics.

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// BucketSize is the space of a bucket: bytes in use by its keys, values
// and page headers, and bytes of the pages allocated to it.
type BucketSize struct{ Inuse, Alloc int }

// ClickBucketSizes returns the size of each click bucket by name.
func (db *DB) ClickBucketSizes() (map[string]BucketSize, error) {
	out := map[string]BucketSize{}
	err := db.db.View(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketClicksTotals, bucketClicksRaw, bucketClicksHourly, bucketClicksDaily,
			bucketClicksVisitors, bucketClicksSalts, bucketClicksHosts} {
			st := tx.Bucket(name).Stats()
			out[string(name)] = BucketSize{
				Inuse: st.BranchInuse + st.LeafInuse + st.InlineBucketInuse,
				Alloc: st.BranchAlloc + st.LeafAlloc,
			}
		}
		return nil
	})
	return out, err
}

// DeleteCampaignStats runs deleteCampaignStats in a transaction of its own.
func (s *ClickService) DeleteCampaignStats(workspaceID, campaignID string) error {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return fmt.Errorf("bad workspace %q", workspaceID)
	}
	return s.db.db.Update(func(tx *bolt.Tx) error { return deleteCampaignStats(tx, wid, campaignID) })
}
