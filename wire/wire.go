// Package wire owns the JSON shapes of linkbolt's objects as clients see
// them, in one place: the API's answers (server) and the data of webhook
// events (webhook) show a link and a campaign alike, so both build them
// here. It also owns the CSV cell writer every CSV export goes through
// (CSVWriter). It imports link and the standard library's neighbours only.
package wire

import (
	"cmp"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/idna"

	"github.com/linkbolt/linkbolt/link"
)

// TimeFormat is the format of every time on the wire: RFC 3339 in UTC,
// in whole seconds.
const TimeFormat = time.RFC3339

// Time formats t as every time on the wire.
func Time(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Optional is s, or nil (JSON null) when s is empty.
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// DestinationIDNA converts the host names of the URLs linkbolt redirects
// to as browsers do (the WHATWG URL standard's "domain to ASCII"): UTS #46
// mapping, non-transitional (ß stays ß), with the Bidi and joiner checks,
// without STD3 and hyphen rules, so that "my_host" and "r3---sn-x" hosts
// stay valid as they are in browsers. Full-width letters and the
// ideographic full stop U+3002 map to their ASCII forms.
var DestinationIDNA = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false),
	idna.CheckHyphens(false), idna.StrictDomainName(false))

// DestinationHosts returns the host of a stored destination in ASCII
// (A-labels, lower case) and for display (U-labels), so that a person can
// tell https://xn--pple-43d.com (Cyrillic а) from https://apple.com.
func DestinationHosts(dest string) (ascii, unicode string) {
	u, err := url.Parse(dest)
	if err != nil {
		return "", ""
	}
	h := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		return "[" + strings.ToLower(h) + "]", "[" + strings.ToLower(h) + "]"
	}
	ascii = strings.ToLower(strings.TrimSuffix(h, "."))
	if a, err := DestinationIDNA.ToASCII(ascii); err == nil {
		ascii = a
	}
	unicode = ascii
	if strings.Contains(ascii, "xn--") {
		if u, err := DestinationIDNA.ToUnicode(ascii); err == nil {
			unicode = u
		}
	}
	return ascii, unicode
}

// ShortURLs makes the short URLs of links: on the primary base URL
// (server.base_url), or on a link's custom domain with DomainScheme
// (domains.scheme; empty means https).
type ShortURLs struct {
	// Base is the primary base URL, with no path.
	Base         *url.URL
	DomainScheme string
}

// ShortURL returns the short URL of l.
func (s ShortURLs) ShortURL(l *link.Link) string {
	if l.Domain != "" {
		return cmp.Or(s.DomainScheme, "https") + "://" + l.Domain + "/" + l.Alias
	}
	return s.Base.String() + "/" + l.Alias
}

// Link is a link as the API shows it (GET /v1/links/{id}) and as link.*
// events carry it.
type Link struct {
	ID             string `json:"id"`
	ShortURL       string `json:"short_url"`
	Alias          string `json:"alias"`
	Domain         string `json:"domain"`
	DestinationURL string `json:"destination_url"`
	// DestinationHost and DestinationHostUnicode show the host of the
	// destination as A-labels (punycode) and as a person reads it.
	DestinationHost        string   `json:"destination_host"`
	DestinationHostUnicode string   `json:"destination_host_unicode"`
	Tags                   []string `json:"tags"`
	UTMSource              *string  `json:"utm_source"`
	UTMMedium              *string  `json:"utm_medium"`
	UTMCampaign            *string  `json:"utm_campaign"`
	CampaignID             *string  `json:"campaign_id"`
	RedirectCode           int      `json:"redirect_code"`
	Clicks                 int64    `json:"clicks"`
	CreatedAt              string   `json:"created_at"`
	UpdatedAt              string   `json:"updated_at"`
	ForwardPath            bool     `json:"forward_path"`
	ForwardQuery           bool     `json:"forward_query"`
	ExternalID             *string  `json:"external_id"`
	Crawlable              bool     `json:"crawlable"`
	PublicStats            bool     `json:"public_stats"`
	// DestinationCheck is the last check of the destination, shown when
	// the workspace checks its destinations (absent otherwise).
	DestinationCheck   *LinkCheck `json:"destination_check,omitempty"`
	EscapeInAppBrowser bool       `json:"escape_in_app_browser"`
	Retargeting        bool       `json:"retargeting"`
	// link controls: password, rules, variants, social card
	LinkControls

	LinkLimits
}

