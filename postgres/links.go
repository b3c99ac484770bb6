package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/link"
)

// LinkService keeps links in the links table: an alias is unique per
// domain (links_alias_key, the redirect's one lookup), and an alias freed
// by a deletion or a rename is held for its workspace in
// link_alias_holds. Aliases are claimed and freed under a transaction
// advisory lock of their own (lockAliases), so that a claim and a hold
// made at once by two instances are ordered: the hold is honoured or the
// claim came first. Clicks is the links.clicks column, which the click
// service keeps.
type LinkService struct {
	db *DB
	// hold is how long a freed alias stays held for its workspace
	// (links.alias_hold); zero or less holds nothing.
	hold time.Duration

	trgmMu    sync.Mutex
	trgmKnown bool
	trgm      bool // the trigram index links_search exists
	// trgmStats steers searches past common trigrams (search_drive.go).
	trgmStats trigramStats
}

var _ link.LinkStore = (*LinkService)(nil)

// defaultAliasHold is how long a freed alias stays held when
// Options.AliasHold is 0, as in the bbolt store (storage.DefaultAliasHold).
const defaultAliasHold = 30 * 24 * time.Hour

// newLinkService returns the link service of db with the alias hold of
// Options.AliasHold: 0 is defaultAliasHold, a negative hold holds nothing.
func newLinkService(db *DB, hold time.Duration) *LinkService {
	if hold == 0 {
		hold = defaultAliasHold
	}
	return &LinkService{db: db, hold: hold}
}

// linkColumns are the columns scanLink reads, in its order.
const linkColumns = `l.id, l.workspace_id, l.domain, l.alias, l.destination_url, l.tags,
	l.utm_source, l.utm_medium, l.utm_campaign, l.campaign_id, l.redirect_code, l.clicks,
	l.created_at, l.updated_at, l.password_hash, l.rules, l.variants, l.og,
	l.expires_at, l.max_clicks, l.expired_url, l.archived, l.title, l.forward, l.external_id,
	l.ios_url, l.android_url, l.crawlable, l.interstitial, l.note`

// The bits of links.forward: what the link passes on to its destination,
// and (publicStats) whether its statistics are public: a bit of the
// same smallint, which every row has (migration 0020), rather than a
// column of its own.
const (
	forwardPath  = 1
	forwardQuery = 2
	publicStats  = 4
)

// forwardBits is links.forward of l.
func forwardBits(l *link.Link) int16 {
	var b int16
	if l.ForwardPath {
		b |= forwardPath
	}
	if l.ForwardQuery {
		b |= forwardQuery
	}
	if l.PublicStats {
		b |= publicStats
	}
	return b
}

// The bits of links.interstitial.
const (
	interstitialEscapeInApp = 1
	interstitialRetargeting = 2
)

// interstitialBits is links.interstitial of l.
func interstitialBits(l *link.Link) int16 {
	var b int16
	if l.EscapeInApp {
		b |= interstitialEscapeInApp
	}
	if l.Retargeting {
		b |= interstitialRetargeting
	}
	return b
}

