package storage

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"strconv"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Wire ID prefixes. On disk a record's key is its bucket sequence as an
// 8-byte big-endian key, so that keys sort in creation order; on the wire
// the sequence is hidden (see idCodec).
const (
	prefixWorkspace = "ws_"
	prefixUser      = "usr_"
	prefixKey       = "key_"
	prefixLink      = "lnk_"
	prefixCampaign  = "cmp_"
	prefixEvent     = "evt_"
	prefixQRCode    = "qr_"
)

// idBuckets names, for each prefix, the bucket whose sequence numbers its
// records. A file of schema version 1 gave out IDs that showed these
// sequences; the highest of each at the upgrade is its legacy maximum.
var idBuckets = map[string][]byte{
	prefixWorkspace: bucketWorkspaces,
	prefixUser:      bucketUsers,
	prefixKey:       bucketKeys,
	prefixLink:      bucketLinks,
	prefixCampaign:  bucketCampaigns,
	prefixEvent:     bucketEvents,
	prefixQRCode:    bucketQRCodes,
	prefixWebhook:   bucketWebhooks,
	prefixDelivery:  bucketDeliveries,
	prefixDomain:    bucketDomains,
}

// opaqueLen is the length of an opaque ID after its prefix: 128 bits in
// base62.
const opaqueLen = 22

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// base62Value maps a byte to its base62 digit, or 0xff.
var base62Value = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(idAlphabet); i++ {
		t[idAlphabet[i]] = byte(i)
	}
	return t
}()

// idCodec turns record sequences into wire IDs and back. A wire ID is the
// prefix and 22 base62 characters: the AES-128 encryption, under a random
// key kept in the data file, of the sequence (8 bytes) followed by the
// prefix (zero-padded to 8 bytes). So an ID shows neither how many records
// the instance holds nor in what order they came, and cannot be guessed
// from another: changing any character decrypts to a block whose last 8
// bytes are not the prefix (a chance of 2^-64 otherwise), which parse
// rejects, so a forged ID is "not found" before any read.
//
// Records created before IDs were opaque (schema version 1, which wrote the
// sequence in base 36: lnk_1, lnk_2, …) keep those IDs, since clients hold
// them: a sequence at or below its prefix's legacy maximum is written and
// read in the old form. A file created opaque has no legacy maximum.
//
// Each record has exactly one wire ID. An idCodec is read-only once made,
// so it is safe for concurrent use.
type idCodec struct {
	block  cipher.Block
	legacy map[string]uint64 // prefix → highest sequence with a legacy ID
}

// newIDCodec returns the codec of key (16 bytes) and the legacy maxima.
func newIDCodec(key []byte, legacy map[string]uint64) (*idCodec, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("id key: %w", err)
	}
	return &idCodec{block: block, legacy: legacy}, nil
}

// formatID returns the wire ID of the record with sequence seq.
func (c *idCodec) formatID(prefix string, seq uint64) string {
	return string(c.appendID(make([]byte, 0, len(prefix)+opaqueLen), prefix, seq))
}

