package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/linkbolt/linkbolt/internal/dump"
)

// Dump emits every record of the database (`linkbolt copy`), read in one
// REPEATABLE READ read-only transaction: a consistent snapshot, even while
// servers write. Rows are read as they stream in, never all at once.
func (db *DB) Dump(ctx context.Context, emit dump.Emit) error {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("postgres %s: %s", db.url, redactErr(err, db.url))
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	for _, step := range dumpSteps {
		if err := step(ctx, tx, emit); err != nil {
			return err
		}
	}
	return nil
}

// dumpSteps emit the kinds in the order of dump.Kinds.
var dumpSteps = []func(context.Context, pgx.Tx, dump.Emit) error{
	dumpSettings, dumpIDState, dumpCerts, dumpBlocklist, dumpUsers, dumpRevokedTokens, dumpPasswordResets,
	dumpWorkspaces, dumpMembers, dumpFormerMembers, dumpInvitations, dumpKeys, dumpCampaigns, dumpDomains,
	dumpLinks, dumpAliasHolds, dumpImports, dumpQRCodes, dumpUTMTemplates, dumpTags, dumpAbuseReports, dumpWebhooks, dumpEvents, dumpDeliveries,
	dumpAudit, dumpSalts, dumpAggregates, dumpVisitors, dumpClicks, dumpWaitingClicks,
}

// eachRow runs sql and emits what scan makes of each row.
func eachRow(ctx context.Context, tx pgx.Tx, emit dump.Emit, what, sql string, scan func(pgx.Rows) (dump.Record, error)) error {
	rows, err := tx.Query(ctx, sql)
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return fmt.Errorf("read %s: %w", what, err)
		}
		if err := emit(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	return nil
}

// utc is t in UTC; utcp the same of a time that may be missing.
func utc(t time.Time) time.Time { return t.UTC() }

func utcp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func dumpSettings(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "settings", `SELECT name, value FROM settings ORDER BY name`, func(r pgx.Rows) (dump.Record, error) {
		var s dump.Setting
		return &s, r.Scan(&s.Name, &s.Value)
	})
}

// idSequences are the sequences of wire IDs, by prefix.
var idSequences = []string{"usr", "ws", "inv", "aud", "key", "wh", "evt", "dlv", "cmp", "dom", "lnk", "qr", "utm", "rpt"}

func dumpIDState(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	for _, name := range idSequences {
		var last int64
		var called bool
		if err := tx.QueryRow(ctx, `SELECT last_value, is_called FROM ids_`+name).Scan(&last, &called); err != nil {
			return fmt.Errorf("read sequence ids_%s: %w", name, err)
		}
		if !called {
			last = 0
		}
		if err := emit(&dump.IDState{Prefix: name + "_", Last: uint64(last)}); err != nil {
			return err
		}
	}
	return nil
}

func dumpCerts(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "certificates", `SELECT name, data FROM certs ORDER BY name`, func(r pgx.Rows) (dump.Record, error) {
		var c dump.Cert
		return &c, r.Scan(&c.Name, &c.Data)
	})
}

func dumpBlocklist(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "blocklist", `SELECT entry, created_at, created_by FROM blocklist ORDER BY entry`, func(r pgx.Rows) (dump.Record, error) {
		var b dump.BlockEntry
		err := r.Scan(&b.Entry, &b.CreatedAt, &b.CreatedBy)
		b.CreatedAt = utc(b.CreatedAt)
		return &b, err
	})
}

