package auth

import (
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"

	"github.com/linkbolt/linkbolt/link"
)

// DefaultPasswordCost is the bcrypt cost when Passwords.Cost is 0: two above
// bcrypt.DefaultCost, a quarter of a second or so on a current server core,
// which is slow for a guesser and still fine for a person logging in.
const DefaultPasswordCost = bcrypt.DefaultCost + 2

// dummyHash is a bcrypt hash of 32 random bytes, since forgotten, made at
// bcrypt.MinCost; VerifyNone rewrites its cost digits. Only the cost decides
// how long a comparison takes.
const dummyHash = "$2a$04$PaYsVXkerqq0ytT2NaYpL.0CMFqyVJSBXWOSM9bXWUHi9G06Esr5m"

// Passwords hashes and verifies the passwords of dashboard users with bcrypt.
type Passwords struct {
	// Cost is the bcrypt cost, from bcrypt.MinCost to bcrypt.MaxCost; 0
	// means DefaultPasswordCost. Tests use bcrypt.MinCost.
	Cost int
}

// cost returns the configured cost or the default.
func (p Passwords) cost() int {
	if p.Cost == 0 {
		return DefaultPasswordCost
	}
	return p.Cost
}

// Hash returns the bcrypt hash of pw to store. A password over 72 bytes
// (all bcrypt reads) is link.EINVALID; link.CheckPassword rejects it earlier.
// Any other error is internal.
func (p Passwords) Hash(pw string) ([]byte, error) {
	cost := p.cost()
	if cost < bcrypt.MinCost || cost > bcrypt.MaxCost {
		// bcrypt would quietly use its default cost below MinCost.
		return nil, fmt.Errorf("auth: bcrypt cost %d is outside %d to %d", cost, bcrypt.MinCost, bcrypt.MaxCost)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if errors.Is(err, bcrypt.ErrPasswordTooLong) {
		return nil, &link.Error{
			Code:    link.EINVALID,
			Message: "password: must be at most 72 bytes",
			Fields:  []link.FieldError{{Field: "password", Message: "must be at most 72 bytes"}},
		}
	} else if err != nil {
		return nil, fmt.Errorf("auth: hash password: %w", err)
	}
	return h, nil
}

// maxPasswordBytes is all of a password that bcrypt reads.
const maxPasswordBytes = 72

// Verify reports whether pw matches hash. A hash that cannot be parsed
// matches nothing, and costs as much time as VerifyNone so that a broken
// record cannot be told apart by timing either. A password over 72 bytes
// never matches: bcrypt would read only its first 72 bytes, so a longer
// guess would match a stored 72-byte password it merely starts with.
func (p Passwords) Verify(hash []byte, pw string) bool {
	err := bcrypt.CompareHashAndPassword(hash, []byte(pw))
	if err != nil && !errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
		p.VerifyNone(pw)
	}
	return err == nil && len(pw) <= maxPasswordBytes
}

// VerifyNone spends the time of a Verify against a hash of the configured
// cost and always fails. Login calls it when no user has the e-mail, so an
// unknown address takes as long to answer as a wrong password.
func (p Passwords) VerifyNone(pw string) {
	_ = bcrypt.CompareHashAndPassword(dummyHashAt(p.cost()), []byte(pw))
}

// dummyHashAt returns dummyHash with its cost set to cost, clamped into the
// range bcrypt accepts.
func dummyHashAt(cost int) []byte {
	cost = max(bcrypt.MinCost, min(cost, bcrypt.MaxCost))
	h := []byte(dummyHash)
	h[4], h[5] = byte('0'+cost/10), byte('0'+cost%10)
	return h
}