// appendID appends the wire ID of seq to b.
func (c *idCodec) appendID(b []byte, prefix string, seq uint64) []byte {
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
	var digits [opaqueLen]byte
	for end := opaqueLen; end > 0; end -= chunkDigits {
		var r uint64
		hi, r = hi/pow62Chunk, hi%pow62Chunk
		lo, r = bits.Div64(r, lo, pow62Chunk)
		for i := end - 1; i >= max(end-chunkDigits, 0); i-- {
			digits[i] = idAlphabet[r%62]
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

// parseID returns the sequence of a wire ID. Only the form formatID
// writes for that sequence is accepted, so one record has exactly one
// wire ID; anything else (another prefix, a changed character, a legacy
// form above the legacy maximum) is false.
func (c *idCodec) parseID(prefix, id string) (uint64, bool) {
	if len(id) <= len(prefix) || id[:len(prefix)] != prefix {
		return 0, false
	}
	s := id[len(prefix):]
	if len(s) != opaqueLen {
		n, ok := parseLegacy(s)
		if !ok || n > c.legacy[prefix] {
			return 0, false
		}
		return n, true
	}
	// The digits are read in chunks as appendID writes them: the first
	// chunk has opaqueLen%chunkDigits digits, the others chunkDigits.
	var hi, lo uint64
	for start, n := 0, opaqueLen%chunkDigits; start < opaqueLen; start, n = start+n, chunkDigits {
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

// parseLegacy reads the base 36 sequence of a schema version 1 ID, in the
// canonical form only (no leading zero, lower case).
func parseLegacy(s string) (uint64, bool) {
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

// idFormatter formats wire IDs: an idCodec, or an idMemo in front of one.
type idFormatter interface {
	formatID(prefix string, seq uint64) string
}

// idMemo remembers the IDs it formatted, for loops that format the same
// few IDs again and again (an export of raw clicks names a handful of
// links thousands of times). It holds at most idMemoSize IDs.
type idMemo struct {
	ids *idCodec
	m   map[idMemoKey]string
}

type idMemoKey struct {
	prefix string
	seq    uint64
}

const idMemoSize = 1 << 14

func newIDMemo(ids *idCodec) *idMemo {
	return &idMemo{ids: ids, m: make(map[idMemoKey]string)}
}

func (m *idMemo) formatID(prefix string, seq uint64) string {
	k := idMemoKey{prefix, seq}
	if id, ok := m.m[k]; ok {
		return id
	}
	if len(m.m) >= idMemoSize {
		clear(m.m)
	}
	id := m.ids.formatID(prefix, seq)
	m.m[k] = id
	return id
}

// recordLegacyIDs is the step from schema version 1 to 2: the records
// that exist keep the IDs they were given (clients hold them), so the
// highest sequence of each prefix is recorded as its legacy maximum.
func recordLegacyIDs(tx *bolt.Tx) error {
	legacy := make(map[string]uint64, len(idBuckets))
	for prefix, name := range idBuckets {
		if seq := tx.Bucket(name).Sequence(); seq > 0 {
			legacy[prefix] = seq
		}
	}
	buf, err := json.Marshal(legacy)
	if err != nil {
		return fmt.Errorf("encode legacy ID maxima: %w", err)
	}
	if err := tx.Bucket(bucketMeta).Put(metaIDLegacyMax, buf); err != nil {
		return fmt.Errorf("record legacy ID maxima: %w", err)
	}
	return nil
}

// loadIDCodec returns the codec of the file, generating its ID key the
// first time (a new file, or one upgraded from version 1).
func loadIDCodec(tx *bolt.Tx) (*idCodec, error) {
	meta := tx.Bucket(bucketMeta)
	key := cloneBytes(meta.Get(metaIDKey))
	if key == nil {
		key = make([]byte, 16)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generate ID key: %w", err)
		}
		if err := meta.Put(metaIDKey, key); err != nil {
			return nil, fmt.Errorf("store ID key: %w", err)
		}
	} else if len(key) != 16 {
		return nil, fmt.Errorf("ID key: %d bytes, want 16", len(key))
	}
	legacy := map[string]uint64{}
	if buf := meta.Get(metaIDLegacyMax); buf != nil {
		if err := json.Unmarshal(buf, &legacy); err != nil {
			return nil, fmt.Errorf("decode legacy ID maxima: %w", err)
		}
	}
	return newIDCodec(key, legacy)
}

// codecs finds the idCodec of an open file from its transactions, for
// helpers that have a transaction and no DB: *bolt.DB → *idCodec.
var codecs sync.Map

// idsOf returns the idCodec of the file tx belongs to.
func idsOf(tx *bolt.Tx) *idCodec {
	c, ok := codecs.Load(tx.DB())
	if !ok {
		panic("storage: no ID codec for an open data file")
	}
	return c.(*idCodec)
}
