package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// DomainService keeps custom domains: a hostname is unique among the
// domains of the instance (domains_hostname_key), by which requests are
// routed; a domain's links are counted from links_alias_key, whose keys
// start with the domain.
type DomainService struct {
	db *DB
}

var _ link.DomainService = (*DomainService)(nil)

// domainColumns are the columns scanDomain reads, with the domain's
// number of links last.
const domainColumns = `d.id, d.workspace_id, d.hostname, d.verified, d.verified_at, d.token,
	d.root_redirect_url, d.not_found_url, d.created_at, d.updated_at, d.aasa, d.asset_links`

// domainLinks counts the links of the domain d in a select of
// domainColumns.
const domainLinks = `(SELECT count(*) FROM links l WHERE l.domain = d.hostname)`

func scanDomain(row pgx.Row, links bool) (*link.Domain, error) {
	d := &link.Domain{}
	dest := []any{&d.ID, &d.WorkspaceID, &d.Hostname, &d.Verified, &d.VerifiedAt, &d.VerificationToken,
		&d.RootRedirectURL, &d.NotFoundURL, &d.CreatedAt, &d.UpdatedAt, &d.AppleAppSiteAssociation, &d.AndroidAssetLinks}
	if links {
		dest = append(dest, &d.Links)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	if d.VerifiedAt != nil {
		t := d.VerifiedAt.UTC()
		d.VerifiedAt = &t
	}
	return d, nil
}

// findDomain returns a domain of the workspace with its links counted,
// locked FOR UPDATE when lock. ENOTFOUND.
func findDomain(ctx context.Context, tx pgx.Tx, workspaceID, id string, lock bool) (*link.Domain, error) {
	q := `SELECT ` + domainColumns + `, ` + domainLinks + ` FROM domains d WHERE d.id = $1 AND d.workspace_id = $2`
	if lock {
		q += ` FOR UPDATE`
	}
	d, err := scanDomain(tx.QueryRow(ctx, q, id, workspaceID), true)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "domain %q not found", id)
	}
	return d, err
}

// CreateDomain stores a domain, generating its verification token when it
// has none, and sets its ID. ECONFLICT if the hostname is a domain of any
// workspace, but for an unverified claim link.CanTakeOver lets d take,
// which is deleted first (domain.removed in its workspace's log, by the
// system); ENOTFOUND for an unknown workspace.
func (s *DomainService) CreateDomain(ctx context.Context, d *link.Domain, unverifiedTTL time.Duration) error {
	if !s.db.validID(link.PrefixWorkspace, d.WorkspaceID) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", d.WorkspaceID)
	}
	if d.Hostname == "" {
		return link.Errorf(link.EINVALID, "hostname: is required")
	}
	if d.VerificationToken == "" {
		d.VerificationToken = link.NewVerificationToken()
	}
	if d.CreatedAt.IsZero() {
		d.CreatedAt = dbTime(s.db.now())
	}
	if d.UpdatedAt.IsZero() {
		d.UpdatedAt = d.CreatedAt
	}
	var verifiedAt *time.Time
	if d.VerifiedAt != nil {
		t := dbTime(*d.VerifiedAt)
		verifiedAt = &t
	}
	if d.Verified {
		// A domain verified at its creation (a contested claim proven)
		// routes at once: the table of verified domains is read again.
		defer s.db.domainsChanged()
	}
	var id string
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findWorkspace(ctx, tx, d.WorkspaceID, false); err != nil {
			return err
		}
		if d.Verified {
			if err := s.db.notifyCache(ctx, tx, "d"); err != nil {
				return err
			}
		}
		held, err := scanDomain(tx.QueryRow(ctx, `SELECT `+domainColumns+`, `+domainLinks+` FROM domains d WHERE d.hostname = $1 FOR UPDATE`, d.Hostname), true)
		if err == nil {
			if err := s.takeOver(ctx, tx, d, held, unverifiedTTL); err != nil {
				return err
			}
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("find domain: %w", err)
		}
		var seq int64
		if id, seq, err = s.db.newID(ctx, tx, link.PrefixDomain); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO domains (id, seq, workspace_id, hostname, verified, verified_at, token,
			root_redirect_url, not_found_url, created_at, updated_at, aasa, asset_links) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			id, seq, d.WorkspaceID, d.Hostname, d.Verified, verifiedAt, d.VerificationToken,
			d.RootRedirectURL, d.NotFoundURL, d.CreatedAt, d.UpdatedAt, d.AppleAppSiteAssociation, d.AndroidAssetLinks)
		if isUnique(err, "domains_hostname_key") {
			// Another instance's claim of the same hostname committed first.
			return link.Errorf(link.ECONFLICT, "the domain %s is already taken: a hostname belongs to one workspace of this instance", d.Hostname)
		} else if err != nil {
			return fmt.Errorf("insert domain: %w", err)
		}
		return s.db.recordAudit(ctx, tx, d.WorkspaceID, link.AuditDomainAdded, domainTarget(id), domainChanges(nil, d))
	})
	if err != nil {
		return err
	}
	d.ID = id
	d.Links = 0
	return nil
}

