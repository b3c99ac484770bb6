package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/dump"
	"github.com/linkbolt/linkbolt/link"
)

// dataTables are the tables that hold an instance's data: a database with
// a row in any of them is not empty. settings is not one: the ID key and
// the JWT secret are written by any server's first start.
var dataTables = []string{"users", "workspaces", "blocklist", "certs", "audit_entries", "revoked_tokens", "click_salts", "click_backlog"}

// Empty reports whether the database holds no linkbolt data (a freshly
// migrated one, or one a server only started on).
func (db *DB) Empty(ctx context.Context) (bool, error) {
	return empty(ctx, db.pool)
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func empty(ctx context.Context, q querier) (bool, error) {
	parts := make([]string, len(dataTables))
	for i, t := range dataTables {
		parts[i] = "EXISTS (SELECT 1 FROM " + t + ")"
	}
	var full bool
	if err := q.QueryRow(ctx, `SELECT `+strings.Join(parts, " OR ")).Scan(&full); err != nil {
		return false, fmt.Errorf("check the database is empty: %w", err)
	}
	return !full, nil
}

// LoadReport says what a Load left out: rows the source kept that this
// store never keeps (the clicks and aggregates of deleted links and
// campaigns, which PostgreSQL deletes with them).
type LoadReport struct {
	Dropped map[string]int64 // kind → rows
}

// Load writes the records of src into the database, which must be empty,
// in one transaction: on any error, or when ctx ends, nothing is written.
// Bulk rows go by COPY.
func (db *DB) Load(ctx context.Context, src *dump.Source) (*LoadReport, error) {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres %s: %s", db.url, redactErr(err, db.url))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// No server may write while the copy does.
	if _, err := tx.Exec(ctx, `LOCK TABLE users, workspaces, links IN EXCLUSIVE MODE`); err != nil {
		return nil, fmt.Errorf("lock the database: %w", err)
	}
	if ok, err := empty(ctx, tx); err != nil {
		return nil, err
	} else if !ok {
		return nil, ErrNotEmpty
	}
	l := &loader{tx: tx, db: db, report: &LoadReport{Dropped: map[string]int64{}}, workspaces: map[string]bool{}, campaigns: map[string]bool{}}
	if err := l.deferIndexes(ctx); err != nil {
		return nil, err
	}
	for r := src.Peek(); r != nil; r = src.Peek() {
		if err := l.load(ctx, src, r); err != nil {
			return nil, err
		}
	}
	if err := src.Err(); err != nil {
		return nil, err
	}
	if err := l.finish(ctx); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	// The planner's statistics of the tables just filled: without them,
	// until autovacuum gets to it, a search reads every link of a
	// workspace instead of the trigram index.
	// The copy is whole without them: a failure here is only said.
	if _, err := db.pool.Exec(ctx, `ANALYZE`); err != nil {
		db.logger.Warn("postgres: the copy is complete; updating the planner's statistics (ANALYZE) failed: autovacuum will", "err", err)
	}
	return l.report, nil
}

// ErrNotEmpty is Load's answer for a database that holds data.
var ErrNotEmpty = errors.New("the database holds linkbolt data already")

type loader struct {
	tx     pgx.Tx
	db     *DB
	report *LoadReport
	usage  [][]any // key_usage rows, written after the keys
	// reservations: the click_reservations rows of the limited links,
	// written after the links
	reservations [][]any
	// backlog: the waiting clicks' count and bytes
	backlogClicks, backlogBytes int64
	deferred                    []deferred
	// what was loaded, for the click rows that name it
	workspaces, campaigns map[string]bool
	links                 []uint64 // sequences
	linksSorted           bool
	// the source's ID codec, from its settings
	idKey  []byte
	legacy map[string]uint64
	ids    *link.IDCodec
}

// clickColumns are the columns the click tables are loaded with.
var clickColumns = map[string][]string{
	"click_hour_sums": {"scope", "hour", "clicks", "bots", "tops", "workspace_id", "campaign_id", "link_id"},
	"click_day_sums":  {"scope", "day", "clicks", "bots", "visitors", "bot_visitors", "tops", "workspace_id", "campaign_id", "link_id"},
	"click_visitors":  {"scope", "day", "visitor", "bot", "workspace_id", "campaign_id", "link_id"},
	"clicks":          {"workspace_id", "link_id", "campaign_id", "at_ns", "referrer", "country", "device", "browser", "os", "bot", "visitor", "variant"},
}

// bulkTables are the tables that take the most rows: their secondary
// indexes and foreign keys are dropped before the load and made again
// after it, in the same transaction, which builds each in one pass
// instead of row by row.
var bulkTables = []string{"links", "audit_entries", "clicks", "click_hour_sums", "click_day_sums", "click_visitors"}

// deferred is an index or a constraint dropped for the load: the
// statement that makes it again.
type deferred struct{ drop, create string }

// deferIndexes drops the bulk tables' secondary indexes and foreign keys
// and returns what makes them again.
func (l *loader) deferIndexes(ctx context.Context) error {
	rows, err := l.tx.Query(ctx, `SELECT 'ALTER TABLE ' || conrelid::regclass || ' DROP CONSTRAINT ' || quote_ident(conname),
			'ALTER TABLE ' || conrelid::regclass || ' ADD CONSTRAINT ' || quote_ident(conname) || ' ' || pg_get_constraintdef(oid)
		FROM pg_constraint WHERE contype = 'f' AND conrelid = ANY($1::regclass[])
		UNION ALL
		SELECT 'DROP INDEX ' || i.indexrelid::regclass, pg_get_indexdef(i.indexrelid)
		FROM pg_index i WHERE i.indrelid = ANY($1::regclass[]) AND NOT i.indisprimary
			AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`, bulkTables)
	if err != nil {
		return fmt.Errorf("read indexes: %w", err)
	}
	for rows.Next() {
		var d deferred
		if err := rows.Scan(&d.drop, &d.create); err != nil {
			rows.Close()
			return err
		}
		l.deferred = append(l.deferred, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read indexes: %w", err)
	}
	for _, d := range l.deferred {
		if _, err := l.tx.Exec(ctx, d.drop); err != nil {
			return fmt.Errorf("%s: %w", d.drop, err)
		}
	}
	return nil
}

// restoreIndexes makes the deferred indexes and constraints again.
func (l *loader) restoreIndexes(ctx context.Context) error {
	for _, d := range l.deferred {
		if _, err := l.tx.Exec(ctx, d.create); err != nil {
			return fmt.Errorf("%s: %w", d.create, err)
		}
	}
	return nil
}

// linkExists reports whether the link of a wire ID was loaded: the click
// rows of other links (the source kept them after the link's deletion)
// are left out, as this store deletes them with the link.
func (l *loader) linkExists(id string) bool {
	if !l.linksSorted {
		slices.Sort(l.links)
		l.linksSorted = true
	}
	seq, ok := l.ids.ParseID(link.PrefixLink, id)
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(l.links, seq)
	return found
}

// scopeExists reports whether the workspace, link and campaign of a scope
// were loaded.
func (l *loader) scopeExists(s dump.Scope) bool {
	return l.workspaces[s.WorkspaceID] && (s.CampaignID == "" || l.campaigns[s.CampaignID]) && (s.LinkID == "" || l.linkExists(s.LinkID))
}

// drop counts a row left out.
func (l *loader) drop(kind string) { l.report.Dropped[kind]++ }

// copyRows copies the records src holds next that take accepts into
// table, each as the rows rows makes of it.
func (l *loader) copyRows(ctx context.Context, src *dump.Source, table string, cols []string, take func(dump.Record) bool, rows func(dump.Record) ([][]any, error)) error {
	cs := &copySource{src: src, take: take, rows: rows}
	if _, err := l.tx.CopyFrom(ctx, pgx.Identifier{table}, cols, cs); err != nil {
		if cs.err != nil {
			return cs.err
		}
		return fmt.Errorf("write %s: %w", table, err)
	}
	return cs.err
}

// copySource is a pgx.CopyFromSource over the stream.
type copySource struct {
	src     *dump.Source
	take    func(dump.Record) bool
	rows    func(dump.Record) ([][]any, error)
	pending [][]any
	err     error
}

func (c *copySource) Next() bool {
	if len(c.pending) > 1 {
		c.pending = c.pending[1:]
		return true
	}
	for {
		r := c.src.Peek()
		if r == nil || !c.take(r) {
			return false
		}
		c.src.Next()
		rows, err := c.rows(r)
		if err != nil {
			c.err = err
			return false
		}
		if len(rows) > 0 {
			c.pending = rows
			return true
		}
	}
}

func (c *copySource) Values() ([]any, error) { return c.pending[0], nil }
func (c *copySource) Err() error             { return c.err }

func ofKind(kind string) func(dump.Record) bool {
	return func(r dump.Record) bool { return r.Kind() == kind }
}

func one(vals ...any) ([][]any, error) { return [][]any{vals}, nil }

// nilIfEmpty is NULL for "".
func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (l *loader) load(ctx context.Context, src *dump.Source, r dump.Record) error {
	kind := r.Kind()
	if _, ok := r.(*dump.Setting); !ok && l.ids == nil {
		// The settings are read: the IDs are the source's.
		if l.idKey == nil {
			return errors.New("the source has no ID key")
		}
		ids, err := link.NewIDCodec(l.idKey, l.legacy)
		if err != nil {
			return fmt.Errorf("the source's ID key: %w", err)
		}
		l.ids = ids
	}
	switch r := r.(type) {
	case *dump.Setting:
		src.Next()
		switch r.Name {
		case settingIDKey:
			l.idKey = r.Value
		case settingIDLegacyMax:
			if err := json.Unmarshal(r.Value, &l.legacy); err != nil {
				return fmt.Errorf("legacy ID maxima: %w", err)
			}
		}
		_, err := l.tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value`, r.Name, r.Value)
		return err
	case *dump.IDState:
		src.Next()
		name := strings.TrimSuffix(r.Prefix, "_")
		if !validSequence(name) {
			return fmt.Errorf("IDs of an unknown kind %q", r.Prefix)
		}
		var err error
		if r.Last == 0 {
			_, err = l.tx.Exec(ctx, `SELECT setval($1::regclass, 1, false)`, "ids_"+name)
		} else {
			_, err = l.tx.Exec(ctx, `SELECT setval($1::regclass, $2)`, "ids_"+name, int64(r.Last))
		}
		return err
	case *dump.Cert:
		return l.copyRows(ctx, src, "certs", []string{"name", "data"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			c := r.(*dump.Cert)
			return one(c.Name, c.Data)
		})
	case *dump.BlockEntry:
		return l.copyRows(ctx, src, "blocklist", []string{"entry", "created_at", "created_by"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			b := r.(*dump.BlockEntry)
			return one(b.Entry, b.CreatedAt, b.CreatedBy)
		})
	case *dump.User:
		return l.copyRows(ctx, src, "users", []string{"id", "seq", "email", "email_key", "password_hash", "admin", "name", "disabled", "token_generation", "created_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			u := r.(*dump.User)
			hash := u.PasswordHash
			if hash == nil {
				hash = []byte{}
			}
			return one(u.ID, int64(u.Seq), u.Email, link.NormalizeEmail(u.Email), hash, u.Admin, u.Name, u.Disabled, int64(u.TokenGeneration), u.CreatedAt)
		})
	case *dump.RevokedToken:
		return l.copyRows(ctx, src, "revoked_tokens", []string{"id", "expires_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			t := r.(*dump.RevokedToken)
			return one(t.ID, t.ExpiresAt)
		})
	case *dump.PasswordReset:
		return l.copyRows(ctx, src, "password_resets", []string{"token_hash", "user_id", "expires_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			p := r.(*dump.PasswordReset)
			return one(p.TokenHash, p.UserID, p.ExpiresAt)
		})
	case *dump.Workspace:
		return l.copyRows(ctx, src, "workspaces", []string{"id", "seq", "name", "plan", "created_at", "updated_at", "data_since", "link_forward", "destination_checks", "pixel_meta", "pixel_google", "pixel_linkedin"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			w := r.(*dump.Workspace)
			l.workspaces[w.ID] = true
			return one(w.ID, int64(w.Seq), w.Name, w.Plan, w.CreatedAt, w.UpdatedAt, w.DataSince,
				forwardBits(&link.Link{ForwardPath: w.ForwardPath, ForwardQuery: w.ForwardQuery}), w.DestinationChecks, w.Pixels.Meta, w.Pixels.Google, w.Pixels.LinkedIn)
		})
	case *dump.Member:
		return l.copyRows(ctx, src, "members", []string{"workspace_id", "user_id", "role", "created_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			m := r.(*dump.Member)
			return one(m.WorkspaceID, m.UserID, m.Role, m.CreatedAt)
		})
	case *dump.FormerMember:
		return l.copyRows(ctx, src, "former_members", []string{"workspace_id", "user_id", "removed_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			m := r.(*dump.FormerMember)
			return one(m.WorkspaceID, m.UserID, m.RemovedAt)
		})
	case *dump.Invitation:
		return l.copyRows(ctx, src, "invitations", []string{"id", "seq", "workspace_id", "email", "role", "token_hash", "invited_by", "created_at", "expires_at", "accepted_at", "accepted_by", "revoked_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			i := r.(*dump.Invitation)
			return one(i.ID, int64(i.Seq), i.WorkspaceID, i.Email, i.Role, i.TokenHash, i.InvitedBy, i.CreatedAt, i.ExpiresAt, i.AcceptedAt, nilIfEmpty(i.AcceptedBy), i.RevokedAt)
		})
	case *dump.Key:
		return l.copyRows(ctx, src, "keys", []string{"id", "seq", "workspace_id", "created_at", "expires_at", "revoked_at", "grace_ends_at", "creator_type", "creator_id", "keep_when_creator_disabled", "name", "scope", "hash", "start", "replaced_by", "end_recorded", "resources"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			k := r.(*dump.Key)
			if k.RequestCount != 0 || k.LastUsedAt != nil {
				l.usage = append(l.usage, []any{k.ID, k.RequestCount, k.LastUsedAt})
			}
			return one(k.ID, int64(k.Seq), k.WorkspaceID, k.CreatedAt, k.ExpiresAt, k.RevokedAt, k.GraceEndsAt, k.CreatorType, k.CreatorID, k.Keep, k.Name, k.Scope, k.Hash, k.Start, nilIfEmpty(k.ReplacedBy), k.EndRecorded, nilIfNone(k.Resources))
		})
	case *dump.Campaign:
		return l.copyRows(ctx, src, "campaigns", []string{"id", "seq", "workspace_id", "name", "status", "utm_source", "utm_medium", "utm_campaign", "created_at", "updated_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			c := r.(*dump.Campaign)
			l.campaigns[c.ID] = true
			return one(c.ID, int64(c.Seq), c.WorkspaceID, c.Name, c.Status, c.UTMSource, c.UTMMedium, c.UTMCampaign, c.CreatedAt, c.UpdatedAt)
		})
	case *dump.Domain:
		return l.copyRows(ctx, src, "domains", []string{"id", "seq", "workspace_id", "hostname", "verified", "verified_at", "token", "root_redirect_url", "not_found_url", "created_at", "updated_at", "aasa", "asset_links"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			d := r.(*dump.Domain)
			return one(d.ID, int64(d.Seq), d.WorkspaceID, d.Hostname, d.Verified, d.VerifiedAt, d.Token, d.RootRedirectURL, d.NotFoundURL, d.CreatedAt, d.UpdatedAt, d.AASA, d.AssetLinks)
		})
	case *dump.Link:
		return l.copyRows(ctx, src, "links", []string{"id", "seq", "workspace_id", "domain", "alias", "destination_url", "tags", "utm_source", "utm_medium", "utm_campaign", "campaign_id", "redirect_code", "clicks", "created_at", "updated_at", "password_hash", "rules", "variants", "og", "expires_at", "max_clicks", "expired_url", "archived", "title", "search_text", "forward", "external_id", "ios_url", "android_url", "crawlable", "interstitial", "note"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			d := r.(*dump.Link)
			l.links, l.linksSorted = append(l.links, d.Seq), false
			if d.MaxClicks > 0 && d.ClicksReserved > 0 {
				l.reservations = append(l.reservations, []any{d.ID, d.ClicksReserved})
			}
			ln := &link.Link{ID: d.ID, Alias: d.Alias, DestinationURL: d.DestinationURL, Tags: d.Tags, Rules: d.Rules, Variants: d.Variants, OG: d.OG,
				ForwardPath: d.ForwardPath, ForwardQuery: d.ForwardQuery, PublicStats: d.PublicStats, EscapeInApp: d.EscapeInApp, Retargeting: d.Retargeting,
				LinkLimits: link.LinkLimits{Note: d.Note}}
			rules, variants, og, err := controls(ln)
			if err != nil {
				return nil, err
			}
			tags := d.Tags
			if tags == nil {
				tags = []string{}
			}
			return one(d.ID, int64(d.Seq), d.WorkspaceID, d.Domain, d.Alias, d.DestinationURL, tags, d.UTMSource, d.UTMMedium, d.UTMCampaign, d.CampaignID,
				d.RedirectCode, d.Clicks, d.CreatedAt, d.UpdatedAt, d.PasswordHash, jsonb(rules), jsonb(variants), jsonb(og), d.ExpiresAt, d.MaxClicks, d.ExpiredURL, d.Archived, d.Title, searchText(ln), forwardBits(ln), nullIfEmpty(d.ExternalID), d.IOSURL, d.AndroidURL, d.Crawlable, interstitialBits(ln), d.Note)
		})
	case *dump.AliasHold:
		return l.copyRows(ctx, src, "link_alias_holds", []string{"domain", "alias", "workspace_id", "until"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			h := r.(*dump.AliasHold)
			return one(h.Domain, h.Alias, h.WorkspaceID, h.Until)
		})
	case *dump.Import:
		return l.copyRows(ctx, src, "imports", []string{"workspace_id", "source", "source_key", "link_id"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			i := r.(*dump.Import)
			return one(i.WorkspaceID, i.Source, i.SourceKey, i.LinkID)
		})
	case *dump.QRCode:
		return l.copyRows(ctx, src, "qr_codes", []string{"id", "seq", "workspace_id", "link_id", "name", "format", "size", "margin", "level", "foreground", "background", "created_at", "updated_at", "logo", "logo_digest"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			q := r.(*dump.QRCode)
			var logo []byte // NULL for none
			if len(q.Logo) > 0 {
				logo = q.Logo
			}
			return one(q.ID, int64(q.Seq), q.WorkspaceID, q.LinkID, q.Name, q.Format, q.Size, q.Margin, q.Level, q.Foreground, q.Background, q.CreatedAt, q.UpdatedAt, logo, link.LogoDigest(q.Logo))
		})
	case *dump.Tag:
		return l.copyRows(ctx, src, "tags", []string{"workspace_id", "name", "color", "description", "updated_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			t := r.(*dump.Tag)
			return one(t.WorkspaceID, t.Name, t.Color, t.Description, t.UpdatedAt)
		})
	case *dump.UTMTemplate:
		return l.copyRows(ctx, src, "utm_templates", []string{"id", "seq", "workspace_id", "name", "utm_source", "utm_medium", "utm_campaign", "created_at", "updated_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			t := r.(*dump.UTMTemplate)
			return one(t.ID, int64(t.Seq), t.WorkspaceID, t.Name, t.UTMSource, t.UTMMedium, t.UTMCampaign, t.CreatedAt, t.UpdatedAt)
		})
	case *dump.AbuseReport:
		return l.copyRows(ctx, src, "abuse_reports", []string{"id", "seq", "workspace_id", "link_id", "domain", "alias", "destination", "reason", "details", "contact", "count", "status", "created_at", "updated_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			a := r.(*dump.AbuseReport)
			return one(a.ID, int64(a.Seq), a.WorkspaceID, a.LinkID, a.Domain, a.Alias, a.Destination, a.Reason, a.Details, a.Contact, a.Count, a.Status, a.CreatedAt, a.UpdatedAt)
		})
	case *dump.Webhook:
		return l.copyRows(ctx, src, "webhooks", []string{"id", "seq", "workspace_id", "url", "events", "enabled", "description", "disabled_reason", "creator_type", "creator_id", "created_at", "updated_at", "secret", "previous_secret", "previous_secret_expires_at", "failures", "deleting"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			w := r.(*dump.Webhook)
			events := w.Events
			if events == nil {
				events = []string{}
			}
			return one(w.ID, int64(w.Seq), w.WorkspaceID, w.URL, events, w.Enabled, w.Description, w.DisabledReason, w.CreatorType, w.CreatorID, w.CreatedAt, w.UpdatedAt, w.Secret, w.PreviousSecret, w.PreviousSecretExpiresAt, w.Failures, w.Deleting)
		})
	case *dump.Event:
		return l.copyRows(ctx, src, "events", []string{"seq", "id", "workspace_id", "type", "created_at", "data"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			e := r.(*dump.Event)
			return one(int64(e.Seq), e.ID, e.WorkspaceID, e.Type, e.CreatedAt, e.Data)
		})
	case *dump.Delivery:
		return l.copyRows(ctx, src, "deliveries", []string{"seq", "id", "webhook_id", "workspace_id", "event_id", "event_type", "payload", "status", "attempts", "response_code", "duration_ns", "last_error", "next_attempt_at", "queue", "queued_at", "created_at", "updated_at"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			d := r.(*dump.Delivery)
			var queue any
			if d.Queue != 0 {
				queue = int64(d.Queue)
			}
			payload := d.Payload
			if payload == nil {
				payload = []byte{}
			}
			return one(int64(d.Seq), d.ID, d.WebhookID, d.WorkspaceID, d.EventID, d.EventType, payload, d.Status, d.Attempts, d.ResponseCode, int64(d.Duration), d.LastError, d.NextAttemptAt, queue, d.QueuedAt, d.CreatedAt, d.UpdatedAt)
		})
	case *dump.AuditEntry:
		return l.copyRows(ctx, src, "audit_entries", []string{"seq", "id", "at", "workspace_ids", "actor_type", "actor_id", "actor_name", "action", "target_type", "target_id", "address", "changes"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			a := r.(*dump.AuditEntry)
			var changes any
			if len(a.Changes) > 0 {
				b, err := json.Marshal(a.Changes)
				if err != nil {
					return nil, err
				}
				changes = string(b)
			}
			ws := a.WorkspaceIDs
			if ws == nil {
				ws = []string{}
			}
			return one(int64(a.Seq), a.ID, a.At, ws, a.ActorType, a.ActorID, a.ActorName, a.Action, a.TargetType, a.TargetID, a.Address, changes)
		})
	case *dump.Salt:
		return l.copyRows(ctx, src, "click_salts", []string{"day", "salt"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			s := r.(*dump.Salt)
			return one(s.Day, s.Salt)
		})
	case *dump.Aggregate:
		daily := r.Daily
		table := hourSums.name
		if daily {
			table = daySums.name
		}
		take := func(r dump.Record) bool {
			a, ok := r.(*dump.Aggregate)
			return ok && a.Daily == daily
		}
		return l.copyRows(ctx, src, table, clickColumns[table], take, func(r dump.Record) ([][]any, error) {
			if !l.scopeExists(r.(*dump.Aggregate).Scope) {
				l.drop(table)
				return nil, nil
			}
			return aggregateRows(r)
		})
	case *dump.Visitor:
		return l.copyRows(ctx, src, "click_visitors", clickColumns["click_visitors"], ofKind(kind), func(r dump.Record) ([][]any, error) {
			v := r.(*dump.Visitor)
			if !l.scopeExists(v.Scope) {
				l.drop("click_visitors")
				return nil, nil
			}
			return one(scopeKey(v.Scope), v.Day, int64(v.Visitor), v.Bot, v.Scope.WorkspaceID, nilIfEmpty(v.Scope.CampaignID), nilIfEmpty(v.Scope.LinkID))
		})
	case *dump.Click:
		return l.copyRows(ctx, src, "clicks", clickColumns["clicks"], ofKind(kind), func(r dump.Record) ([][]any, error) {
			c := r.(*dump.Click)
			if !l.workspaces[c.WorkspaceID] || !l.linkExists(c.LinkID) {
				l.drop("clicks")
				return nil, nil
			}
			return one(c.WorkspaceID, c.LinkID, c.CampaignID, c.At.UnixNano(), c.Referrer, c.Country, c.Device, c.Browser, c.OS, c.Bot, int64(c.Visitor), int16(c.Variant))
		})
	case *dump.WaitingClick:
		return l.copyRows(ctx, src, "click_backlog", []string{"link_id", "click"}, ofKind(kind), func(r dump.Record) ([][]any, error) {
			w := r.(*dump.WaitingClick)
			p, ok := parseClick(l.ids, &w.Click)
			if !ok {
				l.report.Dropped["waiting clicks"]++
				return nil, nil
			}
			b, err := json.Marshal(&p)
			if err != nil {
				return nil, err
			}
			l.backlogClicks++
			l.backlogBytes += int64(len(b))
			return one(p.Link, b)
		})
	}
	return fmt.Errorf("a record of an unknown kind %q", kind)
}

// jsonb is a jsonb value for COPY: the JSON text, or NULL.
func jsonb(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func validSequence(name string) bool {
	for _, s := range idSequences {
		if s == name {
			return true
		}
	}
	return false
}

// aggregateRows is the row of one scope's period, its top lists in the
// order of their values.
func aggregateRows(r dump.Record) ([][]any, error) {
	a := r.(*dump.Aggregate)
	var tops [numDims][]topEntry
	for d, entries := range a.Dims {
		list := make([]topEntry, len(entries))
		for i, e := range entries {
			list[i] = topEntry{value: e.Value, clicks: e.Clicks, bots: e.Bots, inherited: e.Inherited}
		}
		slices.SortFunc(list, func(x, y topEntry) int { return cmp.Compare(x.value, y.value) })
		tops[d+1] = list
	}
	var ws any
	if a.Scope.LinkID == "" && a.Scope.CampaignID == "" {
		ws = a.Scope.WorkspaceID
	}
	scope, campaign, lnk := scopeKey(a.Scope), nilIfEmpty(a.Scope.CampaignID), nilIfEmpty(a.Scope.LinkID)
	if a.Daily {
		return one(scope, a.Period, a.Clicks, a.Bots, a.Visitors, a.BotVisitors, encodeTops(&tops), ws, campaign, lnk)
	}
	return one(scope, a.Period, a.Clicks, a.Bots, encodeTops(&tops), ws, campaign, lnk)
}

// finish makes the deferred indexes again, writes the key usage and the
// counts of limited links' clicks, and sets the counters the services
// keep beside the rows.
func (l *loader) finish(ctx context.Context) error {
	if err := l.restoreIndexes(ctx); err != nil {
		return err
	}
	if len(l.usage) > 0 {
		if _, err := l.tx.CopyFrom(ctx, pgx.Identifier{"key_usage"}, []string{"key_id", "request_count", "last_used_at"}, pgx.CopyFromRows(l.usage)); err != nil {
			return fmt.Errorf("write key usage: %w", err)
		}
	}
	if len(l.reservations) > 0 {
		if _, err := l.tx.CopyFrom(ctx, pgx.Identifier{"click_reservations"}, []string{"link_id", "used"}, pgx.CopyFromRows(l.reservations)); err != nil {
			return fmt.Errorf("write the click reservations: %w", err)
		}
	}
	steps := []struct{ sql, what string }{
		{`UPDATE outbox_depth SET pending = CASE WHEN slot = 0 THEN (SELECT count(*) FROM deliveries WHERE queue IS NOT NULL) ELSE 0 END`, "outbox depth"},
		{`SELECT setval('deliveries_queue_seq', greatest((SELECT max(queue) FROM deliveries), 1), (SELECT max(queue) FROM deliveries) IS NOT NULL)`, "delivery queue"},
	}
	for _, s := range steps {
		if _, err := l.tx.Exec(ctx, s.sql); err != nil {
			return fmt.Errorf("set %s: %w", s.what, err)
		}
	}
	if _, err := l.tx.Exec(ctx, `UPDATE click_backlog_size SET clicks = $1, bytes = $2`, l.backlogClicks, l.backlogBytes); err != nil {
		return fmt.Errorf("set backlog size: %w", err)
	}
	return nil
}
