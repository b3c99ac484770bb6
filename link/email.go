package link

import "strings"

// NormalizeEmail returns the form in which linkbolt stores and compares
// an e-mail address: spaces around it trimmed and the ASCII letters A-Z
// lower-cased. Every other character is kept exactly as it is. Unicode
// case rules are not used on purpose: they fold different characters
// together (the Kelvin sign U+212A lower-cases to k, the long s U+017F
// folds to s), so "\u212Aate@example.com" would meet kate@example.com, a
// different mailbox. Two addresses are the same address exactly when
// their normal forms are equal.
//
// Addresses stored before this rule were lower-cased with Unicode rules;
// their stored form holds no A-Z, so it is its own normal form and still
// matches what its owner types in lower case.
func NormalizeEmail(email string) string {
	email = strings.TrimSpace(email)
	i := 0
	for i < len(email) && !isASCIIUpper(email[i]) {
		i++
	}
	if i == len(email) {
		return email
	}
	b := []byte(email)
	for ; i < len(b); i++ {
		if isASCIIUpper(b[i]) {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

func isASCIIUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// SameEmail reports whether a and b are the same address (see
// NormalizeEmail).
func SameEmail(a, b string) bool { return NormalizeEmail(a) == NormalizeEmail(b) }