func dumpUsers(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "users", `SELECT id, seq, email, password_hash, admin, name, disabled, token_generation, created_at
		FROM users ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var u dump.User
		err := r.Scan(&u.ID, &u.Seq, &u.Email, &u.PasswordHash, &u.Admin, &u.Name, &u.Disabled, &u.TokenGeneration, &u.CreatedAt)
		u.CreatedAt = utc(u.CreatedAt)
		return &u, err
	})
}

func dumpRevokedTokens(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "revoked tokens", `SELECT id, expires_at FROM revoked_tokens ORDER BY id`, func(r pgx.Rows) (dump.Record, error) {
		var t dump.RevokedToken
		err := r.Scan(&t.ID, &t.ExpiresAt)
		t.ExpiresAt = utc(t.ExpiresAt)
		return &t, err
	})
}

func dumpPasswordResets(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "password resets", `SELECT token_hash, user_id, expires_at FROM password_resets ORDER BY token_hash`, func(r pgx.Rows) (dump.Record, error) {
		var p dump.PasswordReset
		err := r.Scan(&p.TokenHash, &p.UserID, &p.ExpiresAt)
		p.ExpiresAt = utc(p.ExpiresAt)
		return &p, err
	})
}

func dumpWorkspaces(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "workspaces", `SELECT id, seq, name, plan, created_at, updated_at, data_since, link_forward, destination_checks, pixel_meta, pixel_google, pixel_linkedin FROM workspaces ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var w dump.Workspace
		var forward int16
		err := r.Scan(&w.ID, &w.Seq, &w.Name, &w.Plan, &w.CreatedAt, &w.UpdatedAt, &w.DataSince, &forward, &w.DestinationChecks, &w.Pixels.Meta, &w.Pixels.Google, &w.Pixels.LinkedIn)
		w.ForwardPath, w.ForwardQuery = forward&forwardPath != 0, forward&forwardQuery != 0
		w.CreatedAt, w.UpdatedAt, w.DataSince = utc(w.CreatedAt), utc(w.UpdatedAt), utcp(w.DataSince)
		return &w, err
	})
}

func dumpMembers(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "members", `SELECT workspace_id, user_id, role, created_at FROM members ORDER BY workspace_id, user_id`, func(r pgx.Rows) (dump.Record, error) {
		var m dump.Member
		err := r.Scan(&m.WorkspaceID, &m.UserID, &m.Role, &m.CreatedAt)
		m.CreatedAt = utc(m.CreatedAt)
		return &m, err
	})
}

func dumpFormerMembers(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "former members", `SELECT workspace_id, user_id, removed_at FROM former_members ORDER BY workspace_id, user_id`, func(r pgx.Rows) (dump.Record, error) {
		var m dump.FormerMember
		err := r.Scan(&m.WorkspaceID, &m.UserID, &m.RemovedAt)
		m.RemovedAt = utc(m.RemovedAt)
		return &m, err
	})
}

func dumpInvitations(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "invitations", `SELECT id, seq, workspace_id, email, role, token_hash, invited_by, created_at, expires_at,
			accepted_at, coalesce(accepted_by, ''), revoked_at
		FROM invitations ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var i dump.Invitation
		err := r.Scan(&i.ID, &i.Seq, &i.WorkspaceID, &i.Email, &i.Role, &i.TokenHash, &i.InvitedBy, &i.CreatedAt, &i.ExpiresAt,
			&i.AcceptedAt, &i.AcceptedBy, &i.RevokedAt)
		i.CreatedAt, i.ExpiresAt, i.AcceptedAt, i.RevokedAt = utc(i.CreatedAt), utc(i.ExpiresAt), utcp(i.AcceptedAt), utcp(i.RevokedAt)
		return &i, err
	})
}

func dumpKeys(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "keys", `SELECT k.id, k.seq, k.workspace_id, k.name, k.scope, k.hash, k.start, k.created_at,
			k.expires_at, k.revoked_at, k.grace_ends_at, coalesce(k.replaced_by, ''), k.creator_type, k.creator_id,
			k.keep_when_creator_disabled, k.end_recorded, coalesce(u.request_count, 0), u.last_used_at, k.resources
		FROM keys k LEFT JOIN key_usage u ON u.key_id = k.id ORDER BY k.seq`, func(r pgx.Rows) (dump.Record, error) {
		var k dump.Key
		err := r.Scan(&k.ID, &k.Seq, &k.WorkspaceID, &k.Name, &k.Scope, &k.Hash, &k.Start, &k.CreatedAt,
			&k.ExpiresAt, &k.RevokedAt, &k.GraceEndsAt, &k.ReplacedBy, &k.CreatorType, &k.CreatorID,
			&k.Keep, &k.EndRecorded, &k.RequestCount, &k.LastUsedAt, &k.Resources)
		k.CreatedAt, k.ExpiresAt, k.RevokedAt, k.GraceEndsAt, k.LastUsedAt = utc(k.CreatedAt), utcp(k.ExpiresAt), utcp(k.RevokedAt), utcp(k.GraceEndsAt), utcp(k.LastUsedAt)
		return &k, err
	})
}

func dumpCampaigns(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "campaigns", `SELECT id, seq, workspace_id, name, status, utm_source, utm_medium, utm_campaign, created_at, updated_at
		FROM campaigns ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var c dump.Campaign
		err := r.Scan(&c.ID, &c.Seq, &c.WorkspaceID, &c.Name, &c.Status, &c.UTMSource, &c.UTMMedium, &c.UTMCampaign, &c.CreatedAt, &c.UpdatedAt)
		c.CreatedAt, c.UpdatedAt = utc(c.CreatedAt), utc(c.UpdatedAt)
		return &c, err
	})
}

