package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/linkbolt/linkbolt/internal/config"
	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

var exportCommand = &command{
	name:     "export",
	synopsis: "export --workspace ID [--out FILE] [--config FILE] [--token TOKEN]",
	summary:  "write everything a workspace owns as JSON lines, no secrets",
	about: `Write everything the workspace ID owns as JSON lines, one object a line,
{"type": TYPE, "data": {...}}: the workspace, then its members, campaigns,
custom domains, links (with their controls and click totals), QR code
designs, webhooks, API keys, and the raw clicks still kept (older ones
live on as the link totals and analytics aggregates). It holds no secret:
no password or key hashes, no webhook secrets, no link passwords
(password_protected says a link has one), no domain verification tokens.
docs/operations.md, "Exporting a workspace", describes each type. The export goes to
stdout, or to FILE, written beside it and renamed into place when
complete.` + onlineNote,
	define: func(fs *flag.FlagSet) func(context.Context, io.Writer, io.Writer) error {
		configPath, token := adminFlags(fs)
		wsID := fs.String("workspace", "", "the workspace's `ID` (required; see linkbolt workspaces list)")
		out := fs.String("out", "", "the `FILE` to write (default: stdout)")
		return func(ctx context.Context, stdout, stderr io.Writer) error {
			if *wsID == "" {
				return usageError{"--workspace ID is required"}
			}
			return runExport(ctx, *configPath, *token, *wsID, *out, stdout, stderr)
		}
	},
}

