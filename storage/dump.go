package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/internal/dump"
	"github.com/linkbolt/linkbolt/link"
)

// Dump emits every record of the data file (`linkbolt copy`), read in one
// read transaction: a consistent snapshot. Records are decoded as the
// cursors walk, never all at once.
func (db *DB) Dump(ctx context.Context, emit dump.Emit) error {
	return db.CatchDamage(func() error {
		return db.db.View(func(tx *bolt.Tx) error {
			d := &dumper{tx: tx, ids: db.ids, emit: emit, ctx: ctx}
			for _, step := range []func() error{
				d.settings, d.idState, d.certs, d.blocklist, d.users, d.revokedTokens, d.passwordResets,
				d.workspaces, d.members, d.formerMembers, d.invitations, d.keys, d.campaigns, d.domains,
				d.links, d.aliasHolds, d.imports, d.qrCodes, d.utmTemplates, d.tags, d.abuseReports, d.webhooks, d.events, d.deliveries,
				d.audit, d.salts, d.aggregates, d.visitors, d.clicks, d.waitingClicks,
			} {
				if err := step(); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

type dumper struct {
	ctx  context.Context
	tx   *bolt.Tx
	ids  *idCodec
	emit dump.Emit
}

// each walks a bucket and emits what rec makes of each key and value
// (nil: nothing).
func (d *dumper) each(bucket []byte, rec func(k, v []byte) (dump.Record, error)) error {
	c := d.tx.Bucket(bucket).Cursor()
	n := 0
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if n++; n%4096 == 0 {
			if err := d.ctx.Err(); err != nil {
				return err
			}
		}
		r, err := rec(k, v)
		if err != nil {
			return fmt.Errorf("read %s %x: %w", bucket, k, err)
		}
		if r == nil {
			continue
		}
		if err := d.emit(r); err != nil {
			return err
		}
	}
	return nil
}

func (d *dumper) id(prefix string, seq uint64) string { return d.ids.formatID(prefix, seq) }

func timePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// dumpSettings are the meta keys a dump carries.
var dumpSettings = [][]byte{metaIDKey, metaIDLegacyMax, metaJWTSecret}

func (d *dumper) settings() error {
	meta := d.tx.Bucket(bucketMeta)
	for _, name := range dumpSettings {
		if v := meta.Get(name); v != nil {
			if err := d.emit(&dump.Setting{Name: string(name), Value: cloneBytes(v)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// seqBuckets names the bucket whose sequence numbers each kind of ID.
var seqBuckets = map[string][]byte{
	link.PrefixUser: bucketUsers, link.PrefixWorkspace: bucketWorkspaces, link.PrefixInvitation: bucketInvitations,
	link.PrefixAudit: bucketAudit, link.PrefixKey: bucketKeys, link.PrefixWebhook: bucketWebhooks,
	link.PrefixEvent: bucketEvents, link.PrefixDelivery: bucketDeliveries, link.PrefixCampaign: bucketCampaigns,
	link.PrefixDomain: bucketDomains, link.PrefixLink: bucketLinks, link.PrefixQRCode: bucketQRCodes,
	link.PrefixUTM: bucketUTMTemplates, link.PrefixReport: bucketReports,
}

var seqPrefixes = []string{link.PrefixUser, link.PrefixWorkspace, link.PrefixInvitation, link.PrefixAudit, link.PrefixKey,
	link.PrefixWebhook, link.PrefixEvent, link.PrefixDelivery, link.PrefixCampaign, link.PrefixDomain, link.PrefixLink, link.PrefixQRCode,
	link.PrefixUTM, link.PrefixReport}

func (d *dumper) idState() error {
	for _, p := range seqPrefixes {
		if err := d.emit(&dump.IDState{Prefix: p, Last: d.tx.Bucket(seqBuckets[p]).Sequence()}); err != nil {
			return err
		}
	}
	return nil
}

func (d *dumper) certs() error {
	return d.each(bucketACME, func(k, v []byte) (dump.Record, error) {
		return &dump.Cert{Name: string(k), Data: cloneBytes(v)}, nil
	})
}

func (d *dumper) blocklist() error {
	return d.each(bucketBlocklist, func(k, v []byte) (dump.Record, error) {
		var r blocklistRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		return &dump.BlockEntry{Entry: string(k), CreatedAt: r.CreatedAt.UTC(), CreatedBy: r.CreatedBy}, nil
	})
}

func (d *dumper) users() error {
	return d.each(bucketUsers, func(k, v []byte) (dump.Record, error) {
		var r userRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		return &dump.User{ID: d.id(prefixUser, seq), Seq: seq, Email: r.Email, PasswordHash: r.PasswordHash, Admin: r.Admin,
			Name: r.Name, Disabled: r.Disabled, TokenGeneration: r.TokenGeneration, CreatedAt: r.CreatedAt.UTC()}, nil
	})
}

func (d *dumper) revokedTokens() error {
	return d.each(bucketTokensRevoked, func(k, v []byte) (dump.Record, error) {
		if len(v) != 8 {
			return nil, fmt.Errorf("%d bytes, want 8", len(v))
		}
		return &dump.RevokedToken{ID: string(k), ExpiresAt: time.Unix(0, int64(btoi(v))).UTC()}, nil
	})
}

func (d *dumper) passwordResets() error {
	return d.each(bucketUsersReset, func(k, v []byte) (dump.Record, error) {
		if len(v) != 16 {
			return nil, fmt.Errorf("%d bytes, want 16", len(v))
		}
		return &dump.PasswordReset{TokenHash: cloneBytes(k), UserID: d.id(prefixUser, btoi(v)),
			ExpiresAt: time.Unix(0, int64(btoi(v[8:]))).UTC()}, nil
	})
}

func (d *dumper) workspaces() error {
	return d.each(bucketWorkspaces, func(k, v []byte) (dump.Record, error) {
		var r workspaceRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		return &dump.Workspace{ID: d.id(prefixWorkspace, seq), Seq: seq, Name: r.Name, Plan: string(r.Plan),
			CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), DataSince: timePtr(r.DataSince),
			ForwardPath: r.ForwardPath, ForwardQuery: r.ForwardQuery, DestinationChecks: r.DestinationChecks, Pixels: r.pixels()}, nil
	})
}

func (d *dumper) members() error {
	return d.each(bucketWorkspaceMembers, func(k, v []byte) (dump.Record, error) {
		var r memberRecord
		if len(k) != 16 {
			return nil, fmt.Errorf("key of %d bytes", len(k))
		}
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		return &dump.Member{WorkspaceID: d.id(prefixWorkspace, btoi(k)), UserID: d.id(prefixUser, btoi(k[8:])),
			Role: string(r.Role), CreatedAt: r.CreatedAt.UTC()}, nil
	})
}

func (d *dumper) formerMembers() error {
	return d.each(bucketWorkspaceFormer, func(k, v []byte) (dump.Record, error) {
		var r formerRecord
		if len(k) != 16 {
			return nil, fmt.Errorf("key of %d bytes", len(k))
		}
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		return &dump.FormerMember{WorkspaceID: d.id(prefixWorkspace, btoi(k)), UserID: d.id(prefixUser, btoi(k[8:])),
			RemovedAt: r.RemovedAt.UTC()}, nil
	})
}

func (d *dumper) invitations() error {
	return d.each(bucketInvitations, func(k, v []byte) (dump.Record, error) {
		var r invitationRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		inv := &dump.Invitation{ID: d.id(prefixInvitation, seq), Seq: seq, WorkspaceID: d.id(prefixWorkspace, r.Workspace),
			Email: r.Email, Role: string(r.Role), TokenHash: r.TokenHash, InvitedBy: d.id(prefixUser, r.InvitedBy),
			CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), AcceptedAt: timePtr(r.AcceptedAt), RevokedAt: timePtr(r.RevokedAt)}
		if r.AcceptedBy != 0 {
			inv.AcceptedBy = d.id(prefixUser, r.AcceptedBy)
		}
		return inv, nil
	})
}

func (d *dumper) keys() error {
	live, usage := d.tx.Bucket(bucketKeysLive), d.tx.Bucket(bucketKeysUsage)
	return d.each(bucketKeys, func(k, v []byte) (dump.Record, error) {
		var r keyRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		u, err := decodeUsage(usage.Get(k))
		if err != nil {
			return nil, err
		}
		key := &dump.Key{ID: d.id(prefixKey, seq), Seq: seq, WorkspaceID: d.id(prefixWorkspace, r.Workspace), Name: r.Name,
			Scope: string(r.Scope), Hash: r.Hash, Start: r.Start, CreatedAt: r.CreatedAt.UTC(), ExpiresAt: timePtr(r.ExpiresAt),
			RevokedAt: timePtr(r.RevokedAt), GraceEndsAt: timePtr(r.GraceEndsAt), CreatorType: r.CreatorType, CreatorID: r.CreatorID,
			Keep: r.Keep, RequestCount: u.count, Resources: r.Resources}
		if r.ReplacedBy != 0 {
			key.ReplacedBy = d.id(prefixKey, r.ReplacedBy)
		}
		if !u.last.IsZero() {
			key.LastUsedAt = timePtr(&u.last)
		}
		// A key off a built live index, not revoked, has had its end
		// recorded in the audit log.
		ws := itob(r.Workspace)
		key.EndRecorded = r.RevokedAt == nil && live.Get(ws) != nil && live.Get(concat(ws, k)) == nil
		return key, nil
	})
}

func (d *dumper) campaigns() error {
	return d.each(bucketCampaigns, func(k, v []byte) (dump.Record, error) {
		var r campaignRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		return &dump.Campaign{ID: d.id(prefixCampaign, seq), Seq: seq, WorkspaceID: d.id(prefixWorkspace, r.Workspace),
			Name: r.Name, Status: r.Status, UTMSource: r.UTMSource, UTMMedium: r.UTMMedium, UTMCampaign: r.UTMCampaign,
			CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}, nil
	})
}

func (d *dumper) domains() error {
	return d.each(bucketDomains, func(k, v []byte) (dump.Record, error) {
		var r domainRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		return &dump.Domain{ID: d.id(prefixDomain, seq), Seq: seq, WorkspaceID: d.id(prefixWorkspace, r.Workspace),
			Hostname: r.Hostname, Verified: r.Verified, VerifiedAt: timePtr(r.VerifiedAt), Token: r.Token,
			RootRedirectURL: r.RootRedirectURL, NotFoundURL: r.NotFoundURL, AASA: r.AASA, AssetLinks: r.AssetLinks,
			CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}, nil
	})
}

func (d *dumper) links() error {
	return d.each(bucketLinks, func(k, v []byte) (dump.Record, error) {
		var r linkRecord
		if err := decodeLink(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		clicks, err := linkClicks(d.tx, seq)
		if err != nil {
			return nil, err
		}
		l := r.link(d.ids, seq, clicks)
		return &dump.Link{ID: l.ID, Seq: seq, WorkspaceID: l.WorkspaceID, Domain: l.Domain, Alias: l.Alias,
			DestinationURL: l.DestinationURL, Tags: l.Tags, UTMSource: l.UTMSource, UTMMedium: l.UTMMedium, UTMCampaign: l.UTMCampaign,
			CampaignID: l.CampaignID, RedirectCode: l.RedirectCode, Clicks: l.Clicks, CreatedAt: l.CreatedAt.UTC(), UpdatedAt: l.UpdatedAt.UTC(),
			PasswordHash: l.PasswordHash, Rules: l.Rules, Variants: l.Variants, OG: l.OG, ExpiresAt: timePtr(l.ExpiresAt),
			MaxClicks: l.MaxClicks, ExpiredURL: l.ExpiredURL, Archived: l.Archived, Title: l.Title, Note: l.Note,
			ForwardPath: l.ForwardPath, ForwardQuery: l.ForwardQuery, ExternalID: l.ExternalID,
			IOSURL: l.IOSURL, AndroidURL: l.AndroidURL, Crawlable: l.Crawlable, PublicStats: l.PublicStats,
			EscapeInApp: l.EscapeInApp, Retargeting: l.Retargeting}, nil
	})
}

// splitAliasKey splits a links.alias key: domain + 0 + alias.
func splitAliasKey(k []byte) (domain, alias string, ok bool) {
	i := bytes.IndexByte(k, 0)
	if i < 0 {
		return "", "", false
	}
	return string(k[:i]), string(k[i+1:]), true
}

func (d *dumper) aliasHolds() error {
	return d.each(bucketLinksAliasHold, func(k, v []byte) (dump.Record, error) {
		domain, alias, ok := splitAliasKey(k)
		if !ok || len(v) != 16 {
			return nil, errBadRecord
		}
		return &dump.AliasHold{Domain: domain, Alias: alias, WorkspaceID: d.id(prefixWorkspace, btoi(v)),
			Until: time.Unix(0, int64(btoi(v[8:]))).UTC()}, nil
	})
}

var errBadRecord = errors.New("malformed record")

func (d *dumper) imports() error {
	return d.each(bucketImports, func(k, v []byte) (dump.Record, error) {
		if len(k) < 9 || len(v) != 8 {
			return nil, errBadRecord
		}
		rest := k[8:]
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return nil, errBadRecord
		}
		return &dump.Import{WorkspaceID: d.id(prefixWorkspace, btoi(k)), Source: string(rest[:i]), SourceKey: string(rest[i+1:]),
			LinkID: d.id(prefixLink, btoi(v))}, nil
	})
}

func (d *dumper) qrCodes() error {
	return d.each(bucketQRCodes, func(k, v []byte) (dump.Record, error) {
		var r qrCodeRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		var logo []byte
		if b := d.tx.Bucket(bucketQRCodesLogo); b != nil && r.LogoDigest != "" {
			logo = bytes.Clone(b.Get(k))
		}
		return &dump.QRCode{ID: d.id(prefixQRCode, seq), Seq: seq, WorkspaceID: d.id(prefixWorkspace, r.Workspace),
			LinkID: d.id(prefixLink, r.Link), Name: r.Name, Format: r.Format, Size: r.Size, Margin: r.Margin, Level: r.Level,
			Foreground: r.Foreground, Background: r.Background, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Logo: logo}, nil
	})
}

func (d *dumper) utmTemplates() error {
	return d.each(bucketUTMTemplates, func(k, v []byte) (dump.Record, error) {
		var r utmTemplateRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		return &dump.UTMTemplate{ID: d.id(link.PrefixUTM, seq), Seq: seq, WorkspaceID: d.id(prefixWorkspace, r.Workspace),
			Name: r.Name, UTMSource: r.UTMSource, UTMMedium: r.UTMMedium, UTMCampaign: r.UTMCampaign,
			CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}, nil
	})
}

func (d *dumper) tags() error {
	return d.each(bucketTags, func(k, v []byte) (dump.Record, error) {
		var r tagRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		if len(k) < 8 {
			return nil, fmt.Errorf("tag key of %d bytes", len(k))
		}
		return &dump.Tag{WorkspaceID: d.id(prefixWorkspace, btoi(k[:8])), Name: string(k[8:]), Color: r.Color,
			Description: r.Description, UpdatedAt: r.UpdatedAt.UTC()}, nil
	})
}

func (d *dumper) abuseReports() error {
	return d.each(bucketReports, func(k, v []byte) (dump.Record, error) {
		var r reportRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		return &dump.AbuseReport{ID: d.id(link.PrefixReport, seq), Seq: seq, WorkspaceID: d.id(prefixWorkspace, r.Workspace),
			LinkID: d.id(prefixLink, r.Link), Domain: r.Domain, Alias: r.Alias, Destination: r.Destination, Reason: r.Reason,
			Details: r.Details, Contact: r.Contact, Count: r.Count, Status: r.Status,
			CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}, nil
	})
}

func (d *dumper) webhooks() error {
	return d.each(bucketWebhooks, func(k, v []byte) (dump.Record, error) {
		var r webhookRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		return &dump.Webhook{ID: d.id(prefixWebhook, seq), Seq: seq, WorkspaceID: d.id(prefixWorkspace, r.Workspace),
			URL: r.URL, Events: r.Events, Enabled: r.Enabled, Description: r.Description, Secret: r.Secret,
			PreviousSecret: r.PreviousSecret, PreviousSecretExpiresAt: timePtr(r.PreviousSecretExpiresAt),
			DisabledReason: r.DisabledReason, Failures: r.Failures, CreatorType: r.CreatorType, CreatorID: r.CreatorID,
			Deleting: r.Deleting, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}, nil
	})
}

func (d *dumper) events() error {
	return d.each(bucketEvents, func(k, v []byte) (dump.Record, error) {
		var r eventRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		return &dump.Event{ID: d.id(prefixEvent, seq), Seq: seq, WorkspaceID: d.id(prefixWorkspace, r.Workspace),
			Type: r.Type, CreatedAt: r.CreatedAt.UTC(), Data: []byte(r.Data)}, nil
	})
}

func (d *dumper) deliveries() error {
	return d.each(bucketDeliveries, func(k, v []byte) (dump.Record, error) {
		var r deliveryRecord
		if err := r.decode(v); err != nil {
			return nil, err
		}
		seq := btoi(k)
		dl := &dump.Delivery{ID: d.id(prefixDelivery, seq), Seq: seq, WebhookID: d.id(prefixWebhook, r.Webhook),
			WorkspaceID: d.id(prefixWorkspace, r.Workspace), EventType: r.Type, Payload: cloneBytes(r.Payload), Status: r.Status,
			Attempts: r.Attempts, ResponseCode: r.ResponseCode, Duration: r.Duration, LastError: r.LastError,
			NextAttemptAt: timePtr(r.NextAttemptAt), Queue: r.Queue, QueuedAt: r.QueuedAt.UTC(), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
		if r.Event != 0 {
			dl.EventID = d.id(prefixEvent, r.Event)
		}
		return dl, nil
	})
}

func (d *dumper) audit() error {
	return d.each(bucketAudit, func(k, v []byte) (dump.Record, error) {
		var r auditRecord
		if err := decodeJSON(v, &r); err != nil {
			return nil, err
		}
		seq := btoi(k)
		a := &dump.AuditEntry{ID: d.id(prefixAudit, seq), Seq: seq, At: r.Time.UTC(), ActorType: r.ActorType, ActorID: r.ActorID,
			ActorName: r.ActorName, Action: r.Action, TargetType: r.TargetType, TargetID: r.TargetID, Address: r.Address, Changes: r.Changes}
		for _, w := range r.Workspaces {
			if w != 0 {
				a.WorkspaceIDs = append(a.WorkspaceIDs, d.id(prefixWorkspace, w))
			}
		}
		return a, nil
	})
}

func (d *dumper) salts() error {
	return d.each(bucketClicksSalts, func(k, v []byte) (dump.Record, error) {
		if len(k) != 4 {
			return nil, errBadRecord
		}
		return &dump.Salt{Day: int32(binary.BigEndian.Uint32(k)), Salt: cloneBytes(v)}, nil
	})
}

// aggregates emits the hourly blobs, then the daily ones.
func (d *dumper) aggregates() error {
	for _, daily := range []bool{false, true} {
		bucket := bucketClicksHourly
		if daily {
			bucket = bucketClicksDaily
		}
		if err := d.each(bucket, func(k, v []byte) (dump.Record, error) { return d.aggregate(k, v, daily) }); err != nil {
			return err
		}
	}
	return nil
}

// aggregate decodes one period blob and its key.
func (d *dumper) aggregate(k, v []byte, daily bool) (dump.Record, error) {
	a := &dump.Aggregate{Daily: daily}
	var period uint32
	switch {
	case len(k) == 13 && k[0] == scopeKindWorkspace:
		a.Scope.WorkspaceID, period = d.id(prefixWorkspace, btoi(k[1:])), binary.BigEndian.Uint32(k[9:])
	case len(k) == 13 && k[0] == scopeKindLink:
		period = binary.BigEndian.Uint32(k[1:])
		lid := btoi(k[5:])
		a.Scope.LinkID = d.id(prefixLink, lid)
		// A link's workspace is its record's; a deleted link's is unknown,
		// and its aggregates go nowhere (as a store that deletes them with
		// the link keeps them).
		var r linkRecord
		raw := d.tx.Bucket(bucketLinks).Get(k[5:])
		if raw == nil {
			return nil, nil
		}
		if err := decodeLink(raw, &r); err != nil {
			return nil, err
		}
		a.Scope.WorkspaceID = d.id(prefixWorkspace, r.Workspace)
	case len(k) > 14 && k[0] == scopeKindCampaign && int(k[9]) == len(k)-14:
		a.Scope.WorkspaceID, a.Scope.CampaignID = d.id(prefixWorkspace, btoi(k[1:])), string(k[10:len(k)-4])
		period = binary.BigEndian.Uint32(k[len(k)-4:])
	default:
		return nil, errBadBlob
	}
	a.Period = int32(period)
	h, sections, err := parsePeriodBlob(v, daily)
	if err != nil {
		return nil, err
	}
	a.Clicks, a.Bots = int64(h.clicks), int64(h.bots)
	if daily {
		a.Visitors, a.BotVisitors = int64(h.visitors), int64(h.visitors-h.humans)
	}
	for dim := range numDims {
		r := newBlobReader(dim, sections[dim])
		for {
			val, human, bot, ok, err := r.next()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			value := string(val)
			if dim == dimLinks {
				value = d.id(prefixLink, btoi(val))
			}
			a.Dims[dim] = append(a.Dims[dim], dump.Entry{Value: value, Clicks: int64(human + bot), Bots: int64(bot), Inherited: int64(r.inherited)})
		}
	}
	return a, nil
}

// visitors emits each workspace's visitor of a day, then the same visitor
// in each link and campaign its clicks counted in.
func (d *dumper) visitors() error {
	var rec visitorRecord
	c := d.tx.Bucket(bucketClicksVisitors).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := d.ctx.Err(); err != nil {
			return err
		}
		if len(k) != 20 {
			return fmt.Errorf("read %s %x: %w", bucketClicksVisitors, k, errBadVisitor)
		}
		if err := rec.decode(v); err != nil {
			return fmt.Errorf("read %s %x: %w", bucketClicksVisitors, k, err)
		}
		day, ws, visitor := int32(binary.BigEndian.Uint32(k)), d.id(prefixWorkspace, btoi(k[4:])), btoi(k[12:])
		out := []*dump.Visitor{{Scope: dump.Scope{WorkspaceID: ws}, Day: day, Visitor: visitor, Bot: rec.bot}}
		for _, l := range rec.links {
			out = append(out, &dump.Visitor{Scope: dump.Scope{WorkspaceID: ws, LinkID: d.id(prefixLink, l)}, Day: day, Visitor: visitor, Bot: rec.bot})
		}
		for _, cid := range rec.campaigns {
			out = append(out, &dump.Visitor{Scope: dump.Scope{WorkspaceID: ws, CampaignID: cid}, Day: day, Visitor: visitor, Bot: rec.bot})
		}
		for _, r := range out {
			if err := d.emit(r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *dumper) clicks() error {
	hosts := d.tx.Bucket(bucketClicksHosts)
	ids := newIDMemo(d.ids)
	return d.each(bucketClicksRaw, func(k, v []byte) (dump.Record, error) {
		var c link.Click
		ws := uint64(0)
		if len(k) >= 8 {
			ws = btoi(k)
		}
		err := decodeRawClick(ids, k, v, &c, func(b []byte) string { return string(b) }, func(day uint32, id uint64) (string, error) {
			return hostOf(hosts, day, ws, id)
		})
		if err != nil {
			return nil, err
		}
		return &dump.Click{WorkspaceID: c.WorkspaceID, LinkID: c.LinkID, CampaignID: c.CampaignID, At: c.Time,
			Referrer: c.Referrer, Country: c.Country, Device: c.Device, Browser: c.Browser, OS: c.OS, Bot: c.Bot,
			Visitor: c.Visitor, Variant: int(c.Variant)}, nil
	})
}

func (d *dumper) waitingClicks() error {
	return d.each(bucketClicksBacklog, func(k, v []byte) (dump.Record, error) {
		p, err := decodeBacklogClick(v)
		if err != nil {
			return nil, err
		}
		w := &dump.WaitingClick{}
		c := &w.Click
		c.WorkspaceID, c.LinkID, c.CampaignID, c.Time = d.id(prefixWorkspace, p.ws), d.id(prefixLink, p.link), p.campaign, time.Unix(0, p.nanos).UTC()
		c.Referrer, c.Country, c.Device = p.vals[dimReferrers], p.vals[dimCountries], p.vals[dimDevices]
		c.Browser, c.OS, c.Bot, c.Visitor, c.Variant = p.vals[dimBrowsers], p.vals[dimOS], p.bot, p.visitor, p.variant
		if c.Referrer == directReferrer {
			c.Referrer = ""
		}
		return w, nil
	})
}