func dumpDomains(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "domains", `SELECT id, seq, workspace_id, hostname, verified, verified_at, token, root_redirect_url, not_found_url, created_at, updated_at,
			aasa, asset_links
		FROM domains ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var d dump.Domain
		err := r.Scan(&d.ID, &d.Seq, &d.WorkspaceID, &d.Hostname, &d.Verified, &d.VerifiedAt, &d.Token, &d.RootRedirectURL, &d.NotFoundURL, &d.CreatedAt, &d.UpdatedAt,
			&d.AASA, &d.AssetLinks)
		d.CreatedAt, d.UpdatedAt, d.VerifiedAt = utc(d.CreatedAt), utc(d.UpdatedAt), utcp(d.VerifiedAt)
		return &d, err
	})
}

func dumpLinks(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "links", `SELECT `+linkColumns+`, l.seq, coalesce(r.used, 0) FROM links l
		LEFT JOIN click_reservations r ON r.link_id = l.id ORDER BY l.seq`, func(r pgx.Rows) (dump.Record, error) {
		var seq uint64
		var reserved int64
		l, err := scanLink(r, &seq, &reserved)
		if err != nil {
			return nil, err
		}
		return &dump.Link{
			ID: l.ID, Seq: seq, WorkspaceID: l.WorkspaceID, Domain: l.Domain, Alias: l.Alias, DestinationURL: l.DestinationURL,
			Tags: l.Tags, UTMSource: l.UTMSource, UTMMedium: l.UTMMedium, UTMCampaign: l.UTMCampaign, CampaignID: l.CampaignID,
			RedirectCode: l.RedirectCode, Clicks: l.Clicks, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt,
			PasswordHash: l.PasswordHash, Rules: l.Rules, Variants: l.Variants, OG: l.OG,
			ExpiresAt: l.ExpiresAt, MaxClicks: l.MaxClicks, ExpiredURL: l.ExpiredURL, Archived: l.Archived, Title: l.Title, Note: l.Note,
			ForwardPath: l.ForwardPath, ForwardQuery: l.ForwardQuery, ExternalID: l.ExternalID, IOSURL: l.IOSURL, AndroidURL: l.AndroidURL, Crawlable: l.Crawlable, PublicStats: l.PublicStats, EscapeInApp: l.EscapeInApp, Retargeting: l.Retargeting, ClicksReserved: reserved,
		}, nil
	})
}

func dumpAliasHolds(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "alias holds", `SELECT domain, alias, workspace_id, until FROM link_alias_holds ORDER BY domain, alias`, func(r pgx.Rows) (dump.Record, error) {
		var h dump.AliasHold
		err := r.Scan(&h.Domain, &h.Alias, &h.WorkspaceID, &h.Until)
		h.Until = utc(h.Until)
		return &h, err
	})
}

func dumpImports(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "imports", `SELECT workspace_id, source, source_key, link_id FROM imports ORDER BY workspace_id, source, source_key`, func(r pgx.Rows) (dump.Record, error) {
		var i dump.Import
		return &i, r.Scan(&i.WorkspaceID, &i.Source, &i.SourceKey, &i.LinkID)
	})
}

func dumpQRCodes(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "QR codes", `SELECT id, seq, workspace_id, link_id, name, format, size, margin, level, foreground, background, created_at, updated_at, logo
		FROM qr_codes ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var q dump.QRCode
		err := r.Scan(&q.ID, &q.Seq, &q.WorkspaceID, &q.LinkID, &q.Name, &q.Format, &q.Size, &q.Margin, &q.Level, &q.Foreground, &q.Background, &q.CreatedAt, &q.UpdatedAt, &q.Logo)
		q.CreatedAt, q.UpdatedAt = utc(q.CreatedAt), utc(q.UpdatedAt)
		return &q, err
	})
}

