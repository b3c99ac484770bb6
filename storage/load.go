package storage

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/linkbolt/linkbolt/internal/dump"
	"github.com/linkbolt/linkbolt/link"
)

// LoadReport says what LoadFile left out: rows the source kept that a
// data file cannot hold (none so far), by kind.
type LoadReport struct {
	Dropped map[string]int64
}

// loadChunk is how many records one write transaction of LoadFile holds:
// the file is new and private until the rename, so it is written in many
// transactions, each holding few dirty pages in memory (records in
// another order than the file's keys, as PostgreSQL gives the per-link
// aggregates, dirty a page each).
const loadChunk = 5000

// LoadFile writes the records of src into a new data file at path, which
// must not exist: they go into a temporary file beside it, synced and
// renamed into place only when every record is written, so that an error,
// an interruption or a crash leaves no file at path.
func LoadFile(ctx context.Context, path string, src *dump.Source) (*LoadReport, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%s exists already", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".copy-*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	_ = f.Close()
	done := false
	defer func() {
		if !done {
			_ = os.Remove(tmp)
		}
	}()
	bdb, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", tmp, err)
	}
	defer codecs.Delete(bdb)
	l := &loader{db: bdb, ctx: ctx, report: &LoadReport{Dropped: map[string]int64{}}}
	err = l.run(src)
	if err == nil {
		err = bdb.Sync()
	}
	if cerr := bdb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	done = true
	syncDir(dir)
	return l.report, nil
}

// loader writes a stream into a new bbolt file, a chunk of records per
// transaction.
type loader struct {
	ctx    context.Context
	db     *bolt.DB
	tx     *bolt.Tx
	ids    *idCodec
	n      int // records in this transaction
	mem    arena
	ix     searchIndexer
	hosts  *hostTable
	totals []linkTotal
	report *LoadReport

	rawSeq      uint64
	backlog     BacklogSize
	maxQueue    uint64
	visitor     *visitorGroup
	idSeqs      map[string]uint64
	liveMarkers map[uint64]bool
}

// visitorGroup is one visitor record being gathered: the records of one
// workspace's visitor of a day come together.
type visitorGroup struct {
	key []byte
	rec visitorRecord
}

func (l *loader) begin() error {
	tx, err := l.db.Begin(true)
	if err != nil {
		return err
	}
	l.tx, l.n, l.mem = tx, 0, arena{}
	l.ix = searchIndexer{}
	l.hosts = nil
	return nil
}

// commit writes what the transaction gathered and commits it.
func (l *loader) commit() error {
	if err := l.flushVisitor(); err != nil {
		return err
	}
	if len(l.totals) > 0 {
		slices.SortFunc(l.totals, func(a, b linkTotal) int { return cmp.Compare(a.lid, b.lid) })
		if err := writeLinkTotals(l.tx, l.totals, true, &l.mem); err != nil {
			return err
		}
		l.totals = l.totals[:0]
	}
	if err := l.ix.write(l.tx); err != nil {
		return err
	}
	err := l.tx.Commit()
	l.tx = nil
	return err
}

func (l *loader) run(src *dump.Source) (err error) {
	if err := l.begin(); err != nil {
		return err
	}
	defer func() {
		if l.tx != nil {
			_ = l.tx.Rollback()
		}
	}()
	if err := initSchema(l.tx, l.db.Path()); err != nil {
		return err
	}
	// The settings come first: the ID key is the source's.
	for r, ok := src.NextOf("settings"); ok; r, ok = src.NextOf("settings") {
		s := r.(*dump.Setting)
		switch s.Name {
		case string(metaIDKey), string(metaIDLegacyMax), string(metaJWTSecret):
			if err := l.tx.Bucket(bucketMeta).Put([]byte(s.Name), s.Value); err != nil {
				return err
			}
		}
	}
	if l.ids, err = loadIDCodec(l.tx); err != nil {
		return err
	}
	codecs.Store(l.db, l.ids)
	l.idSeqs, l.liveMarkers = map[string]uint64{}, map[uint64]bool{}
	for r := src.Next(); r != nil; r = src.Next() {
		if err := l.put(r); err != nil {
			return fmt.Errorf("write %s: %w", r.Kind(), err)
		}
		if l.n++; l.n >= loadChunk {
			if err := l.ctx.Err(); err != nil {
				return err
			}
			if err := l.commit(); err != nil {
				return err
			}
			if err := l.begin(); err != nil {
				return err
			}
		}
	}
	if err := src.Err(); err != nil {
		return err
	}
	if err := l.ctx.Err(); err != nil {
		return err
	}
	if err := l.finish(); err != nil {
		return err
	}
	return l.commit()
}

