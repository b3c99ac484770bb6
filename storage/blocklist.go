package storage

import (
	"context"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

var _ link.BlocklistService = (*BlocklistService)(nil)

// BlocklistService keeps the destination blocklist entries added through
// the admin API in the blocklist bucket, keyed by the entry.
type BlocklistService struct{ db *DB }

// NewBlocklistService returns the blocklist service of db.
func NewBlocklistService(db *DB) *BlocklistService { return &BlocklistService{db: db} }

type blocklistRecord struct {
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by,omitempty"`
}

// ListBlockEntries returns every stored entry, in entry order.
func (s *BlocklistService) ListBlockEntries(ctx context.Context) ([]*link.BlockEntry, error) {
	var out []*link.BlockEntry
	err := s.db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketBlocklist).ForEach(func(k, v []byte) error {
			var rec blocklistRecord
			if err := decodeJSON(v, &rec); err != nil {
				return err
			}
			out = append(out, &link.BlockEntry{Entry: string(k), CreatedAt: rec.CreatedAt, CreatedBy: rec.CreatedBy})
			return nil
		})
	})
	return out, err
}

// AddBlockEntry stores an entry and sets its CreatedAt. ECONFLICT when it
// is stored already.
func (s *BlocklistService) AddBlockEntry(ctx context.Context, e *link.BlockEntry) error {
	now := s.db.now()
	err := s.db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketBlocklist)
		if b.Get([]byte(e.Entry)) != nil {
			return link.Errorf(link.ECONFLICT, "%q is on the blocklist already", e.Entry)
		}
		return putJSON(b, []byte(e.Entry), blocklistRecord{CreatedAt: now, CreatedBy: e.CreatedBy})
	})
	if err == nil {
		e.CreatedAt = now
	}
	return err
}

// DeleteBlockEntry removes a stored entry. ENOTFOUND.
func (s *BlocklistService) DeleteBlockEntry(ctx context.Context, entry string) error {
	return s.db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketBlocklist)
		if b.Get([]byte(entry)) == nil {
			return link.Errorf(link.ENOTFOUND, "%q is not an entry added through the API", entry)
		}
		return b.Delete([]byte(entry))
	})
}
