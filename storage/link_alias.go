package storage

// The aliases of links: their index keys, the codes generated for links
// without one, and the move of an alias when a link changes it. Held
// aliases are in link_aliashold.go, the redirect cache in link_aliascache.go.

import (
	"errors"
	"fmt"
	"time"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

func aliasKey(domain, alias string) []byte {
	return concat([]byte(domain), []byte{0}, []byte(alias))
}

// codeAttempts bounds the search for a free generated code; with 62^7
// codes a second attempt is already rare.
const codeAttempts = 10

// freeCode returns a random code not taken nor held on the domain at now.
func freeCode(tx *bolt.Tx, domain string, now time.Time) (string, error) {
	aliases := tx.Bucket(bucketLinksAlias)
	for range codeAttempts {
		code := link.NewCode()
		if link.IsReserved(code) {
			continue
		}
		if key := aliasKey(domain, code); aliases.Get(key) == nil && !aliasHeld(tx, key, now) {
			return code, nil
		}
	}
	return "", errors.New("storage: no free short code found")
}

// moveAlias gives the link idb of record rec the alias it is updated to
// (an empty alias gets a new code) and returns it. A changed alias takes
// the new index entry, and the old one is held for the workspace for
// AliasHold. ECONFLICT when the alias is taken.
func (s *LinkService) moveAlias(tx *bolt.Tx, wid uint64, idb []byte, rec *linkRecord, alias string, now time.Time) (string, error) {
	if alias == "" {
		var err error
		if alias, err = freeCode(tx, rec.Domain, now); err != nil {
			return "", err
		}
	}
	if alias == rec.Alias {
		return alias, nil
	}
	aliases := tx.Bucket(bucketLinksAlias)
	if err := takeAlias(tx, aliasKey(rec.Domain, alias), alias, wid, now); err != nil {
		return "", err
	}
	if err := aliases.Delete(aliasKey(rec.Domain, rec.Alias)); err != nil {
		return "", fmt.Errorf("unindex alias: %w", err)
	}
	if err := holdAlias(tx, aliasKey(rec.Domain, rec.Alias), wid, now.Add(s.AliasHold), s.AliasHold); err != nil {
		return "", err
	}
	if err := aliases.Put(aliasKey(rec.Domain, alias), idb); err != nil {
		return "", fmt.Errorf("index alias: %w", err)
	}
	return alias, nil
}
