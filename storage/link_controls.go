package storage

import (
	"net/netip"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// linkControls is the part of a link record for the link controls:
// password, rules, variants, social card. Every field is omitted when
// unused, so a plain link's record is as it was.
type linkControls struct {
	Password string          `json:"pw,omitempty"`
	Rules    []ruleRecord    `json:"rules,omitempty"`
	Variants []variantRecord `json:"variants,omitempty"`
	OG       *ogRecord       `json:"og,omitempty"`
	// IOS and Android are the app destinations.
	IOS     string `json:"ios,omitempty"`
	Android string `json:"android,omitempty"`
}

type ruleRecord struct {
	Device     string         `json:"device,omitempty"`
	OS         string         `json:"os,omitempty"`
	Browser    string         `json:"browser,omitempty"`
	Country    string         `json:"country,omitempty"`
	Language   string         `json:"language,omitempty"`
	QueryName  string         `json:"qn,omitempty"`
	QueryValue string         `json:"qv,omitempty"`
	HasQuery   bool           `json:"q,omitempty"`
	IP         []netip.Prefix `json:"ip,omitempty"`
	After      *time.Time     `json:"after,omitempty"`
	Before     *time.Time     `json:"before,omitempty"`
	Then       string         `json:"then"`
}

type variantRecord struct {
	Destination string `json:"dest"`
	Weight      int    `json:"weight"`
}

type ogRecord struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	ImageURL    string `json:"image_url,omitempty"`
}

// setControls copies the controls of l onto the record.
func (c *linkControls) setControls(l *link.Link) {
	c.Password = l.PasswordHash
	c.IOS, c.Android = l.IOSURL, l.AndroidURL
	c.Rules = nil
	for _, r := range l.Rules {
		rr := ruleRecord{Device: r.If.Device, OS: r.If.OS, Browser: r.If.Browser, Country: r.If.Country,
			Language: r.If.Language, IP: r.If.IP, After: r.If.After, Before: r.If.Before, Then: r.Then}
		if q := r.If.Query; q != nil {
			rr.HasQuery, rr.QueryName, rr.QueryValue = true, q.Name, q.Value
		}
		c.Rules = append(c.Rules, rr)
	}
	c.Variants = nil
	for _, v := range l.Variants {
		c.Variants = append(c.Variants, variantRecord{Destination: v.DestinationURL, Weight: v.Weight})
	}
	c.OG = nil
	if l.OG != nil {
		c.OG = &ogRecord{Title: l.OG.Title, Description: l.OG.Description, ImageURL: l.OG.ImageURL}
	}
}

// controls copies the record's controls onto l.
func (c *linkControls) controls(l *link.Link) {
	l.PasswordHash = c.Password
	l.IOSURL, l.AndroidURL = c.IOS, c.Android
	if len(c.Rules) > 0 {
		l.Rules = make([]link.Rule, len(c.Rules))
		for i, r := range c.Rules {
			l.Rules[i] = link.Rule{Then: r.Then, If: link.RuleCondition{Device: r.Device, OS: r.OS,
				Browser: r.Browser, Country: r.Country, Language: r.Language, IP: r.IP, After: r.After, Before: r.Before}}
			if r.HasQuery {
				l.Rules[i].If.Query = &link.QueryCondition{Name: r.QueryName, Value: r.QueryValue}
			}
		}
	}
	if len(c.Variants) > 0 {
		l.Variants = make([]link.Variant, len(c.Variants))
		for i, v := range c.Variants {
			l.Variants[i] = link.Variant{DestinationURL: v.Destination, Weight: v.Weight}
		}
	}
	if c.OG != nil {
		l.OG = &link.OG{Title: c.OG.Title, Description: c.OG.Description, ImageURL: c.OG.ImageURL}
	}
}