// scanLink reads a row of linkColumns (then more).
func scanLink(row pgx.Row, more ...any) (*link.Link, error) {
	l := &link.Link{}
	var rules, variants, og []byte
	var forward, interstitial int16
	var external *string
	dest := append([]any{&l.ID, &l.WorkspaceID, &l.Domain, &l.Alias, &l.DestinationURL, &l.Tags,
		&l.UTMSource, &l.UTMMedium, &l.UTMCampaign, &l.CampaignID, &l.RedirectCode, &l.Clicks,
		&l.CreatedAt, &l.UpdatedAt, &l.PasswordHash, &rules, &variants, &og,
		&l.ExpiresAt, &l.MaxClicks, &l.ExpiredURL, &l.Archived, &l.Title, &forward, &external, &l.IOSURL, &l.AndroidURL, &l.Crawlable, &interstitial, &l.Note}, more...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	l.ForwardPath, l.ForwardQuery = forward&forwardPath != 0, forward&forwardQuery != 0
	if external != nil {
		l.ExternalID = *external
	}
	l.PublicStats = forward&publicStats != 0
	l.EscapeInApp, l.Retargeting = interstitial&interstitialEscapeInApp != 0, interstitial&interstitialRetargeting != 0
	if len(l.Tags) == 0 {
		l.Tags = nil
	}
	l.CreatedAt, l.UpdatedAt = l.CreatedAt.UTC(), l.UpdatedAt.UTC()
	if l.ExpiresAt != nil {
		t := dbTime(*l.ExpiresAt)
		l.ExpiresAt = &t
	}
	for _, f := range []struct {
		raw []byte
		v   any
	}{{rules, &l.Rules}, {variants, &l.Variants}, {og, &l.OG}} {
		if f.raw != nil {
			if err := json.Unmarshal(f.raw, f.v); err != nil {
				return nil, fmt.Errorf("link %s: %w", l.ID, err)
			}
		}
	}
	return l, nil
}

// jsonOrNull encodes v for a jsonb column; an empty list or nil is NULL.
func jsonOrNull(v any, empty bool) ([]byte, error) {
	if empty {
		return nil, nil
	}
	return json.Marshal(v)
}

// controls returns the jsonb values of l's rules, variants and social card.
func controls(l *link.Link) (rules, variants, og []byte, err error) {
	if rules, err = jsonOrNull(l.Rules, len(l.Rules) == 0); err != nil {
		return
	}
	if variants, err = jsonOrNull(l.Variants, len(l.Variants) == 0); err != nil {
		return
	}
	og, err = jsonOrNull(l.OG, l.OG == nil)
	return
}

// searchDestinationBytes bounds the part of a destination a search reads
// (storage.SearchDestinationBytes).
const searchDestinationBytes = 512

// searchText is what a search of l reads (links.search_text): its alias,
// the first 512 bytes of its destination, each tag and its note,
// lower-cased, one a line. None of them but the note holds a line break,
// and the note's lines count as fields, so a search without one matches
// within a field, as the bbolt store's does. A link without a note has the
// text it had before notes were.
func searchText(l *link.Link) string {
	dest := strings.ToLower(l.DestinationURL)
	if len(dest) > searchDestinationBytes {
		n := searchDestinationBytes
		for n > 0 && !utf8.RuneStart(dest[n]) {
			n--
		}
		dest = dest[:n]
	}
	parts := append([]string{strings.ToLower(l.Alias), dest}, l.Tags...)
	if l.Note != "" {
		parts = append(parts, l.Note)
	}
	for i := 2; i < len(parts); i++ {
		parts[i] = strings.ToLower(parts[i])
	}
	return strings.ToValidUTF8(strings.Join(parts, "\n"), "")
}

// aliasLockClass is the first key of the advisory locks of aliases
// ("lnk" in ASCII); the second is the hash of domain and alias.
const aliasLockClass = 0x6c6e6b

// lockAliases takes the transaction advisory locks of the aliases (each
// domain + "\n" + alias), in one order, so that two transactions never
// wait for each other's. Claiming an alias, freeing it (a deletion, a
// rename) and holding it happen under its lock.
func lockAliases(ctx context.Context, tx pgx.Tx, keys ...string) error {
	keys = slices.Clone(keys)
	sort.Strings(keys)
	keys = slices.Compact(keys)
	if len(keys) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, lockAliasesQuery, aliasLockClass, keys); err != nil {
		return fmt.Errorf("lock aliases: %w", err)
	}
	return nil
}

// lockAliasesQuery takes the locks of the keys $2 (sorted, each once) of
// class $1 in their order.
const lockAliasesQuery = `SELECT pg_advisory_xact_lock($1, hashtext(k)) FROM unnest($2::text[]) WITH ORDINALITY AS a(k, n) ORDER BY n`

func aliasLockKey(domain, alias string) string { return domain + "\n" + alias }

// Statements of an alias's hold: its holder and end, and its release.
const (
	holdQuery   = `SELECT workspace_id, until FROM link_alias_holds WHERE domain = $1 AND alias = $2`
	releaseHold = `DELETE FROM link_alias_holds WHERE domain = $1 AND alias = $2`
)

// heldForOther reports whether a hold of holder until until keeps the
// alias from workspace wsID at now: another workspace's that has not
// ended. Any other hold is released when the alias is claimed.
func heldForOther(holder, wsID string, until, now time.Time) bool {
	return holder != wsID && now.Before(until)
}

// takenError answers a taken alias, and one another workspace holds: the
// same answer, so that nothing about the other workspace shows.
func takenError(alias string) error {
	return link.Errorf(link.ECONFLICT, "alias %q is already taken", alias)
}

// claimHold checks the hold of an alias that workspace wsID claims, in
// tx under the alias's lock: ECONFLICT while another workspace holds it;
// a hold of the same workspace, or one that has ended, is deleted.
func claimHold(ctx context.Context, tx pgx.Tx, wsID, domain, alias string, now time.Time) error {
	var holder string
	var until time.Time
	err := tx.QueryRow(ctx, holdQuery, domain, alias).Scan(&holder, &until)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("alias hold: %w", err)
	}
	if heldForOther(holder, wsID, until, now) {
		return takenError(alias)
	}
	if _, err := tx.Exec(ctx, releaseHold, domain, alias); err != nil {
		return fmt.Errorf("release alias hold: %w", err)
	}
	return nil
}

