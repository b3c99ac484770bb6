package link

import (
	"strings"
	"testing"
)

func TestValidateControls(t *testing.T) {
	base := func() Link {
		return Link{DestinationURL: "https://example.com/", RedirectCode: 302}
	}
	ok := base()
	ok.Rules = []Rule{{If: RuleCondition{Country: " de ", Language: "DE", Device: "Mobile"}, Then: " https://example.com/de "}}
	ok.Variants = []Variant{{DestinationURL: "https://example.com/a", Weight: 1}, {DestinationURL: "https://example.com/b", Weight: 99}}
	ok.OG = &OG{Title: "  "}
	ok.Normalize()
	if err := ok.Validate(nil); err != nil {
		t.Fatal(err)
	}
	if r := ok.Rules[0]; r.If.Country != "DE" || r.If.Language != "de" || r.If.Device != "mobile" || r.Then != "https://example.com/de" || ok.OG != nil {
		t.Fatalf("normalised: %+v, og %v", r, ok.OG)
	}
	for _, c := range []struct {
		name  string
		edit  func(*Link)
		field string
	}{
		{"weights sum to 99", func(l *Link) {
			l.Variants = []Variant{{DestinationURL: "https://example.com/a", Weight: 50}, {DestinationURL: "https://example.com/b", Weight: 49}}
		}, "variants"},
		{"weight over 100", func(l *Link) {
			l.Variants = []Variant{{DestinationURL: "https://example.com/a", Weight: 101}, {DestinationURL: "https://example.com/b", Weight: -1}}
		}, "variants[0].weight"},
		{"no condition", func(l *Link) { l.Rules = []Rule{{Then: "https://example.com/"}} }, "rules[0].if"},
		{"empty query name", func(l *Link) {
			l.Rules = []Rule{{If: RuleCondition{Query: &QueryCondition{}}, Then: "https://example.com/"}}
		}, "rules[0].if.query.name"},
		{"language with region", func(l *Link) { l.Rules = []Rule{{If: RuleCondition{Language: "de-AT"}, Then: "https://example.com/"}} }, "rules[0].if.language"},
		{"21 rules", func(l *Link) {
			for i := 0; i < 21; i++ {
				l.Rules = append(l.Rules, Rule{If: RuleCondition{OS: "iOS"}, Then: "https://example.com/"})
			}
		}, "rules"},
		{"long og title", func(l *Link) { l.OG = &OG{Title: strings.Repeat("t", 201)} }, "og.title"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := base()
			c.edit(&l)
			l.Normalize()
			err := l.Validate(nil)
			found := false
			for _, f := range ErrorFields(err) {
				found = found || f.Field == c.field
			}
			if ErrorCode(err) != EINVALID || !found {
				t.Fatalf("err %v, want field %s", err, c.field)
			}
		})
	}
	if msg := CheckLinkPassword("abc"); msg == "" {
		t.Fatal("a 3-character password passed")
	}
	if msg := CheckLinkPassword(strings.Repeat("x", 73)); msg == "" {
		t.Fatal("a 73-byte password passed")
	}
}
