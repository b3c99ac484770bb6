package server

import (
	"bytes"
	"encoding/json"
	"net/url"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// linkLimitsRequest is the part of a create request (POST /v1/links and
// the items of POST /v1/links/bulk) that sets the link controls of expiry
// and limits; null is the same as leaving a field out.
type linkLimitsRequest struct {
	ExpiresAt  *time.Time `json:"expires_at"`
	MaxClicks  *int64     `json:"max_clicks"`
	ExpiredURL *string    `json:"expired_url"`
	Archived   *bool      `json:"archived"`
	Title      *string    `json:"title"`
	Note       *string    `json:"note"`
}

// applyTo sets the controls of a new link l, created at now. A max_clicks
// given must be at least 1 and an expiry must lie in the future: a link
// is not created used up or expired.
func (in *linkLimitsRequest) applyTo(l *link.Link, now time.Time) error {
	if in.MaxClicks != nil && *in.MaxClicks < 1 {
		return fieldError("max_clicks", "must be at least 1")
	}
	c := link.LinkLimits{ExpiresAt: in.ExpiresAt}
	if in.MaxClicks != nil {
		c.MaxClicks = *in.MaxClicks
	}
	if in.ExpiredURL != nil {
		c.ExpiredURL = *in.ExpiredURL
	}
	if in.Archived != nil {
		c.Archived = *in.Archived
	}
	if in.Title != nil {
		c.Title = *in.Title
	}
	if in.Note != nil {
		c.Note = *in.Note
	}
	if err := link.CheckNewLimits(&c, now); err != nil {
		return err
	}
	l.LinkLimits = c
	return nil
}

// patchField is a field of a PATCH that tells "not given" (Set false)
// from null (Set and Null: clear the control) from a value.
type patchField[T any] struct {
	Set, Null bool
	Value     T
}

// UnmarshalJSON is called for a field present in the body, null included.
func (f *patchField[T]) UnmarshalJSON(b []byte) error {
	f.Set = true
	if bytes.Equal(b, []byte("null")) {
		f.Null = true
		return nil
	}
	return json.Unmarshal(b, &f.Value)
}

// linkLimitsPatch is the part of PATCH /v1/links/{id} that changes the
// controls of expiry and limits; null clears one (archived: null is
// false).
type linkLimitsPatch struct {
	ExpiresAt  patchField[time.Time] `json:"expires_at"`
	MaxClicks  patchField[int64]     `json:"max_clicks"`
	ExpiredURL patchField[string]    `json:"expired_url"`
	Archived   patchField[bool]      `json:"archived"`
	Title      patchField[string]    `json:"title"`
	Note       patchField[string]    `json:"note"`
}

// update returns the link.LinkLimitsUpdate of the patch. An expiry may be
// set in the past here: that ends a link now, on purpose.
func (p *linkLimitsPatch) update() (link.LinkLimitsUpdate, error) {
	var u link.LinkLimitsUpdate
	if p.ExpiresAt.Set {
		t := p.ExpiresAt.Value // the zero time clears
		u.ExpiresAt = &t
	}
	if p.MaxClicks.Set {
		if !p.MaxClicks.Null && p.MaxClicks.Value < 1 {
			return u, fieldError("max_clicks", "must be at least 1, or null for no limit")
		}
		n := p.MaxClicks.Value
		u.MaxClicks = &n
	}
	if p.ExpiredURL.Set {
		v := p.ExpiredURL.Value
		u.ExpiredURL = &v
	}
	if p.Archived.Set {
		v := p.Archived.Value
		u.Archived = &v
	}
	if p.Title.Set {
		v := p.Title.Value
		u.Title = &v
	}
	if p.Note.Set {
		v := p.Note.Value
		u.Note = &v
	}
	return u, nil
}

// archivedParam reads the archived query parameter of GET /v1/links:
// false (the default), true or all.
func archivedParam(q url.Values) (link.ArchivedFilter, error) {
	switch v := q.Get("archived"); v {
	case "", "false":
		return link.ArchivedExclude, nil
	case "true":
		return link.ArchivedOnly, nil
	case "all":
		return link.ArchivedAll, nil
	default:
		return "", link.Errorf(link.EINVALIDREQUEST, "archived must be false, true or all, not %q", v)
	}
}
