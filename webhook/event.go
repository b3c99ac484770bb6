package webhook

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/linkbolt/linkbolt/link"
	"github.com/linkbolt/linkbolt/wire"
)

// Encoder is the wire format of webhook events, in one place: the body of
// every delivery and the data of each event type (link.clicked,
// link.created, link.updated, link.deleted, campaign.updated and the test
// ping). The storage services call it inside the transaction of the
// change that causes an event; internal/app hands it to them.
//
// A body is
//
//	{"id":"evt_…","type":"…","created_at":"…","workspace_id":"ws_…","data":…}
//
// with created_at in whole seconds (RFC 3339 UTC), like every time of the
// API.
type Encoder struct {
	// urls makes the short URLs of links, as the API shows them.
	urls wire.ShortURLs
}

var _ link.EventEncoder = (*Encoder)(nil)

// NewEncoder returns the encoder of a service at baseURL (server.base_url,
// checked by the configuration)
// whose custom domains serve short URLs with domainScheme (domains.scheme;
// empty means https).
func NewEncoder(baseURL *url.URL, domainScheme string) (*Encoder, error) {
	if baseURL == nil || baseURL.Host == "" {
		return nil, fmt.Errorf("webhook events: base URL %v is not an absolute URL", baseURL)
	}
	u := *baseURL
	u.Path, u.RawPath = "", ""
	return &Encoder{urls: wire.ShortURLs{Base: &u, DomainScheme: domainScheme}}, nil
}

// AppendEvent appends the body of a delivery of ev to b: its ID, Type,
// CreatedAt (in whole seconds), WorkspaceID and Data (JSON; empty is
// null).
func (e *Encoder) AppendEvent(b []byte, ev *link.Event) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, ev.ID)
	b = append(b, `,"type":`...)
	b = appendString(b, ev.Type)
	b = append(b, `,"created_at":"`...)
	b = ev.CreatedAt.UTC().Truncate(time.Second).AppendFormat(b, time.RFC3339)
	b = append(b, `","workspace_id":`...)
	b = appendString(b, ev.WorkspaceID)
	b = append(b, `,"data":`...)
	if len(ev.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, ev.Data...)
	}
	return append(b, '}')
}

// LinkData returns the data of a link.created, link.updated or
// link.deleted event: the link as the API shows it.
func (e *Encoder) LinkData(l *link.Link) ([]byte, error) {
	return json.Marshal(e.urls.Link(l))
}

// campaignData is the data of a campaign.updated event: the campaign as
// the API shows it and each changed field's value before and after.
type campaignData struct {
	Campaign wire.Campaign           `json:"campaign"`
	Changes  map[string]campaignDiff `json:"changes"`
}

type campaignDiff struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// CampaignData returns the data of a campaign.updated event: the campaign
// after the change and each changed field's value before and after.
// Creation is the change from empty values; deletion the change of status
// to "deleted".
func (e *Encoder) CampaignData(c *link.Campaign, changes map[string][2]string) ([]byte, error) {
	data := campaignData{
		Campaign: wire.NewCampaign(c),
		Changes:  make(map[string]campaignDiff, len(changes)),
	}
	for f, v := range changes {
		data.Changes[f] = campaignDiff{From: v[0], To: v[1]}
	}
	return json.Marshal(data)
}

// AppendClickData appends the data of a link.clicked event to b: the
// click's dimensions as analytics store them, never its address, user
// agent or visitor hash. It is written by hand (no allocation): a batch of
// clicks writes one event per click.
//
//	{"link_id":"lnk_…","time":"…","referrer":"…","country":"…","device":"…","browser":"…","os":"…","bot":false}
func (e *Encoder) AppendClickData(b []byte, c *link.ClickEvent) []byte {
	return AppendClickData(b, c)
}

// AppendClickData appends the data of a link.clicked event to b (see
// Encoder.AppendClickData): the live click stream sends the same.
func AppendClickData(b []byte, c *link.ClickEvent) []byte {
	b = append(b, `{"link_id":`...)
	b = appendString(b, c.LinkID)
	b = append(b, `,"time":`...)
	b = appendTime(b, c.Time.UTC())
	for _, f := range [...]struct{ name, value string }{
		{`,"referrer":`, c.Referrer}, {`,"country":`, c.Country}, {`,"device":`, c.Device},
		{`,"browser":`, c.Browser}, {`,"os":`, c.OS},
	} {
		b = append(b, f.name...)
		b = appendString(b, f.value)
	}
	b = append(b, `,"bot":`...)
	b = strconv.AppendBool(b, c.Bot)
	return append(b, '}')
}

// pingData is the data of every ping.
var pingData = []byte(`{"message":"ping from linkbolt"}`)

// PingData returns the data of a ping (POST /v1/webhooks/{id}/test).
func (e *Encoder) PingData() ([]byte, error) { return pingData, nil }

// clickTimeFormat is a click's time: RFC 3339 UTC in milliseconds, as the
// raw clicks of an export have it.
const clickTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// appendTime appends t as a JSON string in clickTimeFormat.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, clickTimeFormat)
	return append(b, '"')
}

// appendString appends s as a JSON string, escaped as encoding/json does
// it (without its HTML escaping): invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
