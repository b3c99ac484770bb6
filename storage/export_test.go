package storage

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// Test access to the package's insides.

var NewCode = link.NewCode

// FormatID returns the wire ID of sequence seq.
func (db *DB) FormatID(prefix string, seq uint64) string { return db.ids.formatID(prefix, seq) }

// ParseID returns the sequence of a wire ID.
func (db *DB) ParseID(prefix, id string) (uint64, bool) { return db.ids.parseID(prefix, id) }

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
	kid, ok := db.ids.parseID(prefixKey, id)
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
	wid, ok := db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return fmt.Errorf("bad workspace %q", workspaceID)
	}
	now := db.now()
	for start := 0; start < n; start += 5000 {
		err := db.db.Update(func(tx *bolt.Tx) error {
			var ix searchIndexer
			for i := start; i < min(start+5000, n); i++ {
				l := mk(i)
				l.Normalize()
				rec := &linkRecord{Workspace: wid, Alias: l.Alias, Domain: l.Domain, Destination: l.DestinationURL,
					Tags: l.Tags, CampaignID: l.CampaignID, RedirectCode: l.RedirectCode, CreatedAt: now, UpdatedAt: now}
				if _, err := addLink(tx, rec, &ix); err != nil {
					return err
				}
			}
			return ix.write(tx)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// CheckIndexes recounts every link index and counter from the link
// records by brute force and reports any difference, checks the campaigns
// and their indexes (see checkCampaigns), the domain indexes (see
// checkDomains), the webhooks and their delivery queues (see
// checkWebhooks), the search index (see checkSearchIndex), and checks the
// click data (see checkClicks).
func (db *DB) CheckIndexes() error { return db.db.View(checkIndexes) }

// checkIndexes is CheckIndexes in the transaction tx: the first ten
// problems checkInvariants finds, as one error.
func checkIndexes(tx *bolt.Tx) error {
	errs := checkInvariants(tx)
	if len(errs) > 10 {
		errs = errs[:10]
	}
	if len(errs) > 0 {
		return fmt.Errorf("index check: %v", errs)
	}
	return nil
}

// Opened reports whether the DB is open.
func (db *DB) Opened() bool { return db.db != nil }

// SetAfterBackgroundFlush makes the background flush loop call f after
// each flush; call it before Open.
func (db *DB) SetAfterBackgroundFlush(f func(error)) { db.afterBackgroundFlush = f }

// TopCap returns the most entries a period blob keeps of a dimension.
func TopCap(dim string) int { return topCap[slices.Index(dimNames[:], dim)] }

// PeriodTop reads one dimension of the period blob of a workspace (or, when
// linkID is set, of that link) holding t: each listed value (link ids as
// wire ids) with its clicks, the clicks folded into other, and the blob's
// total clicks.
func (db *DB) PeriodTop(workspaceID, linkID string, daily bool, t time.Time, dim string) (map[string]uint64, uint64, uint64, error) {
	wid, _ := db.ids.parseID(prefixWorkspace, workspaceID)
	scope, period := workspaceScope(wid), uint32(t.Unix()/secondsPerHour)
	if linkID != "" {
		lid, _ := db.ids.parseID(prefixLink, linkID)
		scope = linkScope(lid)
	}
	name := bucketClicksHourly
	if daily {
		name, period = bucketClicksDaily, uint32(t.Unix()/secondsPerDay)
	}
	d := byte(slices.Index(dimNames[:], dim))
	out := map[string]uint64{}
	var other, total uint64
	err := db.db.View(func(tx *bolt.Tx) error {
		h, sections, err := parsePeriodBlob(tx.Bucket(name).Get(periodBlobKey(scope, period)), daily)
		if err != nil {
			return err
		}
		total, other = h.clicks, sections[d].other[0]+sections[d].other[1]
		r := newBlobReader(d, sections[d])
		for {
			val, human, bot, ok, err := r.next()
			if err != nil || !ok {
				return err
			}
			v := string(val)
			if d == dimLinks {
				v = db.ids.formatID(prefixLink, r.prevID)
			}
			out[v] = human + bot
		}
	})
	return out, other, total, err
}

// HostCount returns the number of referrer hosts clicks.hosts holds.
func (db *DB) HostCount() (int, error) {
	n := 0
	err := db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketClicksHosts).ForEach(func(k, _ []byte) error {
			if len(k) == 17 && k[12] == 0 {
				n++
			}
			return nil
		})
	})
	return n, err
}

// DropLiveKeys empties the keys.live index, as in a data file written
// before it existed.
func (db *DB) DropLiveKeys() error {
	return db.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketKeysLive); err != nil {
			return err
		}
		_, err := tx.CreateBucket(bucketKeysLive)
		return err
	})
}

// LiveKeyEntries returns the number of key entries in keys.live.
func (db *DB) LiveKeyEntries() int {
	n := 0
	_ = db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketKeysLive).ForEach(func(k, _ []byte) error {
			if len(k) == 16 {
				n++
			}
			return nil
		})
	})
	return n
}

// AttemptTxs returns the number of write transactions the service began
// to record attempts.
func (s *WebhookService) AttemptTxs() uint64 { return s.attempts.txs.Load() }

// InspectDataFile runs the start-up inspection and returns its error.
func InspectDataFile(path string) error {
	_, err := inspectDataFile(path)
	return err
}

// SetSearchBuildBatch sets the links one transaction of the search index
// build reads, until the returned function restores it.
func SetSearchBuildBatch(n int) (restore func()) {
	was := searchBuildBatch
	searchBuildBatch = n
	return func() { searchBuildBatch = was }
}

// PutBacklogRecord overwrites the value of the click backlog's record seq:
// a damaged record, for tests.
func (db *DB) PutBacklogRecord(seq uint64, v []byte) error {
	return db.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketClicksBacklog).Put(itob(seq), v) })
}

// SetAliasCacheBytes bounds the redirect cache (1: nothing fits).
func (db *DB) SetAliasCacheBytes(n int) {
	db.aliases.mu.Lock()
	defer db.aliases.mu.Unlock()
	db.aliases.max = n
}

// LinkHourKeys counts the per-link hourly blobs before the hour of t.
func (db *DB) LinkHourKeys(t time.Time) (int, error) {
	n := 0
	err := db.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketClicksHourly).Cursor()
		end := append([]byte{scopeKindLink}, be32(floorHour(t))...)
		for k, _ := c.Seek([]byte{scopeKindLink}); k != nil && bytes.Compare(k, end) < 0; k, _ = c.Next() {
			n++
		}
		return nil
	})
	return n, err
}

// SetBacklogSize overwrites the click backlog's size in the meta: a
// damaged count, for tests.
func (db *DB) SetBacklogSize(n BacklogSize) error {
	return db.db.Update(func(tx *bolt.Tx) error { return putBacklogSize(tx, n) })
}
