package link

import "strings"

// Pixels are the retargeting pixels of a workspace: the IDs that the
// interstitial of a link with Retargeting gives each ad network's script.
// An empty ID is a network not used.
type Pixels struct {
	// Meta is a Meta (Facebook) pixel ID: 10 to 20 digits.
	Meta string
	// Google is a Google tag ID: a Google Analytics 4 measurement ID
	// ("G-" and 4 to 16 letters or digits, G-AB12CD34EF) or a Google Ads
	// conversion ID ("AW-" and 6 to 16 digits, AW-123456789).
	Google string
	// LinkedIn is a LinkedIn Insight Tag partner ID: 3 to 12 digits.
	LinkedIn string
}

// Any reports whether p names at least one pixel.
func (p *Pixels) Any() bool { return p.Meta != "" || p.Google != "" || p.LinkedIn != "" }

// Normalize trims the IDs and writes a Google tag ID in upper case.
func (p *Pixels) Normalize() {
	p.Meta, p.LinkedIn = strings.TrimSpace(p.Meta), strings.TrimSpace(p.LinkedIn)
	p.Google = strings.ToUpper(strings.TrimSpace(p.Google))
}

// validate checks the IDs' formats strictly: they are written into the
// interstitial's scripts.
func (p *Pixels) validate(v *validation) {
	p.Normalize()
	if p.Meta != "" && !digits(p.Meta, 10, 20) {
		v.add("pixels.meta", "must be a Meta pixel ID: 10 to 20 digits")
	}
	if g := p.Google; g != "" {
		ok := false
		if rest, found := strings.CutPrefix(g, "G-"); found {
			ok = alnumUpper(rest, 4, 16)
		} else if rest, found := strings.CutPrefix(g, "AW-"); found {
			ok = digits(rest, 6, 16)
		}
		if !ok {
			v.add("pixels.google", "must be a Google tag ID: G- and 4 to 16 letters or digits (Analytics), or AW- and 6 to 16 digits (Ads)")
		}
	}
	if p.LinkedIn != "" && !digits(p.LinkedIn, 3, 12) {
		v.add("pixels.linkedin", "must be a LinkedIn partner ID: 3 to 12 digits")
	}
}

func digits(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func alnumUpper(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}
