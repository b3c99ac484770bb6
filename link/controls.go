package link

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of the link controls: password, rules, variants, social card.
const (
	MaxRules          = 20
	MinVariants       = 2
	MaxVariants       = 10
	MinLinkPassword   = 4
	MaxLinkPassword   = 72 // all bcrypt reads
	MaxRuleValue      = 200
	MaxRuleIPs        = 50
	MaxOGTitle        = 200
	MaxOGDescription  = 500
	variantWeightSum  = 100
	maxVariantWeight  = 100
	minVariantWeight  = 1
	ruleQueryNameSize = 100
)

// RuleCondition is the "if" of a targeting rule: every condition given
// must hold. Device, OS and Browser are compared case-insensitively with
// the classification analytics makes of the user agent; Country is an ISO
// 3166-1 alpha-2 code; Language is a primary language tag ("de" matches
// "de-AT"). IP holds when the visitor's address is in any of the ranges
// (a single address is a /32 or /128), parsed once when the rule is made
// or loaded. After and Before bound the instants the rule holds: at or
// after After, and before Before.
type RuleCondition struct {
	Device   string
	OS       string
	Browser  string
	Country  string
	Language string
	Query    *QueryCondition
	IP       []netip.Prefix
	After    *time.Time
	Before   *time.Time
}

// QueryCondition holds when the request's query has the parameter Name
// with the value Value.
type QueryCondition struct {
	Name  string
	Value string
}

// Empty reports whether the condition tests nothing.
func (c RuleCondition) Empty() bool {
	return c.Device == "" && c.OS == "" && c.Browser == "" && c.Country == "" && c.Language == "" && c.Query == nil &&
		len(c.IP) == 0 && c.After == nil && c.Before == nil
}

// ParseIPRange reads an IP address or CIDR prefix of a rule, IPv4 or
// IPv6: a single address is the prefix of its full length, an IPv4-mapped
// IPv6 address is its IPv4 form, and a prefix is masked to its network
// ("10.1.2.3/8" is 10.0.0.0/8). ok is false for anything else, a zoned
// address included.
func ParseIPRange(s string) (p netip.Prefix, ok bool) {
	s = strings.TrimSpace(s)
	if strings.IndexByte(s, '/') >= 0 {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, false
		}
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		return p.Masked(), true
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), true
}

