package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// DefaultAliasHold is how long a freed alias stays held for its workspace
// when LinkService.AliasHold is not set otherwise (links.alias_hold).
const DefaultAliasHold = 30 * 24 * time.Hour

// bucketLinksAliasHold holds the aliases freed by a deletion or a change
// of alias: domain + "\x00" + alias (as in links.alias) → workspace id(8)
// + end of the hold in unix nanoseconds(8). Until then only that
// workspace may take the alias again, so that the traffic of old short
// URLs (printed, bookmarked, cached 301s) never reaches another
// workspace's link. A held alias redirects nowhere (404).
var bucketLinksAliasHold = []byte("links.alias_hold")

func holdValue(wid uint64, until time.Time) []byte {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, wid)
	binary.BigEndian.PutUint64(v[8:], uint64(until.UnixNano()))
	return v
}

// holdAlias holds the freed alias key for workspace wid until until; a
// non-positive hold holds nothing.
func holdAlias(tx *bolt.Tx, key []byte, wid uint64, until time.Time, hold time.Duration) error {
	if hold <= 0 {
		return nil
	}
	if err := tx.Bucket(bucketLinksAliasHold).Put(key, holdValue(wid, until)); err != nil {
		return fmt.Errorf("hold alias: %w", err)
	}
	return nil
}

// takeAlias claims the alias key for a link of workspace wid at now:
// ECONFLICT when a link has it, or another workspace holds it; a hold of
// the same workspace, or one that has ended, is released.
func takeAlias(tx *bolt.Tx, key []byte, alias string, wid uint64, now time.Time) error {
	if tx.Bucket(bucketLinksAlias).Get(key) != nil {
		return link.Errorf(link.ECONFLICT, "alias %q is already taken", alias)
	}
	holds := tx.Bucket(bucketLinksAliasHold)
	v := holds.Get(key)
	if v == nil {
		return nil
	}
	if len(v) == 16 && btoi(v[:8]) != wid && now.UnixNano() < int64(btoi(v[8:])) {
		// The same answer as a taken alias: nothing about the other
		// workspace shows.
		return link.Errorf(link.ECONFLICT, "alias %q is already taken", alias)
	}
	if err := holds.Delete(key); err != nil {
		return fmt.Errorf("release alias hold: %w", err)
	}
	return nil
}

// aliasHeld reports whether a hold of any workspace covers the alias key
// at now, for generated codes, which never take a held alias.
func aliasHeld(tx *bolt.Tx, key []byte, now time.Time) bool {
	v := tx.Bucket(bucketLinksAliasHold).Get(key)
	return len(v) == 16 && now.UnixNano() < int64(btoi(v[8:]))
}

// PruneAliasHolds deletes the alias holds that ended before now and
// returns how many; a hold that ended is ignored anyway, so this only
// bounds the bucket.
func (s *LinkService) PruneAliasHolds(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	err := s.db.update(func(tx *bolt.Tx) error {
		n = 0
		b := tx.Bucket(bucketLinksAliasHold)
		var ended [][]byte
		err := b.ForEach(func(k, v []byte) error {
			if len(v) != 16 || now.UnixNano() >= int64(btoi(v[8:])) {
				ended = append(ended, cloneBytes(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range ended {
			if err := b.Delete(k); err != nil {
				return fmt.Errorf("prune alias hold: %w", err)
			}
		}
		n = len(ended)
		return nil
	})
	return n, err
}