// finish sets the sequences and counters kept beside the records.
func (l *loader) finish() error {
	for prefix, last := range l.idSeqs {
		b := l.tx.Bucket(seqBuckets[prefix])
		if b.Sequence() > last {
			last = b.Sequence()
		}
		if err := b.SetSequence(last); err != nil {
			return err
		}
	}
	if err := l.tx.Bucket(bucketDeliveriesQueue).SetSequence(l.maxQueue); err != nil {
		return err
	}
	if err := l.tx.Bucket(bucketClicksRaw).SetSequence(l.rawSeq); err != nil {
		return err
	}
	if err := l.tx.Bucket(bucketClicksBacklog).SetSequence(uint64(l.backlog.Clicks)); err != nil {
		return err
	}
	if err := putBacklogSize(l.tx, l.backlog); err != nil {
		return err
	}
	for wid := range l.liveMarkers {
		if err := l.tx.Bucket(bucketKeysLive).Put(itob(wid), []byte{}); err != nil {
			return err
		}
	}
	return nil
}

// seq returns the sequence of a wire ID.
func (l *loader) seq(prefix, id string) (uint64, error) {
	s, ok := l.ids.parseID(prefix, id)
	if !ok {
		return 0, fmt.Errorf("%q is not an ID of the source's ID key", id)
	}
	return s, nil
}

// own returns the sequence of a record's own ID, which must be its Seq.
func (l *loader) own(prefix, id string, seq uint64) ([]byte, error) {
	s, err := l.seq(prefix, id)
	if err != nil {
		return nil, err
	}
	if s != seq {
		return nil, fmt.Errorf("ID %s is not sequence %d", id, seq)
	}
	return itob(s), nil
}

func (l *loader) b(name []byte) *bolt.Bucket { return l.tx.Bucket(name) }

