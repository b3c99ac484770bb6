package link

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxUTMTemplates bounds the UTM templates of a workspace.
const MaxUTMTemplates = 100

// UTMTemplate is a saved set of UTM values that a new link takes when it
// is created with the template (utm_template_id, or picked in the
// dashboard): a copy, which later changes of the template leave alone
// (a campaign's values, by contrast, are lent to its links for as long
// as they are in it). Its name is unique in its workspace, whatever the
// case.
type UTMTemplate struct {
	ID          string
	WorkspaceID string
	Name        string
	UTMSource   string
	UTMMedium   string
	UTMCampaign string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Normalize trims the input.
func (t *UTMTemplate) Normalize() {
	t.Name = strings.TrimSpace(t.Name)
	t.UTMSource = strings.TrimSpace(t.UTMSource)
	t.UTMMedium = strings.TrimSpace(t.UTMMedium)
	t.UTMCampaign = strings.TrimSpace(t.UTMCampaign)
}

// Validate checks a template: a name, UTM values as a link takes them,
// and at least one of them.
func (t *UTMTemplate) Validate() error {
	var v validation
	checkName(&v, "name", t.Name, MaxNameLength)
	checkUTM(&v, "utm_source", t.UTMSource)
	checkUTM(&v, "utm_medium", t.UTMMedium)
	checkUTM(&v, "utm_campaign", t.UTMCampaign)
	if t.UTMSource == "" && t.UTMMedium == "" && t.UTMCampaign == "" {
		v.add("utm_source", "a template needs at least one of utm_source, utm_medium and utm_campaign")
	}
	return v.err()
}

// Apply gives l the template's values for the UTM fields l leaves empty:
// what the link sets itself wins.
func (t *UTMTemplate) Apply(l *Link) {
	for _, f := range [...]struct {
		dst *string
		src string
	}{
		{&l.UTMSource, t.UTMSource}, {&l.UTMMedium, t.UTMMedium}, {&l.UTMCampaign, t.UTMCampaign},
	} {
		if *f.dst == "" {
			*f.dst = f.src
		}
	}
}

// UTMTemplateUpdate holds the fields of a PATCH; nil means "not given".
type UTMTemplateUpdate struct {
	Name, UTMSource, UTMMedium, UTMCampaign *string
}

// Apply copies the given fields onto t.
func (u UTMTemplateUpdate) Apply(t *UTMTemplate) {
	for _, f := range [...]struct{ dst, src *string }{
		{&t.Name, u.Name}, {&t.UTMSource, u.UTMSource}, {&t.UTMMedium, u.UTMMedium}, {&t.UTMCampaign, u.UTMCampaign},
	} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
}

// SameTemplateName reports whether two template names clash: names are
// unique in a workspace whatever their case.
func SameTemplateName(a, b string) bool { return strings.EqualFold(a, b) }

// UTMTemplateService keeps the UTM templates of workspaces.
type UTMTemplateService interface {
	// CreateUTMTemplate stores a validated template; sets ID, CreatedAt
	// and UpdatedAt. ENOTFOUND for an unknown workspace; ECONFLICT for a
	// name the workspace has, or when it has MaxUTMTemplates.
	CreateUTMTemplate(ctx context.Context, t *UTMTemplate) error
	// FindUTMTemplateByID returns a template of the workspace. ENOTFOUND.
	FindUTMTemplateByID(ctx context.Context, workspaceID, id string) (*UTMTemplate, error)
	// FindUTMTemplates returns the workspace's templates by name (case
	// folded), then creation.
	FindUTMTemplates(ctx context.Context, workspaceID string) ([]*UTMTemplate, error)
	// UpdateUTMTemplate applies an update and validates the result.
	// ENOTFOUND, EINVALID, ECONFLICT (a name the workspace has).
	UpdateUTMTemplate(ctx context.Context, workspaceID, id string, upd UTMTemplateUpdate) (*UTMTemplate, error)
	// DeleteUTMTemplate deletes a template. ENOTFOUND.
	DeleteUTMTemplate(ctx context.Context, workspaceID, id string) error
}

// SortUTMTemplates orders templates as FindUTMTemplates returns them.
func SortUTMTemplates(ts []*UTMTemplate) {
	slices.SortFunc(ts, func(a, b *UTMTemplate) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return a.CreatedAt.Compare(b.CreatedAt)
	})
}

// UTMTemplateNameTaken is the conflict of a name the workspace has.
func UTMTemplateNameTaken(name string) error {
	return &Error{Code: ECONFLICT, Message: "name: the workspace has a UTM template named " + strconv.Quote(name),
		Fields: []FieldError{{Field: "name", Message: "is taken by another template of the workspace"}}}
}

// ErrTooManyUTMTemplates refuses a template over MaxUTMTemplates.
var ErrTooManyUTMTemplates = Errorf(ECONFLICT, "the workspace has %d UTM templates, the most it may: delete one first", MaxUTMTemplates)
