package link

import (
	"strings"
	"testing"
)

func TestNormalizeEmail(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{" Kate@Example.COM ", "kate@example.com"},
		{"kate@example.com", "kate@example.com"},
		{"\u212Aate@example.com", "\u212Aate@example.com"}, // the Kelvin sign is not k
		{"\u017Fam@example.com", "\u017Fam@example.com"},   // the long s is not s
		{"Élise@Example.com", "Élise@example.com"},         // only A-Z fold
		{"élise@example.com", "élise@example.com"},
	} {
		if got := NormalizeEmail(tt.in); got != tt.want {
			t.Errorf("NormalizeEmail(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, pair := range [][2]string{
		{"\u212Aate@example.com", "kate@example.com"},
		{"\u017Fam@example.com", "sam@example.com"},
		{"sam@exampl\u212A.com", "sam@examplk.com"},
	} {
		if SameEmail(pair[0], pair[1]) {
			t.Errorf("SameEmail(%q, %q) = true, want false", pair[0], pair[1])
		}
		// The rule it replaces let them meet.
		if !strings.EqualFold(pair[0], pair[1]) {
			t.Fatalf("EqualFold(%q, %q) = false: the test no longer shows the attack", pair[0], pair[1])
		}
	}
}

// FuzzNormalizeEmail: the normal form is its own normal form, and folds
// nothing but A-Z (so it never makes two different addresses equal unless
// they differ only in the case of ASCII letters).
func FuzzNormalizeEmail(f *testing.F) {
	f.Add("Kate@Example.com")
	f.Add("\u212Aate@example.com")
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeEmail(s)
		if NormalizeEmail(n) != n {
			t.Fatalf("NormalizeEmail(%q) = %q is not its own normal form", s, n)
		}
		trimmed := strings.TrimSpace(s)
		if len(n) != len(trimmed) {
			t.Fatalf("NormalizeEmail(%q) changed the length", s)
		}
		for i := range len(n) {
			if n[i] != trimmed[i] && !(isASCIIUpper(trimmed[i]) && n[i] == trimmed[i]+'a'-'A') {
				t.Fatalf("NormalizeEmail(%q) changed byte %d", s, i)
			}
		}
	})
}
