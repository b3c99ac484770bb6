package storage

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// checkUsers checks the e-mail index of the users: every user record
// decodes and is named by users.email under its lower-cased e-mail, and
// every users.email entry names a user with that e-mail.
func checkUsers(tx *bolt.Tx) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	emails := tx.Bucket(bucketUsersEmail)
	users := 0
	_ = tx.Bucket(bucketUsers).ForEach(func(k, v []byte) error {
		users++
		var rec userRecord
		if err := decodeJSON(v, &rec); err != nil || len(k) != 8 {
			fail("user %x: malformed (%v)", k, err)
			return nil
		}
		if id := emails.Get(emailKey(rec.Email)); !bytes.Equal(id, k) {
			fail("user %x: users.email %q names %x", k, emailKey(rec.Email), id)
		}
		return nil
	})
	entries := 0
	_ = emails.ForEach(func(k, v []byte) error {
		entries++
		var rec userRecord
		ok, err := getJSON(tx.Bucket(bucketUsers), v, &rec)
		switch {
		case err != nil || !ok:
			fail("users.email %q: dangling: names user %x, which does not exist", k, v)
		case !bytes.Equal(emailKey(rec.Email), k):
			fail("users.email %q: names user %x, whose e-mail is %q", k, v, rec.Email)
		}
		return nil
	})
	if entries != users {
		fail("users.email: %d entries, %d users", entries, users)
	}
	return errs
}

// checkKeys checks the API key indexes (keys are revoked, never deleted):
// every key record decodes, has a hash, an existing workspace, and its
// keys.hash and keys.workspace entries; every keys.hash entry names the
// key of that hash, every keys.workspace and keys.live entry a key of that
// workspace, and every keys.usage entry an existing key.
func checkKeys(tx *bolt.Tx) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	hashes, byWS := tx.Bucket(bucketKeysHash), tx.Bucket(bucketKeysWorkspace)
	keys := 0
	_ = tx.Bucket(bucketKeys).ForEach(func(k, v []byte) error {
		keys++
		var rec keyRecord
		if err := decodeJSON(v, &rec); err != nil || len(k) != 8 {
			fail("key %x: malformed (%v)", k, err)
			return nil
		}
		if len(rec.Hash) == 0 {
			fail("key %x: no hash", k)
		} else if id := hashes.Get(rec.Hash); !bytes.Equal(id, k) {
			fail("key %x: keys.hash of its hash names %x", k, id)
		}
		if byWS.Get(concat(itob(rec.Workspace), k)) == nil {
			fail("key %x: no keys.workspace entry for workspace %d", k, rec.Workspace)
		}
		if err := workspaceExists(tx, rec.Workspace); err != nil {
			fail("key %x: workspace %d: %v", k, rec.Workspace, err)
		}
		return nil
	})
	entries := 0
	_ = hashes.ForEach(func(k, v []byte) error {
		entries++
		if len(v) != 8 {
			fail("keys.hash %x: names %x, which is no key id", k, v)
			return nil
		}
		rec, err := findKey(tx, 0, btoi(v))
		switch {
		case err != nil:
			fail("keys.hash %x: dangling: names key %x, which does not exist", k, v)
		case !bytes.Equal(rec.Hash, k):
			fail("keys.hash %x: names key %x, whose hash differs", k, v)
		}
		return nil
	})
	if entries != keys {
		fail("keys.hash: %d entries, %d keys", entries, keys)
	}
	entries = 0
	_ = byWS.ForEach(func(k, v []byte) error {
		entries++
		if len(k) != 16 {
			fail("keys.workspace %x: malformed key", k)
		} else if _, err := findKey(tx, btoi(k[:8]), btoi(k[8:])); err != nil {
			fail("keys.workspace %x: dangling: %v", k, err)
		}
		return nil
	})
	if entries != keys {
		fail("keys.workspace: %d entries, %d keys", entries, keys)
	}
	_ = tx.Bucket(bucketKeysLive).ForEach(func(k, _ []byte) error {
		switch len(k) {
		case 8: // the workspace's index is built
		case 16:
			if _, err := findKey(tx, btoi(k[:8]), btoi(k[8:])); err != nil {
				fail("keys.live %x: dangling: %v", k, err)
			}
		default:
			fail("keys.live %x: malformed key", k)
		}
		return nil
	})
	_ = tx.Bucket(bucketKeysUsage).ForEach(func(k, _ []byte) error {
		if len(k) != 8 || tx.Bucket(bucketKeys).Get(k) == nil {
			fail("keys.usage %x: usage of a key that does not exist", k)
		}
		return nil
	})
	return errs
}

// checkResets checks that every password reset names an existing user.
func checkResets(tx *bolt.Tx) []error {
	var errs []error
	b := tx.Bucket(bucketUsersReset)
	if b == nil {
		return nil // a file no server has opened since the bucket came
	}
	_ = b.ForEach(func(k, v []byte) error {
		if len(v) != 16 || tx.Bucket(bucketUsers).Get(v[:8]) == nil {
			errs = append(errs, fmt.Errorf("users.reset %x: names no user (%x)", k, v))
		}
		return nil
	})
	return errs
}
