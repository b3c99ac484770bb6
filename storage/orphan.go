package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// OrphanVisitService keeps the orphan visits: hourly counters per domain
// and type (bucketOrphanCounts) and a bounded number of visit records
// per domain and hour (bucketOrphanVisits).
type OrphanVisitService struct {
	db *DB
}

var _ link.OrphanVisitStore = (*OrphanVisitService)(nil)

// NewOrphanVisitService returns the orphan visit service of db.
func NewOrphanVisitService(db *DB) *OrphanVisitService { return &OrphanVisitService{db: db} }

// orphanRecord is a kept orphan visit; its domain and time are in its key.
type orphanRecord struct {
	Type     string `json:"t"`
	Path     string `json:"p"`
	Referrer string `json:"r,omitempty"`
	Country  string `json:"c,omitempty"`
	Device   string `json:"d,omitempty"`
	Browser  string `json:"b,omitempty"`
	OS       string `json:"o,omitempty"`
	Bot      bool   `json:"bot,omitempty"`
}

// orphanPrefix is the key prefix of a domain in both buckets.
func orphanPrefix(domain string) []byte { return append([]byte(domain), 0) }

// orphanCountKey is domain + 0 + unix hour seconds(8) + type index(1).
func orphanCountKey(domain string, hour time.Time, typ int) []byte {
	return append(concat(orphanPrefix(domain), itob(uint64(hour.Unix()))), byte(typ))
}

func orphanTypeIndex(t string) int { return slices.Index(link.OrphanTypes, t) }

// AddOrphanVisits counts and keeps a batch (see link.OrphanVisitStore).
func (s *OrphanVisitService) AddOrphanVisits(ctx context.Context, visits []link.OrphanVisit, perHour int) error {
	return s.db.update(func(tx *bolt.Tx) error {
		counts, records := tx.Bucket(bucketOrphanCounts), tx.Bucket(bucketOrphanVisits)
		records.FillPercent = 0.9
		for _, v := range visits {
			ti := orphanTypeIndex(v.Type)
			if ti < 0 || v.Time.Unix() < 0 {
				continue
			}
			hour := v.Time.UTC().Truncate(time.Hour)
			var seen uint64
			for i := range link.OrphanTypes {
				if b := counts.Get(orphanCountKey(v.Domain, hour, i)); b != nil {
					seen += btoi(b)
				}
			}
			key := orphanCountKey(v.Domain, hour, ti)
			var n uint64
			if b := counts.Get(key); b != nil {
				n = btoi(b)
			}
			if err := counts.Put(key, itob(n+1)); err != nil {
				return err
			}
			if seen >= uint64(perHour) {
				continue
			}
			seq, err := records.NextSequence()
			if err != nil {
				return err
			}
			k := concat(orphanPrefix(v.Domain), itob(uint64(v.Time.UnixNano())), itob(seq))
			rec := orphanRecord{Type: v.Type, Path: v.Path, Referrer: v.Referrer, Country: v.Country,
				Device: v.Device, Browser: v.Browser, OS: v.OS, Bot: v.Bot}
			if err := putJSON(records, k, rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// OrphanCounts returns the hourly counters of domain (see
// link.OrphanVisitStore).
func (s *OrphanVisitService) OrphanCounts(ctx context.Context, domain string, start, end time.Time) ([]link.OrphanCount, error) {
	var out []link.OrphanCount
	prefix := orphanPrefix(domain)
	from := concat(prefix, itob(uint64(max(start.Truncate(time.Hour).Unix(), 0))))
	err := s.db.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketOrphanCounts).Cursor()
		for k, v := c.Seek(from); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+9; k, v = c.Next() {
			hour := time.Unix(int64(btoi(k[len(prefix):len(prefix)+8])), 0).UTC()
			if !hour.Before(end) {
				break
			}
			if hour.Before(start) {
				continue
			}
			ti := int(k[len(k)-1])
			if ti >= len(link.OrphanTypes) {
				continue
			}
			out = append(out, link.OrphanCount{Hour: hour, Type: link.OrphanTypes[ti], Count: int64(btoi(v))})
		}
		return nil
	})
	return out, err
}

// parseOrphanCursor reads a cursor of FindOrphanVisits: unix nanos(8) and
// sequence(8), in hex.
func parseOrphanCursor(cur string) ([]byte, error) {
	b, err := hex.DecodeString(cur)
	if err != nil || len(b) != 16 {
		return nil, link.Errorf(link.EINVALIDREQUEST, "cursor %q is not one this API returned", cur)
	}
	return b, nil
}

// FindOrphanVisits returns a page of kept visits (see
// link.OrphanVisitStore).
func (s *OrphanVisitService) FindOrphanVisits(ctx context.Context, f link.OrphanVisitFilter) ([]link.OrphanVisit, string, error) {
	prefix := orphanPrefix(f.Domain)
	upper := concat(prefix, itob(uint64(max(f.End.UnixNano(), 0))))
	if f.Cursor != "" {
		cur, err := parseOrphanCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		if bytes.Compare(cur, upper[len(prefix):]) < 0 {
			upper = concat(prefix, cur)
		}
	}
	startNanos := max(f.Start.UnixNano(), 0)
	var out []link.OrphanVisit
	next := ""
	err := s.db.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketOrphanVisits).Cursor()
		var v []byte
		k, _ := c.Seek(upper)
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+16; k, v = c.Prev() {
			nanos := int64(binary.BigEndian.Uint64(k[len(prefix):]))
			if nanos < startNanos {
				break
			}
			var rec orphanRecord
			if err := decodeJSON(v, &rec); err != nil {
				return err
			}
			if f.Type != "" && rec.Type != f.Type {
				continue
			}
			if len(out) == f.Limit {
				// The next page starts at this visit: the cursor is
				// exclusive, so point just past it.
				next = orphanCursorAfter(k[len(prefix):])
				break
			}
			out = append(out, link.OrphanVisit{Time: time.Unix(0, nanos).UTC(), Domain: f.Domain, Type: rec.Type,
				Path: rec.Path, Referrer: rec.Referrer, Country: rec.Country, Device: rec.Device, Browser: rec.Browser,
				OS: rec.OS, Bot: rec.Bot})
		}
		return nil
	})
	return out, next, err
}

