package storage

import (
	"bytes"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// checkInvariants checks linkbolt's own invariants in tx by brute force and
// returns every problem found, sorted: each link index and counter is
// recounted from the link records (links.alias, links.workspace,
// links.tag, links.count, links.tag_count, links.archived), and the
// campaigns (see checkCampaigns), the domains (checkDomains), the webhooks
// and their delivery queues (checkWebhooks), the members and invitations
// (checkMembers, checkInvitations), the users and API keys (checkUsers,
// checkKeys), the audit log (checkAudit), the search index
// (checkSearchIndex) and the click data (checkClicks) are checked against
// their indexes and each other. It needs every bucket of the current
// schema (see hasEveryBucket) and the file's ID codec (see idsOf).
func checkInvariants(tx *bolt.Tx) []error {
	var errs []error
	wsCount := map[string]uint64{}
	tagCount := map[string]uint64{}
	archivedCount := map[string]uint64{}
	wantAlias := map[string][]byte{}
	wantExternal := map[string][]byte{}
	wantCrawlable := map[string][]byte{}
	wantWS := map[string]bool{}
	wantTag := map[string]bool{}
	wantCampaign := map[string]bool{}
	err := tx.Bucket(bucketLinks).ForEach(func(k, v []byte) error {
		var rec linkRecord
		if err := decodeLink(v, &rec); err != nil {
			return err
		}
		wsCount[string(itob(rec.Workspace))]++
		if rec.Archived {
			archivedCount[string(itob(rec.Workspace))]++
		}
		wantAlias[string(aliasKey(rec.Domain, rec.Alias))] = cloneBytes(k)
		if rec.Crawlable {
			wantCrawlable[string(aliasKey(rec.Domain, rec.Alias))] = cloneBytes(k)
		}
		if rec.ExternalID != "" {
			ek := string(externalKey(rec.Workspace, rec.ExternalID))
			if other, ok := wantExternal[ek]; ok {
				errs = append(errs, fmt.Errorf("link %x: external ID %q also of link %x", k, rec.ExternalID, other))
			}
			wantExternal[ek] = cloneBytes(k)
		}
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
		return []error{err}
	}
	errs = append(errs, guardCheck("campaigns", func() []error { return checkCampaigns(tx, wantCampaign) })...)
	errs = append(errs, guardCheck("webhooks", func() []error { return checkWebhooks(tx) })...)
	errs = append(errs, guardCheck("domains", func() []error { return checkDomains(tx) })...)
	errs = append(errs, guardCheck("members", func() []error { return checkMembers(tx) })...)
	errs = append(errs, guardCheck("invitations", func() []error { return checkInvitations(tx) })...)
	errs = append(errs, guardCheck("the audit log", func() []error { return checkAudit(tx) })...)
	errs = append(errs, guardCheck("the search index", func() []error { return checkSearchIndex(tx) })...)
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
	compareCounters(bucketLinksArchived, archivedCount)

	compareIndex := func(name []byte, what string, want map[string][]byte) {
		got := map[string][]byte{}
		_ = tx.Bucket(name).ForEach(func(k, v []byte) error { got[string(k)] = cloneBytes(v); return nil })
		for k, id := range want {
			if g, ok := got[k]; !ok {
				errs = append(errs, fmt.Errorf("%s %q: no %s entry for link %x", what, k, name, id))
			} else if !bytes.Equal(g, id) {
				errs = append(errs, fmt.Errorf("%s %q: %s names link %x, want %x", what, k, name, g, id))
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				errs = append(errs, fmt.Errorf("%s %q: dangling", what, k))
			}
		}
	}
	compareIndex(bucketLinksAlias, "alias", wantAlias)
	compareIndex(bucketLinksExternal, "external ID", wantExternal)
	compareIndex(bucketLinksCrawlable, "crawlable alias", wantCrawlable)
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

	errs = append(errs, guardCheck("clicks", func() []error { return checkClicks(tx) })...)
	errs = append(errs, guardCheck("users", func() []error { return checkUsers(tx) })...)
	errs = append(errs, guardCheck("password resets", func() []error { return checkResets(tx) })...)
	errs = append(errs, guardCheck("API keys", func() []error { return checkKeys(tx) })...)
	errs = append(errs, guardCheck("the indexes' values and workspaces", func() []error { return checkShapes(tx) })...)
	slices.SortFunc(errs, func(a, b error) int { return bytes.Compare([]byte(a.Error()), []byte(b.Error())) })
	return errs
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
