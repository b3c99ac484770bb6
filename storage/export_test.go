package storage

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// Test access to the package's insides.

var (
	ParseID  = parseID
	FormatID = formatID
	NewCode  = newCode
)

// SetFailUsageWrite makes key usage flushes fail with f's error while f
// returns one.
func (db *DB) SetFailUsageWrite(f func() error) { db.failUsageWrite = f }

// PendingKeyUsage returns the number of keys with uses not yet written.
func (db *DB) PendingKeyUsage() int {
	db.usageMu.Lock()
	defer db.usageMu.Unlock()
	return len(db.pending)
}

// DiskKeyUsage returns the request count of a key as written on disk.
func (db *DB) DiskKeyUsage(id string) (int64, error) {
	kid, ok := parseID(prefixKey, id)
	if !ok {
		return 0, fmt.Errorf("bad id %q", id)
	}
	var u keyUsage
	err := db.db.View(func(tx *bolt.Tx) error {
		var err error
		u, err = decodeUsage(tx.Bucket(bucketKeysUsage).Get(itob(kid)))
		return err
	})
	return u.count, err
}

// BulkCreateLinks stores n links made by mk in transactions of 5000, for
// benchmarks that need a big workspace fast.
func BulkCreateLinks(db *DB, workspaceID string, n int, mk func(i int) *link.Link) error {
	wid, ok := parseID(prefixWorkspace, workspaceID)
	if !ok {
		return fmt.Errorf("bad workspace %q", workspaceID)
	}
	now := db.now()
	for start := 0; start < n; start += 5000 {
		err := db.db.Update(func(tx *bolt.Tx) error {
			for i := start; i < min(start+5000, n); i++ {
				l := mk(i)
				l.Normalize()
				rec := &linkRecord{Workspace: wid, Alias: l.Alias, Domain: l.Domain, Destination: l.DestinationURL,
					Tags: l.Tags, CampaignID: l.CampaignID, RedirectCode: l.RedirectCode, CreatedAt: now, UpdatedAt: now}
				if _, err := createLink(tx, rec); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// CheckIndexes recounts every link index and counter from the link
// records by brute force and reports any difference, and any click data
// left for a link that does not exist.
func (db *DB) CheckIndexes() error {
	return db.db.View(func(tx *bolt.Tx) error {
		var errs []error
		wsCount := map[string]uint64{}
		tagCount := map[string]uint64{}
		wantAlias := map[string][]byte{}
		wantWS := map[string]bool{}
		wantTag := map[string]bool{}
		err := tx.Bucket(bucketLinks).ForEach(func(k, v []byte) error {
			var rec linkRecord
			if err := decodeJSON(v, &rec); err != nil {
				return err
			}
			wsCount[string(itob(rec.Workspace))]++
			wantAlias[string(aliasKey(rec.Domain, rec.Alias))] = cloneBytes(k)
			wantWS[string(concat(itob(rec.Workspace), k))] = true
			for _, t := range rec.Tags {
				tagCount[string(tagCountKey(rec.Workspace, t))]++
				wantTag[string(concat(tagPrefix(rec.Workspace, t), k))] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
		compareCounters := func(name []byte, want map[string]uint64) {
			got := map[string]uint64{}
			_ = tx.Bucket(name).ForEach(func(k, v []byte) error { got[string(k)] = btoi(v); return nil })
			for k, n := range want {
				if got[k] != n {
					errs = append(errs, fmt.Errorf("%s %x: counter %d, brute force %d", name, k, got[k], n))
				}
			}
			for k, n := range got {
				if _, ok := want[k]; !ok {
					errs = append(errs, fmt.Errorf("%s %x: counter %d for nothing", name, k, n))
				}
			}
		}
		compareCounters(bucketLinksCount, wsCount)
		compareCounters(bucketLinksTagCount, tagCount)

		gotAlias := map[string][]byte{}
		_ = tx.Bucket(bucketLinksAlias).ForEach(func(k, v []byte) error { gotAlias[string(k)] = cloneBytes(v); return nil })
		for k, id := range wantAlias {
			if !bytes.Equal(gotAlias[k], id) {
				errs = append(errs, fmt.Errorf("alias %q: index %x, want %x", k, gotAlias[k], id))
			}
		}
		for k := range gotAlias {
			if _, ok := wantAlias[k]; !ok {
				errs = append(errs, fmt.Errorf("alias %q: dangling", k))
			}
		}
		compareSet := func(name []byte, want map[string]bool) {
			n := 0
			_ = tx.Bucket(name).ForEach(func(k, v []byte) error {
				n++
				if !want[string(k)] {
					errs = append(errs, fmt.Errorf("%s %x: dangling", name, k))
				}
				return nil
			})
			if n != len(want) {
				errs = append(errs, fmt.Errorf("%s: %d entries, want %d", name, n, len(want)))
			}
		}
		compareSet(bucketLinksWorkspace, wantWS)
		compareSet(bucketLinksTag, wantTag)

		links := tx.Bucket(bucketLinks)
		for _, name := range [][]byte{bucketClicksLink, bucketClicksLinkHour, bucketClicksLinkDay} {
			_ = tx.Bucket(name).ForEach(func(k, v []byte) error {
				if links.Get(k[:8]) == nil {
					errs = append(errs, fmt.Errorf("%s %x: click data of a link that does not exist", name, k))
				}
				return nil
			})
		}
		slices.SortFunc(errs, func(a, b error) int { return bytes.Compare([]byte(a.Error()), []byte(b.Error())) })
		if len(errs) > 10 {
			errs = errs[:10]
		}
		if len(errs) > 0 {
			return fmt.Errorf("index check: %v", errs)
		}
		return nil
	})
}

// Opened reports whether the DB is open.
func (db *DB) Opened() bool { return db.db != nil }

// SetAfterBackgroundFlush makes the background flush loop call f after
// each flush; call it before Open.
func (db *DB) SetAfterBackgroundFlush(f func(error)) { db.afterBackgroundFlush = f }
