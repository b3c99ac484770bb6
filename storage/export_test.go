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

var NewCode = newCode

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

// checkIndexes is CheckIndexes in the transaction tx.
func checkIndexes(tx *bolt.Tx) error {
	var errs []error
	wsCount := map[string]uint64{}
	tagCount := map[string]uint64{}
	wantAlias := map[string][]byte{}
	wantWS := map[string]bool{}
	wantTag := map[string]bool{}
	wantCampaign := map[string]bool{}
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
		if rec.CampaignID != "" {
			cid, ok := idsOf(tx).parseID(prefixCampaign, rec.CampaignID)
			if !ok {
				errs = append(errs, fmt.Errorf("link %x: malformed campaign id %q", k, rec.CampaignID))
				return nil
			}
			if _, err := findCampaign(tx, rec.Workspace, cid); err != nil {
				errs = append(errs, fmt.Errorf("link %x: campaign %q of workspace %d: %v", k, rec.CampaignID, rec.Workspace, err))
			}
			wantCampaign[string(campaignLinkKey(rec.Workspace, cid, btoi(k)))] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	errs = append(errs, checkCampaigns(tx, wantCampaign)...)
	errs = append(errs, checkWebhooks(tx)...)
	errs = append(errs, checkDomains(tx)...)
	errs = append(errs, checkMembers(tx)...)
	errs = append(errs, checkInvitations(tx)...)
	errs = append(errs, checkAudit(tx)...)
	errs = append(errs, checkSearchIndex(tx)...)
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

	errs = append(errs, checkClicks(tx)...)
	slices.SortFunc(errs, func(a, b error) int { return bytes.Compare([]byte(a.Error()), []byte(b.Error())) })
	if len(errs) > 10 {
		errs = errs[:10]
	}
	if len(errs) > 0 {
		return fmt.Errorf("index check: %v", errs)
	}
	return nil
}

// checkCampaigns checks the campaign indexes: links.campaign holds
// exactly the entries of want (workspace + campaign + link, one for each
// link with a campaign), each naming an existing link of that workspace in
// that campaign; every campaign record has its campaigns.workspace entry
// and every entry names a campaign of that workspace; every campaign's
// workspace exists; every event decodes and names an existing workspace.
func checkCampaigns(tx *bolt.Tx, want map[string]bool) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	got := 0
	_ = tx.Bucket(bucketLinksCampaign).ForEach(func(k, v []byte) error {
		got++
		if len(k) != 24 || len(v) != 0 {
			fail("links.campaign %x: malformed entry (value %x)", k, v)
			return nil
		}
		wid, cid, lid := btoi(k[:8]), btoi(k[8:16]), btoi(k[16:])
		rec, err := findLink(tx, 0, lid)
		switch {
		case err != nil:
			fail("links.campaign %x: link %d: %v", k, lid, err)
		case rec.Workspace != wid:
			fail("links.campaign %x: link %d belongs to workspace %d", k, lid, rec.Workspace)
		case rec.CampaignID != idsOf(tx).formatID(prefixCampaign, cid):
			fail("links.campaign %x: link %d is in campaign %q, not %q", k, lid, rec.CampaignID, idsOf(tx).formatID(prefixCampaign, cid))
		}
		if !want[string(k)] {
			fail("links.campaign %x: dangling", k)
		}
		return nil
	})
	if got != len(want) {
		fail("links.campaign: %d entries, want %d", got, len(want))
	}
	for k := range want {
		if tx.Bucket(bucketLinksCampaign).Get([]byte(k)) == nil {
			fail("links.campaign %x: missing", k)
		}
	}

	byWS := tx.Bucket(bucketCampaignsWorkspace)
	campaigns := 0
	_ = tx.Bucket(bucketCampaigns).ForEach(func(k, v []byte) error {
		campaigns++
		var rec campaignRecord
		if err := decodeJSON(v, &rec); err != nil {
			fail("campaign %x: %v", k, err)
			return nil
		}
		if len(k) != 8 {
			fail("campaign %x: malformed key", k)
			return nil
		}
		if byWS.Get(concat(itob(rec.Workspace), k)) == nil {
			fail("campaign %x: no campaigns.workspace entry for workspace %d", k, rec.Workspace)
		}
		if err := workspaceExists(tx, rec.Workspace); err != nil {
			fail("campaign %x: workspace %d: %v", k, rec.Workspace, err)
		}
		return nil
	})
	entries := 0
	_ = byWS.ForEach(func(k, v []byte) error {
		entries++
		if len(k) != 16 || len(v) != 0 {
			fail("campaigns.workspace %x: malformed entry (value %x)", k, v)
			return nil
		}
		if _, err := findCampaign(tx, btoi(k[:8]), btoi(k[8:])); err != nil {
			fail("campaigns.workspace %x: dangling: %v", k, err)
		}
		return nil
	})
	if entries != campaigns {
		fail("campaigns.workspace: %d entries, %d campaigns", entries, campaigns)
	}

	_ = tx.Bucket(bucketEvents).ForEach(func(k, v []byte) error {
		var rec eventRecord
		if err := decodeJSON(v, &rec); err != nil {
			fail("event %x: %v", k, err)
			return nil
		}
		if err := workspaceExists(tx, rec.Workspace); err != nil {
			fail("event %x: workspace %d: %v", k, rec.Workspace, err)
		}
		return nil
	})
	return errs
}

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
		if err := decodeJSON(v, &rec); err != nil || rec.Domain == "" {
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