func dumpUTMTemplates(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "UTM templates", `SELECT id, seq, workspace_id, name, utm_source, utm_medium, utm_campaign, created_at, updated_at
		FROM utm_templates ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var t dump.UTMTemplate
		err := r.Scan(&t.ID, &t.Seq, &t.WorkspaceID, &t.Name, &t.UTMSource, &t.UTMMedium, &t.UTMCampaign, &t.CreatedAt, &t.UpdatedAt)
		t.CreatedAt, t.UpdatedAt = utc(t.CreatedAt), utc(t.UpdatedAt)
		return &t, err
	})
}

func dumpTags(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "tags", `SELECT workspace_id, name, color, description, updated_at
		FROM tags ORDER BY workspace_id, name`, func(r pgx.Rows) (dump.Record, error) {
		var t dump.Tag
		err := r.Scan(&t.WorkspaceID, &t.Name, &t.Color, &t.Description, &t.UpdatedAt)
		t.UpdatedAt = utc(t.UpdatedAt)
		return &t, err
	})
}

func dumpAbuseReports(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "abuse reports", `SELECT id, seq, workspace_id, link_id, domain, alias, destination, reason, details,
			contact, count, status, created_at, updated_at
		FROM abuse_reports ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var a dump.AbuseReport
		err := r.Scan(&a.ID, &a.Seq, &a.WorkspaceID, &a.LinkID, &a.Domain, &a.Alias, &a.Destination, &a.Reason, &a.Details,
			&a.Contact, &a.Count, &a.Status, &a.CreatedAt, &a.UpdatedAt)
		a.CreatedAt, a.UpdatedAt = utc(a.CreatedAt), utc(a.UpdatedAt)
		return &a, err
	})
}

func dumpWebhooks(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "webhooks", `SELECT id, seq, workspace_id, url, events, enabled, description, secret, previous_secret,
			previous_secret_expires_at, disabled_reason, failures, creator_type, creator_id, deleting, created_at, updated_at
		FROM webhooks ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var w dump.Webhook
		err := r.Scan(&w.ID, &w.Seq, &w.WorkspaceID, &w.URL, &w.Events, &w.Enabled, &w.Description, &w.Secret, &w.PreviousSecret,
			&w.PreviousSecretExpiresAt, &w.DisabledReason, &w.Failures, &w.CreatorType, &w.CreatorID, &w.Deleting, &w.CreatedAt, &w.UpdatedAt)
		w.CreatedAt, w.UpdatedAt, w.PreviousSecretExpiresAt = utc(w.CreatedAt), utc(w.UpdatedAt), utcp(w.PreviousSecretExpiresAt)
		return &w, err
	})
}

func dumpEvents(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "events", `SELECT id, seq, workspace_id, type, created_at, data FROM events ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var e dump.Event
		err := r.Scan(&e.ID, &e.Seq, &e.WorkspaceID, &e.Type, &e.CreatedAt, &e.Data)
		e.CreatedAt = utc(e.CreatedAt)
		return &e, err
	})
}

