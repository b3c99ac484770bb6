package link_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

func ptr[T any](v T) *T { return &v }

// fieldNames returns the field of every FieldError of err, in order.
func fieldNames(err error) []string {
	var out []string
	for _, f := range link.ErrorFields(err) {
		out = append(out, f.Field)
	}
	return out
}

func TestLinkNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   link.Link
		want link.Link
	}{
		{
			name: "trims and defaults",
			in: link.Link{
				DestinationURL: "  https://example.com/a \n",
				Alias:          "\tlaunch ",
				Domain:         "  Go.Example.COM ",
			},
			want: link.Link{
				DestinationURL: "https://example.com/a",
				Alias:          "launch",
				Domain:         "go.example.com",
				RedirectCode:   302,
			},
		},
		{
			name: "tags trimmed and deduplicated in order",
			in:   link.Link{Tags: []string{" b", "a", "b ", "a", "c", " c ", "A"}, RedirectCode: 301},
			want: link.Link{Tags: []string{"b", "a", "c", "A"}, RedirectCode: 301},
		},
		{
			name: "blank tags collapse into one empty tag for Validate to reject",
			in:   link.Link{Tags: []string{" ", "", "x"}, RedirectCode: 307},
			want: link.Link{Tags: []string{"", "x"}, RedirectCode: 307},
		},
		{
			name: "nil tags stay nil",
			in:   link.Link{RedirectCode: 308},
			want: link.Link{RedirectCode: 308},
		},
		{
			name: "empty tags stay empty",
			in:   link.Link{Tags: []string{}},
			want: link.Link{Tags: []string{}, RedirectCode: 302},
		},
		{
			name: "invalid redirect code kept for Validate",
			in:   link.Link{RedirectCode: 303},
			want: link.Link{RedirectCode: 303},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			got.Normalize()
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Normalize:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestLinkNormalizeDoesNotShareTags(t *testing.T) {
	tags := []string{"a", "b"}
	l := link.Link{Tags: tags}
	l.Normalize()
	l.Tags[0] = "changed"
	if got, want := tags[0], "a"; got != want {
		t.Fatalf("caller's tags[0] = %q after changing the link's, want %q", got, want)
	}
}

func TestLinkValidate(t *testing.T) {
	valid := func() link.Link {
		return link.Link{
			DestinationURL: "https://example.com/landing",
			Alias:          "launch",
			Tags:           []string{"spring", "sale"},
			UTMSource:      "newsletter",
			UTMMedium:      "email",
			UTMCampaign:    "spring-2026",
			RedirectCode:   302,
		}
	}
	manyTags := make([]string, link.MaxTags+1)
	for i := range manyTags {
		manyTags[i] = strings.Repeat("t", i+1)
	}
	tests := []struct {
		name   string
		change func(l *link.Link)
		want   []string // fields with errors, in order
	}{
		{"valid", func(l *link.Link) {}, nil},
		{"empty alias means generate", func(l *link.Link) { l.Alias = "" }, nil},
		{"20 tags", func(l *link.Link) { l.Tags = manyTags[:link.MaxTags] }, nil},
		{"no tags", func(l *link.Link) { l.Tags = nil }, nil},
		{"utm 200 characters", func(l *link.Link) { l.UTMSource = strings.Repeat("ü", link.MaxUTMLength) }, nil},
		{"each redirect code", func(l *link.Link) { l.RedirectCode = 308 }, nil},

		{"missing destination", func(l *link.Link) { l.DestinationURL = "" }, []string{"destination_url"}},
		{"own destination", func(l *link.Link) { l.DestinationURL = "https://sho.rt/x" }, []string{"destination_url"}},
		{"reserved alias", func(l *link.Link) { l.Alias = "API" }, []string{"alias"}},
		{"bad alias", func(l *link.Link) { l.Alias = "a b" }, []string{"alias"}},
		{"21 tags", func(l *link.Link) { l.Tags = manyTags }, []string{"tags"}},
		{"bad tag", func(l *link.Link) { l.Tags = []string{"ok", "a,b"} }, []string{"tags"}},
		{"empty tag", func(l *link.Link) { l.Tags = []string{""} }, []string{"tags"}},
		{"long utm_source", func(l *link.Link) { l.UTMSource = strings.Repeat("x", link.MaxUTMLength+1) }, []string{"utm_source"}},
		{"control utm_medium", func(l *link.Link) { l.UTMMedium = "a\nb" }, []string{"utm_medium"}},
		{"long utm_campaign", func(l *link.Link) { l.UTMCampaign = strings.Repeat("x", link.MaxUTMLength+1) }, []string{"utm_campaign"}},
		{"redirect 0", func(l *link.Link) { l.RedirectCode = 0 }, []string{"redirect_code"}},
		{"redirect 303", func(l *link.Link) { l.RedirectCode = 303 }, []string{"redirect_code"}},
		{"redirect 200", func(l *link.Link) { l.RedirectCode = 200 }, []string{"redirect_code"}},
		{
			name: "everything wrong",
			change: func(l *link.Link) {
				*l = link.Link{
					DestinationURL: "javascript:alert(1)",
					Alias:          "admin",
					Tags:           []string{"a\tb"},
					UTMSource:      strings.Repeat("x", 201),
					UTMMedium:      "\x00",
					UTMCampaign:    "\x7f",
					RedirectCode:   418,
				}
			},
			want: []string{"destination_url", "alias", "tags", "utm_source", "utm_medium", "utm_campaign", "redirect_code"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := valid()
			tt.change(&l)
			err := l.Validate(ownHosts)
			if got, want := fieldNames(err), tt.want; !reflect.DeepEqual(got, want) {
				t.Fatalf("Validate: fields %q, want %q (err %v)", got, want, err)
			}
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if got, want := link.ErrorCode(err), link.EINVALID; got != want {
				t.Fatalf("ErrorCode = %q, want %q", got, want)
			}
			if got, want := link.ErrorMessage(err), tt.want[0]+": "; !strings.HasPrefix(got, want) {
				t.Fatalf("ErrorMessage = %q, want prefix %q", got, want)
			}
		})
	}
}

func TestLinkValidateMessage(t *testing.T) {
	l := link.Link{DestinationURL: "", Alias: "api", RedirectCode: 302}
	err := l.Validate(nil)
	if got, want := link.ErrorMessage(err), "destination_url: is required (and 1 more)"; got != want {
		t.Fatalf("ErrorMessage = %q, want %q", got, want)
	}
	want := []link.FieldError{
		{Field: "destination_url", Message: "is required"},
		{Field: "alias", Message: "is a reserved word"},
	}
	if got := link.ErrorFields(err); !reflect.DeepEqual(got, want) {
		t.Fatalf("ErrorFields = %+v, want %+v", got, want)
	}
}

func TestLinkUpdateApply(t *testing.T) {
	base := func() link.Link {
		return link.Link{
			ID:             "1",
			WorkspaceID:    "ws",
			Alias:          "launch",
			Domain:         "go.example.com",
			DestinationURL: "https://example.com/a",
			Tags:           []string{"x"},
			UTMSource:      "src",
			UTMMedium:      "med",
			UTMCampaign:    "camp",
			CampaignID:     "c1",
			RedirectCode:   301,
			Clicks:         7,
		}
	}
	tests := []struct {
		name   string
		update link.LinkUpdate
		want   func(l *link.Link)
	}{
		{"nothing given", link.LinkUpdate{}, func(l *link.Link) {}},
		{"destination", link.LinkUpdate{DestinationURL: ptr(" https://example.com/b ")},
			func(l *link.Link) { l.DestinationURL = "https://example.com/b" }},
		{"alias", link.LinkUpdate{Alias: ptr(" spring ")}, func(l *link.Link) { l.Alias = "spring" }},
		{"alias cleared", link.LinkUpdate{Alias: ptr("")}, func(l *link.Link) { l.Alias = "" }},
		{"tags", link.LinkUpdate{Tags: ptr([]string{"b ", "b", "c"})}, func(l *link.Link) { l.Tags = []string{"b", "c"} }},
		{"tags cleared", link.LinkUpdate{Tags: ptr([]string{})}, func(l *link.Link) { l.Tags = []string{} }},
		{"utm source", link.LinkUpdate{UTMSource: ptr("s2")}, func(l *link.Link) { l.UTMSource = "s2" }},
		{"utm medium", link.LinkUpdate{UTMMedium: ptr("m2")}, func(l *link.Link) { l.UTMMedium = "m2" }},
		{"utm campaign cleared", link.LinkUpdate{UTMCampaign: ptr("")}, func(l *link.Link) { l.UTMCampaign = "" }},
		{"campaign", link.LinkUpdate{CampaignID: ptr("c2")}, func(l *link.Link) { l.CampaignID = "c2" }},
		{"redirect code", link.LinkUpdate{RedirectCode: ptr(308)}, func(l *link.Link) { l.RedirectCode = 308 }},
		{"redirect code 0 defaults", link.LinkUpdate{RedirectCode: ptr(0)}, func(l *link.Link) { l.RedirectCode = 302 }},
		{
			name: "several",
			update: link.LinkUpdate{
				DestinationURL: ptr("https://example.com/c"),
				UTMSource:      ptr("s3"),
				RedirectCode:   ptr(307),
			},
			want: func(l *link.Link) {
				l.DestinationURL, l.UTMSource, l.RedirectCode = "https://example.com/c", "s3", 307
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := base(), base()
			tt.update.Apply(&got)
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Apply:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestValidRedirectCode(t *testing.T) {
	for code, want := range map[int]bool{301: true, 302: true, 307: true, 308: true, 0: false, 200: false, 300: false, 303: false, 304: false, 309: false} {
		if got := link.ValidRedirectCode(code); got != want {
			t.Errorf("ValidRedirectCode(%d) = %v, want %v", code, got, want)
		}
	}
}
