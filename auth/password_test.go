package auth

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/linkbolt/linkbolt/link"
)

func TestPasswordsHashVerify(t *testing.T) {
	p := Passwords{Cost: bcrypt.MinCost}
	const pw = "correct horse battery staple"
	hash, err := p.Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Verify(hash, pw), true; got != want {
		t.Fatalf("Verify(right password) = %v, want %v", got, want)
	}
	for _, wrong := range []string{"", "correct horse battery stapl", "Correct horse battery staple", pw + " "} {
		if got, want := p.Verify(hash, wrong), false; got != want {
			t.Errorf("Verify(%q) = %v, want %v", wrong, got, want)
		}
	}
	cost, err := bcrypt.Cost(hash)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cost, bcrypt.MinCost; got != want {
		t.Fatalf("hash cost = %d, want %d", got, want)
	}
	again, err := p.Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) == string(hash) {
		t.Fatalf("two hashes of one password are equal; want a fresh salt each time")
	}
}

func TestPasswordsDefaultCost(t *testing.T) {
	if got, want := (Passwords{}).cost(), 12; got != want {
		t.Fatalf("default cost = %d, want %d", got, want)
	}
	if got, want := (Passwords{Cost: 5}).cost(), 5; got != want {
		t.Fatalf("cost = %d, want %d", got, want)
	}
}

func TestPasswordsHashInvalidCost(t *testing.T) {
	for _, cost := range []int{-1, 3, 32} {
		_, err := Passwords{Cost: cost}.Hash("long enough password")
		if err == nil {
			t.Errorf("Hash at cost %d: err = nil, want an error", cost)
		}
	}
}

func TestPasswordsHashTooLong(t *testing.T) {
	_, err := Passwords{Cost: bcrypt.MinCost}.Hash(strings.Repeat("a", 73))
	if got, want := link.ErrorCode(err), link.EINVALID; got != want {
		t.Fatalf("Hash(73 bytes) code = %q, want %q", got, want)
	}
	if fields := link.ErrorFields(err); len(fields) != 1 || fields[0].Field != "password" {
		t.Fatalf("Hash(73 bytes) fields = %+v, want one for password", fields)
	}
}

// TestPasswordsVerifyLongGuess checks that a guess of more than 72 bytes does
// not match a 72-byte password it starts with, which bcrypt alone would allow.
func TestPasswordsVerifyLongGuess(t *testing.T) {
	p := Passwords{Cost: bcrypt.MinCost}
	pw := strings.Repeat("x", 72)
	hash, err := p.Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Verify(hash, pw), true; got != want {
		t.Fatalf("Verify(72 bytes) = %v, want %v", got, want)
	}
	if got, want := p.Verify(hash, pw+"y"), false; got != want {
		t.Fatalf("Verify(73 bytes) = %v, want %v", got, want)
	}
}

func TestPasswordsVerifyBrokenHash(t *testing.T) {
	p := Passwords{Cost: bcrypt.MinCost}
	for _, hash := range [][]byte{nil, {}, []byte("plain"), []byte("$2a$99$abc"), []byte(strings.Repeat("$", 60))} {
		if got, want := p.Verify(hash, "whatever password"), false; got != want {
			t.Errorf("Verify(%q) = %v, want %v", hash, got, want)
		}
	}
}

// TestPasswordsVerifyNone checks what makes VerifyNone take as long as a
// Verify: its hash parses, has the configured cost, and is compared in full
// (a mismatch, not a parse error).
func TestPasswordsVerifyNone(t *testing.T) {
	for _, cost := range []int{bcrypt.MinCost, 10, DefaultPasswordCost, bcrypt.MaxCost} {
		h := dummyHashAt(cost)
		got, err := bcrypt.Cost(h)
		if err != nil {
			t.Fatalf("dummy hash at cost %d: %v", cost, err)
		}
		if want := cost; got != want {
			t.Fatalf("dummy hash cost = %d, want %d", got, want)
		}
	}
	err := bcrypt.CompareHashAndPassword(dummyHashAt(bcrypt.MinCost), []byte("linkbolt: no such user"))
	if !errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
		t.Fatalf("compare with dummy hash = %v, want a mismatch", err)
	}
	Passwords{Cost: bcrypt.MinCost}.VerifyNone("anything")
}