func runExport(ctx context.Context, configPath, token, wsID, out string, stdout, stderr io.Writer) error {
	if out != "" {
		cfg, err := config.Load(configPath)
		if err != nil {
			return err
		}
		if !cfg.Postgres() {
			if err := refuseDataFile(out, cfg.Storage.Path); err != nil {
				return fmt.Errorf("export: %w", err)
			}
		}
		if err := refuseSpecialFile(out); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	return withInstance(ctx, configPath, token, stderr, func(ctx context.Context, in *instance) error {
		if _, err := in.store.Workspaces.FindWorkspaceByID(ctx, wsID); err != nil {
			return err
		}
		if out == "" {
			_, err := exportWorkspace(ctx, in.store, wsID, stdout)
			return err
		}
		var lines int64
		_, err := writeAtomically(out, func(w io.Writer) (int64, error) {
			var err error
			lines, err = exportWorkspace(ctx, in.store, wsID, w)
			return lines, err
		})
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		fmt.Fprintf(stderr, "wrote %d lines to %s\n", lines, out)
		return nil
	})
}

// exportLine is one line of an export.
type exportLine struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

// exporter writes the lines of an export and counts them.
type exporter struct {
	enc   *json.Encoder
	lines int64
}

func (e *exporter) write(typ string, data map[string]any) error {
	e.lines++
	for k, v := range data {
		data[k] = exportTime(v)
	}
	return e.enc.Encode(exportLine{Type: typ, Data: data})
}

// exportTime is v with a time as the API writes it (RFC 3339 UTC, whole
// seconds; null for a nil *time.Time); other values are kept.
func exportTime(v any) any {
	switch t := v.(type) {
	case time.Time:
		return wire.Time(t)
	case *time.Time:
		if t == nil {
			return nil
		}
		return wire.Time(*t)
	}
	return v
}

// exportWorkspace writes the lines of the workspace wsID to w and returns
// their number.
func exportWorkspace(ctx context.Context, store *link.Store, wsID string, w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	e := &exporter{enc: enc}
	steps := []func(context.Context, *link.Store, string, *exporter) error{
		exportWorkspaceLine, exportMembers, exportCampaigns, exportDomains, exportLinks,
		exportQRCodes, exportUTMTemplates, exportTags, exportWebhooks, exportKeys, exportClicks,
	}
	for _, step := range steps {
		if err := step(ctx, store, wsID, e); err != nil {
			return e.lines, err
		}
	}
	return e.lines, bw.Flush()
}

func exportWorkspaceLine(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	ws, err := store.Workspaces.FindWorkspaceByID(ctx, wsID)
	if err != nil {
		return err
	}
	return e.write("workspace", map[string]any{"id": ws.ID, "name": ws.Name, "plan": ws.Plan,
		"created_at": ws.CreatedAt, "updated_at": ws.UpdatedAt})
}

func exportMembers(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	members, err := store.Members.FindMembers(ctx, wsID)
	if err != nil {
		return err
	}
	for _, m := range members {
		if err := e.write("member", map[string]any{"user_id": m.UserID, "email": m.Email, "name": m.Name,
			"role": m.Role, "joined_at": m.JoinedAt}); err != nil {
			return err
		}
	}
	return nil
}

func exportCampaigns(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	campaigns, err := store.Campaigns.FindCampaigns(ctx, wsID)
	if err != nil {
		return err
	}
	for _, c := range campaigns {
		if err := e.write("campaign", map[string]any{"id": c.ID, "name": c.Name, "status": c.Status,
			"utm_source": c.UTMSource, "utm_medium": c.UTMMedium, "utm_campaign": c.UTMCampaign,
			"links": c.Links, "created_at": c.CreatedAt, "updated_at": c.UpdatedAt}); err != nil {
			return err
		}
	}
	return nil
}

func exportDomains(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	domains, err := store.Domains.FindDomains(ctx, wsID)
	if err != nil {
		return err
	}
	for _, d := range domains {
		if err := e.write("domain", map[string]any{"id": d.ID, "hostname": d.Hostname, "verified": d.Verified,
			"verified_at": d.VerifiedAt}); err != nil {
			return err
		}
	}
	return nil
}

// exportLinkPage is the number of links read at a time.
const exportLinkPage = 1000

func exportLinks(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	links := store.Links
	for page := 1; ; page++ {
		p, err := links.FindLinkPage(ctx, link.LinkFilter{WorkspaceID: wsID, Page: page, Limit: exportLinkPage, Archived: link.ArchivedAll})
		if err != nil {
			return err
		}
		for _, l := range p.Links {
			if err := e.write("link", linkData(l)); err != nil {
				return err
			}
		}
		if len(p.Links) < exportLinkPage {
			return nil
		}
	}
}

// linkData is a link's line: every field but its password's hash.
func linkData(l *link.Link) map[string]any {
	d := map[string]any{"id": l.ID, "alias": l.Alias, "domain": l.Domain, "destination_url": l.DestinationURL,
		"tags": nonNil(l.Tags), "utm_source": l.UTMSource, "utm_medium": l.UTMMedium, "utm_campaign": l.UTMCampaign,
		"campaign_id": l.CampaignID, "redirect_code": l.RedirectCode, "clicks": l.Clicks,
		"created_at": l.CreatedAt, "updated_at": l.UpdatedAt,
		"expires_at": l.ExpiresAt, "max_clicks": l.MaxClicks, "expired_url": l.ExpiredURL,
		"archived": l.Archived, "title": l.Title, "note": l.Note, "password_protected": l.PasswordHash != "",
		"forward_path": l.ForwardPath, "forward_query": l.ForwardQuery, "external_id": l.ExternalID,
		"ios_url": l.IOSURL, "android_url": l.AndroidURL, "crawlable": l.Crawlable, "public_stats": l.PublicStats,
		"escape_in_app_browser": l.EscapeInApp, "retargeting": l.Retargeting}
	rules := make([]map[string]any, 0, len(l.Rules))
	for _, r := range l.Rules {
		cond := map[string]any{}
		for k, v := range map[string]string{"device": r.If.Device, "os": r.If.OS, "browser": r.If.Browser, "country": r.If.Country, "language": r.If.Language} {
			if v != "" {
				cond[k] = v
			}
		}
		if q := r.If.Query; q != nil {
			cond["query"] = map[string]string{"name": q.Name, "value": q.Value}
		}
		if len(r.If.IP) > 0 {
			ips := make([]string, len(r.If.IP))
			for i, p := range r.If.IP {
				ips[i] = p.String()
			}
			cond["ip"] = ips
		}
		if r.If.After != nil {
			cond["after"] = r.If.After.UTC()
		}
		if r.If.Before != nil {
			cond["before"] = r.If.Before.UTC()
		}
		rules = append(rules, map[string]any{"if": cond, "then": r.Then})
	}
	d["rules"] = rules
	variants := make([]map[string]any, 0, len(l.Variants))
	for _, v := range l.Variants {
		variants = append(variants, map[string]any{"destination_url": v.DestinationURL, "weight": v.Weight})
	}
	d["variants"] = variants
	if l.OG != nil {
		d["og"] = map[string]string{"title": l.OG.Title, "description": l.OG.Description, "image_url": l.OG.ImageURL}
	}
	return d
}

func exportQRCodes(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	codes, err := store.QRCodes.FindQRCodes(ctx, wsID, "")
	if err != nil {
		return err
	}
	for _, q := range codes {
		var logo []byte // the PNG, base64 in JSON; null for none
		if q.LogoDigest != "" {
			if _, logo, err = store.QRCodes.FindQRCodeLogo(ctx, wsID, q.ID); err != nil {
				return err
			}
		}
		if err := e.write("qr_code", map[string]any{"id": q.ID, "link_id": q.LinkID, "name": q.Name, "format": q.Format,
			"size": q.Size, "margin": q.Margin, "level": q.Level, "foreground": q.Foreground, "background": q.Background,
			"logo": logo, "created_at": q.CreatedAt, "updated_at": q.UpdatedAt}); err != nil {
			return err
		}
	}
	return nil
}

func exportUTMTemplates(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	ts, err := store.UTMTemplates.FindUTMTemplates(ctx, wsID)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if err := e.write("utm_template", map[string]any{"id": t.ID, "name": t.Name, "utm_source": t.UTMSource,
			"utm_medium": t.UTMMedium, "utm_campaign": t.UTMCampaign, "created_at": t.CreatedAt, "updated_at": t.UpdatedAt}); err != nil {
			return err
		}
	}
	return nil
}

