package link

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
)

// The prefixes of wire IDs, one for each kind of record. Every store gives
// out IDs of the same form (IDCodec), so that a record moved from one store
// to another keeps its ID.
const (
	PrefixWorkspace  = "ws_"
	PrefixUser       = "usr_"
	PrefixKey        = "key_"
	PrefixLink       = "lnk_"
	PrefixCampaign   = "cmp_"
	PrefixEvent      = "evt_"
	PrefixQRCode     = "qr_"
	PrefixWebhook    = "wh_"
	PrefixDelivery   = "dlv_"
	PrefixDomain     = "dom_"
	PrefixInvitation = "inv_"
	PrefixAudit      = "aud_"
	PrefixUTM        = "utm_"
	PrefixReport     = "rpt_"
)

// IDKeySize is the size of an IDCodec's key: AES-128.
const IDKeySize = 16

// IDOpaqueLen is the length of an opaque ID after its prefix: 128 bits in
// base62.
const IDOpaqueLen = 22

// IDAlphabet holds the digits of an opaque ID, in order of value.
const IDAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// base62Value maps a byte to its base62 digit, or 0xff.
var base62Value = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(IDAlphabet); i++ {
		t[IDAlphabet[i]] = byte(i)
	}
	return t
}()

// IDCodec turns record sequences into wire IDs and back. A wire ID is the
// prefix and 22 base62 characters: the AES-128 encryption, under a random
// key the store keeps, of the sequence (8 bytes) followed by the prefix
// (zero-padded to 8 bytes). So an ID shows neither how many records the
// instance holds nor in what order they came, and cannot be guessed from
// another: changing any character decrypts to a block whose last 8 bytes
// are not the prefix (a chance of 2^-64 otherwise), which ParseID rejects,
// so a forged ID is "not found" before any read.
//
// Records created before IDs were opaque (the data file's schema version
// 1, which wrote the sequence in base 36: lnk_1, lnk_2, …) keep those IDs,
// since clients hold them: a sequence at or below its prefix's legacy
// maximum is written and read in the old form. A store created opaque has
// no legacy maximum.
//
// Each record has exactly one wire ID. An IDCodec is read-only once made,
// so it is safe for concurrent use.
type IDCodec struct {
	block  cipher.Block
	legacy map[string]uint64 // prefix → highest sequence with a legacy ID
}

// NewIDCodec returns the codec of key (IDKeySize bytes) and the legacy
// maxima (nil for none).
func NewIDCodec(key []byte, legacy map[string]uint64) (*IDCodec, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("id key: %w", err)
	}
	return &IDCodec{block: block, legacy: legacy}, nil
}

// FormatID returns the wire ID of the record with sequence seq.
func (c *IDCodec) FormatID(prefix string, seq uint64) string {
	return string(c.AppendID(make([]byte, 0, len(prefix)+IDOpaqueLen), prefix, seq))
}

// AppendID appends the wire ID of seq to b.
func (c *IDCodec) AppendID(b []byte, prefix string, seq uint64) []byte {
	b = append(b, prefix...)
	if seq <= c.legacy[prefix] {
		return strconv.AppendUint(b, seq, 36)
	}
	var block [16]byte
	binary.BigEndian.PutUint64(block[:8], seq)
	copy(block[8:], prefix)
	c.block.Encrypt(block[:], block[:])
	hi, lo := binary.BigEndian.Uint64(block[:8]), binary.BigEndian.Uint64(block[8:])
	// The 128-bit number is cut into chunks of ten digits (62^10 < 2^64)
	// by two 128-bit divisions each; the digits of a chunk come from
	// divisions by a constant, which the compiler makes multiplications.
	var digits [IDOpaqueLen]byte
	for end := IDOpaqueLen; end > 0; end -= chunkDigits {
		var r uint64
		hi, r = hi/pow62Chunk, hi%pow62Chunk
		lo, r = bits.Div64(r, lo, pow62Chunk)
		for i := end - 1; i >= max(end-chunkDigits, 0); i-- {
			digits[i] = IDAlphabet[r%62]
			r /= 62
		}
	}
	return append(b, digits[:]...)
}

// chunkDigits base62 digits make a chunk of at most pow62Chunk-1.
const (
	chunkDigits = 10
	pow62Chunk  = 839299365868340224 // 62^10
)

// ParseID returns the sequence of a wire ID. Only the form FormatID
// writes for that sequence is accepted, so one record has exactly one
// wire ID; anything else (another prefix, a changed character, a legacy
// form above the legacy maximum) is false.
func (c *IDCodec) ParseID(prefix, id string) (uint64, bool) {
	if len(id) <= len(prefix) || id[:len(prefix)] != prefix {
		return 0, false
	}
	s := id[len(prefix):]
	if len(s) != IDOpaqueLen {
		n, ok := parseLegacyID(s)
		if !ok || n > c.legacy[prefix] {
			return 0, false
		}
		return n, true
	}
	// The digits are read in chunks as AppendID writes them: the first
	// chunk has IDOpaqueLen%chunkDigits digits, the others chunkDigits.
	var hi, lo uint64
	for start, n := 0, IDOpaqueLen%chunkDigits; start < IDOpaqueLen; start, n = start+n, chunkDigits {
		var chunk, scale uint64 = 0, 1
		for i := start; i < start+n; i++ {
			d := base62Value[s[i]]
			if d == 0xff {
				return 0, false
			}
			chunk = chunk*62 + uint64(d)
			scale *= 62
		}
		// (hi, lo) = (hi, lo)*scale + chunk, refusing to overflow 128 bits.
		over, newHi := bits.Mul64(hi, scale)
		loHi, newLo := bits.Mul64(lo, scale)
		var carry uint64
		newHi, carry = bits.Add64(newHi, loHi, 0)
		if over != 0 || carry != 0 {
			return 0, false
		}
		newLo, carry = bits.Add64(newLo, chunk, 0)
		newHi, carry = bits.Add64(newHi, 0, carry)
		if carry != 0 {
			return 0, false
		}
		hi, lo = newHi, newLo
	}
	var block [16]byte
	binary.BigEndian.PutUint64(block[:8], hi)
	binary.BigEndian.PutUint64(block[8:], lo)
	c.block.Decrypt(block[:], block[:])
	var pad [8]byte
	copy(pad[:], prefix)
	if !bytes.Equal(block[8:], pad[:]) {
		return 0, false
	}
	seq := binary.BigEndian.Uint64(block[:8])
	if seq == 0 || seq <= c.legacy[prefix] {
		return 0, false
	}
	return seq, true
}

// parseLegacyID reads the base 36 sequence of a legacy ID, in the
// canonical form only (no leading zero, lower case).
func parseLegacyID(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 13 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 36, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}