// ContainsAddr reports whether a is in one of the condition's IP ranges.
func (c *RuleCondition) ContainsAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.Unmap()
	for _, p := range c.IP {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// InWindow reports whether now is within the condition's After and Before.
func (c *RuleCondition) InWindow(now time.Time) bool {
	return (c.After == nil || !now.Before(*c.After)) && (c.Before == nil || now.Before(*c.Before))
}

// Rule sends the visitors that match If to Then instead of the link's
// destination.
type Rule struct {
	If   RuleCondition
	Then string
}

// Variant is one destination of an A/B split with its share of visitors
// in percent.
type Variant struct {
	DestinationURL string
	Weight         int
}

// OG is the social card a link shows link-preview bots.
type OG struct {
	Title       string
	Description string
	ImageURL    string
}

// HasControls reports whether the redirect of l must look at more than its
// destination: a password, app destinations, rules, variants, a social
// card, or an interstitial (EscapeInApp, Retargeting). A link with none
// pays this one call on its redirect.
func (l *Link) HasControls() bool {
	return l.PasswordHash != "" || len(l.Rules) > 0 || len(l.Variants) > 0 || l.OG != nil || l.IOSURL != "" || l.AndroidURL != "" ||
		l.EscapeInApp || l.Retargeting
}

// CheckLinkPassword returns what is wrong with a link's password, or "".
func CheckLinkPassword(pw string) string {
	switch n := utf8.RuneCountInString(pw); {
	case n < MinLinkPassword:
		return fmt.Sprintf("must be at least %d characters", MinLinkPassword)
	case len(pw) > MaxLinkPassword:
		return fmt.Sprintf("must be at most %d bytes", MaxLinkPassword)
	}
	return ""
}

// normalizeControls trims the controls' text and drops an empty social card.
func (l *Link) normalizeControls() {
	l.IOSURL = strings.TrimSpace(l.IOSURL)
	l.AndroidURL = strings.TrimSpace(l.AndroidURL)
	for i := range l.Rules {
		r := &l.Rules[i]
		r.Then = strings.TrimSpace(r.Then)
		r.If.Device = strings.ToLower(strings.TrimSpace(r.If.Device))
		r.If.OS = strings.TrimSpace(r.If.OS)
		r.If.Browser = strings.TrimSpace(r.If.Browser)
		r.If.Country = strings.ToUpper(strings.TrimSpace(r.If.Country))
		r.If.Language = strings.ToLower(strings.TrimSpace(r.If.Language))
		if len(r.If.IP) == 0 {
			r.If.IP = nil
		}
		for _, t := range []**time.Time{&r.If.After, &r.If.Before} {
			if *t != nil {
				u := (*t).UTC()
				*t = &u
			}
		}
	}
	for i := range l.Variants {
		l.Variants[i].DestinationURL = strings.TrimSpace(l.Variants[i].DestinationURL)
	}
	if l.OG != nil {
		l.OG.Title = strings.TrimSpace(l.OG.Title)
		l.OG.Description = strings.TrimSpace(l.OG.Description)
		l.OG.ImageURL = strings.TrimSpace(l.OG.ImageURL)
		if *l.OG == (OG{}) {
			l.OG = nil
		}
	}
	if len(l.Rules) == 0 {
		l.Rules = nil
	}
	if len(l.Variants) == 0 {
		l.Variants = nil
	}
}

// validateControls checks the rules, variants and social card of l and
// normalises their destinations as the main one's.
func (l *Link) validateControls(v *validation, rules *URLRules) {
	for _, f := range []struct {
		name string
		url  *string
	}{{"ios_url", &l.IOSURL}, {"android_url", &l.AndroidURL}} {
		if *f.url == "" {
			continue
		}
		if dest, msg := NormalizeDestination(*f.url, rules); msg != "" {
			v.add(f.name, "%s", msg)
		} else {
			*f.url = dest
		}
	}
	if len(l.Rules) > MaxRules {
		v.add("rules", "at most %d rules", MaxRules)
	}
	for i := range l.Rules {
		r := &l.Rules[i]
		f := fmt.Sprintf("rules[%d]", i)
		if r.If.Empty() {
			v.add(f+".if", "must have at least one condition (device, os, browser, country, language, query, ip, after or before)")
		}
		validateRuleWhoWhen(v, f, &r.If)
		switch r.If.Device {
		case "", "desktop", "mobile", "tablet":
		default:
			v.add(f+".if.device", "must be desktop, mobile or tablet")
		}
		if c := r.If.Country; c != "" && (len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z') {
			v.add(f+".if.country", "must be a two-letter ISO 3166-1 country code")
		}
		if lang := r.If.Language; lang != "" && !validLanguage(lang) {
			v.add(f+".if.language", "must be a primary language tag of 2 to 8 letters, e.g. de")
		}
		if len(r.If.OS) > MaxRuleValue {
			v.add(f+".if.os", "must be at most %d bytes", MaxRuleValue)
		}
		if len(r.If.Browser) > MaxRuleValue {
			v.add(f+".if.browser", "must be at most %d bytes", MaxRuleValue)
		}
		if q := r.If.Query; q != nil {
			if q.Name == "" || len(q.Name) > ruleQueryNameSize {
				v.add(f+".if.query.name", "must be 1 to %d bytes", ruleQueryNameSize)
			}
			if len(q.Value) > MaxRuleValue {
				v.add(f+".if.query.value", "must be at most %d bytes", MaxRuleValue)
			}
		}
		if dest, msg := NormalizeDestination(r.Then, rules); msg != "" {
			v.add(f+".then", "%s", msg)
		} else {
			r.Then = dest
		}
	}
	if n := len(l.Variants); n > 0 {
		if n < MinVariants || n > MaxVariants {
			v.add("variants", "must have %d to %d variants", MinVariants, MaxVariants)
		}
		sum := 0
		for i := range l.Variants {
			va := &l.Variants[i]
			f := fmt.Sprintf("variants[%d]", i)
			if va.Weight < minVariantWeight || va.Weight > maxVariantWeight {
				v.add(f+".weight", "must be 1 to 100")
			}
			sum += va.Weight
			if dest, msg := NormalizeDestination(va.DestinationURL, rules); msg != "" {
				v.add(f+".destination_url", "%s", msg)
			} else {
				va.DestinationURL = dest
			}
		}
		if sum != variantWeightSum {
			v.add("variants", "weights must sum to 100 (they sum to %d)", sum)
		}
	}
	if og := l.OG; og != nil {
		if utf8.RuneCountInString(og.Title) > MaxOGTitle {
			v.add("og.title", "must be at most %d characters", MaxOGTitle)
		}
		if utf8.RuneCountInString(og.Description) > MaxOGDescription {
			v.add("og.description", "must be at most %d characters", MaxOGDescription)
		}
		if og.ImageURL != "" {
			if img, msg := NormalizeDestination(og.ImageURL, nil); msg != "" {
				v.add("og.image_url", "%s", msg)
			} else {
				og.ImageURL = img
			}
		}
	}
}

func validLanguage(s string) bool {
	if len(s) < 2 || len(s) > 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// validateRuleWhoWhen checks the IP ranges and the time window of a rule's
// condition c, named f in messages.
func validateRuleWhoWhen(v *validation, f string, c *RuleCondition) {
	if len(c.IP) > MaxRuleIPs {
		v.add(f+".if.ip", "at most %d addresses or ranges", MaxRuleIPs)
	}
	for j, p := range c.IP {
		if !p.IsValid() {
			v.add(fmt.Sprintf("%s.if.ip[%d]", f, j), "must be an IP address or a CIDR range, like 203.0.113.0/24 or 2001:db8::/32")
		}
	}
	if c.After != nil && c.Before != nil && !c.After.Before(*c.Before) {
		v.add(f+".if.before", "must be later than after")
	}
}
