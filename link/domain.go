package link

import (
	"context"
	"crypto/rand"
	"net"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits and names of custom domains. They are part of the wire contract
// and documented in the OpenAPI document.
const (
	MaxHostnameLength = 253
	MaxLabelLength    = 63
	// VerificationTokenLength is the length of a domain's verification
	// token: lower-case letters and digits, about 165 bits.
	VerificationTokenLength = 32
	// VerificationType is the kind of record that proves control of a
	// hostname.
	VerificationType = "dns_txt"
	// VerificationPrefix is put before the hostname to name the TXT record.
	VerificationPrefix = "_linkbolt."
	// VerificationValuePrefix is put before the token in the TXT record.
	VerificationValuePrefix = "linkbolt-verify="
)

// Domain is a custom domain of a workspace: a hostname whose short links
// are served on it once it is verified. A hostname belongs to at most one
// workspace of the instance.
type Domain struct {
	ID          string
	WorkspaceID string
	// Hostname is lower case ASCII (internationalised names in their xn--
	// form), without port or trailing dot.
	Hostname string
	// Verified is set once a DNS TXT record proved control of the hostname,
	// or by the instance admin; only verified domains serve redirects and
	// take links.
	Verified   bool
	VerifiedAt *time.Time
	// VerificationToken is the secret the TXT record must carry.
	VerificationToken string
	// RootRedirectURL is where "/" on the domain redirects; empty means a
	// small page.
	RootRedirectURL string
	// NotFoundURL is where an unknown short link on the domain redirects;
	// empty means the 404 page.
	NotFoundURL string
	// AppleAppSiteAssociation and AndroidAssetLinks are the JSON the
	// domain serves at /.well-known/apple-app-site-association and
	// /.well-known/assetlinks.json, so that iOS and Android open its
	// links in an app (universal links, app links); empty: none (404).
	// Compact JSON: an object, an array.
	AppleAppSiteAssociation string
	AndroidAssetLinks       string
	// Links is the number of links on the domain, filled in by the service
	// where documented.
	Links     int
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CanTakeOver reports whether a new claim d of a hostname may take it from
// held, the domain of another workspace that holds it: only while held is
// not verified and has no links (it never served a visitor), and only
// when d is verified (its TXT record proved control of the name as it was
// claimed) or held is older than unverifiedTTL (0: never by age). A
// hostname someone claims and cannot verify is then not theirs for ever.
func CanTakeOver(d, held *Domain, unverifiedTTL time.Duration, now time.Time) bool {
	if held.WorkspaceID == d.WorkspaceID || held.Verified || held.Links > 0 {
		return false
	}
	return d.Verified || unverifiedTTL > 0 && !now.Before(held.CreatedAt.Add(unverifiedTTL))
}

// VerificationName returns the name of the TXT record that verifies d.
func (d *Domain) VerificationName() string { return VerificationPrefix + d.Hostname }

// VerificationValue returns the value the TXT record must have.
func (d *Domain) VerificationValue() string { return VerificationValuePrefix + d.VerificationToken }

// Normalize trims the URLs.
func (d *Domain) Normalize() {
	d.RootRedirectURL = strings.TrimSpace(d.RootRedirectURL)
	d.NotFoundURL = strings.TrimSpace(d.NotFoundURL)
}

// Validate checks a domain whose hostname NormalizeHostname produced, with
// the rules of redirect URLs (nil: no IDNA, no own hosts): the hostname
// must not be a host of a base URL, and the redirect URLs must not point
// back into this service or into the domain itself (which would loop).
// The redirect URLs are put in the form to store (NormalizeDestination).
func (d *Domain) Validate(rules *URLRules) error {
	var v validation
	if msg := CheckHostname(d.Hostname); msg != "" {
		v.add("hostname", "%s", msg)
	} else if rules != nil && rules.IsOwnName(d.Hostname) {
		v.add("hostname", "is a host of this server itself, which serves all links already")
	}
	self := rules
	if self == nil {
		self = &URLRules{}
	}
	self = self.WithDomain(d.Hostname)
	for _, f := range []struct {
		name string
		url  *string
	}{{"root_redirect_url", &d.RootRedirectURL}, {"not_found_url", &d.NotFoundURL}} {
		if *f.url == "" {
			continue
		}
		if u, msg := NormalizeDestination(*f.url, self); msg != "" {
			v.add(f.name, "%s", msg)
		} else {
			*f.url = u
		}
	}
	return v.err()
}

// NormalizeHostname returns the canonical form of a hostname as a person
// typed it: trimmed, lower case, internationalised labels in their ASCII
// (xn--) form, without a trailing dot; or what is wrong with it. toASCII
// is the IDNA conversion (UTS #46 lookup; the server passes
// idna.Lookup.ToASCII, this package keeping to the standard library); nil
// refuses names that are not ASCII.
func NormalizeHostname(raw string, toASCII func(string) (string, error)) (host, problem string) {
	h := strings.TrimSpace(raw)
	switch {
	case h == "":
		return "", "is required"
	case !utf8.ValidString(h):
		return "", "must be valid UTF-8"
	case strings.IndexFunc(h, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) >= 0:
		return "", "must not contain spaces or control characters"
	case strings.Contains(h, "://"):
		return "", "must be a bare hostname such as go.example.com, without a scheme (http:// or https://)"
	case strings.ContainsAny(h, "/?#"):
		return "", "must be a bare hostname such as go.example.com, without a path"
	case strings.Contains(h, "@"):
		return "", "must be a bare hostname such as go.example.com, without user@"
	case net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")) != nil:
		return "", "must be a domain name, not an IP address"
	case strings.ContainsAny(h, ":[]"):
		return "", "must be a bare hostname such as go.example.com, without a port"
	}
	h = strings.TrimSuffix(h, ".") // the root, written out: the same name
	ascii := true
	for i := 0; i < len(h); i++ {
		if h[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		// Checked before the IDNA conversion, whose errors are less clear.
		h = strings.ToLower(h)
		if msg := CheckHostname(h); msg != "" {
			return "", msg
		}
	} else if toASCII == nil {
		return "", "must be ASCII"
	}
	if toASCII != nil {
		a, err := toASCII(h)
		if err != nil {
			return "", "is not a valid internationalised hostname (" + strings.TrimPrefix(err.Error(), "idna: ") + ")"
		}
		h = strings.ToLower(a)
	}
	if msg := CheckHostname(h); msg != "" {
		return "", msg
	}
	return h, ""
}

// CheckHostname returns what is wrong with a normalised hostname, or "":
// at most 253 characters, at least two labels, each of 1 to 63 of a-z, 0-9
// and '-' not starting or ending with '-', and not an IP address.
func CheckHostname(h string) string {
	if h == "" {
		return "is required"
	}
	if len(h) > MaxHostnameLength {
		return "must be at most 253 characters"
	}
	if net.ParseIP(h) != nil {
		return "must be a domain name, not an IP address"
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return "must have at least two labels, like go.example.com (a single-label name cannot be verified in public DNS)"
	}
	for _, l := range labels {
		if l == "" {
			return "must not have empty labels (two dots in a row, or a leading dot)"
		}
		if len(l) > MaxLabelLength {
			return "must not have a label longer than 63 characters"
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				if c >= 'A' && c <= 'Z' {
					return "must be lower case"
				}
				return "may contain only letters, digits, '-' and dots"
			}
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "must not have a label that starts or ends with '-'"
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "must end in a name, not a number"
	}
	return ""
}

// NewVerificationToken returns VerificationTokenLength random lower-case
// letters and digits from crypto/rand, without modulo bias.
func NewVerificationToken() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var out [VerificationTokenLength]byte
	var buf [32]byte
	for n := 0; n < len(out); {
		_, _ = rand.Read(buf[:]) // never fails (the program crashes instead)
		for _, b := range buf {
			if b >= 36*7 {
				continue
			}
			out[n] = alphabet[b%36]
			if n++; n == len(out) {
				break
			}
		}
	}
	return string(out[:])
}

// DomainUpdate holds the fields of a PATCH; nil means "not given". The
// hostname never changes: a domain is deleted and added again instead.
type DomainUpdate struct {
	RootRedirectURL *string
	NotFoundURL     *string
	// AppleAppSiteAssociation and AndroidAssetLinks are compact JSON, ""
	// to remove the file.
	AppleAppSiteAssociation *string
	AndroidAssetLinks       *string
	// Verified is set by the instance admin only (the server checks).
	Verified *bool
}

// Apply copies the given fields onto d; a change of Verified sets or
// clears VerifiedAt with now.
func (u DomainUpdate) Apply(d *Domain, now time.Time) {
	if u.RootRedirectURL != nil {
		d.RootRedirectURL = *u.RootRedirectURL
	}
	if u.NotFoundURL != nil {
		d.NotFoundURL = *u.NotFoundURL
	}
	if u.AppleAppSiteAssociation != nil {
		d.AppleAppSiteAssociation = *u.AppleAppSiteAssociation
	}
	if u.AndroidAssetLinks != nil {
		d.AndroidAssetLinks = *u.AndroidAssetLinks
	}
	if u.Verified != nil && *u.Verified != d.Verified {
		d.SetVerified(*u.Verified, now)
	}
	d.Normalize()
}

// SetVerified marks d verified at now, or not verified.
func (d *Domain) SetVerified(verified bool, now time.Time) {
	d.Verified = verified
	if verified {
		at := now.UTC()
		d.VerifiedAt = &at
	} else {
		d.VerifiedAt = nil
	}
}

// DomainService keeps custom domains.
type DomainService interface {
	// CreateDomain stores a validated domain with its verification token;
	// sets ID. ECONFLICT if the hostname is a domain of any workspace of
	// the instance, but for a claim CanTakeOver lets d take (which is
	// deleted in the same transaction); ENOTFOUND for an unknown
	// workspace.
	CreateDomain(ctx context.Context, d *Domain, unverifiedTTL time.Duration) error
	// FindDomainByID returns a domain of the workspace with its number of
	// links. ENOTFOUND (also for a domain of another workspace).
	FindDomainByID(ctx context.Context, workspaceID, id string) (*Domain, error)
	// FindDomains returns the workspace's domains, newest first, each with
	// its number of links. ENOTFOUND for an unknown workspace.
	FindDomains(ctx context.Context, workspaceID string) ([]*Domain, error)
	// FindDomainByHostname returns the domain of a normalised hostname,
	// verified or not, of any workspace, without its number of links.
	// ENOTFOUND.
	FindDomainByHostname(ctx context.Context, hostname string) (*Domain, error)
	// FindVerifiedDomain returns the verified domain of a normalised
	// hostname for request routing, from memory: it is on the path of
	// every request. The domain has no number of links, may be shared and
	// must not be modified. ENOTFOUND when the hostname is not a verified
	// domain.
	FindVerifiedDomain(ctx context.Context, hostname string) (*Domain, error)
	// UpdateDomain applies an update (Verified included: the caller checks
	// who may set it), calls validate on the result inside the transaction
	// and returns the domain with its number of links. ENOTFOUND; the
	// error of validate unchanged.
	UpdateDomain(ctx context.Context, workspaceID, id string, upd DomainUpdate, validate func(*Domain) error) (*Domain, error)
	// SetDomainVerified marks a domain verified (now) or not. ENOTFOUND.
	SetDomainVerified(ctx context.Context, workspaceID, id string, verified bool) (*Domain, error)
	// DeleteDomain deletes a domain. ECONFLICT while links are on it, with
	// their number; ENOTFOUND.
	DeleteDomain(ctx context.Context, workspaceID, id string) error
}

// DomainVerifier proves that a workspace controls a custom domain
// (dnscheck.Domains looks its TXT record up).
type DomainVerifier interface {
	// VerifyDomain returns nil when the domain's verification record
	// (VerificationName) carries its VerificationValue, else an EINVALID
	// error that says what was found, in words a client may read.
	VerifyDomain(ctx context.Context, d *Domain) error
}

// MaxWellKnownFile bounds a domain's apple-app-site-association and
// assetlinks.json (Apple's limit for the former is 128 KB).
const MaxWellKnownFile = 64 << 10

// SameWellKnown reports whether two domains serve the same app files.
func (d *Domain) SameWellKnown(o *Domain) bool {
	return d.AppleAppSiteAssociation == o.AppleAppSiteAssociation && d.AndroidAssetLinks == o.AndroidAssetLinks
}
