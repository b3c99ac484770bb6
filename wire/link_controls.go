package wire

import "github.com/linkbolt/linkbolt/link"

// LinkControls is the part of Link for the link controls: password, rules,
// variants, social card. The password itself is write-only: answers say
// only whether there is one.
type LinkControls struct {
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
	c := LinkControls{HasPassword: l.PasswordHash != "", Rules: []Rule{}, Variants: []Variant{}}
	for _, r := range l.Rules {
		wr := Rule{Then: r.Then, If: RuleCondition{Device: r.If.Device, OS: r.If.OS, Browser: r.If.Browser,
			Country: r.If.Country, Language: r.If.Language}}
		if q := r.If.Query; q != nil {
			wr.If.Query = &QueryCondition{Name: q.Name, Value: q.Value}
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

// LinkRules returns wire rules as the domain's.
func LinkRules(in []Rule) []link.Rule {
	out := make([]link.Rule, len(in))
	for i, r := range in {
		out[i] = link.Rule{Then: r.Then, If: link.RuleCondition{Device: r.If.Device, OS: r.If.OS,
			Browser: r.If.Browser, Country: r.If.Country, Language: r.If.Language}}
		if q := r.If.Query; q != nil {
			out[i].If.Query = &link.QueryCondition{Name: q.Name, Value: q.Value}
		}
	}
	return out
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
