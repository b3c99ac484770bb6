package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// CompactReport says what CompactFile did.
type CompactReport struct {
	From, To         string
	FromSize, ToSize int64 // bytes
	Buckets, Keys    int
}

// compactTxBytes bounds the keys and values one write transaction of the
// compaction copies: bolt keeps a transaction's pages in memory until its
// commit.
const compactTxBytes = 32 << 20

// appendOnlyBuckets are the buckets whose new keys always sort after the
// old ones (sequences, times) or whose values are rewritten in place at
// the same size: their pages never take an insert in the middle, so the
// compaction fills them up. Other buckets keep a tenth of each page free
// for the inserts to come, so the first ones do not split every page.
var appendOnlyBuckets = map[string]bool{
	string(bucketLinks): true, string(bucketLinksWorkspace): true,
	string(bucketClicksRaw): true, string(bucketClicksTotals): true, string(bucketClicksSalts): true,
	string(bucketEvents): true, string(bucketDeliveries): true,
	string(bucketAudit): true, string(bucketAuditTime): true,
	string(bucketUsers): true, string(bucketWorkspaces): true, string(bucketKeys): true,
	string(bucketCampaigns): true, string(bucketWebhooks): true, string(bucketDomains): true,
	string(bucketQRCodes): true, string(bucketInvitations): true, string(bucketUTMTemplates): true, string(bucketReports): true,
}

// compactFill returns the fill of the compacted pages of a bucket.
func compactFill(name []byte) float64 {
	if appendOnlyBuckets[string(name)] {
		return 1
	}
	return 0.9
}

// CompactFile copies the data file at from into a new file at to, every
// bucket's keys in order onto pages filled up (see compactFill), leaving
// out the free pages and the half-empty ones that deletions and random
// inserts leave behind. The copy is checked with bbolt's consistency
// check before CompactFile returns.
//
// It refuses a file another process holds (a running server) with an
// error matching ErrLocked, a damaged one with one matching ErrDamaged,
// and an existing to; on any error it removes what it wrote of to. The
// source is only read.
func CompactFile(from, to string) (*CompactReport, error) {
	if _, err := os.Stat(from); err != nil {
		return nil, fmt.Errorf("data file %s: %w", from, err)
	}
	if _, err := inspectDataFile(from); err != nil {
		return nil, err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%s already exists: compact writes a new file, give another name", to)
	} else if err != nil {
		return nil, fmt.Errorf("create %s: %w", to, err)
	}
	if err := out.Close(); err != nil {
		return nil, err
	}
	r, err := compactInto(from, to)
	if err != nil {
		_ = os.Remove(to)
		return nil, err
	}
	return r, nil
}

func compactInto(from, to string) (*CompactReport, error) {
	r := &CompactReport{From: from, To: to}
	var err error
	var src *bolt.DB
	err = catchDamage(from, func() error {
		src, err = bolt.Open(from, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
		if errors.Is(err, berrors.ErrTimeout) {
			return &lockedError{path: from}
		} else if err != nil {
			return fmt.Errorf("open data file %s: %w", from, err)
		}
		defer src.Close()
		dst, err := bolt.Open(to, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
		if err != nil {
			return fmt.Errorf("open %s: %w", to, err)
		}
		if err := copyBuckets(src, dst, r); err != nil {
			_ = dst.Close()
			return err
		}
		if err := dst.Sync(); err != nil {
			_ = dst.Close()
			return fmt.Errorf("sync %s: %w", to, err)
		}
		return dst.Close()
	})
	if err != nil {
		return nil, err
	}
	check, err := CheckFile(to)
	if err != nil {
		return nil, err
	}
	if !check.OK() {
		return nil, fmt.Errorf("the compacted file fails its check: %v", check.Problems)
	}
	for _, p := range []struct {
		path string
		size *int64
	}{{from, &r.FromSize}, {to, &r.ToSize}} {
		fi, err := os.Stat(p.path)
		if err != nil {
			return nil, err
		}
		*p.size = fi.Size()
	}
	return r, nil
}

// copyBuckets copies every top-level bucket of src into dst, its keys in
// order, its sequence, in transactions of at most compactTxBytes.
func copyBuckets(src, dst *bolt.DB, r *CompactReport) error {
	return src.View(func(stx *bolt.Tx) error {
		return stx.ForEach(func(name []byte, sb *bolt.Bucket) error {
			r.Buckets++
			dtx, err := dst.Begin(true)
			if err != nil {
				return err
			}
			defer func() { _ = dtx.Rollback() }()
			db, err := dtx.CreateBucket(name)
			if err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
			if err := db.SetSequence(sb.Sequence()); err != nil {
				return err
			}
			var size int
			c := sb.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if v == nil {
					return fmt.Errorf("bucket %s: nested bucket %x (not a linkbolt data file)", name, k)
				}
				if size += len(k) + len(v); size > compactTxBytes {
					if err := dtx.Commit(); err != nil {
						return fmt.Errorf("write %s: %w", name, err)
					}
					next, err := dst.Begin(true)
					if err != nil {
						return err // dtx, committed, is left for the deferred Rollback
					}
					dtx = next
					db, size = dtx.Bucket(name), len(k)+len(v)
				}
				db.FillPercent = compactFill(name)
				if err := db.Put(k, v); err != nil {
					return fmt.Errorf("copy %s: %w", name, err)
				}
				r.Keys++
			}
			if err := dtx.Commit(); err != nil {
				return fmt.Errorf("write %s: %w", name, err)
			}
			return nil
		})
	})
}
