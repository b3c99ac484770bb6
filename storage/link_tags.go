package storage

// The tag indexes of links (links.tag, newest first per workspace and tag)
// and their counters (links.tag_count), kept in step with each link.

import (
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

func tagPrefix(wid uint64, tag string) []byte {
	return concat(itob(wid), []byte(tag), []byte{0})
}

func tagCountKey(wid uint64, tag string) []byte {
	return concat(itob(wid), []byte(tag))
}

func addTag(tx *bolt.Tx, wid uint64, tag string, idb []byte) error {
	if err := tx.Bucket(bucketLinksTag).Put(concat(tagPrefix(wid, tag), idb), []byte{}); err != nil {
		return fmt.Errorf("index tag: %w", err)
	}
	return addCounter(tx.Bucket(bucketLinksTagCount), tagCountKey(wid, tag), 1)
}

func removeTag(tx *bolt.Tx, wid uint64, tag string, idb []byte) error {
	if err := tx.Bucket(bucketLinksTag).Delete(concat(tagPrefix(wid, tag), idb)); err != nil {
		return fmt.Errorf("unindex tag: %w", err)
	}
	return addCounter(tx.Bucket(bucketLinksTagCount), tagCountKey(wid, tag), -1)
}

// moveTags moves the link idb's tag index entries and counters from the
// tags it had to the tags it has.
func moveTags(tx *bolt.Tx, wid uint64, idb []byte, had, has []string) error {
	for _, t := range had {
		if !slices.Contains(has, t) {
			if err := removeTag(tx, wid, t, idb); err != nil {
				return err
			}
		}
	}
	for _, t := range has {
		if !slices.Contains(had, t) {
			if err := addTag(tx, wid, t, idb); err != nil {
				return err
			}
		}
	}
	return nil
}
