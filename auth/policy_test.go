package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/linkbolt/linkbolt/link"
)

func TestCheckPassword(t *testing.T) {
	for _, tc := range []struct{ pw, want string }{
		{"correct horse battery", ""},
		{"a longer passphrase 2026", ""},
		{"short", "at least 10 characters"},
		{strings.Repeat("x", 73), "at most 72 bytes"},
		{"1234567890", "most common passwords"},
		{"qwertyuiop", "most common passwords"},
		{"QwErTyUiOp", "most common passwords"},
		{"BASKETBALL", "most common passwords"},
		// Spaces around a common password, or padding a short one, do not
		// make it another password; accents count as one character each.
		{" qwertyuiop ", "most common passwords"},
		{"\tBasketball\n", "most common passwords"},
		{"password1 ", "at least 10 characters"},
		{"   password", "at least 10 characters"},
		{strings.Repeat(" ", 12), "at least 10 characters"},
		{"ééééé", "at least 10 characters"},
		{"éléphants roses", ""},
	} {
		got := CheckPassword(tc.pw)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("CheckPassword(%q) = %q, want %q", tc.pw, got, tc.want)
		}
	}
	if n := len(commonPasswords()); n < 5000 {
		t.Fatalf("the embedded list holds %d passwords, want thousands", n)
	}
	for pw := range commonPasswords() {
		if pw != strings.ToLower(pw) || strings.TrimSpace(pw) != pw {
			t.Fatalf("list entry %q is not lower-cased and trimmed", pw)
		}
	}
}

func TestValidatePassword(t *testing.T) {
	err := ValidatePassword("new_password", "1q2w3e4r5t")
	var le *link.Error
	if !errors.As(err, &le) || le.Code != link.EINVALID || len(le.Fields) != 1 || le.Fields[0].Field != "new_password" {
		t.Fatalf("ValidatePassword = %#v", err)
	}
	if !strings.Contains(le.Message, "new_password: ") {
		t.Fatalf("message %q does not name the field", le.Message)
	}
	if err := ValidatePassword("password", "a longer passphrase 2026"); err != nil {
		t.Fatalf("ValidatePassword(good) = %v", err)
	}
}