// Link returns l as the API shows it.
func (s ShortURLs) Link(l *link.Link) Link {
	tags := l.Tags
	if tags == nil {
		tags = []string{}
	}
	domain := l.Domain
	if domain == "" {
		domain = s.Base.Host
	}
	host, hostUnicode := DestinationHosts(l.DestinationURL)
	return Link{
		ID: l.ID, ShortURL: s.ShortURL(l), Alias: l.Alias, Domain: domain,
		DestinationURL: l.DestinationURL, DestinationHost: host, DestinationHostUnicode: hostUnicode, Tags: tags,
		UTMSource: Optional(l.UTMSource), UTMMedium: Optional(l.UTMMedium), UTMCampaign: Optional(l.UTMCampaign),
		CampaignID: Optional(l.CampaignID), RedirectCode: l.RedirectCode, Clicks: l.Clicks,
		CreatedAt: Time(l.CreatedAt), UpdatedAt: Time(l.UpdatedAt),
		ForwardPath: l.ForwardPath, ForwardQuery: l.ForwardQuery, ExternalID: Optional(l.ExternalID), Crawlable: l.Crawlable, PublicStats: l.PublicStats,
		EscapeInAppBrowser: l.EscapeInApp, Retargeting: l.Retargeting,
		LinkControls:     NewLinkControls(l),
		LinkLimits:       newLinkLimits(&l.LinkLimits),
		DestinationCheck: NewLinkCheck(l),
	}
}

// LinkCheck is the last check of a link's destination as the API shows
// it: status ok, broken or unchecked; the final HTTP status, the error
// and the time of the check, null when there is none.
type LinkCheck struct {
	Status     string  `json:"status"`
	HTTPStatus *int    `json:"http_status"`
	Error      *string `json:"error"`
	CheckedAt  *string `json:"checked_at"`
}

// NewLinkCheck returns l's check as the API shows it, nil when l has none
// (its workspace does not check destinations). A check of an earlier
// destination is shown unchecked.
func NewLinkCheck(l *link.Link) *LinkCheck {
	c := l.Check
	if c == nil {
		return nil
	}
	if c.Status == "" || c.DestinationURL != "" && c.DestinationURL != l.DestinationURL {
		return &LinkCheck{Status: string(link.CheckUnchecked)}
	}
	out := &LinkCheck{Status: string(c.Status)}
	if c.HTTPStatus != 0 {
		out.HTTPStatus = &c.HTTPStatus
	}
	if c.Error != "" {
		out.Error = &c.Error
	}
	if !c.CheckedAt.IsZero() {
		t := Time(c.CheckedAt)
		out.CheckedAt = &t
	}
	return out
}

// Campaign is a campaign as the API shows it (GET /v1/campaigns/{id}) and
// as campaign.updated events carry it.
type Campaign struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Status      string  `json:"status"`
	UTMSource   *string `json:"utm_source"`
	UTMMedium   *string `json:"utm_medium"`
	UTMCampaign *string `json:"utm_campaign"`
	Links       int     `json:"links"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
}

// UTMTemplate is a UTM template as the API shows it.
type UTMTemplate struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	UTMSource   *string `json:"utm_source"`
	UTMMedium   *string `json:"utm_medium"`
	UTMCampaign *string `json:"utm_campaign"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
}

// NewUTMTemplate returns t as the API shows it.
func NewUTMTemplate(t *link.UTMTemplate) UTMTemplate {
	return UTMTemplate{ID: t.ID, Name: t.Name,
		UTMSource: Optional(t.UTMSource), UTMMedium: Optional(t.UTMMedium), UTMCampaign: Optional(t.UTMCampaign),
		CreatedAt: Time(t.CreatedAt), UpdatedAt: Time(t.UpdatedAt)}
}

// Tag is a workspace's tag as the API shows it: null where it has no
// colour, description or change of its own.
type Tag struct {
	Name        string  `json:"name"`
	Color       *string `json:"color"`
	Description *string `json:"description"`
	Links       int     `json:"links"`
	UpdatedAt   *string `json:"updated_at"`
}

// NewTag returns t as the API shows it.
func NewTag(t *link.Tag) Tag {
	out := Tag{Name: t.Name, Color: Optional(t.Color), Description: Optional(t.Description), Links: t.Links}
	if !t.UpdatedAt.IsZero() {
		u := Time(t.UpdatedAt)
		out.UpdatedAt = &u
	}
	return out
}

// NewCampaign returns c as the API shows it.
func NewCampaign(c *link.Campaign) Campaign {
	return Campaign{ID: c.ID, Name: c.Name, Status: string(c.Status),
		UTMSource: Optional(c.UTMSource), UTMMedium: Optional(c.UTMMedium), UTMCampaign: Optional(c.UTMCampaign),
		Links: c.Links, CreatedAt: Time(c.CreatedAt), UpdatedAt: Time(c.UpdatedAt)}
}
