package wire

import "github.com/linkbolt/linkbolt/link"

// LinkLimits are the link controls of expiry and limits as the API shows
// them: null where a control is not set.
type LinkLimits struct {
	ExpiresAt  *string `json:"expires_at"`
	MaxClicks  *int64  `json:"max_clicks"`
	ExpiredURL *string `json:"expired_url"`
	Archived   bool    `json:"archived"`
	Title      *string `json:"title"`
	Note       *string `json:"note"`
}

func newLinkLimits(c *link.LinkLimits) LinkLimits {
	out := LinkLimits{ExpiredURL: Optional(c.ExpiredURL), Archived: c.Archived, Title: Optional(c.Title), Note: Optional(c.Note)}
	if c.ExpiresAt != nil {
		t := Time(*c.ExpiresAt)
		out.ExpiresAt = &t
	}
	if c.MaxClicks > 0 {
		n := c.MaxClicks
		out.MaxClicks = &n
	}
	return out
}
