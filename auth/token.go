package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/linkbolt/linkbolt/link"
)

// DefaultKeyPrefix is the prefix of API key tokens when auth.key_prefix is
// not set.
const DefaultKeyPrefix = "lb"

// MaxKeyPrefixLength bounds auth.key_prefix; see CheckKeyPrefix.
const MaxKeyPrefixLength = 16

// The parts of a token after the prefix. 32 base62 characters carry
// 32·log2(62) ≈ 190 bits; 6 base62 digits hold any CRC-32 (62^6 > 2^32).
const (
	keyInfix       = "_live_"
	randomLength   = 32
	checksumLength = 6
	bodyLength     = randomLength + checksumLength
	// startLength is how many random characters Start shows: enough to tell
	// a person's few keys apart, far too few to matter for guessing.
	startLength = 4
)

// base62 is the alphabet of tokens, in digit order: '0' is zero, which is
// what the checksum is padded with.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// base62Value maps a byte to its base62 digit, or -1.
var base62Value = func() (v [256]int8) {
	for i := range v {
		v[i] = -1
	}
	for i := 0; i < len(base62); i++ {
		v[base62[i]] = int8(i)
	}
	return v
}()

// Tokens makes and checks API key tokens of the form
// <prefix>_live_<32 random base62 characters><6 base62 checksum characters>.
// The checksum is the CRC-32 (IEEE) of everything before it, so a mistyped
// or truncated key is rejected without a database read, and secret scanners
// can recognise a leaked key by its shape and checksum.
type Tokens struct {
	// Prefix is auth.key_prefix; empty means DefaultKeyPrefix.
	Prefix string
}

// prefix returns the configured prefix or the default.
func (t Tokens) prefix() string {
	if t.Prefix == "" {
		return DefaultKeyPrefix
	}
	return t.Prefix
}

// head returns what every token starts with, "<prefix>_live_".
func (t Tokens) head() string { return t.prefix() + keyInfix }

// Generate returns a new token, the SHA-256 hash to store in its place, and
// the start to show in key lists ("<prefix>_live_" and the first four random
// characters). The token is shown to its owner once and never stored. The
// error is internal: an invalid prefix or a failing random source.
func (t Tokens) Generate() (token string, hash []byte, start string, err error) {
	if err := CheckKeyPrefix(t.prefix()); err != nil {
		return "", nil, "", err
	}
	var random [randomLength]byte
	if err := readBase62(random[:]); err != nil {
		return "", nil, "", err
	}
	token = t.assemble(random[:])
	return token, HashToken(token), token[:len(t.head())+startLength], nil
}

// assemble returns the token with the given random part and its checksum.
func (t Tokens) assemble(random []byte) string {
	var b strings.Builder
	b.Grow(len(t.head()) + bodyLength)
	b.WriteString(t.head())
	b.Write(random)
	sum := checksum(b.String())
	b.Write(sum[:])
	return b.String()
}

// readBase62 fills dst with uniformly random base62 characters. Bytes of 248
// and above are thrown away so that b%62 favours no character (248 = 4·62);
// a plain b%62 would make '0'…'7' a quarter more likely than the rest.
func readBase62(dst []byte) error {
	var pool [64]byte
	n := 0
	for n < len(dst) {
		if _, err := rand.Read(pool[:]); err != nil {
			return fmt.Errorf("auth: read random bytes: %w", err)
		}
		for _, b := range pool {
			if b >= 248 {
				continue
			}
			dst[n] = base62[b%62]
			if n++; n == len(dst) {
				break
			}
		}
	}
	return nil
}

// checksum returns the CRC-32 (IEEE) of s as 6 base62 digits, most
// significant first, left-padded with '0'.
func checksum(s string) [checksumLength]byte {
	v := crc32.ChecksumIEEE([]byte(s))
	var d [checksumLength]byte
	for i := checksumLength - 1; i >= 0; i-- {
		d[i] = base62[v%62]
		v /= 62
	}
	return d
}

// Check rejects, without any database read, a token that cannot be a key of
// this instance: a wrong prefix, a wrong length, a character outside base62,
// or a checksum that does not match. Every error is link.EUNAUTHORIZED with
// a message that tells the caller what to fix. Check never panics, and apart
// from the length and prefix test its work does not depend on where a token
// goes wrong.
func (t Tokens) Check(token string) error {
	prefix := t.prefix()
	headLength := len(prefix) + len(keyInfix)
	if len(token) != headLength+bodyLength ||
		token[:len(prefix)] != prefix || token[len(prefix):headLength] != keyInfix {
		return t.malformed()
	}
	body := token[headLength:]
	var bad int8
	for i := 0; i < len(body); i++ {
		bad |= base62Value[body[i]] // -1 sets the sign bit
	}
	sum := checksum(token[:headLength+randomLength])
	ok := subtle.ConstantTimeCompare(sum[:], []byte(body[randomLength:]))
	if bad < 0 {
		return t.malformed()
	}
	if ok != 1 {
		return link.Errorf(link.EUNAUTHORIZED,
			"API key checksum does not match: the key was mistyped or truncated")
	}
	return nil
}

// malformed returns the error for a token not of the token's shape.
func (t Tokens) malformed() error {
	return link.Errorf(link.EUNAUTHORIZED,
		"malformed API key: want %s followed by %d letters and digits", t.head(), bodyLength)
}

// LooksLikeKey reports whether token is meant as an API key of this instance,
// that is, starts with "<prefix>_live_" (empty prefix means
// DefaultKeyPrefix). The server uses it to tell a key from a JWT in the
// Authorization header; it says nothing about whether the key is valid.
func LooksLikeKey(token, prefix string) bool {
	return strings.HasPrefix(token, Tokens{Prefix: prefix}.head())
}

// HashToken returns the SHA-256 of the whole token, which is what storage
// keeps and looks keys up by. A fast hash is right here: the tokens carry
// 190 random bits, so there is nothing to brute-force.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// CheckKeyPrefix returns an error unless prefix is 1 to MaxKeyPrefixLength
// ASCII letters and digits. Without '_' in the prefix, "<prefix>_live_"
// marks the end of the prefix unambiguously. Config validation calls it.
func CheckKeyPrefix(prefix string) error {
	if prefix == "" || len(prefix) > MaxKeyPrefixLength {
		return fmt.Errorf("auth: key prefix %q must be 1 to %d letters and digits", prefix, MaxKeyPrefixLength)
	}
	for i := 0; i < len(prefix); i++ {
		if base62Value[prefix[i]] < 0 {
			return fmt.Errorf("auth: key prefix %q must be 1 to %d letters and digits", prefix, MaxKeyPrefixLength)
		}
	}
	return nil
}
