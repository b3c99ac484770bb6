package storage

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// setBuckets are the indexes whose entries are keys alone: their values
// are empty, as linkbolt writes them, and never read.
var setBuckets = [][]byte{
	bucketKeysWorkspace, bucketKeysLive, bucketLinksTag, bucketLinksWorkspace,
	bucketAuditTime, bucketAuditActor, bucketAuditAction, bucketAuditTarget,
	bucketLinkChecksDue, bucketLinkChecksBroken,
}

// checkShapes checks the shapes no other checker reads: the values of
// the set indexes are empty, and every workspace record has an 8-byte key
// and decodes (the other checkers only ask whether a workspace exists).
func checkShapes(tx *bolt.Tx) []error {
	var errs []error
	for _, name := range setBuckets {
		_ = tx.Bucket(name).ForEach(func(k, v []byte) error {
			if len(v) != 0 {
				errs = append(errs, fmt.Errorf("%s %x: a value of %d bytes, want none", name, k, len(v)))
			}
			return nil
		})
	}
	_ = tx.Bucket(bucketWorkspaces).ForEach(func(k, v []byte) error {
		var rec workspaceRecord
		if err := decodeJSON(v, &rec); err != nil || len(k) != 8 {
			errs = append(errs, fmt.Errorf("workspace %x: malformed (%v)", k, err))
		}
		return nil
	})
	return errs
}