// takeOver deletes held, the domain of d's hostname, when d may take it
// over, else answers ECONFLICT: when the claim is an unverified one of
// another workspace, with the time its age lets it be taken.
func (s *DomainService) takeOver(ctx context.Context, tx pgx.Tx, d, held *link.Domain, unverifiedTTL time.Duration) error {
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
	if _, err := tx.Exec(ctx, `DELETE FROM domains WHERE id = $1`, held.ID); err != nil {
		return fmt.Errorf("delete domain: %w", err)
	}
	sys := link.WithActor(ctx, link.SystemActor, "")
	return s.db.recordAudit(sys, tx, held.WorkspaceID, link.AuditDomainRemoved, domainTarget(held.ID), domainChanges(held, nil))
}

// FindDomainByID returns a domain of the workspace with its number of
// links. ENOTFOUND, also for a domain of another workspace.
func (s *DomainService) FindDomainByID(ctx context.Context, workspaceID, id string) (*link.Domain, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixDomain, id) {
		return nil, link.Errorf(link.ENOTFOUND, "domain %q not found", id)
	}
	var out *link.Domain
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = findDomain(ctx, tx, workspaceID, id, false)
		return err
	})
	return out, err
}

// FindDomains returns the workspace's domains, newest first, each with its
// number of links. ENOTFOUND for an unknown workspace.
func (s *DomainService) FindDomains(ctx context.Context, workspaceID string) ([]*link.Domain, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	var out []*link.Domain
	err := s.db.view(ctx, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+domainColumns+`, `+domainLinks+` FROM domains d WHERE d.workspace_id = $1 ORDER BY d.seq DESC`, workspaceID)
		if err != nil {
			return fmt.Errorf("find domains: %w", err)
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Domain, error) { return scanDomain(r, true) })
		return err
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []*link.Domain{}
	}
	return out, nil
}

// FindDomainByHostname returns the domain of a normalised hostname, of any
// workspace and verified or not, without its number of links. ENOTFOUND.
func (s *DomainService) FindDomainByHostname(ctx context.Context, hostname string) (*link.Domain, error) {
	d, err := scanDomain(s.db.pool.QueryRow(ctx, `SELECT `+domainColumns+` FROM domains d WHERE d.hostname = $1`, hostname), false)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "no domain %s", hostname)
	}
	return d, err
}

// errNoVerifiedDomain answers every hostname that is not a verified
// domain.
var errNoVerifiedDomain = link.Errorf(link.ENOTFOUND, "not a verified domain")

// FindVerifiedDomain returns the verified domain of a normalised hostname
// for request routing from the table of verified domains in memory, read
// again when it is a second old or a domain changed through this process
// (so a change made through another instance is seen within the second).
// While the database cannot be read, the table read last answers (see
// readVerified). The
// domain has no number of links, is shared and must not be modified.
// ENOTFOUND.
func (s *DomainService) FindVerifiedDomain(ctx context.Context, hostname string) (*link.Domain, error) {
	if hostname == "" {
		return nil, errNoVerifiedDomain
	}
	s.db.listening()
	m, ok, gen, h := s.db.domains.get("")
	if !ok {
		var err error
		if m, err = s.readVerified(ctx, gen, h); err != nil {
			return nil, err
		}
	}
	if d := m[hostname]; d != nil {
		return d, nil
	}
	return nil, errNoVerifiedDomain
}