// holdAlias holds a freed alias for workspace wsID until now + the hold,
// in tx under the alias's lock.
func (s *LinkService) holdAlias(ctx context.Context, tx pgx.Tx, wsID, domain, alias string, now time.Time) error {
	if s.hold <= 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO link_alias_holds (domain, alias, workspace_id, until) VALUES ($1, $2, $3, $4)
		ON CONFLICT (domain, alias) DO UPDATE SET workspace_id = EXCLUDED.workspace_id, until = EXCLUDED.until`,
		domain, alias, wsID, now.Add(s.hold))
	if err != nil {
		return fmt.Errorf("hold alias: %w", err)
	}
	return nil
}

// newCode draws a generated short code (a variable for the tests).
var newCode = link.NewCode

// codeAttempts bounds the search for a free generated code; with 62^7
// codes a second attempt is already rare.
const codeAttempts = 10

// codeUsedQuery answers whether code $2 is a link's or held on domain $1
// at $3.
const codeUsedQuery = `SELECT EXISTS (SELECT 1 FROM links WHERE domain = $1 AND alias = $2)
	OR EXISTS (SELECT 1 FROM link_alias_holds WHERE domain = $1 AND alias = $2 AND until > $3)`

// freeCode returns a generated code that no link has and no hold covers
// on the domain at now. A link created at once by another transaction
// with the same code is caught by the insert (links_alias_key).
func freeCode(ctx context.Context, tx pgx.Tx, domain string, now time.Time) (string, error) {
	for range codeAttempts {
		code := newCode()
		if link.IsReserved(code) {
			continue
		}
		var used bool
		err := tx.QueryRow(ctx, codeUsedQuery, domain, code, now).Scan(&used)
		if err != nil {
			return "", fmt.Errorf("free code: %w", err)
		}
		if !used {
			return code, nil
		}
	}
	return "", errors.New("postgres: no free short code found")
}

// domainForLink checks, in the transaction that stores a link, that
// hostname is a verified domain of workspace wsID, and keeps it so (FOR
// SHARE) until the transaction ends: DeleteDomain and un-verifying lock
// the domain's row, so a link is either counted there or refused here.
// EINVALID (field domain).
func domainForLink(ctx context.Context, tx pgx.Tx, wsID, hostname string) error {
	var ok bool
	if err := tx.QueryRow(ctx, domainForLinkQuery, hostname, wsID).Scan(&ok); err != nil {
		return fmt.Errorf("domain for link: %w", err)
	}
	if !ok {
		return domainForLinkError(hostname)
	}
	return nil
}

// domainForLinkQuery answers whether hostname $1 is a verified domain of
// workspace $2, and keeps its row shared.
const domainForLinkQuery = `SELECT coalesce((SELECT workspace_id = $2 AND verified FROM domains WHERE hostname = $1 FOR SHARE), false)`

// domainForLinkError refuses a link's domain that is no verified domain
// of its workspace.
func domainForLinkError(hostname string) error {
	return &link.Error{Code: link.EINVALID, Message: "domain: " + hostname + " is not a verified domain of this workspace",
		Fields: []link.FieldError{{Field: "domain", Message: "is not a verified domain of this workspace"}}}
}

// campaignForLink checks, in the transaction that stores a link, that id
// is a campaign of workspace wsID, and keeps it (FOR SHARE) until the
// transaction ends: DeleteCampaign locks it to count its links. EINVALID
// (field campaign_id).
func (db *DB) campaignForLink(ctx context.Context, tx pgx.Tx, wsID, id string) error {
	if db.validID(link.PrefixCampaign, id) {
		var ok bool
		if err := tx.QueryRow(ctx, campaignForLinkQuery, id, wsID).Scan(&ok); err != nil {
			return fmt.Errorf("campaign for link: %w", err)
		}
		if ok {
			return nil
		}
	}
	return campaignForLinkError(id)
}

// campaignForLinkQuery answers whether campaign $1 is of workspace $2,
// and keeps its row shared.
const campaignForLinkQuery = `SELECT EXISTS (SELECT 1 FROM campaigns WHERE id = $1 AND workspace_id = $2 FOR SHARE)`

// campaignForLinkError refuses a link's campaign that is no campaign of
// its workspace.
func campaignForLinkError(id string) error {
	return &link.Error{Code: link.EINVALID, Message: fmt.Sprintf("campaign_id: campaign %q not found in this workspace", id),
		Fields: []link.FieldError{{Field: "campaign_id", Message: "not found in this workspace"}}}
}

// emitLink writes the event of a change of l in tx.
func (s *LinkService) emitLink(ctx context.Context, tx pgx.Tx, eventType string, l *link.Link, at time.Time) error {
	return s.db.appendEvent(ctx, tx, l.WorkspaceID, eventType, at, func() ([]byte, error) { return s.db.events.LinkData(l) })
}

// normalizedInput returns a normalised copy of a link given to store,
// sharing no slice the normalisation changes with l.
func normalizedInput(l *link.Link) link.Link {
	in := *l
	in.Tags = slices.Clone(l.Tags)
	in.Normalize()
	return in
}

// addLink stores the new link in of workspace wsID at now, in tx with the
// alias locked (an empty alias gets a generated code), and returns it as
// stored. It checks everything that can refuse the link (domain,
// campaign, alias: EINVALID, ECONFLICT) before it writes.
func (s *LinkService) addLink(ctx context.Context, tx pgx.Tx, wsID string, in *link.Link, now time.Time) (*link.Link, error) {
	if in.Domain != "" {
		if err := domainForLink(ctx, tx, wsID, in.Domain); err != nil {
			return nil, err
		}
	}
	if in.CampaignID != "" {
		if err := s.db.campaignForLink(ctx, tx, wsID, in.CampaignID); err != nil {
			return nil, err
		}
	}
	if by, err := externalHolder(ctx, tx, wsID, in.ExternalID, ""); err != nil {
		return nil, err
	} else if by != "" {
		return nil, externalTakenError(in.ExternalID, by)
	}
	l := *in
	l.WorkspaceID, l.Clicks, l.CreatedAt, l.UpdatedAt = wsID, 0, now, now
	if l.ExpiresAt != nil {
		t := dbTime(*l.ExpiresAt)
		l.ExpiresAt = &t
	}
	generated := l.Alias == ""
	var seq int64
	for attempt := 0; ; attempt++ {
		if generated {
			code, err := freeCode(ctx, tx, l.Domain, now)
			if err != nil {
				return nil, err
			}
			l.Alias = code
		} else if err := claimHold(ctx, tx, wsID, l.Domain, l.Alias, now); err != nil {
			return nil, err
		}
		if l.ID == "" {
			var err error
			if l.ID, seq, err = s.db.newID(ctx, tx, link.PrefixLink); err != nil {
				return nil, err
			}
		}
		ok, err := s.insertLink(ctx, tx, &l, seq)
		if err != nil {
			return nil, err
		}
		if ok {
			return &l, nil
		}
		if !generated || attempt == codeAttempts {
			return nil, takenError(l.Alias)
		}
	}
}

// insertLink inserts l unless its alias is taken on its domain, and
// reports whether it did.
//
// One link goes in with VALUES: the set-wise insert (linkRows), with its
// two dozen arrays of one element, took a quarter longer a creation.
func (s *LinkService) insertLink(ctx context.Context, tx pgx.Tx, l *link.Link, seq int64) (bool, error) {
	args, err := linkInsertArgs(l, seq)
	if err != nil {
		return false, err
	}
	tag, err := tx.Exec(ctx, insertLinkQuery+` ON CONFLICT (domain, alias) DO NOTHING`, args...)
	if isUnique(err, "links_external_key") {
		return false, externalTakenError(l.ExternalID, "")
	} else if err != nil {
		return false, fmt.Errorf("insert link: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// insertLinkQuery inserts a link with linkInsertArgs.
const insertLinkQuery = `INSERT INTO links (` + linkInsertColumns + `)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31)`

// linkInsertArgs are the values of insertLinkQuery for l with seq.
func linkInsertArgs(l *link.Link, seq int64) ([]any, error) {
	rules, variants, og, err := controls(l)
	if err != nil {
		return nil, err
	}
	tags := l.Tags
	if tags == nil {
		tags = []string{}
	}
	return []any{l.ID, seq, l.WorkspaceID, l.Domain, l.Alias, l.DestinationURL, tags,
		l.UTMSource, l.UTMMedium, l.UTMCampaign, l.CampaignID, l.RedirectCode, l.CreatedAt, l.UpdatedAt,
		l.PasswordHash, rules, variants, og, l.ExpiresAt, l.MaxClicks, l.ExpiredURL, l.Archived, l.Title, searchText(l), forwardBits(l), nullIfEmpty(l.ExternalID), l.IOSURL, l.AndroidURL, l.Crawlable, interstitialBits(l), l.Note}, nil
}

// linkInsertColumns are the columns a new link is inserted with, in the
// order of insertLink's and linkRows' values.
const linkInsertColumns = `id, seq, workspace_id, domain, alias, destination_url, tags,
	utm_source, utm_medium, utm_campaign, campaign_id, redirect_code, created_at, updated_at,
	password_hash, rules, variants, og, expires_at, max_clicks, expired_url, archived, title, search_text, forward, external_id, ios_url, android_url, crawlable, interstitial, note`

// nullIfEmpty is s for a nullable text column: NULL when empty.
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// externalTakenError is the ECONFLICT of an external ID another link of
// the workspace has (by the ID of that link when known).
func externalTakenError(externalID, by string) error {
	msg := "is another link's external ID"
	if by != "" {
		msg = "is the external ID of link " + by
	}
	return &link.Error{Code: link.ECONFLICT, Message: fmt.Sprintf("external_id: %q %s", externalID, msg),
		Fields: []link.FieldError{{Field: "external_id", Message: msg}}}
}

// externalHolder returns the link of the workspace with the external
// ID, other than the link except, or "".
func externalHolder(ctx context.Context, tx pgx.Tx, wsID, externalID, except string) (string, error) {
	if externalID == "" {
		return "", nil
	}
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM links WHERE workspace_id = $1 AND external_id = $2 AND id <> $3`, wsID, externalID, except).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("external ID: %w", err)
	}
	return id, nil
}