func dumpDeliveries(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "deliveries", `SELECT id, seq, webhook_id, workspace_id, event_id, event_type, payload, status, attempts,
			response_code, duration_ns, last_error, next_attempt_at, coalesce(queue, 0), queued_at, created_at, updated_at
		FROM deliveries ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var d dump.Delivery
		var ns int64
		err := r.Scan(&d.ID, &d.Seq, &d.WebhookID, &d.WorkspaceID, &d.EventID, &d.EventType, &d.Payload, &d.Status, &d.Attempts,
			&d.ResponseCode, &ns, &d.LastError, &d.NextAttemptAt, &d.Queue, &d.QueuedAt, &d.CreatedAt, &d.UpdatedAt)
		d.Duration = time.Duration(ns)
		d.NextAttemptAt, d.QueuedAt, d.CreatedAt, d.UpdatedAt = utcp(d.NextAttemptAt), utc(d.QueuedAt), utc(d.CreatedAt), utc(d.UpdatedAt)
		return &d, err
	})
}

func dumpAudit(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "audit entries", `SELECT id, seq, at, workspace_ids, actor_type, actor_id, actor_name, action,
			target_type, target_id, address, changes
		FROM audit_entries ORDER BY seq`, func(r pgx.Rows) (dump.Record, error) {
		var a dump.AuditEntry
		var changes []byte
		err := r.Scan(&a.ID, &a.Seq, &a.At, &a.WorkspaceIDs, &a.ActorType, &a.ActorID, &a.ActorName, &a.Action,
			&a.TargetType, &a.TargetID, &a.Address, &changes)
		if err != nil {
			return nil, err
		}
		a.At = utc(a.At)
		if len(a.WorkspaceIDs) == 0 {
			a.WorkspaceIDs = nil
		}
		if changes != nil {
			if err := json.Unmarshal(changes, &a.Changes); err != nil {
				return nil, fmt.Errorf("audit entry %s: %w", a.ID, err)
			}
		}
		return &a, nil
	})
}

func dumpSalts(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "salts", `SELECT day, salt FROM click_salts ORDER BY day`, func(r pgx.Rows) (dump.Record, error) {
		var s dump.Salt
		return &s, r.Scan(&s.Day, &s.Salt)
	})
}

// dumpAggregates emits each scope's period as one record, in primary
// key order.
func dumpAggregates(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	for _, t := range []sumTable{hourSums, daySums} {
		extra := "0, 0"
		if t.daily {
			extra = "s.visitors, s.bot_visitors"
		}
		// A link's or campaign's row names its workspace through its owner.
		rows, err := tx.Query(ctx, `SELECT s.scope, s.`+t.period+`, s.clicks, s.bots, `+extra+`, s.tops,
				coalesce(s.workspace_id, l.workspace_id, c.workspace_id, ''), coalesce(s.campaign_id, ''), coalesce(s.link_id, '')
			FROM `+t.name+` s LEFT JOIN links l ON l.id = s.link_id LEFT JOIN campaigns c ON c.id = s.campaign_id
			ORDER BY s.scope, s.`+t.period)
		if err != nil {
			return fmt.Errorf("read %s: %w", t.name, err)
		}
		var scope, ws, campaign, lnk string
		var tops []byte
		for rows.Next() {
			a := &dump.Aggregate{Daily: t.daily}
			if err := rows.Scan(&scope, &a.Period, &a.Clicks, &a.Bots, &a.Visitors, &a.BotVisitors, &tops, &ws, &campaign, &lnk); err != nil {
				rows.Close()
				return fmt.Errorf("read %s: %w", t.name, err)
			}
			if err := eachTop(tops, func(dim int16, e topEntry) {
				a.Dims[dim-1] = append(a.Dims[dim-1], dump.Entry{Value: e.value, Clicks: e.clicks, Bots: e.bots, Inherited: e.inherited})
			}); err != nil {
				rows.Close()
				return fmt.Errorf("read %s: %s %d: %w", t.name, scope, a.Period, err)
			}
			a.Scope = aggScope(scope, ws, campaign, lnk)
			if err := emit(a); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read %s: %w", t.name, err)
		}
	}
	return nil
}

// aggScope is the scope of an aggregate row.
func aggScope(scope, ws, campaign, lnk string) dump.Scope {
	s := dump.Scope{WorkspaceID: ws}
	switch {
	case strings.HasPrefix(scope, "l:"):
		s.LinkID = lnk
	case strings.HasPrefix(scope, "c:"):
		s.CampaignID = campaign
	}
	return s
}

// scopeKey is the scope column of s.
func scopeKey(s dump.Scope) string {
	switch {
	case s.LinkID != "":
		return "l:" + s.LinkID
	case s.CampaignID != "":
		return "c:" + s.WorkspaceID + "/" + s.CampaignID
	}
	return "w:" + s.WorkspaceID
}

// dumpVisitors emits the visitors by day, workspace and visitor, each
// workspace's row first, as a store that keeps one record per workspace's
// visitor reads them.
func dumpVisitors(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "visitors", `SELECT scope, day, visitor, bot, workspace_id, coalesce(campaign_id, ''), coalesce(link_id, '')
		FROM click_visitors ORDER BY day, workspace_id, visitor, scope DESC`, func(r pgx.Rows) (dump.Record, error) {
		var v dump.Visitor
		var scope, ws, campaign, lnk string
		var visitor int64
		if err := r.Scan(&scope, &v.Day, &visitor, &v.Bot, &ws, &campaign, &lnk); err != nil {
			return nil, err
		}
		v.Visitor, v.Scope = uint64(visitor), aggScope(scope, ws, campaign, lnk)
		return &v, nil
	})
}

func dumpClicks(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "clicks", `SELECT workspace_id, link_id, campaign_id, at_ns, referrer, country, device, browser, os, bot, visitor, variant
		FROM clicks ORDER BY workspace_id, at_ns, id`, func(r pgx.Rows) (dump.Record, error) {
		var c dump.Click
		var ns, visitor int64
		var variant int16
		if err := r.Scan(&c.WorkspaceID, &c.LinkID, &c.CampaignID, &ns, &c.Referrer, &c.Country, &c.Device, &c.Browser, &c.OS, &c.Bot, &visitor, &variant); err != nil {
			return nil, err
		}
		c.At, c.Visitor, c.Variant = time.Unix(0, ns).UTC(), uint64(visitor), int(variant)
		return &c, nil
	})
}

func dumpWaitingClicks(ctx context.Context, tx pgx.Tx, emit dump.Emit) error {
	return eachRow(ctx, tx, emit, "waiting clicks", `SELECT click FROM click_backlog ORDER BY id`, func(r pgx.Rows) (dump.Record, error) {
		var b []byte
		if err := r.Scan(&b); err != nil {
			return nil, err
		}
		var p storedClick
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, err
		}
		w := &dump.WaitingClick{}
		c := &w.Click
		c.WorkspaceID, c.LinkID, c.CampaignID, c.Time = p.WS, p.Link, p.Campaign, time.Unix(0, p.NS).UTC()
		c.Referrer, c.Country, c.Device = p.Vals[dimReferrers], p.Vals[dimCountries], p.Vals[dimDevices]
		c.Browser, c.OS, c.Bot, c.Visitor, c.Variant = p.Vals[dimBrowsers], p.Vals[dimOS], p.Bot, uint64(p.Visitor), uint8(p.Variant)
		if c.Referrer == directReferrer {
			c.Referrer = ""
		}
		return w, nil
	})
}
