package link

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// TagColors are the colours a tag may take, as Dub names them; a tag
// without one ("") is shown plain.
var TagColors = []string{"red", "yellow", "green", "blue", "purple", "pink", "brown", "gray"}

// Bounds of tag metadata.
const (
	MaxTagDescriptionLength = 500
	// MaxTagInfos bounds the tags of a workspace that carry a colour or a
	// description (tags on links are bounded per link, MaxTags).
	MaxTagInfos = 1000
)

// Tag is a tag of a workspace as its Tags section shows it: its colour
// and description, kept per workspace apart from the links (a link still
// carries its tags as plain names), and how many links carry it. A tag
// exists while a link carries it or while it has a colour or a
// description.
type Tag struct {
	WorkspaceID string
	Name        string
	// Color is one of TagColors, or "" for none.
	Color       string
	Description string
	// Links counts the workspace's links that carry the tag, archived
	// ones too; filled in by FindTags and FindTag.
	Links int
	// UpdatedAt is when the colour or description last changed; zero for
	// a tag that has neither.
	UpdatedAt time.Time
}

// HasInfo reports whether the tag carries anything of its own.
func (t *Tag) HasInfo() bool { return t.Color != "" || t.Description != "" }

// Normalize trims the input and lower-cases the colour.
func (t *Tag) Normalize() {
	t.Name = strings.TrimSpace(t.Name)
	t.Color = strings.ToLower(strings.TrimSpace(t.Color))
	t.Description = strings.TrimSpace(t.Description)
}

// Validate checks a normalised tag: its name as a link's tag, a colour of
// TagColors or none, a description of one line.
func (t *Tag) Validate() error {
	var v validation
	if msg := CheckTag(t.Name); msg != "" {
		v.add("name", "%s", msg)
	}
	if t.Color != "" && !slices.Contains(TagColors, t.Color) {
		v.add("color", "must be one of %s, or empty for none", strings.Join(TagColors, ", "))
	}
	if !utf8.ValidString(t.Description) {
		v.add("description", "must be valid UTF-8")
	} else if n := utf8.RuneCountInString(t.Description); n > MaxTagDescriptionLength {
		v.add("description", "must be at most %d characters, not %d", MaxTagDescriptionLength, n)
	} else if msg := checkText(t.Description); msg != "" {
		v.add("description", "%s", msg)
	}
	return v.err()
}

// TagService keeps the colours and descriptions of workspaces' tags.
type TagService interface {
	// FindTags returns every tag of the workspace, by name: those its
	// links carry (with their count) and those with a colour or a
	// description. ENOTFOUND for an unknown workspace.
	FindTags(ctx context.Context, workspaceID string) ([]*Tag, error)
	// FindTag returns one tag of the workspace. ENOTFOUND when no link
	// carries it and it has no colour or description.
	FindTag(ctx context.Context, workspaceID, name string) (*Tag, error)
	// PutTag stores a validated tag's colour and description (both empty
	// remove them), sets UpdatedAt and Links. ENOTFOUND for an unknown
	// workspace; ECONFLICT past MaxTagInfos.
	PutTag(ctx context.Context, t *Tag) error
	// DeleteTag removes a tag's colour and description; the links keep
	// the tag. ENOTFOUND when it has none.
	DeleteTag(ctx context.Context, workspaceID, name string) error
}

// SortTags orders tags as FindTags returns them: by name, case folded,
// then byte by byte.
func SortTags(ts []*Tag) {
	slices.SortFunc(ts, func(a, b *Tag) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// ErrTooManyTagInfos refuses a colour or description past MaxTagInfos.
var ErrTooManyTagInfos = Errorf(ECONFLICT, "the workspace has %d tags with a colour or a description, the most it may: clear one first", MaxTagInfos)

// TagNotFound is the error of a tag the workspace does not have.
func TagNotFound(name string) error { return Errorf(ENOTFOUND, "tag %q not found", name) }