// readVerified reads the table of verified domains again and keeps it
// (read with gen), or answers the table held (h, as get found it) while the database cannot
// read it: at once when it refuses, within staleWait when it does not
// answer (see readStall).
func (s *DomainService) readVerified(ctx context.Context, gen readToken, h heldValue[map[string]*link.Domain]) (map[string]*link.Domain, error) {
	read := func(ctx context.Context) (map[string]*link.Domain, error) {
		m, err := s.loadVerified(ctx)
		if err == nil {
			s.db.domains.put("", m, gen)
		}
		return m, err
	}
	old, held, current := h.v, h.ok, h.current
	if !held || !current {
		m, err := read(ctx)
		if _, down := unavailable(err); err != nil && down && held && ctx.Err() == nil {
			return old, nil
		}
		return m, err
	}
	if s.db.stall.on() {
		s.db.stall.refresh(func(ctx context.Context) error { _, err := read(ctx); return err })
		return old, nil
	}
	wctx, cancel := context.WithTimeout(ctx, staleWait)
	defer cancel()
	m, err := read(wctx)
	if ctx.Err() == nil {
		s.db.stall.saw(err)
	}
	switch {
	case err == nil:
		return m, nil
	case heldAnswer(ctx, err):
		return old, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, err
}

// loadVerified reads every verified domain, by hostname.
func (s *DomainService) loadVerified(ctx context.Context) (map[string]*link.Domain, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT `+domainColumns+` FROM domains d WHERE d.verified`)
	if err != nil {
		return nil, err
	}
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*link.Domain, error) { return scanDomain(r, false) })
	if err != nil {
		return nil, err
	}
	m := make(map[string]*link.Domain, len(ds))
	for _, d := range ds {
		m[d.Hostname] = d
	}
	return m, nil
}

// UpdateDomain applies an update, Verified included (the caller decides
// who may set it), calls validate on the result inside the transaction
// (the domain's row locked), and returns the domain with its number of
// links. ENOTFOUND; validate's error unchanged.
func (s *DomainService) UpdateDomain(ctx context.Context, workspaceID, id string, upd link.DomainUpdate, validate func(*link.Domain) error) (*link.Domain, error) {
	defer s.db.domainsChanged()
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixDomain, id) {
		return nil, link.Errorf(link.ENOTFOUND, "domain %q not found", id)
	}
	now := dbTime(s.db.now())
	var out *link.Domain
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		before, err := findDomain(ctx, tx, workspaceID, id, true)
		if err != nil {
			return err
		}
		if err := s.db.notifyCache(ctx, tx, "d"); err != nil {
			return err
		}
		d := *before
		upd.Apply(&d, now)
		if validate != nil {
			if err := validate(&d); err != nil {
				return err
			}
		}
		if d.Verified == before.Verified && d.RootRedirectURL == before.RootRedirectURL && d.NotFoundURL == before.NotFoundURL && d.SameWellKnown(before) {
			out = before
			return nil
		}
		d.UpdatedAt = now
		var verifiedAt *time.Time
		if d.VerifiedAt != nil {
			t := d.VerifiedAt.UTC()
			verifiedAt = &t
		}
		if _, err := tx.Exec(ctx, `UPDATE domains SET verified = $2, verified_at = $3, root_redirect_url = $4,
			not_found_url = $5, updated_at = $6, aasa = $7, asset_links = $8 WHERE id = $1`,
			id, d.Verified, verifiedAt, d.RootRedirectURL, d.NotFoundURL, now, d.AppleAppSiteAssociation, d.AndroidAssetLinks); err != nil {
			return fmt.Errorf("update domain: %w", err)
		}
		action := link.AuditDomainUpdated
		if d.Verified != before.Verified {
			action = link.AuditDomainUnverified
			if d.Verified {
				action = link.AuditDomainVerified
			}
		}
		if err := s.db.recordAudit(ctx, tx, workspaceID, action, domainTarget(id), domainChanges(before, &d)); err != nil {
			return err
		}
		out = &d
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetDomainVerified marks a domain verified now, or not verified; a domain
// verified already keeps its VerifiedAt. ENOTFOUND.
func (s *DomainService) SetDomainVerified(ctx context.Context, workspaceID, id string, verified bool) (*link.Domain, error) {
	return s.UpdateDomain(ctx, workspaceID, id, link.DomainUpdate{Verified: &verified}, nil)
}

// DeleteDomain deletes a domain. ECONFLICT while links are on it, counted
// with the domain's row locked: a link's creation keeps the row shared
// (domainForLink), so a link is either counted here or refused there.
// ENOTFOUND.
func (s *DomainService) DeleteDomain(ctx context.Context, workspaceID, id string) error {
	defer s.db.domainsChanged()
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixDomain, id) {
		return link.Errorf(link.ENOTFOUND, "domain %q not found", id)
	}
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findDomain(ctx, tx, workspaceID, id, true); err != nil {
			return err
		}
		if err := s.db.notifyCache(ctx, tx, "d"); err != nil {
			return err
		}
		// Counted again now that the row is locked: a link committed
		// while this transaction waited for the lock is seen.
		d, err := findDomain(ctx, tx, workspaceID, id, false)
		if err != nil {
			return err
		}
		if d.Links > 0 {
			return link.DomainHasLinksError(d.Hostname, d.Links)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM domains WHERE id = $1`, id); err != nil {
			return fmt.Errorf("delete domain: %w", err)
		}
		return s.db.recordAudit(ctx, tx, workspaceID, link.AuditDomainRemoved, domainTarget(id), domainChanges(d, nil))
	})
}

// domainTarget is a domain as the target of an audit entry.
func domainTarget(id string) link.AuditTarget { return link.AuditTarget{Type: "domain", ID: id} }

// domainChanges returns the audited fields that differ between a and b
// (nil for none). The verification token is left out.
func domainChanges(a, b *link.Domain) map[string][2]*string {
	vals := func(d *link.Domain) []any {
		if d == nil {
			return []any{nil, nil, nil, nil}
		}
		return []any{d.Hostname, d.Verified, d.RootRedirectURL, d.NotFoundURL}
	}
	va, vb := vals(a), vals(b)
	return link.AuditChanges("hostname", va[0], vb[0], "verified", va[1], vb[1],
		"root_redirect_url", va[2], vb[2], "not_found_url", va[3], vb[3])
}
