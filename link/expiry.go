package link

import (
	"strings"
	"time"
	"unicode/utf8"
)

// MaxTitleLength bounds a link's title, in characters.
const MaxTitleLength = 200

// MaxNoteLength bounds a link's note, in characters.
const MaxNoteLength = 2000

// LinkLimits are the link controls of expiry and limits: when a link stops
// sending visitors to its destination, where it sends them then, and how
// it is listed. The zero value is a plain link.
type LinkLimits struct {
	// ExpiresAt is the instant from which the link has expired; nil never.
	ExpiresAt *time.Time
	// MaxClicks is the number of clicks after which the link is used up;
	// 0 is no limit.
	MaxClicks int64
	// ExpiredURL is where an expired or used-up link redirects; empty
	// answers 410 Gone.
	ExpiredURL string
	// Archived hides the link from default lists; it keeps redirecting.
	Archived bool
	// Title names the link for people (lists, the preview page).
	Title string
	// Note is what the workspace's people write about the link for each
	// other (several lines; lists and searches, never the public pages).
	Note string
}

// Limited reports whether a redirect of the link must check its expiry or
// its click limit: false for a plain link.
func (c *LinkLimits) Limited() bool { return c.ExpiresAt != nil || c.MaxClicks > 0 }

// ExpiredAt reports whether the link has expired at now: from the instant
// ExpiresAt on.
func (c *LinkLimits) ExpiredAt(now time.Time) bool {
	return c.ExpiresAt != nil && !now.Before(*c.ExpiresAt)
}

func (c *LinkLimits) normalize() {
	c.ExpiredURL = strings.TrimSpace(c.ExpiredURL)
	c.Title = strings.TrimSpace(c.Title)
	c.Note = normalizeNote(c.Note)
	if c.ExpiresAt != nil {
		t := c.ExpiresAt.UTC()
		c.ExpiresAt = &t
	}
}

// validate checks the controls with the rules of destinations, which
// expired_url follows too (so that it cannot point back into this
// service), and normalises expired_url.
func (c *LinkLimits) validate(v *validation, rules *URLRules) {
	c.normalize()
	if c.MaxClicks < 0 {
		v.add("max_clicks", "must be at least 1")
	}
	if c.ExpiredURL != "" {
		if u, msg := NormalizeDestination(c.ExpiredURL, rules); msg != "" {
			v.add("expired_url", "%s", msg)
		} else {
			c.ExpiredURL = u
		}
	}
	if !utf8.ValidString(c.Title) {
		v.add("title", "must be valid UTF-8")
	} else if utf8.RuneCountInString(c.Title) > MaxTitleLength {
		v.add("title", "must be at most %d characters", MaxTitleLength)
	}
	for _, r := range c.Title {
		if r < 0x20 || r == 0x7f {
			v.add("title", "must not contain control characters")
			break
		}
	}
	checkNote(v, c.Note)
}

// normalizeNote trims a note and writes its line breaks as "\n" alone.
func normalizeNote(s string) string {
	if strings.ContainsRune(s, '\r') {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	}
	return strings.TrimSpace(s)
}

// checkNote checks a normalised note: valid UTF-8, at most MaxNoteLength
// characters, no control characters but line breaks and tabs, and none of
// the bidi embedding, override and isolate characters, which reorder how
// the text around them shows (a note is shown to the workspace's other
// people). Other format characters (the joiners of emoji) are kept.
func checkNote(v *validation, note string) {
	if !utf8.ValidString(note) {
		v.add("note", "must be valid UTF-8")
		return
	}
	if n := utf8.RuneCountInString(note); n > MaxNoteLength {
		v.add("note", "must be at most %d characters, not %d", MaxNoteLength, n)
	}
	for _, r := range note {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f {
			v.add("note", "must not contain control characters other than line breaks and tabs")
			break
		}
		if 0x202a <= r && r <= 0x202e || 0x2066 <= r && r <= 0x2069 {
			v.add("note", "must not contain bidi embedding, override or isolate characters (U+%04X), which reorder how the text shows", r)
			break
		}
	}
}

// CheckNewLimits checks what only a new link must meet: an expiry in the
// future (at now), so that a link is not created dead.
func CheckNewLimits(c *LinkLimits, now time.Time) error {
	var v validation
	if c.ExpiresAt != nil && !c.ExpiresAt.After(now) {
		v.add("expires_at", "must be in the future")
	}
	return v.err()
}

// LinkLimitsUpdate is the part of a PATCH that changes the controls; nil
// means "not given". A given zero value clears: a zero ExpiresAt, a
// MaxClicks of 0, an empty ExpiredURL or Title.
type LinkLimitsUpdate struct {
	ExpiresAt  *time.Time
	MaxClicks  *int64
	ExpiredURL *string
	Archived   *bool
	Title      *string
	Note       *string
}

func (u LinkLimitsUpdate) apply(c *LinkLimits) {
	if u.ExpiresAt != nil {
		if u.ExpiresAt.IsZero() {
			c.ExpiresAt = nil
		} else {
			t := *u.ExpiresAt
			c.ExpiresAt = &t
		}
	}
	if u.MaxClicks != nil {
		c.MaxClicks = *u.MaxClicks
	}
	if u.ExpiredURL != nil {
		c.ExpiredURL = *u.ExpiredURL
	}
	if u.Archived != nil {
		c.Archived = *u.Archived
	}
	if u.Title != nil {
		c.Title = *u.Title
	}
	if u.Note != nil {
		c.Note = *u.Note
	}
	c.normalize()
}

// ArchivedFilter selects links of a list by their archived flag.
type ArchivedFilter string

const (
	// ArchivedExclude lists the links not archived (the default).
	ArchivedExclude ArchivedFilter = "false"
	// ArchivedOnly lists the archived links.
	ArchivedOnly ArchivedFilter = "true"
	// ArchivedAll lists every link.
	ArchivedAll ArchivedFilter = "all"
)
