package storage

import (
	"bytes"
	"fmt"

	"github.com/linkbolt/linkbolt/link"
	bolt "go.etcd.io/bbolt"
)

// checkDomains checks the domain indexes: every domain record decodes,
// has a valid hostname, an existing workspace, and its domains.hostname
// and domains.workspace entries; every domains.hostname entry names the
// domain of that hostname and every domains.workspace entry a domain of
// that workspace; every link on a custom domain names a domain of its own
// workspace (verified or not: un-verifying keeps the links, and a domain
// with links cannot be deleted).
func checkDomains(tx *bolt.Tx) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	names := tx.Bucket(bucketDomainsHostname)
	byWS := tx.Bucket(bucketDomainsWorkspace)
	domains := 0
	_ = tx.Bucket(bucketDomains).ForEach(func(k, v []byte) error {
		domains++
		var rec domainRecord
		if err := decodeJSON(v, &rec); err != nil {
			fail("domain %x: %v", k, err)
			return nil
		}
		if len(k) != 8 {
			fail("domain %x: malformed key", k)
			return nil
		}
		if msg := link.CheckHostname(rec.Hostname); msg != "" {
			fail("domain %x: hostname %q %s", k, rec.Hostname, msg)
		}
		if len(rec.Token) != link.VerificationTokenLength {
			fail("domain %x: verification token of %d characters", k, len(rec.Token))
		}
		if rec.Verified != (rec.VerifiedAt != nil) {
			fail("domain %x: verified %v with verified_at %v", k, rec.Verified, rec.VerifiedAt)
		}
		if id := names.Get([]byte(rec.Hostname)); !bytes.Equal(id, k) {
			fail("domain %x: domains.hostname %q names %x", k, rec.Hostname, id)
		}
		if byWS.Get(concat(itob(rec.Workspace), k)) == nil {
			fail("domain %x: no domains.workspace entry for workspace %d", k, rec.Workspace)
		}
		if err := workspaceExists(tx, rec.Workspace); err != nil {
			fail("domain %x: workspace %d: %v", k, rec.Workspace, err)
		}
		return nil
	})
	hostnames := 0
	_ = names.ForEach(func(k, v []byte) error {
		hostnames++
		if len(v) != 8 {
			fail("domains.hostname %q: malformed id %x", k, v)
			return nil
		}
		rec, err := findDomain(tx, 0, btoi(v))
		if err != nil {
			fail("domains.hostname %q: dangling: %v", k, err)
		} else if rec.Hostname != string(k) {
			fail("domains.hostname %q: names the domain of %q", k, rec.Hostname)
		}
		return nil
	})
	entries := 0
	_ = byWS.ForEach(func(k, v []byte) error {
		entries++
		if len(k) != 16 || len(v) != 0 {
			fail("domains.workspace %x: malformed entry (value %x)", k, v)
			return nil
		}
		if _, err := findDomain(tx, btoi(k[:8]), btoi(k[8:])); err != nil {
			fail("domains.workspace %x: dangling: %v", k, err)
		}
		return nil
	})
	if hostnames != domains {
		fail("domains.hostname: %d entries, %d domains", hostnames, domains)
	}
	if entries != domains {
		fail("domains.workspace: %d entries, %d domains", entries, domains)
	}
	_ = tx.Bucket(bucketLinks).ForEach(func(k, v []byte) error {
		var rec linkRecord
		if err := decodeLink(v, &rec); err != nil || rec.Domain == "" {
			return nil // a decoding error is reported by checkIndexes
		}
		id := names.Get([]byte(rec.Domain))
		if id == nil {
			fail("link %x: domain %q is no domain", k, rec.Domain)
			return nil
		}
		if d, err := findDomain(tx, 0, btoi(id)); err == nil && d.Workspace != rec.Workspace {
			fail("link %x of workspace %d: domain %q belongs to workspace %d", k, rec.Workspace, rec.Domain, d.Workspace)
		}
		return nil
	})
	return errs
}
