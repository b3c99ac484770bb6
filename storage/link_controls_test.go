package storage_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

// TestLinkControlsStored checks that the link controls (password, rules,
// variants, social card) are stored, read back by ID and by alias, changed
// and removed by an update, and absent from a plain link.
func TestLinkControlsStored(t *testing.T) {
	s, _, ws := mustSetup(t)
	ctx := context.Background()
	l := &link.Link{WorkspaceID: ws.ID, Alias: "ctl", DestinationURL: "https://example.com/", RedirectCode: 302,
		PasswordHash: "$2a$04$hash",
		Rules: []link.Rule{
			{If: link.RuleCondition{Country: "DE", Language: "de"}, Then: "https://example.com/de"},
			{If: link.RuleCondition{Query: &link.QueryCondition{Name: "src", Value: ""}}, Then: "https://example.com/q"},
		},
		Variants: []link.Variant{{DestinationURL: "https://example.com/a", Weight: 60}, {DestinationURL: "https://example.com/b", Weight: 40}},
		OG:       &link.OG{Title: "T", Description: "D", ImageURL: "https://example.com/i.png"},
	}
	want := *l
	if err := s.Links.CreateLink(ctx, l); err != nil {
		t.Fatal(err)
	}
	check := func(what string, got *link.Link, want link.Link) {
		t.Helper()
		if got.PasswordHash != want.PasswordHash || !reflect.DeepEqual(got.Rules, want.Rules) ||
			!reflect.DeepEqual(got.Variants, want.Variants) || !reflect.DeepEqual(got.OG, want.OG) {
			t.Fatalf("%s: got %q %+v %+v %+v, want %q %+v %+v %+v", what, got.PasswordHash, got.Rules, got.Variants, got.OG,
				want.PasswordHash, want.Rules, want.Variants, want.OG)
		}
	}
	check("created", l, want)
	byID, err := s.Links.FindLinkByID(ctx, ws.ID, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	check("by id", byID, want)
	byAlias, err := s.Links.FindLinkByAlias(ctx, "", "ctl")
	if err != nil {
		t.Fatal(err)
	}
	check("by alias", byAlias, want)

	// An update of another field keeps the controls; an empty password,
	// rules and variants and a zero social card remove them.
	tag := []string{"x"}
	if got, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{Tags: &tag}, nil); err != nil {
		t.Fatal(err)
	} else {
		check("other field updated", got, want)
	}
	none, noRules, noVariants := "", []link.Rule{}, []link.Variant{}
	got, err := s.Links.UpdateLink(ctx, ws.ID, l.ID, link.LinkUpdate{PasswordHash: &none, Rules: &noRules, Variants: &noVariants, OG: &link.OG{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("removed", got, link.Link{})
	if got.HasControls() {
		t.Fatal("controls left after removing them all")
	}
	byAlias, err = s.Links.FindLinkByAlias(ctx, "", "ctl")
	if err != nil {
		t.Fatal(err)
	}
	check("removed, by alias", byAlias, link.Link{})
}
