package auth

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/linkbolt/linkbolt/link"
)

// commonPasswordList is the 10,000 most common passwords of SecLists
// (Passwords/Common-Credentials/10k-most-common.txt, MIT licence),
// lower-cased, one a line, duplicates dropped.
//
//go:embed common-passwords.txt
var commonPasswordList string

var commonPasswords = sync.OnceValue(func() map[string]struct{} {
	lines := strings.Split(commonPasswordList, "\n")
	m := make(map[string]struct{}, len(lines))
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			m[l] = struct{}{}
		}
	}
	return m
})

// IsCommonPassword reports whether pw, in any case and with any spaces
// around it, is on the embedded list of common passwords.
func IsCommonPassword(pw string) bool {
	_, ok := commonPasswords()[strings.ToLower(strings.TrimSpace(pw))]
	return ok
}

// CheckPassword returns what is wrong with a new password, or "": it must
// be at least link.MinPasswordLength characters and at most 72 bytes (all
// bcrypt reads), and not one of the common passwords (in any case), which
// guessers try first. Every place a password is chosen goes through it:
// the setup page, the admin's new users, a password change, an accepted
// invitation.
func CheckPassword(pw string) string {
	if msg := link.CheckPassword(pw); msg != "" {
		return msg
	}
	if IsCommonPassword(pw) {
		return "is one of the most common passwords, which are guessed first: choose another"
	}
	return ""
}

// ValidatePassword returns CheckPassword's complaint as a link.EINVALID
// error naming field (as "password" or "new_password"), or nil.
func ValidatePassword(field, pw string) error {
	msg := CheckPassword(pw)
	if msg == "" {
		return nil
	}
	return &link.Error{Code: link.EINVALID, Message: field + ": " + msg,
		Fields: []link.FieldError{{Field: field, Message: msg}}}
}
