package storage

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// checkAudit checks the audit indexes against the entries: every entry has
// each of its index keys, and no index key names what is not there.
func checkAudit(tx *bolt.Tx) []error {
	var errs []error
	want := map[string]map[string]bool{}
	err := tx.Bucket(bucketAudit).ForEach(func(k, v []byte) error {
		var rec auditRecord
		if err := decodeJSON(v, &rec); err != nil {
			return err
		}
		for name, keys := range auditIndexKeys(&rec, btoi(k)) {
			if want[name] == nil {
				want[name] = map[string]bool{}
			}
			for _, key := range keys {
				want[name][string(key)] = true
			}
		}
		return nil
	})
	if err != nil {
		return []error{err}
	}
	for _, name := range [][]byte{bucketAuditTime, bucketAuditActor, bucketAuditAction, bucketAuditTarget} {
		got := map[string]bool{}
		_ = tx.Bucket(name).ForEach(func(k, _ []byte) error { got[string(k)] = true; return nil })
		for k := range want[string(name)] {
			if !got[k] {
				errs = append(errs, fmt.Errorf("%s: key %x missing", name, k))
			}
		}
		for k := range got {
			if !want[string(name)][k] {
				errs = append(errs, fmt.Errorf("%s: key %x for no entry", name, k))
			}
		}
	}
	return errs
}
