package wire

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// LinkControls is the part of Link for the link controls: password, rules,
// variants, social card. The password itself is write-only: answers say
// only whether there is one.
type LinkControls struct {
	IOSURL      *string   `json:"ios_url"`
	AndroidURL  *string   `json:"android_url"`
	HasPassword bool      `json:"has_password"`
	Rules       []Rule    `json:"rules"`
	Variants    []Variant `json:"variants"`
	OG          *OG       `json:"og"`
}

// Rule is a targeting rule on the wire.
type Rule struct {
	If   RuleCondition `json:"if"`
	Then string        `json:"then"`
}

// RuleCondition is the "if" of a Rule; absent conditions are omitted.
type RuleCondition struct {
	Device   string          `json:"device,omitempty"`
	OS       string          `json:"os,omitempty"`
	Browser  string          `json:"browser,omitempty"`
	Country  string          `json:"country,omitempty"`
	Language string          `json:"language,omitempty"`
	Query    *QueryCondition `json:"query,omitempty"`
	IP       []string        `json:"ip,omitempty"`
	After    string          `json:"after,omitempty"`
	Before   string          `json:"before,omitempty"`
}

// QueryCondition matches a query parameter.
type QueryCondition struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Variant is one destination of an A/B split.
type Variant struct {
	DestinationURL string `json:"destination_url"`
	Weight         int    `json:"weight"`
}

// OG is a link's social card.
type OG struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	ImageURL    string `json:"image_url"`
}

// NewLinkControls returns the controls of l as the API shows them.
func NewLinkControls(l *link.Link) LinkControls {
	c := LinkControls{IOSURL: Optional(l.IOSURL), AndroidURL: Optional(l.AndroidURL), HasPassword: l.PasswordHash != "", Rules: []Rule{}, Variants: []Variant{}}
	for _, r := range l.Rules {
		wr := Rule{Then: r.Then, If: RuleCondition{Device: r.If.Device, OS: r.If.OS, Browser: r.If.Browser,
			Country: r.If.Country, Language: r.If.Language}}
		if q := r.If.Query; q != nil {
			wr.If.Query = &QueryCondition{Name: q.Name, Value: q.Value}
		}
		for _, p := range r.If.IP {
			wr.If.IP = append(wr.If.IP, p.String())
		}
		if t := r.If.After; t != nil {
			wr.If.After = t.UTC().Format(time.RFC3339Nano)
		}
		if t := r.If.Before; t != nil {
			wr.If.Before = t.UTC().Format(time.RFC3339Nano)
		}
		c.Rules = append(c.Rules, wr)
	}
	for _, v := range l.Variants {
		c.Variants = append(c.Variants, Variant{DestinationURL: v.DestinationURL, Weight: v.Weight})
	}
	if l.OG != nil {
		c.OG = &OG{Title: l.OG.Title, Description: l.OG.Description, ImageURL: l.OG.ImageURL}
	}
	return c
}

// LinkRules returns wire rules as the domain's. IP ranges and instants
// are parsed here, once: an entry that is neither an address nor a CIDR
// range, or an instant that is not RFC 3339, is a validation error naming
// its field (rules[0].if.ip[2]). Lists longer than link.MaxRuleIPs are
// left whole for the link's validation to refuse.
func LinkRules(in []Rule) ([]link.Rule, error) {
	out := make([]link.Rule, len(in))
	var bad []link.FieldError
	for i, r := range in {
		out[i] = link.Rule{Then: r.Then, If: link.RuleCondition{Device: r.If.Device, OS: r.If.OS,
			Browser: r.If.Browser, Country: r.If.Country, Language: r.If.Language}}
		if q := r.If.Query; q != nil {
			out[i].If.Query = &link.QueryCondition{Name: q.Name, Value: q.Value}
		}
		if len(r.If.IP) > 0 {
			out[i].If.IP = make([]netip.Prefix, len(r.If.IP))
		}
		for j, s := range r.If.IP {
			p, ok := link.ParseIPRange(s)
			if !ok {
				bad = append(bad, link.FieldError{Field: fmt.Sprintf("rules[%d].if.ip[%d]", i, j),
					Message: fmt.Sprintf("%q is not an IP address or a CIDR range, like 203.0.113.0/24 or 2001:db8::/32", s)})
			}
			out[i].If.IP[j] = p
		}
		for _, t := range []struct {
			name string
			in   string
			out  **time.Time
		}{{"after", r.If.After, &out[i].If.After}, {"before", r.If.Before, &out[i].If.Before}} {
			if t.in == "" {
				continue
			}
			v, err := time.Parse(time.RFC3339, t.in)
			if err != nil {
				bad = append(bad, link.FieldError{Field: fmt.Sprintf("rules[%d].if.%s", i, t.name),
					Message: fmt.Sprintf("%q is not an RFC 3339 instant, like 2026-12-31T23:59:59Z", t.in)})
				continue
			}
			*t.out = &v
		}
	}
	if len(bad) > 0 {
		return nil, &link.Error{Code: link.EINVALID, Message: bad[0].Field + ": " + bad[0].Message, Fields: bad}
	}
	return out, nil
}

// LinkVariants returns wire variants as the domain's.
func LinkVariants(in []Variant) []link.Variant {
	out := make([]link.Variant, len(in))
	for i, v := range in {
		out[i] = link.Variant{DestinationURL: v.DestinationURL, Weight: v.Weight}
	}
	return out
}

// LinkOG returns a wire social card as the domain's; nil stays nil.
func LinkOG(in *OG) *link.OG {
	if in == nil {
		return nil
	}
	return &link.OG{Title: in.Title, Description: in.Description, ImageURL: in.ImageURL}
}