// dbTime is t as a timestamptz column keeps it: in microseconds, here in
// UTC, so that what a change returns is what a read returns later.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// workspaceExists answers ENOTFOUND for an unknown workspace.
func workspaceExists(ctx context.Context, tx pgx.Tx, wsID string) error {
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = $1)`, wsID).Scan(&ok); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if !ok {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", wsID)
	}
	return nil
}

// CreateLink stores a link, generating a code when the alias is empty;
// sets ID, Alias, CreatedAt, UpdatedAt (and the normalised fields) once
// it is committed. ENOTFOUND for an unknown workspace; EINVALID (domain,
// campaign); ECONFLICT if the alias is taken on the domain or held for
// another workspace.
func (s *LinkService) CreateLink(ctx context.Context, l *link.Link) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.db.validID(link.PrefixWorkspace, l.WorkspaceID) {
		return link.Errorf(link.ENOTFOUND, "workspace %q not found", l.WorkspaceID)
	}
	in := normalizedInput(l)
	now := dbTime(s.db.now())
	var created *link.Link
	var err error
	// A drawn code taken between its check and the insert (by another
	// process) makes the transaction fail at its commit: it runs again,
	// with another code.
	for range 8 {
		err = s.db.tx(ctx, func(tx pgx.Tx) error {
			l, handled, err := s.createLink(ctx, tx, &in, now)
			if err != nil {
				return err
			}
			if !handled {
				if l, err = s.addLink(ctx, tx, in.WorkspaceID, &in, now); err != nil {
					return err
				}
			}
			created = l
			return s.emitLink(ctx, tx, link.EventLinkCreated, created, now)
		})
		if !errors.Is(err, errDrawnCodeTaken) {
			break
		}
	}
	if err != nil {
		return err
	}
	s.db.linksAdded(1)
	*l = *created
	return nil
}

// CreateLinks stores links of the workspace in one transaction, each as
// CreateLink would; a link refused for a reason of its own (alias taken,
// domain or campaign not the workspace's) gets that error and writes
// nothing, the others are stored.
func (s *LinkService) CreateLinks(ctx context.Context, workspaceID string, links []*link.Link) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	ins := make([]link.Link, len(links))
	var keys []string
	for i, l := range links {
		ins[i] = normalizedInput(l)
		if ins[i].Alias != "" {
			keys = append(keys, aliasLockKey(ins[i].Domain, ins[i].Alias))
		}
	}
	now := dbTime(s.db.now())
	var errs []error
	var created []*link.Link
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		if err := lockAliases(ctx, tx, keys...); err != nil {
			return err
		}
		var err error
		if created, errs, err = s.addLinks(ctx, tx, workspaceID, ins, now); err != nil {
			return err
		}
		for _, l := range created {
			if l != nil {
				if err := s.emitLink(ctx, tx, link.EventLinkCreated, l, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	n := 0
	for i, l := range created {
		if l != nil {
			*links[i] = *l
			n++
		}
	}
	s.db.linksAdded(n)
	return errs, nil
}

// FindLinkByID returns a link of the workspace with its clicks.
// ENOTFOUND, also for a link of another workspace.
func (s *LinkService) FindLinkByID(ctx context.Context, workspaceID, id string) (*link.Link, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixLink, id) {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	l, err := scanLink(s.db.pool.QueryRow(ctx, `SELECT `+linkColumns+` FROM links l WHERE l.id = $1 AND l.workspace_id = $2`, id, workspaceID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	return l, err
}

// FindLinkByExternalID returns the link of the workspace with the
// external ID, with its clicks. ENOTFOUND.
func (s *LinkService) FindLinkByExternalID(ctx context.Context, workspaceID, externalID string) (*link.Link, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || externalID == "" {
		return nil, link.Errorf(link.ENOTFOUND, "no link has the external ID %q", externalID)
	}
	l, err := scanLink(s.db.pool.QueryRow(ctx, `SELECT `+linkColumns+` FROM links l WHERE l.workspace_id = $1 AND l.external_id = $2`, workspaceID, externalID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "no link has the external ID %q", externalID)
	}
	return l, err
}

// CrawlableAliases returns the aliases of the crawlable links on the
// domain, in order, at most limit of them (links_crawlable).
func (s *LinkService) CrawlableAliases(ctx context.Context, domain string, limit int) ([]string, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT alias FROM links WHERE crawlable AND domain = $1 ORDER BY alias LIMIT $2`, strings.ToLower(domain), limit)
	if err != nil {
		return nil, fmt.Errorf("crawlable links: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// FindLinkByAlias returns the link for a redirect, in one lookup of
// links_alias_key: its UTM values are its own, or its campaign's where it
// has none; its Clicks is not filled in. ENOTFOUND, also for a held
// alias.
//
// A link found is kept in memory (redirectCache): the link clicked most
// is read once a TTL, not once a click. While the database cannot be
// read, a link kept longer is answered as it was: at once when the
// database refuses, within staleWait when it does not answer (see
// readStall).
func (s *LinkService) FindLinkByAlias(ctx context.Context, domain, alias string) (*link.Link, error) {
	domain = strings.ToLower(domain)
	key := domain + "\n" + alias
	s.db.listening()
	l, ok, gen, h := s.db.links.get(key)
	if ok {
		return l, nil
	}
	old, held, current := h.v, h.ok, h.current
	if !held || !current {
		l, err := s.db.aliases.load(ctx, domain, alias)
		if err == nil {
			s.db.links.put(key, l, gen)
		} else if _, down := unavailable(err); down && held && ctx.Err() == nil {
			return old, nil
		}
		return l, err
	}
	read := func(ctx context.Context) error {
		l, err := s.db.aliases.load(ctx, domain, alias)
		if err == nil {
			s.db.links.put(key, l, gen)
		}
		return err
	}
	if s.db.stall.on() {
		s.db.stall.refresh(read)
		return old, nil
	}
	wctx, cancel := context.WithTimeout(ctx, staleWait)
	defer cancel()
	l, err := s.db.aliases.load(wctx, domain, alias)
	if ctx.Err() == nil {
		s.db.stall.saw(err)
	}
	switch {
	case err == nil:
		s.db.links.put(key, l, gen)
	case heldAnswer(ctx, err):
		return old, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return nil, ctx.Err() // the request's own deadline
	}
	return l, err
}

// UpdateLink applies an update in one transaction: it locks the link,
// applies upd, calls validate (whose error is returned unchanged), moves
// the alias if it changed (an empty alias gets a new code; the old one is
// held for the workspace) and sets UpdatedAt. ENOTFOUND, ECONFLICT
// (alias), EINVALID (campaign).
func (s *LinkService) UpdateLink(ctx context.Context, workspaceID, id string, upd link.LinkUpdate, validate func(*link.Link) error) (*link.Link, error) {
	var changed []string // the aliases read: nothing changed before
	defer func() { s.db.linksChanged(changed...) }()
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixLink, id) {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	now := dbTime(s.db.now())
	var out *link.Link
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		l, key, _, err := s.updateLinkTx(ctx, tx, workspaceID, id, upd, validate, now)
		if key != "" {
			changed = []string{key}
		}
		out = l
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// updateLinkTx is UpdateLink's work in tx at now: the link as updated,
// the alias key it had (to announce), and whether it wrote anything
// before an error (ENOTFOUND, validate's error and a campaign not of the
// workspace come before any write).
func (s *LinkService) updateLinkTx(ctx context.Context, tx pgx.Tx, workspaceID, id string, upd link.LinkUpdate, validate func(*link.Link) error, now time.Time) (*link.Link, string, bool, error) {
	// A campaign is locked before the link, as DeleteCampaign locks
	// its campaign before its links; it is checked below.
	if upd.CampaignID != nil && strings.TrimSpace(*upd.CampaignID) != "" {
		if _, err := tx.Exec(ctx, `SELECT FROM campaigns WHERE id = $1 AND workspace_id = $2 FOR SHARE`, strings.TrimSpace(*upd.CampaignID), workspaceID); err != nil {
			return nil, "", false, fmt.Errorf("lock campaign: %w", err)
		}
	}
	old, err := scanLink(tx.QueryRow(ctx, `SELECT `+linkColumns+` FROM links l WHERE l.id = $1 AND l.workspace_id = $2 FOR UPDATE`, id, workspaceID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, "", false, link.Errorf(link.ENOTFOUND, "link %q not found", id)
	} else if err != nil {
		return nil, "", false, err
	}
	key := aliasLockKey(old.Domain, old.Alias)
	l := *old
	l.Tags = slices.Clone(old.Tags)
	upd.Apply(&l)
	if validate != nil {
		if err := validate(&l); err != nil {
			return nil, key, false, err
		}
	}
	if l.CampaignID != old.CampaignID && l.CampaignID != "" {
		if err := s.db.campaignForLink(ctx, tx, workspaceID, l.CampaignID); err != nil {
			return nil, key, false, err
		}
	}
	if l.ExternalID != old.ExternalID {
		if by, err := externalHolder(ctx, tx, workspaceID, l.ExternalID, id); err != nil {
			return nil, key, false, err
		} else if by != "" {
			return nil, key, false, externalTakenError(l.ExternalID, by)
		}
	}
	l.Domain = old.Domain
	if l.Alias == "" {
		if l.Alias, err = freeCode(ctx, tx, l.Domain, now); err != nil {
			return nil, key, true, err
		}
	}
	if l.Alias != old.Alias {
		if err := lockAliases(ctx, tx, aliasLockKey(l.Domain, l.Alias), aliasLockKey(old.Domain, old.Alias)); err != nil {
			return nil, key, true, err
		}
		if err := claimHold(ctx, tx, workspaceID, l.Domain, l.Alias, now); err != nil {
			return nil, key, true, err
		}
	}
	l.UpdatedAt = now
	if l.ExpiresAt != nil {
		t := dbTime(*l.ExpiresAt)
		l.ExpiresAt = &t
	}
	rules, variants, og, err := controls(&l)
	if err != nil {
		return nil, key, true, err
	}
	tags := l.Tags
	if tags == nil {
		tags = []string{}
	}
	_, err = tx.Exec(ctx, `UPDATE links SET alias = $2, destination_url = $3, tags = $4, utm_source = $5,
		utm_medium = $6, utm_campaign = $7, campaign_id = $8, redirect_code = $9, updated_at = $10,
		password_hash = $11, rules = $12, variants = $13, og = $14, expires_at = $15, max_clicks = $16,
		expired_url = $17, archived = $18, title = $19, search_text = $20, forward = $21, external_id = $22,
		ios_url = $23, android_url = $24, crawlable = $25, interstitial = $26, note = $27 WHERE id = $1`,
		id, l.Alias, l.DestinationURL, tags, l.UTMSource, l.UTMMedium, l.UTMCampaign, l.CampaignID,
		l.RedirectCode, l.UpdatedAt, l.PasswordHash, rules, variants, og, l.ExpiresAt, l.MaxClicks,
		l.ExpiredURL, l.Archived, l.Title, searchText(&l), forwardBits(&l), nullIfEmpty(l.ExternalID), l.IOSURL, l.AndroidURL, l.Crawlable, interstitialBits(&l), l.Note)
	if isUnique(err, "links_alias_key") {
		return nil, key, true, takenError(l.Alias)
	} else if isUnique(err, "links_external_key") {
		return nil, key, true, externalTakenError(l.ExternalID, "")
	} else if err != nil {
		return nil, key, true, fmt.Errorf("update link: %w", err)
	}
	if l.Alias != old.Alias {
		if err := s.holdAlias(ctx, tx, workspaceID, old.Domain, old.Alias, now); err != nil {
			return nil, key, true, err
		}
	}
	// A limit removed ends the link's count of clicks; one set where
	// there was none starts from the stored total (click_reservations.go).
	if (old.MaxClicks > 0) != (l.MaxClicks > 0) {
		if err := clearClickReservations(ctx, tx, id); err != nil {
			return nil, key, true, err
		}
	}
	if err := s.db.notifyCache(ctx, tx, linkPayload(old.Domain, old.Alias)); err != nil {
		return nil, key, true, err
	}
	return &l, key, true, s.emitLink(ctx, tx, link.EventLinkUpdated, &l, now)
}

// DeleteLink removes a link and holds its alias for the workspace
// (a held alias redirects nowhere). ENOTFOUND.
func (s *LinkService) DeleteLink(ctx context.Context, workspaceID, id string) error {
	var changed []string // the aliases read: nothing changed before
	defer func() { s.db.linksChanged(changed...) }()
	if !s.db.validID(link.PrefixWorkspace, workspaceID) || !s.db.validID(link.PrefixLink, id) {
		return link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	now := dbTime(s.db.now())
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		l, err := findLinkForUpdate(ctx, tx, workspaceID, id)
		if err != nil {
			return err
		}
		changed = []string{aliasLockKey(l.Domain, l.Alias)}
		return s.deleteLinkTx(ctx, tx, workspaceID, l, now)
	})
}

// findLinkForUpdate reads a link of the workspace and locks it for the
// rest of tx. ENOTFOUND.
func findLinkForUpdate(ctx context.Context, tx pgx.Tx, workspaceID, id string) (*link.Link, error) {
	l, err := scanLink(tx.QueryRow(ctx, `SELECT `+linkColumns+` FROM links l WHERE l.id = $1 AND l.workspace_id = $2 FOR UPDATE`, id, workspaceID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, link.Errorf(link.ENOTFOUND, "link %q not found", id)
	}
	return l, err
}

// deleteLinkTx is DeleteLink's work in tx at now, on l, read and locked.
func (s *LinkService) deleteLinkTx(ctx context.Context, tx pgx.Tx, workspaceID string, l *link.Link, now time.Time) error {
	if err := s.db.notifyCache(ctx, tx, linkPayload(l.Domain, l.Alias)); err != nil {
		return err
	}
	if err := s.emitLink(ctx, tx, link.EventLinkDeleted, l, now); err != nil {
		return err
	}
	if err := lockAliases(ctx, tx, aliasLockKey(l.Domain, l.Alias)); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM links WHERE id = $1`, l.ID); err != nil {
		return fmt.Errorf("delete link: %w", err)
	}
	return s.holdAlias(ctx, tx, workspaceID, l.Domain, l.Alias, now)
}

// DeleteLinks removes links of the workspace in one transaction, each as
// DeleteLink does (see link.LinkService). The links are locked in the
// order of their IDs, so that two bulk deletions at once wait for each
// other instead of deadlocking.
func (s *LinkService) DeleteLinks(ctx context.Context, workspaceID string, ids []string) ([]error, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	var changed []string
	defer func() { s.db.linksChanged(changed...) }()
	now := dbTime(s.db.now())
	var errs []error
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		errs, changed = make([]error, len(ids)), nil
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		for _, i := range idOrder(ids) {
			id := ids[i]
			if !s.db.validID(link.PrefixLink, id) {
				errs[i] = link.Errorf(link.ENOTFOUND, "link %q not found", id)
				continue
			}
			l, err := findLinkForUpdate(ctx, tx, workspaceID, id)
			if link.ErrorCode(err) == link.ENOTFOUND {
				errs[i] = err // also the second time an ID is named
				continue
			} else if err != nil {
				return err
			}
			changed = append(changed, aliasLockKey(l.Domain, l.Alias))
			if err := s.deleteLinkTx(ctx, tx, workspaceID, l, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return errs, nil
}

// UpdateLinks applies upd to links of the workspace in one transaction,
// each as UpdateLink does (see link.LinkService), locking them in the
// order of their IDs.
func (s *LinkService) UpdateLinks(ctx context.Context, workspaceID string, ids []string, upd link.LinkUpdate, validate func(*link.Link) error) ([]*link.Link, []error, error) {
	if !s.db.validID(link.PrefixWorkspace, workspaceID) {
		return nil, nil, link.Errorf(link.ENOTFOUND, "workspace %q not found", workspaceID)
	}
	if upd.Alias != nil {
		return nil, nil, link.Errorf(link.EINVALID, "a bulk update cannot change aliases")
	}
	var changed []string
	defer func() { s.db.linksChanged(changed...) }()
	now := dbTime(s.db.now())
	var out []*link.Link
	var errs []error
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		out, errs, changed = make([]*link.Link, len(ids)), make([]error, len(ids)), nil
		if err := workspaceExists(ctx, tx, workspaceID); err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, i := range idOrder(ids) {
			id := ids[i]
			if !s.db.validID(link.PrefixLink, id) || seen[id] {
				errs[i] = link.Errorf(link.ENOTFOUND, "link %q not found (or named twice)", id)
				continue
			}
			seen[id] = true
			l, key, wrote, err := s.updateLinkTx(ctx, tx, workspaceID, id, upd, validate, now)
			if key != "" {
				changed = append(changed, key)
			}
			switch {
			case err != nil && !wrote && link.ErrorCode(err) != link.EINTERNAL:
				errs[i] = err
				continue
			case err != nil:
				return err // a write began: the whole update fails
			}
			out[i] = l
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, errs, nil
}

// idOrder returns the indexes of ids in the order of the IDs.
func idOrder(ids []string) []int {
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
	return order
}

// PruneAliasHolds deletes the alias holds that ended before now and
// returns how many (link_alias_holds_until).
func (s *LinkService) PruneAliasHolds(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := s.db.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM link_alias_holds WHERE until <= $1`, now)
		n = tag.RowsAffected()
		return err
	})
	return int(n), err
}
