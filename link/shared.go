package link

import (
	"crypto/rand"
	"slices"
	"unicode/utf8"
)

// base62 are the characters of generated short codes.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewCode returns GeneratedCodeLength random base62 characters from
// crypto/rand, without modulo bias: a generated short code, which a store
// checks is free before it takes it.
func NewCode() string {
	var out [GeneratedCodeLength]byte
	var buf [16]byte
	n := 0
	for n < len(out) {
		_, _ = rand.Read(buf[:]) // never fails (the program crashes instead)
		for _, b := range buf {
			if b >= 62*4 {
				continue
			}
			out[n] = base62[b%62]
			if n++; n == len(out) {
				break
			}
		}
	}
	return string(out[:])
}

// MaxClickValueLength bounds a stored click dimension value (a host name
// is at most 253 bytes); longer values are cut at a character boundary,
// so one odd header never fails a batch.
const MaxClickValueLength = 253

// ClickValue returns the stored form of a click's dimension value v:
// empty when v is "", else v cut to MaxClickValueLength bytes at a
// character boundary.
func ClickValue(v, empty string) string {
	if v == "" {
		return empty
	}
	if len(v) > MaxClickValueLength {
		cut := MaxClickValueLength
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut]
	}
	return v
}

// SameWebhookSettings reports whether a and b agree on what an update of
// a webhook sets.
func SameWebhookSettings(a, b *Webhook) bool {
	return a.URL == b.URL && slices.Equal(a.Events, b.Events) && a.Enabled == b.Enabled &&
		a.Description == b.Description && a.DisabledReason == b.DisabledReason
}