// orphanCursorAfter returns the cursor that includes the visit of suffix
// k (nanos + sequence) as the first of the next page: the key just above it.
func orphanCursorAfter(k []byte) string {
	b := slices.Clone(k)
	for i := len(b) - 1; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			break
		}
	}
	return hex.EncodeToString(b)
}

// PruneOrphanVisits deletes records and counters from before before (see
// link.OrphanVisitStore).
func (s *OrphanVisitService) PruneOrphanVisits(ctx context.Context, before time.Time) (int, error) {
	n := 0
	err := s.db.update(func(tx *bolt.Tx) error {
		var err error
		if n, err = pruneOrphanBucket(tx.Bucket(bucketOrphanVisits), func(k []byte) bool {
			return len(k) >= 16 && int64(binary.BigEndian.Uint64(k[len(k)-16:])) < before.UnixNano()
		}); err != nil {
			return err
		}
		_, err = pruneOrphanBucket(tx.Bucket(bucketOrphanCounts), func(k []byte) bool {
			return len(k) >= 9 && int64(binary.BigEndian.Uint64(k[len(k)-9:])) < before.Truncate(time.Hour).Unix()
		})
		return err
	})
	return n, err
}

// pruneOrphanBucket deletes the keys old reports true for: in each
// domain's keys (time-ordered), from its first to its first that is not
// old.
func pruneOrphanBucket(b *bolt.Bucket, old func(k []byte) bool) (int, error) {
	var doomed [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil; {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			k, _ = c.Next()
			continue
		}
		prefix := slices.Clone(k[:i+1])
		for ; k != nil && bytes.HasPrefix(k, prefix) && old(k); k, _ = c.Next() {
			doomed = append(doomed, slices.Clone(k))
		}
		// On to the next domain: hostnames hold no byte below 1.
		k, _ = c.Seek(append(slices.Clone(prefix[:i]), 1))
	}
	for _, k := range doomed {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(doomed), nil
}