func (l *loader) put(r dump.Record) error {
	switch r := r.(type) {
	case *dump.Setting:
		return nil // only the first ones count
	case *dump.IDState:
		if _, ok := seqBuckets[r.Prefix]; !ok {
			return fmt.Errorf("IDs of an unknown kind %q", r.Prefix)
		}
		l.idSeqs[r.Prefix] = r.Last
		return nil
	case *dump.Cert:
		return l.b(bucketACME).Put([]byte(r.Name), r.Data)
	case *dump.BlockEntry:
		return putJSON(l.b(bucketBlocklist), []byte(r.Entry), &blocklistRecord{CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy})
	case *dump.User:
		return l.putUser(r)
	case *dump.RevokedToken:
		return l.b(bucketTokensRevoked).Put([]byte(r.ID), itob(uint64(r.ExpiresAt.UnixNano())))
	case *dump.PasswordReset:
		uid, err := l.seq(prefixUser, r.UserID)
		if err != nil {
			return err
		}
		return l.b(bucketUsersReset).Put(r.TokenHash, binary.BigEndian.AppendUint64(itob(uid), uint64(r.ExpiresAt.UnixNano())))
	case *dump.Workspace:
		k, err := l.own(prefixWorkspace, r.ID, r.Seq)
		if err != nil {
			return err
		}
		if r.DestinationChecks {
			if err := l.b(bucketLinkChecksEnroll).Put(k, itob(0)); err != nil {
				return err
			}
		}
		return putJSON(l.b(bucketWorkspaces), k, &workspaceRecord{Name: r.Name, Plan: link.Plan(r.Plan), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, DataSince: r.DataSince,
			ForwardPath: r.ForwardPath, ForwardQuery: r.ForwardQuery, DestinationChecks: r.DestinationChecks, Pixels: newPixelsRecord(r.Pixels)})
	case *dump.Member:
		return l.putMember(r)
	case *dump.FormerMember:
		wid, err1 := l.seq(prefixWorkspace, r.WorkspaceID)
		uid, err2 := l.seq(prefixUser, r.UserID)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		return putJSON(l.b(bucketWorkspaceFormer), concat(itob(wid), itob(uid)), &formerRecord{RemovedAt: r.RemovedAt})
	case *dump.Invitation:
		return l.putInvitation(r)
	case *dump.Key:
		return l.putKey(r)
	case *dump.Campaign:
		k, err := l.own(prefixCampaign, r.ID, r.Seq)
		if err != nil {
			return err
		}
		wid, err := l.seq(prefixWorkspace, r.WorkspaceID)
		if err != nil {
			return err
		}
		if err := putJSON(l.b(bucketCampaigns), k, &campaignRecord{Workspace: wid, Name: r.Name, Status: r.Status, UTMSource: r.UTMSource,
			UTMMedium: r.UTMMedium, UTMCampaign: r.UTMCampaign, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}); err != nil {
			return err
		}
		return l.b(bucketCampaignsWorkspace).Put(concat(itob(wid), k), []byte{})
	case *dump.Domain:
		k, err := l.own(prefixDomain, r.ID, r.Seq)
		if err != nil {
			return err
		}
		wid, err := l.seq(prefixWorkspace, r.WorkspaceID)
		if err != nil {
			return err
		}
		if err := putJSON(l.b(bucketDomains), k, &domainRecord{Workspace: wid, Hostname: r.Hostname, Verified: r.Verified, VerifiedAt: r.VerifiedAt,
			Token: r.Token, RootRedirectURL: r.RootRedirectURL, NotFoundURL: r.NotFoundURL, AASA: r.AASA, AssetLinks: r.AssetLinks,
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}); err != nil {
			return err
		}
		if err := l.b(bucketDomainsHostname).Put([]byte(r.Hostname), k); err != nil {
			return err
		}
		return l.b(bucketDomainsWorkspace).Put(concat(itob(wid), k), []byte{})
	case *dump.Link:
		return l.putLink(r)
	case *dump.AliasHold:
		wid, err := l.seq(prefixWorkspace, r.WorkspaceID)
		if err != nil {
			return err
		}
		return l.b(bucketLinksAliasHold).Put(aliasKey(r.Domain, r.Alias), holdValue(wid, r.Until))
	case *dump.Import:
		wid, err1 := l.seq(prefixWorkspace, r.WorkspaceID)
		lid, err2 := l.seq(prefixLink, r.LinkID)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		return l.b(bucketImports).Put(concat(itob(wid), []byte(r.Source), []byte{0}, []byte(r.SourceKey)), itob(lid))
	case *dump.QRCode:
		k, err := l.own(prefixQRCode, r.ID, r.Seq)
		if err != nil {
			return err
		}
		wid, err1 := l.seq(prefixWorkspace, r.WorkspaceID)
		lid, err2 := l.seq(prefixLink, r.LinkID)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if err := putJSON(l.b(bucketQRCodes), k, &qrCodeRecord{Workspace: wid, Link: lid, Name: r.Name, Format: r.Format, Size: r.Size,
			Margin: r.Margin, Level: r.Level, Foreground: r.Foreground, Background: r.Background, LogoDigest: link.LogoDigest(r.Logo),
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}); err != nil {
			return err
		}
		if len(r.Logo) > 0 {
			if err := l.b(bucketQRCodesLogo).Put(k, r.Logo); err != nil {
				return err
			}
		}
		return l.b(bucketQRCodesWorkspace).Put(concat(itob(wid), k), []byte{})
	case *dump.UTMTemplate:
		k, err := l.own(link.PrefixUTM, r.ID, r.Seq)
		if err != nil {
			return err
		}
		wid, err := l.seq(prefixWorkspace, r.WorkspaceID)
		if err != nil {
			return err
		}
		if err := putJSON(l.b(bucketUTMTemplates), k, &utmTemplateRecord{Workspace: wid, Name: r.Name, UTMSource: r.UTMSource,
			UTMMedium: r.UTMMedium, UTMCampaign: r.UTMCampaign, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}); err != nil {
			return err
		}
		return l.b(bucketUTMTemplatesWorkspace).Put(concat(itob(wid), k), []byte{})
	case *dump.Tag:
		wid, err := l.seq(prefixWorkspace, r.WorkspaceID)
		if err != nil {
			return err
		}
		return putJSON(l.b(bucketTags), concat(itob(wid), []byte(r.Name)), &tagRecord{Color: r.Color, Description: r.Description, UpdatedAt: r.UpdatedAt})
	case *dump.AbuseReport:
		k, err := l.own(link.PrefixReport, r.ID, r.Seq)
		if err != nil {
			return err
		}
		wid, err1 := l.seq(prefixWorkspace, r.WorkspaceID)
		lid, err2 := l.seq(prefixLink, r.LinkID)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		rec := &reportRecord{Workspace: wid, Link: lid, Domain: r.Domain, Alias: r.Alias, Destination: r.Destination,
			Reason: r.Reason, Details: r.Details, Contact: r.Contact, Count: r.Count, Status: r.Status,
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
		if err := putJSON(l.b(bucketReports), k, rec); err != nil {
			return err
		}
		if r.Status != link.ReportOpen {
			return nil
		}
		return l.b(bucketReportsOpen).Put(openReportKey(lid, r.Reason), k)
	case *dump.Webhook:
		return l.putWebhook(r)
	case *dump.Event:
		k, err := l.own(prefixEvent, r.ID, r.Seq)
		if err != nil {
			return err
		}
		wid, err := l.seq(prefixWorkspace, r.WorkspaceID)
		if err != nil {
			return err
		}
		return putJSON(l.b(bucketEvents), k, &eventRecord{Workspace: wid, Type: r.Type, CreatedAt: r.CreatedAt, Data: r.Data})
	case *dump.Delivery:
		return l.putDelivery(r)
	case *dump.AuditEntry:
		return l.putAudit(r)
	case *dump.Salt:
		return l.b(bucketClicksSalts).Put(be32(uint32(r.Day)), r.Salt)
	case *dump.Aggregate:
		return l.putAggregate(r)
	case *dump.Visitor:
		return l.putVisitor(r)
	case *dump.Click:
		return l.putClick(r)
	case *dump.WaitingClick:
		p, ok := parseClick(l.ids, &r.Click)
		if !ok {
			l.report.Dropped["waiting clicks"]++
			return nil
		}
		enc := appendBacklogClick(nil, &p)
		l.backlog.Clicks++
		l.backlog.Bytes += int64(8 + len(enc))
		return l.b(bucketClicksBacklog).Put(itob(uint64(l.backlog.Clicks)), enc)
	}
	return fmt.Errorf("a record of an unknown kind %q", r.Kind())
}

func (l *loader) putUser(r *dump.User) error {
	k, err := l.own(prefixUser, r.ID, r.Seq)
	if err != nil {
		return err
	}
	rec := &userRecord{Email: r.Email, PasswordHash: r.PasswordHash, Admin: r.Admin, CreatedAt: r.CreatedAt, Name: r.Name,
		Disabled: r.Disabled, TokenGeneration: r.TokenGeneration}
	if err := putJSON(l.b(bucketUsers), k, rec); err != nil {
		return err
	}
	return l.b(bucketUsersEmail).Put(emailKey(r.Email), k)
}

func (l *loader) putMember(r *dump.Member) error {
	wid, err1 := l.seq(prefixWorkspace, r.WorkspaceID)
	uid, err2 := l.seq(prefixUser, r.UserID)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	rec := &memberRecord{Role: link.Role(r.Role), CreatedAt: r.CreatedAt}
	if err := putJSON(l.b(bucketWorkspaceMembers), concat(itob(wid), itob(uid)), rec); err != nil {
		return err
	}
	return putJSON(l.b(bucketUserWorkspaces), concat(itob(uid), itob(wid)), rec)
}

func (l *loader) putInvitation(r *dump.Invitation) error {
	k, err := l.own(prefixInvitation, r.ID, r.Seq)
	if err != nil {
		return err
	}
	wid, err1 := l.seq(prefixWorkspace, r.WorkspaceID)
	by, err2 := l.seq(prefixUser, r.InvitedBy)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	rec := &invitationRecord{Workspace: wid, Email: r.Email, Role: link.Role(r.Role), TokenHash: r.TokenHash, InvitedBy: by,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, AcceptedAt: r.AcceptedAt, RevokedAt: r.RevokedAt}
	if r.AcceptedBy != "" {
		if rec.AcceptedBy, err = l.seq(prefixUser, r.AcceptedBy); err != nil {
			return err
		}
	}
	if err := putJSON(l.b(bucketInvitations), k, rec); err != nil {
		return err
	}
	if err := l.b(bucketInvitationsHash).Put(r.TokenHash, k); err != nil {
		return err
	}
	return l.b(bucketInvitationsWorkspace).Put(concat(itob(wid), k), nil)
}

func (l *loader) putKey(r *dump.Key) error {
	k, err := l.own(prefixKey, r.ID, r.Seq)
	if err != nil {
		return err
	}
	wid, err := l.seq(prefixWorkspace, r.WorkspaceID)
	if err != nil {
		return err
	}
	rec := &keyRecord{Workspace: wid, Name: r.Name, Scope: link.Scope(r.Scope), Hash: r.Hash, Start: r.Start, CreatedAt: r.CreatedAt,
		ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt, GraceEndsAt: r.GraceEndsAt, CreatorType: r.CreatorType, CreatorID: r.CreatorID, Keep: r.Keep,
		Resources: r.Resources}
	if r.ReplacedBy != "" {
		if rec.ReplacedBy, err = l.seq(prefixKey, r.ReplacedBy); err != nil {
			return err
		}
	}
	if err := putJSON(l.b(bucketKeys), k, rec); err != nil {
		return err
	}
	if err := l.b(bucketKeysHash).Put(r.Hash, k); err != nil {
		return err
	}
	if err := l.b(bucketKeysWorkspace).Put(concat(itob(wid), k), []byte{}); err != nil {
		return err
	}
	// The live index holds every key whose end is not recorded yet; the
	// workspace's marker says the index is built.
	l.liveMarkers[wid] = true
	if r.RevokedAt == nil && !r.EndRecorded {
		if err := l.b(bucketKeysLive).Put(concat(itob(wid), k), []byte{}); err != nil {
			return err
		}
	}
	if r.RequestCount != 0 || r.LastUsedAt != nil {
		u := keyUsage{count: r.RequestCount}
		if r.LastUsedAt != nil {
			u.last = *r.LastUsedAt
		}
		if err := l.b(bucketKeysUsage).Put(k, encodeUsage(u)); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) putLink(r *dump.Link) error {
	k, err := l.own(prefixLink, r.ID, r.Seq)
	if err != nil {
		return err
	}
	lid := r.Seq
	wid, err := l.seq(prefixWorkspace, r.WorkspaceID)
	if err != nil {
		return err
	}
	in := &link.Link{Alias: r.Alias, Domain: r.Domain, DestinationURL: r.DestinationURL, Tags: r.Tags, UTMSource: r.UTMSource,
		UTMMedium: r.UTMMedium, UTMCampaign: r.UTMCampaign, CampaignID: r.CampaignID, RedirectCode: r.RedirectCode,
		PasswordHash: r.PasswordHash, Rules: r.Rules, Variants: r.Variants, OG: r.OG,
		LinkLimits:  link.LinkLimits{ExpiresAt: r.ExpiresAt, MaxClicks: r.MaxClicks, ExpiredURL: r.ExpiredURL, Archived: r.Archived, Title: r.Title, Note: r.Note},
		ForwardPath: r.ForwardPath, ForwardQuery: r.ForwardQuery, ExternalID: r.ExternalID, IOSURL: r.IOSURL, AndroidURL: r.AndroidURL, Crawlable: r.Crawlable, PublicStats: r.PublicStats, EscapeInApp: r.EscapeInApp, Retargeting: r.Retargeting}
	rec := newLinkRecord(wid, in, r.CreatedAt)
	rec.UpdatedAt = r.UpdatedAt
	links := l.b(bucketLinks)
	links.FillPercent = linkFill
	if err := putLink(links, k, rec); err != nil {
		return err
	}
	if err := l.b(bucketLinksAlias).Put(aliasKey(r.Domain, r.Alias), k); err != nil {
		return err
	}
	if err := l.b(bucketLinksWorkspace).Put(concat(itob(wid), k), []byte{}); err != nil {
		return err
	}
	if err := checkExternalID(l.tx, wid, lid, r.ExternalID); err != nil {
		return err
	}
	if err := moveExternalID(l.tx, wid, lid, "", r.ExternalID); err != nil {
		return err
	}
	if err := indexCrawlable(l.tx, nil, rec, k); err != nil {
		return err
	}
	if cid, ok := l.ids.parseID(prefixCampaign, r.CampaignID); ok {
		if err := l.b(bucketLinksCampaign).Put(campaignLinkKey(wid, cid, lid), []byte{}); err != nil {
			return err
		}
	}
	if err := addCounter(l.b(bucketLinksCount), itob(wid), 1); err != nil {
		return err
	}
	if err := countArchived(l.tx, wid, false, r.Archived); err != nil {
		return err
	}
	for _, t := range rec.Tags {
		if err := addTag(l.tx, wid, t, k); err != nil {
			return err
		}
	}
	l.ix.add(lid, rec)
	if r.Clicks > 0 {
		l.totals = append(l.totals, linkTotal{lid: lid, n: uint64(r.Clicks)})
	}
	return nil
}

func (l *loader) putWebhook(r *dump.Webhook) error {
	k, err := l.own(prefixWebhook, r.ID, r.Seq)
	if err != nil {
		return err
	}
	wid, err := l.seq(prefixWorkspace, r.WorkspaceID)
	if err != nil {
		return err
	}
	rec := &webhookRecord{Workspace: wid, URL: r.URL, Events: r.Events, Enabled: r.Enabled, Description: r.Description, Secret: r.Secret,
		PreviousSecret: r.PreviousSecret, PreviousSecretExpiresAt: r.PreviousSecretExpiresAt, DisabledReason: r.DisabledReason,
		Failures: r.Failures, CreatorType: r.CreatorType, CreatorID: r.CreatorID, Deleting: r.Deleting, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if err := putJSON(l.b(bucketWebhooks), k, rec); err != nil {
		return err
	}
	if !r.Deleting {
		if err := l.b(bucketWebhooksWorkspace).Put(concat(itob(wid), k), []byte{}); err != nil {
			return err
		}
	}
	return setSubscriptions(l.tx, r.Seq, nil, rec)
}

func (l *loader) putDelivery(r *dump.Delivery) error {
	k, err := l.own(prefixDelivery, r.ID, r.Seq)
	if err != nil {
		return err
	}
	whid, err1 := l.seq(prefixWebhook, r.WebhookID)
	wid, err2 := l.seq(prefixWorkspace, r.WorkspaceID)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	rec := &deliveryRecord{Webhook: whid, Workspace: wid, Type: r.EventType, Payload: r.Payload, Status: r.Status, Attempts: r.Attempts,
		ResponseCode: r.ResponseCode, Duration: r.Duration, LastError: r.LastError, NextAttemptAt: r.NextAttemptAt, Queue: r.Queue,
		QueuedAt: r.QueuedAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.EventID != "" {
		if rec.Event, err = l.seq(prefixEvent, r.EventID); err != nil {
			return err
		}
	}
	if err := l.b(bucketDeliveries).Put(k, rec.appendTo(nil)); err != nil {
		return err
	}
	if err := l.b(bucketDeliveriesWebhook).Put(concat(itob(whid), k), []byte{}); err != nil {
		return err
	}
	if r.Queue != 0 {
		l.maxQueue = max(l.maxQueue, r.Queue)
		return l.b(bucketDeliveriesQueue).Put(concat(itob(whid), itob(r.Queue)), k)
	}
	return nil
}

func (l *loader) putAudit(r *dump.AuditEntry) error {
	k, err := l.own(prefixAudit, r.ID, r.Seq)
	if err != nil {
		return err
	}
	rec := &auditRecord{Time: r.At, ActorType: r.ActorType, ActorID: r.ActorID, ActorName: r.ActorName, Action: r.Action,
		TargetType: r.TargetType, TargetID: r.TargetID, Address: r.Address, Changes: r.Changes}
	for _, w := range r.WorkspaceIDs {
		wid, err := l.seq(prefixWorkspace, w)
		if err != nil {
			return err
		}
		rec.Workspaces = append(rec.Workspaces, wid)
	}
	b := l.b(bucketAudit)
	b.FillPercent = 0.9
	if err := putJSON(b, k, rec); err != nil {
		return err
	}
	for name, keys := range auditIndexKeys(rec, r.Seq) {
		ib := l.b([]byte(name))
		for _, ik := range keys {
			if err := ib.Put(ik, []byte{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// aggregateKey is the key of an aggregate's period blob.
func (l *loader) aggregateKey(a *dump.Aggregate) ([]byte, error) {
	wid, err := l.seq(prefixWorkspace, a.Scope.WorkspaceID)
	if err != nil {
		return nil, err
	}
	var scope []byte
	switch {
	case a.Scope.LinkID != "":
		lid, err := l.seq(prefixLink, a.Scope.LinkID)
		if err != nil {
			return nil, err
		}
		scope = linkScope(lid)
	case a.Scope.CampaignID != "":
		if !validCampaignID(a.Scope.CampaignID) {
			return nil, fmt.Errorf("campaign ID %q", a.Scope.CampaignID)
		}
		scope = campaignScope(wid, a.Scope.CampaignID)
	default:
		scope = workspaceScope(wid)
	}
	if a.Period < 0 {
		return nil, fmt.Errorf("period %d before 1970", a.Period)
	}
	return periodBlobKey(scope, uint32(a.Period)), nil
}

// putAggregate writes an aggregate as a period blob of version 2.
func (l *loader) putAggregate(a *dump.Aggregate) error {
	k, err := l.aggregateKey(a)
	if err != nil {
		return err
	}
	out := []byte{0, blobVersion}
	out = binary.AppendUvarint(out, uint64(a.Clicks))
	out = binary.AppendUvarint(out, uint64(a.Bots))
	if a.Daily {
		out = binary.AppendUvarint(out, uint64(a.Visitors))
		out = binary.AppendUvarint(out, uint64(a.Visitors-a.BotVisitors))
	}
	for d := range numDims {
		sec, err := l.section(d, a)
		if err != nil {
			return err
		}
		if d >= dimVariants && len(sec) == 0 {
			continue
		}
		out = binary.AppendUvarint(out, uint64(len(sec)))
		out = append(out, sec...)
	}
	if _, _, err := parsePeriodBlob(out, a.Daily); err != nil {
		return fmt.Errorf("aggregate of %s %d: %w", k, a.Period, err)
	}
	bucket := bucketClicksHourly
	if a.Daily {
		bucket = bucketClicksDaily
	}
	return l.b(bucket).Put(k, out)
}

// section encodes one dimension of a period blob: its entries sorted by
// value (link IDs by sequence), and the clicks no entry holds as other.
func (l *loader) section(d byte, a *dump.Aggregate) ([]byte, error) {
	entries := a.Dims[d]
	if len(entries) == 0 {
		return nil, nil
	}
	type entry struct {
		key        string // the value as the blob orders it
		human, bot uint64
		inherited  uint64
	}
	es := make([]entry, 0, len(entries))
	var human, bot uint64
	for _, e := range entries {
		key := e.Value
		if d == dimLinks {
			lid, err := l.seq(prefixLink, e.Value)
			if err != nil {
				return nil, err
			}
			key = string(itob(lid))
		}
		if e.Bots > e.Clicks || e.Clicks < 0 || e.Bots < 0 || e.Inherited < 0 {
			return nil, fmt.Errorf("entry %q: %d clicks, %d bots", e.Value, e.Clicks, e.Bots)
		}
		es = append(es, entry{key: key, human: uint64(e.Clicks - e.Bots), bot: uint64(e.Bots), inherited: uint64(e.Inherited)})
		human, bot = human+uint64(e.Clicks-e.Bots), bot+uint64(e.Bots)
	}
	slices.SortFunc(es, func(x, y entry) int { return strings.Compare(x.key, y.key) })
	totalHuman, totalBot := uint64(a.Clicks-a.Bots), uint64(a.Bots)
	if human > totalHuman || bot > totalBot {
		return nil, fmt.Errorf("the %s entries count more than the totals", dimNames[d])
	}
	sec := binary.AppendUvarint(nil, uint64(len(es)))
	sec = binary.AppendUvarint(sec, totalHuman-human)
	sec = binary.AppendUvarint(sec, totalBot-bot)
	var prev uint64
	for _, e := range es {
		if d == dimLinks {
			id := btoi([]byte(e.key))
			sec = binary.AppendUvarint(sec, id-prev)
			prev = id
		} else {
			sec = appendLenString(sec, e.key)
		}
		sec = binary.AppendUvarint(sec, e.human)
		sec = binary.AppendUvarint(sec, e.bot)
		sec = binary.AppendUvarint(sec, e.inherited)
	}
	return sec, nil
}

// putVisitor adds a scope's visitor to the workspace's visitor record of
// the day, which the stream gives together.
func (l *loader) putVisitor(v *dump.Visitor) error {
	wid, err := l.seq(prefixWorkspace, v.Scope.WorkspaceID)
	if err != nil {
		return err
	}
	if v.Day < 0 {
		return fmt.Errorf("day %d before 1970", v.Day)
	}
	key := concat(be32(uint32(v.Day)), itob(wid), itob(v.Visitor))
	if l.visitor != nil && string(l.visitor.key) != string(key) {
		if err := l.flushVisitor(); err != nil {
			return err
		}
	}
	if l.visitor == nil {
		l.visitor = &visitorGroup{key: key}
		if old := l.b(bucketClicksVisitors).Get(key); old != nil {
			if err := l.visitor.rec.decode(old); err != nil {
				return err
			}
		}
	}
	g := l.visitor
	switch {
	case v.Scope.LinkID != "":
		lid, err := l.seq(prefixLink, v.Scope.LinkID)
		if err != nil {
			return err
		}
		if !slices.Contains(g.rec.links, lid) {
			g.rec.links = append(g.rec.links, lid)
		}
	case v.Scope.CampaignID != "":
		if !slices.Contains(g.rec.campaigns, v.Scope.CampaignID) {
			g.rec.campaigns = append(g.rec.campaigns, v.Scope.CampaignID)
		}
	default:
		g.rec.bot = v.Bot
	}
	return nil
}

func (l *loader) flushVisitor() error {
	g := l.visitor
	if g == nil {
		return nil
	}
	l.visitor = nil
	slices.Sort(g.rec.links)
	slices.Sort(g.rec.campaigns)
	return l.b(bucketClicksVisitors).Put(g.key, g.rec.appendTo(nil))
}

func (l *loader) putClick(c *dump.Click) error {
	wid, err1 := l.seq(prefixWorkspace, c.WorkspaceID)
	lid, err2 := l.seq(prefixLink, c.LinkID)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	ns := c.At.UnixNano()
	if ns < 0 || c.Variant < 0 || c.Variant > link.MaxVariants {
		return fmt.Errorf("click at %s, variant %d", c.At, c.Variant)
	}
	sec := ns / 1e9
	p := parsedClick{ws: wid, link: lid, campaign: c.CampaignID, nanos: ns, hour: uint32(sec / secondsPerHour), day: uint32(sec / secondsPerDay),
		bot: c.Bot, visitor: c.Visitor, variant: uint8(c.Variant)}
	p.vals[dimReferrers], p.vals[dimCountries], p.vals[dimDevices], p.vals[dimBrowsers], p.vals[dimOS] = c.Referrer, c.Country, c.Device, c.Browser, c.OS
	if l.hosts == nil {
		l.hosts = newHostTable(l.tx, &l.mem)
	}
	ref, err := l.hosts.referrer(p.day, p.ws, p.vals[dimReferrers])
	if err != nil {
		return err
	}
	l.rawSeq++
	k := make([]byte, 20)
	binary.BigEndian.PutUint64(k, wid)
	binary.BigEndian.PutUint64(k[8:], uint64(ns))
	binary.BigEndian.PutUint32(k[16:], uint32(l.rawSeq))
	raw := l.b(bucketClicksRaw)
	raw.FillPercent = 0.9
	return raw.Put(k, appendRawClick(nil, &p, ref))
}
