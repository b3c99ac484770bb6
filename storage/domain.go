package storage

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/link"
)

// prefixDomain is the wire ID prefix of domains.
const prefixDomain = link.PrefixDomain

// DomainService keeps custom domains, their unique hostname index, and
// the in-memory table of verified hostnames that routes requests.
type DomainService struct {
	db *DB
}

var _ link.DomainService = (*DomainService)(nil)

// NewDomainService returns the domain service of db.
func NewDomainService(db *DB) *DomainService { return &DomainService{db: db} }

type domainRecord struct {
	Workspace       uint64     `json:"ws"`
	Hostname        string     `json:"hostname"`
	Verified        bool       `json:"verified,omitempty"`
	VerifiedAt      *time.Time `json:"verified_at,omitempty"`
	Token           string     `json:"token"`
	RootRedirectURL string     `json:"root_redirect_url,omitempty"`
	NotFoundURL     string     `json:"not_found_url,omitempty"`
	AASA            string     `json:"aasa,omitempty"`
	AssetLinks      string     `json:"asset_links,omitempty"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
}

func (r *domainRecord) domain(ids *idCodec, id uint64, links int) *link.Domain {
	d := &link.Domain{
		ID: ids.formatID(prefixDomain, id), WorkspaceID: ids.formatID(prefixWorkspace, r.Workspace),
		Hostname: r.Hostname, Verified: r.Verified, VerificationToken: r.Token,
		RootRedirectURL: r.RootRedirectURL, NotFoundURL: r.NotFoundURL,
		AppleAppSiteAssociation: r.AASA, AndroidAssetLinks: r.AssetLinks,
		Links: links, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	if r.VerifiedAt != nil {
		at := *r.VerifiedAt
		d.VerifiedAt = &at
	}
	return d
}

func (r *domainRecord) set(d *link.Domain) {
	r.Verified, r.RootRedirectURL, r.NotFoundURL = d.Verified, d.RootRedirectURL, d.NotFoundURL
	r.AASA, r.AssetLinks = d.AppleAppSiteAssociation, d.AndroidAssetLinks
	r.VerifiedAt = nil
	if d.VerifiedAt != nil {
		at := d.VerifiedAt.UTC()
		r.VerifiedAt = &at
	}
}

// findDomain returns a domain record of workspace wid (any workspace when
// wid is 0). ENOTFOUND.
func findDomain(tx *bolt.Tx, wid, did uint64) (*domainRecord, error) {
	var rec domainRecord
	ok, err := getJSON(tx.Bucket(bucketDomains), itob(did), &rec)
	if err != nil {
		return nil, err
	}
	if !ok || wid != 0 && rec.Workspace != wid {
		return nil, link.Errorf(link.ENOTFOUND, "domain %q not found", idsOf(tx).formatID(prefixDomain, did))
	}
	return &rec, nil
}

// domainForLink checks, inside the transaction that stores a link, that
// hostname is a verified domain of workspace wid: a domain deleted or
// unverified since the caller looked it up cannot receive the link, as
// DeleteDomain and un-verifying commit in their own write transactions.
// EINVALID (field domain), the same for a domain of another workspace, an
// unverified domain and no domain at all.
func domainForLink(tx *bolt.Tx, wid uint64, hostname string) error {
	if v := tx.Bucket(bucketDomainsHostname).Get([]byte(hostname)); v != nil {
		rec, err := findDomain(tx, 0, btoi(v))
		if err != nil {
			return fmt.Errorf("domain hostname index: %w", err)
		}
		if rec.Workspace == wid && rec.Verified {
			return nil
		}
	}
	return &link.Error{Code: link.EINVALID, Message: "domain: " + hostname + " is not a verified domain of this workspace",
		Fields: []link.FieldError{{Field: "domain", Message: "is not a verified domain of this workspace"}}}
}

// countDomainLinks counts the links on a hostname from the alias index,
// whose keys start with the hostname and a zero byte.
func countDomainLinks(tx *bolt.Tx, hostname string) int {
	prefix := aliasKey(hostname, "")
	n := 0
	c := tx.Bucket(bucketLinksAlias).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	return n
}

// CreateDomain stores a domain, generating its verification token when it
// has none, and sets its ID. ECONFLICT if the hostname is a domain of any
// workspace, but for an unverified claim link.CanTakeOver lets d take,
// which is deleted first (domain.removed in its workspace's log, by the
// system: the workspace taking it over is not named); ENOTFOUND for an
// unknown workspace.
func (s *DomainService) CreateDomain(ctx context.Context, d *link.Domain, unverifiedTTL time.Duration) error {
	wid, ok := s.db.ids.parseID(prefixWorkspace, d.WorkspaceID)
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", d.WorkspaceID)
	}
	if d.Hostname == "" {
		return link.Errorf(link.EINVALID, "hostname: is required")
	}
	if d.VerificationToken == "" {
		d.VerificationToken = link.NewVerificationToken()
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = s.db.now()
	}
	if d.UpdatedAt.IsZero() {
		d.UpdatedAt = d.CreatedAt
	}
	rec := domainRecord{Workspace: wid, Hostname: d.Hostname, Token: d.VerificationToken,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	rec.set(d)
	var id uint64
	err := s.db.update(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		names := tx.Bucket(bucketDomainsHostname)
		if v := names.Get([]byte(d.Hostname)); v != nil {
			if err := s.takeOver(ctx, tx, d, btoi(v), unverifiedTTL); err != nil {
				return err
			}
		}
		b := tx.Bucket(bucketDomains)
		var err error
		if id, err = nextID(b); err != nil {
			return err
		}
		if err := putJSON(b, itob(id), &rec); err != nil {
			return err
		}
		if err := names.Put([]byte(d.Hostname), itob(id)); err != nil {
			return fmt.Errorf("index domain hostname: %w", err)
		}
		if err := tx.Bucket(bucketDomainsWorkspace).Put(concat(itob(wid), itob(id)), []byte{}); err != nil {
			return fmt.Errorf("index domain workspace: %w", err)
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditDomainAdded, domainTarget(s.db.ids, id), domainChanges(nil, &rec))
	})
	s.db.domains.invalidate()
	if err != nil {
		return err
	}
	d.ID = s.db.ids.formatID(prefixDomain, id)
	d.Links = 0
	return nil
}

// takeOver deletes the claim heldID of d's hostname when d may take it
// over, else answers ECONFLICT: when the claim is an unverified one of
// another workspace, with the time its age lets it be taken.
func (s *DomainService) takeOver(ctx context.Context, tx *bolt.Tx, d *link.Domain, heldID uint64, unverifiedTTL time.Duration) error {
	rec, err := findDomain(tx, 0, heldID)
	if err != nil {
		return fmt.Errorf("domain hostname index: %w", err)
	}
	held := rec.domain(s.db.ids, heldID, countDomainLinks(tx, rec.Hostname))
	if !link.CanTakeOver(d, held, unverifiedTTL, s.db.now()) {
		msg := fmt.Sprintf("the domain %s is already taken: a hostname belongs to one workspace of this instance", d.Hostname)
		if held.WorkspaceID != d.WorkspaceID && !held.Verified && held.Links == 0 {
			msg = fmt.Sprintf("the domain %s is claimed by another workspace, which has not verified it: publish the TXT record of this workspace's claim and add the domain again to take it over", d.Hostname)
			if unverifiedTTL > 0 {
				msg += fmt.Sprintf(", or add it after %s, when that claim expires (domains.unverified_ttl)", held.CreatedAt.Add(unverifiedTTL).UTC().Format(time.RFC3339))
			}
		}
		return link.Errorf(link.ECONFLICT, "%s", msg)
	}
	if err := deleteDomainRecord(tx, rec, heldID); err != nil {
		return err
	}
	sys := link.WithActor(ctx, link.SystemActor, "")
	return s.db.recordAudit(sys, tx, rec.Workspace, link.AuditDomainRemoved, domainTarget(s.db.ids, heldID), domainChanges(rec, nil))
}

// FindDomainByID returns a domain of the workspace with its number of
// links. ENOTFOUND, also for a domain of another workspace.
func (s *DomainService) FindDomainByID(ctx context.Context, workspaceID, id string) (*link.Domain, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	did, ok2 := s.db.ids.parseID(prefixDomain, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "domain %q not found", id)
	}
	var out *link.Domain
	err := s.db.db.View(func(tx *bolt.Tx) error {
		rec, err := findDomain(tx, wid, did)
		if err != nil {
			return err
		}
		out = rec.domain(s.db.ids, did, countDomainLinks(tx, rec.Hostname))
		return nil
	})
	return out, err
}

// FindDomains returns the workspace's domains, newest first, each with its
// number of links. ENOTFOUND for an unknown workspace.
func (s *DomainService) FindDomains(ctx context.Context, workspaceID string) ([]*link.Domain, error) {
	wid, ok := s.db.ids.parseID(prefixWorkspace, workspaceID)
	if !ok {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	out := []*link.Domain{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		if err := workspaceExists(tx, wid); err != nil {
			return err
		}
		it := newReverseIndex(tx.Bucket(bucketDomainsWorkspace), itob(wid))
		for idb := it.next(); idb != nil; idb = it.next() {
			did := btoi(idb)
			rec, err := findDomain(tx, wid, did)
			if err != nil {
				return fmt.Errorf("domain index: %w", err)
			}
			out = append(out, rec.domain(s.db.ids, did, countDomainLinks(tx, rec.Hostname)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindDomainByHostname returns the domain of a normalised hostname, of any
// workspace and verified or not, without its number of links. ENOTFOUND.
func (s *DomainService) FindDomainByHostname(ctx context.Context, hostname string) (*link.Domain, error) {
	var out *link.Domain
	err := s.db.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketDomainsHostname).Get([]byte(hostname))
		if v == nil {
			return link.Errorf(link.ENOTFOUND, "no domain %s", hostname)
		}
		did := btoi(v)
		rec, err := findDomain(tx, 0, did)
		if err != nil {
			return fmt.Errorf("domain hostname index: %w", err)
		}
		out = rec.domain(s.db.ids, did, 0)
		return nil
	})
	return out, err
}

// errNoVerifiedDomain answers every hostname that is not a verified
// domain: requests to the primary host or an address ask for one, so the
// miss allocates nothing.
var errNoVerifiedDomain = link.Errorf(link.ENOTFOUND, "not a verified domain")

// FindVerifiedDomain returns the verified domain of a normalised hostname
// from the in-memory table of verified domains, loading the table from the
// file after any change to a domain. The domain has no number of links and
// is shared: callers must not modify it. ENOTFOUND.
func (s *DomainService) FindVerifiedDomain(ctx context.Context, hostname string) (*link.Domain, error) {
	m, gen := s.db.domains.get()
	if m == nil {
		var err error
		if m, err = s.loadVerified(); err != nil {
			return nil, err
		}
		s.db.domains.put(m, gen)
	}
	if d := m[hostname]; d != nil {
		return d, nil
	}
	return nil, errNoVerifiedDomain
}

// loadVerified reads every verified domain.
func (s *DomainService) loadVerified() (map[string]*link.Domain, error) {
	m := map[string]*link.Domain{}
	err := s.db.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketDomains).ForEach(func(k, v []byte) error {
			var rec domainRecord
			if err := decodeJSON(v, &rec); err != nil {
				return fmt.Errorf("domain %x: %w", k, err)
			}
			if rec.Verified {
				m[rec.Hostname] = rec.domain(s.db.ids, btoi(k), 0)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// UpdateDomain applies an update, Verified included (the caller decides
// who may set it), calls validate on the result inside the write
// transaction, and returns the domain with its number of links.
// ENOTFOUND; validate's error unchanged.
func (s *DomainService) UpdateDomain(ctx context.Context, workspaceID, id string, upd link.DomainUpdate, validate func(*link.Domain) error) (*link.Domain, error) {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	did, ok2 := s.db.ids.parseID(prefixDomain, id)
	if !ok1 || !ok2 {
		return nil, link.Errorf(link.ENOTFOUND, "domain %q not found", id)
	}
	now := s.db.now()
	var out *link.Domain
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findDomain(tx, wid, did)
		if err != nil {
			return err
		}
		d := rec.domain(s.db.ids, did, countDomainLinks(tx, rec.Hostname))
		before := *rec
		upd.Apply(d, now)
		if validate != nil {
			if err := validate(d); err != nil {
				return err
			}
		}
		rec.set(d)
		if rec.Verified == before.Verified && rec.RootRedirectURL == before.RootRedirectURL && rec.NotFoundURL == before.NotFoundURL &&
			rec.AASA == before.AASA && rec.AssetLinks == before.AssetLinks {
			out = before.domain(s.db.ids, did, d.Links)
			return nil
		}
		rec.UpdatedAt = now
		d.UpdatedAt = now
		if err := putJSON(tx.Bucket(bucketDomains), itob(did), rec); err != nil {
			return err
		}
		action := link.AuditDomainUpdated
		if rec.Verified != before.Verified {
			action = link.AuditDomainUnverified
			if rec.Verified {
				action = link.AuditDomainVerified
			}
		}
		if err := s.db.recordAudit(ctx, tx, wid, action, domainTarget(s.db.ids, did), domainChanges(&before, rec)); err != nil {
			return err
		}
		out = d
		return nil
	})
	s.db.domains.invalidate()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetDomainVerified marks a domain verified now, or not verified; a domain
// verified already keeps its VerifiedAt. Un-verifying keeps the domain's
// links (they stay listed, and are served again once it is verified
// again) but, in the same serialised order of write transactions, refuses
// every link created on it after. ENOTFOUND.
func (s *DomainService) SetDomainVerified(ctx context.Context, workspaceID, id string, verified bool) (*link.Domain, error) {
	return s.UpdateDomain(ctx, workspaceID, id, link.DomainUpdate{Verified: &verified}, nil)
}

// DeleteDomain deletes a domain and its index entries. ECONFLICT while
// links are on it, counted in the deleting transaction: bolt serialises
// write transactions and addLink checks the domain in its own, so a
// link is either counted here or refused there. ENOTFOUND.
func (s *DomainService) DeleteDomain(ctx context.Context, workspaceID, id string) error {
	wid, ok1 := s.db.ids.parseID(prefixWorkspace, workspaceID)
	did, ok2 := s.db.ids.parseID(prefixDomain, id)
	if !ok1 || !ok2 {
		return link.Errorf(link.ENOTFOUND, "domain %q not found", id)
	}
	err := s.db.update(func(tx *bolt.Tx) error {
		rec, err := findDomain(tx, wid, did)
		if err != nil {
			return err
		}
		if n := countDomainLinks(tx, rec.Hostname); n > 0 {
			return link.DomainHasLinksError(rec.Hostname, n)
		}
		if err := deleteDomainRecord(tx, rec, did); err != nil {
			return err
		}
		return s.db.recordAudit(ctx, tx, wid, link.AuditDomainRemoved, domainTarget(s.db.ids, did), domainChanges(rec, nil))
	})
	s.db.domains.invalidate()
	return err
}

// deleteDomainRecord deletes the domain did and its index entries.
func deleteDomainRecord(tx *bolt.Tx, rec *domainRecord, did uint64) error {
	if err := tx.Bucket(bucketDomains).Delete(itob(did)); err != nil {
		return fmt.Errorf("delete domain: %w", err)
	}
	if err := tx.Bucket(bucketDomainsHostname).Delete([]byte(rec.Hostname)); err != nil {
		return fmt.Errorf("unindex domain hostname: %w", err)
	}
	if err := tx.Bucket(bucketDomainsWorkspace).Delete(concat(itob(rec.Workspace), itob(did))); err != nil {
		return fmt.Errorf("unindex domain workspace: %w", err)
	}
	return nil
}

// domainTarget is a domain as the target of an audit entry.
func domainTarget(ids *idCodec, did uint64) link.AuditTarget {
	return link.AuditTarget{Type: "domain", ID: ids.formatID(prefixDomain, did)}
}

// domainChanges returns the audited fields that differ between a and b
// (nil for none). The verification token is left out.
func domainChanges(a, b *domainRecord) map[string][2]*string {
	vals := func(r *domainRecord) []any {
		if r == nil {
			return []any{nil, nil, nil, nil}
		}
		return []any{r.Hostname, r.Verified, r.RootRedirectURL, r.NotFoundURL}
	}
	va, vb := vals(a), vals(b)
	return link.AuditChanges("hostname", va[0], vb[0], "verified", va[1], vb[1],
		"root_redirect_url", va[2], vb[2], "not_found_url", va[3], vb[3])
}

// domainCache is the table of verified domains by hostname that routes
// requests: every request whose host is not the primary one looks it up,
// so it is a map in memory, read under a read lock. Every write to a
// domain calls invalidate after its commit; the next lookup loads the
// table again. A load that read the file before such a write but stores
// its table after it is refused by the generation check, so the table is
// never older than the file.
type domainCache struct {
	mu  sync.RWMutex
	m   map[string]*link.Domain // nil until loaded
	gen uint64
}

// get returns the table (nil when it must be loaded) and the generation
// to pass to put.
func (c *domainCache) get() (map[string]*link.Domain, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m, c.gen
}

// put stores a table loaded after get returned gen, unless a write
// invalidated the table since.
func (c *domainCache) put(m map[string]*link.Domain, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.m = m
	}
}

// invalidate drops the table and starts a new generation.
func (c *domainCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.m = nil
}