// exportTags writes the workspace's tags: those its links carry and
// those with a colour or a description.
func exportTags(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	ts, err := store.Tags.FindTags(ctx, wsID)
	if err != nil {
		return err
	}
	for _, t := range ts {
		d := map[string]any{"name": t.Name, "color": t.Color, "description": t.Description, "links": t.Links}
		if !t.UpdatedAt.IsZero() {
			d["updated_at"] = t.UpdatedAt
		}
		if err := e.write("tag", d); err != nil {
			return err
		}
	}
	return nil
}

// exportWebhooks writes the webhooks without their signing secrets.
func exportWebhooks(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	hooks, err := store.Webhooks.FindWebhooks(ctx, wsID)
	if err != nil {
		return err
	}
	for _, h := range hooks {
		if err := e.write("webhook", map[string]any{"id": h.ID, "url": h.URL, "events": nonNil(h.Events), "enabled": h.Enabled,
			"description": h.Description, "disabled_reason": h.DisabledReason}); err != nil {
			return err
		}
	}
	return nil
}

// exportKeys writes the API keys without their hashes.
func exportKeys(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	keys, err := store.Keys.FindKeys(ctx, wsID)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, k := range keys {
		if err := e.write("key", map[string]any{"id": k.ID, "name": k.Name, "scope": k.Scope, "start": k.Start,
			"state": k.State(now), "created_at": k.CreatedAt, "expires_at": k.ExpiresAt, "revoked_at": k.RevokedAt,
			"last_used_at": k.LastUsedAt, "request_count": k.RequestCount}); err != nil {
			return err
		}
	}
	return nil
}

// clickTimeFormat is a raw click's time as GET /v1/analytics/export writes
// it (RFC 3339 UTC with milliseconds).
const clickTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// exportClicks writes the raw clicks still kept, oldest first, as the
// analytics export has them.
func exportClicks(ctx context.Context, store *link.Store, wsID string, e *exporter) error {
	return store.Clicks.ExportClicks(ctx, wsID, time.Unix(0, 0), time.Now().Add(24*time.Hour), func(c *link.Click) error {
		return e.write("click", map[string]any{"time": c.Time.UTC().Format(clickTimeFormat), "link_id": c.LinkID, "campaign_id": c.CampaignID,
			"referrer": c.Referrer, "country": c.Country, "device": c.Device, "browser": c.Browser, "os": c.OS,
			"bot": c.Bot, "variant": c.Variant, "visitor": fmt.Sprintf("%016x", c.Visitor)})
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
